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


def loglog_crossing(x, y, level: float, *, extrapolate: bool = False) -> float | None:
    r"""Where the measured curve $y(x)$ crosses ``level`` for the last time, read off a
    log-log line.

    Between the two measurements $(x_i, y_i)$, $(x_{i+1}, y_{i+1})$ that bracket the level,
    $\log y$ is taken linear in $\log x$ (a power law on that stretch), so the crossing

    $$x^* = x_i \left(\frac{x_{i+1}}{x_i}\right)^{\frac{\log(\text{level}/y_i)}
    {\log(y_{i+1}/y_i)}}$$

    moves continuously with every measured time, where the first measured $x$ past the level
    moves only when a time crosses it. Without a bracket: ``None``, or with ``extrapolate``
    the power law through the last two measurements carried on to the level.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape or x.size < 2 or np.any(np.diff(x) <= 0):
        raise ValueError("loglog_crossing needs x increasing and y of the same length, "
                         "at least 2")
    if np.any(x <= 0) or np.any(y <= 0) or level <= 0:
        raise ValueError("loglog_crossing needs positive x, y and level")
    lx, ly, ll = np.log(x), np.log(y), np.log(level)
    side = np.sign(ly - ll)
    brackets = [i for i in range(len(x) - 1) if side[i] * side[i + 1] <= 0]
    if brackets:
        i = brackets[-1]
    elif extrapolate:
        i = len(x) - 2
    else:
        return None
    if ly[i + 1] == ly[i]:
        return float(x[i + 1]) if side[i + 1] == 0 else None
    return float(np.exp(lx[i] + (ll - ly[i]) * (lx[i + 1] - lx[i]) / (ly[i + 1] - ly[i])))


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
