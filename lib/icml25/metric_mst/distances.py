"""Distances through one counting oracle: every evaluation is what the chapter reports as cost."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.spatial.distance import cdist, pdist, squareform


class DistanceOracle:
    """Distances between items of ``X`` under ``metric``, counting every evaluation.

    Parameters
    ----------
    X : array of shape (n, d), or a sequence of objects
        Points.  Arrays work with any metric name that :func:`scipy.spatial.distance.cdist`
        knows (``"euclidean"``, ``"cosine"``, ``"cityblock"``, ...).  A sequence of strings works
        with ``metric="levenshtein"`` (edit distance, computed by rapidfuzz).  Any sequence works
        with a callable ``metric(a, b) -> float``.
    metric : str or callable

    Attributes
    ----------
    evaluations : int
        Number of distinct pairs whose distance has been computed so far.
    """

    def __init__(self, X, metric: str | Callable = "euclidean"):
        self.metric = metric
        self.evaluations = 0
        if callable(metric):
            self.X = _as_sequence(X)
            self._kind = "callable"
        elif metric == "levenshtein":
            self.X = _as_sequence(X)
            if not all(isinstance(s, str) for s in self.X):
                raise ValueError("metric 'levenshtein' needs a sequence of strings")
            self._kind = "levenshtein"
        elif isinstance(metric, str):
            X = np.asarray(X)
            if X.ndim != 2:
                raise ValueError(f"X must be a 2-D array (n, d) for metric {metric!r}, got shape {X.shape}")
            if not np.issubdtype(X.dtype, np.number):
                raise ValueError(f"X must hold numbers for metric {metric!r}, got dtype {X.dtype}")
            X = X.astype(np.float64, copy=False)
            if not np.all(np.isfinite(X)):
                raise ValueError("X contains NaN or infinite values")
            try:
                cdist(X[:1], X[:1], metric=metric)
            except ValueError as exc:
                raise ValueError(f"unknown metric {metric!r}: {exc}") from None
            self.X = X
            self._kind = "scipy"
        else:
            raise ValueError(f"metric must be a string or a callable, got {type(metric).__name__}")
        self.n = len(self.X)

    def _raw(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        if self._kind == "scipy":
            return cdist(self.X[rows], self.X[cols], metric=self.metric)
        if self._kind == "levenshtein":
            from rapidfuzz.distance import Levenshtein
            from rapidfuzz.process import cdist as rf_cdist

            a = [self.X[i] for i in rows]
            b = [self.X[j] for j in cols]
            return rf_cdist(a, b, scorer=Levenshtein.distance, dtype=np.float64)
        out = np.empty((len(rows), len(cols)))
        for a, i in enumerate(rows):
            for b, j in enumerate(cols):
                out[a, b] = self.metric(self.X[i], self.X[j])
        return out

    def _checked(self, D: np.ndarray, rows, cols) -> np.ndarray:
        # two reductions settle the common case: NaN fails ``max < inf``, so does infinity
        if D.size == 0 or (D.max() < np.inf and D.min() >= 0):
            return D
        bad = ~np.isfinite(D) | (D < 0)
        if bad.any():
            a, b = np.argwhere(bad)[0]
            raise ValueError(
                f"metric returned {float(D[a, b])} for items {int(rows[a])} and {int(cols[b])}: distances must be "
                "finite and non-negative"
            )
        return D

    def cross(self, rows, cols) -> np.ndarray:
        """Distances ``D[a, b] = d(X[rows[a]], X[cols[b]])``; counts ``len(rows) * len(cols)``."""
        rows, cols = np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)
        self.evaluations += len(rows) * len(cols)
        return self._checked(self._raw(rows, cols), rows, cols)

    def to_all(self, i: int) -> np.ndarray:
        """Distances from item ``i`` to every item, ``d(X[i], X[j])`` for ``j = 0..n-1``; counts ``n``.

        The same values as ``cross([i], range(n))[0]``, without copying the points.
        """
        if self._kind != "scipy":
            return self.cross([i], np.arange(self.n))[0]
        self.evaluations += self.n
        row = cdist(self.X[i : i + 1], self.X, metric=self.metric)[0]
        return self._checked(row[None], np.array([i]), np.arange(self.n))[0]

    def condensed(self, idx) -> np.ndarray:
        """All distances among ``X[idx]`` in condensed form (the order of ``pdist``); counts pairs.

        The upper triangle of :meth:`square`, row by row, with the same values.
        """
        idx = np.asarray(idx, dtype=np.intp)
        k = len(idx)
        if self._kind != "scipy":
            return squareform(self.square(idx), checks=False) if k > 1 else np.zeros(0)
        self.evaluations += k * (k - 1) // 2
        y = pdist(self.X[idx], metric=self.metric) if k > 1 else np.zeros(0)
        if y.size and not (y.max() < np.inf and y.min() >= 0):
            self._checked(squareform(y, checks=False), idx, idx)  # raises, naming the pair
        return y

    def square(self, idx) -> np.ndarray:
        """All distances among ``X[idx]`` as a square matrix; counts the distinct pairs only."""
        idx = np.asarray(idx, dtype=np.intp)
        k = len(idx)
        self.evaluations += k * (k - 1) // 2
        if self._kind == "scipy":
            D = squareform(pdist(self.X[idx], metric=self.metric)) if k > 1 else np.zeros((k, k))
        elif self._kind == "levenshtein":
            D = self._raw(idx, idx)
        else:  # a Python callable: evaluate each unordered pair once
            D = np.zeros((k, k))
            for a in range(k):
                for b in range(a + 1, k):
                    D[a, b] = D[b, a] = self.metric(self.X[idx[a]], self.X[idx[b]])
        return self._checked(D, idx, idx)


def _as_sequence(X) -> Sequence:
    if isinstance(X, np.ndarray) and X.ndim == 2:
        return X
    if isinstance(X, (str, bytes)) or not hasattr(X, "__len__"):
        raise ValueError("X must be an array of points or a sequence of objects")
    return list(X)
