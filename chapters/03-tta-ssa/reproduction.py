# %% [markdown]
# # Reproduction: continual adaptation, error accumulation, and SSA's step rule
#
# > Through extensive experiments, we demonstrate that SSA consistently improves state-of-the-art
# > methods in various TTA scenarios, datasets, and model architectures, establishing its
# > effectiveness in instability and adaptability. (Lee, 2025, abstract)

# %% [markdown]
# :::{admonition} Results at a glance
# :class: tip
# ```{glue:md} results_at_a_glance
# :format: myst
# ```
# :::

# %% [markdown]
# The paper's experiments adapt ResNets on continual ImageNet-C and similar benchmarks. Ours adapt a
# 14k-parameter CNN to a continual stream of eight corruptions of 16x16 digits, repeated for several
# rounds, with the methods of [the method notebook](method.ipynb), all predicting before they
# update, on the same stream and the same source model per seed:
#
# * **Source** (no adaptation) and **BN stats** (test-batch normalisation statistics);
# * **TENT**, entropy minimisation of the BatchNorm affine parameters;
# * **ROID**, its certainty- and diversity-weighted loss with weight ensembling toward the source;
# * **CMF**, the ROID loss with the dual filter, the base method that SSA extends in the author's
#   code;
# * **SSA**, CMF with the steady-state step rule ($S$ relative to the first full buffer).
#
# All gradient methods use SGD with Nesterov momentum 0.9, as the author's configurations. No TTA
# library on PyPI covers these methods for classification (the reference zoo the author's code
# forks is not on PyPI, and `ttadapters` targets detection and segmentation data sets), so the
# baselines are ours, written from their papers and the author's code.
#
# **Reproducing these figures.** The source models are trained and adapted in torch on
# the CPU, and their figures move across CPUs (same seeds, other floating-point sums):
# a re-execution elsewhere moved TENT's error growth by about two points. The verdicts
# must match exactly; the tests let the error figures move by 0.03, the ratios by 0.05.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy import stats

from icml25 import book, tta

