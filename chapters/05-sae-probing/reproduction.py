# %% [markdown]
# # Reproduction: four regimes, twenty data sets, six probes
#
# > We find that although SAE probes occasionally outperform baselines on individual datasets,
# > they do not consistently outperform baselines [...] and adding SAE probes to a quiver of
# > baselines does not meaningfully improve performance. (Kantamneni, Engels et al., 2025)

# %% [markdown]
# The paper's four regimes, on the 20 data sets of [the method notebook](method.ipynb), at the middle
# layer (block 3 of 6) of all-MiniLM-L6-v2:
#
# * **data scarcity**: balanced training sets of a handful to hundreds of texts;
# * **class imbalance**: a fixed training size with few positives;
# * **label noise**: a share of the training labels flipped;
# * **covariate shift**: trained in distribution, tested on the package's shifted test sets (eight
#   data sets: fictional characters, typos, surname first, other languages...).
#
# Then a setting the paper studies apart from the regimes, a **spurious correlation**: probes
# trained where a nuisance feature predicts the label, tested where it does not (section 4).
#
# Probes: logistic regression, PCA + logistic regression, $k$-NN and an MLP (scikit-learn), and
# gradient-boosted trees (XGBoost, as in the paper) on the activations (the paper's baselines),
# and the SAE probe. Hyperparameters are chosen on a stratified
# validation split of the training set; the test set of each data set is fixed and balanced.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import cross_val_predict

from icml25 import book
from icml25 import sae_probing as sp
from icml25.common.parallel import start_workers
from icml25.common.stats import bootstrap_ci

from _chapter import LAYER, SAE_COLOUR

SIZES = {
    # ex_*: the exercises' solutions (data sets, SAE epochs, extra split seeds)
    "quick": dict(n_latents=512, epochs=2, grid="fixed", datasets=3,
                  settings=dict(scarcity=(8, 64), imbalance=(0.1,), noise=(0.2,),
                                shift=(128,)),
                  spurious=(0.5, 1.0),
                  jobs=1,  # a second process costs more to start than it saves here
                  ex_datasets=2, ex_epochs=1, ex_seeds=2),
    "book": dict(n_latents=2048, epochs=10, grid="small", datasets=20,
                 settings=dict(scarcity=(4, 16, 64, 256), imbalance=(0.05, 0.2, 0.5),
                               noise=(0.0, 0.2, 0.4), shift=(64, 128, 256)),
                 spurious=(0.5, 0.9, 1.0), jobs=2,
                 ex_datasets=6, ex_epochs=1, ex_seeds=3),
    "paper": dict(n_latents=4096, epochs=20, grid="paper", datasets=20,
                  settings=dict(scarcity=(2, 4, 8, 16, 32, 64, 128, 256),
                                imbalance=(0.01, 0.05, 0.1, 0.2, 0.5),
                                noise=(0.0, 0.1, 0.2, 0.3, 0.4),
                                shift=(32, 64, 128, 256)),
                  spurious=(0.5, 0.6, 0.7, 0.8, 0.9, 1.0), jobs=2,
                  ex_datasets=20, ex_epochs=10, ex_seeds=10),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
start_workers(size.jobs, "icml25.sae_probing")  # the sweep's, ready when the SAE is
data = sp.load()
# Quick mode keeps the data sets with shifted test sets first, so that every regime
# runs.
names = data.names[: size.datasets]
SAE_SEED = run.seed_of("sae-training")  # every SAE of the page
PROBE_SEED = run.seed_of("probe-init")  # the MLP's and the trees' randomness
SWEEP_SEED = run.seed_of("sweep-splits")  # training, test and validation draws
sae, _ = sp.train_sae(data.rows(LAYER), n_latents=size.n_latents, epochs=size.epochs,
                      seed=SAE_SEED)
probes = sp.baseline_probes(size.grid, seed=PROBE_SEED) + sp.sae_probes(sae)
# One colour per regime, and for the raw-activation probe, in every figure of the
# chapter
# (the SAE probe's is SAE_COLOUR).
REGIME_COLOURS = dict(zip(sp.REGIMES, book.PALETTE[:4]))
RAW_COLOUR = "black"

# %% [markdown]
# ## 1. The sweep
#
# {glue:text}`n_names` data sets; training sizes {glue:text}`scarcity` (scarcity), positive
# shares {glue:text}`imbalance` at 128 training texts (imbalance), flipped shares
# {glue:text}`noise` at 128 (noise), and the shifted test sets after training on
# {glue:text}`shift` in-distribution texts (shift; the paper trains once, on its standard
# training set: three sizes give the regime more than eight evaluations). Every evaluation fits
# every probe with its grid; the data sets are spread over {glue:text}`jobs` processes.

# %%
book.glue(n_names=len(names), jobs=size.jobs)
for regime, settings in size.settings.items():
    book.glue(regime, ", ".join(f"{s:g}" for s in settings))
started = time.perf_counter()
results = pd.concat([
    sp.run_regime(data, LAYER, regime, size.settings.get(regime), probes,
                  datasets=names, seed=SWEEP_SEED, n_jobs=size.jobs)
    for regime in sp.REGIMES
], ignore_index=True)
book.glue(sweep_s=time.perf_counter() - started,
          n_evals=len(results.groupby(["dataset", "regime", "setting"])))
mean_auc = results.pivot_table(index="regime", columns="probe", values="test_auc",
                               aggfunc="mean")
mean_auc.loc[list(sp.REGIMES)].round(3)

# %% [markdown]
# Mean test AUC per probe and regime over data sets and settings ({glue:text}`n_evals`
# evaluations in {glue:text}`sweep_s:.0f` s). Logistic regression on the raw activations is the
# strongest single probe nearly everywhere; the SAE probe trails the linear baselines.
#
# ## 2. Does the SAE probe beat the best baseline?
#
# Per data set and setting, the SAE probe (its $k$ chosen on validation) against the baseline
# that validation would pick (what a practitioner deploys), and against the best baseline *on the
# test set* (the strictest bar), with the mean AUC difference to the chosen baseline and its
# bootstrap 95% interval (`low`, `high`) over data sets and settings; the share of wins has a
# Clopper-Pearson 95% interval, which counts the evaluations as independent draws (the
# settings of one data set share its texts, so the true uncertainty is somewhat larger). Then
# the paper's ensemble
# question: the best-on-validation probe among the baselines only, against the same among
# baselines plus the SAE probe; the mean gain in test AUC with its bootstrap 95% interval.
# Shares are of the evaluations; intervals are in brackets. {numref}`fig-05-verdict`
# shows every evaluation.

# %%
wins_quiver = sp.sae_wins(results, "quiver")
wins_oracle = sp.sae_wins(results, "oracle")
shares = sp.win_shares(wins_quiver).loc[list(sp.REGIMES)]  # Clopper-Pearson, 95%
quivers = sp.compare_quivers(results)
rows = []
for regime in sp.REGIMES:
    q = quivers[quivers.regime == regime]
    mean, (low, high) = bootstrap_ci(
        q.gain.to_numpy(), n_boot=2000,
        seed=run.seed_of(f"quiver-gain-bootstrap-{regime}"))
    diff = wins_quiver[wins_quiver.regime == regime]
    d_mean, (d_low, d_high) = bootstrap_ci(
        (diff.sae - diff.baseline).to_numpy(), n_boot=2000,
        seed=run.seed_of(f"difference-bootstrap-{regime}"))
    oracle = wins_oracle[wins_oracle.regime == regime]
    rows.append({
        "regime": regime,
        "evaluations": len(q),
        "SAE beats chosen baseline": diff.sae_wins.mean(),
        "SAE beats best baseline (test)": oracle.sae_wins.mean(),
        "SAE - chosen baseline": d_mean, "low": d_low, "high": d_high,
        "quiver, baselines": q.baselines.mean(),
        "quiver, + SAE": q.with_sae.mean(),
        "gain": mean, "gain low": low, "gain high": high,
        "SAE picked": q.sae_chosen.mean(),
    })
verdict = pd.DataFrame(rows).set_index("regime")


def with_interval(columns):
    """'mean [low, high]' per regime, from three columns of the verdict."""
    return [f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}]" for m, lo, hi in verdict[columns].values]


