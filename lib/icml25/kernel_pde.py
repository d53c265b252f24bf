r"""Kernel solvers for nonlinear PDEs with Kronecker structure (Xu et al., ICML 2025).

**The paper's solver (SKS).** Model the solution as a standard kernel interpolant of its values
:math:`\eta` at collocation points :math:`M`,

.. math:: u(x) = \kappa(x, M)\,K_{MM}^{-1}\eta,

and take derivatives by differentiating the interpolant,
:math:`\mathcal L u(x) = [\mathcal L_x\kappa(x, M)]\,K_{MM}^{-1}\eta`.  With the points on a grid
:math:`g_1\times g_2` and a product kernel :math:`\kappa=\kappa_1\kappa_2`,
:math:`K_{MM}=K_1\otimes K_2` and every derivative at the nodes is a one-dimensional
*differentiation matrix* applied along one axis:

.. math:: \partial_{x_1}^m u\big|_M = (D^{(m)}_1\otimes I)\,\eta,\qquad
          D^{(m)}_k = K_k^{(m,0)}K_k^{-1},

so a residual costs :math:`O(N\sum_k n_k)` and the setup :math:`O(\sum_k n_k^3)`; the
:math:`N\times N` Gram matrix is never formed.  The nonlinear collocation equations
:math:`P[u](x_m) = f(x_m)` at the interior nodes (boundary values fixed by the Dirichlet data) are
solved by Newton's method; each Newton system is solved by GMRES with Kronecker matrix-vector
products, preconditioned by the exact inverse of the constant-coefficient Laplacian part (fast
diagonalisation of the one-dimensional matrices) or, when the PDE has first-order terms, by a
sparse finite-difference discretisation of the same linearised operator.

**The baseline (DAKS, Chen, Hosseini, Owhadi & Stuart 2021).** A Gaussian process whose
measurements include the differential functionals :math:`\{\delta_x, \partial\delta_x,
\Delta\delta_x\}` at every interior point: the Gram matrix :math:`\Theta` between all functionals
is dense, of size about :math:`(1+\#\text{operators})N`.  The PDE eliminates one functional's
values; Gauss-Newton minimises :math:`z^\top\Theta^{-1}z` over the rest.

**A classical peer.** Second-order finite differences with SciPy's sparse direct solver, inside the
same Newton iteration as SKS (the same code with other differentiation matrices).

Kernels: the Gaussian :math:`\kappa_k(s,t)=\exp(-(s-t)^2/2\ell_k^2)`, whose derivatives are
Hermite polynomials times the kernel, :math:`\varphi^{(m)}(r)=(-1/\ell)^m\mathrm{He}_m(r/\ell)\varphi(r)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.polynomial import hermite_e

__all__ = [
    "gaussian_kernel_1d",
    "kron_matvec",
    "KroneckerInterpolant",
    "PDE",
    "nonlinear_elliptic",
    "allen_cahn",
    "eikonal",
    "SolveResult",
    "solve_sks",
    "solve_fd",
    "solve_daks",
    "uniform_grid",
]


# --------------------------------------------------------------------------- kernels


def _check_ell(ell) -> float:
    if isinstance(ell, bool) or not isinstance(ell, (int, float, np.floating)) or not ell > 0:
        raise ValueError(f"the length scale ell must be a positive number, got {ell!r}")
    return float(ell)


def gaussian_kernel_1d(s, t, ell: float, ds: int = 0, dt: int = 0) -> np.ndarray:
    r"""Matrix of :math:`\partial_s^{d_s}\partial_t^{d_t}\exp(-(s-t)^2/2\ell^2)` over ``s`` × ``t``.

    With :math:`r=s-t`, :math:`\partial_s=d/dr` and :math:`\partial_t=-d/dr`, so the entry is
    :math:`(-1)^{d_t}\varphi^{(d_s+d_t)}(r)` and
    :math:`\varphi^{(m)}(r)=(-1/\ell)^m\,\mathrm{He}_m(r/\ell)\,\varphi(r)`.
    """
    ell = _check_ell(ell)
    r = (np.asarray(s, float)[:, None] - np.asarray(t, float)[None, :]) / ell
    m = ds + dt
    coef = np.zeros(m + 1)
    coef[m] = 1.0
    return (-1.0) ** dt * (-1.0 / ell) ** m * hermite_e.hermeval(r, coef) * np.exp(-0.5 * r * r)


def kron_matvec(A: np.ndarray, B: np.ndarray, V: np.ndarray) -> np.ndarray:
    """:math:`(A\\otimes B)\\,\\mathrm{vec}(V)` as the matrix :math:`AVB^\\top` (row-major ``vec``)."""
    return A @ V @ B.T


def uniform_grid(n: int) -> np.ndarray:
    """``n`` equispaced nodes on [0, 1], boundary included."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 3:
        raise ValueError(f"a grid needs at least 3 points per dimension (one interior), got {n!r}")
    return np.linspace(0.0, 1.0, int(n))


