r"""HTMP: the high-temperature Marchenko-Pastur ensemble (Hodgkinson, Wang & Mahoney, ICML 2025).

**The ensemble.**  A :math:`p\times p` spectral matrix of rank :math:`n`, aspect ratio
:math:`\gamma=p/n>1`, whose nonzero eigenvalues follow the :math:`\beta`-Laguerre ensemble
(Dumitriu & Edelman 2002) in the *high-temperature* regime: :math:`\beta\to0` with

.. math:: \kappa = \beta p \quad\text{fixed}.

:math:`\kappa>0` is the paper's eigenvalue-repulsion parameter: :math:`|\Delta(\lambda)|^\beta` is
the only coupling between eigenvalues, so small :math:`\kappa` (hot, weakly repelling) spreads them
over many decades, and :math:`\kappa\to\infty` freezes them into Marchenko-Pastur (MP).

**The density.**  With :math:`b=\kappa/2`, :math:`c=1+\tfrac{\kappa}{2}(1-\tfrac1\gamma)`,
:math:`a=c-b=1-\tfrac{\kappa}{2\gamma}` and :math:`y=\tfrac{\kappa}{2\gamma}x`, the limiting
spectral distribution is :math:`(1-\tfrac1\gamma)\,\delta_0+\tfrac1\gamma\,f(x)\,dx` with

.. math:: f(x) = \frac{\kappa}{2}\;
          \frac{y^{-c}\,e^{-y}}{\Gamma(\tfrac\kappa2+1)\,\Gamma(\tfrac{\kappa}{2\gamma})\,
          \bigl|U(\tfrac\kappa2,\,c,\,-y)\bigr|^2},\qquad x>0,

:math:`U` Tricomi's confluent hypergeometric function: the orthogonality measure of the associated
Laguerre polynomials (Ismail, Letessier & Valent 1988), which Allez, Bouchaud, Majumdar & Vivo
(2013) and Trinh & Trinh (2021) found as the high-temperature limit of the :math:`\beta`-Laguerre
ensemble.  The paper's HTMP density is :math:`f/\gamma` (mass :math:`1/\gamma`, the rest an atom at
zero), as in the first author's public code (``liamhodg/htspectra``, ``htmp.py``); every function
here uses :math:`f`, the probability density of the *nonzero* eigenvalues, whose mean is
:math:`\gamma` whatever :math:`\kappa`.

**Tails** (from the small- and large-argument forms of :math:`U`):

.. math:: f(x)\sim C_0\,x^{\frac\kappa2(1-\frac1\gamma)-1}\ (x\to0),\qquad
          f(x)\sim C_\infty\,y^{\frac\kappa2(1+\frac1\gamma)-1}e^{-y}\ (x\to\infty).

The lower tail is a true power law.  The upper tail is Gamma-like, exponential at fixed
:math:`\kappa`; but for small :math:`\kappa` its power part :math:`x^{\approx-1}` spans decades
before the cut-off :math:`x\approx2\gamma/\kappa`, and a finite sample reads it as a heavy tail.

**Evaluation.**  :math:`U` at a negative argument is complex.  DLMF 13.2.41 with Kummer's
transformation writes its modulus through real functions of positive argument, which SciPy
vectorises:

.. math:: \bigl|U(b,c,-y)\bigr|^2 = \frac{\pi^2 e^{-2y}y^{2(1-c)}}{\Gamma(1-a)^2\sin^2\pi a}\,
          \bigl(P^2-2PQ\cos\pi a+Q^2\bigr),\qquad
          P=\frac{y^{c-1}M(a,c,y)}{\Gamma(c)},\quad Q=\frac{U(1-b,2-c,y)}{\Gamma(b)},

a hundred times faster than ``mpmath.hyperu``.  It is used where it was validated against mpmath
(:math:`\kappa\le32`, :math:`a\le0` and :math:`c\ge2` away from integers, no catastrophic
cancellation in the bracket).  At an integer :math:`a` or :math:`c` the formula is a removable
:math:`0\cdot\infty`; :math:`\log f` is analytic in :math:`\kappa`, so it is interpolated from six
reliable neighbouring :math:`\kappa`.  The remaining points go to ``mpmath``.

**Distribution function.**  :math:`f` is the derivative of the phase of :math:`U` (a Wronskian
identity): :math:`F(x)=\tfrac{2\gamma}{\pi\kappa}\,\bigl|\arg U(b,c,-y)-\arg U(b,c,-0)\bigr|`,
unwrapped.  :func:`htmp_cdf` integrates :math:`f` instead (panels in :math:`\log x`) and is tested
against this identity.

**Sampling.**  The Dumitriu-Edelman bidiagonal model :math:`B` with
:math:`B_{ii}\sim\chi_{\beta(p-i+1)}`, :math:`B_{i+1,i}\sim\chi_{\beta(n-i)}` has
:math:`\operatorname{eig}(BB^\top)` distributed as the :math:`\beta`-Laguerre ensemble; with
:math:`\beta=\kappa/p` and the rescaling :math:`x=\gamma\lambda/\kappa` its empirical distribution
converges to :math:`f` (checked by Kolmogorov-Smirnov distance; ten per cent off in
:math:`\beta` is already visible at 20,000 eigenvalues).

The paper's own equations could not be consulted for this module: the formula and the convention
:math:`\kappa=\beta p` are checked numerically here (normalisation, mean, the MP limit, the exact
phase identity, the sampler), not transcribed.
"""

