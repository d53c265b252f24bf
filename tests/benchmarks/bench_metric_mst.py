"""Forest completion against the authors' C++, side by side on the recorded points (not a test).

``data/reference/metric_mst/authors_cpp.json`` holds the CPU time and tree weight of the authors'
k-center forest + MFC (tommy1019/MetricForestCompletion, compiled -O3, one thread) on uniform
points in [0, 1)^d at four sizes, and ``authors_clusters.npz`` their clusters.  This script
rebuilds the same points, times ``forest_completion_mst`` the same way (CPU time of the process,
one thread, median of three calls in a warm process) and checks that our MFC, given their
clusters, weighs what their tree weighs (their distances are float32, ours float64)::

    PYTHONPATH=lib .venv/bin/python tests/benchmarks/bench_metric_mst.py [--repeats 3]

Timings depend on the machine and its load: compare ratios measured on one machine at one time.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from icml25.common import data
from icml25.metric_mst import forest_completion_mst
from threadpoolctl import threadpool_limits

#: The points of the reference run, as its ``make_points_source`` draws them.
POINTS_SEED = 2025


def reference_points(n: int, d: int) -> np.ndarray:
    """Uniform float32 points in [0, 1)^d of the reference run, as float64."""
    return np.random.default_rng(POINTS_SEED).random((n, d)).astype(np.float32).astype(np.float64)


def cpu_median(call, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        call()
        times.append(time.process_time() - start)
    return float(np.median(times))


def compare(repeats: int = 3) -> list[dict]:
    """One row per recorded size: our CPU time, theirs, the ratio, and the weight agreement."""
    reference = json.loads(data.path("reference/metric_mst/authors_cpp.json").read_text())
    clusters = np.load(data.path("reference/metric_mst/authors_clusters.npz"))
    rows = []
    for run in reference["runs"]:
        n, d = run["n"], run["d"]
        X = reference_points(n, d)
        forest_completion_mst(X, first_center=n // 2)  # warm caches and imports
        ours = cpu_median(lambda X=X: forest_completion_mst(X, first_center=n // 2), repeats)
        given = forest_completion_mst(X, components=clusters[f"n{n}_d{d}"]).weight
        rows.append({
            "n": n, "d": d, "ours_cpu_s": ours, "theirs_cpu_s": run["cpu_s_median"],
            "ours_over_theirs": ours / run["cpu_s_median"],
            "weight_rel_diff_given_their_clusters": abs(given - run["tree_weight"]) / run["tree_weight"],
        })
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    threadpool_limits(1)  # one thread, as the reference ran
    print(f"{'n':>6} {'d':>3} {'ours (s)':>9} {'C++ (s)':>9} {'ratio':>6} {'weight rel. diff':>17}")
    for row in compare(args.repeats):
        print(f"{row['n']:>6} {row['d']:>3} {row['ours_cpu_s']:>9.4f} {row['theirs_cpu_s']:>9.4f} "
              f"{row['ours_over_theirs']:>6.2f} {row['weight_rel_diff_given_their_clusters']:>17.1e}")


if __name__ == "__main__":
    main()
