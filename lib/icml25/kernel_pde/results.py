"""The result of a solve, error measures, and the Newton iteration shared by our variant and
finite differences."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .pdes import PDE


@dataclass(frozen=True)
class SolveResult:
    """Nodal solution on the grid, its relative L2 error against the exact solution, and effort.

    ``test_error`` is the relative L2 error of the solver's interpolant on a finer test grid
    (NaN where a solver has none); ``best_test_error`` the smallest test error met during the
    iterations, the protocol of the paper's code (minimum over training, measured on the test
    set itself): the book reports the final one and shows this one beside it. ``history`` holds
    ``(step, test error)`` pairs along the iterations (:func:`~icml25.kernel_pde.sks.solve_sks`
    only).
    """

    u: np.ndarray
    error: float
    newton_iterations: int
    n_points: int
    residual_norm: float
    test_error: float = float("nan")
    best_test_error: float = float("nan")
    history: tuple = ()
    #: CPU seconds of the solve up to each entry of ``history`` (the set-up included, the
    #: test evaluations left out): one run then gives a whole error-against-time curve
    history_seconds: tuple = ()


def _relative_error(u, pde, X, Y) -> float:
    exact = pde.solution(X, Y)
    return float(np.linalg.norm(u - exact) / np.linalg.norm(exact))


def _newton(pde, axes, D1, D2, linear_solve, *, max_iter, tol):
    """Newton's method on the interior collocation equations; D1/D2 are per-axis 1-D matrices."""
    X, Y = np.meshgrid(axes[0], axes[1], indexing="ij")
    U = pde.solution(X, Y).copy()
    interior = np.zeros(U.shape, dtype=bool)
    interior[1:-1, 1:-1] = True
    U[interior] = 0.0  # start from zero inside, exact Dirichlet data on the boundary

    def derivatives(V):
        d = {"u": V, "uxx": D2[0] @ V, "uyy": (D2[1] @ V.T).T}
        if pde.uses_gradient:
            d["ux"] = D1[0] @ V
            d["uy"] = (D1[1] @ V.T).T
        return d

    norm = np.inf
    for it in range(1, max_iter + 1):
        d = derivatives(U)
        R = pde.residual(d, X, Y)[interior]
        norm = float(np.linalg.norm(R) / np.sqrt(R.size))
        if norm < tol:
            return U, it - 1, norm
        coeffs = {k: np.broadcast_to(v, U.shape)[interior] for k, v in pde.partials(d, X, Y).items()}
        delta = linear_solve(coeffs, -R, interior)
        U = U.copy()
        U[interior] += delta
    d = derivatives(U)
    norm = float(np.linalg.norm(pde.residual(d, X, Y)[interior]) / np.sqrt(interior.sum()))
    return U, max_iter, norm


def _test_error(pde: PDE, test_n: int, predict: Callable) -> float:
    """Relative L2 error of ``predict(test axes)`` on a ``test_n`` × ``test_n`` grid."""
    axes = pde.axes(test_n)
    exact = pde.solution(*np.meshgrid(*axes, indexing="ij"))
    return float(np.linalg.norm(predict(axes) - exact) / np.linalg.norm(exact))