SIZES = {
    # epochs: the source model's training; jobs: processes for the independent runs (one
    # process in quick mode, where starting a second costs more than it saves)
    "quick": dict(seeds=1, rounds=1, hot_seeds=1, hot_rounds=2, domains=4,
                  epochs=5, jobs=1),
    "book": dict(seeds=3, rounds=3, hot_seeds=2, hot_rounds=4, domains=8,
                 epochs=15, jobs=2),
    "paper": dict(seeds=5, rounds=6, hot_seeds=5, hot_rounds=10, domains=8,
                  epochs=15, jobs=2),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
LR, HOT_LR = 5e-3, 5e-2
ERROR_ATOL, RATIO_ATOL = 0.03, 0.05  # how far trained-model figures move across CPUs
METHODS = {
    "Source": lambda m, lr: tta.Source(m),
    "BN stats": lambda m, lr: tta.BNStats(m),
    "TENT": lambda m, lr: tta.Tent(m, lr=lr),
    "ROID": lambda m, lr: tta.ROID(m, lr=lr),
    "CMF": lambda m, lr: tta.CMF(m, lr=lr),
    "SSA": lambda m, lr: tta.SSA(m, lr=lr),
}
GRADIENT = ["TENT", "ROID", "CMF", "SSA"]
COLOURS = {  # one colour per method in every figure of the chapter
    "Source": "#999999", "BN stats": book.PALETTE[5], "TENT": book.PALETTE[2],
    "ROID": book.PALETTE[1], "ROID loss, no filter": book.PALETTE[4],
    "CMF": book.PALETTE[0], "SSA": book.PALETTE[3],
}

JOBS = size.jobs  # independent runs in separate processes: identical results


def make_world(s):
    """Seed s's source model and corrupted stream (its own split and source)."""
    x_train, y_train, x_test, y_test = tta.load_digits16(s)
    return (tta.train_source(x_train, y_train, epochs=size.epochs, seed=s),
            tta.make_stream(x_test, y_test, tta.DEFAULT_DOMAINS[: size.domains],
                            severity=5, seed=s))


world_seeds = range(seed, seed + max(size.seeds, size.hot_seeds))
worlds = dict(zip(world_seeds, Parallel(n_jobs=JOBS)(
    delayed(make_world)(s) for s in world_seeds)))


def run_all(names, lr, seeds, rounds, **kw):
    """{(name, seed): StreamResult} for every method and seed, on the seed's world."""
    return tta.run_streams(
        {(name, s): (partial(METHODS[name], worlds[s][0], lr), worlds[s][1],
                     dict(rounds=rounds, seed=s, **kw))
         for name in names for s in seeds}, n_jobs=JOBS)


def t_interval(values):
    """Mean and 95% t-interval half-width over seeds (nan with one seed)."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return values.mean(), np.nan
    t = stats.t.ppf(0.975, len(values) - 1)
    return values.mean(), t * values.std(ddof=1) / np.sqrt(len(values))


# %% [markdown]
# ## 1. The continual stream at the default learning rate
#
# {glue:text}`seeds` seeds (each with its own split, source model and batch order), {glue:text}`rounds`
# rounds over the {glue:text}`n_domains` domains at severity 5, batches of 32, learning rate
# {glue:text}`lr` (quick mode runs the first four domains only).
# Mean error over all domains and rounds, with a 95% t-interval over seeds, and the mean
# error of the last round; {numref}`fig-03-domains` breaks the error down by domain.

# %%
book.glue("seeds", size.seeds)
book.glue("n_domains", size.domains)
book.glue("rounds", size.rounds)
book.glue("lr", LR)
seeds = list(range(seed, seed + size.seeds))
main = run_all(METHODS, LR, seeds, size.rounds)


def summary(results, names, seeds):
    rows = []
    for name in names:
        mean, half = t_interval([results[(name, s)].mean_error for s in seeds])
        last, _ = t_interval([results[(name, s)].errors[-1].mean() for s in seeds])
        n_rounds = results[(name, seeds[0])].errors.shape[0]
        seconds = np.mean([results[(name, s)].seconds for s in seeds])
        rows.append(dict(method=name, error=mean, ci95=half, last_round=last,
                         seconds_per_round=seconds / n_rounds))
    return pd.DataFrame(rows).set_index("method")


table = summary(main, METHODS, seeds)
table[["error", "ci95", "last_round"]].round(3)

# %% tags=["hide-input", "remove-output"]
fig, ax = book.figure(height=3.4)
domains = [d.name.replace("_", "\n") for d in worlds[seed][1]]
width = 0.8 / len(METHODS)
for i, name in enumerate(METHODS):
    by_seed = np.array([main[(name, s)].errors.mean(axis=0) for s in seeds])
    mean = by_seed.mean(axis=0)
    spread = [mean - by_seed.min(axis=0), by_seed.max(axis=0) - mean]
    ax.bar(np.arange(len(domains)) + (i - len(METHODS) / 2 + 0.5) * width, mean, width,
           yerr=spread, error_kw=dict(lw=0.8, capsize=1.5), label=name,
           color=COLOURS[name], edgecolor="white", linewidth=0.3)
ax.set_xticks(np.arange(len(domains)), domains, fontsize=8)
ax.set_ylabel("error (mean over rounds)")
ax.set_title("error by domain")
fig.legend(loc="outside lower center", ncols=len(METHODS))
book.show_figure(fig, "fig_domains")

# %% [markdown]
# ```{glue:figure} fig_domains
# :alt: Grouped bar chart of the error on each corruption domain for six methods. The grey Source bars are far higher than all others on every domain; the five adapting methods have bars of nearly equal height within each domain.
# :name: fig-03-domains
#
# **Re-estimating the BatchNorm statistics removes most of the error; the weight updates
# add little on top.** Error per domain of the continual stream at learning rate
# {glue:text}`lr`, for each method: bars, the mean over seeds (each seed's error averaged
# over the rounds); whiskers, the range over seeds.
# ```

# %% tags=["nbval-check-output"]
diff = [main[("SSA", s)].mean_error - main[("CMF", s)].mean_error for s in seeds]
gain, half = t_interval(diff)
book.glue("ssa_gain", gain)
book.claim(
    "ssa-improves-cmf",
    f"SSA lowers CMF's error on the continual stream (lr {LR}): 95% interval of the "
    "difference below zero",
    gain, "<", 0.0,
    interval=(gain - half, gain + half) if np.isfinite(half) else None,
    atol=ERROR_ATOL,
    digits=3,
    paper="SSA consistently improves state-of-the-art methods (continual ImageNet-C "
    "and others)",
    note=f"ours: mean SSA - CMF error over {len(seeds)} seeds, with its 95% t-interval",
)

# %% [markdown]
# At this learning rate all adaptation methods sit within a few points of each other, and almost
# all of the gain over the source model comes from the BatchNorm statistics alone; SSA minus CMF
# is {glue:text}`ssa_gain:+.3f`. There is little weight degradation here for a filter to repair.
#
# ## 2. A hotter regime, where the noise accumulates
#
# Ten times the learning rate ({glue:text}`hot_lr`), {glue:text}`hot_rounds` rounds,
# {glue:text}`hot_seeds` seeds, and one more method: the ROID loss **without** any weight filter,
# to separate what the loss does from what the filters do. {numref}`fig-03-hot` follows
# the error round by round and the weights' distance from the source step by step.

# %%
book.glue("hot_lr", HOT_LR)
book.glue("hot_rounds", size.hot_rounds)
book.glue("hot_seeds", size.hot_seeds)
METHODS["ROID loss, no filter"] = lambda m, lr: tta.ROID(m, lr=lr, kappa_src=0.0)
hot_seeds = list(range(seed, seed + size.hot_seeds))
hot_names = ["TENT", "ROID loss, no filter", "ROID", "CMF", "SSA"]
hot = run_all(hot_names, HOT_LR, hot_seeds, size.hot_rounds)
hot_table = summary(hot, hot_names, hot_seeds)
hot_table[["error", "ci95", "last_round"]].round(3)

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.4)
for name in hot_names:
    per_round = np.mean([hot[(name, s)].errors.mean(axis=1) for s in hot_seeds], axis=0)
    axes[0].plot(np.arange(1, len(per_round) + 1), per_round, "o-", label=name,
                 color=COLOURS[name])
    drift = hot[(name, seed)].history["drift"]
    axes[1].plot(drift, color=COLOURS[name], lw=1.2)
axes[0].set_xlabel("round")
axes[0].set_xticks(np.arange(1, size.hot_rounds + 1))
axes[0].set_ylabel("error (mean over domains)")
axes[0].set_title("error per round, mean over seeds")
axes[1].set_xlabel("adaptation step")
axes[1].set_ylabel("drift $\\|\\theta_t-\\theta_{src}\\|$")
axes[1].set_title(f"distance from the source weights (seed {seed})")
fig.legend(loc="outside lower center", ncols=len(hot_names))
book.show_figure(fig, "fig_hot")

# %% [markdown]
# ```{glue:figure} fig_hot
# :alt: Two line plots for five methods at the high learning rate: TENT, the ROID loss without a filter, ROID, CMF and SSA. Left, the error in each round of the stream, one point per round; right, the distance of each method's adapted weights from the source weights over the adaptation steps, lowest for TENT and ROID.
# :name: fig-03-hot
#
# **At ten times the learning rate the adapted weights drift far from the source, and
# the weight filters slow the drift.** Left: error per round, averaged over the domains
# and over {glue:text}`hot_seeds` seeds, at learning rate {glue:text}`hot_lr`. Right: the
# Euclidean distance of the adapted parameters from the source model's at every
# adaptation step, for seed {glue:text}`seed`.
# ```

# %% tags=["nbval-check-output"]
tent_growth = np.mean([hot[("TENT", s)].errors[-1].mean()
                       - hot[("TENT", s)].errors[0].mean() for s in hot_seeds])


def final_drift_ratio(name):
    return np.mean([hot[(name, s)].history["drift"][-1]
                    / hot[("ROID loss, no filter", s)].history["drift"][-1]
                    for s in hot_seeds])


drift_ratio = final_drift_ratio("CMF")
book.glue("roid_drift_ratio", final_drift_ratio("ROID"))
hot_diff = [hot[("SSA", s)].mean_error - hot[("CMF", s)].mean_error for s in hot_seeds]
hot_gain, hot_half = t_interval(hot_diff)
book.glue("tent_growth", tent_growth)
book.glue("drift_ratio", drift_ratio)
book.glue("hot_gain", hot_gain)
book.claim(
    "error-accumulates",
    f"at lr {HOT_LR}, TENT's error grows from the first round to the last (error "
    "accumulation)",
    tent_growth, ">", 0.0,
    atol=ERROR_ATOL,
    paper="unsupervised gradient noise degrades the weights in continual TTA",
    note="ours: last-round minus first-round error, mean over seeds",
)
book.claim(
    "filters-bound-drift",
    "on the same loss, CMF's filter keeps the final drift below half the unfiltered "
    "drift",
    drift_ratio, "<", 0.5,
    atol=RATIO_ATOL,
    paper="weight-based methods (filters) mitigate weight degradation",
    note="ours: final ||theta - theta_src||, CMF / ROID loss without filter",
)
book.claim(
    "ssa-improves-cmf-hot",
    f"SSA lowers CMF's error at lr {HOT_LR} (mean difference below zero)",
    hot_gain, "<", 0.0,
    interval=((hot_gain - hot_half, hot_gain + hot_half) if np.isfinite(hot_half)
              else None),
    atol=ERROR_ATOL,
    digits=3,
    paper="SSA improves stability and adaptability in dynamic environments",
    note=f"ours: mean SSA - CMF error over {len(hot_seeds)} seeds, with its 95% "
    "t-interval",
)

# %% [markdown]
# In this run TENT's error changes by {glue:text}`tent_growth:+.3f` from the first round to the
# last, the accumulation the paper is about, at toy scale. It grows in every seed of the record
# (the box above gives in how many of five seeds the claim holds), but by amounts that vary
# more between seeds than their mean, nearly zero in one: this scale shows the direction of
# the effect, not its size.
# The weight filters hold the weights back, ROID's
# direct pull toward the source more than CMF's dual filter (final drift {glue:text}`roid_drift_ratio:.2f`
# and {glue:text}`drift_ratio:.2f` times that of the same loss without a filter: CMF's pull is the
# weaker one, and our threshold of one half was not met), but the ROID loss itself does harm at
# this learning rate, and TENT, whose entropy gradients are much smaller, drifts least of all. SSA minus CMF is {glue:text}`hot_gain:+.3f`:
# with $S$ relative to the first full buffer, which falls in the noisy start of the first domain,
# the later steps are larger than 1 and SSA adapts *faster* than CMF rather than more cautiously.
#
# ## 3. The mechanics of the step rule
#
# SSA's per-step record from the hot run (seed {glue:text}`seed`): the buffer's standard deviation,
# the step $s_t$ with the switch to the steady state ({numref}`fig-03-ssa-steps`), and a
# check of the fixed point. Because the
# buffer stores the rescaled values, the rule settles where $\eta\,s_t^2\,\text{std}(g)\approx\sqrt S$
# (not $\eta\,s_t\,\text{std}(g)$, as a first reading of the formula suggests).

# %%
book.glue("seed", seed)
history = hot[("SSA", seed)].history
rule = hot[("SSA", seed)].adapter.rule
switch = int(np.argmax(history["steady"])) if history["steady"].any() else None
after = slice(switch, None) if switch is not None else slice(0, 0)
# By construction eta * s_t * std(buffer) = sqrt(S) (the buffer holds s*g); the
# non-trivial fixed point is in terms of the raw updates' noise:
# eta * s^2 * std(g) = sqrt(S).
std_g = pd.Series(history["g"]).rolling(rule.buffer_size).std(ddof=0).to_numpy()
balance = (np.nanmedian(HOT_LR * history["step"][after] ** 2 * std_g[after])
           / np.sqrt(rule.S))
book.glue("switch", switch if switch is not None else -1)
book.glue("balance", balance)
book.glue("median_step", np.median(history["step"][after]))

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.4)
ssa_run = hot[("SSA", seed)]
round_starts = np.flatnonzero(np.diff(ssa_run.step_round)) + 1
domain_starts = np.concatenate([[0], np.flatnonzero(np.diff(ssa_run.step_domain)) + 1,
                                [len(ssa_run.step_domain)]])
for ax in axes:
    for lo, hi in zip(domain_starts[::2], domain_starts[1::2]):  # every other domain
        ax.axvspan(lo, hi, color="grey", alpha=0.12, lw=0)
    for b in round_starts:
        ax.axvline(b, color="grey", lw=1.2)
    if switch is not None:
        ax.axvline(switch, color="black", ls="--", lw=1)
    ax.set_xlabel("adaptation step")
axes[0].plot(np.sqrt(history["var"]), color="black", lw=1.2)
axes[0].set_ylabel("std of the buffer of $s_t g_t$")
axes[0].set_title("the noise, as the buffer sees it")
axes[1].plot(history["step"], color=COLOURS["SSA"])
axes[1].axhline(1, color="black", lw=0.6)
axes[1].set_ylabel("step $s_t$")
axes[1].set_title("SSA's step")
handles = [
    plt.Rectangle((0, 0), 1, 1, color="grey", alpha=0.25, label="every other domain"),
    plt.Line2D([], [], color="grey", lw=1.2, label="start of a round"),
    plt.Line2D([], [], color="black", ls="--", lw=1, label="switch to steady state"),
]
fig.legend(handles=handles, loc="outside lower center", ncols=3)
book.show_figure(fig, "fig_ssa_steps")

# %% [markdown]
# ```{glue:figure} fig_ssa_steps
# :alt: Two line plots over the adaptation steps of SSA's hot run, with alternate domains shaded and vertical lines at the start of each round and at the switch to the steady state. Left, the standard deviation of SSA's buffer; right, SSA's step size, constant at 1 before the switch and then varying above and below 1.
# :name: fig-03-ssa-steps
#
# **After the switch to the steady state, SSA's step moves against the buffer's noise.**
# SSA's record in the hot run (learning rate {glue:text}`hot_lr`, seed
# {glue:text}`seed`). Left: the standard deviation over the buffer of the last rescaled
# updates $s_t g_t$; right: the step $s_t$ (1 before the switch). Shading marks every
# other domain of the stream, solid lines the start of each round.
# ```

# %% tags=["nbval-check-output"]
book.claim(
    "steady-balance",
    "after the switch, SSA holds lr * step^2 * std(g) within 20% of sqrt(S) (median)",
    balance, "in", (0.8, 1.2),
    atol=RATIO_ATOL,
    paper="SSA balances covariance dynamics: a steady state of the SDE model of TTA",
    note="ours: median ratio to sqrt(S) after the switch, hot run",
)

# %% [markdown]
# The switch comes at step {glue:text}`switch`, as soon as the buffer is full; afterwards the median
# step is {glue:text}`median_step:.2f` and the fixed point holds to a ratio of
# {glue:text}`balance:.2f`. The step follows the noise as designed; the question is only whether a
# step that follows the noise this way helps, and at our scale it does not.
#
# ## 4. How sensitive is SSA to $S$?
#
# The same stream at the default learning rate, seed {glue:text}`seed`, with $S$ at a quarter and
# four times the relative default, and with the author's absolute $S=10^{-12}$ (tuned to a
# ResNet-50 at learning rate $2.5\cdot10^{-4}$):

# %%
variants = {
    "SSA, S_rel = 0.25": lambda m: tta.SSA(m, lr=LR, S_rel=0.25),
    "SSA, S_rel = 4": lambda m: tta.SSA(m, lr=LR, S_rel=4.0),
    "SSA, S = 1e-12 (author's)": lambda m: tta.SSA(m, lr=LR, S=1e-12),
}
model, stream = worlds[seed]
sweep = tta.run_streams({name: (partial(make, model), stream,
                                dict(rounds=size.rounds, seed=seed))
                         for name, make in variants.items()}, n_jobs=JOBS)
# the same runs as section 1:
sweep |= {"SSA, S_rel = 1": main[("SSA", seed)], "CMF": main[("CMF", seed)]}
pd.DataFrame({name: dict(error=r.mean_error, final_drift=r.history["drift"][-1],
                         median_step=(np.median(r.history["step"])
                                      if "step" in r.history else 1.0))
              for name, r in sweep.items()}).T.round(3)

# %% [markdown]
# The author's absolute $S$ freezes the weights at the switch (a median step of a few
# thousandths): SSA then behaves like BN-statistics adaptation with the weights it had after one
# buffer. The relative settings move the error by about half a point on either side of CMF's, in
# the order of their median steps (smaller steps, less adaptation, here slightly better); one seed
# cannot separate them, and none is a clear optimum.
#
# ## What this reproduces, and what it cannot
#
# * The setting the paper is about appears at toy scale, but only in part: at a high learning
#   rate weight filters hold the weights near the source, and entropy minimisation's error
#   grows over the rounds, but by little and by amounts that vary widely between seeds.
# * SSA's rule behaves as its formula says (its step follows the update noise to a fixed point),
#   but it does **not** improve CMF here: its error is above CMF's in every seed of the
#   record, by a fraction of a point at the default learning rate (within the noise of three
#   seeds in all but one) and by several points at the hot one. The paper's gains are measured
#   on ResNets over ImageNet-scale streams, with an absolute $S$ tuned there; our
#   relative $S$ is a necessary change of ours, and the toy has little weight
#   degradation left once BatchNorm statistics are adapted.
# * Left out: ROID's augmentation-consistency term and prior correction, and the original CMF's
#   Kalman-gain filter (our CMF is SSA with the step fixed at 1).
#
# ## Exercises
#
# ```{exercise} A non-i.i.d. stream
# :label: ex-tta-classorder
#
# **Level:** medium · **Time:** about 20 minutes.
#
# Run BN stats and TENT with `run_stream(..., order="class")`, which sorts every domain's images by
# class. What happens to the error, and why does this break BatchNorm-statistics adaptation itself?
# ```
#
# ```{solution-start} ex-tta-classorder
# :class: dropdown
# ```
#
# One pass over seed {glue:text}`seed`'s stream, each domain's images sorted by class, against
# the first round of section 1 (random order, the same stream):

# %%
ordered = tta.run_streams(
    {name: (partial(METHODS[name], worlds[seed][0], LR), worlds[seed][1],
            dict(rounds=1, seed=seed, order="class"))
     for name in ("Source", "BN stats", "TENT")}, n_jobs=JOBS)
order_table = pd.DataFrame({
    name: {"random order (section 1, round 1)": main[(name, seed)].errors[0].mean(),
           "sorted by class": r.mean_error}
    for name, r in ordered.items()}).T
book.glue("ex_order_bn", order_table.loc["BN stats", "sorted by class"])
book.glue("ex_order_bn_random", order_table.loc["BN stats",
                                                "random order (section 1, round 1)"])
book.glue("ex_order_source", order_table.loc["Source", "sorted by class"])
order_table.round(3)


# %% [markdown]
# Sorted by class, BN-statistics adaptation errs on {glue:text}`ex_order_bn:.1%` of the
# images, against {glue:text}`ex_order_bn_random:.1%` in random order and
# {glue:text}`ex_order_source:.1%` for the frozen source model, which does not care about
# the order. A batch of one class has the statistics of that class, not of the domain, so
# normalising by them removes exactly the information that separates the classes. Any
# method built on test-batch statistics fails this way, whatever its weight filter; TTA
# methods for such streams mix source and batch statistics, or keep a memory of past
# batches balanced over the predicted classes.
#
# ```{solution-end}
# ```
#
# ```{exercise} SSA on TENT
# :label: ex-tta-ssa-tent
#
# **Level:** hard · **Time:** about 40 minutes.
#
# The author's code also runs SSA on the TENT loss (with the steady state taken at once). Build it
# by subclassing `tta.SSA` with TENT's `loss`, and compare it with TENT in the hot regime.
# ```
#
# ```{solution-start} ex-tta-ssa-tent
# :class: dropdown
# ```
#
# SSA is CMF's filter with the step rule; only the loss changes. The hot regime of section 2,
# seed {glue:text}`seed`, the first {glue:text}`ex_rounds` rounds:

# %%
class SSATent(tta.SSA):
    """SSA's step rule and dual filter on TENT's entropy loss."""

    name = "SSA on TENT"

    def loss(self, logits):
        return tta.Tent.loss(self, logits)


EX_ROUNDS = min(2, size.hot_rounds)
ssa_tent = tta.run_stream(lambda: SSATent(worlds[seed][0], lr=HOT_LR), worlds[seed][1],
                          rounds=EX_ROUNDS, seed=seed)
tent_hot = hot[("TENT", seed)]
steps_done = len(ssa_tent.history["drift"])
def round_errors(result):
    """{'error, round r': mean error of round r} for the first EX_ROUNDS rounds."""
    return {f"error, round {r + 1}": result.errors[r].mean() for r in range(EX_ROUNDS)}


tent_table = pd.DataFrame({
    "TENT (section 2)": {**round_errors(tent_hot),
                         "drift at the end": tent_hot.history["drift"][steps_done - 1]},
    "SSA on TENT": {**round_errors(ssa_tent),
                    "drift at the end": ssa_tent.history["drift"][-1]},
}).T
book.glue("ex_rounds", EX_ROUNDS)
book.glue("ex_tent_drift", tent_table.iloc[0, -1])
book.glue("ex_ssatent_drift", tent_table.iloc[1, -1])
book.glue("ex_tent_err", tent_table.iloc[0, :-1].mean())
book.glue("ex_ssatent_err", tent_table.iloc[1, :-1].mean())
tent_table.round(3)

# %% [markdown]
# After the same steps, TENT's affine parameters have drifted {glue:text}`ex_tent_drift:.2f`
# from the source and SSA on TENT's {glue:text}`ex_ssatent_drift:.2f`: the filter holds the
# weights back, as it does for the ROID loss in section 2. The mean error over these rounds
# is {glue:text}`ex_tent_err:.1%` for TENT and {glue:text}`ex_ssatent_err:.1%` for SSA on
# TENT: on one seed, a difference of a point or two is within what the seeds of section 2
# move. The author's variant also takes the steady state at once, with no buffer to fill
# first; ours waits for a full buffer, as in the author's SSA on CMF.
#
# ```{solution-end}
# ```
#
# ```{exercise} Where should S come from?
# :label: ex-tta-s
#
# **Level:** hard · **Time:** about 45 minutes.
#
# Our relative $S$ is fixed at the first full buffer, inside the transient of the first domain.
# Propose a rule that sets $S$ from a quieter stretch of the stream, implement it with
# `SteadyStateRule(lr, S=...)`, and measure it against $S_\text{rel}=1$.
# ```
#
# ```{solution-start} ex-tta-s
# :class: dropdown
# ```
#
# One rule: estimate the noise from the *second half* of the first domain, after the
# transient of the first updates, and set $S=\eta^2\sigma^2$ from it, so that the step is
# 1 at that noise level. The updates $g_t$ recorded by section 1's SSA run (seed
# {glue:text}`seed`) give the estimate; SSA then runs again with that absolute $S$.

# %%
ssa_main = main[("SSA", seed)]
first_domain = np.flatnonzero((ssa_main.step_round == 0) & (ssa_main.step_domain == 0))
quiet = ssa_main.history["g"][first_domain[len(first_domain) // 2:]]
S_quiet = LR ** 2 * quiet.var()
quiet_run = tta.run_stream(lambda: tta.SSA(worlds[seed][0], lr=LR, S=S_quiet),
                           worlds[seed][1], rounds=size.rounds, seed=seed)
s_table = pd.DataFrame({
    # S stays None until the buffer is first full (never, on quick mode's short stream)
    name: {"S": getattr(getattr(r.adapter, "rule", None), "S", None) or np.nan,
           "median step": (np.median(r.history["step"][r.history["steady"] > 0])
                           if "step" in r.history else 1.0),
           "mean error": r.mean_error}
    for name, r in {"CMF": main[("CMF", seed)], "SSA, S_rel = 1": ssa_main,
                    "SSA, S from a quiet stretch": quiet_run}.items()}).T
book.glue("ex_s_ratio", S_quiet / s_table.loc["SSA, S_rel = 1", "S"])
book.glue("ex_s_quiet_err", s_table.iloc[2, 2])
book.glue("ex_s_rel_err", s_table.iloc[1, 2])
book.glue("ex_s_cmf_err", s_table.iloc[0, 2])
s_table

# %% [markdown]
# The quiet stretch gives an $S$ {glue:text}`ex_s_ratio:.2f` times the first-buffer one.
# Its mean error is {glue:text}`ex_s_quiet_err:.2%`, against
# {glue:text}`ex_s_rel_err:.2%` with $S_\text{rel}=1$ and {glue:text}`ex_s_cmf_err:.2%`
# for CMF on the same stream: differences of the size that separates seeds in section 1
# (compare the interval of SSA - CMF there), so one seed cannot rank the rules. A fair
# test repeats this over seeds and learning rates; at our scale, section 4 already
# suggests that no choice of $S$ makes SSA clearly better than CMF.
#
# ```{solution-end}
# ```

# %%
book.finish()