def share(column):
    return verdict[column].map("{:.0%}".format)


pd.DataFrame({
    "evaluations": verdict["evaluations"].map("{:d}".format),
    "SAE beats chosen baseline": [
        f"{r.wins} ({r.share:.0%} [{r.low:.0%}, {r.high:.0%}])"
        for r in shares.itertuples()],
    "SAE beats best baseline (test)": share("SAE beats best baseline (test)"),
    "SAE - chosen baseline": with_interval(["SAE - chosen baseline", "low", "high"]),
    "quiver AUC, baselines": verdict["quiver, baselines"].map("{:.3f}".format),
    "quiver AUC, + SAE": verdict["quiver, + SAE"].map("{:.3f}".format),
    "quiver gain": with_interval(["gain", "gain low", "gain high"]),
    "SAE picked by the quiver": share("SAE picked"),
}).T

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.9)
for i, regime in enumerate(sp.REGIMES):
    d = wins_quiver[wins_quiver.regime == regime]
    axes[0].scatter(d.baseline, d.sae, s=14, color=REGIME_COLOURS[regime], label=regime,
                    alpha=0.7)
    q = quivers[quivers.regime == regime]
    axes[1].scatter(np.full(len(q), i) + np.linspace(-0.25, 0.25, len(q)), q.gain, s=12,
                    color=REGIME_COLOURS[regime], alpha=0.7)
    gain = verdict.loc[regime, ["gain", "gain low", "gain high"]].to_numpy()
    axes[1].errorbar(i, gain[0], yerr=[[gain[0] - gain[1]], [gain[2] - gain[0]]],
                     fmt="D", color="black", capsize=3, zorder=3)
axes[0].plot([0.3, 1], [0.3, 1], color="grey", lw=0.8)
axes[0].set_xlabel("test AUC, baseline chosen on validation")
axes[0].set_ylabel("test AUC, SAE probe")
axes[0].set_title("SAE probe against the chosen baseline")
axes[1].axhline(0, color="grey", lw=0.8)
axes[1].set_xticks(range(len(sp.REGIMES)), sp.REGIMES)
axes[1].set_ylabel("test AUC gain")
axes[1].set_title("adding the SAE probe to the quiver")
handles = [*axes[0].get_legend_handles_labels()[0],
           plt.Line2D([], [], marker="D", color="black", ls="",
                      label="mean gain, 95% bootstrap interval")]
fig.legend(handles=handles, loc="outside lower center", ncols=5)
book.show_figure(fig, "fig_verdict")

# %% [markdown]
# ```{glue:figure} fig_verdict
# :alt: Left, a scatter plot of the SAE probe's test AUC against the validation-chosen baseline's, one point per data set and setting, coloured by regime, with the diagonal; most points lie below it. Right, for each regime, the gains in test AUC from adding the SAE probe to the quiver, mostly at zero, with a black diamond and bar for the mean and its interval near zero.
# :name: fig-05-verdict
#
# **The SAE probe beats the baseline a practitioner would pick in
# {glue:text}`win_share:.0%` of the evaluations.** Left: test AUC of the SAE probe against that of
# the baseline chosen on validation, one point per data set and setting (above the
# diagonal: the SAE probe is better). Right: per regime, the change in test AUC when the
# SAE probe joins the quiver of baselines, one point per data set and setting (zero
# where the quiver keeps its baseline); black: the mean gain and its bootstrap 95%
# interval.
# ```