@dataclass
class KroneckerInterpolant:
    r"""Kernel interpolation on a tensor grid with a product Gaussian kernel.

    Parameters
    ----------
    axes : tuple of two 1-D arrays
        Grid nodes :math:`g_1, g_2`.
    ell : float or pair of floats
        Length scales :math:`\ell_1,\ell_2`.
    nugget : float
        Added to the diagonal of each :math:`K_k` relative to its largest entry (1), for a stable
        Cholesky factorisation: the Gaussian kernel matrix is numerically singular on fine grids.
    """

    axes: tuple
    ell: tuple | float = 0.1
    nugget: float = 1e-10
    _chol: list = field(init=False, repr=False)

    def __post_init__(self):
        if len(self.axes) != 2:
            raise ValueError("KroneckerInterpolant supports two dimensions")
        ells = (self.ell, self.ell) if np.isscalar(self.ell) else tuple(self.ell)
        self.ell = tuple(_check_ell(e) for e in ells)
        if not (isinstance(self.nugget, (int, float)) and self.nugget >= 0):
            raise ValueError(f"nugget must be a non-negative number, got {self.nugget!r}")
        self.axes = tuple(np.asarray(a, float) for a in self.axes)
        for a in self.axes:
            if a.ndim != 1 or len(a) < 3 or not np.all(np.diff(a) > 0):
                raise ValueError("each axis must be an increasing 1-D array of at least 3 nodes")
        self._chol = [
            sla.cho_factor(gaussian_kernel_1d(a, a, e) + self.nugget * np.eye(len(a)))
            for a, e in zip(self.axes, self.ell)
        ]

    @property
    def shape(self) -> tuple:
        return tuple(len(a) for a in self.axes)

    def weights(self, values: np.ndarray) -> np.ndarray:
        r""":math:`K^{-1}\eta = (K_1^{-1}\otimes K_2^{-1})\,\eta` by two one-dimensional solves."""
        W = sla.cho_solve(self._chol[0], values)
        return sla.cho_solve(self._chol[1], W.T).T

    def differentiation_matrix(self, axis: int, order: int) -> np.ndarray:
        r""":math:`D^{(m)}_k = K_k^{(m,0)}K_k^{-1}`: derivative of order ``order`` along ``axis``,
        at the nodes, of the interpolant of nodal values."""
        a, e = self.axes[axis], self.ell[axis]
        return sla.cho_solve(self._chol[axis], gaussian_kernel_1d(a, a, e, ds=order).T).T

    def evaluate(self, values: np.ndarray, points: tuple, derivative=(0, 0)) -> np.ndarray:
        """The interpolant (or a derivative) on the grid ``points[0] × points[1]``."""
        W = self.weights(values)
        E1 = gaussian_kernel_1d(points[0], self.axes[0], self.ell[0], ds=derivative[0])
        E2 = gaussian_kernel_1d(points[1], self.axes[1], self.ell[1], ds=derivative[1])
        return kron_matvec(E1, E2, W)


# --------------------------------------------------------------------------- PDEs


@dataclass(frozen=True)
class PDE:
    r"""A nonlinear PDE :math:`R(u, u_x, u_y, u_{xx}, u_{yy}; x, y) = 0` on :math:`[0,1]^2` with
    Dirichlet data from a known solution.

    ``residual`` maps a dict of nodal arrays (``"u", "ux", "uy", "uxx", "uyy"``) and the
    coordinates to :math:`R`; ``partials`` gives :math:`\partial R/\partial(\cdot)` for the terms
    it depends on; ``solve_for_laplacian`` writes the PDE as
    :math:`\Delta u = G(u, u_x, u_y)` for the dense baseline, with ``G``'s partials.
    """

    name: str
    solution: Callable
    residual: Callable
    partials: Callable
    laplacian: Callable
    laplacian_partials: Callable
    uses_gradient: bool


def _elliptic_exact(x, y):
    return np.sin(np.pi * x) * np.sin(np.pi * y) + 4 * np.sin(4 * np.pi * x) * np.sin(4 * np.pi * y)


