"""What every part of :mod:`icml25.cross_learning` shares: the feedback precision, the block
size of the random draws, input checks and the value distribution of the auction."""

from __future__ import annotations

import numpy as np

from icml25.common.validation import check_int

#: The dtype of the losses revealed to learners.
FEEDBACK_DTYPE = np.float32  # losses revealed to learners: single precision halves the traffic
_BLOCK = 512  # rounds of random numbers drawn at once (contexts, adversary, action uniforms)


def _probability_vector(p, size: int, name: str) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    if p.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"{name} must be finite and non-negative")
    if abs(p.sum() - 1.0) > 1e-8:
        raise ValueError(f"{name} must sum to 1, sums to {p.sum():.6g}")
    return p / p.sum()


def _optional_rate(value, name: str, *, allow_zero: bool) -> float | None:
    if value is None:
        return None
    value = float(value)
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    return value


def gaussian_bump(n: int, center: float = 0.6, width: float = 0.15) -> np.ndarray:
    r""":math:`\nu(c)\propto\exp(-\tfrac12((v_c-\text{center})/\text{width})^2)` on the grid
    :math:`v_c=(c+1)/n`, the value distribution of the auction example."""
    n = check_int(n, "n", minimum=1)
    if not width > 0:
        raise ValueError(f"width must be > 0, got {width!r}")
    v = np.arange(1, n + 1) / n
    p = np.exp(-0.5 * ((v - center) / width) ** 2)
    return p / p.sum()
