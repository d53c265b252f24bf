"""Measuring cost the same way in every chapter: CPU time, peak memory, growth, crossover.

Timings on shared machines are noisy, so chapters report ratios and growth rates (log-log
slopes) rather than single times, of the CPU time of the work (``time.process_time``: another
program on the machine delays the work but does not add to it), the minimum over repeats (the
run least disturbed by caches and interrupts); memory is traced in a separate run, because
tracing every allocation slows allocation-heavy code several-fold and would bias the times.
"""

from __future__ import annotations

import time
import tracemalloc
from typing import Callable, Mapping

import numpy as np


def timed(fn: Callable, *, repeats: int = 3, max_seconds: float = 1.0):
    """Least CPU time (seconds, ``time.process_time``) of up to ``repeats`` calls of ``fn()``,
    and the last result.

    The process's CPU time counts the work of its threads (one, as the runs pin them), not the
    time the machine spent on other programs. Stops after the first call that takes longer than
    ``max_seconds`` (long runs are less noisy and a budget is a budget).
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    times, result = [], None
    for _ in range(repeats):
        start = time.process_time()
        result = fn()
        times.append(time.process_time() - start)
        if times[-1] > max_seconds:
            break
    return float(np.min(times)), result


def peak_memory_mib(fn: Callable):
    """Peak memory allocated through Python's allocators (numpy arrays included) during ``fn()``,
    in MiB, and its result.  Memory held by compiled libraries' own allocators is not seen."""
    tracemalloc.start()
    try:
        result = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak / 2**20, result


def loglog_slope(x, y) -> float:
    """Least-squares slope of log(y) against log(x): the growth exponent of y in x."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape or x.size < 2:
        raise ValueError("loglog_slope needs two arrays of the same length, at least 2")
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("loglog_slope needs positive values")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def crossover(method: Mapping, baseline: Mapping):
    """Smallest measured size from which ``method`` is faster than ``baseline`` at every larger
    size measured for both (``{size: seconds}`` maps); ``None`` if it never is."""
    common = sorted(set(method) & set(baseline))
    for i, n in enumerate(common):
        if all(method[m] < baseline[m] for m in common[i:]):
            return n
    return None


def describe_crossover(method: Mapping, baseline: Mapping, name: str, baseline_name: str) -> str:
    """A sentence for the prose: where ``name`` becomes faster than ``baseline_name``."""
    n = crossover(method, baseline)
    common = sorted(set(method) & set(baseline))
    if n is None:
        return f"{baseline_name} stays faster than {name} up to the largest size measured"
    if n == common[0]:
        return f"{name} is faster than {baseline_name} at every size measured, from n = {n}"
    return f"{name} becomes faster than {baseline_name} from n = {n} on (the crossover)"
