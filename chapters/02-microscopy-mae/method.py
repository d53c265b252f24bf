# %% [markdown]
# # The method: curate, train a masked autoencoder, pick the best block
#
# A phenomics screen knocks out thousands of genes, one per well, photographs the cells
# in several stains and asks which genes change the cells *in the same way*: genes of
# one pathway or complex should. Kenyon-Dean et al. {cite}`kenyondean2025vitally` scale
# the image encoder of such maps, a masked autoencoder (MAE) {cite}`he2022mae`, to a
# ViT-G/8 with 1.9 B parameters:
#
# > we present a framework for pretraining on large-scale microscopy datasets that
# > includes three steps: (1) curating a set of diverse and self-consistent training
# > samples, (2) scaling training of an appropriate foundation model architecture on
# this
# > dataset, (3) evaluating intermediate layers of the trained model to identify the
# best
# > representation for downstream tasks. (Kenyon-Dean et al., 2025, abstract)
#
# The maps are scored by the EFAAR pipeline of Celik et al. {cite}`celik2024efaar`:
# embed each well, align the plates on their control wells by typical variation
# normalisation (TVN) {cite}`ando2017tvn`, aggregate the wells of each gene, relate
# genes by cosine similarity, and count how many known relationships land in the tails.
# This notebook builds each piece on a synthetic screen you can look at; [the
# reproduction](reproduction.ipynb) runs the experiments.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import numpy as np
import torch
from scipy.stats import binomtest

from icml25 import book
from icml25 import microscopy_mae as M

from _chapter import model_colours

