"""Coresets for regularised linear and logistic regression in vertical federated learning.

Shit, Chadha, Kumar & Chatterjee, *Improved Coresets for Vertical Federated Learning:
Regularized Linear and Logistic Regressions*, ICML 2025.

**Setting.** $n$ rows whose features are split *vertically* among $T$ parties,
$X=[X^{(1)}\\mid\\cdots\\mid X^{(T)}]$; the labels $y$ sit with one party (the last, as in the
official code). The model minimises a regularised objective

$$L(\\beta)=\\sum_{i=1}^n \\ell(y_i, x_i^\\top\\beta)+\\lambda\\|\\beta\\|_2^2,$$

with $\\ell(y,z)=(z-y)^2$ (ridge regression, :func:`ridge_objective`) or
$\\ell(y,z)=\\log(1+e^{-yz})$, $y\\in\\{-1,+1\\}$ (logistic regression,
:func:`logistic_objective`). A coreset is a weighted subset $(S,w)$ whose weighted loss plus
the same penalty is within $1\\pm\\varepsilon$ of $L(\\beta)$ for every $\\beta$.

**Protocol** (:func:`coreset`). Every party $j$ computes a score $g^{(j)}_i$ for each row from
its own block only and sends the $n$ scores to the server; the server samples $m$ rows i.i.d.
with probability $p_i\\propto\\sum_j g^{(j)}_i+1/n$, gives a drawn row the weight
$1/(m\\,p_i)$ per draw (an unbiased estimate of every sum over rows), and asks the parties for
the drawn rows' features. The scores:

* ``"uniform"``: no scores, $p_i=1/n$;
* ``"leverage"``: the prior VFL coreset (Huang et al., 2022), the leverage scores of
  each block, blind to $\\lambda$;
* ``"ridge"``: the paper's regularisation-aware scores for ridge regression, the square root of
  the ridge leverage of each block, $\\sqrt{\\tau_i(X^{(j)},\\lambda)}$ (the label holder scores
  $[X^{(j)}, y]$ with the label column unpenalised);
* ``"lewis"``: $\\ell_1$ Lewis weights of each block (logistic regression, blind to $\\lambda$);
* ``"lewis-aug"``: the paper's $\\ell_1$ Lewis weights of each block stacked on
  $\\lambda I$, the regularisation-aware scores for logistic regression.

Fits on a weighted coreset go through scikit-learn's ``sample_weight`` (:func:`fit_ridge`,
:func:`fit_logistic`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml25.common.stats import bootstrap_replicates
from icml25.common.streams import stream
from icml25.common.validation import check_int, check_scalar

__all__ = [
    "METHODS",
    "Coreset",
    "augmented_lewis_weights",
    "bootstrap_medians",
    "coreset",
    "fit_logistic",
    "fit_ridge",
    "gap_study",
    "gaussian_data",
    "lewis_weights",
    "logistic_objective",
    "median_ratio",
    "party_scores",
    "rare_rows_data",
    "relative_gap",
    "ridge_leverage_scores",
    "ridge_objective",
    "sample_coreset",
    "sampling_probabilities",
    "sensitivity_inflation",
    "statistical_dimension",
]

#: The coreset constructions, baselines first.
METHODS = ("uniform", "leverage", "ridge", "lewis", "lewis-aug")


# ----------------------------------------------------------------------------- validation


def _matrix(A, name: str = "X") -> np.ndarray:
    A = np.asarray(A, dtype=float)
    if A.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (rows x features); got shape {A.shape}")
    if A.shape[0] == 0 or A.shape[1] == 0:
        raise ValueError(f"{name} must have at least one row and one column; got {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return A


def _vector(y, n: int, name: str = "y") -> np.ndarray:
    y = np.asarray(y, dtype=float)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"{name} must be a vector of length {n}; got shape {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return y


def _blocks(blocks, y=None):
    if isinstance(blocks, np.ndarray) or not hasattr(blocks, "__len__") or len(blocks) == 0:
        raise ValueError("blocks must be a non-empty list of 2-D arrays, one per party")
    blocks = [_matrix(b, f"blocks[{j}]") for j, b in enumerate(blocks)]
    rows = {b.shape[0] for b in blocks}
    if len(rows) != 1:
        raise ValueError(f"every party's block must have the same rows; got row counts "
                         f"{[b.shape[0] for b in blocks]}")
    if y is not None:
        y = _vector(y, blocks[0].shape[0])
    return blocks, y


def _check_labels_pm1(y: np.ndarray) -> None:
    if not np.all(np.abs(y) == 1):
        raise ValueError("logistic regression needs labels in {-1, +1}")


# ----------------------------------------------------------------------------- scores


def ridge_leverage_scores(A, lam, *, penalised=None) -> np.ndarray:
    r"""Ridge leverage scores $\tau_i(A,\lambda)=a_i^\top(A^\top A+\lambda D)^{+}a_i$.

    $D=\operatorname{diag}(\text{penalised})$ (all ones by default). They are the squared row
    norms of the first $n$ rows of $Q$ in the thin QR factorisation of the augmented matrix
    $\left[\begin{smallmatrix}A\\ \sqrt\lambda D^{1/2}\end{smallmatrix}\right]$, and the
    sensitivities of the squared loss plus penalty:
    $\tau_i=\sup_\beta (a_i^\top\beta)^2/(\|A\beta\|^2+\lambda\beta^\top D\beta)$. At
    $\lambda=0$ they are the ordinary leverage scores (pseudo-inverse on a rank-deficient
    $A$), summing to the rank; otherwise they sum to the statistical dimension.

    Parameters
    ----------
    A : array, shape (n, d)
        The block $A$.
    lam : float
        The penalty $\lambda\ge0$.
    penalised : array of bool, shape (d,), optional
        Which columns carry the penalty (a label column does not).
    """
    A = _matrix(A, "A")
    lam = check_scalar(lam, "lam", minimum=0)
    mask = np.ones(A.shape[1]) if penalised is None else np.asarray(penalised, float)
    if mask.shape != (A.shape[1],):
        raise ValueError(f"penalised must have one entry per column ({A.shape[1]})")
    gram = A.T @ A + lam * np.diag(mask)
    values, vectors = np.linalg.eigh(gram)
    keep = values > values.max() * A.shape[1] * np.finfo(float).eps * 10
    proj = A @ vectors[:, keep]
    return np.einsum("ik,ik->i", proj, proj / values[keep])


def statistical_dimension(A, lam) -> float:
    r"""$\mathrm{sd}_\lambda(A)=\sum_k \sigma_k^2/(\sigma_k^2+\lambda)$, the sum of ridge leverages.

    It is at most the rank of $A$ and falls towards 0 once $\lambda$ exceeds the squared
    singular values $\sigma_k^2$: the effective number of parameters a ridge coreset must keep.
    """
    A = _matrix(A, "A")
    lam = check_scalar(lam, "lam", minimum=0)
    s2 = np.linalg.svd(A, compute_uv=False) ** 2
    s2 = s2[s2 > s2.max() * max(A.shape) * np.finfo(float).eps]
    return float(np.sum(s2 / (s2 + lam)))


def lewis_weights(A, *, p: float = 1.0, iterations: int = 50, tol: float = 1e-6) -> np.ndarray:
    r"""$\ell_p$ Lewis weights of the rows of $A$ by the fixed-point iteration.

    The weights are the unique $w>0$ with $w_i=\big(a_i^\top(A^\top W^{1-2/p}A)^{-1}a_i
    \big)^{p/2}$; for $p<4$ the map is a contraction (Cohen & Peng, 2015), iterated from
    $w=1$ until the largest relative change is below ``tol``. For $p=1$,
    $w_i^2=a_i^\top(A^\top W^{-1}A)^{-1}a_i$ and $\sum_iw_i=\operatorname{rank}A$. Sampling
    rows with probability $\propto w_i$ preserves $\|A\beta\|_1$ for all $\beta$, which bounds
    the logistic loss's growth; the weights do not change when rows are multiplied by labels
    $\pm1$.
    """
    A = _matrix(A, "A")
    if not 0 < p < 4:
        raise ValueError(f"p must be in (0, 4) for the fixed-point iteration; got {p}")
    if iterations < 1:
        raise ValueError(f"iterations must be positive; got {iterations}")
    w = np.ones(A.shape[0])
    for _ in range(iterations):
        scale = w ** (1 - 2 / p)
        gram = A.T @ (A * scale[:, None])
        values, vectors = np.linalg.eigh(gram)
        keep = values > values.max() * A.shape[1] * np.finfo(float).eps * 10
        proj = A @ vectors[:, keep]
        new = np.einsum("ik,ik->i", proj, proj / values[keep]) ** (p / 2)
        new = np.maximum(new, np.finfo(float).tiny)
        change = np.max(np.abs(new - w) / w)
        w = new
        if change < tol:
            break
    return w


def augmented_lewis_weights(A, lam, *, p: float = 1.0, iterations: int = 50,
                            tol: float = 1e-6) -> np.ndarray:
    r"""$\ell_p$ Lewis weights of the first $n$ rows of $\left[\begin{smallmatrix}A\\
    \lambda^{1/p}I\end{smallmatrix}\right]$.

    The $d$ extra rows stand for the penalty: $\|\lambda^{1/p}I\beta\|_p^p=\lambda\|\beta\|_p^p$,
    so as $\lambda$ grows they take weight away from the data rows (the $\ell_p$ analogue of
    ridge leverage). Returns the $n$ data rows' weights.
    """
    A = _matrix(A, "A")
    lam = check_scalar(lam, "lam", minimum=0, open_minimum=True)
    aug = np.vstack([A, lam ** (1 / p) * np.eye(A.shape[1])])
    return lewis_weights(aug, p=p, iterations=iterations, tol=tol)[: A.shape[0]]


def party_scores(block, method: str, lam: float = 0.0, *, labels=None) -> np.ndarray:
    r"""The scores $g^{(j)}_i$ one party computes from its own block $X^{(j)}$.

    ``"leverage"``: $\tau_i([X^{(j)},y],0)$; ``"ridge"``: $\sqrt{\tau_i([X^{(j)},y],\lambda)}$
    with the label column unpenalised; ``"lewis"``: $\ell_1$ Lewis weights of $X^{(j)}$;
    ``"lewis-aug"``: $\ell_1$ Lewis weights of $X^{(j)}$ stacked on $\lambda I$. ``labels``
    (the label holder only) appends $y$ for the two leverage scores.
    """
    block = _matrix(block, "block")
    if method not in METHODS or method == "uniform":
        raise ValueError(f"method must be one of {', '.join(METHODS[1:])} for party scores; "
                         f"got {method!r}")
    lam = check_scalar(lam, "lam", minimum=0, open_minimum=method in ("ridge", "lewis-aug"))
    if method in ("leverage", "ridge"):
        penalised = np.ones(block.shape[1])
        if labels is not None:
            block = np.column_stack([block, _vector(labels, block.shape[0], "labels")])
            penalised = np.r_[penalised, 0.0]
        if method == "leverage":
            return ridge_leverage_scores(block, 0.0)
        return np.sqrt(ridge_leverage_scores(block, lam, penalised=penalised))
    # sampling needs a few digits: stop the fixed point at a relative change of 1e-4
    if method == "lewis":
        return lewis_weights(block, tol=1e-4)
    return augmented_lewis_weights(block, lam, tol=1e-4)


def sampling_probabilities(scores) -> np.ndarray:
    r"""The server's $p_i=(\sum_j g^{(j)}_i+1/n)/\sum_k(\sum_j g^{(j)}_k+1/n)$.

    The uniform term $1/n$ keeps every row reachable (the logistic loss is $\log2$ on every row
    at $\beta=0$). ``scores`` is a list of per-party arrays of shape (n,).
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2 or scores.shape[1] == 0:
        raise ValueError("scores must be a list of per-party score vectors of equal length")
    if not np.all(np.isfinite(scores)) or np.any(scores < 0):
        raise ValueError("scores must be finite and non-negative")
    total = scores.sum(0) + 1.0 / scores.shape[1]
    return total / total.sum()


