"""The percentile bootstrap of a mean, one function for the chapters that need no other."""

from __future__ import annotations

import numpy as np


def bootstrap_ci(values, *, n_boot: int = 10_000, level: float = 0.95, seed=0):
    r"""Mean of ``values`` and its percentile bootstrap interval: ``(mean, (lo, hi))``.

    Draws ``n_boot`` resamples of the :math:`n` values with replacement (one value per test
    unit: an image, a pair, a cell); the interval holds the central ``level`` of the resampled
    means :math:`\bar v^{*}_b`, i.e. their :math:`(1-\text{level})/2` and
    :math:`(1+\text{level})/2` quantiles. ``seed`` is anything ``numpy.random.default_rng``
    takes (a chapter passes a named stream, ``run.seed_of("bootstrap-recall")``, so that each
    quantity has its own).
    """
    v = np.asarray(values, float).ravel()
    if v.size == 0 or not np.isfinite(v).all():
        raise ValueError("bootstrap_ci needs a non-empty array of finite values")
    if n_boot < 1 or not 0 < level < 1:
        raise ValueError(f"n_boot must be positive and level in (0, 1): {n_boot}, {level}")
    idx = np.random.default_rng(seed).integers(0, v.size, size=(n_boot, v.size))
    means = v[idx].mean(1)
    a = (1 - level) / 2
    return float(v.mean()), (float(np.quantile(means, a)), float(np.quantile(means, 1 - a)))
