"""Gaussian kernels in one dimension, Kronecker matrix-vector products and kernel
interpolation on a tensor grid (the algebra behind every solver of the package)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla
from numpy.polynomial import hermite_e

from icml25.common.validation import check_int


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
    n = check_int(n, "n", minimum=3)  # at least one interior point per dimension
    return np.linspace(0.0, 1.0, n)


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
