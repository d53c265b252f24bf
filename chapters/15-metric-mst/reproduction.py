# %% [markdown]
# # Reproduction: quality, overlap, cost, clustering
#
# > In practice, we find nearly optimal spanning trees for a wide range of metrics, while being
# > orders of magnitude faster than exact algorithms. (Veldt et al., 2025, abstract)

# %% [markdown]
# The paper's experiments run its C++ code on 20,000 to 40,000 points. Here: a few thousand points
# on two cores, the same algorithm in numpy (`icml25.metric_mst`), and four kinds of data: the
# paper's Gaussian mixtures (Euclidean), scikit-learn's digits under cosine and Manhattan
# distances, and synthetic strings under edit distance. The reference is the exact MST from all
# $\binom n2$ distances: implicit Prim, the paper's exact baseline, and SciPy's
# `minimum_spanning_tree` on the dense matrix, the peer library. For low-dimensional Euclidean data
# a specialised exact algorithm, mlpack's dual-tree Borůvka EMST {cite}`march2010emst`, joins the
# comparison.
#
# The headline cost is the **number of distance evaluations**, which does not depend on the
# machine; CPU times are reported as ratios and slopes.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import time

import mlpack
import numpy as np
from matplotlib.ticker import FixedLocator, FormatStrFormatter, NullLocator
import pandas as pd
from IPython.display import display
from scipy import stats
from scipy.cluster.hierarchy import fcluster, linkage
from sklearn.datasets import load_digits
from sklearn.metrics import adjusted_rand_score

from icml25 import book
from icml25.book.thresholds import threshold
from icml25.common.stats import bootstrap_ci
from icml25.metric_mst import (
    cut_tree,
    exact_emst,
    exact_mst,
    forest_completion_mst,
    gaussian_mixture,
    mfc_ratio,
    overlap_gamma,
    string_families,
)