SIZES = {
    "quick": dict(crops_per_well=1, n_show=6),
    "book": dict(crops_per_well=4, n_show=6),
    "paper": dict(crops_per_well=8, n_show=6),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
models, info = M.load_models(0)  # training seed 0: the models this notebook shows
W = info["main_width"]
MAIN = f"curated_{W}"
mae = models[MAIN][0]
COLOURS = model_colours(info)

# %% [markdown]
# ## A screen with planted pathways
#
# `M.make_screen` draws a screen whose answer is known. A crop holds one cell in four
# channels: **nucleus** (with chromatin texture), **cytoplasm**, **membrane** and
# **organelles** (a striped texture). Eight traits shape the drawing: nucleus size, cell
# size, elongation, the nucleus' offset, membrane brightness, organelle texture contrast
# and scale, chromatin contrast. Each pathway has a direction in trait space; each of
# its genes moves the traits along that direction (plus a little of its own), so genes
# of one pathway look alike; null genes and control wells move nothing. Cells vary
# around their gene's mean, and each **plate** has its own batch effects: a shift of
# every cell's traits (culture conditions), channel gains and offsets, an illumination
# gradient and pixel noise. Every gene has one well per plate, and every plate has
# control wells.

# %%
screen = M.make_screen(n_pathways=4, pathway_size=4, n_null=4, controls_per_plate=64,
                       crops_per_well=size.crops_per_well,
                       seed=run.seed_of("example-screen"))
print(f"{len(screen.gene_pathway)} genes ({(screen.gene_pathway >= 0).sum()} in 4 "
      f"pathways), {len(screen.well_gene)} wells on 4 plates, "
      f"{len(screen.images):,} crops of shape {screen.images.shape[1:]}")


def first_crop(gene, plate):
    """Index of the first crop of ``gene``'s well on ``plate`` (-1: a control well)."""
    wells = np.flatnonzero((screen.well_gene == gene) & (screen.well_plate == plate))
    return int(np.flatnonzero(screen.crop_well == wells[0])[0])


def composite(img):
    """An RGB picture of a normalised 4-channel crop: nucleus blue, cytoplasm green,
    membrane red, organelles yellow."""
    x = M.normalise_crops(img)
    x = np.clip((x + 1) / 4, 0, 1)
    rgb = np.stack([x[2] + 0.6 * x[3], x[1] + 0.6 * x[3], x[0]], -1)
    return np.clip(rgb, 0, 1)


# %% tags=["remove-output"]
show = {"control": -1, "pathway 0, gene a": 0, "pathway 0, gene b": 1,
        "pathway 1": 4, "null gene": 16}
fig, axes = book.figure(len(show), 2, height=1.6)
for j, (label, gene) in enumerate(show.items()):
    for i, plate in enumerate((0, 1)):
        ax = axes[i, j]
        ax.imshow(composite(screen.images[first_crop(gene, plate)]))
        ax.set_xticks([])
        ax.set_yticks([])
        if i == 0:
            ax.set_title(label, fontsize=8)
    axes[0, 0].set_ylabel("plate 1", fontsize=8)
    axes[1, 0].set_ylabel("plate 2", fontsize=8)
book.show_figure(fig, "fig_crops")

# %% [markdown]
# ```{glue:figure} fig_crops
# :alt: A grid of ten synthetic cell crops, five columns (a control well, two genes of pathway 0, a gene of pathway 1, a null gene) and two rows (plate 1 and plate 2), each a false-colour composite with the nucleus in blue, cytoplasm in green, membrane in red and organelles in yellow.
# :name: fig-02-crops
#
# **One crop per well, two plates.** Genes of one pathway shift the same traits; a
# single cell is noisy, so the signal shows only when a well's crops are averaged.
# Colours: nucleus blue, cytoplasm green, membrane red, organelles yellow.
# ```

# %% [markdown]
# Before the model sees a crop, each channel of each crop is standardised to zero mean
# and unit variance, the paper's per-image channel normaliser. That removes the plates'
# channel gains and offsets but not their illumination gradients, nor the shifts of the
# cells themselves: those are left for the alignment on controls.
#
# ## The masked autoencoder
#
# The crop is cut into 4x4 patches (36 tokens). A random 75% of them is dropped; the
# encoder, a ViT {cite}`dosovitskiy2021vit` of six pre-norm blocks with LayerScale and
# normalised queries and keys, sees the other nine; a two-block decoder puts mask tokens
# back in place and predicts the pixels of every patch. The loss is the paper's:
#
# $$
# \mathcal L = \frac{\sum_i m_i \lVert \hat x_i - x_i \rVert^2 / D}{\sum_i m_i}
#   + \alpha \cdot \frac{1}{NCHW} \sum \big|\,|\mathcal F(\hat x)| - |\mathcal
#   F(x)|\,\big|,
# \qquad \alpha = 0.01,
# $$
#
# the mean squared error on the masked patches ($m_i = 1$) plus the mean absolute
# difference of the 2-D Fourier magnitudes of the reconstruction and the crop, which
# asks the decoder to get textures right even where it cannot place them. In
# `mae_loss`, `mse` is the first term (`.mean(-1)` is the $1/D$, `mask` the $m_i$) and
# `four` the second, which `fourier_loss` computes from the whole reconstructed crop,
# every patch predicted: its final `.mean()` is the $1/NCHW$. Our transform is the
# orthonormal FFT, so the term is the authors' released `FourierLoss` divided by
# $\sqrt{HW}$ ([Against the authors' code](../../book/authors.md)): our $\alpha = 0.01$
# weighs the term $\sqrt{HW}$ times less than theirs at the same $\alpha$.
#
# ```{literalinclude} /lib/icml25/microscopy_mae/model.py
# :pyobject: mae_loss
# :caption: `icml25.microscopy_mae.mae_loss`: the training objective $\mathcal L$
# :language: python
# ```
#
# ```{literalinclude} /lib/icml25/microscopy_mae/model.py
# :pyobject: fourier_loss
# :caption: `icml25.microscopy_mae.fourier_loss`: the Fourier-magnitude term
# :language: python
# ```
#
# The models were trained with the Lion optimiser {cite}`chen2023lion`, as in the
# paper, by `python -m icml25.microscopy_mae train data/microscopy_mae/models.pt`: first
# on the whole pre-training screen (uncurated), then on its curated subset at widths
# {glue:text}`widths_text`, each for the same number of steps. Their training records:

# %% tags=["remove-output"]
fig, axes = book.figure(2, height=2.7)
for name, (_, rec) in models.items():
    label = name.replace("_", ", width ")
    axes[0].plot(rec["step"], rec["mse"], color=COLOURS[name], label=label)
    axes[1].plot(rec["step"], rec["fourier"], color=COLOURS[name])
axes[0].set_ylabel("masked-patch MSE")
axes[1].set_ylabel("Fourier-magnitude L1")
for ax in axes:
    ax.set_xlabel("step")
fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3,
           fontsize=8)