@dataclass(frozen=True)
class Coreset:
    """A weighted coreset; unpacks as ``indices, weights``.

    Attributes
    ----------
    indices : array of int
        The distinct rows drawn, sorted.
    weights : array of float
        $w_i=c_i/(m\\,p_i)$ for a row drawn $c_i$ times in $m$ i.i.d. draws.
    probabilities : array, shape (n,)
        The sampling distribution $p$.
    floats_sent : array of int, shape (T,)
        Floats each party sends: $n$ scores (none for uniform sampling), then its features of
        the drawn rows (the label holder also their labels).
    floats_full : int
        Floats the whole data set would cost: $n(d+1)$.
    """

    indices: np.ndarray
    weights: np.ndarray
    probabilities: np.ndarray
    floats_sent: np.ndarray
    floats_full: int

    def __iter__(self):
        return iter((self.indices, self.weights))

    @property
    def floats_total(self) -> int:
        return int(self.floats_sent.sum())


def sample_coreset(probabilities, m: int, *, widths, scored: bool = True, seed=None) -> Coreset:
    """Draw $m$ rows i.i.d. from ``probabilities``; weight each draw $1/(m\\,p_i)$.

    ``widths`` are the parties' numbers of columns (the label holder's counted with its label
    column), for the count of floats sent; ``scored`` says whether the parties sent scores.
    """
    p = np.asarray(probabilities, dtype=float)
    if p.ndim != 1 or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError("probabilities must be a non-negative vector summing to 1")
    m = check_int(m, "m", minimum=1, maximum=p.size)
    rng = np.random.default_rng(seed)
    cdf = np.cumsum(p)
    draws = np.minimum(np.searchsorted(cdf / cdf[-1], rng.random(m), side="right"),
                       p.size - 1)
    indices, counts = np.unique(draws, return_counts=True)
    weights = counts / (m * p[indices])
    widths = np.asarray(widths, dtype=int)
    sent = widths * indices.size + (p.size if scored else 0)
    return Coreset(indices, weights, p, sent, int(p.size * widths.sum()))


