r"""Metric minimum spanning trees by forest completion (Veldt et al., ICML 2025).

An exact MST of :math:`n` points in an arbitrary metric space needs all
:math:`\binom n2` distances.  The paper's framework spends far fewer:

1. **a forest** :math:`F` from a practical heuristic: k-center clustering (Gonzalez's
   farthest-first traversal) into :math:`t` clusters, then an exact MST inside each cluster, which
   costs :math:`n t + \sum_i \binom{|C_i|}{2}` distances;
2. **metric forest completion** (MFC): connect the :math:`t` components with light edges.  Solving
   MFC optimally still takes :math:`\Omega(n^2)` time; the paper's subquadratic
   MFC-Approx picks one representative :math:`r_i` per component and, for every pair of
   components, the lightest edge among
   :math:`\{(r_i, v): v\in C_j\}\cup\{(u, r_j): u\in C_i\}` (:math:`n t` distances in all), then an
   MST of the :math:`t`-node graph of these candidates.  It is a 2.62-approximation of MFC,
   whose objective is the weight of the whole tree :math:`F\cup E` (the paper's theorem;
   :math:`2.62\approx(3+\sqrt5)/2`).

**Learning-augmented guarantee.** If the forest overlaps an optimal MST :math:`M^*`, the tree is a
:math:`(2\gamma+1)`-approximation of the MST, where

.. math:: \gamma = \frac{w(F)}{w\big(\{e\in M^*: e \text{ inside one component of } F\}\big)}

measures how well the forest agrees with :math:`M^*` (as the official code computes it; it needs
the exact MST, so it is a diagnostic, not a run-time certificate).

Distances go through :class:`DistanceOracle`, which counts every evaluation: the count is the
machine-independent cost that the chapter reports beside wall time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.spatial.distance import cdist, pdist, squareform

from icml25.common.validation import check_int

__all__ = [
    "DistanceOracle",
    "SpanningTree",
    "k_center",
    "mst_of_dense",
    "forest_in_components",
    "complete_forest",
    "forest_completion_mst",
    "exact_mst",
    "implicit_prim_mst",
    "exact_emst",
    "overlap_gamma",
    "optimal_completion_weight",
    "mfc_ratio",
    "cut_tree",
    "gaussian_mixture",
    "string_families",
]


# --------------------------------------------------------------------------- distances


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


# --------------------------------------------------------------------------- trees


@dataclass(frozen=True)
class SpanningTree:
    """A spanning tree of ``n`` points: ``edges[k] = (i, j)`` with weight ``weights[k]``.

    Attributes
    ----------
    edges : ndarray of int, shape (n - 1, 2)
    weights : ndarray, shape (n - 1,)
    evaluations : int
        Distance evaluations the algorithm made.
    components : ndarray of int or None
        For forest completion: the component of every point in the initial forest.
    n_forest_edges : int
        How many of the edges came from the initial forest (the rest complete it).
    """

    edges: np.ndarray
    weights: np.ndarray
    evaluations: int
    components: np.ndarray | None = None
    n_forest_edges: int = 0

    @property
    def n(self) -> int:
        return len(self.edges) + 1

    @property
    def weight(self) -> float:
        return float(self.weights.sum())

    @property
    def forest_weight(self) -> float:
        """Weight of the initial forest's edges."""
        return float(self.weights[: self.n_forest_edges].sum())

    @property
    def completion_weight(self) -> float:
        """Weight of the completion edges (those added to the forest)."""
        return float(self.weights[self.n_forest_edges :].sum())


