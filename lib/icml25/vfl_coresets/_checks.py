"""Input validation shared by the parts of :mod:`icml25.vfl_coresets`."""

from __future__ import annotations

import numpy as np

#: The coreset constructions, baselines first.
METHODS = ("uniform", "leverage", "ridge", "lewis", "lewis-aug")


def _matrix(A, name: str = "X") -> np.ndarray:
    A = np.asarray(A, dtype=float)
    if A.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (rows x features); got shape {A.shape}")
    if A.shape[0] == 0 or A.shape[1] == 0:
        raise ValueError(f"{name} must have at least one row and one column; got {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return A


def _vector(y, n: int, name: str = "y") -> np.ndarray:
    y = np.asarray(y, dtype=float)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"{name} must be a vector of length {n}; got shape {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return y


def _blocks(blocks, y=None):
    if isinstance(blocks, np.ndarray) or not hasattr(blocks, "__len__") or len(blocks) == 0:
        raise ValueError("blocks must be a non-empty list of 2-D arrays, one per party")
    blocks = [_matrix(b, f"blocks[{j}]") for j, b in enumerate(blocks)]
    rows = {b.shape[0] for b in blocks}
    if len(rows) != 1:
        raise ValueError(f"every party's block must have the same rows; got row counts "
                         f"{[b.shape[0] for b in blocks]}")
    if y is not None:
        y = _vector(y, blocks[0].shape[0])
    return blocks, y


def _check_labels_pm1(y: np.ndarray) -> None:
    if not np.all(np.abs(y) == 1):
        raise ValueError("logistic regression needs labels in {-1, +1}")


def _check_replace(replace) -> bool:
    if not isinstance(replace, (bool, np.bool_)):
        raise TypeError(f"replace must be True or False; got {replace!r}")
    return bool(replace)