def coreset(blocks, y, m: int, *, method: str, lam: float, seed=None,
            label_party: int = -1) -> Coreset:
    r"""A weighted coreset of ``m`` draws for data held as vertical blocks.

    Each party $j$ scores its rows from $X^{(j)}$ alone (:func:`party_scores`; the party
    ``label_party`` holds the labels and scores $[X^{(j)},y]$ for the leverage scores); the
    server forms $p$ (:func:`sampling_probabilities`) and draws (:func:`sample_coreset`).

    Parameters
    ----------
    blocks : list of arrays, each (n, d_j)
        The parties' feature blocks, same rows.
    y : array, shape (n,)
        Labels (real for ridge, $\pm1$ for the Lewis methods).
    m : int
        Number of i.i.d. draws, $1\le m\le n$; the coreset has at most $m$ distinct rows.
    method : {"uniform", "leverage", "ridge", "lewis", "lewis-aug"}
    lam : float
        The penalty $\lambda$ of the objective (used by ``"ridge"`` and ``"lewis-aug"``).
    seed : int or Generator, optional

    Returns
    -------
    Coreset
        Unpacks as ``(indices, weights)``; also holds $p$ and the floats sent per party.
    """
    blocks, y = _blocks(blocks, y)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    n = blocks[0].shape[0]
    m = check_int(m, "m", minimum=1, maximum=n)
    lam = check_scalar(lam, "lam", minimum=0, open_minimum=method in ("ridge", "lewis-aug"))
    if method in ("lewis", "lewis-aug"):
        _check_labels_pm1(y)
    holder = range(len(blocks))[label_party]
    widths = [b.shape[1] + (j == holder) for j, b in enumerate(blocks)]
    if method == "uniform":
        return sample_coreset(np.full(n, 1.0 / n), m, widths=widths, scored=False, seed=seed)
    scores = [party_scores(b, method, lam, labels=y if j == holder else None)
              for j, b in enumerate(blocks)]
    return sample_coreset(sampling_probabilities(scores), m, widths=widths, seed=seed)