# %% tags=["nbval-check-output"]
win_share = wins_quiver.sae_wins.mean()
oracle_any = wins_oracle.sae_wins.sum()
upper = verdict["gain high"].max()
book.glue("win_share", win_share)
book.glue("oracle_any", int(oracle_any))
book.claim(
    "sae-occasionally-wins", int(oracle_any),
    note=f"ours: count of wins over {len(wins_oracle)} evaluations",
)
worst = shares.share.idxmax()
book.glue(nc_regime=worst, nc_share=shares.share.max(),
          nc_n=int(shares.loc[worst, "evaluations"]), nc_low=shares.loc[worst, "low"],
          nc_high=shares.loc[worst, "high"],
          n_shift=int(shares.loc["shift", "evaluations"]))
book.claim(
    "sae-not-consistent", shares.share.max(),
    interval=(shares.low.max(), shares.high.max()),
    shown={f"{regime}": f"{k} of {n}" for regime, (k, n)
           in shares[["wins", "evaluations"]].iterrows()},
    note=f"ours: the largest share over the four regimes ({worst}); interval: from the "
         "largest lower to the largest upper Clopper-Pearson 95% bound of the regimes",
)
book.claim(
    "quiver-no-help", verdict["gain"].max(),
    interval=(verdict["gain low"].max(), upper),
    shown={regime: f"{g:+.4f}" for regime, g in verdict["gain"].items()},
    note="ours: the largest mean gain over the regimes; interval: from the largest "
         "lower to the largest upper bootstrap 95% bound of the regimes",
)


# %% [markdown]
# The SAE probe beats the baseline a practitioner would pick in {glue:text}`win_share:.0%` of the
# evaluations, and the best baseline on the test set in {glue:text}`oracle_any` of them, mostly on
# data sets near chance level or near saturation, where the ranking of probes is noise
# (exercise 3). Added to the quiver, it is picked now and then
# on validation and changes the test AUC little: the direction of the paper's conclusion, with a
# much smaller language model and SAE.
#
# Whether the SAE probe wins in under half of the evaluations of *every* regime is a claim
# about the largest of four shares, and one run cannot settle it. Here the largest is the
# {glue:text}`nc_regime` regime's, {glue:text}`nc_share:.0%` of {glue:text}`nc_n`
# evaluations, with a Clopper-Pearson 95% interval from {glue:text}`nc_low:.0%` to
# {glue:text}`nc_high:.0%`. The shift regime, with only eight data sets, has
# {glue:text}`n_shift` evaluations because it is run at several training sizes
# ({glue:text}`shift`); with one size it had eight, and a single win moved its share by 12 points. The interval treats the
# evaluations as independent, which those of one data set are not, so it is if anything too
# narrow. The verdict in the box above is pooled over seeds, each seed contributing its share
# and its interval. The quiver claim is read the same way: the largest mean gain over the
# regimes, with an interval from the largest lower to the largest upper bound. It holds
# when every regime's upper bound stays under 0.01 AUC, fails only when some regime's
# lower bound is above it, and is undecided in between; the upper bound lies near 0.01
# and moves across it from seed to seed.
#
# The SAE is trained in torch on the CPU, and its TopK choice of latents makes the
# training chaotic in its last bits: re-executed under another MKL code path (the one an
# AMD CPU takes), torch's scalar kernels or numpy at AVX2, the chapter trains another SAE
# of the same quality, and the counts and gaps that depend on near-ties between probes
# move as they do from seed to seed. The tests that re-execute the notebook allow each
# figure the move measured that way (its declaration records it); a verdict must match
# exactly, except that a run whose interval ends within that tolerance of its threshold
# may turn undecided on another CPU.
#
# ## 3. An "interpretability" use: finding mislabelled examples
#
# The paper also looks at uses where interpretability should shine: its abstract names
# "detecting poor dataset quality" among those where SAEs "initially appear promising"; we
# read it as finding mislabelled examples. We flip 10%
# of the labels of each data set and score every text by how little a cross-validated
# probe believes its (possibly wrong) label, once with logistic regression on the raw
# activations (the simple, non-SAE way) and once on the 128 top SAE latents; the AUC of
# that score for finding the flipped texts, summarised over the data sets below and
# drawn per data set in {numref}`fig-05-label-errors`:

# %%
def suspicion_auc(features, y_noisy, flipped):
    """AUC of 1 - P(given label) from 5-fold cross-validated logistic regression."""
    p = cross_val_predict(LogisticRegression(C=1.0, max_iter=1000), features, y_noisy,
                          cv=5, method="predict_proba")
    return roc_auc_score(flipped, 1 - p[np.arange(len(y_noisy)), y_noisy])