SIZES = {
    "quick": dict(
        n_blobs=1000, n_strings=600, n_digits=600,                      # 1. quality
        cluster_counts=(16, 64), n_starts=10,                            # 1. starts
        n_sweep=600, sweep=(0.0, 0.2, 0.5, 1.0),                         # 2. overlap
        n_grid=(250, 500, 1000, 2000), n_scipy_max=1000, repeats=1,      # 3. cost
        n_plane_max=2000,                                                # 3. plane
        n_dims=1000, dims=(2, 8, 32), dim_repeats=1,                     # 3. dimension
    ),
    "book": dict(
        n_blobs=4000, n_strings=2000, n_digits=1797,
        cluster_counts=(16, 32, 64, 128, 256), n_starts=10,
        n_sweep=2000, sweep=(0.0, 0.05, 0.1, 0.2, 0.4, 0.7, 1.0),
        n_grid=(500, 1000, 2000, 4000, 8000, 16000, 24000), n_scipy_max=2000, repeats=3,
        n_plane_max=8000,
        n_dims=4000, dims=(2, 4, 8, 16, 32, 64), dim_repeats=5,
    ),
    "paper": dict(
        n_blobs=20000, n_strings=20000, n_digits=1797,
        cluster_counts=(16, 32, 64, 128, 256), n_starts=20,
        n_sweep=10000, sweep=(0.0, 0.05, 0.1, 0.2, 0.4, 0.7, 1.0),
        n_grid=(1000, 2000, 4000, 8000, 16000, 32000), n_scipy_max=4000, repeats=3,
        n_plane_max=32000,
        n_dims=16000, dims=(2, 4, 8, 16, 32, 64), dim_repeats=5,
    ),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size


# least CPU time of up to `repeats` runs, one when a run takes over a second
timed = book.measure.timed


def timed_in_turn(calls, repeats, max_seconds=1.0):
    """Least CPU time of each of several calls taking turns, and their last results.

    CPU time (``time.process_time``) does not count the waits of a busy machine, but
    other processes still slow a run through shared caches and clock speed, in bursts;
    taking turns spreads a burst over all the methods compared instead of landing it on
    one. As with ``timed``, a call that takes longer than ``max_seconds`` is not
    repeated.
    """
    times = {name: [] for name in calls}
    results = {}
    for _ in range(repeats):
        for name, call in calls.items():
            if times[name] and times[name][-1] > max_seconds:
                continue
            start = time.process_time()
            results[name] = call()
            times[name].append(time.process_time() - start)
    return {name: float(np.min(t)) for name, t in times.items()}, results

# one colour per method for the whole chapter
COLOURS = {
    "MFC": book.PALETTE[0],
    "exact (implicit Prim)": book.PALETTE[1],
    "exact (SciPy, dense)": book.PALETTE[2],
    "mlpack EMST (exact)": book.PALETTE[4],
    "hdbscan EMST (exact)": book.PALETTE[3],
}


def label_n_axis(ax, ns):
    """Tick a log x axis at the measured sizes, in plain numbers."""
    ax.xaxis.set_major_locator(FixedLocator(ns))
    ax.xaxis.set_major_formatter(FormatStrFormatter("%d"))
    ax.xaxis.set_minor_locator(NullLocator())


# %% [markdown]
# ## 1. Near-optimal trees across metrics
#
# For every data set: MFC with a k-center forest of $t=\lceil\sqrt n\rceil$ clusters, against the
# exact MST. The columns are the weight ratio, the share of the $\binom n2$ distances that MFC
# evaluated, the overlap measure $\gamma$ with its bound $2\gamma+1$, and the tree's weight over
# that of the *best* completion of the same forest, $w(F\cup E)/w(F\cup E^*)$, which the paper
# bounds by 2.62. The last row is
# the adversarial case: a forest from a random partition, which overlaps the optimal tree poorly.
#
# Cosine distance is not a metric (it breaks the triangle inequality), so the paper's guarantees do
# not cover it; it is in the table because the paper's claim of near-optimality is empirical and
# "a wide range of metrics" is what a user will try.

# %%
digits = load_digits().data[: size.n_digits]
blobs = gaussian_mixture(size.n_blobs, 32, 20, run.rng("blobs"))
strings = string_families(size.n_strings, size.n_strings // 30, run.rng("strings"))
n_parts = int(np.ceil(np.sqrt(size.n_blobs)))
random_parts = run.rng("random-partition").integers(0, n_parts, size.n_blobs)
cases = [
    ("Gaussian mixture, d=32", blobs, "euclidean", True, None),
    ("digits, Manhattan", digits, "cityblock", True, None),
    ("digits, cosine (not a metric)", digits, "cosine", False, None),
    ("strings, edit distance", strings, "levenshtein", True, None),
    ("Gaussian mixture, random forest", blobs, "euclidean", True, random_parts),
]
rows, timing_rows = [], []
for name, X, metric, is_metric, parts in cases:
    n = len(X)
    kc_seed = run.seed_of(f"k-center-start-{name}")
    t_mfc, tree = timed(
        lambda: forest_completion_mst(X, metric=metric, seed=kc_seed, components=parts),
        repeats=size.repeats)
    t_exact, exact = timed(lambda: exact_mst(X, metric=metric, method="prim"),
                           repeats=1)
    gamma = overlap_gamma(tree, exact)
    rows.append(dict(
        name=name, n=n, metric=is_metric, ratio=tree.weight / exact.weight,
        share=tree.evaluations / (n * (n - 1) / 2), gamma=gamma,
        completion=mfc_ratio(tree, X, metric=metric), random=parts is not None,
        evaluations=(tree.evaluations, exact.evaluations), seconds=(t_mfc, t_exact),
        weights=(tree.weight, exact.weight), exact=exact,
    ))
    timing_rows.append((name, t_exact / t_mfc))

# %% tags=["nbval-check-output"]
quality = pd.DataFrame({
    "data set": [r["name"] for r in rows],
    "n": [r["n"] for r in rows],
    "weight/MST": [f"{r['ratio']:.3f}" for r in rows],
    "evaluated": [f"{r['share']:.1%}" for r in rows],
    "gamma": [f"{r['gamma']:.2f}" for r in rows],
    "2g+1": [f"{2 * r['gamma'] + 1:.2f}" for r in rows],
    "w/best MFC": [f"{r['completion']:.3f}" for r in rows],
})
width = quality["data set"].str.len().max()  # left-align the names and their header
print(quality.to_string(index=False, formatters={"data set": lambda s: s.ljust(width)},
                        header=["data set".ljust(width), *quality.columns[1:]]))

# %%
print("CPU time, exact implicit Prim / MFC (machine-dependent):")
for name, speedup in timing_rows:
    print(f"  {name:34s} {speedup:6.1f}x")

# %% [markdown]
# The bounds are the paper's theorems, checked on every run under a true metric: they can
# only fail through a bug.

# %% tags=["nbval-check-output"]
metric_rows = [r for r in rows if r["metric"]]
worst_completion = max(r["completion"] for r in metric_rows)
book.claim("mfc-2.62", worst_completion, note="ours: the worst ratio")
slack = min(2 * r["gamma"] + 1 - r["ratio"] for r in metric_rows)
book.claim("gamma-bound", slack,
           note="ours: the smallest margin $2\\gamma + 1$ minus the ratio")

# %% [markdown]
# The random forest shows why the guarantee is stated through $\gamma$: its tree is far
# from optimal, and its $\gamma$ says so.
#
# ### Over k-center starts and the paper's cluster counts
#
# The table above is one k-center run per data set, at one $t$. The first center is drawn
# at random and the tree's weight moves with it, and the paper does not use
# $t=\lceil\sqrt n\rceil$: its tables report weight ratios between 1.005 and 1.147 across
# its real data sets (FashionMNIST, Jaccard on recipes and baskets, Hamming on gene
# sequences, edit distance on names) for $t$ from 16 to 256 clusters. So every k-center
# data set above gets {glue:text}`n_starts` independent k-center starts at each $t$ in
# {glue:text}`cluster_counts_text`, all measured against the exact MST computed once per
# data set in the first table. Each cell below is the median weight ratio over the starts,
# with a 95% bootstrap interval over them. The claim's threshold is the paper's worst
# figure, 1.15, and it applies to the worst cell, data set and $t$ together, as the
# paper's 1.147 is the worst of its cells.

# %%
cluster_counts = list(size.cluster_counts)
near = {}  # data set -> weight ratios, one row per t, one column per k-center start
for (name, X, metric, _, parts), r in zip(cases, rows):
    if parts is not None:
        continue
    starts = np.random.SeedSequence(
        run.seed_of(f"k-center-starts-{name}")).spawn(size.n_starts)
    weights = [[forest_completion_mst(X, metric=metric, n_clusters=t, seed=s).weight
                for s in starts] for t in cluster_counts]
    near[name] = np.array(weights) / r["exact"].weight
near_cells = {
    (name, t): bootstrap_ci(ratios[i], statistic=np.median,
                            seed=run.seed_of(f"bootstrap-near-{name}-{t}"))
    for name, ratios in near.items() for i, t in enumerate(cluster_counts)
}

# %% tags=["nbval-check-output"]
print("median weight / MST over", size.n_starts, "k-center starts [95% interval]")
display(pd.DataFrame(  # an HTML table: it scrolls on a narrow screen, text would not
    {f"t = {t}": [f"{near_cells[name, t].value:.3f} [{near_cells[name, t].low:.3f}, "
                  f"{near_cells[name, t].high:.3f}]" for name in near]
     for t in cluster_counts},
    index=pd.Index(list(near), name="data set")))
worst_name, worst_t = max(near_cells, key=lambda key: near_cells[key].value)
worst_cell = near_cells[worst_name, worst_t]
over = sum(e.value > threshold("near-optimal") for e in near_cells.values())
book.glue(n_starts=size.n_starts, near_worst=worst_cell.value,
          near_worst_low=worst_cell.low, near_worst_high=worst_cell.high,
          near_worst_name=worst_name, near_worst_t=worst_t, near_over=over,
          near_cells=len(near_cells), near_t_max=max(cluster_counts),
          near_min_size=min(len(case[1]) for case in cases) / max(cluster_counts))
book.glue("cluster_counts_text", ", ".join(str(t) for t in cluster_counts))
book.claim(
    "near-optimal", worst_cell.value, interval=(worst_cell.low, worst_cell.high),
    note=f"ours: the worst cell, {worst_name} at t = {worst_t}: median over "
    f"{size.n_starts} k-center starts [95% bootstrap interval]",
    digits=4,
)

# %% tags=["hide-input", "remove-output"]
fig, ax = book.figure(height=3.2)
for name, colour, marker in zip(near, book.PALETTE, "osd^"):
    cells = [near_cells[name, t] for t in cluster_counts]
    mid = np.array([e.value for e in cells])
    err = np.array([[e.value - e.low for e in cells],
                    [e.high - e.value for e in cells]])
    ax.errorbar(cluster_counts, mid, yerr=err, fmt=marker + "-", color=colour,
                capsize=3, label=name)
worst_figure = threshold("near-optimal")
ax.axhline(worst_figure, color="grey", linestyle=":",
           label=f"paper's worst figure, {worst_figure}")
ax.set_xscale("log")
label_n_axis(ax, cluster_counts)
ax.set_xlabel("clusters t")
ax.set_ylabel("weight / exact MST (median)")
fig.legend(loc="outside lower center", ncols=2, fontsize=8)
book.show_figure(fig, "fig_starts")

# %% [markdown]
# ```{glue:figure} fig_starts
# :alt: Median weight ratio of MFC's tree over the exact MST against the number of k-center clusters t on a log axis, one line with interval bars per data set, and a dotted horizontal line at the paper's worst figure 1.15.
# :name: fig-15-starts
#
# **MFC's trees against the exact MST, per data set and number of clusters.** Median
# over {glue:text}`n_starts` k-center starts of MFC's weight over the
# exact MST, with 95% bootstrap intervals, against the number of clusters $t$; dotted:
# the paper's worst figure.
# ```
#
# The worst cell is {glue:text}`near_worst_name` at $t=$ {glue:text}`near_worst_t`: a
# median of {glue:text}`near_worst:.3f` [{glue:text}`near_worst_low:.3f`,
# {glue:text}`near_worst_high:.3f`], and {glue:text}`near_over` of the
# {glue:text}`near_cells` cells lie above 1.15 ({numref}`fig-15-starts`). Two differences
# from the paper's setting are to be kept in mind. Our data sets have a few thousand
# points, where the paper's have 30,000 to 40,000, so the same $t$ cuts them into much
# smaller clusters: {glue:text}`near_min_size:.0f` points on average at
# $t=$ {glue:text}`near_t_max` for the smallest of them, against more than 100 at $t=256$
# in the paper. The worst of {glue:text}`near_cells` medians also sits a little above
# its cell's typical value, as the largest of several noisy figures does; the paper's
# 1.147 is likewise the worst of its cells. And cosine distance is not a
# metric, so none of the paper's guarantees covers it; it stays in the claim because a
# user will try it.
#
# ## 2. Quality follows the overlap
#
# To see the learning-augmented result at work, start from the k-center forest of a Gaussian
# mixture and reassign a growing fraction of the points to random clusters before building the
# forest. As the forest drifts away from the optimal tree, $\gamma$ grows, and the paper predicts
# that the tree's quality degrades with it, within $2\gamma+1$.

# %%
X_sweep = gaussian_mixture(size.n_sweep, 32, 20, run.rng("sweep-points"))
exact_sweep = exact_mst(X_sweep, method="prim")
base = forest_completion_mst(X_sweep,
                             seed=run.seed_of("sweep-k-center-start")).components
sweep = []
for fraction in size.sweep:
    rng = run.rng(f"sweep-moves-{fraction:g}")
    parts = base.copy()
    moved = rng.random(len(parts)) < fraction
    parts[moved] = rng.integers(0, base.max() + 1, moved.sum())
    tree = forest_completion_mst(X_sweep, components=parts)
    sweep.append((fraction, overlap_gamma(tree, exact_sweep),
                  tree.weight / exact_sweep.weight))
sweep = np.array(sweep)

# %% tags=["nbval-check-output"]
print("moved   gamma   weight/MST   bound 2g+1")
for fraction, gamma, ratio in sweep:
    print(f"{fraction:5.2f}  {gamma:6.2f}   {ratio:9.3f}   {2 * gamma + 1:9.2f}")
rho = stats.spearmanr(sweep[:, 1], sweep[:, 2]).statistic
book.claim("follows-gamma", rho)

# %% tags=["hide-input", "remove-output"]
fig, ax = book.figure(height=3.4)
ax.plot(sweep[:, 1], sweep[:, 2], "o-", color=COLOURS["MFC"],
        label="measured weight / MST (MFC)")
g = np.geomspace(1, sweep[:, 1].max(), 50)
ax.plot(g, 2 * g + 1, ":", color="grey", label=r"bound $2\gamma+1$")
for fraction, gamma, ratio in sweep:
    ax.annotate(f"{fraction:.0%}", (gamma, ratio), textcoords="offset points",
                xytext=(0, 7), ha="center", fontsize=8)
ax.set_xscale("log")
ax.set_yscale("log")
ax.yaxis.set_major_locator(FixedLocator([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]))
ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
ax.yaxis.set_minor_locator(NullLocator())
ax.set_xlabel(r"overlap measure $\gamma$ (labels: share of points moved)")
ax.set_ylabel("weight / exact MST")
fig.legend(loc="outside lower center", ncols=2)
book.show_figure(fig, "fig_gamma_sweep")

# %% [markdown]
# ```{glue:figure} fig_gamma_sweep
# :alt: Log-log plot of the tree's weight over the exact MST against the overlap measure gamma, one labelled point per share of points moved to random clusters, with the dotted bound 2 gamma + 1 rising far above the measured curve.
# :name: fig-15-gamma-sweep
#
# **The worst-case bound $2\gamma+1$ is loose: the measured weight ratio stays far below
# it.** Weight of MFC's tree over the exact MST against the overlap measure $\gamma$, as a
# growing share of the points (labels) is moved from its k-center cluster to a random one
# before the forest is built; dotted: the theorem's bound.
# ```
#
# The bound is loose ({numref}`fig-15-gamma-sweep`), as worst-case bounds are: the measured ratio grows far more slowly than
# $2\gamma+1$. What matters for a user is the monotone relation: a forest that agrees with the
# optimal tree gives a nearly optimal tree.
#
# ## 3. Cost as $n$ grows
#
# Gaussian mixtures in 32 dimensions. MFC ($t=\lceil\sqrt n\rceil$) against exact implicit Prim and
# SciPy's dense MST (only up to {glue:text}`n_scipy_max` points: it stores all $n^2$ distances).
# The evaluation counts are exact; the times are the least CPU time of up to
# {glue:text}`repeats` runs.

# %%
book.glue(n_scipy_max=size.n_scipy_max, repeats=size.repeats)
X_cost = gaussian_mixture(max(size.n_grid), 32, 20, run.rng("cost-points"))
cost_kc_seed = run.seed_of("cost-k-center-start")
cost = {"MFC": {}, "exact (implicit Prim)": {}, "exact (SciPy, dense)": {}}
evaluations = {}
for n in size.n_grid:
    X = X_cost[:n]
    cost["MFC"][n], tree = timed(lambda: forest_completion_mst(X, seed=cost_kc_seed),
                                 repeats=size.repeats)
    cost["exact (implicit Prim)"][n], exact = timed(lambda: exact_mst(X, method="prim"),
                                                    repeats=size.repeats)
    if n <= size.n_scipy_max:
        cost["exact (SciPy, dense)"][n], _ = timed(lambda: exact_mst(X),
                                                   repeats=size.repeats)
    evaluations[n] = (tree.evaluations, exact.evaluations, tree.weight / exact.weight)


ns = np.array(size.n_grid)
eval_slope = book.measure.loglog_slope(ns, [evaluations[n][0] for n in ns])
time_slopes = {m: book.measure.loglog_slope(sorted(c), [c[n] for n in sorted(c)])
               for m, c in cost.items()}
speedup_max = cost["exact (implicit Prim)"][ns[-1]] / cost["MFC"][ns[-1]]

# %% tags=["nbval-check-output"]
print("     n   MFC evaluations   share of C(n,2)   weight/MST")
for n in ns:
    mfc, full, ratio = evaluations[n]
    print(f"{n:6d}   {mfc:15d}   {mfc / full:15.1%}   {ratio:10.3f}")
print(f"log-log slope of MFC's evaluation count: {eval_slope:.2f} (exact: 2)")

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.4)
axes[0].loglog(ns, [evaluations[n][0] for n in ns], "o-", color=COLOURS["MFC"],
               label=f"MFC (slope {eval_slope:.2f})")
axes[0].loglog(ns, [evaluations[n][1] for n in ns], "s-",
               color=COLOURS["exact (implicit Prim)"], label="exact (slope 2)")
axes[0].set_title("distance evaluations")
axes[0].set_ylabel("distance evaluations")
for (method, c), marker in zip(cost.items(), "osd"):
    m_ns = sorted(c)
    axes[1].loglog(m_ns, [c[n] for n in m_ns], marker + "-", color=COLOURS[method],
                   label=f"{method} (slope {time_slopes[method]:.2f})")
axes[1].set_title("CPU time")
axes[1].set_ylabel("CPU seconds")
for ax in axes:  # legends under the panels, off the data
    label_n_axis(ax, ns)
    ax.set_xlabel("n")
    ax.tick_params(axis="x", labelrotation=45)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.32), fontsize=8)
