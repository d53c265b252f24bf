"""The dense baseline (DAKS, Chen, Hosseini, Owhadi & Stuart 2021): a Gaussian process whose
measurements include differential functionals, with a dense Gram matrix."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from .kernels import _check_ell, gaussian_kernel_1d, uniform_grid
from .pdes import PDE, _check_square
from .results import SolveResult, _relative_error, _test_error

_FUNCTIONALS = {  # functional -> list of (coefficient, derivative orders along x and y)
    "u": [(1.0, (0, 0))],
    "ux": [(1.0, (1, 0))],
    "uy": [(1.0, (0, 1))],
    "lap": [(1.0, (2, 0)), (1.0, (0, 2))],
}


def _gram(points_a, kinds_a, points_b, kinds_b, ell):
    """Dense Gram matrix between functionals (product Gaussian kernel, derivatives per axis)."""
    blocks = []
    for ka, pa in zip(kinds_a, points_a):
        row = []
        for kb, pb in zip(kinds_b, points_b):
            G = np.zeros((len(pa), len(pb)))
            for ca, (ax, ay) in _FUNCTIONALS[ka]:
                for cb, (bx, by) in _FUNCTIONALS[kb]:
                    G += ca * cb * gaussian_kernel_1d(pa[:, 0], pb[:, 0], ell, ax, bx) * \
                        gaussian_kernel_1d(pa[:, 1], pb[:, 1], ell, ay, by)
            row.append(G)
        blocks.append(row)
    return np.block(blocks)


def solve_daks(pde: PDE, n: int, *, ell: float = 0.1, nugget: float = 1e-10, max_iter: int = 20,
               tol: float = 1e-9, test_n: int = 60) -> SolveResult:
    """Chen et al. (2021): a GP with differential functionals in its dense Gram matrix.

    Measurements: :math:`\\delta` at boundary nodes (fixed), and at interior nodes
    :math:`\\delta` (and :math:`\\partial_x,\\partial_y` when the PDE needs them) as free
    unknowns :math:`v`, and :math:`\\Delta` eliminated by the PDE, :math:`z_\\Delta=G(v)`.
    Gauss-Newton minimises :math:`z(v)^\\top\\Theta^{-1}z(v)`. The nugget is Chen et al.'s
    adaptive one: :math:`\\text{nugget}\\cdot\\mathrm{tr}\\,\\Theta_{bb}/\\mathrm{tr}\\,\\Theta_{\\delta\\delta}`
    on the diagonal of each block :math:`b` of functionals (the point values' blocks get the
    nugget itself): since every diagonal entry of a block is the same for a stationary
    kernel, and :math:`\\kappa(x,x)=1`, this is ``nugget * diag(Theta)``. The test error is the
    posterior mean :math:`\\Theta(x,\\phi)\\Theta^{-1}z` on a ``test_n`` × ``test_n`` grid.
    """
    _check_square(pde, "solve_daks")
    g = uniform_grid(n)
    X, Y = np.meshgrid(g, g, indexing="ij")
    boundary = np.ones(X.shape, dtype=bool)
    boundary[1:-1, 1:-1] = False
    pb = np.column_stack([X[boundary], Y[boundary]])
    pi = np.column_stack([X[~boundary], Y[~boundary]])
    free = ["u", "ux", "uy"] if pde.uses_gradient else ["u"]
    kinds = ["u", *free, "lap"]
    pts = [pb] + [pi] * (len(free) + 1)
    Theta = _gram(pts, kinds, pts, kinds, _check_ell(ell))
    Theta += nugget * np.diag(np.diag(Theta))  # relative nugget per functional
    chol = sla.cho_factor(Theta)
    zb = pde.solution(pb[:, 0], pb[:, 1])
    mi = len(pi)
    v = {k: np.zeros(mi) for k in free}
    xi, yi = pi[:, 0], pi[:, 1]
    value = np.inf
    it = 0
    for it in range(1, max_iter + 1):
        z = np.concatenate([zb, *[v[k] for k in free], pde.laplacian(v, xi, yi)])
        # Jacobian of z with respect to the free unknowns
        parts = pde.laplacian_partials(v, xi, yi)
        J = np.zeros((len(z), len(free) * mi))
        for j, k in enumerate(free):
            J[len(zb) + j * mi : len(zb) + (j + 1) * mi, j * mi : (j + 1) * mi] = np.eye(mi)
            if k in parts:
                J[len(zb) + len(free) * mi :, j * mi : (j + 1) * mi] = np.diag(
                    np.broadcast_to(parts[k], (mi,)))
        TJ = sla.cho_solve(chol, J)
        Tz = sla.cho_solve(chol, z)
        step = np.linalg.solve(J.T @ TJ, -(J.T @ Tz))
        for j, k in enumerate(free):
            v[k] = v[k] + step[j * mi : (j + 1) * mi]
        new_value = float(z @ Tz)
        if np.max(np.abs(step)) < tol or abs(value - new_value) <= tol * max(1.0, abs(new_value)):
            value = new_value
            break
        value = new_value
    U = np.zeros(X.shape)
    U[boundary] = zb
    U[~boundary] = v["u"]
    z = np.concatenate([zb, *[v[k] for k in free], pde.laplacian(v, xi, yi)])
    weights = sla.cho_solve(chol, z)

    def posterior_mean(axes):
        Xt, Yt = np.meshgrid(*axes, indexing="ij")
        pt = np.column_stack([Xt.ravel(), Yt.ravel()])
        return (_gram([pt], ["u"], pts, kinds, ell) @ weights).reshape(Xt.shape)

    test = _test_error(pde, test_n, posterior_mean)
    return SolveResult(U, _relative_error(U, pde, X, Y), it, n * n, value, test, test)