rows = []
for name in names:
    X, y = data.get(name, LAYER)
    rng = run.rng(f"label-flips-{name}")
    flipped = np.zeros(len(y), bool)
    flipped[rng.choice(len(y), len(y) // 10, replace=False)] = True
    y_noisy = np.where(flipped, 1 - y, y)
    latents = sp.SAELatents(sae, 128).fit(X, y_noisy).transform(X)
    standardise = lambda Z: (Z - Z.mean(0)) / (Z.std(0) + 1e-8)  # noqa: E731
    rows.append(dict(dataset=name, raw=suspicion_auc(standardise(X), y_noisy, flipped),
                     sae=suspicion_auc(standardise(latents), y_noisy, flipped)))
label_errors = pd.DataFrame(rows).set_index("dataset")
mean_gap, (gap_low, gap_high) = bootstrap_ci(
    (label_errors.sae - label_errors.raw).to_numpy(), n_boot=2000,
    seed=run.seed_of("label-error-bootstrap"))
book.glue(raw_auc=label_errors.raw.mean(), sae_auc=label_errors.sae.mean(),
          gap=mean_gap, gap_low=gap_low, gap_high=gap_high)
raw, via_sae = label_errors.raw, label_errors.sae
book.glue(sae_ahead=int((via_sae > raw).sum()), n_label_sets=len(label_errors))


def of_all(mask):
    return f"{int(mask.sum())} of {len(mask)}"


pd.DataFrame({
    "mean AUC": [f"{raw.mean():.3f}", f"{via_sae.mean():.3f}"],
    "range of AUC": [f"{raw.min():.2f} to {raw.max():.2f}",
                     f"{via_sae.min():.2f} to {via_sae.max():.2f}"],
    "data sets above chance": [of_all(raw > 0.5), of_all(via_sae > 0.5)],
    "data sets ahead of the other": [of_all(raw > via_sae), of_all(via_sae > raw)],
}, index=["raw activations", "SAE latents"])

# %% tags=["hide-input", "remove-output"]
order = label_errors.sort_values("raw").index
fig, ax = book.figure(height=1.2 + 0.2 * len(order))
rows_y = np.arange(len(order))
ax.hlines(rows_y, label_errors.loc[order].min(axis=1),
          label_errors.loc[order].max(axis=1), color="grey", lw=1)
ax.scatter(label_errors.loc[order, "raw"], rows_y, color=RAW_COLOUR, s=18, zorder=3,
           label="logistic regression on the raw activations")
ax.scatter(label_errors.loc[order, "sae"], rows_y, color=SAE_COLOUR, s=18, zorder=3,
           label="logistic regression on 128 SAE latents")
ax.axvline(0.5, color="grey", ls=":", lw=1)
ax.set_yticks(rows_y, order, fontsize=8)
ax.set_xlabel("AUC for finding the flipped labels (0.5: chance)")
ax.grid(axis="y", alpha=0)
fig.legend(loc="outside lower center", ncols=2)
book.show_figure(fig, "fig_label_errors")

# %% [markdown]
# ```{glue:figure} fig_label_errors
# :alt: A dot plot with one row per data set, sorted by the raw probe's result: on each row a black dot for the raw-activation probe and a pink dot for the SAE-latent probe, joined by a grey segment, on an axis of detection AUC with a dotted line at 0.5.
# :name: fig-05-label-errors
#
# **The SAE latents find flipped labels better than the raw activations on
# {glue:text}`sae_ahead` of {glue:text}`n_label_sets` data sets.** AUC of the suspicion
# score (how little a cross-validated probe believes a text's label) for finding the 10%
# of texts whose label was flipped, per data set, sorted by the raw probe's AUC: black,
# logistic regression on the raw activations; pink, on 128 SAE latents chosen by
# class-mean difference.
# ```

# %% tags=["nbval-check-output"]
book.claim(
    "label-errors", mean_gap, interval=(gap_low, gap_high),
    note="ours: mean (SAE - raw) detection AUC over data sets, bootstrap 95% interval",
    digits=3,
)

# %% [markdown]
# Both find the flipped labels above chance on most data sets ({numref}`fig-05-label-errors`;
# mean detection AUC
# {glue:text}`raw_auc:.2f` raw, {glue:text}`sae_auc:.2f` through the SAE; difference
# {glue:text}`gap:+.3f`, 95% interval {glue:text}`gap_low:+.3f` to
# {glue:text}`gap_high:+.3f`, a percentile bootstrap over the data sets).
# The SAE route adds a step that one can read (which latents disagree with a label), not a better
# detector.
#
# ## 4. A spurious correlation
#
# The paper's abstract: "although SAEs initially appear promising for identifying spurious
# correlations [...], we are able to achieve similar results with simple non-SAE baselines as
# well". Its case, as we read the abstract and the authors' earlier report (not checked
# against the paper's full text), is a data set in which a superficial feature of the texts
# tracks the label. None of the package's data sets has a second label for the same texts
# that we could plant as the spurious feature, so we build the setting from what the chapter already has: the *domain* of a text.
# For the {glue:text}`n_spur_sets` data sets with a shifted test set, a text is either
# in-distribution or from the shifted set (a translation, a fictional character, a name with
# typos...), a difference that the activations encode strongly. A probe is trained on 128
# texts whose label agrees with the domain on a share $a$ of them (`sp.spurious_split`:
# positives mostly in-distribution, negatives mostly shifted), with $a$ in
# {glue:text}`spur_settings` ($a = 0.5$: no correlation, the reference), and tested on 144
# texts with 36 of each class in each domain, where the domain says nothing about the label.
# Every probe is chosen on a validation split of its (correlated) training set, as in the
# sweep. If the SAE's latents separate the concept from the domain better than the raw
# activations do, the SAE probe should lose less as $a$ grows.

# %%
started = time.perf_counter()
spurious = sp.run_regime(data, LAYER, sp.SPURIOUS, size.spurious, probes,
                         datasets=names, seed=SWEEP_SEED, n_jobs=size.jobs)
spur_wins = sp.sae_wins(spurious, "quiver")
spur_logreg = (spurious[spurious.probe == "logreg"]
               .set_index(["dataset", "setting"]).test_auc)
spur_wins["logreg"] = spur_logreg.loc[list(zip(spur_wins.dataset,
                                               spur_wins.setting))].to_numpy()
spur_wins["gain"] = spur_wins.sae - spur_wins.baseline
by_agreement = spur_wins.groupby("setting").agg(
    logreg=("logreg", "mean"), baseline=("baseline", "mean"), sae=("sae", "mean"),
    sae_wins=("sae_wins", "mean"))
confounded = spur_wins[spur_wins.setting > 0.5]
per_set = confounded.groupby("dataset", sort=False).gain.mean()
spur_gain, (spur_low, spur_high) = bootstrap_ci(
    per_set.to_numpy(), n_boot=2000, seed=run.seed_of("spurious-gain-bootstrap"))
book.glue(n_spur_sets=len(per_set), spur_s=time.perf_counter() - started,
          spur_settings=", ".join(f"{a:g}" for a in size.spurious),
          spur_gain=spur_gain, spur_low=spur_low, spur_high=spur_high,
          spur_sae_ahead=int((per_set > 0).sum()),
          spur_top=float(by_agreement.index.max()),
          spur_top_wins=float(by_agreement.sae_wins.iloc[-1]))
for probe in ("logreg", "baseline", "sae"):
    top = by_agreement[probe].iloc[-1]
    book.glue(f"spur_{probe}_top", top)
    book.glue(f"spur_{probe}_loss", by_agreement[probe].iloc[0] - top)
by_agreement.rename(columns={
    "logreg": "logistic regression", "baseline": "baseline chosen on validation",
    "sae": "SAE probe", "sae_wins": "SAE beats chosen baseline (share)",
}).rename_axis("agreement a").round(3)

# %% [markdown]
# Mean test AUC over the {glue:text}`n_spur_sets` data sets by agreement $a$, on the test
# set where domain and label are independent ({glue:text}`spur_s:.0f` s).

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.4, width_ratios=[1.3, 1])
for column, label, colour, marker in (
        ("logreg", "logistic regression", RAW_COLOUR, "o"),
        ("baseline", "baseline chosen on validation", "grey", "s"),
        ("sae", "SAE probe", SAE_COLOUR, "D")):
    axes[0].plot(by_agreement.index, by_agreement[column], marker=marker, color=colour,
                 label=label)
axes[0].set_xlabel("agreement $a$ of label and domain in training")
axes[0].set_ylabel("mean test AUC (domain independent)")
axes[0].set_title("trained on a spurious correlation")
order = per_set.sort_values().index
axes[1].scatter(per_set[order], np.arange(len(order)), color=SAE_COLOUR, s=18, zorder=3)
axes[1].errorbar(spur_gain, -1, xerr=[[spur_gain - spur_low], [spur_high - spur_gain]],
                 fmt="D", color="black", capsize=3)
axes[1].axvline(0, color="grey", lw=0.8)
axes[1].axvline(0.01, color="grey", ls=":", lw=1)
axes[1].set_yticks([-1, *range(len(order))], ["mean, 95% interval", *order], fontsize=7)
axes[1].set_xlabel("SAE probe - chosen baseline (AUC)")
axes[1].set_title("per data set, $a > 0.5$")
axes[1].grid(axis="y", alpha=0)
fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3)
book.show_figure(fig, "fig_spurious")

