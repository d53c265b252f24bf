"""The experiments: relative gaps of many coresets per construction, and medians with
bootstrap intervals."""

from __future__ import annotations

import numpy as np

from icml25.common.stats import bootstrap_replicates
from icml25.common.streams import as_generator, stream
from icml25.common.validation import check_int

from ._checks import METHODS, _blocks, _check_replace
from .objectives import (
    _logistic_rows,
    _ridge_rows,
    fit_logistic,
    fit_ridge,
    logistic_objective,
    ridge_objective,
)
from .sampling import _draw, sampling_probabilities
from .scores import party_scores


def _substream(seed, name: str) -> np.random.SeedSequence:
    """The stream ``name`` of ``seed``: an int run seed, or entropy that ``SeedSequence`` takes."""
    if isinstance(seed, np.random.SeedSequence):
        seed = int(seed.generate_state(1, np.uint64)[0])
    elif not (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0):
        seed = int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])
    return stream(int(seed), name)


def gap_study(blocks, y, *, task: str, methods, sizes, lam, reps: int, seed=0,
              probabilities=None, replace: bool = True):
    r"""Relative gaps $(L(\hat\beta_S)-L(\beta^*))/L(\beta^*)$ of coreset fits, all methods.

    The parties' scores depend on the data only, so they are computed once per method; each of
    the ``reps`` repetitions then draws one coreset per size, from the stream of ``seed`` named
    by the method, the size and the repetition (:func:`icml25.common.streams.stream`). All
    repetitions of one method and size are fitted together (the solvers of
    :func:`icml25.vfl_coresets.fit_ridge_many` and :func:`icml25.vfl_coresets.fit_logistic_many`,
    Newton starting from the full-data fit) and their full objectives computed in one product. A method's
    draws do not depend on the other methods listed, and calls with the same ``seed`` at
    other $\lambda$ use the same streams. ``replace`` chooses the sampler
    (:func:`~icml25.vfl_coresets.sampling.sample_coreset`): i.i.d. draws with replacement
    (default, the one the paper's theory covers) or $m$ distinct rows with Horvitz-Thompson weights.

    Returns a dict with ``gaps`` of shape (methods, sizes, reps), ``betas`` (the coreset
    fits, shape (methods, sizes, reps, d)), ``beta_star`` (the full-data fit), ``floats`` (floats sent per coreset, same shape), ``distinct`` (distinct
    rows per coreset, same shape), ``floats_full`` and ``probabilities`` (methods, n).
    ``probabilities`` may pass already computed distributions, ``{method: p}``, for scores
    that do not depend on $\lambda$ (``"uniform"``, ``"leverage"``, ``"lewis"``).
    """
    blocks, y = _blocks(blocks, y)
    if task not in ("ridge", "logistic"):
        raise ValueError(f"task must be 'ridge' or 'logistic'; got {task!r}")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose from {', '.join(METHODS)}")
    reps = check_int(reps, "reps", minimum=1)
    replace = _check_replace(replace)
    X = np.hstack(blocks)
    n, d = X.shape
    sizes = [check_int(m, "m", minimum=1, maximum=n) for m in sizes]
    objective, fit = ((ridge_objective, fit_ridge) if task == "ridge"
                      else (logistic_objective, fit_logistic))
    beta_star = fit(X, y, lam)
    if task == "ridge":
        def fit_many(indices, weights):
            return _ridge_rows(X[indices], y[indices], weights, lam)

        # L(beta) - L(beta*) = e' H e + 2 e' grad L(beta*), e = beta - beta*, exactly:
        # O(d^2) per fit instead of a pass over the n rows, and no cancellation
        hess = X.T @ X + lam * np.eye(d)
        grad = 2 * (hess @ beta_star - X.T @ y)

        def _full_objectives(betas):
            e = betas - beta_star
            return full + np.einsum("kd,de,ke->k", e, hess, e) + e @ grad
    else:  # Newton from the full-data fit: a few steps to every coreset's minimiser
        def fit_many(indices, weights):
            return _logistic_rows(X[indices], y[indices], weights, lam, beta_star)

        def _full_objectives(betas):
            out = np.empty(len(betas))
            for k in range(0, len(betas), 64):  # 64 fits at a time: n x 64 margins
                Z = X @ betas[k:k + 64].T
                out[k:k + 64] = (np.sum(np.logaddexp(0.0, -y[:, None] * Z), axis=0)
                                 + lam * np.sum(betas[k:k + 64] ** 2, axis=1))
            return out
    full = objective(X, y, beta_star, lam)
    widths = [b.shape[1] for b in blocks]
    widths[-1] += 1
    shape = (len(methods), len(sizes), reps)
    gaps, floats, distinct = np.empty(shape), np.empty(shape), np.empty(shape)
    fits = np.empty(shape + (d,))
    table = np.empty((len(methods), n))
    given = dict(probabilities or {})
    for method in given:
        if method not in ("uniform", "leverage", "lewis"):
            raise ValueError(f"only lambda-free distributions can be passed; got {method!r}")
    for a, method in enumerate(methods):
        if method in given:
            p = np.asarray(given[method], dtype=float)
            if p.shape != (n,):
                raise ValueError(f"probabilities[{method!r}] must have shape ({n},)")
        elif method == "uniform":
            p = np.full(n, 1.0 / n)
        else:
            p = sampling_probabilities(
                [party_scores(b, method, lam, labels=y if j == len(blocks) - 1 else None)
                 for j, b in enumerate(blocks)])
        table[a] = p
        cdf = np.cumsum(p)
        betas = np.empty((len(sizes), reps, d))
        for b, m in enumerate(sizes):
            indices = np.empty((reps, m), dtype=np.intp)
            weights = np.empty((reps, m))
            for r in range(reps):
                name = f"coreset {method} m={m} rep={r}"
                rng = as_generator(_substream(seed, name))
                indices[r], weights[r] = _draw(p, m, rng, replace=replace, cdf=cdf)
            betas[b] = fit_many(indices, weights)
            ordered = np.sort(indices, axis=1)
            distinct[a, b] = 1 + np.count_nonzero(np.diff(ordered, axis=1), axis=1)
            floats[a, b] = (sum(widths) * distinct[a, b]
                            + (len(widths) * n if method != "uniform" else 0))
        fits[a] = betas
        gaps[a] = (_full_objectives(betas.reshape(-1, d)) / full - 1).reshape(
            len(sizes), reps)
    return {"gaps": gaps, "betas": fits, "beta_star": beta_star, "floats": floats, "distinct": distinct,
            "floats_full": n * (d + 1), "probabilities": table}