book.show_figure(fig, "fig_training")
book.glue(widths_text=" and ".join(str(w) for w in sorted(info["widths"])),
          final_mse=models[MAIN][1]["mse"][-1])

# %% [markdown]
# ```{glue:figure} fig_training
# :alt: Two line charts over training steps for three models (uncurated width 64, curated width 32, curated width 64). Left, the masked-patch mean squared error falls from about 1.2; right, the Fourier-magnitude term falls too.
# :name: fig-02-training
#
# **Training curves of the committed models, from their checkpoint.** The two terms of
# the loss, averaged over 25 steps; normalised pixels, so 1 is the error of predicting
# the mean.
# ```
#
# The main model ends at a masked-patch MSE of {glue:text}`final_mse:.3f`. What it
# reconstructs from a quarter of the patches:

# %% tags=["remove-output"]
x = torch.from_numpy(M.normalise_crops(screen.images[:size.n_show]))
with torch.no_grad():
    pred, target, mask = mae(x, generator=torch.Generator().manual_seed(
        run.seed_of("example-masks")))
masked = mae.unpatchify(target * (1 - mask)[..., None], 4).numpy()
recon = mae.unpatchify(torch.where(mask[..., None] > 0, pred, target), 4).numpy()
fig, axes = book.figure(size.n_show, 3, height=1.3)
for j in range(size.n_show):
    rows = ((x.numpy()[j], "crop"), (masked[j], "visible 25%"),
            (recon[j], "reconstruction"))
    for i, (img, label) in enumerate(rows):
        ax = axes[i, j]
        ax.imshow(np.clip((img[1] + 1) / 4, 0, 1), cmap="gray", vmin=0, vmax=1)
        ax.set_xticks([])
        ax.set_yticks([])
        if j == 0:
            ax.set_ylabel(label, fontsize=8)
book.show_figure(fig, "fig_recon")

# %% [markdown]
# ```{glue:figure} fig_recon
# :alt: Three rows of grey-scale cytoplasm channels for six crops: the crop, the 25% of patches the encoder sees (the rest black), and the reconstruction with the predicted masked patches filled in.
# :name: fig-02-recon
#
# **From nine patches of 36 to a cell.** The cytoplasm channel of six crops, what the
# encoder sees, and the decoder's predictions in the masked patches: the cell's outline
# and size come back, its fine texture does not.
# ```
#
# ## Step 1: curation by replicate consistency
#
# The paper curates 16 M of 93 M crops. Besides quality filters, it keeps a perturbation
# only when its replicates agree: the mean pairwise cosine similarity $s_g$ of the
# embeddings of gene $g$'s replicate wells is compared with the same statistic for
# random sets of control wells, and the gene is kept when $p < 0.01$
# (`M.consistency_pvalues`). The curating embeddings come from an earlier model; here,
# the uncurated MAE's last block, its well means centre-scaled on the controls. A gene's
# replicates sit on different plates, so each random set of controls takes one control
# from each of those plates. In the code, `mean_pair_cos` is $s_g$ (the sum of all
# cosines minus the $k$ self-pairs, over $k(k-1)$ ordered pairs), `null_sets` draws the
# random sets of controls, one per replicate plate, and the last line of the loop is the
# permutation p-value.
#
# :::{dropdown} The code: `consistency_pvalues`, the curation test
# :open:
# ```{literalinclude} /lib/icml25/microscopy_mae/curation.py
# :pyobject: consistency_pvalues
# :caption: `icml25.microscopy_mae.consistency_pvalues`
# :language: python
# ```
# :::
#
# The pre-training screen of training seed 0, whose models this notebook shows, had
# {glue:text}`train_genes` genes, of which {glue:text}`train_null` null, on six plates
# with twelve controls each:

