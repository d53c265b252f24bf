"""Forest completion: the k-center forest, MFC-Approx and the whole approximate MST."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from icml25.common.streams import as_generator
from icml25.common.validation import check_int

from .distances import DistanceOracle
from .trees import SpanningTree, _check_n, mst_of_condensed, mst_of_dense


def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else as_generator(seed)


def k_center(oracle: DistanceOracle, t: int, seed=0,
             first_center: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Gonzalez's farthest-first traversal: ``t`` centers, each point assigned to the nearest.

    A 2-approximation of the k-center objective; :math:`n t` distance evaluations.  The
    first center is drawn uniformly from ``seed`` (an int, ``SeedSequence`` or
    ``Generator``), or is the point ``first_center`` when given (the authors' code starts
    at point ``n // 2``); the rest follow deterministically.

    Returns
    -------
    assignment : ndarray of int, shape (n,)
        Cluster of every point, ``0..t-1`` (cluster ``i`` is the one of center ``i``).
    centers : ndarray of int, shape (t,)
    """
    n = oracle.n
    if first_center is None:
        centers = [int(_rng(seed).integers(n))]
    else:
        centers = [check_int(first_center, "first_center", minimum=0, maximum=n - 1)]
    # The assignment is kept up to date as the centers arrive (the distance to the nearest
    # center so far, and which): no second pass over the n * t distances at the end.
    nearest = oracle.to_all(centers[0])
    assignment = np.zeros(n, dtype=np.intp)
    closer = np.empty(n, dtype=bool)
    for c in range(1, t):
        centers.append(int(np.argmax(nearest)))
        row = oracle.to_all(centers[-1])
        np.less(row, nearest, out=closer)
        np.minimum(row, nearest, out=nearest)
        assignment[closer] = c
    return assignment, np.array(centers, dtype=np.intp)


def forest_in_components(oracle: DistanceOracle, components: np.ndarray):
    """Step (1) of the framework: an exact MST inside every component (:math:`\\sum_i\\binom{|C_i|}2`).

    Components come in label order, each one's MST from :func:`mst_of_condensed`.
    """
    components = np.asarray(components)
    order = np.argsort(components, kind="stable")  # members of each component in index order
    _, starts = np.unique(components[order], return_index=True)
    edges, weights = [], []
    for members in np.split(order, starts[1:]):
        e, w = mst_of_condensed(oracle.condensed(members), len(members))
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
    # D_sorted[a, j] = d(X[order[a]], r_j): the n * t distances, rows grouped by component
    D_sorted = oracle.cross(order, reps)
    # nearest[i, j] = min over u in C_i of d(u, r_j), and who[i, j] the first u that realises it
    # (one argmin per component block; the minimum is read at the argmin, one pass in all)
    ends = np.append(starts[1:], oracle.n)
    nearest = np.empty((t, t))
    who = np.empty((t, t), dtype=np.intp)
    columns = np.arange(t)
    for i in range(t):
        block = D_sorted[starts[i] : ends[i]]
        first = np.argmin(block, axis=0)
        nearest[i] = block[first, columns]
        who[i] = order[starts[i] + first]
    # candidate (i, j): either (u in C_i, r_j) or (r_i, v in C_j)
    use_i_side = nearest <= nearest.T
    W = np.where(use_i_side, nearest, nearest.T)
    coarse_edges, coarse_w = mst_of_dense(W)
    a, b = coarse_edges[:, 0], coarse_edges[:, 1]
    side = use_i_side[a, b]
    u = np.where(side, who[a, b], reps[a])
    v = np.where(side, reps[b], who[b, a])
    return np.column_stack([u, v]).astype(np.intp), coarse_w


def forest_completion_mst(
    X,
    *,
    metric: str | Callable = "euclidean",
    n_clusters: int | None = None,
    seed=0,
    first_center: int | None = None,
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
    seed : int, SeedSequence or Generator, optional
        Seed of the first k-center (independent starts: children of one
        ``SeedSequence``, ``SeedSequence(s).spawn(k)``).
    first_center : int, optional
        The first k-center, instead of one drawn from ``seed`` (``n // 2`` gives the authors'
        clusters; see :func:`k_center`).
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
        components, _ = k_center(oracle, t, seed, first_center)
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