from __future__ import annotations

import math
from functools import lru_cache

import mpmath
import numpy as np
from scipy import optimize, special, stats
from scipy.linalg import eigvalsh_tridiagonal

from icml25.common.validation import check_int

__all__ = [
    "htmp_density",
    "htmp_logpdf",
    "htmp_cdf",
    "mp_density",
    "mp_cdf",
    "sample_htmp",
    "ks_distance",
    "fit_kappa",
    "hill_alpha",
    "haar_layer",
]

KAPPA_MAX = 1e3  # above, mpmath needs ~0.2 s a point and HTMP is within ~1e-3 of MP: use np.inf
KAPPA_SCIPY = 32.0  # SciPy's M and U validated against mpmath up to here (module docstring)
INTEGER_MARGIN = 1e-2  # ... with a <= 0 and c >= 2 at least this far from an integer
MAX_CANCELLATION = 1e6  # SciPy path kept while the bracket loses at most ~6 of 16 digits
SMALL_EIGENVALUE = 1e-8  # below this fraction of the largest, eigvalsh's absolute error shows


# --------------------------------------------------------------------------- validation


def _check_gamma(gamma) -> float:
    try:
        gamma = float(gamma)
    except (TypeError, ValueError):
        raise ValueError(f"gamma must be a number, got {gamma!r}") from None
    if not (math.isfinite(gamma) and gamma > 1):
        raise ValueError(
            f"gamma (the aspect ratio p/n, larger dimension over smaller) must be a finite "
            f"number > 1, got {gamma!r}"
        )
    return gamma


def _check_kappa(kappa, *, for_density: bool = True) -> float:
    try:
        kappa = float(kappa)
    except (TypeError, ValueError):
        raise ValueError(f"kappa must be a number, got {kappa!r}") from None
    if math.isnan(kappa) or kappa <= 0:
        raise ValueError(f"kappa must be > 0 (np.inf for Marchenko-Pastur), got {kappa!r}")
    if for_density and KAPPA_MAX < kappa < math.inf:
        raise ValueError(
            f"kappa = {kappa:g} is above {KAPPA_MAX:g}, where the density costs ~0.2 s a point and "
            f"is Marchenko-Pastur to ~1e-3 in Kolmogorov distance: pass kappa=np.inf"
        )
    return kappa


