"""Chapter 15 beside the authors' C++ (tommy1019/MetricForestCompletion, run outside the project).

``data/reference/metric_mst/authors_cpp.json`` holds their k-center forest + MFC tree weights on
uniform points in [0, 1)^d (``make_points_source`` in the file draws them), and
``authors_clusters.npz`` their k-center clusters. Their Gonzalez traversal starts at point
``n // 2``; ours draws the first center from a seed unless ``first_center`` is given.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from icml25.common import data
from icml25.metric_mst import forest_completion_mst

POINTS_SEED = 2025  # the reference run's points, as its make_points_source draws them


def _reference():
    record = json.loads(data.path("reference/metric_mst/authors_cpp.json").read_text())
    with np.load(data.path("reference/metric_mst/authors_clusters.npz")) as file:
        clusters = {key: file[key] for key in file.files}
    return record, clusters


def _points(n: int, d: int) -> np.ndarray:
    # float32 points, as their driver reads them, widened exactly to float64
    return np.random.default_rng(POINTS_SEED).random((n, d)).astype(np.float32).astype(np.float64)


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


@pytest.mark.parametrize("d", [2, 8, 32])
def test_started_where_theirs_starts_our_forest_and_tree_are_theirs(d):
    """Started at point n // 2, our k-center gives their 127 clusters exactly, and our MFC tree
    weighs what theirs weighs. Tolerance 1e-8 relative: the record prints the weight with six
    or more decimals (at most 6e-9 relative for the lightest tree, 87.1); the agreement
    measured is about 1.5e-10."""
    record, clusters = _reference()
    run = next(r for r in record["runs"] if r["n"] == 16000 and r["d"] == d)
    n = run["n"]
    ours = forest_completion_mst(_points(n, d), first_center=n // 2)
    theirs = clusters[f"n{n}_d{d}"]
    assert len(np.unique(theirs)) == run["t"] == 127
    assert _same_partition(ours.components, theirs)
    assert len(ours.edges) == run["n_edges"]
    assert abs(ours.weight - run["tree_weight"]) <= 1e-8 * run["tree_weight"]


def test_a_seeded_start_gives_other_clusters_and_a_tree_within_a_few_tenths_of_a_percent():
    """By design, the book's k-center draws its first center from the run's seed (independent
    starts for the seed plan): the clusters then differ from theirs and so does the tree's
    weight, by -0.27% to +0.29% on these three point sets (measured; pinned here within
    0.5%, and at least 0.05% apart, so that the difference stays visible)."""
    record, clusters = _reference()
    for d in (2, 8, 32):
        run = next(r for r in record["runs"] if r["n"] == 16000 and r["d"] == d)
        ours = forest_completion_mst(_points(16000, d), seed=0)
        assert not _same_partition(ours.components, clusters[f"n16000_d{d}"])
        gap = abs(ours.weight - run["tree_weight"]) / run["tree_weight"]
        assert 5e-4 <= gap <= 5e-3, (d, gap)


def test_first_center_is_checked():
    X = _points(50, 2)
    with pytest.raises(ValueError, match="first_center"):
        forest_completion_mst(X, first_center=50)
    with pytest.raises(ValueError, match="first_center"):
        forest_completion_mst(X, first_center=-1)
