r"""The HTMP density :math:`f` of the nonzero eigenvalues and its logarithm (the package
docstring has the formula and how it is evaluated)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
from scipy import special

from ._checks import (
    INTEGER_MARGIN,
    KAPPA_SCIPY,
    MAX_CANCELLATION,
    _check_gamma,
    _check_kappa,
    _check_x,
    _shaped,
)
from .marchenko_pastur import mp_density


def _parameters(gamma: float, kappa: float) -> tuple[float, float, float, float]:
    """(b, c, a, y per unit x) of the module docstring."""
    b = kappa / 2
    c = 1 + b * (1 - 1 / gamma)
    return b, c, c - b, kappa / (2 * gamma)


def _logpdf_scipy(y, b, c, a):
    """log f by DLMF 13.2.41 (module docstring), and the factor by which rounding errors in
    P and Q are amplified in the result."""
    m = round(a)  # sin(pi a) from the exact remainder a - m: no loss near an integer a
    sin_pa = abs(math.sin(math.pi * (a - m)))
    cos_pa = math.cos(math.pi * (a - m)) * (-1.0 if m % 2 else 1.0)
    with np.errstate(all="ignore"):
        log_y = np.log(y)
        P = np.exp((c - 1) * log_y - special.gammaln(c)) * special.hyp1f1(a, c, y)
        Q = special.hyperu(1 - b, 2 - c, y) * np.exp(-special.gammaln(b))
        bracket = P * P - 2 * cos_pa * P * Q + Q * Q
        amplification = (np.abs(P) + np.abs(Q)) ** 2 / bracket
        logpdf = (special.gammaln(1 - a) - special.gammaln(b) + (c - 2) * log_y + y
                  + 2 * np.log(sin_pa / np.pi) - np.log(bracket))
    return logpdf, amplification


def _logpdf_mpmath_scalar(y: float, b: float, c: float, a: float) -> float:
    u = mpmath.hyperu(b, c, -y)  # complex on the cut; |U| is the same on both sides
    value = (mpmath.log(b) - mpmath.loggamma(b + 1) - mpmath.loggamma(1 - a)
             - c * mpmath.log(y) - y - 2 * mpmath.log(abs(u)))
    return float(value)


_logpdf_mpmath = np.frompyfunc(_logpdf_mpmath_scalar, 4, 1)


def _scipy_is_reliable(kappa: float, c: float, a: float) -> bool:
    """Where SciPy's M and U were validated against mpmath (relative error below 1e-9): not too
    large a kappa, and a (a pole of Gamma(a) when a <= 0) and c (U's second parameter is 2 - c)
    away from the integers where SciPy's own connection formulas cancel; c just above 1 (small
    kappa) is fine."""
    def off_integer(v):
        return abs(v - round(v)) > INTEGER_MARGIN

    return kappa <= KAPPA_SCIPY and (c < 1.5 or off_integer(c)) and (a > 0.5 or off_integer(a))


_STENCIL = 0.02 * np.array([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0])  # offsets in a (or c)


def _singularity_stencil(gamma: float, kappa: float):
    """Six kappas around the removable singularity nearest kappa (a <= 0 or c >= 2 an integer),
    0.02-0.06 away from it in a (or c), where SciPy is reliable; None if there is none.  log f is
    analytic in kappa, so a degree-5 interpolant through them is accurate to ~1e-10 (tested)."""
    _, c, a, _ = _parameters(gamma, kappa)
    if a <= 0.5 and abs(a - round(a)) <= INTEGER_MARGIN:  # a = 1 - kappa / (2 gamma)
        nodes = 2 * gamma * (1 - (round(a) + _STENCIL))
    elif c >= 1.5 and abs(c - round(c)) <= INTEGER_MARGIN:  # c = 1 + kappa (1 - 1/gamma) / 2
        nodes = 2 * (round(c) + _STENCIL - 1) / (1 - 1 / gamma)
    else:
        return None
    if not all(_scipy_is_reliable(k, *_parameters(gamma, k)[1:3]) for k in nodes):
        return None
    weights = [np.prod([(kappa - other) / (node - other) for other in nodes if other != node])
               for node in nodes]
    return nodes, np.array(weights)


def _logpdf_scipy_checked(x: np.ndarray, gamma: float, kappa: float):
    """log f by SciPy and the mask of points that lose more than six digits to cancellation."""
    b, c, a, scale = _parameters(gamma, kappa)
    logpdf, amplification = _logpdf_scipy(scale * x, b, c, a)
    return logpdf, ~(np.isfinite(logpdf) & (amplification < MAX_CANCELLATION))


def _logpdf_positive(x: np.ndarray, gamma: float, kappa: float) -> np.ndarray:
    """log f at x > 0 (finite kappa): SciPy where reliable, interpolated in kappa across a
    removable singularity, mpmath for the rest."""
    b, c, a, scale = _parameters(gamma, kappa)
    if _scipy_is_reliable(kappa, c, a):
        logpdf, redo = _logpdf_scipy_checked(x, gamma, kappa)
    elif (stencil := _singularity_stencil(gamma, kappa)) is not None:
        nodes, weights = stencil
        values, masks = zip(*(_logpdf_scipy_checked(x, gamma, k) for k in nodes))
        with np.errstate(invalid="ignore"):  # non-finite values are in `redo`
            logpdf = np.tensordot(weights, np.array(values), axes=1)
        redo = np.logical_or.reduce(masks)
    else:
        logpdf, redo = np.empty_like(x), np.ones(x.shape, dtype=bool)
    if redo.any():
        logpdf[redo] = _logpdf_mpmath(scale * x[redo], b, c, a).astype(float)
    return logpdf


def htmp_logpdf(x, gamma, kappa):
    r"""Log-density :math:`\log f(x)` of the nonzero HTMP eigenvalues (see :func:`htmp_density`).

    Parameters
    ----------
    x : array_like
        Points; :math:`-\infty` for :math:`x\le0`.
    gamma : float
        Aspect ratio :math:`\gamma=p/n>1`.
    kappa : float
        Eigenvalue repulsion :math:`\kappa>0`; ``np.inf`` gives Marchenko-Pastur.

    Returns
    -------
    ndarray of the shape of ``x`` (a float for a scalar).

    Notes
    -----
    SciPy's vectorised :math:`M` and :math:`U` through DLMF 13.2.41 (module docstring), a
    microsecond or so a point, for :math:`\kappa\le32` unless :math:`a=1-\kappa/(2\gamma)\le0` or
    :math:`c\ge2` is within 0.01 of an integer; elsewhere, and wherever the bracket would lose more
    than six digits, ``mpmath.hyperu`` (0.3 ms a point, 3 ms at :math:`\kappa=100`).  Agreement
    with ``mpmath`` is tested to 1e-8 (3000 random cases: worst 5e-10).
    """
    x, gamma, kappa = _check_x(x), _check_gamma(gamma), _check_kappa(kappa)
    if math.isinf(kappa):
        with np.errstate(divide="ignore"):
            return _shaped(np.log(np.asarray(mp_density(x, gamma))))
    out = np.full(x.shape, -np.inf)
    positive = np.isfinite(x) & (x > 0)
    if positive.any():
        out[positive] = _logpdf_positive(x[positive], gamma, kappa)
    return _shaped(out)


def htmp_density(x, gamma, kappa):
    r"""Density :math:`f(x)` of the nonzero eigenvalues of the HTMP ensemble.

    .. math:: f(x)=\frac{\kappa}{2}\,
              \frac{y^{-c}e^{-y}}{\Gamma(\tfrac\kappa2+1)\,\Gamma(\tfrac\kappa{2\gamma})\,
              |U(\tfrac\kappa2,c,-y)|^2},\qquad y=\frac{\kappa x}{2\gamma},\quad
              c=1+\frac\kappa2\Bigl(1-\frac1\gamma\Bigr).

    :math:`f` integrates to one and has mean :math:`\gamma` for every :math:`\kappa`.  The full
    limiting spectrum of the :math:`p\times p` matrix is
    :math:`(1-1/\gamma)\,\delta_0+f(x)\,dx/\gamma`; the paper's density (mass :math:`1/\gamma`)
    is ``htmp_density(x, gamma, kappa) / gamma``.

    Parameters
    ----------
    x : array_like
        Points; the density is 0 for :math:`x\le0`.
    gamma : float
        Aspect ratio :math:`\gamma=p/n>1` (larger dimension over smaller).
    kappa : float
        Eigenvalue repulsion :math:`\kappa>0`; ``np.inf`` returns :func:`mp_density`.
    """
    return _shaped(np.exp(np.asarray(htmp_logpdf(x, gamma, kappa))))
