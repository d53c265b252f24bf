r"""Shared by the parts of :mod:`icml25.transfer_theory`: argument validation (finite real arrays
within bounds, integers, angles in :math:`[0,\pi]`) and the names of the three learners.
"""

from __future__ import annotations

import numpy as np

LEARNERS = ("scratch", "linear", "finetune")


def _array(value, name: str, *, low=None, high=None, strict_low=False) -> np.ndarray:
    """A finite real float array within ``[low, high]`` (``(low, high]`` when strict_low)."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number or an array of them; got {value!r}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; got {value!r}")
    if low is not None and np.any(arr <= low if strict_low else arr < low):
        raise ValueError(f"{name} must be {'>' if strict_low else '>='} {low}; got {value!r}")
    if high is not None and np.any(arr > high):
        raise ValueError(f"{name} must be <= {high:.6g}; got {value!r}")
    return arr


def _integers(value, name: str, minimum: int) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must be an integer or an array of integers; got {value!r}")
    if np.any(arr < minimum):
        raise ValueError(f"{name} must be >= {minimum}; got {value!r}")
    return arr.astype(np.int64)


def _scalar_or_array(arr: np.ndarray):
    return float(arr) if arr.ndim == 0 else arr


def _angles(theta, name: str = "theta") -> np.ndarray:
    return _array(theta, name, low=0.0, high=np.pi)