def _elliptic_laplacian(x, y):
    return (-2 * np.pi**2 * np.sin(np.pi * x) * np.sin(np.pi * y)
            - 128 * np.pi**2 * np.sin(4 * np.pi * x) * np.sin(4 * np.pi * y))


def nonlinear_elliptic() -> PDE:
    r"""The paper's nonlinear elliptic benchmark: :math:`-\Delta u + u^3 = f` on the unit square,
    :math:`u^* = \sin\pi x\sin\pi y + 4\sin4\pi x\sin4\pi y`, :math:`u=0` on the boundary."""
    f = lambda x, y: -_elliptic_laplacian(x, y) + _elliptic_exact(x, y) ** 3  # noqa: E731
    return PDE(
        "nonlinear elliptic",
        _elliptic_exact,
        lambda d, x, y: -(d["uxx"] + d["uyy"]) + d["u"] ** 3 - f(x, y),
        lambda d, x, y: {"u": 3 * d["u"] ** 2, "uxx": -1.0, "uyy": -1.0},
        lambda z, x, y: z["u"] ** 3 - f(x, y),
        lambda z, x, y: {"u": 3 * z["u"] ** 2},
        False,
    )


def allen_cahn(a: float = 2.0) -> PDE:
    r"""Steady Allen-Cahn type benchmark :math:`-\Delta u + u^3 - u = f` with
    :math:`u^* = \sin(2\pi a x)\cos(2\pi a y) + \sin 2\pi x\cos 2\pi y` (the paper uses
    :math:`a = 15, 20`; such oscillations need grids beyond the book's budget)."""
    k1, k2 = 2 * np.pi * a, 2 * np.pi
    exact = lambda x, y: np.sin(k1 * x) * np.cos(k1 * y) + np.sin(k2 * x) * np.cos(k2 * y)  # noqa: E731
    lap = lambda x, y: (-2 * k1**2 * np.sin(k1 * x) * np.cos(k1 * y)  # noqa: E731
                        - 2 * k2**2 * np.sin(k2 * x) * np.cos(k2 * y))
    f = lambda x, y: -lap(x, y) + exact(x, y) ** 3 - exact(x, y)  # noqa: E731
    return PDE(
        f"Allen-Cahn (a = {a:g})",
        exact,
        lambda d, x, y: -(d["uxx"] + d["uyy"]) + d["u"] ** 3 - d["u"] - f(x, y),
        lambda d, x, y: {"u": 3 * d["u"] ** 2 - 1, "uxx": -1.0, "uyy": -1.0},
        lambda z, x, y: z["u"] ** 3 - z["u"] - f(x, y),
        lambda z, x, y: {"u": 3 * z["u"] ** 2 - 1},
        False,
    )


def eikonal(eps: float = 0.1) -> PDE:
    r"""Regularised Eikonal equation :math:`|\nabla u|^2 - \epsilon\Delta u = f` with a manufactured
    solution :math:`u^*=\sin\pi x\sin\pi y` (the paper uses :math:`f=1` and a reference solution
    from the Cole-Hopf transform)."""
    exact = lambda x, y: np.sin(np.pi * x) * np.sin(np.pi * y)  # noqa: E731
    ux = lambda x, y: np.pi * np.cos(np.pi * x) * np.sin(np.pi * y)  # noqa: E731
    uy = lambda x, y: np.pi * np.sin(np.pi * x) * np.cos(np.pi * y)  # noqa: E731
    f = lambda x, y: ux(x, y) ** 2 + uy(x, y) ** 2 + eps * 2 * np.pi**2 * exact(x, y)  # noqa: E731
    return PDE(
        f"regularised Eikonal (eps = {eps:g})",
        exact,
        lambda d, x, y: d["ux"] ** 2 + d["uy"] ** 2 - eps * (d["uxx"] + d["uyy"]) - f(x, y),
        lambda d, x, y: {"ux": 2 * d["ux"], "uy": 2 * d["uy"], "uxx": -eps, "uyy": -eps},
        lambda z, x, y: (z["ux"] ** 2 + z["uy"] ** 2 - f(x, y)) / eps,
        lambda z, x, y: {"ux": 2 * z["ux"] / eps, "uy": 2 * z["uy"] / eps},
        True,
    )


# --------------------------------------------------------------------------- collocation solvers