def sensitivity_inflation(blocks, lam) -> float:
    r"""$\kappa_\lambda=\sup_\beta\frac{\sum_j\|X^{(j)}\beta^{(j)}\|^2+\lambda\|\beta\|^2}
    {\|X\beta\|^2+\lambda\|\beta\|^2}$, the price of scoring blocks separately.

    Cauchy-Schwarz gives $(x_i^\top\beta)^2\le\big(\sum_j\tau_i(X^{(j)},\lambda)\big)
    \big(\sum_j\|X^{(j)}\beta^{(j)}\|^2+\lambda\|\beta^{(j)}\|^2\big)$, so the sum of per-party
    ridge leverages times $\kappa_\lambda$ bounds the true sensitivity $\tau_i(X,\lambda)$.
    With $\lambda=0$, $\kappa_0$ is a property of the data that is infinite when the blocks
    cancel each other; with $\lambda>0$ it is at most $1+\max_j\|X^{(j)}\|_2^2/\lambda$.
    Computed as the top generalised eigenvalue of the two Gram matrices.
    """
    from scipy.linalg import block_diag, eigh

    blocks, _ = _blocks(blocks)
    lam = check_scalar(lam, "lam", minimum=0)
    X = np.hstack(blocks)
    eye = lam * np.eye(X.shape[1])
    top = block_diag(*[b.T @ b for b in blocks]) + eye
    bottom = X.T @ X + eye
    values = eigh(top, bottom + 1e-12 * np.trace(bottom) * np.eye(X.shape[1]),
                  eigvals_only=True)
    return float(values.max())


