r"""The regularised objectives, the relative gap, and the fits: one at a time through
scikit-learn, or many coresets at once (:func:`fit_ridge_many`, :func:`fit_logistic_many`)."""

from __future__ import annotations

import numpy as np

from icml25.common.validation import check_int, check_scalar

from ._checks import _check_labels_pm1, _matrix, _vector


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


def _stacked(X, y, indices, weights):
    """Validate a batch of coresets; return the drawn rows (r, m, d), labels and weights."""
    X = _matrix(X)
    y = _vector(y, X.shape[0])
    indices = np.asarray(indices)
    weights = np.asarray(weights, dtype=float)
    if indices.ndim != 2 or indices.shape[1] == 0 or indices.shape != weights.shape:
        raise ValueError("indices and weights must be 2-D arrays of the same shape "
                         f"(coresets, rows); got {indices.shape} and {weights.shape}")
    if not np.issubdtype(indices.dtype, np.integer):
        raise TypeError("indices must be integers")
    if indices.min() < 0 or indices.max() >= X.shape[0]:
        raise ValueError(f"indices must lie in [0, {X.shape[0] - 1}]")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise ValueError("weights must be finite and non-negative")
    return X[indices], y[indices], weights


def fit_ridge_many(X, y, lam, indices, weights) -> np.ndarray:
    r"""Minimisers of :func:`ridge_objective` on $r$ weighted coresets at once.

    Coreset $k$ is the rows ``indices[k]`` with weights ``weights[k]`` (a row listed twice
    counts twice, so the draws of i.i.d. sampling can be passed as they come). Each solves the
    normal equations $(X_S^\top W X_S+\lambda I)\beta=X_S^\top W y_S$, the system
    scikit-learn's ``Ridge(solver="cholesky")`` solves, for all $k$ in one batched call.

    Returns
    -------
    array, shape (r, d)
    """
    lam = check_scalar(lam, "lam", minimum=0, open_minimum=True)
    Xs, ys, w = _stacked(X, y, indices, weights)
    return _ridge_rows(Xs, ys, w, lam)


def _ridge_rows(Xs, ys, w, lam):
    weighted = Xs * w[..., None]
    gram = np.swapaxes(weighted, 1, 2) @ Xs + lam * np.eye(Xs.shape[2])
    rhs = np.einsum("kmd,km->kd", weighted, ys)
    return np.linalg.solve(gram, rhs[..., None])[..., 0]


def fit_logistic_many(X, y, lam, indices, weights, *, start=None, tol: float = 1e-12,
                      max_iter: int = 100) -> np.ndarray:
    r"""Minimisers of :func:`logistic_objective` on $r$ weighted coresets at once.

    Damped Newton from ``start`` ($\beta=0$ by default; the full-data fit is a good start),
    all coresets together: with $s_i=\sigma(-y_ix_i^\top\beta)$ the gradient is
    $-\sum_i w_iy_is_ix_i+2\lambda\beta$ and the Hessian
    $\sum_i w_is_i(1-s_i)x_ix_i^\top+2\lambda I$, positive definite for $\lambda>0$, so the
    minimiser is unique and the start does not change it. Each coreset's step is halved
    until the objective falls by an Armijo fraction of the Newton decrement $g^\top H^{-1}g$;
    the loop stops when every decrement is below ``tol`` times the objective (the error in
    the objective is about half the decrement), after one last full step. The same
    minimiser as :func:`fit_logistic`, to more digits than the relative gaps need.

    Returns
    -------
    array, shape (r, d)
    """
    lam = check_scalar(lam, "lam", minimum=0, open_minimum=True)
    Xs, ys, w = _stacked(X, y, indices, weights)
    _check_labels_pm1(ys)
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    start = np.zeros(Xs.shape[2]) if start is None else _vector(start, Xs.shape[2], "start")
    return _logistic_rows(Xs, ys, w, lam, start, tol, max_iter)


def _logistic_rows(Xs, ys, w, lam, start, tol=1e-12, max_iter=100):
    r, _, d = Xs.shape
    ridge = 2 * lam * np.eye(d)
    Xt = np.swapaxes(Xs, 1, 2)

    def objective(z, beta, rows):
        return (np.sum(w[rows] * np.logaddexp(0.0, -ys[rows] * z), axis=1)
                + lam * np.sum(beta**2, 1))

    everyone = np.arange(r)
    beta = np.tile(start, (r, 1))
    z = (Xs @ start)  # margins x_i' beta of every coreset's rows, kept up to date
    value = objective(z, beta, everyone)
    for _ in range(max_iter):
        s = 0.5 * (1 - np.tanh(ys * z / 2))  # sigma(-y z), without overflow
        grad = -(Xt @ (w * ys * s)[..., None])[..., 0] + 2 * lam * beta
        hess = (Xt * (w * s * (1 - s))[:, None, :]) @ Xs + ridge
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        decrement = np.einsum("kd,kd->k", grad, step)
        todo = decrement > tol * value
        if not todo.any():
            return beta - step  # one more full step: quadratic convergence
        dz = (Xs @ step[..., None])[..., 0]
        t = np.ones(r)
        for _ in range(60):  # backtracking, only where a step is still needed
            rows = np.flatnonzero(todo)
            trial = beta[rows] - t[rows, None] * step[rows]
            z_t = z[rows] - t[rows, None] * dz[rows]
            f_t = objective(z_t, trial, rows)
            # Armijo, with room for rounding in the objective itself
            ok = (f_t <= value[rows] - 1e-4 * t[rows] * decrement[rows]
                  + 8 * np.finfo(float).eps * np.abs(value[rows]))
            done = rows[ok]
            beta[done], z[done], value[done] = trial[ok], z_t[ok], f_t[ok]
            todo[done] = False
            t[todo] /= 2
            if not todo.any():
                break
    return beta
