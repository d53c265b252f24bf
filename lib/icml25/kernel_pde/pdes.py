"""The benchmark PDEs: the paper's nonlinear elliptic, Allen-Cahn and Burgers equations and a
regularised Eikonal equation, each with its exact (or Cole-Hopf) solution."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .kernels import uniform_grid


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
    laplacian: Callable | None
    laplacian_partials: Callable | None
    uses_gradient: bool
    #: the rectangle ((x0, x1), (y0, y1)); for Burgers' equation y is the time t
    domain: tuple = ((0.0, 1.0), (0.0, 1.0))
    #: the sides carrying Dirichlet data: "x0", "x1", "y0", "y1" (Burgers: not t = 1)
    dirichlet: tuple = ("x0", "x1", "y0", "y1")

    def axes(self, n) -> tuple:
        """Equispaced nodes on the domain: ``n`` per axis, or ``(n1, n2)``."""
        n1, n2 = (n, n) if np.isscalar(n) else n
        return tuple(uniform_grid(m) * (hi - lo) + lo for m, (lo, hi) in zip((n1, n2), self.domain))

    def boundary_mask(self, shape: tuple) -> np.ndarray:
        """Nodes of a grid of ``shape`` where the Dirichlet data are imposed."""
        mask = np.zeros(shape, dtype=bool)
        sides = {"x0": (0, slice(None)), "x1": (-1, slice(None)),
                 "y0": (slice(None), 0), "y1": (slice(None), -1)}
        for side in self.dirichlet:
            mask[sides[side]] = True
        return mask


def _check_square(pde: PDE, solver: str) -> None:
    if pde.domain != ((0.0, 1.0), (0.0, 1.0)) or set(pde.dirichlet) != {"x0", "x1", "y0", "y1"}:
        raise ValueError(f"{solver} solves Dirichlet problems on the unit square; "
                         f"{pde.name} is posed on {pde.domain} with data on {pde.dirichlet}")
    if pde.laplacian is None and solver == "solve_daks":
        raise ValueError(f"solve_daks needs the PDE solved for the Laplacian; {pde.name} has none")


def nonlinear_elliptic(coefficient: float = 2.0) -> PDE:
    r"""The paper's nonlinear elliptic benchmark: :math:`-\Delta u + u^3 = f` on the unit square,
    :math:`u^* = \sin\pi x\sin\pi y + c\,\sin4\pi x\sin4\pi y`, :math:`u=0` on the boundary.

    ``coefficient`` is :math:`c`: 2 in the official code of the paper and of Chen et al. (the
    follow-up TGPS uses 4).
    """
    c = float(coefficient)

    def exact(x, y):
        return np.sin(np.pi * x) * np.sin(np.pi * y) + c * np.sin(4 * np.pi * x) * np.sin(4 * np.pi * y)

    def laplacian(x, y):
        return (-2 * np.pi**2 * np.sin(np.pi * x) * np.sin(np.pi * y)
                - 32 * c * np.pi**2 * np.sin(4 * np.pi * x) * np.sin(4 * np.pi * y))

    def f(x, y):
        return -laplacian(x, y) + exact(x, y) ** 3

    return PDE(
        f"nonlinear elliptic (c = {c:g})",
        exact,
        lambda d, x, y: -(d["uxx"] + d["uyy"]) + d["u"] ** 3 - f(x, y),
        lambda d, x, y: {"u": 3 * d["u"] ** 2, "uxx": -1.0, "uyy": -1.0},
        lambda z, x, y: z["u"] ** 3 - f(x, y),
        lambda z, x, y: {"u": 3 * z["u"] ** 2},
        False,
    )


def allen_cahn(a: float = 15.0) -> PDE:
    r"""The paper's Allen-Cahn benchmark :math:`\Delta u + u^3 - u = f` on the unit square with
    :math:`u^* = \sin(2\pi a x)\cos(2\pi a y) + \sin 2\pi x\cos 2\pi y` (the paper: :math:`a`
    = 15 and 20) and its values as Dirichlet data.

    The linearised operator :math:`\Delta + 3u^2 - 1` is indefinite, unlike the elliptic
    benchmark's :math:`-\Delta + 3u^2`.
    """
    a = float(a)
    k1, k2 = 2 * np.pi * a, 2 * np.pi

    def exact(x, y):
        return np.sin(k1 * x) * np.cos(k1 * y) + np.sin(k2 * x) * np.cos(k2 * y)

    def laplacian(x, y):
        return (-2 * k1**2 * np.sin(k1 * x) * np.cos(k1 * y)
                - 2 * k2**2 * np.sin(k2 * x) * np.cos(k2 * y))

    def f(x, y):
        return laplacian(x, y) + exact(x, y) ** 3 - exact(x, y)

    return PDE(
        f"Allen-Cahn (a = {a:g})",
        exact,
        lambda d, x, y: d["uxx"] + d["uyy"] + d["u"] ** 3 - d["u"] - f(x, y),
        lambda d, x, y: {"u": 3 * d["u"] ** 2 - 1, "uxx": 1.0, "uyy": 1.0},
        lambda z, x, y: f(x, y) - z["u"] ** 3 + z["u"],
        lambda z, x, y: {"u": 1 - 3 * z["u"] ** 2},
        False,
    )


def burgers_reference(x, t, nu: float, nodes: int = 4001) -> np.ndarray:
    r"""Exact solution of Burgers' equation with :math:`u_0=-\sin\pi x`, by the Cole-Hopf
    transform.

    .. math:: u(x,t) = -\frac{\int \sin\pi(x-\eta)\,e^{-\cos\pi(x-\eta)/2\pi\nu}
              \,e^{-\eta^2/4\nu t}\,d\eta}{\int e^{-\cos\pi(x-\eta)/2\pi\nu}\,
              e^{-\eta^2/4\nu t}\,d\eta}.

    Both integrals in :math:`z=\eta/\sqrt{4\nu t}` by the trapezoidal rule on :math:`|z|\le 10`
    with ``nodes`` nodes (spectrally accurate for a smooth integrand that decays like
    :math:`e^{-z^2}`; the integrand varies on the scale :math:`\sqrt{\nu/t}` in :math:`z`, so
    4,001 nodes resolve :math:`\nu=0.001`). The exponents, up to :math:`1/2\pi\nu` (159 for
    :math:`\nu=0.001`), are shifted by their maximum. :math:`u(\pm1,t)=0` by oddness.
    """
    if isinstance(nu, bool) or not isinstance(nu, (int, float)) or not nu > 0:
        raise ValueError(f"the viscosity nu must be a positive number, got {nu!r}")
    x, t = np.broadcast_arrays(np.asarray(x, float), np.asarray(t, float))
    if np.any(t < 0):
        raise ValueError("Burgers' reference solution is defined for t >= 0")
    z = np.linspace(-10.0, 10.0, nodes)
    gauss = np.exp(-z * z)
    out = -np.sin(np.pi * x)  # t = 0
    flat_x, flat_t, flat_out = x.reshape(-1), t.reshape(-1), out.reshape(-1)
    later = np.flatnonzero(flat_t > 0)
    for chunk in np.array_split(later, max(1, len(later) // 256)):  # bounded memory
        if len(chunk) == 0:
            continue
        y = flat_x[chunk, None] - np.sqrt(4 * nu * flat_t[chunk, None]) * z[None, :]
        exponent = -np.cos(np.pi * y) / (2 * np.pi * nu)
        weights = gauss * np.exp(exponent - exponent.max(axis=1, keepdims=True))
        flat_out[chunk] = -(weights * np.sin(np.pi * y)).sum(axis=1) / weights.sum(axis=1)
    return flat_out.reshape(x.shape)


def burgers(nu: float = 0.02, quadrature_nodes: int = 4001) -> PDE:
    r"""The paper's Burgers benchmark :math:`u_t + u u_x = \nu u_{xx}` on :math:`x\in[-1,1]`,
    :math:`t\in[0,1]`, :math:`u(x,0)=-\sin\pi x`, :math:`u(\pm1,t)=0` (the paper: :math:`\nu`
    = 0.02 and 0.001), with the Cole-Hopf solution (:func:`burgers_reference`) as reference.

    The second coordinate is the time: ``uy`` is :math:`u_t`; there is no data at :math:`t=1`.
    A shock forms at :math:`x=0` near :math:`t=1/\pi`, of width about :math:`\nu`.
    """
    nu = float(nu)
    return PDE(
        f"Burgers (nu = {nu:g})",
        lambda x, t: burgers_reference(x, t, nu, quadrature_nodes),
        lambda d, x, t: d["uy"] + d["u"] * d["ux"] - nu * d["uxx"],
        lambda d, x, t: {"uy": 1.0, "u": d["ux"], "ux": d["u"], "uxx": -nu},
        None,
        None,
        True,
        domain=((-1.0, 1.0), (0.0, 1.0)),
        dirichlet=("x0", "x1", "y0"),
    )


def eikonal(eps: float = 0.1) -> PDE:
    r"""Regularised Eikonal equation :math:`|\nabla u|^2 - \epsilon\Delta u = f` with a manufactured
    solution :math:`u^*=\sin\pi x\sin\pi y` (the paper uses :math:`f=1` and a reference solution
    from the Cole-Hopf transform)."""
    exact = lambda x, y: np.sin(np.pi * x) * np.sin(np.pi * y)
    ux = lambda x, y: np.pi * np.cos(np.pi * x) * np.sin(np.pi * y)
    uy = lambda x, y: np.pi * np.sin(np.pi * x) * np.cos(np.pi * y)
    f = lambda x, y: ux(x, y) ** 2 + uy(x, y) ** 2 + eps * 2 * np.pi**2 * exact(x, y)
    return PDE(
        f"regularised Eikonal (eps = {eps:g})",
        exact,
        lambda d, x, y: d["ux"] ** 2 + d["uy"] ** 2 - eps * (d["uxx"] + d["uyy"]) - f(x, y),
        lambda d, x, y: {"ux": 2 * d["ux"], "uy": 2 * d["uy"], "uxx": -eps, "uyy": -eps},
        lambda z, x, y: (z["ux"] ** 2 + z["uy"] ** 2 - f(x, y)) / eps,
        lambda z, x, y: {"ux": 2 * z["ux"] / eps, "uy": 2 * z["uy"] / eps},
        True,
    )