@dataclass(frozen=True)
class SolveResult:
    """Nodal solution on the grid, its relative L2 error against the exact solution, and effort."""

    u: np.ndarray
    error: float
    newton_iterations: int
    n_points: int
    residual_norm: float


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


def solve_sks(pde: PDE, n: int, *, ell: float = 0.1, nugget: float = 1e-10, max_iter: int = 20,
              tol: float = 1e-9, gmres_tol: float = 1e-10) -> SolveResult:
    """The paper's solver on an ``n`` × ``n`` grid: kernel differentiation matrices, Newton, and
    GMRES with Kronecker matrix-vector products and a fast preconditioner."""
    g = uniform_grid(n)
    interp = KroneckerInterpolant((g, g), ell, nugget)
    D1 = [interp.differentiation_matrix(k, 1) for k in (0, 1)]
    D2 = [interp.differentiation_matrix(k, 2) for k in (0, 1)]
    inner = slice(1, n - 1)
    A = [D[inner, inner] for D in D2]  # second derivatives acting on interior values
    B = [D[inner, inner] for D in D1]
    m = n - 2
    fd_ops = _fd_operators(g)
    # Fast diagonalisation of the interior second-derivative matrices, A_k = V_k diag(l_k) V_k^-1
    eig = [np.linalg.eig(a) for a in A]
    lam = [e[0] for e in eig]
    V = [e[1] for e in eig]
    Vinv = [np.linalg.inv(v) for v in V]

    def fast_diagonalisation(coeffs):
        """Exact inverse of c (A_1 (+) A_2) + s I with the mean coefficients c and s."""
        c = float(np.mean(coeffs["uxx"]))
        s_ = float(np.mean(coeffs.get("u", 0.0)))
        denom = c * (lam[0][:, None] + lam[1][None, :]) + s_

        def apply(vec):
            Y = (Vinv[0] @ vec.reshape(m, m) @ Vinv[1].T) / denom
            return np.real(V[0] @ Y @ V[1].T).reshape(-1)

        return apply

    def linear_solve(coeffs, rhs, interior):
        shape = (m, m)
        c = {k: np.broadcast_to(v, (m * m,)).reshape(shape) for k, v in coeffs.items()}

        def matvec(vec):  # the Newton matrix, through Kronecker products only
            W = vec.reshape(shape)
            out = c["uxx"] * (A[0] @ W) + c["uyy"] * (W @ A[1].T)
            if "u" in c:
                out = out + c["u"] * W
            if "ux" in c:
                out = out + c["ux"] * (B[0] @ W) + c["uy"] * (W @ B[1].T)
            return out.reshape(-1)

        if "ux" in coeffs:
            # First-order terms: precondition with the finite-difference discretisation of the
            # same linearised operator (low-order preconditioning of a collocation method).
            apply = spla.splu(_fd_jacobian(coeffs, fd_ops).tocsc()).solve
        else:
            # Laplacian plus a diagonal: the constant-coefficient part is inverted exactly, in
            # O(n^3), by fast diagonalisation of the one-dimensional matrices.
            apply = fast_diagonalisation(coeffs)
        op = spla.LinearOperator((m * m, m * m), matvec=matvec, dtype=float)
        pre = spla.LinearOperator((m * m, m * m), matvec=apply, dtype=float)
        sol, _ = spla.gmres(op, rhs, M=pre, rtol=gmres_tol, atol=0.0, restart=100, maxiter=10)
        return sol

    U, its, res = _newton(pde, (g, g), D1, D2, linear_solve, max_iter=max_iter, tol=tol)
    X, Y = np.meshgrid(g, g, indexing="ij")
    return SolveResult(U, _relative_error(U, pde, X, Y), its, n * n, res)


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


# --------------------------------------------------------------------------- dense baseline

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
               tol: float = 1e-9) -> SolveResult:
    """Chen et al. (2021): a GP with differential functionals in its dense Gram matrix.

    Measurements: :math:`\\delta` at boundary nodes (fixed), and at interior nodes
    :math:`\\delta` (and :math:`\\partial_x,\\partial_y` when the PDE needs them) as free
    unknowns :math:`v`, and :math:`\\Delta` eliminated by the PDE, :math:`z_\\Delta=G(v)`.
    Gauss-Newton minimises :math:`z(v)^\\top\\Theta^{-1}z(v)`; :math:`\\Theta` gets a nugget
    relative to its diagonal, as in Chen et al.
    """
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
    return SolveResult(U, _relative_error(U, pde, X, Y), it, n * n, value)