# ----------------------------------------------------------------------------- objectives


def ridge_objective(X, y, beta, lam, sample_weight=None) -> float:
    r"""$L(\beta)=\sum_i w_i(x_i^\top\beta-y_i)^2+\lambda\|\beta\|_2^2$ ($w_i=1$ by default).

    The same convention as scikit-learn's ``Ridge(alpha=lam, fit_intercept=False)``.
    """
    X = _matrix(X)
    y = _vector(y, X.shape[0])
    beta = _vector(beta, X.shape[1], "beta")
    lam = check_scalar(lam, "lam", minimum=0)
    w = 1.0 if sample_weight is None else _vector(sample_weight, X.shape[0], "sample_weight")
    return float(np.sum(w * (X @ beta - y) ** 2) + lam * beta @ beta)


def logistic_objective(X, y, beta, lam, sample_weight=None) -> float:
    r"""$L(\beta)=\sum_i w_i\log(1+e^{-y_ix_i^\top\beta})+\lambda\|\beta\|_2^2$, $y_i=\pm1$.

    scikit-learn's ``LogisticRegression(C=C, fit_intercept=False)`` minimises
    $C\sum_i w_i\ell_i+\frac12\|\beta\|^2$, the same minimiser when $C=1/(2\lambda)$.
    """
    X = _matrix(X)
    y = _vector(y, X.shape[0])
    _check_labels_pm1(y)
    beta = _vector(beta, X.shape[1], "beta")
    lam = check_scalar(lam, "lam", minimum=0)
    w = 1.0 if sample_weight is None else _vector(sample_weight, X.shape[0], "sample_weight")
    return float(np.sum(w * np.logaddexp(0.0, -y * (X @ beta))) + lam * beta @ beta)


def relative_gap(objective, X, y, beta_hat, beta_star, lam) -> float:
    r"""$(L(\hat\beta)-L(\beta^*))/L(\beta^*)$ on the full data: the price of the coreset."""
    full = objective(X, y, beta_star, lam)
    return (objective(X, y, beta_hat, lam) - full) / full


