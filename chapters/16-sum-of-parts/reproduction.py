# %% [markdown]
# # Reproduction: groups against features, patches and post-hoc attributions
#
# The paper's claims, re-run on two small image tasks and one small language task, with
# every model trained in the same run:
#
# > In this work, we formally prove a lower bound on errors of per-feature SANNs, whereas
# > group-based SANNs can achieve zero error and thus high performance. [...] SOP achieves
# > state-of-the-art performance for SANNs on vision and language tasks, and we validate
# > that the groups are interpretable on a range of quantitative and semantic metrics.
# > (You et al., 2025, abstract)

# %% [markdown]
# Two tasks of 8x8 images cut into 16 patches of 2x2 pixels. **Two-motif XOR**
# (`sp.two_motif_xor`, built in [the method](method.ipynb)): the label is "exactly one of
# two planted bars is present", an interaction that no per-feature model can represent, and
# the planted bars give a ground truth for the groups. **Digits**: scikit-learn's 1,797
# handwritten digits {cite}`pedregosa2011scikit`, a task with no planted interaction, on
# which a per-pixel linear model already does well.
#
# The paper's claim is comparative: SOP is the most accurate of the self-attributing
# networks it is compared with. On each task the same frozen backbone (an MLP trained with
# random patch masking) is used by every model built on it: SOP; **fixed patches**, SOP's
# selector over four fixed quadrants (a BagNet-like model {cite}`brendel2019approximating`);
# and the paper's "-F" construction, which turns a post-hoc explainer into a
# self-attributing model by running the backbone on the 25% of patches it ranks highest,
# with Integrated Gradients {cite}`sundararajan2017axiomatic` (**IG-F**) and with Shapley
# values estimated by permutation sampling (**SHAP-F**, the paper's strongest baseline),
# both from `captum` {cite}`kokhlikyan2020captum`. The **per-feature SANN**, the class the
# paper's lower bound is about, is a neural additive model {cite}`agarwal2021neural` with
# one small network per pixel. All groups, SOP's and the baselines', hold 4 of the 16
# patches.
#
# Which patches SOP puts in a group is never trained directly (the method notebook), so
# its accuracy depends on its initialisation. Each run therefore trains SOP and the fixed
# patches from {glue:text}`n_inits` initialisations each (children of one named random
# stream), on the same backbone and the same batches, and reports their mean. Intervals are
# 95% percentile bootstraps with {glue:text}`n_boot` resamples (the paper's tables use
# four) that resample the test images and, independently, each model's initialisations,
# so they include the training luck as well as the test sample. Thresholds were fixed from
# the paper's statements before the run.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input", "nbval-check-output"]
import textwrap

import numpy as np
import torch

from icml25 import book
from icml25.book.thresholds import threshold
from icml25 import sum_of_parts as sp

