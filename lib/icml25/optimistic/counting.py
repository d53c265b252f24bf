"""Budget accounting: :class:`CountedFunction`, :class:`Result`, and input checks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from icml25.common.validation import check_int


def _bounds(bounds) -> np.ndarray:
    try:
        b = np.asarray(bounds, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a (d, 2) array of numbers; got {bounds!r}")
    if b.ndim != 2 or b.shape[1] != 2 or b.shape[0] == 0:
        raise ValueError(f"bounds must be a non-empty (d, 2) array; got shape {b.shape}")
    if not np.all(np.isfinite(b)):
        raise ValueError("bounds must be finite")
    if np.any(b[:, 1] <= b[:, 0]):
        bad = np.flatnonzero(b[:, 1] <= b[:, 0])
        raise ValueError(f"bounds must have lower < upper in every row; rows {bad.tolist()} "
                         "are empty or inverted")
    return b


def _callable(f):
    if not callable(f):
        raise TypeError(f"f must be callable; got {type(f).__name__}")
    return f


class BudgetExhausted(RuntimeError):
    """Raised by :class:`CountedFunction` instead of evaluating beyond the budget."""


class CountedFunction:
    r"""$f$ behind a counter: every evaluation counted, none beyond ``budget``.

    Call it with a point ``(d,)`` or a batch ``(k, d)``; it returns the values, records the
    best-so-far value after every evaluation and the best point. A call that would take the
    count past the budget raises :class:`BudgetExhausted` *before* evaluating anything.

    Parameters
    ----------
    f : callable
        The objective; a point ``(d,)`` to a float, or with ``vectorized=True`` a batch
        ``(k, d)`` to ``(k,)`` values.
    budget : int
        The largest number of evaluations $n$.
    vectorized : bool
        Whether ``f`` takes batches.
    history : bool
        Keep every evaluated point and its value (``result().info["points"]``,
        ``info["values"]``).
    """

    def __init__(self, f: Callable, budget: int, *, vectorized: bool = False,
                 history: bool = False):
        self.f = _callable(f)
        self.points: list[np.ndarray] | None = [] if history else None
        self.values: list[np.ndarray] | None = [] if history else None
        self.budget = check_int(budget, "budget", minimum=1)
        self.vectorized = bool(vectorized)
        self.count = 0
        self.best = np.inf
        self.best_x: np.ndarray | None = None
        self._trace: list[np.ndarray] = []

    @property
    def remaining(self) -> int:
        return self.budget - self.count

    def __call__(self, x):
        x = np.asarray(x, dtype=float)
        single = x.ndim == 1
        batch = x[None] if single else x
        k = batch.shape[0]
        if k > self.remaining:
            raise BudgetExhausted(f"{k} evaluations requested, {self.remaining} left")
        if self.vectorized:
            values = np.asarray(self.f(batch), dtype=float).reshape(k)
        else:
            values = np.array([float(self.f(row)) for row in batch])
        if np.any(np.isnan(values)):
            raise ValueError("f returned NaN")
        self.count += k
        if self.points is not None:
            self.points.append(batch.copy())
            self.values.append(values.copy())
        best_so_far = np.minimum.accumulate(np.r_[self.best, values])[1:]
        self._trace.append(best_so_far)
        i = int(np.argmin(values))
        if values[i] < self.best:
            self.best, self.best_x = float(values[i]), batch[i].copy()
        return float(values[0]) if single else values

    def result(self, **extra) -> Result:
        trace = np.concatenate(self._trace) if self._trace else np.empty(0)
        if self.points is not None:
            info = extra.setdefault("info", {})
            info["points"] = (np.concatenate(self.points) if self.points
                              else np.empty((0, 0)))
            info["values"] = np.concatenate(self.values) if self.values else np.empty(0)
        return Result(x=self.best_x, fun=self.best, n_evals=self.count, trace=trace, **extra)


@dataclass
class Result:
    """The outcome of one optimisation run.

    Attributes
    ----------
    x : ndarray (d,)
        The best point evaluated.
    fun : float
        Its value $\\min_{t\\le n} f(x_t)$.
    n_evals : int
        Evaluations of $f$ used, learning samples included; never more than the budget.
    trace : ndarray (n_evals,)
        Best value after each evaluation.
    subspace : ndarray (d, m), optional
        The learned subspace's orthonormal basis $V$
        (:func:`~icml25.optimistic.learned.learned_partition` only).
    n_learn : int
        Evaluations spent learning the subspace.
    """

    x: np.ndarray | None
    fun: float
    n_evals: int
    trace: np.ndarray
    subspace: np.ndarray | None = None
    n_learn: int = 0
    info: dict = field(default_factory=dict)

    def best_at(self, n) -> np.ndarray:
        """Best value after ``n`` evaluations (array-like; the last value beyond the trace)."""
        n = np.atleast_1d(np.asarray(n, dtype=int))
        if np.any(n < 1):
            raise ValueError("n must be >= 1")
        return self.trace[np.minimum(n, self.trace.size) - 1]


