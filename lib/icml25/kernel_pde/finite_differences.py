"""Second-order finite differences with a sparse direct solver, inside the same Newton
iteration as our variant (and its low-order preconditioner)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .kernels import uniform_grid
from .pdes import PDE, _check_square
from .results import SolveResult, _newton, _relative_error


def _fd_matrices(g: np.ndarray):
    n, h = len(g), g[1] - g[0]
    second = sp.diags([np.ones(n - 1), -2 * np.ones(n), np.ones(n - 1)], [-1, 0, 1]) / h**2
    first = sp.diags([-np.ones(n - 1), np.ones(n - 1)], [-1, 1]) / (2 * h)
    return first.tocsr(), second.tocsr()


def _fd_operators(g: np.ndarray) -> dict:
    """Second-order finite-difference operators on the interior nodes of the grid g × g."""
    first, second = _fd_matrices(g)
    inner = slice(1, len(g) - 1)
    eye = sp.identity(len(g) - 2, format="csr")
    A, B = second[inner, inner], first[inner, inner]
    return {"uxx": sp.kron(A, eye, format="csr"), "uyy": sp.kron(eye, A, format="csr"),
            "ux": sp.kron(B, eye, format="csr"), "uy": sp.kron(eye, B, format="csr"),
            "u": sp.identity((len(g) - 2) ** 2, format="csr")}


def _fd_jacobian(coeffs: dict, ops: dict):
    """Sparse linearised operator: sum over terms of diag(dR/d term) @ (finite-difference term)."""
    size = ops["u"].shape[0]
    J = sp.csr_matrix((size, size))
    for term, coef in coeffs.items():
        J = J + sp.diags(np.broadcast_to(coef, (size,))) @ ops[term]
    return J


def solve_fd(pde: PDE, n: int, *, max_iter: int = 30, tol: float = 1e-9) -> SolveResult:
    """Second-order finite differences on an ``n`` × ``n`` grid; Newton with a sparse direct solve."""
    _check_square(pde, "solve_fd")
    g = uniform_grid(n)
    first, second = _fd_matrices(g)
    ops = _fd_operators(g)

    def linear_solve(coeffs, rhs, interior):
        return spla.spsolve(_fd_jacobian(coeffs, ops).tocsc(), rhs)

    # sparse matrices act like the dense kernel ones under @ in the residual
    U, its, res = _newton(pde, (g, g), [first] * 2, [second] * 2, linear_solve,
                          max_iter=max_iter, tol=tol)
    X, Y = np.meshgrid(g, g, indexing="ij")
    return SolveResult(U, _relative_error(U, pde, X, Y), its, n * n, res)
