"""Diagnostics of the paper's guarantees: forest quality, the optimal completion, single linkage."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .distances import DistanceOracle
from .trees import SpanningTree, mst_of_dense


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
