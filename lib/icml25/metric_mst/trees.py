"""Spanning trees: the result type and the exact MSTs (Kruskal, sort-free, implicit Prim, tree peers)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.spatial.distance import squareform

from .distances import DistanceOracle


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


def _condensed_pairs(positions: np.ndarray, k: int) -> np.ndarray:
    """Pairs ``(i, j)``, ``i < j``, at ``positions`` of a condensed (``pdist``-ordered) vector."""
    row_start = np.arange(k) * k - np.arange(k) * np.arange(1, k + 1) // 2  # index of (i, i + 1)
    i = np.searchsorted(row_start, positions, side="right") - 1
    return np.column_stack([i, positions - row_start[i] + i + 1]).astype(np.intp)


def _minimax_distances(y: np.ndarray, k: int) -> np.ndarray:
    """Cophenetic distances of single linkage on condensed ``y``: the minimax path distances."""
    from scipy.cluster.hierarchy import cophenet, linkage

    Z = linkage(y, "single")
    try:  # the compiled kernel behind ``cophenet``, without its per-call validation of Z
        from scipy.cluster._hierarchy import cophenetic_distances
    except ImportError:  # pragma: no cover - SciPy is pinned; the public call is the fallback
        return cophenet(Z)
    out = np.zeros(len(y))
    cophenetic_distances(Z, out, k)
    return out


def mst_of_condensed(y: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact MST of ``k`` points from their condensed distances (``pdist`` order), without a sort.

    The same tree as :func:`mst_of_dense` (Kruskal) on ``squareform(y)``, edges in the same order,
    found in :math:`O(k^2)` compiled time.  SciPy's single linkage runs Prim's algorithm on ``y``
    but keeps only the merge heights, not which points merge; the heights give the cophenetic
    (minimax) distance :math:`c(a, b)`, the heaviest edge on the tree path from :math:`a` to
    :math:`b`.  Every edge of every MST has :math:`d(a, b) = c(a, b)`, and every other pair
    :math:`d(a, b) \ge c(a, b)` (the cycle property).  If exactly :math:`k - 1` pairs attain
    equality, they are *the* MST, which is then unique, so Kruskal returns it too.  With ties
    (more than :math:`k - 1` pairs) the function falls back to :func:`mst_of_dense`, whose
    choice among the minimum trees is the reference.  Kruskal's sort of all
    :math:`\binom k2` distances dominated the forest's time; linkage and cophenet need none.

    Returns edges ``i < j`` sorted by ``(i, j)``, and their weights ``y`` at those pairs.
    """
    if k <= 1:
        return np.zeros((0, 2), dtype=np.intp), np.zeros(0)
    on_tree = np.flatnonzero(_minimax_distances(y, k) == y)
    if len(on_tree) != k - 1:  # ties: more than one minimum spanning tree
        return mst_of_dense(squareform(y, checks=False))
    return _condensed_pairs(on_tree, k), y[on_tree]


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


def _check_n(oracle: DistanceOracle) -> None:
    if oracle.n == 0:
        raise ValueError("X is empty: a spanning tree needs at least one point")


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
