r"""The distribution function of the nonzero HTMP eigenvalues, by panels in :math:`\log x`
and, below them, by the phase of :math:`U`."""

from __future__ import annotations

import math
from functools import lru_cache

import mpmath
import numpy as np

from ._checks import _check_gamma, _check_kappa, _check_x, _shaped
from .density import _logpdf_positive, _parameters
from .marchenko_pastur import _mp_edges, mp_cdf

_NODES = 16  # Chebyshev points per panel
_PANEL_WIDTH = 0.25  # in log x: degree 15 resolves the MP-like edges of kappa ~ 30 to 1e-12
_CHEB_NODES = np.polynomial.chebyshev.chebpts1(_NODES)
_CHEB_FROM_VALUES = np.linalg.inv(np.polynomial.chebyshev.chebvander(_CHEB_NODES, _NODES - 1))


def _integration_range(gamma: float, kappa: float) -> tuple[float, float]:
    """(log x_lo, log x_hi) outside which f carries less than ~1e-16 of mass (tail forms in the
    module docstring): F(x) ~ x^{c-1} below, y^{2b-c} e^{-y} above."""
    b, c, _, scale = _parameters(gamma, kappa)
    log_y_lo = max(-37.0 / (c - 1), math.log(1e-300) + 2)  # y_lo^{c-1} = e^-37
    power, y_hi = 2 * b - c, 40.0
    for _ in range(20):  # fixed point of y = 40 + power * log(y)
        y_hi = 40.0 + max(power, 0.0) * math.log(y_hi)
    y_hi = max(y_hi, 2 * scale * _mp_edges(gamma)[1])  # beyond the MP edge for large kappa
    return log_y_lo - math.log(scale), math.log(y_hi / scale)


def _cdf_by_phase_scalar(y: float, b: float, c: float, turn: float) -> float:
    """F from the phase of U (module docstring), for y small enough that the phase has turned by
    less than pi: exact, and used where the integrand's mass sits below double precision's range."""
    phase = float(mpmath.arg(mpmath.hyperu(b, c, -y))) - math.pi * (1 - c)
    return abs(math.remainder(phase, 2 * math.pi)) / turn


_cdf_by_phase = np.frompyfunc(_cdf_by_phase_scalar, 4, 1)


@lru_cache(maxsize=64)
def _cdf_table(gamma: float, kappa: float):
    """Panels in u = log x with the Chebyshev coefficients of each panel's cumulative integral of
    g(u) = f(e^u) e^u (so that F inside a panel is a polynomial, exact to the interpolation
    error), and F at the panel edges, starting from the exact F at the first edge."""
    u_lo, u_hi = _integration_range(gamma, kappa)
    edges = np.linspace(u_lo, u_hi, max(2, math.ceil((u_hi - u_lo) / _PANEL_WIDTH)) + 1)
    half = 0.5 * np.diff(edges)
    centre = 0.5 * (edges[1:] + edges[:-1])
    u = centre[None, :] + half[None, :] * _CHEB_NODES[:, None]  # (nodes, panels)
    g = np.exp(_logpdf_positive(np.exp(u).ravel(), gamma, kappa).reshape(u.shape) + u)
    integral = np.polynomial.chebyshev.chebint(_CHEB_FROM_VALUES @ g, lbnd=-1, axis=0) * half
    b, c, _, scale = _parameters(gamma, kappa)
    below = _cdf_by_phase_scalar(scale * math.exp(u_lo), b, c, math.pi * scale)
    cumulative = below + np.concatenate([[0.0], np.cumsum(integral.sum(axis=0))])
    for array in (edges, integral, cumulative):
        array.setflags(write=False)
    return edges, integral, cumulative


def htmp_cdf(x, gamma, kappa):
    r"""Distribution function :math:`F(x)=\int_0^x f` of the nonzero HTMP eigenvalues.

    :math:`f` has an integrable singularity :math:`x^{\frac\kappa2(1-\frac1\gamma)-1}` at zero
    and, for small :math:`\kappa`, spreads its mass over hundreds of decades (at
    :math:`\kappa=0.25,\gamma=2` a quarter of it lies below :math:`10^{-10}`).  So the integral is
    taken in :math:`u=\log x`, where the integrand :math:`f(e^u)e^u` is smooth: panels of width
    0.25 with a 16-point Chebyshev interpolant each, integrated exactly.  Below the first panel
    (where :math:`F\approx e^{-37}`, or :math:`x\approx10^{-300}` for tiny :math:`\kappa`) the
    exact phase identity of the module docstring takes over.  The panels are computed once per
    ``(gamma, kappa)`` and cached; the result agrees with the phase identity to about 1e-15.

    Parameters
    ----------
    x : array_like
    gamma : float
        :math:`\gamma>1`.
    kappa : float
        :math:`\kappa>0`; ``np.inf`` gives :func:`mp_cdf`.
    """
    x, gamma, kappa = _check_x(x), _check_gamma(gamma), _check_kappa(kappa)
    if math.isinf(kappa):
        return mp_cdf(x, gamma)
    edges, integral, cumulative = _cdf_table(gamma, kappa)
    out = np.where(x > 0, cumulative[-1], 0.0)
    with np.errstate(divide="ignore"):
        u = np.log(np.where(x > 0, x, 1.0))
    inside = (x > 0) & (u < edges[-1])
    panel = np.clip(np.searchsorted(edges, u[inside]) - 1, 0, len(edges) - 2)
    t = np.clip(2 * (u[inside] - edges[panel]) / (edges[panel + 1] - edges[panel]) - 1, -1, 1)
    out[inside] = cumulative[panel] + np.polynomial.chebyshev.chebval(
        t, integral[:, panel], tensor=False)
    below = (x > 0) & (u < edges[0])
    if below.any():
        b, c, _, scale = _parameters(gamma, kappa)
        out[below] = _cdf_by_phase(scale * x[below], b, c, math.pi * scale).astype(float)
    return _shaped(np.clip(out, 0.0, 1.0))
