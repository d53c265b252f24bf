"""Argument validation and the numerical thresholds shared by the parts of :mod:`icml25.htmp`."""

from __future__ import annotations

import math

import numpy as np

KAPPA_MAX = 1e3  # above, mpmath needs ~0.2 s a point and HTMP is within ~1e-3 of MP: use np.inf
KAPPA_SCIPY = 32.0  # SciPy's M and U validated against mpmath up to here (module docstring)
INTEGER_MARGIN = 1e-2  # ... with a <= 0 and c >= 2 at least this far from an integer
MAX_CANCELLATION = 1e6  # SciPy path kept while the bracket loses at most ~6 of 16 digits
SMALL_EIGENVALUE = 1e-8  # below this fraction of the largest, eigvalsh's absolute error shows


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