SIZES = {
    "quick": dict(n_train=600, n_test=200, backbone_steps=60, sop_steps=30,
                  nam_steps=60, inits=2, shap_orders=2, digits_test=200, n_boot=1000,
                  curve_images=60, batch=64, jobs=1, text_train=600, text_test=200,
                  text_sop_steps=30, text_batch=32),
    "book": dict(n_train=4000, n_test=1000, backbone_steps=600, sop_steps=400,
                 nam_steps=600, inits=5, shap_orders=10, digits_test=500,
                 n_boot=10000, curve_images=500, batch=128, jobs=2, text_train=4000,
                 text_test=1000, text_sop_steps=300, text_batch=64),
    "paper": dict(n_train=20000, n_test=5000, backbone_steps=3000, sop_steps=2000,
                  nam_steps=3000, inits=10, shap_orders=25, digits_test=500,
                  n_boot=10000, curve_images=500, batch=128, jobs=2, text_train=4000,
                  text_test=1000, text_sop_steps=2000, text_batch=128),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
PATCH, K, GROUPS, LR, GEN_SCALE = 2, 0.25, 8, 1e-2, 4.0  # 16 patches, groups of 4
N_KEEP = 4  # patches kept by the "-F" models, as in SOP's groups
NAMES = {"backbone": "backbone", "sop": "SOP", "fixed": "fixed patches",
         "igf": "IG-F", "shapf": "SHAP-F", "nam": "per-feature"}
COLOURS = {"backbone": "0.45", "sop": book.PALETTE[0], "fixed": book.PALETTE[1],
           "igf": book.PALETTE[3], "shapf": book.PALETTE[4], "nam": book.PALETTE[2],
           "ablation": book.PALETTE[7]}
GROUP_SANNS = ("fixed", "igf", "shapf")  # the kinds of baselines of the paper's table
QUADRANTS = np.array([[(p // 8) * 2 + (p % 4) // 2 == q for p in range(16)]
                      for q in range(4)])
book.glue(n_boot=f"{size.n_boot:,}", batch=size.batch, n_inits=size.inits,
          shap_orders=size.shap_orders)


def fit_all(X, y, n_classes, task):
    """Backbone (masked training), SOP and fixed patches from ``size.inits``
    initialisations each, and the per-feature model; their random streams are named
    after the task. The runs after the backbone's are independent: ``size.jobs``
    processes share them, with the weights of training them one by one."""
    backbone = sp.MLPBackbone(64, n_classes, seed=run.seed_of(f"{task}-backbone-init"))
    curve = sp.train(backbone, X, y, steps=size.backbone_steps, batch_size=size.batch,
                     seed=run.seed_of(f"{task}-backbone-batches"), mask_patch=PATCH)
    inits = np.random.SeedSequence(run.seed_of(f"{task}-sop-init")).spawn(size.inits)
    batches = np.random.SeedSequence(
        run.seed_of(f"{task}-selector-batches")).spawn(size.inits)
    runs, kinds = [], []
    for init, batch_seed in zip(inits, batches):
        sop = sp.SumOfParts(backbone, (8, 8), PATCH, k=K, n_groups=GROUPS,
                            gen_scale=GEN_SCALE, seed=init)
        fixed = sp.SumOfParts(backbone, (8, 8), PATCH, fixed_groups=QUADRANTS,
                              n_groups=4, seed=init)
        for kind, model in (("sop", sop), ("fixed", fixed)):  # the same batches
            runs.append((model, X, y, dict(steps=size.sop_steps, batch_size=size.batch,
                                           seed=batch_seed, lr=LR)))
            kinds.append(kind)
    nam = sp.PerFeatureAdditive(64, n_classes, seed=run.seed_of(f"{task}-nam-init"))
    runs.append((nam, X, y, dict(steps=size.nam_steps, batch_size=size.batch,
                                 seed=run.seed_of(f"{task}-nam-batches"))))
    kinds.append("nam")
    models = {"backbone": [backbone], "sop": [], "fixed": [], "nam": []}
    for kind, (model, _) in zip(kinds, sp.train_many(runs, n_jobs=size.jobs)):
        models[kind].append(model)
    return models, curve


def correctness(models, X, y, task):
    """0/1 correctness, an (initialisations, images) array per model, IG-F and SHAP-F
    included; and the post-hoc patch scores behind those two."""
    out = {name: np.array([sp.predict(m, X).argmax(1) == y for m in ms], float)
           for name, ms in models.items()}
    backbone = models["backbone"][0]
    pred = sp.predict(backbone, X).argmax(1)
    scores = {"igf": sp.posthoc_patch_scores(backbone, X, pred, PATCH, "ig"),
              "shapf": sp.posthoc_patch_scores(
                  backbone, X, pred, PATCH, "shap", n_samples=size.shap_orders,
                  seed=run.seed_of(f"{task}-shapley-orders"))}
    for name, s in scores.items():
        masked = sp.mask_patches(X, sp.top_patches(s, N_KEEP), PATCH)
        out[name] = (sp.predict(backbone, masked).argmax(1) == y)[None].astype(float)
    return out, scores


def best_other(means, others=GROUP_SANNS):
    """The largest of the other models' means (elementwise over replicates)."""
    return np.maximum.reduce([means[m] for m in others])


def accuracy_intervals(correct, task):
    """Each model's mean accuracy, SOP against the best group SANN, against the
    per-feature model and below the backbone: one bootstrap over images and
    initialisations (stream "bootstrap-<task>")."""
    contrasts = {m: (lambda a, m=m: a[m]) for m in correct}
    contrasts.update({
        "sop-minus-best-group": lambda a: a["sop"] - best_other(a),
        "sop-minus-nam": lambda a: a["sop"] - a["nam"],
        "backbone-minus-sop": lambda a: a["backbone"] - a["sop"],
    })
    return sp.bootstrap_inits_images(correct, contrasts, n_boot=size.n_boot,
                                     seed=run.seed_of(f"bootstrap-{task}"))


def claim_on(id, estimate, shown, what, reason=""):
    """A claim on a mean or a difference of means, with its interval over test images
    and initialisations; ``shown``: the figures behind it, ``what``: their names."""
    note = (f"ours: {what}; SOP averaged over {size.inits} initialisations; interval: "
            f"bootstrap over test images and initialisations{reason}")
    book.claim(id, estimate.value, interval=estimate.interval, shown=shown, note=note)


def best_name(acc, others=GROUP_SANNS):
    """The other group SANN with the highest mean accuracy."""
    return max(others, key=lambda m: acc[m].value)


# %% [markdown]
# ## 1. Two-motif XOR: accuracy and the groups found
#
# {glue:text}`n_train` training and {glue:text}`n_test` test images, each model trained
# for a fixed number of AdamW steps (batches of {glue:text}`batch` images).

# %%
train_xor = sp.two_motif_xor(size.n_train, seed=run.seed_of("xor-train"))
test_xor = sp.two_motif_xor(size.n_test, seed=run.seed_of("xor-test"))
xor_models, _ = fit_all(train_xor.X, train_xor.y, 2, task="xor")
xor_correct, xor_scores = correctness(xor_models, test_xor.X, test_xor.y, task="xor")
xor_acc = accuracy_intervals(xor_correct, "xor")
rows = np.arange(len(test_xor.y))
sop_purity, completeness, active = [], 0.0, []
for model in xor_models["sop"]:
    with torch.no_grad():
        out = model(torch.as_tensor(test_xor.X))
    pred = out.logits.argmax(1).numpy()
    top_group = out.attributions[rows, pred].abs().argmax(-1)
    sop_purity.append(sp.purity(out.masks[rows, top_group].numpy() > 0.5,
                                test_xor.motif_patches))
    completeness = max(completeness,
                       float((out.attributions.sum(-1) - out.logits).abs().max()))
    active.append(float((out.weights[rows, pred] > 0).sum(-1).float().mean()))
purity_values = {"sop": np.array(sop_purity)}
for name, s in xor_scores.items():
    purity_values[name] = sp.purity(sp.top_patches(s, N_KEEP),
                                    test_xor.motif_patches)[None]
purity = sp.bootstrap_inits_images(purity_values, n_boot=size.n_boot,
                                   seed=run.seed_of("bootstrap-xor-purity"))
xor_per_init = xor_correct["sop"].mean(1)
for m in xor_correct:
    book.glue(f"xor_{m}", xor_acc[m].value)
book.glue(n_train=f"{size.n_train:,}", n_test=f"{size.n_test:,}",
          purity_sop=purity["sop"].value, purity_igf=purity["igf"].value,
          purity_shapf=purity["shapf"].value, xor_active=float(np.mean(active)),
          completeness=completeness, xor_sop_low=float(xor_per_init.min()),
          xor_sop_high=float(xor_per_init.max()),
          xor_sop_below=int((xor_per_init < threshold("xor-sop-accuracy")).sum()),
          xor_sop_lo=xor_acc["sop"].low, xor_sop_hi=xor_acc["sop"].high)

# %% tags=["nbval-check-output"]
claim_on(
    "xor-sop-accuracy", xor_acc["sop"],
    {"lowest initialisation": float(xor_per_init.min()),
     "highest": float(xor_per_init.max())},
    "the lowest and highest initialisation's accuracy",
)
xor_best = best_name(xor_acc)
book.glue(xor_best_name=NAMES[xor_best],
          xor_best_gap=abs(xor_acc["sop-minus-best-group"].value),
          xor_vs_best="above" if xor_acc["sop-minus-best-group"].value > 0 else "below")
claim_on(
    "xor-best-sann", xor_acc["sop-minus-best-group"],
    {"SOP": xor_acc["sop"].value, NAMES[xor_best]: xor_acc[xor_best].value},
    "SOP's accuracy and the best other group SANN's (fixed patches, IG-F, SHAP-F; the "
    "best chosen in each resample)",
)
claim_on(
    "xor-beats-per-feature", xor_acc["sop-minus-nam"],
    {"SOP": xor_acc["sop"].value, "per-feature": xor_acc["nam"].value},
    "SOP, per-feature accuracies",
)
claim_on(
    "xor-purity", purity["sop"],
    {"IG-F": purity["igf"].value, "SHAP-F": purity["shapf"].value},
    "purity of the top 4 patches of IG-F and SHAP-F; a random group of 4 patches: 0.25",
)

# %% [markdown]
# On XOR the backbone reaches {glue:text}`xor_backbone:.3f`, SOP
# {glue:text}`xor_sop:.3f` on average over its initialisations, the fixed quadrants
# {glue:text}`xor_fixed:.3f`, IG-F {glue:text}`xor_igf:.3f`, SHAP-F
# {glue:text}`xor_shapf:.3f` and the per-feature model {glue:text}`xor_nam:.3f`
# ({numref}`fig-16-accuracy`). The per-feature model sits at chance, as the symmetry argument
# of the method notebook predicts. The two bars lie in different fixed quadrants, so no
# fixed group sees both; the selector's weights depend on the input and recover part of the
# interaction (a rule additive in the two bars could reach 75%). The "-F" models keep the
# four patches that a post-hoc explainer ranks highest for the backbone's own prediction,
# which on this toy are mostly the bars: the backbone on those four patches alone is a
# strong model, and SOP's mean accuracy is {glue:text}`xor_vs_best` that of the best of
# the other group-based models ({glue:text}`xor_best_name`), by
# {glue:text}`xor_best_gap:.3f`. SOP's groups are chosen per image; a share
# {glue:text}`purity_sop:.2f` of the patches of its most attributed group lie on the motifs,
# on average, where a random group of four patches would have 0.25; the top four patches of
# Integrated Gradients and of the Shapley values reach {glue:text}`purity_igf:.2f` and
# {glue:text}`purity_shapf:.2f`. SOP spreads its weight: on average
# {glue:text}`xor_active:.1f` of the {glue:text}`n_groups` groups get a non-zero sparsemax
# weight for the predicted class. Its attributions add up to its logits on every test image
# (largest difference {glue:text}`completeness:.1e`), by construction.
#
# SOP's accuracy depends on its initialisation: in this run its
# {glue:text}`n_inits` initialisations reach between {glue:text}`xor_sop_low:.3f` and
# {glue:text}`xor_sop_high:.3f`, and {glue:text}`xor_sop_below` of them stay below 90%.
# Which patches enter a group is never differentiated; the loss only sharpens or damps the
# candidates that the initial attention proposes (through $c_g$) and teaches the selector
# to pick among them, so a run whose candidates rarely hold both bars cannot learn its way
# out. The claims are on the mean over initialisations, and their intervals
# ({glue:text}`xor_sop_lo:.3f` to {glue:text}`xor_sop_hi:.3f` for the accuracy) include
# this spread. The verdicts in the chapter's table are the ledger's, pooled over run seeds,
# each seed with its own data, backbone and initialisations; this run's values are in the
# boxes.

# %% [markdown]
# ## 2. Digits: SOP among the self-attributing networks
#
# The digits are split at random into {glue:text}`digits_train` training and
# {glue:text}`digits_test` test images; the same models as above, with ten classes.

# %%
X_dig, y_dig = sp.load_digits_images()
order = run.rng("digits-split").permutation(len(y_dig))
test_idx, train_idx = order[:size.digits_test], order[size.digits_test:]
dig_models, backbone_curve = fit_all(X_dig[train_idx], y_dig[train_idx], 10,
                                     task="digits")
X_test, y_test = X_dig[test_idx], y_dig[test_idx]
dig_correct, dig_scores = correctness(dig_models, X_test, y_test, task="digits")
dig_acc = accuracy_intervals(dig_correct, "digits")
dig_per_init = dig_correct["sop"].mean(1)
for m in dig_correct:
    book.glue(f"dig_{m}", dig_acc[m].value)
gap = dig_acc["backbone-minus-sop"]
dig_top = max(("sop", "nam") + GROUP_SANNS, key=lambda m: dig_acc[m].value)
LONG_NAMES = {"sop": "SOP", "nam": "the per-pixel additive model",
              "fixed": "the fixed quadrants", "igf": "IG-F", "shapf": "SHAP-F"}
book.glue(digits_train=f"{len(train_idx):,}", digits_test=f"{len(test_idx):,}",
          n_groups=GROUPS, gap_backbone=gap.value, gap_lo=gap.low, gap_hi=gap.high,
          dig_top_name=f"{LONG_NAMES[dig_top]} ({dig_acc[dig_top].value:.3f})",
          dig_sop_low=float(dig_per_init.min()), dig_sop_high=float(dig_per_init.max()))


# %% tags=["remove-output"]
def accuracy_panel(ax, acc, correct, title, chance, names=NAMES):
    """Mean accuracies, their intervals, a dot per initialisation, chance dotted."""
    for i, m in enumerate(names):
        v, (lo, hi) = acc[m]
        ax.bar(i, v, color=COLOURS[m], width=0.7)
        err = [[max(v - lo, 0.0)], [max(hi - v, 0.0)]]  # rounding at 0 or 1
        ax.errorbar(i, v, yerr=err, color="k", capsize=3, lw=1)
        if len(correct[m]) > 1:  # one dot per initialisation
            inits = correct[m].mean(1)
            ax.plot(np.full(len(inits), i + 0.22), inits, "o", ms=2.5, mfc="white",
                    mec="k", mew=0.6)
        ax.text(i, min(hi + 0.03, 1.04), f"{v:.2f}", ha="center", fontsize=8)
    ax.set_xticks(range(len(names)), list(names.values()), rotation=35, fontsize=8)
    ax.set_title(title)
    ax.set_ylim(0, 1.1)
    ax.axhline(chance, color="0.5", lw=0.8, ls=":")


fig, axes = book.figure(2, height=3.0, sharey=True)
accuracy_panel(axes[0], xor_acc, xor_correct, "two-motif XOR", 0.5)
accuracy_panel(axes[1], dig_acc, dig_correct, "digits", 0.1)
axes[0].set_ylabel("test accuracy")
book.show_figure(fig, "fig_accuracy")

# %% [markdown]
# ```{glue:figure} fig_accuracy
# :alt: Two bar charts of mean test accuracy with error bars for six models: backbone, SOP, fixed patches, IG-F, SHAP-F and per-feature; small circles beside the SOP and fixed-patch bars mark each initialisation. On two-motif XOR the backbone and SOP are near 1, well above the fixed patches and the two -F models, and the per-feature model is near the dotted chance line at 0.5. On digits the backbone and the per-feature model are highest, SOP is lower, and its initialisations are spread over a wider range than the fixed patches'.
# :name: fig-16-accuracy
#
# **Learned groups keep the interaction that per-feature models and fixed patches lose on
# XOR; on digits SOP stays below its backbone and the per-pixel model.** Mean test accuracy
# over initialisations on two-motif XOR (left) and digits (right); error bars: 95%
# bootstrap over test images and initialisations; circles: one initialisation each;
# dotted: chance.
# ```

# %% tags=["nbval-check-output"]
dig_best = best_name(dig_acc)
claim_on(
    "digits-best-sann", dig_acc["sop-minus-best-group"],
    {"SOP": dig_acc["sop"].value, NAMES[dig_best]: dig_acc[dig_best].value,
     "backbone": dig_acc["backbone"].value},
    "SOP's accuracy, the best other group SANN's (fixed patches, IG-F, SHAP-F; the "
    "best chosen in each resample) and the backbone's",
)
claim_on(
    "digits-beats-per-feature", dig_acc["sop-minus-nam"],
    {"SOP": dig_acc["sop"].value, "per-feature": dig_acc["nam"].value},
    "SOP, per-feature accuracies",
    "; a per-pixel model needs no interaction on digits",
)

# %% [markdown]
# On digits SOP reaches {glue:text}`dig_sop:.3f` on average over its initialisations
# (from {glue:text}`dig_sop_low:.3f` to {glue:text}`dig_sop_high:.3f`), the fixed
# quadrants {glue:text}`dig_fixed:.3f`, IG-F {glue:text}`dig_igf:.3f`, SHAP-F
# {glue:text}`dig_shapf:.3f` and the per-pixel additive model {glue:text}`dig_nam:.3f`;
# the backbone reaches {glue:text}`dig_backbone:.3f`. The most accurate self-attributing
# model here is {glue:text}`dig_top_name`. The backbone leads SOP by
# {glue:text}`gap_backbone:.3f` (95% interval {glue:text}`gap_lo:.3f` to
# {glue:text}`gap_hi:.3f`), a figure we report rather than test: the paper's own SOP is
# 16.6 points below its backbone on ImageNet (0.737 against 0.903), and what the paper
# claims is that SOP is the best of the self-attributing models. Two things work against
# SOP on digits at this scale. The task needs little interaction between pixels, so the
# per-feature model's lower bound does not bite, and the "-F" models, which keep the
# quarter of the image that the backbone's own attributions rank highest for its own
# prediction, lose little of the backbone's accuracy. And SOP's groups cost accuracy: each
# shows the backbone a quarter of the image, and for each class the sparsemax weights sum
# to one, so the logit is a weighted *average* of the groups' logits, and evidence from
# several quarters does not add up. SOP's digit accuracy also varies more between
# initialisations than the fixed quadrants'. What the groups look like, for the first
# initialisation:

# %% tags=["remove-output"]
with torch.no_grad():
    dig_out = dig_models["sop"][0](torch.as_tensor(X_test[:6]))
fig, axes = book.figure(6, 2, height=1.35)
grid = sp.patch_grid((8, 8), PATCH)
for j in range(6):
    c = int(dig_out.logits[j].argmax())
    attr = dig_out.attributions[j, c].numpy()
    g = int(np.abs(attr).argmax())
    mask = np.einsum("p,phw->hw", dig_out.masks[j, g].numpy(), grid)
    axes[0, j].imshow(X_test[j, 0], cmap="Greys")
    axes[0, j].set_title(f"predicted {c}", fontsize=8)
    axes[1, j].imshow(X_test[j, 0] * mask, cmap="Greys", vmin=0, vmax=1)
    axes[1, j].contour(mask, levels=[0.5], colors=[COLOURS["sop"]], linewidths=1)
    share = attr[g] / dig_out.logits[j, c].item()
    axes[1, j].set_title(f"{share:.0%} of logit", fontsize=8)
for ax in axes.flat:
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
book.show_figure(fig, "fig_digit_groups")

# %% [markdown]
# ```{glue:figure} fig_digit_groups
# :alt: Six test digits in the top row, each labelled with SOP's predicted class; below each, the same digit with only the pixels of its most attributed group visible, outlined in blue, and the share of the class logit that group carries.
# :name: fig-16-digit-groups
#
# **Each prediction rests on a few groups of a quarter of the image, and the most
# attributed one can be shown and measured.** Top: test digits. Bottom: the pixels of the
# group with the largest attribution to the predicted class, and its share of the logit
# (shares of several groups can exceed 100% or be negative: they add up to the logit).
# ```

# %% [markdown]
# ## 3. Language: SOP over the tokens of a sentence
#
# The paper's language task is MultiRC, with a fine-tuned BERT as the backbone; neither
# can be had offline. The language test here is sentiment: the 5,000 SST-2 sentences and
# phrases {cite}`socher2013recursive` that ship in the package `sae-probes` (label:
# positive or negative), split at random into {glue:text}`sst2_train` training and
# {glue:text}`sst2_test` test texts. Tokens play the part of the patches. Each text is
# cut to its first 16 WordPiece tokens (a quarter of them are longer), and each token is
# all-MiniLM-L6-v2's *input* embedding of it (the model's layer 0: word plus position
# embedding, normalised; `icml25.minilm`) projected on the top 32 principal axes of the
# model's word-embedding table, plus a feature that is 1 for a token and 0 for padding.
# Those embeddings are not contextual, so masking is exact: a group's tokens read the
# same whatever the masked tokens were, and a masked token is a padding token (all its
# features zero). The features are computed once from the package's model and committed
# (`sp.load_tokens`).
#
# The frozen backbone (`sp.TokenBackbone`) runs a small network on each token, averages
# over the tokens present and classifies the average with a second small network; it is
# trained first with random token masking, as the image backbone is with random patch
# masking. The models built on it are the image models with tokens for patches: **SOP**
# (`sp.TokenSumOfParts`: the same generator, selector and settings, each group 4 of the
# 16 tokens; no blur, which is defined over an image grid), **contiguous tokens** (SOP's
# selector over four fixed groups of 4 consecutive tokens, the text's quadrants),
# **IG-F** and **SHAP-F** (the backbone on the 4 tokens that Integrated Gradients or
# Shapley sampling over the tokens rank highest), and the **per-feature SANN** over
# tokens (`sp.PerTokenAdditive`: one small network scores each token, and the scores add
# up to the logit, a neural additive bag of tokens). SOP and the contiguous groups are
# trained from {glue:text}`n_inits` initialisations each, for {glue:text}`text_steps`
# AdamW steps on batches of {glue:text}`text_batch` texts (fewer than on images, to keep
# the chapter's run short); the backbone and the per-token model as on images.

# %%
tokens = sp.load_tokens()
T, F = tokens.X.shape[1:]  # 16 tokens of 32 + 1 features
order_text = run.rng("sst2-split").permutation(len(tokens.y))
sst2_test_idx = order_text[:size.text_test]
sst2_train_idx = order_text[size.text_test:size.text_test + size.text_train]
X_tr, y_tr = tokens.X[sst2_train_idx], tokens.y[sst2_train_idx]
X_te, y_te = tokens.X[sst2_test_idx], tokens.y[sst2_test_idx]
CONTIGUOUS = sp.contiguous_groups(T, 4)
text_backbone = sp.TokenBackbone(F, 2, seed=run.seed_of("sst2-backbone-init"))
sp.train(text_backbone, X_tr, y_tr, steps=size.backbone_steps, batch_size=size.batch,
         seed=run.seed_of("sst2-backbone-batches"), mask_tokens=True)
inits = np.random.SeedSequence(run.seed_of("sst2-sop-init")).spawn(size.inits)
batches = np.random.SeedSequence(
    run.seed_of("sst2-selector-batches")).spawn(size.inits)
runs, kinds = [], []
for init, batch_seed in zip(inits, batches):
    sop = sp.TokenSumOfParts(text_backbone, T, F, k=K, n_groups=GROUPS,
                             gen_scale=GEN_SCALE, seed=init)
    fixed = sp.TokenSumOfParts(text_backbone, T, F, fixed_groups=CONTIGUOUS,
                               n_groups=len(CONTIGUOUS), seed=init)
    for kind, model in (("sop", sop), ("fixed", fixed)):  # the same batches
        runs.append((model, X_tr, y_tr, dict(steps=size.text_sop_steps, lr=LR,
                                             batch_size=size.text_batch,
                                             seed=batch_seed)))
        kinds.append(kind)
runs.append((sp.PerTokenAdditive(F, 2, seed=run.seed_of("sst2-nam-init")), X_tr, y_tr,
             dict(steps=size.nam_steps, batch_size=size.batch,
                  seed=run.seed_of("sst2-nam-batches"))))
# as tensors, the texts reach the worker processes as copies, not read-only memory maps
runs = [(model, torch.as_tensor(X), torch.as_tensor(y), kw) for model, X, y, kw in runs]
kinds.append("nam")
text_models = {"backbone": [text_backbone], "sop": [], "fixed": [], "nam": []}
for kind, (model, _) in zip(kinds, sp.train_many(runs, n_jobs=size.jobs)):
    text_models[kind].append(model)
sst2_correct = {name: np.array([sp.predict(m, X_te).argmax(1) == y_te for m in ms],
                               float)
                for name, ms in text_models.items()}
pred_te = sp.predict(text_backbone, X_te).argmax(1)
text_scores = {"igf": sp.posthoc_token_scores(text_backbone, X_te, pred_te, "ig"),
               "shapf": sp.posthoc_token_scores(
                   text_backbone, X_te, pred_te, "shap", n_samples=size.shap_orders,
                   seed=run.seed_of("sst2-shapley-orders"))}
sst2_agree = {}  # share of texts on which the "-F" model predicts as the backbone
for name, s in text_scores.items():
    kept = sp.mask_tokens(X_te, sp.top_patches(s, N_KEEP))
    kept_pred = sp.predict(text_backbone, kept).argmax(1)
    sst2_correct[name] = (kept_pred == y_te)[None].astype(float)
    sst2_agree[name] = float((kept_pred == pred_te).mean())
    book.glue(f"sst2_{name}_agree", sst2_agree[name])
sst2_acc = accuracy_intervals(sst2_correct, "sst2")
sst2_per_init = sst2_correct["sop"].mean(1)
for m in sst2_correct:
    book.glue(f"sst2_{m}", sst2_acc[m].value)
sst2_top = max(("sop", "nam") + GROUP_SANNS, key=lambda m: sst2_acc[m].value)
TEXT_NAMES = dict(NAMES, fixed="contiguous tokens", nam="per-token")
TEXT_LONG = dict(LONG_NAMES, fixed="the contiguous groups",
                 nam="the per-token additive model")
book.glue(sst2_train=f"{len(sst2_train_idx):,}", sst2_test=f"{len(sst2_test_idx):,}",
          text_steps=size.text_sop_steps, text_batch=size.text_batch,
          sst2_top_name=f"{TEXT_LONG[sst2_top]} ({sst2_acc[sst2_top].value:.3f})",
          sst2_sop_low=float(sst2_per_init.min()),
          sst2_sop_high=float(sst2_per_init.max()),
          sst2_vs_best="above" if sst2_acc["sop-minus-best-group"].value > 0
          else "below",
          sst2_vs_nam="above" if sst2_acc["sop-minus-nam"].value > 0 else "below")

# %% tags=["nbval-check-output"]
sst2_best = best_name(sst2_acc)
claim_on(
    "sst2-best-sann", sst2_acc["sop-minus-best-group"],
    {"SOP": sst2_acc["sop"].value, TEXT_NAMES[sst2_best]: sst2_acc[sst2_best].value,
     "backbone": sst2_acc["backbone"].value},
    "SOP's accuracy, the best other group SANN's (contiguous tokens, IG-F, SHAP-F; the "
    "best chosen in each resample) and the backbone's",
)
claim_on(
    "sst2-beats-per-feature", sst2_acc["sop-minus-nam"],
    {"SOP": sst2_acc["sop"].value, "per-token": sst2_acc["nam"].value},
    "SOP, per-token additive model accuracies",
)

# %% tags=["remove-output"]
fig, ax = book.figure(1, height=3.0)
accuracy_panel(ax, sst2_acc, sst2_correct, "SST-2 sentiment (16 tokens)", 0.5,
               TEXT_NAMES)
ax.set_ylabel("test accuracy")
book.show_figure(fig, "fig_sst2_accuracy")

# %% [markdown]
# ```{glue:figure} fig_sst2_accuracy
# :alt: A bar chart of mean test accuracy on SST-2 sentiment with error bars for six models: backbone, SOP, contiguous tokens, IG-F, SHAP-F and per-token; small circles beside the SOP and contiguous-token bars mark each initialisation; a dotted line marks chance at 0.5.
# :name: fig-16-sst2-accuracy
#
# **SOP among the self-attributing models on a language task.** Mean test accuracy over
# initialisations on SST-2 sentiment, the first 16 tokens of each text; error bars: 95%
# bootstrap over test texts and initialisations; circles: one initialisation each;
# dotted: chance.
# ```

# %% [markdown]
# On SST-2 the backbone reaches {glue:text}`sst2_backbone:.3f`, SOP
# {glue:text}`sst2_sop:.3f` on average over its initialisations (from
# {glue:text}`sst2_sop_low:.3f` to {glue:text}`sst2_sop_high:.3f`), the contiguous
# groups {glue:text}`sst2_fixed:.3f`, IG-F {glue:text}`sst2_igf:.3f`, SHAP-F
# {glue:text}`sst2_shapf:.3f` and the per-token additive model
# {glue:text}`sst2_nam:.3f` ({numref}`fig-16-sst2-accuracy`); the most accurate
# self-attributing model here is {glue:text}`sst2_top_name`. IG-F and SHAP-F predict as
# the backbone does on {glue:text}`sst2_igf_agree:.1%` and
# {glue:text}`sst2_shapf_agree:.1%` of the test texts: the backbone averages over the
# tokens present, so the four tokens that its attributions rank highest for its own
# prediction tend to carry that prediction on their own, and the "-F" models keep the
# backbone's accuracy to the extent that they keep its predictions. SOP's mean accuracy is
# {glue:text}`sst2_vs_best` that of the best other group-based model and
# {glue:text}`sst2_vs_nam` that of the per-token model, in this run; the boxes give the
# differences with their intervals, and the chapter's table the verdicts pooled over
# seeds. Sentiment is largely carried by single words, so a bag of tokens scored one by
# one is a strong self-attributing model on this task, as the per-pixel model is on
# digits; and a group of 4 tokens sees at most a quarter of a text, as a group sees a
# quarter of an image. SOP's most attributed group on four test texts, for its first
# initialisation (tokens outside the group in brackets):

# %%
with torch.no_grad():
    text_out = text_models["sop"][0](torch.as_tensor(X_te[:4]))
for j in range(4):
    c = int(text_out.logits[j].argmax())
    g = int(text_out.attributions[j, c].abs().argmax())
    words = tokens.words(sst2_test_idx[j], text_out.masks[j, g].numpy() > 0.5)
    label = ("negative", "positive")[c]
    print(textwrap.fill(f"{label:>8} ({'right' if c == y_te[j] else 'wrong'}): "
                        + " ".join(words), width=80, subsequent_indent=" " * 17))

# %% [markdown]
# ## 4. Faithfulness: insertion and deletion
#
# The paper scores explanations by revealing patches in order of attribution (insertion,
# higher is better) or removing them (deletion, lower is better) in 10 steps from 10% to
# 100% and averaging the probability of the predicted class. Each attribution is scored on
# the model it explains: SOP's group attributions (spread evenly over each group's patches,
# `sp.sop_patch_scores`) on SOP, for each initialisation; Integrated Gradients, Shapley
# value sampling and patch ablation (`captum.attr.FeatureAblation`) on the backbone.
# {glue:text}`curve_images` digit test images.

# %%
n_c = size.curve_images
X_c = X_test[:n_c]
backbone = dig_models["backbone"][0]
target_bb = sp.predict(backbone, X_c).argmax(1)
posthoc = {"igf": dig_scores["igf"][:n_c], "shapf": dig_scores["shapf"][:n_c],
           "ablation": sp.posthoc_patch_scores(backbone, X_c, target_bb, PATCH,
                                               "ablation")}
curves = {name: [sp.insertion_deletion(lambda z: sp.predict(backbone, z), X_c, scores,
                                       target_bb, PATCH, steps=10)]
          for name, scores in posthoc.items()}
curves["sop"] = []
for model in dig_models["sop"]:
    with torch.no_grad():
        out_c = model(torch.as_tensor(X_c))
    target = out_c.logits.argmax(1).numpy()
    curves["sop"].append(sp.insertion_deletion(
        lambda z, m=model: sp.predict(m, z), X_c, sp.sop_patch_scores(out_c, target),
        target, PATCH, steps=10))
# areas: (initialisations, images) per attribution, insertion [0] and deletion [1]
areas = {i: {name: np.array([pair[i].mean(1) for pair in runs])
             for name, runs in curves.items()} for i in (0, 1)}
POSTHOC = tuple(posthoc)
faith = sp.bootstrap_inits_images(
    {f"{i}-{name}": v for i, per in areas.items() for name, v in per.items()},
    {"insertion": lambda a: a["0-sop"] - np.maximum.reduce(
        [a[f"0-{m}"] for m in POSTHOC]),
     "deletion": lambda a: a["1-sop"] - np.minimum.reduce(
         [a[f"1-{m}"] for m in POSTHOC])},
    n_boot=size.n_boot, seed=run.seed_of("bootstrap-faithfulness"))
# insertion relative to the model's own probability on the whole image (last point)
relative = {name: float(np.mean([(ins / np.maximum(ins[:, -1:], 1e-6)).mean()
                                 for ins, _ in runs]))
            for name, runs in curves.items()}
mean_area = {i: {name: float(v.mean()) for name, v in per.items()}
             for i, per in areas.items()}
best_ins = max(POSTHOC, key=lambda m: mean_area[0][m])
best_del = min(POSTHOC, key=lambda m: mean_area[1][m])
LABELS = {"sop": "SOP (on SOP)", "igf": "Integrated Gradients (on backbone)",
          "shapf": "Shapley sampling (on backbone)",
          "ablation": "patch ablation (on backbone)"}
for name in curves:
    book.glue(f"ins_{name}", mean_area[0][name])
    book.glue(f"del_{name}", mean_area[1][name])
    book.glue(f"rel_{name}", relative[name])
book.glue(curve_images=n_c)

# %% tags=["remove-output"]
fig, axes = book.figure(2, height=3.0, sharey=True)
fractions = np.arange(1, 11) / 10
for i, (ax, title) in enumerate(zip(axes, ("insertion (higher is better)",
                                           "deletion (lower is better)"))):
    for name, runs in curves.items():
        mean_curve = np.mean([pair[i].mean(0) for pair in runs], 0)
        ax.plot(fractions, mean_curve, "o-", ms=3, color=COLOURS[name],
                label=f"{LABELS[name]}: {mean_area[i][name]:.2f}")
    ax.set_xlabel("share of patches revealed" if i == 0 else "share of patches removed")
    ax.set_title(title)
axes[0].set_ylabel("probability of the predicted class")
axes[0].legend(loc="upper center", bbox_to_anchor=(1.0, -0.22), ncol=2, fontsize=8)
book.show_figure(fig, "fig_insdel")

# %% [markdown]
# ```{glue:figure} fig_insdel
# :alt: Two line plots against the share of patches from 0.1 to 1. Left, insertion: the probability of the predicted class rises as patches are revealed, for SOP, Integrated Gradients, Shapley sampling and patch ablation. Right, deletion: it falls as patches are removed. The legend gives each method's area.
# :name: fig-16-insdel
#
# **Insertion and deletion of digit patches in the order of each attribution.** Mean over
# test images (and, for SOP, over its initialisations) of the probability of the
# predicted class; the legend gives each curve's area (its mean).
# ```

# %% tags=["nbval-check-output"]
claim_on(
    "insertion", faith["insertion"],
    {"SOP": mean_area[0]["sop"], f"best post-hoc ({LABELS[best_ins].split(' (')[0]})":
     mean_area[0][best_ins]},
    "SOP's area and the best post-hoc one (the best chosen in each resample)",
    "; SOP is less confident on whole digits than its backbone, which caps its curve",
)
claim_on(
    "deletion", faith["deletion"],
    {"SOP": mean_area[1]["sop"], f"best post-hoc ({LABELS[best_del].split(' (')[0]})":
     mean_area[1][best_del]},
    "SOP's area and the best post-hoc one (the best chosen in each resample)",
)

# %% [markdown]
# Insertion areas: SOP {glue:text}`ins_sop:.3f`, Integrated Gradients
# {glue:text}`ins_igf:.3f`, Shapley sampling {glue:text}`ins_shapf:.3f`, patch ablation
# {glue:text}`ins_ablation:.3f`; deletion areas: {glue:text}`del_sop:.3f`,
# {glue:text}`del_igf:.3f`, {glue:text}`del_shapf:.3f`, {glue:text}`del_ablation:.3f`
# ({numref}`fig-16-insdel`). The comparison is between explanations of two different
# models, each on its own model, which is what faithfulness asks; SOP on a partly zeroed
# image recomputes its groups, so its curve measures the whole self-attributing model.
# Both areas mix the ranking with the model's confidence: SOP is less accurate and less
# confident than its backbone on whole digits, which lowers its insertion curve and helps
# its deletion curve alike. Divided by each model's own probability on the whole image
# (the last point of the curve, as the authors' metric code also reports it; a reading
# chosen after an earlier run, not a claim), the insertion areas are
# {glue:text}`rel_sop:.3f` for SOP, {glue:text}`rel_igf:.3f` for Integrated Gradients,
# {glue:text}`rel_shapf:.3f` for Shapley sampling and {glue:text}`rel_ablation:.3f` for
# patch ablation. The same confidence effect, and SOP's accuracy varying between
# initialisations, move both areas from initialisation to initialisation and from seed to
# seed; the intervals above include the first, and the ledger pools the second.
#
# ## What differs from the paper, and why
#
# * **Scale.** 8x8 images, 16 patches, an MLP backbone and a few hundred AdamW steps,
#   instead of ImageNet at 224x224 with a ViT-B/16, 196 patches, 200 candidates and 20
#   sampled groups. Purity is measured against planted motifs, not ImageNet-S segments.
# * **The model** follows the authors' library: attention candidates with a 3x3 Gaussian
#   blur over the patch grid, hard top-$k$ masks whose only gradient path is the scalar
#   $c_g$, groups kept at evenly spaced indices, a sparsemax selector with the classifier
#   weights as queries and identity-initialised projections, zero occlusion. Our
#   projection adds a learned position embedding (the paper's candidates come from a ViT,
#   whose patch tokens carry one), the projection and selector are trained with one AdamW
#   learning rate instead of per-head inverse-square-root schedules, and there is one
#   attention head. The attention scale $s_{gg}=4/\sqrt{D_e}$ was chosen on the training
#   loss of SOP (see the method notebook), and SOP's learning rate ($10^{-2}$ against
#   $3\cdot10^{-3}$) in a small trial run on two-motif XOR with other data and initialisations,
#   before the runs shown here.
# * **The backbone is trained here with random patch masking**, so that the masked images
#   it sees inside SOP are in its training distribution; the paper's ImageNet backbone
#   tolerates masking as it is. Without masking a small MLP fails on masked inputs (an
#   exercise of the method notebook).
# * **Baselines.** The per-feature SANN is a neural additive model (the paper's table has
#   none; its lower bound is about this class); the fixed-patch model is SOP's selector
#   over four fixed quadrants (BagNet's idea at this scale); IG-F and SHAP-F are the
#   paper's "-F" construction with Integrated Gradients and with Shapley values estimated
#   from {glue:text}`shap_orders` random orders of the patches (captum's
#   `ShapleyValueSampling`, instead of the `shap` package's KernelSHAP), keeping 25% of the
#   patches as SOP's groups do (the paper keeps 10% of 196). LIME-F, FRESH, XDNN and B-cos
#   are not run.
# * **Initialisations.** SOP and the fixed patches are trained from
#   {glue:text}`n_inits` initialisations per run and their mean is compared; the paper
#   reports one trained model per task.
# * **On another CPU.** Which patches enter a group is a hard top-$k$ of the attention,
#   and the patches IG-F keeps are the top four of scores that nearly tie on blank patches.
#   When the last bit of one product changes (MKL takes another code path on a CPU not made
#   by Intel), such a choice can flip, and a model trained on it ends in another basin: for
#   SOP and the group baselines a changed bit is a fresh draw of their training luck, and
#   one initialisation out of {glue:text}`n_inits` that lands elsewhere moves a mean
#   accuracy by several points, while the backbone's accuracy moves in its third digit at
#   most. The tests that re-execute this notebook under other numerics therefore allow these
#   figures the move measured that way (each claim's declaration records it), and the
#   verdict to read is the one pooled over seeds.
# * **Insertion and deletion** use 10 steps from 10% to 100% of the patches as the authors'
#   metric does, each explanation on its own model; the intervals use
#   {glue:text}`n_boot` bootstrap resamples instead of four.
# * **Language.** SST-2 sentiment with its first 16 tokens instead of MultiRC with a
#   fine-tuned BERT: the backbone reads MiniLM's non-contextual input embeddings (reduced
#   to 32 principal axes of the embedding table), pooled over the tokens, so masking a
#   token removes it exactly, where a transformer backbone would still see the masked
#   tokens' positions and its context would shift. The per-feature model scores each
#   token with one network shared by all positions; the contiguous groups play the part of
#   the fixed patches. SOP and the contiguous groups train for
#   {glue:text}`text_steps` steps, fewer than on images, to keep the chapter's run short.
# * **Not reproduced.** CosmoGrid and MultiRC, the semantic evaluations, the debugging and
#   cosmology case studies, and the paper's lower bound in its insertion-error form (the
#   method notebook shows the squared-error analogue).
#
# ## Exercise
#
# ```{exercise} More groups, or larger ones?
# :label: ex-16-groups
#
# **Level:** medium · **Time:** about 15 minutes.
#
# On two-motif XOR, retrain SOP on the same backbone with $k=0.125$ (groups of 2 patches)
# and with $k=0.5$ (8 patches), other settings unchanged. Which accuracy and which purity
# do you expect, before running it?
# ```
#
# ```{solution-start} ex-16-groups
# :class: dropdown
# ```
#
# The first guess: with 2 patches a group cannot hold both bars (four patches), so no
# group's logit can see the interaction, and the accuracy should fall towards chance. With 8
# patches a group can hold both bars and more: accuracy stays high, but purity is at most
# one half, since each group is then at least half background. The run tests the guess.

# %%
K_EXERCISE = (0.125, 0.5)  # the same initialisation and batches for both sizes
runs = [(sp.SumOfParts(xor_models["backbone"][0], (8, 8), PATCH, k=k_ex,
                       n_groups=GROUPS, gen_scale=GEN_SCALE,
                       seed=run.seed_of("ex-group-size-init")),
         train_xor.X, train_xor.y,
         dict(steps=size.sop_steps, batch_size=size.batch,
              seed=run.seed_of("ex-group-size-batches"), lr=LR))
        for k_ex in K_EXERCISE]
for k_ex, (model, _) in zip(K_EXERCISE, sp.train_many(runs, n_jobs=size.jobs)):
    with torch.no_grad():
        out = model(torch.as_tensor(test_xor.X))
    p = out.logits.argmax(1).numpy()
    g = out.attributions[rows, p].abs().argmax(-1)
    pur = sp.purity(out.masks[rows, g].numpy() > 0.5, test_xor.motif_patches).mean()
    acc = (p == test_xor.y).mean()
    print(f"k = {k_ex:5.3f}: accuracy {acc:.3f}, purity of the top group {pur:.2f}")
    book.glue(f"ex_k{int(k_ex * 1000)}", float(acc))

# %% [markdown]
# Accuracy {glue:text}`ex_k125:.3f` with groups of 2 patches and
# {glue:text}`ex_k500:.3f` with groups of 8. With groups of 2 the first guess is wrong: the
# accuracy falls, but stays well above chance (0.5). The guess forgot where the groups come
# from. The group generator (`SumOfParts.candidates`) attends over the *whole* image, so
# *which* two patches it keeps already depends on both bars: the choice of the mask carries
# part of the interaction that no 2-patch group can compute from its pixels. That is a leak
# of the kind a self-attributing model must watch for, since the attribution then credits
# groups for evidence that sits in their selection, not in them.
#
# ```{solution-end}
# ```

# %%
book.finish()
