"""Faithfulness and purity metrics, and intervals over test images and initialisations."""

from __future__ import annotations

from typing import Callable

import numpy as np

from icml25.common.stats import Estimate, resample_indices
from icml25.common.streams import as_generator
from icml25.common.validation import check_int
from icml25.sum_of_parts.data import patch_grid


# -------------------- metrics
def insertion_deletion(predict_proba: Callable, X, scores, target, patch: int,
                       steps: int = 10) -> tuple[np.ndarray, np.ndarray]:
    r"""Insertion and deletion curves, (n, steps) each.

    Patches are ranked by ``scores``; at step $j=1..$``steps`` the top
    $\lceil jP/\text{steps}\rceil$ patches are revealed on a zero image (insertion) or
    set to zero (deletion), and the probability of ``target`` is recorded. The area
    (mean of the curve) is high for a faithful insertion ranking and low for deletion.
    """
    X = np.asarray(X)
    scores, target = np.asarray(scores), np.asarray(target)
    grid = patch_grid(X.shape[-2:], patch)
    if scores.shape != (len(X), len(grid)) or target.shape != (len(X),):
        raise ValueError(f"scores must be ({len(X)}, {len(grid)}), "
                         f"target ({len(X)},)")
    check_int(steps, "steps", minimum=1)
    order = np.argsort(-scores, axis=1, kind="stable")
    curves = np.empty((2, len(X), steps))
    rows = np.arange(len(X))
    for j in range(steps):
        top = np.zeros(scores.shape, bool)
        n_top = int(np.ceil((j + 1) * len(grid) / steps))
        np.put_along_axis(top, order[:, :n_top], True, axis=1)
        shown = np.einsum("np,phw->nhw", top.astype(np.float32), grid)[:, None]
        for i, keep in enumerate((shown, 1 - shown)):
            probs = predict_proba((X * keep).astype(np.float32))
            curves[i, :, j] = probs[rows, target]
    return curves[0], curves[1]


def purity(masks, truth) -> np.ndarray:
    r""":math:`|m\cap t|/|m|` for each mask (..., P) against the planted ``truth`` (P,)."""
    masks, truth = np.asarray(masks, bool), np.asarray(truth, bool)
    if masks.shape[-1] != truth.shape[-1]:
        raise ValueError(f"masks have {masks.shape[-1]} patches, "
                         f"truth {truth.shape[-1]}")
    size = masks.sum(-1)
    if (size == 0).any():
        raise ValueError("purity of an empty mask is undefined")
    return (masks & truth).sum(-1) / size


def bootstrap_inits_images(values: dict, contrasts: dict | None = None, *,
                           n_boot: int = 10_000, level: float = 0.95,
                           seed=0) -> dict:
    r"""Models' mean scores and contrasts of them, with intervals over test images *and*
    training initialisations.

    ``values[m]`` is an array (R_m, n): model $m$'s score (0/1 correctness, purity, an
    area) on the same $n$ test images for each of its $R_m$ initialisations (one row
    for a model trained once or without randomness). Model $m$'s value is the mean
    $\bar v_m=\frac1{R_m n}\sum_{r,i}v_{m,r,i}$. Each of the ``n_boot`` replicates
    resamples the $n$ images once, shared by all models (a paired bootstrap), and,
    independently for each model, its $R_m$ initialisations, both with replacement:
    $\bar v^*_m=\frac1{R_m}\sum_{j}\frac1n\sum_i v_{m,J_j,I_i}$. Each interval is
    the percentile interval of its quantity over the replicates, so it widens with the
    spread between initialisations as well as with the images' (a crossed two-way
    bootstrap). With few initialisations it is somewhat narrow: the bootstrap of a
    mean of $R$ values has $(R-1)/R$ times the variance of the mean.

    Parameters
    ----------
    values : dict of str to array (R_m, n)
        Scores per model, initialisation and image; every model on the same images.
    contrasts : dict of str to callable, optional
        ``contrast(means)`` with ``means`` a dict of equally shaped arrays, one per
        model, returning an array of that shape (``lambda m: m["a"] - m["b"]``); it is
        called on the full-sample means (0-d arrays) and on the replicates' means. By
        default, each model's mean.
    n_boot : int
        Bootstrap replicates.
    level : float
        Coverage of the percentile intervals, in (0, 1).
    seed : int, SeedSequence or Generator
        The resampling stream (:func:`icml25.common.streams.as_generator`).

    Returns
    -------
    dict of str to Estimate
        ``(value, (low, high))`` per contrast (per model by default), all from the same
        replicates.
    """
    if not isinstance(values, dict) or not values:
        raise ValueError("values must be a non-empty dict of (R, n) arrays")
    arrays = {m: np.asarray(v, float) for m, v in values.items()}
    arrays = {m: a[None] if a.ndim == 1 else a for m, a in arrays.items()}
    sizes = {a.shape[1] if a.ndim == 2 else -1 for a in arrays.values()}
    if len(sizes) != 1 or any(a.ndim != 2 or a.size == 0 for a in arrays.values()):
        raise ValueError("every model needs a non-empty (R, n) array on the same n "
                         f"images; got shapes {[a.shape for a in arrays.values()]}")
    if not all(np.isfinite(a).all() for a in arrays.values()):
        raise ValueError("values must be finite")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1); got {level}")
    if contrasts is None:
        contrasts = {m: (lambda means, m=m: means[m]) for m in arrays}
    n = sizes.pop()
    rng = as_generator(seed)
    images = resample_indices(n, n_boot=n_boot, seed=rng)
    # each image's multiplicity in each replicate, over n: a replicate's mean over its
    # images is then one matrix product
    weights = np.bincount((images + n * np.arange(n_boot)[:, None]).ravel(),
                          minlength=n_boot * n).reshape(n_boot, n) / n
    replicates = {}
    for m, a in arrays.items():
        per_init = weights @ a.T                                  # (n_boot, R_m)
        inits = rng.integers(0, a.shape[0], size=(n_boot, a.shape[0]))
        replicates[m] = np.take_along_axis(per_init, inits, 1).mean(1)
    means = {m: np.asarray(a.mean()) for m, a in arrays.items()}
    alpha = (1 - level) / 2
    out = {}
    for name, contrast in contrasts.items():
        boot = np.asarray(contrast(replicates), float)
        out[name] = Estimate(float(contrast(means)),
                             (float(np.quantile(boot, alpha)),
                              float(np.quantile(boot, 1 - alpha))))
    return out
