r"""The Marchenko-Pastur law in the HTMP scaling: the :math:`\kappa\to\infty` limit."""

from __future__ import annotations

import math

import numpy as np

from ._checks import _check_gamma, _check_x, _shaped


def _mp_edges(gamma: float) -> tuple[float, float]:
    return (math.sqrt(gamma) - 1) ** 2, (math.sqrt(gamma) + 1) ** 2


def mp_density(x, gamma):
    r"""Marchenko-Pastur density of the nonzero eigenvalues, in the HTMP scaling (the
    :math:`\kappa\to\infty` limit of :func:`~icml25.htmp.density.htmp_density`).

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