def mst_of_dense(D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact MST of a complete graph given by a symmetric distance matrix (SciPy's Kruskal).

    SciPy drops zeros, and values within 1e-8 of zero, of a *dense* matrix as missing edges; the
    upper triangle is therefore passed as a sparse matrix, with zero distances (duplicate points)
    as the smallest positive float.  The weights returned are the true distances.
    """
    from scipy.sparse import coo_matrix

    k = len(D)
    if k <= 1:
        return np.zeros((0, 2), dtype=np.intp), np.zeros(0)
    i, j = np.triu_indices(k, 1)
    values = np.maximum(D[i, j], np.finfo(float).tiny)
    tree = minimum_spanning_tree(coo_matrix((values, (i, j)), shape=(k, k)).tocsr()).tocoo()
    edges = np.column_stack([tree.row, tree.col]).astype(np.intp)
    return edges, D[edges[:, 0], edges[:, 1]]


def implicit_prim_mst(oracle: DistanceOracle) -> tuple[np.ndarray, np.ndarray]:
    """Exact MST by Prim's algorithm, one row of distances per step: O(n) memory, C(n,2) evaluations.

    The exact baseline of the paper's experiments ("implicit Prim"), vectorised over each row.
    """
    n = oracle.n
    in_tree = np.zeros(n, dtype=bool)
    best = np.full(n, np.inf)
    parent = np.full(n, -1, dtype=np.intp)
    edges, weights = [], []
    current = 0
    for _ in range(n - 1):
        in_tree[current] = True
        outside = np.flatnonzero(~in_tree)
        row = oracle.cross([current], outside)[0]
        closer = row < best[outside]
        best[outside[closer]] = row[closer]
        parent[outside[closer]] = current
        nxt = outside[np.argmin(best[outside])]
        edges.append((parent[nxt], nxt))
        weights.append(best[nxt])
        current = nxt
    return np.array(edges, dtype=np.intp).reshape(-1, 2), np.array(weights, dtype=float)


def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def k_center(oracle: DistanceOracle, t: int, seed=None) -> tuple[np.ndarray, np.ndarray]:
    """Gonzalez's farthest-first traversal: ``t`` centers, each point assigned to the nearest.

    A 2-approximation of the k-center objective; :math:`n t` distance evaluations.

    Returns
    -------
    assignment : ndarray of int, shape (n,)
        Cluster of every point, ``0..t-1`` (cluster ``i`` is the one of center ``i``).
    centers : ndarray of int, shape (t,)
    """
    n = oracle.n
    centers = [int(_rng(seed).integers(n))]
    nearest = oracle.cross([centers[0]], np.arange(n))[0]
    assignment = np.zeros(n, dtype=np.intp)
    for c in range(1, t):
        centers.append(int(np.argmax(nearest)))
        row = oracle.cross([centers[-1]], np.arange(n))[0]
        closer = row < nearest
        nearest[closer] = row[closer]
        assignment[closer] = c
    return assignment, np.array(centers, dtype=np.intp)


def forest_in_components(oracle: DistanceOracle, components: np.ndarray):
    """Step (1) of the framework: an exact MST inside every component (:math:`\\sum_i\\binom{|C_i|}2`)."""
    edges, weights = [], []
    for c in np.unique(components):
        members = np.flatnonzero(components == c)
        e, w = mst_of_dense(oracle.square(members))
        edges.append(members[e])
        weights.append(w)
    return np.concatenate(edges).reshape(-1, 2), np.concatenate(weights)


def complete_forest(oracle: DistanceOracle, components: np.ndarray):
    """MFC-Approx (step 2): connect the components with the paper's subquadratic completion.

    Parameters
    ----------
    oracle : DistanceOracle
    components : ndarray of int, shape (n,)
        Component of every point in the forest (labels ``0..t-1``, each used).

    Returns
    -------
    edges : ndarray of int, shape (t - 1, 2)
    weights : ndarray, shape (t - 1,)

    Notes
    -----
    With :math:`r_i` the first point of :math:`C_i` (as in the official code) and
    :math:`D[u, j] = d(u, r_j)` for every point :math:`u` (:math:`nt` evaluations), the candidate
    edge between components :math:`i` and :math:`j` weighs
    :math:`\\min\\big(\\min_{u\\in C_i} D[u, j],\\ \\min_{v\\in C_j} D[v, i]\\big)`; the completion is
    an MST of the :math:`t`-node graph of candidates, mapped back to the point pairs.
    """
    t = int(components.max()) + 1
    if t == 1:
        return np.zeros((0, 2), dtype=np.intp), np.zeros(0)
    order = np.argsort(components, kind="stable")
    starts = np.searchsorted(components[order], np.arange(t))
    reps = order[starts]  # first point (lowest index) of each component
    D = oracle.cross(np.arange(oracle.n), reps)  # (n, t)
    D_sorted = D[order]
    # nearest[i, j] = min over u in C_i of d(u, r_j), and which u realises it
    nearest = np.minimum.reduceat(D_sorted, starts, axis=0)
    ends = np.append(starts[1:], oracle.n)
    who = np.empty((t, t), dtype=np.intp)
    for i in range(t):
        block = D_sorted[starts[i] : ends[i]]
        who[i] = order[starts[i] + np.argmin(block, axis=0)]
    # candidate (i, j): either (u in C_i, r_j) or (r_i, v in C_j)
    use_i_side = nearest <= nearest.T
    W = np.where(use_i_side, nearest, nearest.T)
    coarse_edges, coarse_w = mst_of_dense(W)
    a, b = coarse_edges[:, 0], coarse_edges[:, 1]
    side = use_i_side[a, b]
    u = np.where(side, who[a, b], reps[a])
    v = np.where(side, reps[b], who[b, a])
    return np.column_stack([u, v]).astype(np.intp), coarse_w


def _check_n(oracle: DistanceOracle) -> None:
    if oracle.n == 0:
        raise ValueError("X is empty: a spanning tree needs at least one point")


def forest_completion_mst(
    X,
    *,
    metric: str | Callable = "euclidean",
    n_clusters: int | None = None,
    seed=None,
    components=None,
) -> SpanningTree:
    """Approximate metric MST: k-center forest (or a given one), then MFC-Approx.

    Parameters
    ----------
    X : array (n, d) or sequence
        Points (see :class:`DistanceOracle`).
    metric : str or callable
    n_clusters : int, optional
        Number :math:`t` of k-center clusters; default :math:`\\lceil\\sqrt n\\rceil`, which
        balances the :math:`nt` and :math:`\\sum|C_i|^2\\approx n^2/t` terms.
    seed : int or Generator, optional
        Seed of the first k-center.
    components : array of int, optional
        A forest given as a partition of the points (the "learned" forest of the
        learning-augmented setting); replaces k-center.  The forest is the exact MST inside each
        part.

    Returns
    -------
    SpanningTree
        Forest edges first, then the completion edges; ``evaluations`` counts both steps.
    """
    oracle = DistanceOracle(X, metric)
    _check_n(oracle)
    n = oracle.n
    if components is None:
        t = math.ceil(math.sqrt(n)) if n_clusters is None else n_clusters
        t = check_int(t, "n_clusters", minimum=1, maximum=n)
        components, _ = k_center(oracle, t, seed)
        # With duplicate points a center may win no point: re-code the clusters densely.
        _, components = np.unique(components, return_inverse=True)
    else:
        components = np.asarray(components)
        if components.shape != (n,):
            raise ValueError(f"components must have one label per point ({n}), got shape {components.shape}")
        _, components = np.unique(components, return_inverse=True)
    forest_edges, forest_w = forest_in_components(oracle, components)
    completion_edges, completion_w = complete_forest(oracle, components)
    return SpanningTree(
        edges=np.concatenate([forest_edges, completion_edges]),
        weights=np.concatenate([forest_w, completion_w]),
        evaluations=oracle.evaluations,
        components=components,
        n_forest_edges=len(forest_edges),
    )


def exact_mst(X, *, metric: str | Callable = "euclidean", method: str = "scipy") -> SpanningTree:
    """Exact MST from all :math:`\\binom n2` distances.

    ``method="scipy"`` builds the dense distance matrix and calls
    :func:`scipy.sparse.csgraph.minimum_spanning_tree` (the peer and the reference);
    ``method="prim"`` is implicit Prim (:func:`implicit_prim_mst`), the paper's exact baseline,
    with :math:`O(n)` memory.
    """
    oracle = DistanceOracle(X, metric)
    _check_n(oracle)
    if method == "scipy":
        edges, weights = mst_of_dense(oracle.square(np.arange(oracle.n)))
    elif method == "prim":
        edges, weights = implicit_prim_mst(oracle)
    else:
        raise ValueError(f"method must be 'scipy' or 'prim', got {method!r}")
    return SpanningTree(edges, weights, oracle.evaluations)


#: Libraries that :func:`exact_emst` calls: exact Euclidean MSTs by space-partitioning trees.
EMST_LIBRARIES = ("mlpack", "hdbscan")


def exact_emst(X, *, library: str = "mlpack") -> tuple[np.ndarray, np.ndarray]:
    r"""Exact Euclidean MST by dual-tree Borůvka, from a peer library (the specialised baseline).

    Borůvka's algorithm joins every component to its nearest outside point in each round; the
    dual-tree version (March et al., 2010) finds those neighbours by traversing a space-partitioning
    tree against itself and skips every pair of nodes whose lower bound on the distance exceeds
    the best candidate found so far.  In low dimension nearly all of the :math:`\binom n2` pairs
    are skipped; as :math:`d` grows the bounds lose their power and the work tends to all pairs.

    Parameters
    ----------
    X : array of shape (n, d)
        Points under the Euclidean distance.
    library : {"mlpack", "hdbscan"}
        ``"mlpack"``: mlpack's ``emst`` (C++, a kd-tree with leaves of one point).
        ``"hdbscan"``: the Borůvka stage of hdbscan's ``boruvka_kdtree`` algorithm alone, on
        scikit-learn's kd-tree, with ``approx_min_span_tree=False`` (its default shortcut returns
        a tree that need not be minimal) and ``min_samples=1``.  It minimises the mutual
        reachability distance :math:`\max(c_a, c_b, \lVert a-b\rVert)`, where the core distance
        :math:`c_a` is then the distance from :math:`a` to its nearest neighbour, which no distance
        from :math:`a` undercuts: the mutual reachability distance *is* the Euclidean one.

    Returns
    -------
    edges : ndarray of int, shape (n - 1, 2)
    weights : ndarray, shape (n - 1,)
        Euclidean lengths of the edges.  Neither library reports how many distances it
        evaluated, so no count is returned.
    """
    if library not in EMST_LIBRARIES:
        raise ValueError(f"library must be one of {EMST_LIBRARIES}, got {library!r}")
    X = DistanceOracle(X, "euclidean").X  # validated, float64
    n = len(X)
    if n == 0:
        raise ValueError("X is empty: a spanning tree needs at least one point")
    if n == 1:
        return np.zeros((0, 2), dtype=np.intp), np.zeros(0)
    if library == "mlpack":
        import mlpack

        tree = mlpack.emst(input_=np.ascontiguousarray(X))["output"]
    else:
        from hdbscan._hdbscan_boruvka import KDTreeBoruvkaAlgorithm
        from sklearn.neighbors import KDTree

        # leaf sizes as hdbscan's own boruvka_kdtree path sets them (40 for the kNN tree,
        # 40 // 3 for the Borůvka tree); one job, as every timing in the book is single-threaded
        algorithm = KDTreeBoruvkaAlgorithm(
            KDTree(X, leaf_size=40), min_samples=1, metric="euclidean", leaf_size=40 // 3,
            approx_min_span_tree=False, n_jobs=1,
        )
        tree = np.asarray(algorithm.spanning_tree())
    edges = tree[:, :2].astype(np.intp)
    # the libraries return float64 lengths; recompute them so both report the same rounding
    weights = np.linalg.norm(X[edges[:, 0]] - X[edges[:, 1]], axis=1)
    return edges, weights


# --------------------------------------------------------------------------- diagnostics


def overlap_gamma(tree: SpanningTree, optimal: SpanningTree) -> float:
    """The paper's forest-quality measure :math:`\\gamma = w(F) / w(M^*\\text{ inside components})`.

    ``tree`` is a forest-completion result (its forest and components); ``optimal`` an exact MST.
    :math:`\\gamma\\ge1`; 1 means the forest is exactly the part of an optimal MST inside its
    components.
    """
    if tree.components is None:
        raise ValueError("overlap_gamma needs a forest-completion tree (with components)")
    comp = tree.components
    inside = comp[optimal.edges[:, 0]] == comp[optimal.edges[:, 1]]
    denominator = optimal.weights[inside].sum()
    forest_weight = tree.forest_weight
    if denominator == 0:
        return 1.0 if forest_weight == 0 else math.inf
    return float(forest_weight / denominator)


def optimal_completion_weight(X, components, *, metric: str | Callable = "euclidean") -> float:
    """Weight of an *optimal* forest completion (the MFC optimum), from all distances.

    Contracting each component to a node, the optimal completion is an MST of the graph whose
    edge :math:`(i, j)` weighs the closest pair between :math:`C_i` and :math:`C_j`.  Needs
    :math:`\\binom n2` distances: a reference for the 2.62 guarantee, not an algorithm to use.
    """
    oracle = DistanceOracle(X, metric)
    _, comp = np.unique(np.asarray(components), return_inverse=True)
    t = comp.max() + 1
    D = oracle.square(np.arange(oracle.n))
    order = np.argsort(comp, kind="stable")
    starts = np.searchsorted(comp[order], np.arange(t))
    rows = np.minimum.reduceat(D[order], starts, axis=0)  # (t, n)
    W = np.minimum.reduceat(rows[:, order], starts, axis=1)  # (t, t)
    return float(mst_of_dense(W)[1].sum())


def mfc_ratio(tree: SpanningTree, X, *, metric: str | Callable = "euclidean") -> float:
    r"""The ratio that the paper's 2.62 guarantee bounds: :math:`w(F\cup E)/w(F\cup E^*)`.

    MFC's objective is the weight of the whole spanning tree, the given forest included;
    :math:`E^*` is an optimal completion (:func:`optimal_completion_weight`).  The completion edges
    alone admit no constant factor: two components whose representatives sit far from their
    closest pair make :math:`w(E)/w(E^*)` arbitrarily large, while the forest's own edges pay for
    that detour in the total.
    """
    if tree.components is None:
        raise ValueError("mfc_ratio needs a forest-completion tree (with components)")
    optimum = tree.forest_weight + optimal_completion_weight(X, tree.components, metric=metric)
    return tree.weight / optimum if optimum > 0 else 1.0


def cut_tree(tree: SpanningTree, n_clusters: int) -> np.ndarray:
    """Single-linkage flat clustering from a spanning tree: drop its ``n_clusters - 1`` heaviest edges.

    On an exact MST this is exactly single-linkage clustering (up to ties).
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    if not 1 <= n_clusters <= tree.n:
        raise ValueError(f"n_clusters must be between 1 and {tree.n}, got {n_clusters}")
    keep = np.argsort(tree.weights, kind="stable")[: tree.n - n_clusters]
    e = tree.edges[keep]
    graph = coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(tree.n, tree.n))
    return connected_components(graph, directed=False)[1]