book.show_figure(fig, "fig_cost")

# %% [markdown]
# ```{glue:figure} fig_cost
# :alt: Two log-log panels against the number of points n. Left, distance evaluations of MFC and of the exact MST, MFC's line less steep and lower. Right, seconds for MFC, exact implicit Prim and SciPy's dense MST, with their fitted slopes in the legend.
# :name: fig-15-cost
#
# **MFC's distance evaluations grow more slowly than the exact MST's $\binom n2$.** Left:
# distance evaluations against $n$ on a 32-dimensional Gaussian mixture, with log-log
# slopes. Right: CPU time of MFC, exact implicit Prim and SciPy's dense MST (only up to
# {glue:text}`n_scipy_max` points), the least of up to {glue:text}`repeats` runs, on this
# run's machine.
# ```

# %% [markdown]
# The claims below are read from this run's slope and times ({numref}`fig-15-cost`). The
# evaluation count does not depend on the machine, and its slope is held to the usual
# tolerance when the tests re-execute the notebook. CPU times depend on it. The paper calls
# MFC "orders of magnitude faster than exact algorithms"; the claim reads that at its
# weakest, one order: a speed-up of at least 10 over exact implicit Prim at the largest
# $n$ measured. Like every timed claim it is pooled over seeds, and the tests do not
# compare its value. Exact Prim's $\binom n2$ evaluations against MFC's
# $O(nt+\sum_i|C_i|^2)$, about $n^{1.5}$, would make the speed-up grow like $\sqrt n$ if
# every evaluation cost the same; the table shows how it grows in fact, with its log-log
# slope over the three largest sizes.