# %%
p = info["pvalues"]
pw = info["gene_pathway"]
kept = p < 0.01
n_null = int((pw < 0).sum())
fp = int((kept & (pw < 0)).sum())
tp = int((kept & (pw >= 0)).sum())
print(f"kept {kept.sum()} of {len(p)} genes: {tp} of {(pw >= 0).sum()} pathway genes, "
      f"{fp} of {n_null} null genes;\n{info['kept_crops']:,} of {info['n_crops']:,} "
      "crops (with 30% of the controls)")
book.glue(train_genes=len(p), train_null=n_null, kept_pathway=tp, kept_null=fp,
          kept_share=info["kept_crops"] / info["n_crops"])
# every committed training seed drew and curated a pre-training screen of its own
outcomes = M.curation_outcomes()
null_kept = [int(((o["pvalues"] < 0.01) & (o["gene_pathway"] < 0)).sum())
             for o in outcomes.values()]
null_all = [int((o["gene_pathway"] < 0).sum()) for o in outcomes.values()]
fp_pooled, n_null_pooled = sum(null_kept), sum(null_all)
print(f"null genes kept, by training seed (of {null_all[0]} each): {null_kept}")
print(f"pooled over {len(outcomes)} training seeds: {fp_pooled} of {n_null_pooled}")
book.glue(n_training_seeds=len(outcomes), null_pooled=n_null_pooled,
          kept_null_pooled=fp_pooled)

# %% tags=["remove-output"]
fig, ax = book.figure(1, height=2.6)
bins = np.linspace(0, 1, 26)
ax.hist([p[pw >= 0], p[pw < 0]], bins, stacked=True, label=["pathway genes",
                                                             "null genes"],
        color=[book.PALETTE[0], "0.6"])
ax.axvline(0.01, color="k", ls=":", lw=1, label="p = 0.01")
ax.set_xlabel("replicate-consistency p-value")
ax.set_ylabel("genes")
ax.legend(fontsize=8)
book.show_figure(fig, "fig_curation")

# %% [markdown]
# ```{glue:figure} fig_curation
# :alt: A stacked histogram of replicate-consistency p-values of the pre-training genes, pathway genes in blue piled near zero and null genes in grey spread over the whole range, with a dotted line at p = 0.01.
# :name: fig-02-curation
#
# **The consistency test keeps perturbations that do something.** p-values of the
# pre-training screen's genes, from the uncurated MAE's embeddings: null genes spread
# out as a null should, genes with a phenotype pile up near zero.
# ```

# %% tags=["nbval-check-output"]
ci = binomtest(fp_pooled, n_null_pooled).proportion_ci(0.95)
book.claim(
    "curation-null-rate", fp_pooled / n_null_pooled, interval=(ci.low, ci.high),
    note=f"{fp_pooled} of {n_null_pooled} null genes kept, pooled over the "
    f"pre-training screens of the {len(outcomes)} training seeds; interval: "
    "Clopper-Pearson; the committed screens are fixed, so this check does not vary "
    "with the run's seed",
)

# %% [markdown]
# The test kept {glue:text}`kept_pathway` pathway genes and {glue:text}`kept_null` null
# genes, {glue:text}`kept_share:.0%` of the crops. A null gene's replicates are as alike
# as random control wells, so it passes with probability about 0.01. One screen's
# {glue:text}`train_null` null genes cannot show a rate below 0.05 (even none kept
# leaves an upper bound of 0.056), so the check pools the screens of all
# {glue:text}`n_training_seeds` training seeds: {glue:text}`kept_null_pooled` of
# {glue:text}`null_pooled` null genes kept.
#
# ## Step 3: probe every block
#
# An encoder's last blocks serve the decoder: they are what it needs to paint pixels,
# not necessarily what best tells perturbations apart. The paper embeds each crop by the
# mean of its tokens after every block $b$, fits a logistic-regression probe per block
# and trims the encoder after the best one (`M.block_embeddings`, `M.probe_blocks`).
# Here the probe predicts a gene's pathway from one crop, trained on three plates and
# tested on the fourth.

