# %% [markdown]
# # The method: segment, then say why and point to where
#
# A segmentation network says *where* a tumour is; a report says *why* it is suspicious.
# Ma, Li, Peng, Lin, Beylergil, Zhao, Akin and Peng {cite}`ma2025why` want one model to do
# both on prostate MRI:
#
# > Most of the existing models generate either segmentation masks/labels (localizing
# > where without why) or textual justifications (explaining why without where), failing
# > to ground clinical concepts in spatially localized evidence. [...] we design
# > rationale-informed optimization that disentangles and localizes fine-grained clinical
# > concepts in a self-supervised manner without requiring pixel-level concept
# > annotations. (Ma et al., 2025, abstract)
#
# The paper's overview figure fixes the architecture: an image encoder and a mask decoder
# that segment the gland, its zones and the lesions from three MRI sequences (T2-weighted,
# diffusion-weighted and its apparent diffusion coefficient map: T2W, DWI, ADC), a text
# encoder for the radiologist's rationale, and two objectives in a shared image-text space,
# **Disen.** (concept embeddings apart) and **Align.** (image features towards the matching
# concept). The losses themselves, the encoders and the data are not public; the
# objectives below are our reconstruction, consistent with that figure and not checked
# against the paper's full text. This notebook builds the idea on phantoms you can look at;
# [the reproduction](reproduction.ipynb) runs the experiments.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import textwrap

import numpy as np

from icml25 import book
from icml25 import rationales as R

from _chapter import COLOURS, models_of