# %%
# CPU times vary from run to run: this cell's table is not compared by the tests
prim = cost["exact (implicit Prim)"]
speedups = {n: prim[n] / cost["MFC"][n] for n in ns}
top = ns[-3:]
speedup_slope = book.measure.loglog_slope(top, [speedups[n] for n in top])
print("     n   MFC (s)   exact Prim (s)   speed-up")
for n in ns:
    print(f"{n:6d}   {cost['MFC'][n]:7.3f}   {prim[n]:14.3f}   {speedups[n]:8.1f}")
print(f"log-log slope of the speed-up over n = {top[0]} to {top[-1]}: "
      f"{speedup_slope:.2f}")
n_max = int(ns[-1])
ten = threshold("faster")  # the claim's "orders of magnitude", read at one order
above = [int(n) for n in ns if speedups[n] >= ten]
if speedup_max >= ten:
    held = min(n for n in ns if all(speedups[m] >= ten for m in ns if m >= n))
    ten_text = f"it is at least {ten:g} times faster from n = {held} on"
elif above:
    ten_text = (f"it passes {ten:g} times at n = {', '.join(map(str, above))} but "
                f"not at the largest size: {ten:g} times is not held at the sizes "
                "measured")
elif speedup_slope > 0:
    n_ten = n_max * (ten / speedup_max) ** (1 / speedup_slope)
    ten_text = (f"{ten:g} times is not reached at the sizes measured; at the growth "
                f"of the largest sizes it would be near n = "
                f"{float(f'{n_ten:.2g}'):,.0f}")
else:
    ten_text = (f"{ten:g} times is not reached at the sizes measured, and the "
                "speed-up no longer grows at the largest sizes")

# %% tags=["nbval-check-output"]
n_dense = max(cost["exact (SciPy, dense)"])
book.glue(eval_slope=eval_slope, speedup_max=speedup_max, n_max=n_max,
          speedup_slope=speedup_slope, ten_text=ten_text, n_dense=n_dense,
          dense_speedup=cost["exact (SciPy, dense)"][n_dense] / cost["MFC"][n_dense],
          prim_dense_ratio=cost["exact (SciPy, dense)"][n_dense] / prim[n_dense])
crossover_text = book.measure.describe_crossover(
    cost["MFC"], prim, "MFC", "exact implicit Prim")
book.glue("crossover_text", crossover_text)
book.claim("subquadratic", eval_slope)
book.claim(
    "faster", speedup_max,
    note=f"ours: exact Prim time / MFC time at n = {n_max}; log-log slope of the "
    f"speed-up over the three largest n: {speedup_slope:.2f}",
)

# %% [markdown]
# The evaluation count grows with slope {glue:text}`eval_slope:.2f`. In CPU time,
# {glue:text}`crossover_text`, and it is {glue:text}`speedup_max:.1f` times faster at
# $n=$ {glue:text}`n_max`, the largest size measured; the speed-up's log-log slope over
# the three largest sizes is {glue:text}`speedup_slope:.2f`, and
# {glue:text}`ten_text`. The speed-up grows more slowly than the evaluation counts
# suggest because the two methods do not pay the same for an evaluation: implicit Prim in
# numpy computes each row of distances in one vectorised call, while MFC works on many
# small blocks (one distance block and one small MST per cluster), each with its own
# fixed cost. The paper's "orders of magnitude" is measured
# against another exact baseline: the official code materialises all $\binom n2$ edges and
# runs Kruskal on them, which costs $O(n^2\log n)$ time and $O(n^2)$ memory. SciPy's dense
# MST works the same way; at $n=$ {glue:text}`n_dense`, the largest size it runs here, it
# takes {glue:text}`prim_dense_ratio:.1f` times as long as implicit Prim and
# {glue:text}`dense_speedup:.0f` times as long as MFC. Against that baseline the official
# repository's archived runs show speed-ups of 100 to 940 times on uniform synthetic
# points of 30,000, but only 1 to 16 times on its real data sets of 30,000 to 40,000.
#
# ### A specialised exact algorithm in low dimension
#
# In two dimensions, exact Euclidean MSTs need nothing like $n^2$ work: space-partitioning trees
# prune almost all pairs. mlpack's dual-tree Borůvka EMST is exact and uses that structure; MFC
# does not, because it is built for arbitrary metrics.