# %%
z = M.block_embeddings(mae, screen.images)
pairs_seed = run.seed_of("random-well-pairs")  # the null of random pairs of wells
res = M.evaluate_blocks(z, screen, n_random=1000, seed=pairs_seed)
print("block       " + " ".join(f"{b + 1:6d}" for b in range(len(z))))
print("probe       " + " ".join(f"{v:6.3f}" for v in res["acc"]))
print("recall 5/95 " + " ".join(f"{v:6.3f}" for v in res["recall"]))

# %% [markdown]
# On this small screen (four pathways, chance 0.25 for the probe) the numbers are noisy;
# the reproduction runs the search on a larger screen with intervals.
#
# ## Align, aggregate, relate
#
# A well's embedding is the mean of its crops'. TVN (`M.tvn`) then standardises on the
# control wells, rotates into the controls' principal axes, standardises again and, on
# each plate $k$ separately, centres on that plate's controls and whitens with
# $(\Sigma_k + 0.5\, I)^{-1/2}$, $\Sigma_k$ the covariance of plate $k$'s controls.
# Genes are the mean of their aligned wells; relationship recall
# (`M.relationship_recall`) counts the planted same-pathway pairs whose cosine
# similarity lies below the 5th or above the 95th percentile of all gene pairs'.

# %%
block = int(np.argmax(res["acc"]))
wells = M.well_means(z[block], screen.crop_well, len(screen.well_gene))
before = M.centre_scale(wells, screen.is_control)
after = M.tvn(wells, screen.is_control, screen.well_plate)


def top2(x):
    """The first two principal components of the rows of x."""
    x = x - x.mean(0)
    return x @ np.linalg.svd(x, full_matrices=False)[2][:2].T


# %% tags=["remove-output"]
fig, axes = book.figure(2, height=2.8)
for ax, x, title in ((axes[0], before, "centre-scaled on controls"),
                     (axes[1], after, "TVN")):
    xy = top2(x)
    for k in range(4):
        rows = screen.well_plate == k
        ax.scatter(*xy[rows].T, s=9, color=book.PALETTE[k], label=f"plate {k + 1}")
    ax.set_title(title, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])
fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=4,
           fontsize=8)
book.show_figure(fig, "fig_align")

# %% [markdown]
# ```{glue:figure} fig_align
# :alt: Two scatter plots of well embeddings on their first two principal components, coloured by plate. Left, centre-scaled on all controls, one diffuse cloud in which one plate's wells sit off to the side of the others; right, after TVN, most wells of every plate collapse onto one dense centre and a few wells lie far out.
# :name: fig-02-align
#
# **TVN puts every plate's controls on one centre, and the genes with a phenotype stand
# out.** Well embeddings of the trimmed MAE on their first two principal components,
# centre-scaled on all controls (left) and after TVN (right). TVN whitens each plate's
# control variation, so the controls and the null genes collapse onto a dense core and
# the wells that differ from the controls lie outside it.
# ```

# %% [markdown]
# ## Exercises
#
# ```{exercise} What the Fourier term cannot see
# :label: ex-02-fourier
#
# **Level:** easy · **Time:** about 5 minutes.
#
# Show that the Fourier-magnitude loss between a crop and the same crop shifted
# circularly by a few pixels is zero (up to rounding), while the MSE is not. What does
# that mean for a reconstruction that puts the right texture in the wrong place?
# ```
#
# ```{solution-start} ex-02-fourier
# :class: dropdown
# ```
#
# A circular shift multiplies each Fourier coefficient by a phase $e^{-2\pi i \langle k,
# s\rangle / n}$, whose modulus is 1: magnitudes are unchanged. The Fourier term rewards
# the right textures and frequencies wherever they are; only the MSE asks for the right
# place. The mix lets the decoder keep fine texture instead of blurring it.