SIZES = {
    "quick": dict(n_test=40, n_random=100),
    "book": dict(n_test=300, n_random=2000),
    "paper": dict(n_test=1000, n_random=2000),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
text = R.load_concept_embeddings()
models, config = models_of(seed, text, train=mode == "paper")
SHORT = ["PZ", "TZ", "circ.", "non-circ.", "homog.", "heterog.", "moderate", "marked",
         "restricted", "normal"]

# %% [markdown]
# ## Phantoms with a reason for every lesion
#
# No public data set pairs prostate MRI with masks and rationales (the paper curates 180K
# image-mask-rationale triples that are not released), so `R.make_phantoms` draws them. A
# phantom is a {glue:text}`img_size`x{glue:text}`img_size` slice in three channels, T2W, DWI
# and ADC. The gland is an ellipse; its **transition zone** (TZ) an inner anterior ellipse,
# the rest the **peripheral zone** (PZ), brighter in T2W. An image has no lesion, one, or
# two (one per zone). Every lesion restricts diffusion (bright in DWI, dark in ADC) and draws
# three descriptors: a circumscribed or spiculated (non-circumscribed) **margin**, a
# homogeneous or heterogeneous **texture**, a moderately or markedly hypointense **T2W
# signal**. A PI-RADS-like score {cite}`weinreb2016pirads` follows from them,
# $2 + [\text{non-circumscribed}] + [\text{heterogeneous}] + [\text{marked}]$, in
# $\{2,\dots,5\}$ (1 without a lesion), and the rationale is the paper's tree in words:
# location, primary sequence (DWI for the PZ, T2W for the TZ, as in PI-RADS), descriptors,
# score. Benign TZ nodules, dark in T2W but normal in DWI, make the T2W channel alone
# misleading.
#
# For evaluation only, each concept of an image also has a hidden **evidence map**: the
# lesions that carry it (their rim, for the two margin concepts). No model ever sees them.

# %%
test = R.make_phantoms(size.n_test, config["size"], seed=run.seed_of("test-phantoms"))
two = int(np.flatnonzero(test.n_lesions == 2)[0])
book.glue(img_size=config["size"])
print(textwrap.fill(test.rationales[two], 88))

# %% tags=["remove-output"]
fig, axes = book.figure(5, height=1.75)
for ax, c, name in zip(axes, range(3), ("T2W", "DWI", "ADC")):
    ax.imshow(test.images[two, c], cmap="gray")
    ax.set_title(name, fontsize=9)
axes[3].imshow(test.zones[two], cmap="Greys", vmin=0, vmax=3)
axes[3].contour(test.lesion[two], levels=[0.5], colors=[COLOURS["evidence"]],
                linewidths=1)
axes[3].set_title("zones, lesions", fontsize=9)
k_margin = R.GROUP_START["margin"] + 1
ev = test.evidence[two, k_margin] if test.labels[two, k_margin] else \
    test.evidence[two, k_margin - 1]
axes[4].imshow(test.images[two, 0], cmap="gray")
axes[4].imshow(np.ma.masked_where(~ev, ev), cmap="autumn", alpha=0.8)
axes[4].set_title("margin evidence", fontsize=9)
for ax in axes:
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
book.show_figure(fig, "fig_phantom")

# %% [markdown]
# ```{glue:figure} fig_phantom
# :alt: Five small square panels of one phantom. The first three show its T2W, DWI and ADC channels: an elliptical gland with a brighter outer peripheral zone in T2W and two small lesions, dark in T2W and ADC and bright in DWI. The fourth shows the zone masks with the two lesions outlined in red, the fifth the T2W image with the lesions' rims highlighted as the hidden evidence of a margin concept.
# :name: fig-19-phantom
#
# **Each lesion looks the way its rationale says.** One test phantom with a lesion in each
# zone (rationale printed above): the three channels, the masks a model is trained on, and
# the hidden evidence map of a margin concept (the lesions' rims), used only to evaluate.
# ```

# %% [markdown]
# ## The text side: frozen sentence embeddings of the concepts
#
# The paper's text encoder is not named. Here each concept phrase is embedded once by a
# frozen all-MiniLM-L6-v2 sentence encoder {cite}`reimers2019sbert` (the vectors are
# committed, so nothing is downloaded). A sentence encoder knows that "circumscribed
# margin" and "non-circumscribed margin" are about the same thing; it barely registers the
# negation, so the two phrases are nearly parallel. That is the problem the paper's
# disentangling objective addresses.
#
# ```{prf:definition} Rationale-informed objectives (our reconstruction)
# :label: def-19-objectives
#
# Pixel embeddings $e(x)\in\mathbb R^d$ (unit length) come from the decoder's last
# features; concept vectors $t_c=Ps_c/\lVert Ps_c\rVert$ project the frozen sentence
# embeddings $s_c$ of the $K$ concept phrases and of "normal prostate tissue". The
# **concept heat map** is $H_c(x)=e(x)^\top t_c$. With the lesion masks $M_\ell$ of the
# training image (each lesion named by its zone in the rationale) and
# $z_\ell=\mathrm{norm}\big(\sum_x M_\ell(x)\,e(x)\big)$,
#
# $$\mathcal L_\text{align}=-\operatorname*{mean}_{\ell,g}\log
# \frac{e^{z_\ell^\top t_{c_g(\ell)}/\tau}}{\sum_{c\in g\cup\{\text{normal}\}}
# e^{z_\ell^\top t_c/\tau}}
# -\operatorname*{mean}_{x\notin\cup M_\ell}\log\operatorname{softmax}_c
# \big(e(x)^\top t_c/\tau\big)_\text{normal},$$
#
# an InfoNCE {cite}`oord2018representation` per concept group $g$ (location, margin,
# texture, intensity, diffusion), and
# $\mathcal L_\text{disen}=\operatorname*{mean}_{a\neq b}(t_a^\top t_b)^2$. The model is
# trained on $\mathcal L_\text{seg}+\mathcal L_\text{align}+\mathcal L_\text{disen}$, with
# $\mathcal L_\text{seg}$ cross-entropy plus soft Dice {cite}`milletari2016vnet` on the
# zones and the lesions.
# ```
#
# Nothing tells the model which pixels of a lesion show its margin or its texture: the
# lesion's pixels are only pooled. Whatever localisation the heat maps show is learned.
# In the code, `concept_vectors` is $t_c$ and `heat_maps` is $H_c$; in `align_loss`, `z`
# is $z_\ell$, each pass of the loop over `GROUPS` is one group's InfoNCE term and the
# last cross-entropy is the lesion-free pixels' term; `disentangle_loss` is
# $\mathcal L_\text{disen}$.
#
# ```{literalinclude} /lib/icml25/rationales/models.py
# :pyobject: RationaleModel
# :caption: `icml25.rationales.RationaleModel`: pixel embeddings, concept vectors, heat maps
# :language: python
# ```
#
# :::{dropdown} The code: `align_loss` and `disentangle_loss`
# :open:
# ```{literalinclude} /lib/icml25/rationales/models.py
# :pyobject: align_loss
# :caption: `icml25.rationales.align_loss`: $\mathcal L_\text{align}$
# :language: python
# ```
#
# ```{literalinclude} /lib/icml25/rationales/models.py
# :pyobject: disentangle_loss
# :caption: `icml25.rationales.disentangle_loss`: $\mathcal L_\text{disen}$
# :language: python
# ```
# :::

# %%
gram_text = text @ text.T
trained = models["rationale"][0]
t_trained = trained.concept_vectors().detach().numpy()
gram_trained = t_trained @ t_trained.T
off = ~np.eye(len(R.TEXTS), dtype=bool)
mean_sq_text = float((gram_text[off] ** 2).mean())
mean_sq_trained = float((gram_trained[off] ** 2).mean())
print(f"mean squared cosine between phrases: MiniLM {mean_sq_text:.3f}, "
      f"trained concept vectors {mean_sq_trained:.3f}")
book.glue(cos_margin=float(gram_text[2, 3]), cos_intensity=float(gram_text[6, 7]),
          sq_text=mean_sq_text, sq_trained=mean_sq_trained)

# %% tags=["remove-output"]
fig, axes = book.figure(2, height=3.3)
for ax, g, title in ((axes[0], gram_text, "MiniLM sentence embeddings"),
                     (axes[1], gram_trained, "trained concept vectors")):
    im = ax.imshow(g, cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set_xticks(range(len(SHORT)), SHORT, rotation=90, fontsize=7)
    ax.set_yticks(range(len(SHORT)), SHORT, fontsize=7)
    ax.set_title(title, fontsize=10)
    ax.grid(False)
fig.colorbar(im, ax=axes, shrink=0.8, label="cosine")
book.show_figure(fig, "fig_gram")

# %% [markdown]
# ```{glue:figure} fig_gram
# :alt: Two ten-by-ten matrices of cosine similarities between the concept phrases, red for positive and blue for negative. Left, the frozen MiniLM embeddings: all entries are positive, with dark red blocks for pairs such as circumscribed and non-circumscribed margin. Right, the trained concept vectors: the diagonal is one and the off-diagonal entries are close to zero.
# :name: fig-19-gram
#
# **The sentence encoder places opposite findings side by side; training pulls them
# apart.** Cosine similarities between the concept phrases (abbreviated; "normal" is normal
# prostate tissue) before the projection (left) and after training with the Align and
# Disen objectives (right).
# ```

# %% tags=["nbval-check-output"]
book.claim(
    "disentangled", mean_sq_trained / mean_sq_text,
    shown={"trained": mean_sq_trained, "MiniLM": mean_sq_text},
    note="ours: mean squared cosine, trained and MiniLM; the Disen term minimises it",
)

# %% [markdown]
# The two margin phrases have cosine {glue:text}`cos_margin:.2f` in MiniLM's space and the
# two intensity phrases {glue:text}`cos_intensity:.2f`; the mean squared cosine between
# phrases drops from {glue:text}`sq_text:.3f` to {glue:text}`sq_trained:.3f` after training.
# Part of that is the Align objective itself, which asks each lesion to prefer one
# alternative of a group; an exercise below removes the Disen term and looks again.
#
# ## Training
#
# The U-Net {cite}`ronneberger2015unet` here works at three resolutions with
# {glue:text}`width`, {glue:text}`width2` and {glue:text}`width4` channels; the pixel
# embeddings have $d={}${glue:text}`dim` dimensions and $\tau={}${glue:text}`tau`. Training
# every model of the chapter for the five seeds its claims are pooled over takes about
# {glue:text}`train_minutes` minutes on one core, far more than the minute a chapter of
# this book runs, so the models were trained once by `python -m icml25.rationales train`
# and committed (their weights take {glue:text}`ckpt_kb` kB); the notebooks load the
# models of their seed and show the training records. In `paper` mode the notebooks train
# larger models here instead (about an hour on a laptop CPU).

# %%
book.glue(width=config["width"], width2=2 * config["width"], width4=4 * config["width"],
          dim=config["dim"], tau=config["tau"], train_minutes=R.TRAINING_CPU_MINUTES,
          ckpt_kb=int(book.data.path(R.CHECKPOINT).stat().st_size / 1024))
NAMES = {"rationale": "rationale model", "unet": "U-Net",
         "classifier": "concept classifier",
         "rationale_low": "rationale model, low data", "unet_low": "U-Net, low data"}
for name, label in NAMES.items():
    rec = models[name][1]
    print(f"{label:30s} {rec['n_train']:5d} images, {rec['epochs']:3d} epochs, "
          f"last loss {rec['history'][-1]:.3f}")

# %% tags=["remove-output"]
fig, ax = book.figure(1, height=2.8)
styles = {"rationale": ("-", COLOURS["rationale"]), "unet": ("-", COLOURS["unet"]),
          "classifier": ("-", COLOURS["gradcam"]),
          "rationale_low": ("--", COLOURS["rationale"]),
          "unet_low": ("--", COLOURS["unet"])}
for name, (ls, colour) in styles.items():
    h = models[name][1]["history"]
    steps = np.linspace(0, 1, len(h) + 1)[1:]
    ax.plot(steps, h, ls, color=colour, label=NAMES[name])
ax.set_yscale("log")
ax.set_xlabel("share of training (every model takes the same number of steps)")
ax.set_ylabel("training loss (log)")
ax.legend(loc="upper right", fontsize=8)
book.show_figure(fig, "fig_training")

# %% [markdown]
# ```{glue:figure} fig_training
# :alt: Training loss on a logarithmic scale against the share of training for five models. All curves fall steeply and flatten; the rationale model's losses start higher because they include the Align and Disen terms; the dashed low-data curves end lowest.
# :name: fig-19-training
#
# **All five losses flatten out by the end of the schedule.** Mean training loss per epoch,
# read from the committed models' records; dashed: trained on a quarter of the images for
# the same number of steps. The losses differ in their terms and are not comparable
# between models.
# ```

# %% [markdown]
# ## Heat maps that point to the evidence
#
# For the phantom above, each concept's heat map $H_c$ beside the concept's hidden evidence.
# The concepts in the image's rationale should light up on the lesion that carries them,
# and not on the other one.

# %%
maps, emb = R.rationale_maps(trained, test.subset([two]))
present = np.flatnonzero(test.labels[two])
hits = R.pointing_game(maps[0, present], test.evidence[two, present])
for k, hit in zip(present, hits):
    print(f"{R.CONCEPTS[k]:55.55s} {'hit' if hit else 'miss'}")

# %% tags=["remove-output"]
fig, axes = book.figure(len(present), 2, height=0.95)
for j, k in enumerate(present):
    axes[0, j].imshow(maps[0, k], cmap="magma", vmin=-1, vmax=1)
    peak = np.unravel_index(maps[0, k].argmax(), maps[0, k].shape)
    axes[0, j].plot(peak[1], peak[0], "c+", ms=8, mew=2)
    axes[0, j].set_title(SHORT[k], fontsize=8)
    axes[1, j].imshow(test.images[two, 0], cmap="gray")
    axes[1, j].contour(test.evidence[two, k], levels=[0.5],
                       colors=[COLOURS["evidence"]], linewidths=1)
for ax in axes.flat:
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
axes[0, 0].set_ylabel("heat map", fontsize=8)
axes[1, 0].set_ylabel("evidence", fontsize=8)
book.show_figure(fig, "fig_heat")

# %% [markdown]
# ```{glue:figure} fig_heat
# :alt: Two rows of small panels, one column per concept of the phantom's rationale. Top row, the concept's heat map in dark-to-bright colours with a cyan cross at its maximum; bottom row, the T2W image with the concept's hidden evidence outlined in red. Location concepts light up on the lesion of their zone.
# :name: fig-19-heat
#
# **Concept heat maps learned without concept masks.** Top: $H_c$ for each concept of the
# phantom's rationale (abbreviated), its maximum marked with a cross; bottom: the concept's
# hidden evidence. The pointing game scores a hit when the cross falls on the evidence.
# ```

# %% [markdown]
# The reproduction scores these maps over hundreds of test images against Grad-CAM maps of
# a concept classifier and against random maps, compares the segmentation with a plain
# U-Net, and asks the model questions.
#
# ## Exercises
#
# ```{exercise} The chance level of the two localisation scores
# :label: ex-19-chance
#
# **Level:** easy · **Time:** about 10 minutes.
#
# A random heat map hits in the pointing game with probability $a$, the share of the image
# covered by the evidence. Show that its expected IoU at the evidence's area is about
# $a/(2-a)$, and check both with `R.random_maps` on the evidence of the test phantoms.
# ```
#
# ```{solution-start} ex-19-chance
# :class: dropdown
# ```
#
# The top $|E|$ pixels of a random map are a random set $S$ of the same size as $E$; on
# average $|S\cap E|=a|E|$, so $|S\cup E|=2|E|-a|E|$ and the IoU is about
# $a|E|/((2-a)|E|)=a/(2-a)$. Small evidence makes both chance levels small.

# %%
ii, kk = np.nonzero(test.labels)
ev = test.evidence[ii, kk][:size.n_random]
rand = R.random_maps(ev.shape, seed=run.seed_of("random-maps"))
a = ev.mean((1, 2))
print(f"pointing: random {R.pointing_game(rand, ev).mean():.3f}, predicted "
      f"{a.mean():.3f}")
print(f"IoU at area: random {R.iou_at_area(rand, ev).mean():.3f}, predicted "
      f"{(a / (2 - a)).mean():.3f}")
book.glue(ex_share=float(a.mean()))


# %% [markdown]
# The evidence covers {glue:text}`ex_share:.1%` of an image on average.
#
# ```{solution-end}
# ```
#
# ```{exercise} Align without Disen
# :label: ex-19-disen
#
# **Level:** medium · **Time:** about 15 minutes.
#
# The committed models include one trained without the Disen term (`models["align_only"]`).
# Compare its concept vectors' mean squared cosine with the full model's, and how often the
# embedding pooled over each test lesion's true mask retrieves the right margin, texture
# and intensity. What does Disen add, given that Align already contrasts the alternatives?
# ```
#
# ```{solution-start} ex-19-disen
# :class: dropdown
# ```
#
# Align contrasts the two alternatives of a group, so it separates them already; Disen
# also separates concepts of different groups, which nothing else asks for. Retrieval
# within a group needs only the first; whether Disen helps it at this scale is what the
# numbers say.

# %%
def retrieval(model, data):
    """Share of test lesions whose pooled embedding retrieves each group's concept."""
    _, e = R.rationale_maps(model, data)
    t = model.concept_vectors().detach().numpy()
    right = {g: [] for g in ("margin", "texture", "intensity")}
    for i, z in zip(*np.nonzero(data.attributes[:, :, 0] == 1)):
        pooled = e[i][:, data.lesion_masks[i, z]].sum(1)
        for j, g in enumerate(right, start=1):
            s0 = R.GROUP_START[g]
            pick = np.argmax(t[s0:s0 + 2] @ pooled)
            right[g].append(pick == data.attributes[i, z, j])
    return {g: float(np.mean(v)) for g, v in right.items()}, t


for name in ("rationale", "align_only"):
    acc, t = retrieval(models[name][0], test)
    sq = float(((t @ t.T)[off] ** 2).mean())
    print(f"{name:11s} mean sq. cosine {sq:.3f}; retrieval "
          + ", ".join(f"{g} {v:.2f}" for g, v in acc.items()))
    book.glue(f"ex_sq_{name}", sq)

# %% [markdown]
# Without Disen the mean squared cosine between concept vectors is
# {glue:text}`ex_sq_align_only:.3f`, with it {glue:text}`ex_sq_rationale:.3f`.
#
# ```{solution-end}
# ```
#
# ```{exercise} What standardisation removes from a scanner shift
# :label: ex-19-scanner
#
# **Level:** medium · **Time:** about 10 minutes.
#
# The reproduction tests the models on a second scanner (`R.SCANNER_B`): other channel
# gains, a contrast curve ($\gamma=1.5$), a bias field, more blur and noise. Both models
# standardise each channel of each image first. Draw the same phantoms with each scanner
# and measure the mean absolute difference of the standardised images with one change of
# `R.Scanner` at a time. Which changes does standardisation undo?
# ```
#
# ```{solution-start} ex-19-scanner
# :class: dropdown
# ```
#
# Standardising would divide out a gain of the whole image exactly, but the scanner adds its
# noise after the gain, so a gain also changes the signal-to-noise ratio, which no
# rescaling undoes. Nothing linear undoes a spatial change either: the bias field, which
# brightens one side of the image, moves the standardised images most, then the noise and
# the blur; the contrast curve matters about as little as the gain at these intensities.

# %%
# the same phantoms and noise draws under every scanner
base = R.make_phantoms(50, config["size"], seed=run.seed_of("ex-scanner-phantoms"))
ref = R.standardise(base.images)
b = R.SCANNER_B
changes = {"gain": dict(gain=b.gain), "gamma": dict(gamma=b.gamma),
           "bias field": dict(bias=b.bias), "blur": dict(blur=b.blur),
           "noise": dict(noise=b.noise), "all (scanner B)": vars(b)}
for name, change in changes.items():
    scanner = R.Scanner(**(vars(R.SCANNER_A) | change))
    other = R.make_phantoms(50, config["size"], seed=run.seed_of("ex-scanner-phantoms"),
                            scanner=scanner)
    gap = float(np.abs(R.standardise(other.images) - ref).mean())
    print(f"{name:16s} {gap:.3f}")
    book.glue(f"ex_gap_{name.split()[0]}", gap)

# %% [markdown]
# The gain alone leaves a difference of {glue:text}`ex_gap_gain:.3f` (the noise draws are
# the same), the whole shift {glue:text}`ex_gap_all:.3f`.
#
# ```{solution-end}
# ```

# %%
book.finish()