# %% [markdown]
# ```{glue:figure} fig_spurious
# :alt: Left, three lines of mean test AUC against the agreement between label and domain in training, for logistic regression, the validation-chosen baseline and the SAE probe. Right, one dot per data set for the SAE probe's test AUC minus the chosen baseline's at the correlated settings, with the mean and its interval below and lines at 0 and 0.01.
# :name: fig-05-spurious
#
# **A planted spurious correlation costs every probe test AUC.** Left: mean
# test AUC over the {glue:text}`n_spur_sets` data sets when the training labels agree with the
# text's domain on a share $a$ of the training set, tested where the two are independent.
# Right: per data set, the SAE probe's test AUC minus that of the baseline chosen on
# validation, averaged over the correlated settings ($a > 0.5$); black: the mean over data sets
# and its bootstrap 95% interval; dotted: the claim's threshold of 0.01.
# ```

# %% tags=["nbval-check-output"]
book.claim(
    "spurious-no-help", spur_gain, interval=(spur_low, spur_high),
    shown={"SAE probe": confounded.sae.mean(),
           "chosen baseline": confounded.baseline.mean()},
    note="ours: mean over data sets of (SAE probe - chosen baseline) test AUC at "
         "agreement > 0.5, percentile bootstrap over data sets",
    digits=3,
)

# %% [markdown]
# Trained on a correlation, every probe loses test AUC: from $a = 0.5$ to
# $a =$ {glue:text}`spur_top`, logistic regression loses {glue:text}`spur_logreg_loss:.3f`, the
# chosen baseline {glue:text}`spur_baseline_loss:.3f` and the SAE probe
# {glue:text}`spur_sae_loss:.3f` ({numref}`fig-05-spurious`). Where the domain alone predicts
# the training labels ($a =$ {glue:text}`spur_top`), the SAE probe beats the chosen baseline on
# {glue:text}`spur_top_wins:.0%` of the data sets, at a mean test AUC of
# {glue:text}`spur_sae_top:.3f` against {glue:text}`spur_baseline_top:.3f`: all near chance,
# since no probe can tell label from domain when the two never disagree in training. Over the
# correlated settings ($a > 0.5$), the SAE probe's test AUC minus the chosen baseline's
# averages {glue:text}`spur_gain:+.3f` (95% interval {glue:text}`spur_low:+.3f` to
# {glue:text}`spur_high:+.3f`, a percentile bootstrap over the data sets), and the SAE
# probe is ahead on {glue:text}`spur_sae_ahead` of the {glue:text}`n_spur_sets` data sets.
# Eight data sets make a wide interval: a single run rarely puts it on one side of 0.01, and
# the verdict above is pooled over seeds. A smaller loss alone would not make the SAE probe the
# better choice: what a practitioner gets is the test AUC under the correlation, which is what
# the claim measures.
#
# This is our construction, not the paper's experiment. The paper's case is a data set in
# which the SAE latents that a probe uses *revealed* a spurious feature, which a look at the
# baselines revealed as well; we ask the quantitative side of the same question, whether the
# SAE basis makes a probe lean less on a nuisance feature, with a nuisance we can control.
#
# ## 5. Multi-token probes
#
# Every probe so far reads one vector per text, the mean of its token states. The paper also
# lets a probe read *every* token: its SAE probe marks the SAE latents that fire on any token
# of the text (a maximum over tokens of "fired"), keeps the $k$ latents whose firing rate
# differs most between the classes, and fits an L1 logistic regression; its non-SAE answer is
# an attention-pooled probe on the raw token states, which learns a query $q$ that weighs the
# tokens, $p = \sigma\big(w^\top \sum_t \operatorname{softmax}_t(q^\top h_t)\, h_t +
# b\big)$. We rebuild both on MiniLM's token states after block 3, with a TopK SAE of the
# chapter's width and sparsity trained on the {glue:text}`mt_tokens` tokens of the 8,000
# sampled texts, and add the single-token probe the paper starts from: a logistic regression on
# one position, here the `[CLS]` token (in a decoder, the last token). Each data set has 256
# balanced training texts and 144 test texts; every probe chooses its hyperparameters on a
# stratified quarter of the training set. Training the token-level SAE takes minutes, so the
# test AUCs of every seed the chapter's plan may read were measured once by
# `python -m icml25.sae_probing.multitoken data/sae_probing/multitoken.npz` and are committed
# (`data/MANIFEST`); this run reads seed {glue:text}`mt_seed`'s.