# %%
plane_ns = np.array([n for n in size.n_grid if n <= size.n_plane_max])
X_plane = gaussian_mixture(int(plane_ns[-1]), 2, 20, run.rng("plane-points"))
plane_kc_seed = run.seed_of("plane-k-center-start")
plane = {"MFC": {}, "exact (implicit Prim)": {}, "mlpack EMST (exact)": {}}
plane_weights = {}
for n in plane_ns:
    X = X_plane[:n]
    plane["MFC"][n], tree = timed(lambda: forest_completion_mst(X, seed=plane_kc_seed),
                                  repeats=size.repeats)
    plane["exact (implicit Prim)"][n], exact = timed(
        lambda: exact_mst(X, method="prim"), repeats=size.repeats)
    plane["mlpack EMST (exact)"][n], emst = timed(
        lambda: mlpack.emst(input_=X)["output"], repeats=size.repeats)
    plane_weights[n] = (exact.weight, emst[:, 2].sum(), tree.weight)

# %% tags=["nbval-check-output"]
agree = all(abs(w_prim - w_mlpack) <= 1e-6 * w_prim
            for w_prim, w_mlpack, _ in plane_weights.values())
print(f"mlpack's EMST weight equals the exact MST weight at every n: {agree}")

# %% tags=["hide-input", "remove-output"]
fig, ax = book.figure(height=3.2)
for (method, c), marker in zip(plane.items(), "osd"):
    ax.loglog(sorted(c), [c[n] for n in sorted(c)], marker + "-", color=COLOURS[method],
              label=method)
label_n_axis(ax, plane_ns)
ax.set_xlabel("n (2-D Gaussian mixture)")
ax.set_ylabel("CPU seconds")
fig.legend(loc="outside lower center", ncols=3)
book.show_figure(fig, "fig_plane")
n_plane = int(plane_ns[-1])
plane_ratio = plane["MFC"][n_plane] / plane["mlpack EMST (exact)"][n_plane]
book.glue(plane_ratio=plane_ratio, n_plane_max=n_plane)

# %% [markdown]
# ```{glue:figure} fig_plane
# :alt: Log-log plot of CPU seconds against n for 2-D points: exact implicit Prim the slowest and steepest, MFC in the middle, mlpack's exact dual-tree EMST the fastest at every n.
# :name: fig-15-plane
#
# **In two dimensions a specialised exact algorithm beats MFC.** CPU time against $n$ on
# a 2-D Gaussian mixture for MFC, exact implicit Prim and mlpack's dual-tree Borůvka EMST
# (exact), the least of up to {glue:text}`repeats` runs on this run's machine.
# ```
#
# At $n=$ {glue:text}`n_plane_max` in the plane ({numref}`fig-15-plane`), MFC takes
# {glue:text}`plane_ratio:.1f` times as long as mlpack's exact EMST. For vectors in the plane,
# use a specialised exact algorithm. How far up in dimension does that advice hold?
#
# ### Where forest completion wins: the dimension
#
# A tree prunes a pair of nodes when a bound on their distance says that no edge between
# them can be the next one. In low dimension the bounds are tight and almost every pair is
# skipped; as $d$ grows, distances concentrate, the bounds stop separating anything and the
# work tends to all $\binom n2$ pairs. MFC's number of evaluations hardly depends on $d$;
# only the cost of each grows, linearly. The sweep below runs the paper's Gaussian mixtures
# (20 clusters) of {glue:text}`dims_n` points in $d$ from {glue:text}`dims_first` to
# {glue:text}`dims_last` dimensions, MFC against two exact Euclidean MST libraries: mlpack's
# dual-tree Borůvka {cite}`march2010emst`, and the Borůvka stage of the hdbscan package, the
# same idea on scikit-learn's kd-tree in another implementation, with its shortcut to an
# approximate tree switched off (`icml25.metric_mst.exact_emst` calls both). Both are exact,
# so they give the weight ratio as well. Times are the least CPU time of up to
# {glue:text}`dim_repeats` runs on one thread, the three methods taking turns.

# %%
EXACT = ("mlpack EMST (exact)", "hdbscan EMST (exact)")
for library in ("mlpack", "hdbscan"):  # load each library before its clock starts
    exact_emst(np.zeros((2, 2)), library=library)
by_dim = {"MFC": {}, **{method: {} for method in EXACT}}
dim_weights = {}
dims_kc_seed = run.seed_of("dimension-k-center-start")
for d in size.dims:
    X = gaussian_mixture(size.n_dims, d, 20, run.rng(f"dimension-points-{d}"))
    seconds, results = timed_in_turn({
        "MFC": lambda: forest_completion_mst(X, seed=dims_kc_seed).weight,
        EXACT[0]: lambda: exact_emst(X, library="mlpack")[1].sum(),
        EXACT[1]: lambda: exact_emst(X, library="hdbscan")[1].sum(),
    }, repeats=size.dim_repeats)
    for method in by_dim:
        by_dim[method][d] = seconds[method]
    dim_weights[d] = tuple(results[method] for method in by_dim)

dims = np.array(size.dims)
best_exact = {d: min(by_dim[method][d] for method in EXACT) for d in dims}
time_ratio = {d: by_dim["MFC"][d] / best_exact[d] for d in dims}
weight_ratio = {d: dim_weights[d][0] / dim_weights[d][1] for d in dims}
# smallest d from which MFC beats the faster exact library at every larger d measured
cross_d = book.measure.crossover(by_dim["MFC"], best_exact)

# %% tags=["nbval-check-output"]
agree = all(abs(w_mlpack - w_hdbscan) <= 1e-9 * w_mlpack
            for _, w_mlpack, w_hdbscan in dim_weights.values())
print(f"mlpack's and hdbscan's MST weights agree at every d: {agree}")
print("  d   weight / MST (MFC)")
for d in dims:
    print(f"{d:3d}   {weight_ratio[d]:18.3f}")

# %%
print("  d   MFC (s)   mlpack (s)   hdbscan (s)   MFC / best exact")
for d in dims:
    print(f"{d:3d}   {by_dim['MFC'][d]:7.3f}   {by_dim[EXACT[0]][d]:10.3f}"
          f"   {by_dim[EXACT[1]][d]:11.3f}   {time_ratio[d]:16.2f}")

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.4)
for (method, c), marker in zip(by_dim.items(), "osd"):
    axes[0].loglog(dims, [c[d] for d in dims], marker + "-", color=COLOURS[method],
                   label=method)