def _check_x(x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if np.isnan(x).any():
        raise ValueError("x must not contain NaN")
    return x


def _check_eigs(eigs, minimum: int) -> np.ndarray:
    eigs = np.asarray(eigs, dtype=float)
    if eigs.ndim != 1:
        raise ValueError(f"eigs must be a 1-D array of eigenvalues, got shape {eigs.shape}")
    if eigs.size < minimum:
        raise ValueError(f"eigs has {eigs.size} values; at least {minimum} are needed")
    if not np.all(np.isfinite(eigs)):
        raise ValueError("eigs must be finite (no NaN or inf)")
    if np.any(eigs <= 0):
        raise ValueError(
            "eigs must be positive: pass the nonzero eigenvalues only (the atom at zero of a "
            "rank-deficient p x p matrix is not part of the density)"
        )
    return eigs


def _shaped(out: np.ndarray):
    return out[()] if out.ndim == 0 else out


# --------------------------------------------------------------------------- Marchenko-Pastur


def _mp_edges(gamma: float) -> tuple[float, float]:
    return (math.sqrt(gamma) - 1) ** 2, (math.sqrt(gamma) + 1) ** 2


def mp_density(x, gamma):
    r"""Marchenko-Pastur density of the nonzero eigenvalues, in the HTMP scaling (the
    :math:`\kappa\to\infty` limit of :func:`htmp_density`).

    .. math:: f_\infty(x) = \frac{\sqrt{(x_+-x)(x-x_-)}}{2\pi x},\qquad
              x_\pm=(\sqrt\gamma\pm1)^2,

    i.e. the nonzero spectrum of :math:`X^\top X` for an :math:`n\times p` matrix :math:`X` of
    unit-variance entries, mean :math:`\gamma`, integrating to one.

    Parameters
    ----------
    x : array_like
        Points.
    gamma : float
        Aspect ratio :math:`\gamma=p/n>1`.
    """
    x, gamma = _check_x(x), _check_gamma(gamma)
    lo, hi = _mp_edges(gamma)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.sqrt(np.clip((hi - x) * (x - lo), 0.0, None)) / (2 * np.pi * x)
    return _shaped(np.where((x > lo) & (x < hi), out, 0.0))


def mp_cdf(x, gamma):
    r"""Distribution function of :func:`mp_density` (closed form).

    With :math:`m=\gamma+1`, :math:`w=2\sqrt\gamma`, :math:`R=(x_+-x)(x-x_-)`:

    .. math:: F_\infty(x)=\frac{1}{2\pi}\Bigl[\sqrt R+m\arcsin\frac{x-m}{w}
              -(\gamma-1)\arcsin\frac{mx-(\gamma-1)^2}{wx}\Bigr]+\frac12 .
    """
    x, gamma = _check_x(x), _check_gamma(gamma)
    lo, hi = _mp_edges(gamma)
    xc = np.clip(x, lo, hi)
    m, w = gamma + 1, 2 * math.sqrt(gamma)
    root = np.sqrt(np.clip((hi - xc) * (xc - lo), 0.0, None))
    value = (root + m * np.arcsin(np.clip((xc - m) / w, -1, 1))
             - (gamma - 1) * np.arcsin(np.clip((m * xc - (gamma - 1) ** 2) / (w * xc), -1, 1)))
    value = np.clip(value / (2 * np.pi) + 0.5, 0.0, 1.0)
    return _shaped(np.where(x <= lo, 0.0, np.where(x >= hi, 1.0, value)))


# --------------------------------------------------------------------------- the HTMP density


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


# --------------------------------------------------------------------------- distribution function

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


# --------------------------------------------------------------------------- sampling


def _bidiagonal_gram_eigenvalues(diag: np.ndarray, sub: np.ndarray) -> np.ndarray:
    """Sorted eigenvalues of B B^T for the lower-bidiagonal B = (diag, sub).

    LAPACK's tridiagonal solver is accurate to ~1e-16 of the largest eigenvalue only, and for
    small kappa many eigenvalues lie far below that (they come from tiny chi variates).  Those are
    recomputed as squared singular values of B by bisection on the Golub-Kahan matrix, the
    zero-diagonal tridiagonal with off-diagonal (d1, e1, d2, ..., dn) and eigenvalues +-sigma,
    which is accurate to high *relative* precision (Demmel & Kahan 1990).
    """
    n = len(diag)
    fast = eigvalsh_tridiagonal(diag**2 + np.r_[0.0, sub**2], diag[:-1] * sub)
    fast.sort()
    inaccurate = int(np.searchsorted(fast, SMALL_EIGENVALUE * fast[-1])) + 1  # +1: the boundary
    if inaccurate > 1:
        inaccurate = min(inaccurate, n)
        golub_kahan = np.empty(2 * n - 1)
        golub_kahan[0::2], golub_kahan[1::2] = diag, sub
        sigma = eigvalsh_tridiagonal(
            np.zeros(2 * n), golub_kahan, select="i", select_range=(n, n + inaccurate - 1),
            lapack_driver="stebz", tol=np.finfo(float).tiny)
        fast[:inaccurate] = np.sort(np.abs(sigma)) ** 2
    return fast


def sample_htmp(n, gamma, kappa, rng):
    r"""Nonzero eigenvalues of one HTMP matrix of rank ``n``, sorted, in the scale of
    :func:`htmp_density`.

    Dumitriu & Edelman's (2002) bidiagonal model of the :math:`\beta`-Laguerre ensemble with
    :math:`p=\gamma n`:

    .. math:: B_{ii}\sim\chi_{\beta(p-i+1)},\quad B_{i+1,i}\sim\chi_{\beta(n-i)},\qquad
              \beta=\kappa/p,\qquad x=\frac{\gamma}{\kappa}\operatorname{eig}(BB^\top),

    so that :math:`\mathbb E[x]=\gamma` exactly and the empirical distribution of :math:`x` tends
    to :math:`f` as :math:`n\to\infty` with :math:`\kappa=\beta p` fixed.  (The :math:`p-n` zero
    eigenvalues of the :math:`p\times p` matrix, the atom, are not returned.)  ``kappa=np.inf``
    samples the real Wishart matrix (:math:`\beta=1`, scaled by :math:`\gamma/p`), whose spectrum
    tends to Marchenko-Pastur.  :math:`O(n^2)` time; small eigenvalues are accurate to high
    relative precision (see ``_bidiagonal_gram_eigenvalues``).

    Parameters
    ----------
    n : int
        Number of nonzero eigenvalues (the smaller dimension).
    gamma : float
        Aspect ratio :math:`\gamma=p/n>1`; :math:`p=\gamma n` need not be an integer.
    kappa : float
        :math:`\kappa>0` or ``np.inf``.
    rng : numpy.random.Generator or int
        Randomness (an int is used as a seed).

    Returns
    -------
    ndarray, shape (n,)
    """
    n, gamma = check_int(n, "n", minimum=1), _check_gamma(gamma)
    kappa = _check_kappa(kappa, for_density=False)  # any kappa: the sampler needs no U
    rng = np.random.default_rng(rng)
    p = gamma * n
    beta = 1.0 if math.isinf(kappa) else kappa / p
    i = np.arange(1, n + 1)
    diag = np.sqrt(rng.chisquare(beta * (p - i + 1)))
    sub = np.sqrt(rng.chisquare(beta * (n - i[:-1])))
    return _bidiagonal_gram_eigenvalues(diag, sub) * (gamma / (beta * p))


# --------------------------------------------------------------------------- fitting and tails


def ks_distance(samples, gamma, kappa) -> float:
    r"""Kolmogorov-Smirnov distance :math:`\sup_x|F_n(x)-F(x)|` between ``samples`` and
    :func:`htmp_cdf` (SciPy's ``kstest`` with our distribution function).

    For :math:`n` independent draws its median is about :math:`0.83/\sqrt n`.  The eigenvalues of
    one matrix are dependent (repulsion and the shared chi variables), so pool several matrices,
    or compare against other draws, rather than read a p-value off the independent-draws table.
    """
    samples = np.asarray(samples, dtype=float)
    if samples.ndim != 1 or samples.size == 0:
        raise ValueError(f"samples must be a non-empty 1-D array, got shape {samples.shape}")
    if not np.all(np.isfinite(samples)):
        raise ValueError("samples must be finite (no NaN or inf)")
    gamma, kappa = _check_gamma(gamma), _check_kappa(kappa)
    return float(stats.kstest(samples, lambda v: htmp_cdf(v, gamma, kappa)).statistic)


def fit_kappa(eigs, gamma, bounds=(1e-2, 1e2)) -> float:
    r"""Maximum-likelihood :math:`\hat\kappa` of the HTMP density for a spectrum.

    The eigenvalues are first rescaled to mean :math:`\gamma`, the mean of :math:`f` for every
    :math:`\kappa`: a trained weight matrix has an arbitrary overall scale, and the moment
    condition removes it, so that :math:`\hat\kappa` depends on the *shape* of the spectrum only
    (it is scale-free, like WeightWatcher's :math:`\alpha`).  Then

    .. math:: \hat\kappa=\arg\max_{\log\kappa\in[\log\kappa_{lo},\log\kappa_{hi}]}
              \sum_i\log f\bigl(\gamma x_i/\bar x;\gamma,\kappa\bigr)

    by bounded Brent search (``scipy.optimize.minimize_scalar``) on :math:`\log\kappa`.  A value
    at the upper bound means "indistinguishable from Marchenko-Pastur at this size"; above
    :math:`\kappa\approx32` each likelihood costs about a millisecond per eigenvalue (mpmath).

    Parameters
    ----------
    eigs : array_like, shape (n,)
        The nonzero eigenvalues (e.g. squared singular values of a weight matrix), at least 10.
    gamma : float
        Aspect ratio :math:`\gamma=p/n>1` of the matrix they came from.
    bounds : (float, float)
        Search interval for :math:`\kappa`, :math:`0<\kappa_{lo}<\kappa_{hi}\le1000`.

    Returns
    -------
    float
    """
    eigs, gamma = _check_eigs(eigs, minimum=10), _check_gamma(gamma)
    try:
        lo, hi = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a pair of numbers, got {bounds!r}") from None
    if not (0 < lo < hi <= KAPPA_MAX):
        raise ValueError(f"bounds must satisfy 0 < low < high <= {KAPPA_MAX:g}, got {bounds!r}")
    x = eigs * (gamma / eigs.mean())

    def negative_log_likelihood(log_kappa):
        return -float(np.sum(_logpdf_positive(x, gamma, math.exp(log_kappa))))

    result = optimize.minimize_scalar(negative_log_likelihood, bounds=(math.log(lo), math.log(hi)),
                                      method="bounded", options={"xatol": 1e-3})
    return float(math.exp(result.x))


def hill_alpha(eigs, frac=0.05) -> float:
    r"""Hill estimate of the upper-tail exponent :math:`\alpha` of a density
    :math:`\propto x^{-\alpha}`.

    With :math:`x_{(1)}\ge\dots\ge x_{(k)}` the :math:`k=\lceil\text{frac}\cdot n\rceil` largest
    values (the continuous power-law MLE of Clauset, Shalizi & Newman 2009 with
    :math:`x_{\min}=x_{(k)}`, the exponent WeightWatcher reports):

    .. math:: \hat\alpha = 1+\frac{k}{\sum_{i=1}^k\log\bigl(x_{(i)}/x_{(k)}\bigr)}.

    Parameters
    ----------
    eigs : array_like, shape (n,)
        Positive values.
    frac : float
        Share of the sample in the tail, in (0, 1].
    """
    eigs = _check_eigs(eigs, minimum=2)
    if not 0 < frac <= 1:
        raise ValueError(f"frac must be in (0, 1], got {frac!r}")
    k = math.ceil(frac * eigs.size)
    if k < 2:
        raise ValueError(
            f"frac={frac} of {eigs.size} eigenvalues leaves {k} in the tail; at least 2 are needed")
    tail = np.sort(eigs)[-k:]
    spread = np.sum(np.log(tail / tail[0]))
    if spread <= 0:
        raise ValueError("the tail values are all equal: no exponent can be estimated")
    return float(1 + k / spread)


def haar_layer(eigs, m, rng) -> np.ndarray:
    r"""A weight matrix :math:`W=U\,\mathrm{diag}(\sqrt{\lambda})\,V^\top` of shape ``(m, n)``
    whose :math:`W^\top W` has the eigenvalues ``eigs``, with Haar-distributed singular vectors.

    :math:`V` is Haar on :math:`O(n)` and :math:`U` Haar on the Stiefel manifold of
    :math:`m\times n` orthonormal frames, both from the QR factorisation of a Gaussian matrix with
    the signs of :math:`R`'s diagonal moved into :math:`Q` (Mezzadri 2007;
    ``scipy.stats.ortho_group`` does the same for square matrices).  Maximal eigenvector entropy:
    the spectrum is all the structure.

    Parameters
    ----------
    eigs : array_like, shape (n,)
        Nonnegative eigenvalues (squared singular values).
    m : int
        Number of rows, ``m >= n`` (``m / n`` is the aspect ratio :math:`\gamma`).
    rng : numpy.random.Generator or int
    """
    eigs = np.asarray(eigs, dtype=float)
    if eigs.ndim != 1 or eigs.size == 0:
        raise ValueError(f"eigs must be a non-empty 1-D array, got shape {eigs.shape}")
    if not np.all(np.isfinite(eigs)) or np.any(eigs < 0):
        raise ValueError("eigs must be finite and nonnegative")
    n = eigs.size
    m = check_int(m, "m", minimum=1)
    if m < n:
        raise ValueError(f"m must be at least len(eigs) = {n}, got {m}")
    rng = np.random.default_rng(rng)

    def haar_frame(rows, cols):
        q, r = np.linalg.qr(rng.standard_normal((rows, cols)))
        return q * np.sign(np.diag(r))

    return (haar_frame(m, n) * np.sqrt(eigs)) @ haar_frame(n, n).T