# %%
multi = sp.load_multitoken()
if seed not in set(multi.seed):
    raise ValueError(
        f"the multi-token measurements hold seeds {sorted(set(multi.seed))}, not "
        f"{seed}; measure it with python -m icml25.sae_probing.multitoken")
mt_auc = multi[multi.seed == seed].pivot(index="dataset", columns="probe",
                                         values="test_auc")
mt_auc = mt_auc.loc[data.names, list(sp.multitoken.PROBES)]
MT_LABELS = {"sae_max": "SAE, max over tokens", "attention": "attention-pooled",
             "cls": "[CLS] token only", "mean": "mean over tokens"}
mt_gain = {}
for other in ("attention", "cls"):
    mt_gain[other] = bootstrap_ci(
        (mt_auc.sae_max - mt_auc[other]).to_numpy(), n_boot=2000,
        seed=run.seed_of(f"multitoken-bootstrap-{other}"))
book.glue(mt_seed=str(seed), mt_tokens=f"{multi.attrs['n_tokens']:,}",
          mt_n=len(mt_auc))
pd.DataFrame({
    "mean test AUC": mt_auc.mean().map("{:.3f}".format),
    "best on a data set": (mt_auc.T == mt_auc.max(axis=1)).sum(axis=1).map(
        "{:d}".format),
}).rename(index=MT_LABELS).T

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.6)
for ax, other in zip(axes, ("attention", "cls")):
    diff = (mt_auc.sae_max - mt_auc[other]).sort_values()
    ax.scatter(diff, np.arange(len(diff)), color=SAE_COLOUR, s=16, zorder=3)
    mean, (low, high) = mt_gain[other]
    ax.errorbar(mean, -1.5, xerr=[[mean - low], [high - mean]], fmt="D", color="black",
                capsize=3)
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_yticks([])
    ax.set_xlabel(f"SAE - {MT_LABELS[other]} (test AUC)")
    ax.set_title(f"against the {MT_LABELS[other]} probe")
axes[0].axvline(0.01, color="grey", ls=":", lw=1)
book.show_figure(fig, "fig_multitoken")

# %% [markdown]
# ```{glue:figure} fig_multitoken
# :alt: Two dot plots, one dot per data set. Left, the SAE multi-token probe's test AUC minus the attention-pooled probe's, with a dotted line at 0.01; right, minus the single-token probe's. Below each, a black diamond with a bar for the mean over data sets and its 95% interval.
# :name: fig-05-multitoken
#
# **The SAE's multi-token probe against two probes on raw states.** One dot per data set
# ({glue:text}`mt_n`): the SAE probe's test AUC minus that of the attention-pooled probe
# (left) and of the single-token probe (right), sorted; black: the mean over data sets and its
# bootstrap 95% interval; dotted: the claim's threshold of 0.01.
# ```

# %% tags=["nbval-check-output"]
for other, name in (("attention", "multitoken-no-gain"),
                    ("cls", "multitoken-beats-single")):
    mean, (low, high) = mt_gain[other]
    book.glue(**{f"mt_{other}": mean, f"mt_{other}_low": low, f"mt_{other}_high": high,
                 f"mt_{other}_wins": int((mt_auc.sae_max > mt_auc[other]).sum())})
    book.claim(
        name, mean, interval=(low, high),
        shown={"SAE, max over tokens": mt_auc.sae_max.mean(),
               MT_LABELS[other]: mt_auc[other].mean()},
        note=f"ours: mean over the {len(mt_auc)} data sets of (SAE multi-token probe - "
             f"{MT_LABELS[other]} probe) test AUC, percentile bootstrap over data sets",
        digits=3,
    )

# %% [markdown]
# Against the single-token probe, the SAE's multi-token probe gains
# {glue:text}`mt_cls:+.3f` AUC on average (95% interval {glue:text}`mt_cls_low:+.3f` to
# {glue:text}`mt_cls_high:+.3f`; ahead on {glue:text}`mt_cls_wins` of the
# {glue:text}`mt_n` data sets): reading every token is what the paper found promising. Against
# the attention-pooled probe on the raw states, its mean gain is {glue:text}`mt_attention:+.3f`
# ({glue:text}`mt_attention_low:+.3f` to {glue:text}`mt_attention_high:+.3f`; ahead on
# {glue:text}`mt_attention_wins` of {glue:text}`mt_n`): the claim asks that this interval end
# below 0.01, that is, that a simple non-SAE probe over the same tokens does about as well. The
# verdicts above are pooled over the seeds of the chapter's plan, each with its own SAE,
# splits and attention-probe start.
#
# ## What this reproduces, and what it cannot
#
# * The paper's two conclusions point the same way at our scale: SAE probes win only occasionally,
#   and add little to a quiver of baselines. That they never win in half the evaluations of a
#   regime is fragile: a regime's share has a binomial interval of about $\pm 0.2$ at 24
#   evaluations, and on some seeds one regime reaches half (the ledger pools the seeds).
# * The spurious-correlation setting is ours (the domain of a text as the nuisance feature),
#   built on the same activations; the paper's own case study inspects latents instead.
# * The multi-token probes follow the authors' released multi-token code (binarised max
#   pooling of SAE latents, top $k$, L1 logistic regression; an attention-pooled probe as the
#   baseline) on a 22M-parameter encoder's token states and a token-level SAE trained on the
#   probing texts' own {glue:text}`mt_tokens` tokens; their test AUCs are measured once per
#   seed and committed, since training that SAE takes minutes.
# * Our "language model" is a 22M-parameter sentence encoder, not Gemma-2-9B, and our SAE is trained
#   on 8,000 activations of the probing texts themselves (no labels), not on billions of tokens of
#   web text; the paper's SAEs are far richer. A better SAE could change the numbers; the paper's
#   finding is that with the best SAEs available it did not change the conclusion.
# * Differences in protocol, stated in `icml25.sae_probing`: one stratified validation split at
#   every size (the paper uses cross-validation on small sets), a balanced test set in the imbalance
#   regime, and fixed boosting settings in book mode where the paper searches them at random.
#
# ## Exercises
#
# ```{exercise} The last layer
# :label: ex-sae-layer6
#
# **Level:** medium · **Time:** about 20 minutes.
#
# Rerun the sweep at layer 6 (`LAYER = 6`, with an SAE trained on `data.rows(6)`). Does anything in
# the verdict table change? Why might the last layer of a sentence encoder suit linear probes
# particularly well?
# ```
#
# ```{solution-start} ex-sae-layer6
# :class: dropdown
# ```
#
# The full sweep at layer 6 costs as much as this notebook, so the solution runs a slice
# of it at both layers on equal terms: the first {glue:text}`ex_n_sets` data sets, the
# scarcity regime at 16 and 64 examples, one setting per baseline (no grid), and an SAE
# at each layer trained briefly ({glue:text}`ex_epochs` of the sweep's
# {glue:text}`sae_epochs` epochs).