axes[0].set_ylabel("CPU seconds")
axes[0].set_title(f"CPU time, n = {size.n_dims}")
axes[1].loglog(dims, [time_ratio[d] for d in dims], "o-", color=COLOURS["MFC"],
               label="MFC / best exact (labels: weight / MST)")
axes[1].axhline(1, color="grey", linestyle=":")
for d in dims:
    axes[1].annotate(f"{weight_ratio[d]:.3f}", (d, time_ratio[d]),
                     textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
axes[1].set_ylabel("MFC time / best exact time")
axes[1].set_title("below 1: MFC is faster")
low, high = axes[1].get_ylim()
axes[1].set_ylim(low, high * 2)  # room for the top label
for ax in axes:
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    if cross_d is not None:
        ax.axvline(cross_d, color="grey", linestyle="--", linewidth=0.8,
                   label=f"crossover, d = {cross_d}")
    label_n_axis(ax, dims)
    ax.set_xlabel("dimension d")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), fontsize=8)
book.show_figure(fig, "fig_dims")

# %% [markdown]
# ```{glue:figure} fig_dims
# :alt: Two log-log panels against the dimension d. Left, CPU seconds for MFC and for the exact EMSTs of mlpack and hdbscan: the exact libraries' times rise steeply with d while MFC's stay nearly flat, and the lines cross. Right, MFC's time over the faster exact library's time, falling from above 1 to below 1 as d grows, each point labelled with MFC's weight over the MST; a dashed vertical line marks the crossover dimension.
# :name: fig-15-dims
#
# **Exact tree algorithms slow down with the dimension, MFC does not: past a crossover it
# is the faster one.** Left: CPU time against $d$ on Gaussian mixtures of
# {glue:text}`dims_n` points (20 clusters), the least of up to {glue:text}`dim_repeats`
# runs.
# Right: MFC's time over that of the faster exact library, labelled with MFC's weight over
# the MST's; dashed: the crossover.
# ```

# %% [markdown]
# The claim below is not the paper's, which compares MFC with exact implicit Prim only: it
# states where a user should switch. Its threshold comes from the classical rule of thumb for
# kd-trees, which prune well only while $n \gg 2^d$: with $n$ points the tree libraries should
# lose to MFC from $d \le \log_2 n$ on. The value is the crossover dimension of this run,
# past which MFC is faster than *both* exact libraries at every $d$ of the sweep. It is read
# off the measured times: between the last $d$ where an exact library is faster and the
# next, the time ratio is taken as a power of $d$ and the value is where it crosses 1
# (`book.measure.loglog_crossing`), so that it moves with every measured time instead of
# jumping from one $d$ of the sweep to the next. Like every time it depends on the machine;
# as a timed claim it is pooled over seeds, and the tests do not compare its value.

# %% tags=["nbval-check-output"]
log2_n = float(np.log2(size.n_dims))
ratios = [time_ratio[d] for d in dims]
if cross_d is None:  # no crossover: a value past the sweep, which fails the threshold
    cross_value = 2.0 * int(dims[-1])
elif cross_d == dims[0]:  # faster everywhere: the crossover is at most the smallest d
    cross_value = float(dims[0])
else:
    cross_value = book.measure.loglog_crossing(dims, ratios, 1.0)
book.glue("dims_n", size.n_dims)
book.glue("dim_repeats", size.dim_repeats)
book.glue("dims_first", int(dims[0]))
book.glue("dims_last", int(dims[-1]))
book.glue("log2_n", log2_n)
book.glue("ratio_first_d", time_ratio[dims[0]])
book.glue("ratio_last_d", time_ratio[dims[-1]])
book.glue("speedup_last_d", 1 / time_ratio[dims[-1]])
book.glue("weight_ratio_min", min(weight_ratio.values()))
book.glue("weight_ratio_max", max(weight_ratio.values()))
book.glue("weight_ratio_first_d", weight_ratio[dims[0]])
book.glue("weight_ratio_last_d", weight_ratio[dims[-1]])
book.glue("exact_growth", best_exact[dims[-1]] / best_exact[dims[0]])
book.glue("mfc_growth", by_dim["MFC"][dims[-1]] / by_dim["MFC"][dims[0]])
if cross_d is None:
    dims_crossover_text = ("the exact libraries stay faster than MFC up to "
                           f"d = {dims[-1]}")
elif cross_d == dims[0]:
    dims_crossover_text = "MFC is faster than both exact libraries at every d measured"
else:
    below = int(dims[dims < cross_d].max())
    dims_crossover_text = (f"an exact tree library is faster up to d = {below}, "
                           f"and MFC is faster from d = {cross_d} on")
book.glue("dims_crossover_text", dims_crossover_text)
book.claim(
    "crossover-d", cross_value,
    shown={"first d of the sweep past it": cross_d if cross_d is not None
           else f"none up to d = {dims[-1]}"},
    note="ours: the crossover dimension, where the time ratio crosses 1 on a log-log "
    f"line between two d of the sweep; MFC / best exact time "
    f"{time_ratio[dims[0]]:.2g} at d = {dims[0]}, {time_ratio[dims[-1]]:.2g} at "
    f"d = {dims[-1]}",
    threshold=log2_n,
)

# %% [markdown]
# In this run {glue:text}`dims_crossover_text` ({numref}`fig-15-dims`). From
# $d=$ {glue:text}`dims_first` to {glue:text}`dims_last` the faster exact library's time grows
# {glue:text}`exact_growth:.0f`-fold, MFC's {glue:text}`mfc_growth:.1f`-fold: MFC takes
# {glue:text}`ratio_first_d:.1f` times as long as the best exact algorithm at
# $d=$ {glue:text}`dims_first` and is {glue:text}`speedup_last_d:.1f` times faster at
# $d=$ {glue:text}`dims_last`. Its trees weigh {glue:text}`weight_ratio_first_d:.3f` times
# the MST at $d=$ {glue:text}`dims_first` and {glue:text}`weight_ratio_last_d:.3f` times at
# $d=$ {glue:text}`dims_last`: the price in weight falls as the dimension grows, because
# k-center clusters of well-separated, high-dimensional Gaussians cut few edges of the optimal
# tree. The rule-of-thumb threshold is $\log_2 n=$ {glue:text}`log2_n:.1f`. Just past the
# crossover, MFC's lead over the faster library is a few tens of per cent, not much more than
# timings move between runs, so the crossover moves from seed to seed and the figure to read
# is the one pooled over seeds in the ledger. The shape does not depend on such noise: the exact libraries win by
# several times in the plane, MFC by an order of magnitude at $d=$ {glue:text}`dims_last`.
#
# ### A metric with no tree: edit distance
#
# For strings under edit distance there is no coordinate space to partition, and the exact
# alternative to MFC is the paper's own baseline: implicit Prim over all $\binom n2$ pairs.
# Section 1 ran both on the synthetic strings; the table puts their cost side by side
# (MFC's time the least CPU time of up to {glue:text}`repeats` runs, exact Prim's one run).

