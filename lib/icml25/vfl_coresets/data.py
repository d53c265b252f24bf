"""Synthetic data for the experiments: rare important rows, and plain Gaussian rows."""

from __future__ import annotations

import numpy as np

from icml25.common.streams import as_generator
from icml25.common.validation import check_int


def rare_rows_data(n: int, *, task: str = "ridge", widths=(10, 10, 10), rare: float = 0.01,
                   noise: float = 1.0, seed=0):
    r"""Three parties' blocks where a rare segment alone carries the last party's features.

    Common rows: $x\sim\mathcal N(0,I)$ on the first parties' columns, zeros on the last
    party's. Rare rows (a share ``rare``): the last party's columns $\mathcal N(0,I)$, the others
    scaled by 0.2. $\beta$ has $\mathcal N(0,4/d_{\text{common}})$ entries, the last party's
    times 4. Ridge labels $y=x^\top\beta+\text{noise}\cdot\varepsilon$; logistic labels
    $y=\pm1$ with $P(y=1)=1/(1+e^{-x^\top\beta})$.

    Returns ``blocks, y, beta, is_rare``.
    """
    if task not in ("ridge", "logistic"):
        raise ValueError(f"task must be 'ridge' or 'logistic'; got {task!r}")
    if not 0 < rare < 1:
        raise ValueError(f"rare must be a share in (0, 1); got {rare}")
    widths = [int(w) for w in widths]
    if len(widths) < 2 or min(widths) < 1:
        raise ValueError("widths must list at least two positive block widths")
    n = check_int(n, "n", minimum=2)
    rng = as_generator(seed)
    d, last = sum(widths), widths[-1]
    X = rng.standard_normal((n, d))
    is_rare = rng.random(n) < rare
    X[~is_rare, d - last:] = 0.0
    X[is_rare, : d - last] *= 0.2
    beta = rng.standard_normal(d) * 2 / np.sqrt(d - last)
    beta[d - last:] *= 4
    z = X @ beta
    if task == "ridge":
        y = z + noise * rng.standard_normal(n)
    else:
        y = np.where(rng.random(n) < 1 / (1 + np.exp(-z)), 1.0, -1.0)
    return np.split(X, np.cumsum(widths)[:-1], axis=1), y, beta, is_rare


def gaussian_data(n: int, *, task: str = "ridge", widths=(10, 10, 10), noise: float = 1.0,
                  seed=0):
    """Blocks of i.i.d. standard Gaussian rows, no rare segment; returns ``blocks, y, beta``."""
    if task not in ("ridge", "logistic"):
        raise ValueError(f"task must be 'ridge' or 'logistic'; got {task!r}")
    widths = [int(w) for w in widths]
    n = check_int(n, "n", minimum=2)
    rng = as_generator(seed)
    d = sum(widths)
    X = rng.standard_normal((n, d))
    beta = rng.standard_normal(d) * 2 / np.sqrt(d)
    z = X @ beta
    if task == "ridge":
        y = z + noise * rng.standard_normal(n)
    else:
        y = np.where(rng.random(n) < 1 / (1 + np.exp(-z)), 1.0, -1.0)
    return np.split(X, np.cumsum(widths)[:-1], axis=1), y, beta