# %%
layer_rows = []
ex_names = names[: size.ex_datasets]
for layer in (LAYER, 6):
    layer_sae, _ = sp.train_sae(data.rows(layer), n_latents=size.n_latents,
                                epochs=size.ex_epochs, seed=SAE_SEED)
    layer_results = sp.run_regime(
        data, layer, "scarcity", (16, 64),
        sp.baseline_probes("fixed", seed=PROBE_SEED) + sp.sae_probes(layer_sae),
        datasets=ex_names, seed=SWEEP_SEED)
    wins = sp.sae_wins(layer_results, "quiver")
    gain = sp.compare_quivers(layer_results).gain
    probe_auc = layer_results.groupby("probe").test_auc.mean()
    layer_rows.append({
        "layer": layer,
        "SAE variance explained": sp.sae_metrics(layer_sae, data.rows(layer))["fve"],
        "mean test AUC, logreg": probe_auc["logreg"],
        "mean test AUC, SAE probe": probe_auc["sae"],
        "SAE beats chosen baseline": wins.sae_wins.mean(),
        "quiver gain": gain.mean(),
    })
by_layer = pd.DataFrame(layer_rows).set_index("layer")
book.glue(ex_n_sets=len(ex_names), ex_epochs=size.ex_epochs, sae_epochs=size.epochs)
for layer in (LAYER, 6):
    book.glue(f"ex_win_l{layer}", by_layer.loc[layer, "SAE beats chosen baseline"])
    book.glue(f"ex_gain_l{layer}", by_layer.loc[layer, "quiver gain"])
    book.glue(f"ex_logreg_l{layer}", by_layer.loc[layer, "mean test AUC, logreg"])
by_layer.round(3)

# %% [markdown]
# On this slice, the SAE probe beats the validation-chosen baseline in
# {glue:text}`ex_win_l3:.0%` of the evaluations at layer 3 and {glue:text}`ex_win_l6:.0%`
# at layer 6, and adding it to the quiver changes the mean test AUC by
# {glue:text}`ex_gain_l3:+.3f` and {glue:text}`ex_gain_l6:+.3f`: the verdict does not
# turn at the last layer. Logistic regression on the raw activations averages
# {glue:text}`ex_logreg_l3:.3f` at layer 3 and {glue:text}`ex_logreg_l6:.3f` at layer 6.
# The last layer of all-MiniLM-L6-v2 is trained so that the cosine similarity of
# mean-pooled states reflects meaning: a linear structure by design, which a logistic
# regression uses directly and an SAE can only approximate. (A slice of
# {glue:text}`ex_n_sets` data sets and two settings is a small sample: treat differences of
# a few points as noise.)
#
# ```{solution-end}
# ```
#
# ```{exercise} A fair quiver
# :label: ex-sae-quiver
#
# **Level:** hard · **Time:** about 45 minutes.
#
# With tiny training sets the validation split has one or two examples per class, so the quiver
# picks its probe almost at random. Replace the validation split by leave-two-out or 6-fold
# cross-validation (as the paper does for small sets) in `sp.evaluate` and rerun the scarcity regime.
# ```
#
# ```{solution-start} ex-sae-quiver
# :class: dropdown
# ```
#
# The solution replaces the choice, not `sp.evaluate`: at {glue:text}`ex_cv_n` training
# examples (the scarcity split of the sweep), every probe and grid entry is scored by
# stratified {glue:text}`ex_cv_folds`-fold cross-validation on the training examples (the
# AUC of the pooled out-of-fold scores), each probe keeps its best entry, refitted on all
# training examples, and the quiver takes the probe with the best cross-validated AUC. The
# sweep's own picks, made on a validation split of a quarter of the examples, are the
# comparison. The first {glue:text}`ex_n_sets` data sets.

# %%
from sklearn.model_selection import StratifiedKFold