# %%
strings_row = next(r for r in rows if r["name"].startswith("strings"))
(mfc_evals, exact_evals), (t_mfc_str, t_exact_str) = (strings_row["evaluations"],
                                                      strings_row["seconds"])
w_mfc_str, w_exact_str = strings_row["weights"]
print(f"edit distance, n = {strings_row['n']} strings")
print("method                  distance evaluations   share of C(n,2)   seconds"
      "   weight / MST")
for method, evals, seconds, weight in (
        ("MFC (k-center forest)", mfc_evals, t_mfc_str, w_mfc_str),
        ("exact (implicit Prim)", exact_evals, t_exact_str, w_exact_str)):
    print(f"{method:22s}  {evals:20d}   {evals / exact_evals:15.1%}   {seconds:7.2f}"
          f"   {weight / w_exact_str:12.3f}")
book.glue(str_n=strings_row["n"], str_share=mfc_evals / exact_evals,
          str_speedup=t_exact_str / t_mfc_str, str_ratio=w_mfc_str / w_exact_str)

# %% [markdown]
# MFC evaluates {glue:text}`str_share:.1%` of the distances between the
# {glue:text}`str_n` strings, runs {glue:text}`str_speedup:.1f` times faster than exact
# implicit Prim and returns a tree {glue:text}`str_ratio:.3f` times as heavy as the MST. The
# official repository's archived runs on 30,000 US names show no speed-up over exact Prim for
# edit distance (0.9 to 1.1 times), against 1.5 to 16 times for its other metrics. Here, on
# short synthetic strings, the saving in evaluations does turn into time; why the paper's runs
# on names differ is not tested here.
#
# ### When should I use MFC?
#
# From what this chapter measured:
#
# * **Euclidean vectors in low dimension:** use an exact tree-based EMST (mlpack's `emst`, or
#   hdbscan's Borůvka). It is exact and, in this run, {glue:text}`dims_crossover_text`.
# * **Euclidean vectors in higher dimension:** MFC, when a tree a few per cent heavier than
#   the MST will do (here {glue:text}`weight_ratio_min:.3f` to
#   {glue:text}`weight_ratio_max:.3f` times its weight across the dimensions): it is
#   {glue:text}`speedup_last_d:.1f` times faster than the best exact library at
#   $d=$ {glue:text}`dims_last`, and its cost barely moves with $d$.
# * **Metrics without a tree** (edit distance, Jaccard, a learned distance): MFC. The exact
#   alternative evaluates every pair; MFC evaluated {glue:text}`str_share:.1%` of them on the
#   strings, and its evaluation count grows with slope {glue:text}`eval_slope:.2f` in $n$
#   instead of 2.
# * **Not** when the answer must be the exact tree, or when its heaviest edges decide the
#   result: a single-linkage cut uses exactly the edges where an approximate tree differs from
#   the optimum (section 4).
#
# ## 4. Use: single-linkage clustering from the approximate tree
#
# Cutting the $k-1$ heaviest edges of an MST gives the single-linkage clustering into $k$ clusters.
# How close is the clustering from the approximate tree to SciPy's exact single linkage? The
# adjusted Rand index (ARI) is 1 for identical partitions.

# %%
X_link = gaussian_mixture(size.n_sweep, 32, 8, run.rng("linkage-points"))
tree_link = forest_completion_mst(X_link, seed=run.seed_of("linkage-k-center-start"))
scipy_link = linkage(X_link, method="single")
aris = {}
for k in (2, 4, 8, 16):
    aris[k] = adjusted_rand_score(cut_tree(tree_link, k),
                                  fcluster(scipy_link, k, "maxclust"))

# %% tags=["nbval-check-output"]
for k, ari in aris.items():
    print(f"k = {k:2d} clusters: "
          f"ARI(MFC single linkage, SciPy single linkage) = {ari:.3f}")

# %% [markdown]
# Single linkage cuts the *heaviest* edges, exactly where an approximate tree differs from the
# optimum (completion edges can be longer than the optimal inter-cluster edges), so a small weight
# excess can move a cut; the table shows by how much on this data.
#
# ## What differs from the paper, and why
#
# * **Scale and language.** The quality tables use a few thousand points and the cost
#   section up to {glue:text}`n_max`, where the paper has 20,000 to 40,000, and numpy
#   instead of C++. Exact implicit Prim in numpy is vectorised over each row, so the
#   speed-ups are smaller than a scalar loop would suggest; the evaluation counts do not
#   depend on any of this.
# * **Data.** The paper's real data sets (FashionMNIST, recipes, baskets, gene sequences, US names)
#   are not available offline; digits and synthetic strings stand in.
# * **Clusters.** $t = \lceil\sqrt n\rceil$ throughout, except in the table of k-center
#   starts, which sweeps the paper's $t$ from 16 to 256 on data sets ten to twenty times
#   smaller than the paper's.
#
# ## Exercises
#
# ```{exercise} Sweeping the number of clusters
# :label: ex-mst-sweep-t
#
# **Level:** easy · **Time:** about 15 minutes.
#
# For the Gaussian mixture of section 1, sweep $t$ over $\{4, 16, 64, 256\}$ and plot the weight
# ratio and the evaluated share against $t$. Which trade-off do you see, and why does a larger $t$
# make the tree worse?
# ```
#
# ```{solution-start} ex-mst-sweep-t
# :class: dropdown
# ```
#
# The cell builds the tree for each $t$ on the mixture of section 1 and prints the two
# curves as a table (plot them with `ax.semilogx`), with $\gamma$ beside them.

# %%
exact_blobs = rows[0]["exact"]  # exact implicit Prim, section 1
pairs_blobs = size.n_blobs * (size.n_blobs - 1) / 2
sweep_t = {}
sweep_t_seed = run.seed_of("sweep-t-k-center-start")
for t in (4, 16, 64, 256):
    tree_t = forest_completion_mst(blobs, n_clusters=t, seed=sweep_t_seed)
    sweep_t[t] = (tree_t.weight / exact_blobs.weight, tree_t.evaluations / pairs_blobs,
                  overlap_gamma(tree_t, exact_blobs))
print("   t   weight / MST   evaluated share   gamma")
for t, (ratio_t, share_t, gamma_t) in sweep_t.items():
    print(f"{t:4d}   {ratio_t:12.4f}   {share_t:15.1%}   {gamma_t:5.3f}")