def fit_ridge(X, y, lam, sample_weight=None) -> np.ndarray:
    """scikit-learn's ``Ridge(alpha=lam, fit_intercept=False)``; the minimiser of
    :func:`ridge_objective`."""
    from sklearn import config_context
    from sklearn.linear_model import Ridge

    lam = check_scalar(lam, "lam", minimum=0, open_minimum=True)
    model = Ridge(alpha=lam, fit_intercept=False, solver="cholesky")
    with config_context(assume_finite=True):  # the callers validated the data once
        return model.fit(X, y, sample_weight=sample_weight).coef_.ravel()


def fit_logistic(X, y, lam, sample_weight=None, *, tol: float = 1e-8) -> np.ndarray:
    """scikit-learn's ``LogisticRegression(C=1/(2 lam), fit_intercept=False)`` (its Newton-
    Cholesky solver, exact for a few dozen features); the minimiser of
    :func:`logistic_objective`."""
    from sklearn import config_context
    from sklearn.linear_model import LogisticRegression

    lam = check_scalar(lam, "lam", minimum=0, open_minimum=True)
    model = LogisticRegression(C=1 / (2 * lam), fit_intercept=False, solver="newton-cholesky",
                               tol=tol, max_iter=200)
    with config_context(assume_finite=True):  # the callers validated the data once
        return model.fit(X, y, sample_weight=sample_weight).coef_.ravel()


# ----------------------------------------------------------------------------- data


def rare_rows_data(n: int, *, task: str = "ridge", widths=(10, 10, 10), rare: float = 0.01,
                   noise: float = 1.0, seed=None):
    r"""Three parties' blocks where a rare segment alone carries the last party's features.

    Common rows: $x\sim\mathcal N(0,I)$ on the first parties' columns, zeros on the last
    party's. Rare rows (a share ``rare``): the last party's columns $\mathcal N(0,I)$, the others
    scaled by 0.2. $\beta$ has $\mathcal N(0,4/d_{\text{common}})$ entries, the last party's
    times 4. Ridge labels $y=x^\top\beta+\text{noise}\cdot\varepsilon$; logistic labels
    $y=\pm1$ with $P(y=1)=1/(1+e^{-x^\top\beta})$.

    Returns ``blocks, y, beta, is_rare``.
    """
    if task not in ("ridge", "logistic"):
        raise ValueError(f"task must be 'ridge' or 'logistic'; got {task!r}")
    if not 0 < rare < 1:
        raise ValueError(f"rare must be a share in (0, 1); got {rare}")
    widths = [int(w) for w in widths]
    if len(widths) < 2 or min(widths) < 1:
        raise ValueError("widths must list at least two positive block widths")
    n = check_int(n, "n", minimum=2)
    rng = np.random.default_rng(seed)
    d, last = sum(widths), widths[-1]
    X = rng.standard_normal((n, d))
    is_rare = rng.random(n) < rare
    X[~is_rare, d - last:] = 0.0
    X[is_rare, : d - last] *= 0.2
    beta = rng.standard_normal(d) * 2 / np.sqrt(d - last)
    beta[d - last:] *= 4
    z = X @ beta
    if task == "ridge":
        y = z + noise * rng.standard_normal(n)
    else:
        y = np.where(rng.random(n) < 1 / (1 + np.exp(-z)), 1.0, -1.0)
    return np.split(X, np.cumsum(widths)[:-1], axis=1), y, beta, is_rare


def gaussian_data(n: int, *, task: str = "ridge", widths=(10, 10, 10), noise: float = 1.0,
                  seed=None):
    """Blocks of i.i.d. standard Gaussian rows, no rare segment; returns ``blocks, y, beta``."""
    if task not in ("ridge", "logistic"):
        raise ValueError(f"task must be 'ridge' or 'logistic'; got {task!r}")
    widths = [int(w) for w in widths]
    n = check_int(n, "n", minimum=2)
    rng = np.random.default_rng(seed)
    d = sum(widths)
    X = rng.standard_normal((n, d))
    beta = rng.standard_normal(d) * 2 / np.sqrt(d)
    z = X @ beta
    if task == "ridge":
        y = z + noise * rng.standard_normal(n)
    else:
        y = np.where(rng.random(n) < 1 / (1 + np.exp(-z)), 1.0, -1.0)
    return np.split(X, np.cumsum(widths)[:-1], axis=1), y, beta