# --------------------------------------------------------------------------- data of the chapter


def gaussian_mixture(n: int, d: int, k: int, rng) -> np.ndarray:
    """The paper's synthetic data: ``k`` Gaussians in R^d, means ~ U(-5, 5)^d, scales ~ U(0.5, 0.8)."""
    rng = _rng(rng)
    means = rng.uniform(-5, 5, (k, d))
    scales = rng.uniform(0.5, 0.8, k)
    label = rng.integers(0, k, n)
    return means[label] + scales[label, None] * rng.standard_normal((n, d))


def string_families(n: int, n_families: int, rng, *, alphabet: str = "abcdefghij") -> list[str]:
    """``n`` strings in ``n_families`` families: random base words, each member 0-3 random edits away."""
    rng = _rng(rng)
    letters = np.array(list(alphabet))
    bases = ["".join(rng.choice(letters, rng.integers(8, 15))) for _ in range(n_families)]
    words = []
    for family in rng.integers(0, n_families, n):
        word = list(bases[family])
        for _ in range(rng.integers(0, 4)):
            kind, pos = rng.integers(0, 3), rng.integers(0, len(word) + 1)
            if kind == 0 or len(word) < 2:  # insertion
                word.insert(pos, rng.choice(letters))
            elif kind == 1:  # deletion
                del word[min(pos, len(word) - 1)]
            else:  # substitution
                word[min(pos, len(word) - 1)] = rng.choice(letters)
        words.append("".join(word))
    return words
