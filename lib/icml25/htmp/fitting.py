r"""Fitting the ensemble to a spectrum: the KS distance and the maximum-likelihood
:math:`\hat\kappa`."""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats

from ._checks import KAPPA_MAX, _check_eigs, _check_gamma, _check_kappa
from .cdf import htmp_cdf
from .density import _logpdf_positive


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