best_t = min(sweep_t, key=lambda t: sweep_t[t][1])
book.glue(ex_sweep_best_t=best_t, ex_sweep_ratio_4=sweep_t[4][0],
          ex_sweep_ratio_256=sweep_t[256][0])

# %% [markdown]
# The weight ratio goes from {glue:text}`ex_sweep_ratio_4:.4f` at $t=4$ to
# {glue:text}`ex_sweep_ratio_256:.4f` at $t=256$, while the share of evaluated pairs is
# smallest at $t=$ {glue:text}`ex_sweep_best_t` among the four. More clusters mean smaller
# exact MSTs (fewer evaluations inside clusters) but more completion edges chosen through
# representatives only, each possibly longer than the optimal connection, and more optimal
# edges cut by cluster borders; the evaluations first fall, then rise as the $2nt$ term takes
# over.
#
# ```{solution-end}
# ```
#
# ```{exercise} A kNN forest
# :label: ex-mst-knn
#
# **Level:** medium · **Time:** about 20 minutes.
#
# Replace k-center by another heuristic: the connected components of a $k$-nearest-neighbour
# graph (`sklearn.neighbors.kneighbors_graph` with small $k$). Pass its component labels as
# `components=`. How do $\gamma$ and the weight ratio compare with k-center's?
# ```
#
# ```{solution-start} ex-mst-knn
# :class: dropdown
# ```
#
# Label the points with `scipy.sparse.csgraph.connected_components` of the kNN graph and
# pass the labels as the forest. The kNN graph itself costs distance evaluations: all
# $\binom n2$ of them when computed naively, as here, so the evaluated share of the forest
# step is only a lower bound on the cost of this heuristic.

# %%
import math

from scipy.sparse.csgraph import connected_components
from sklearn.neighbors import kneighbors_graph

print("forest          parts   gamma   weight / MST   evaluated share (MFC only)")
t_blobs = math.ceil(math.sqrt(size.n_blobs))
print(f"k-center        {t_blobs:5d}   {rows[0]['gamma']:5.3f}"
      f"   {rows[0]['ratio']:12.4f}   {rows[0]['share']:10.1%}")
knn_rows = {}
for k in (1, 2, 4):
    graph = kneighbors_graph(blobs, k)
    n_comp, knn_parts = connected_components(graph, directed=False)
    knn_tree = forest_completion_mst(blobs, components=knn_parts)
    knn_rows[k] = (n_comp, overlap_gamma(knn_tree, exact_blobs),
                   knn_tree.weight / exact_blobs.weight,
                   knn_tree.evaluations / pairs_blobs)
    print(f"kNN, k = {k}      {n_comp:5d}   {knn_rows[k][1]:5.3f}"
          f"   {knn_rows[k][2]:12.4f}   {knn_rows[k][3]:10.1%}")
book.glue(ex_knn_gamma_2=knn_rows[2][1], ex_knn_ratio_2=knn_rows[2][2],
          ex_knn_parts_2=knn_rows[2][0], ex_kc_gamma=rows[0]["gamma"],
          ex_kc_ratio=rows[0]["ratio"])

# %% [markdown]
# With $k=2$ the kNN graph has {glue:text}`ex_knn_parts_2` components; their forest has
# $\gamma=$ {glue:text}`ex_knn_gamma_2:.3f` and the tree weighs
# {glue:text}`ex_knn_ratio_2:.4f` times the MST, against $\gamma=$
# {glue:text}`ex_kc_gamma:.3f` and {glue:text}`ex_kc_ratio:.4f` for k-center. With
# distinct distances every point's nearest-neighbour edge belongs to the MST, so the
# components of the 1-NN graph are pieces of the optimal tree and their forest has
# $\gamma=1$ (first row); larger $k$ merges them into fewer, larger components that follow
# dense regions. The price is the kNN graph itself, which this comparison does not count.
#
# ```{solution-end}
# ```
#
# ```{exercise} How close do instances come to the 2.62 bound?
# :label: ex-mst-phi
#
# **Level:** hard · **Time:** about 30 minutes.
#
# The completion step's worst-case factor is $2.62 \approx (3+\sqrt5)/2 = \varphi^2$, the
# square of the golden ratio; the paper proves it, and this chapter does not re-derive it.
# **Predict first:** on random small metrics, how close to the bound does the completion
# ratio get? Then search for the worst ratio you can find with the test suite's strategy
# (points on a line under $|x-y|$), and say what a worse instance would need.
# ```
#
# ```{solution-start} ex-mst-phi
# :class: dropdown
# ```
#
# The cell draws random instances as the test suite does (2 to 12 points on a line, a random
# number of k-center clusters), keeps the worst completion ratio, then climbs from the worst:
# it moves one point at a time and keeps a move when the ratio grows.

# %%
phi_rng = run.rng("phi-exercise")


def line_ratio(x, t, k_seed):
    pts = x[:, None]
    return mfc_ratio(forest_completion_mst(pts, n_clusters=t, seed=k_seed), pts)


worst = (0.0, None)
for _ in range(400):
    n_line = int(phi_rng.integers(2, 13))
    x = phi_rng.uniform(0, 10, n_line)
    t, k_seed = int(phi_rng.integers(1, n_line + 1)), int(phi_rng.integers(10_000))
    ratio = line_ratio(x, t, k_seed)
    if ratio > worst[0]:
        worst = (ratio, (x, t, k_seed))
random_worst = worst[0]
ratio, (x, t, k_seed) = worst
for _ in range(600):
    trial = x.copy()
    trial[phi_rng.integers(len(x))] += phi_rng.normal(0, 0.5)
    trial_ratio = line_ratio(trial, t, k_seed)
    if trial_ratio > ratio:
        ratio, x = trial_ratio, trial
print(f"worst of 400 random instances: {random_worst:.3f}")
print(f"after the climb: {ratio:.3f} ({len(x)} points, t = {t}); "
      f"phi^2 = {(3 + np.sqrt(5)) / 2:.3f}")
book.glue(ex_phi_random=random_worst, ex_phi_climb=ratio)

# %% [markdown]
# Random instances stay well below the bound (worst {glue:text}`ex_phi_random:.3f`), as the
# completion ratios of section 1 do; the climb reaches {glue:text}`ex_phi_climb:.3f`. A
# worst case needs an adversarial construction: representatives at the far ends of their
# components, so that every candidate edge through a representative is much longer than the
# closest pair, while the forest's own edges, which the ratio also counts, stay light. On a
# line the triangle inequality is tight along every path, which leaves the adversary little
# room; the chapter does not test whether 2.62 is tight.
#
# ```{solution-end}
# ```

# %%
book.finish()