# ----------------------------------------------------------------------------- experiments


def _substream(seed, name: str) -> np.random.SeedSequence:
    """The stream ``name`` of ``seed``: an int run seed, or entropy that ``SeedSequence`` takes."""
    if isinstance(seed, np.random.SeedSequence):
        seed = int(seed.generate_state(1, np.uint64)[0])
    elif not (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0):
        seed = int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])
    return stream(int(seed), name)


def gap_study(blocks, y, *, task: str, methods, sizes, lam, reps: int, seed=0,
              probabilities=None):
    r"""Relative gaps $(L(\hat\beta_S)-L(\beta^*))/L(\beta^*)$ of coreset fits, all methods.

    The parties' scores depend on the data only, so they are computed once per method; each of
    the ``reps`` repetitions then draws one coreset per size, from the stream of ``seed`` named
    by the method, the size and the repetition (:func:`icml25.common.streams.stream`), and fits
    it with scikit-learn. A method's draws do not depend on the other methods listed, and
    calls with the same ``seed`` at other $\lambda$ use the same streams. Returns a dict with ``gaps`` of
    shape (methods, sizes, reps), ``beta_star`` (the full-data fit), ``floats`` (floats sent
    per coreset, same shape), ``floats_full`` and ``probabilities`` (methods, n).
    ``probabilities`` may pass already computed distributions, ``{method: p}``, for scores
    that do not depend on $\lambda$ (``"uniform"``, ``"leverage"``, ``"lewis"``).
    """
    blocks, y = _blocks(blocks, y)
    if task not in ("ridge", "logistic"):
        raise ValueError(f"task must be 'ridge' or 'logistic'; got {task!r}")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose from {', '.join(METHODS)}")
    if reps < 1:
        raise ValueError(f"reps must be positive; got {reps}")
    X = np.hstack(blocks)
    n = X.shape[0]
    sizes = [check_int(m, "m", minimum=1, maximum=n) for m in sizes]
    objective, fit = ((ridge_objective, fit_ridge) if task == "ridge"
                      else (logistic_objective, fit_logistic))
    beta_star = fit(X, y, lam)
    full = objective(X, y, beta_star, lam)
    widths = [b.shape[1] for b in blocks]
    widths[-1] += 1
    gaps = np.empty((len(methods), len(sizes), reps))
    floats = np.empty_like(gaps)
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
        betas = np.empty((len(sizes), reps, X.shape[1]))
        for b, m in enumerate(sizes):
            for r in range(reps):
                draw = _substream(seed, f"coreset {method} m={m} rep={r}")
                core = sample_coreset(p, m, widths=widths, scored=method != "uniform",
                                      seed=draw)
                betas[b, r] = fit(X[core.indices], y[core.indices], lam, core.weights)
                floats[a, b, r] = core.floats_total
        # all fits' objectives at once: one (n, sizes * reps) product
        flat = betas.reshape(-1, X.shape[1])
        Z = X @ flat.T
        if task == "ridge":
            losses = np.sum((Z - y[:, None]) ** 2, axis=0)
        else:
            losses = np.sum(np.logaddexp(0.0, -y[:, None] * Z), axis=0)
        values = losses + lam * np.sum(flat**2, axis=1)
        gaps[a] = (values / full - 1).reshape(len(sizes), reps)
    return {"gaps": gaps, "beta_star": beta_star, "floats": floats,
            "floats_full": n * (X.shape[1] + 1), "probabilities": table}


def bootstrap_medians(*samples, boot: int = 2000, seed=0) -> np.ndarray:
    """Medians of ``boot`` bootstrap resamples of each sample; shape (boot, len(samples)).

    Each sample (a 1-D array of independent repetitions) is resampled with replacement on its
    own, so any smooth function of the medians gets a percentile interval.
    """
    if boot < 10:
        raise ValueError(f"boot must be at least 10; got {boot}")
    rng = np.random.default_rng(seed)
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