def bootstrap_medians(*samples, boot: int = 2000, seed=0) -> np.ndarray:
    """Medians of ``boot`` bootstrap resamples of each sample; shape (boot, len(samples)).

    Each sample (a 1-D array of independent repetitions) is resampled with replacement on its
    own, so any smooth function of the medians gets a percentile interval.
    """
    if boot < 10:
        raise ValueError(f"boot must be at least 10; got {boot}")
    rng = as_generator(seed)
    out = np.empty((boot, len(samples)))
    for k, sample in enumerate(samples):
        a = np.asarray(sample, dtype=float)
        if a.ndim != 1 or a.size < 2 or not np.all(np.isfinite(a)):
            raise ValueError("each sample must be a 1-D array of at least two finite values")
        out[:, k] = bootstrap_replicates(a, statistic=np.median, n_boot=boot, seed=rng)
    return out


def median_ratio(numerator, denominator, *, boot: int = 2000, seed=0, level: float = 0.95):
    r"""$\operatorname{median}(a)/\operatorname{median}(b)$ with a bootstrap percentile interval.

    ``numerator`` and ``denominator`` are independent samples (repetitions of two methods).
    Returns ``(ratio, (low, high))``.
    """
    a = np.asarray(numerator, dtype=float)
    b = np.asarray(denominator, dtype=float)
    if b.ndim == 1 and b.size and np.median(b) <= 0:
        raise ValueError("the denominator's median must be positive")
    meds = bootstrap_medians(a, b, boot=boot, seed=seed)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(meds[:, 0] / meds[:, 1], [tail, 100 - tail])
    return float(np.median(a) / np.median(b)), (float(low), float(high))
