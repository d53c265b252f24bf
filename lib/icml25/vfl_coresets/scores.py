r"""The parties' scores: ridge leverage, the statistical dimension, $\ell_1$ Lewis weights and
their augmented version, and $\kappa_\lambda$, the price of scoring blocks separately."""

from __future__ import annotations

import numpy as np

from icml25.common.validation import check_scalar

from ._checks import METHODS, _blocks, _matrix, _vector


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