N_CV = max(n for n in size.settings["scarcity"] if n <= 16)
FOLDS = min(6, N_CV // 2)  # stratified: at most one fold per example of a class
FOLD_STATE = run.seed_of("cv-folds") % 2**32  # scikit-learn takes a 32-bit seed


def cv_auc(probe, params, X_fit, y_fit):
    """AUC of the pooled out-of-fold scores of stratified cross-validation."""
    folds = StratifiedKFold(FOLDS, shuffle=True, random_state=FOLD_STATE)
    scores = np.zeros(len(y_fit))
    for fit, val in folds.split(X_fit, y_fit):
        model = probe.build(params, len(fit)).fit(X_fit[fit], y_fit[fit])
        scores[val] = model.predict_proba(X_fit[val])[:, 1]
    return roc_auc_score(y_fit, scores)


choice_rows = []
for name in ex_names:
    X, y = data.get(name, LAYER)
    split = sp.scarcity_split(y, N_CV, 144, SWEEP_SEED)  # the sweep's split
    X_fit, X_test = X[split.train], X[split.test]
    swept = results.query("regime == 'scarcity' and setting == @N_CV and "
                          "dataset == @name").set_index("probe")
    cv, cv_test = {}, {}
    for p in probes:
        cv[p.name], params = max((cv_auc(p, q, X_fit, split.y_train), i)
                                 for i, q in enumerate(p.grid))
        model = p.build(p.grid[params], N_CV).fit(X_fit, split.y_train)
        cv_test[p.name] = roc_auc_score(y[split.test],
                                        model.predict_proba(X_test)[:, 1])
    for family in (("baseline",), ("baseline", "sae")):
        members = [p.name for p in probes if p.family in family]
        val_pick = swept.val_auc[members].idxmax()
        choice_rows.append({
            "quiver": " + ".join(family),
            "pick on a validation split": swept.test_auc[val_pick],
            "pick by cross-validation": cv_test[max(members, key=cv.get)],
            "best probe on the test set": swept.test_auc[members].max()})
choices = pd.DataFrame(choice_rows).groupby("quiver", sort=False).mean()
book.glue(ex_cv_n=N_CV, ex_cv_folds=FOLDS,
          ex_val_pick=choices["pick on a validation split"].mean(),
          ex_cv_pick=choices["pick by cross-validation"].mean(),
          ex_best_pick=choices["best probe on the test set"].mean(),
          ex_cv_gain=choices["pick by cross-validation"].diff().iloc[1],
          ex_val_gain=choices["pick on a validation split"].diff().iloc[1])
choices.round(3)

# %% [markdown]
# Mean test AUC of each quiver's pick over the data sets, by how it picks. Averaged over
# the two quivers, picking on a validation split gives {glue:text}`ex_val_pick:.3f`,
# picking by cross-validation {glue:text}`ex_cv_pick:.3f`, and the best probe on the
# test set (the sweep's, a ceiling no rule can know) {glue:text}`ex_best_pick:.3f`.
# Cross-validation uses every training example to choose, but it does not close the gap
# to the ceiling: an AUC of 0.7 measured on 16 texts, 8 per class, has a standard error of
# about 0.13 (Hanley and McNeil's formula), larger than the differences between most
# probes, so any rule picks nearly at random at this size. Adding the SAE probe
# changes the quiver's test AUC by {glue:text}`ex_val_gain:+.3f` with the validation split
# and by {glue:text}`ex_cv_gain:+.3f` with cross-validation: the paper's conclusion does
# not hinge on how the quiver chooses.
#
# ```{solution-end}
# ```
#
# ```{exercise} Where the SAE probe wins
# :label: ex-sae-wins
#
# **Level:** medium · **Time:** about 20 minutes.
#
# List the evaluations where the SAE probe beats the best baseline on the test set
# (`wins_oracle[wins_oracle.sae_wins]`). How many are on data sets whose best AUC is below 0.6?
# Would a paired test across seeds call any of them real?
# ```
#
# ```{solution-start} ex-sae-wins
# :class: dropdown
# ```
#
# Each win is one split of one data set. Repeating it with {glue:text}`ex_seeds` further
# splits (other seeds, the same setting), with the two probes of the win refitted on each
# (the SAE probe and the best-on-test baseline, their grids chosen on validation as in the
# sweep), gives paired AUC differences and a one-sided paired $t$-test per win.

# %%
from scipy import stats

oracle_wins = wins_oracle[wins_oracle.sae_wins]
best_auc = results.groupby(["dataset", "regime", "setting"]).test_auc.max()
by_name = {p.name: p for p in probes}
repeat_rows = []
for win in oracle_wins.itertuples():
    X, y = data.get(win.dataset, LAYER)
    y_ood = data.get(win.dataset, LAYER, ood=True)[1] if win.regime == "shift" else None
    X_test_all = data.get(win.dataset, LAYER, ood=True)[0] if y_ood is not None else X
    y_test_all = y if y_ood is None else y_ood
    diffs = []
    for extra in range(1, size.ex_seeds + 1):
        split = sp.make_split(win.regime, win.setting, y, n_train=128, n_test=144,
                              seed=run.seed_of(f"repeat-split-{extra}"), y_ood=y_ood)
        r = sp.evaluate([by_name[win.sae_probe], by_name[win.baseline_probe]],
                        X[split.train], split.y_train, X_test_all[split.test],
                        y_test_all[split.test], seed=SWEEP_SEED).test_auc.to_numpy()
        diffs.append(r[0] - r[1])
    p_value = stats.ttest_1samp(diffs, 0, alternative="greater").pvalue
    repeat_rows.append({
        "dataset": win.dataset, "regime": win.regime, "setting": win.setting,
        "best AUC": best_auc[(win.dataset, win.regime, win.setting)],
        "win": win.sae - win.baseline, "mean difference, new splits": np.mean(diffs),
        "p (one-sided)": p_value})
repeats = pd.DataFrame(repeat_rows, columns=[
    "dataset", "regime", "setting", "best AUC", "win", "mean difference, new splits",
    "p (one-sided)"])
book.glue(ex_n_wins=len(repeats), ex_near_chance=int((repeats["best AUC"] < 0.6).sum()),
          ex_saturated=int((repeats["best AUC"] > 0.95).sum()),
          ex_persist=int((repeats["p (one-sided)"] < 0.05).sum()),
          ex_seeds=size.ex_seeds)
repeats.round(3)

# %% [markdown]
# Of the {glue:text}`ex_n_wins` wins, {glue:text}`ex_near_chance` are on evaluations whose
# best AUC is below 0.6 (near chance, where the ranking of probes is noise) and
# {glue:text}`ex_saturated` above 0.95 (near saturation, where every probe is near 1).
# Repeated on new splits, {glue:text}`ex_persist` of them give a paired difference
# significant at the 5% level, one-sided, before any correction for testing this many
# wins (at 5% per test, about one in twenty would pass by chance). The wins are mostly
# the noise of a single split.
#
# ```{solution-end}
# ```

# %%
book.finish()