# %%
a = torch.from_numpy(M.normalise_crops(screen.images[:8]))
shifted = torch.roll(a, shifts=(3, 2), dims=(-2, -1))
four = M.fourier_loss(shifted, a).item()
mse = float(((shifted - a) ** 2).mean())
print(f"Fourier-magnitude L1 {four:.2e}, MSE {mse:.3f}")
book.glue(ex_four=four, ex_mse=mse)

# %% [markdown]
# The Fourier term is {glue:text}`ex_four:.1e`, the MSE {glue:text}`ex_mse:.3f`.
#
# ```{solution-end}
# ```
#
# ```{exercise} A looser curation threshold
# :label: ex-02-threshold
#
# **Level:** medium · **Time:** about 10 minutes.
#
# With the pre-training screen's p-values (`info["pvalues"]`, with
# `info["gene_pathway"]`), count the pathway and null genes kept at thresholds 0.001,
# 0.01, 0.05 and 0.2. What share of the kept genes is null at each? The smallest
# possible p-value with 1,000 null draws is 1/1001.
# ```
#
# ```{solution-start} ex-02-threshold
# :class: dropdown
# ```
#
# A null gene passes with probability about the threshold, so the kept null genes grow
# linearly with it, while the pathway genes, whose p-values sit near the floor, are all
# kept early: a looser threshold buys few real perturbations and many null ones.

# %%
for alpha in (0.001, 0.01, 0.05, 0.2):
    k = p < alpha
    n_k = max(1, int(k.sum()))
    print(f"p < {alpha:<5}: {int((k & (pw >= 0)).sum()):3d} pathway, "
          f"{int((k & (pw < 0)).sum()):3d} null genes kept "
          f"(null share {(k & (pw < 0)).sum() / n_k:.2f})")
book.glue(ex_null_02=int(((p < 0.2) & (pw < 0)).sum()))

# %% [markdown]
# At $p < 0.2$, {glue:text}`ex_null_02` null genes pass.
#
# ```{solution-end}
# ```
#
# ```{exercise} How many controls does TVN need?
# :label: ex-02-controls
#
# **Level:** medium · **Time:** about 15 minutes.
#
# TVN whitens each plate with $(\Sigma_k + 0.5\, I)^{-1/2}$, $\Sigma_k$ estimated from
# the plate's control wells. The screen above has 64 controls per plate, as many as the
# embeddings have dimensions. Keep only the first 8, 16, 32 or 64 controls of each plate
# (drop the other control wells), align by TVN and by centre-scaling, and compare the
# replicate consistency (KS). Why does TVN need many controls?
# ```
#
# ```{solution-start} ex-02-controls
# :class: dropdown
# ```
#
# With $n$ controls on a plate, $\Sigma_k$ has rank at most $n - 1$. With fewer controls
# than dimensions, the directions they do not span are not whitened but only scaled by
# $1/\sqrt{0.5}$, while the controls themselves, fitted in sample, end up whitened: the
# controls no longer look like the other wells, and the per-plate step adds noise
# instead of removing the plate. Real screens have hundreds of control wells per batch.

# %%
ctrl_rank = np.cumsum(screen.is_control.reshape(4, -1), axis=1).ravel()
for n_keep in (8, 16, 32, 64):
    rows = ~screen.is_control | (ctrl_rank <= n_keep)
    w, g = wells[rows], screen.well_gene[rows]
    ks = {name: M.replicate_consistency(x, g, seed=pairs_seed)["ks"] for name, x in (
        ("centre", M.centre_scale(w, g < 0)),
        ("tvn", M.tvn(w, g < 0, screen.well_plate[rows])))}
    print(f"{n_keep:2d} controls per plate: KS centre-scaled {ks['centre']:.3f}, "
          f"TVN {ks['tvn']:.3f}")
    book.glue(f"ex_ks_tvn_{n_keep}", ks["tvn"])

# %% [markdown]
# TVN's KS is {glue:text}`ex_ks_tvn_8:.3f` with 8 controls per plate and
# {glue:text}`ex_ks_tvn_64:.3f` with 64.
#
# ```{solution-end}
# ```

# %%
book.finish()
