# %% [markdown]
# # The method: animate through an interpolated image
#
# Image animation moves the object of a source image $S$ into the pose of a driving frame
# $D$. Wang and Li {cite}`wang2025large` address the case where the two poses are far
# apart:
#
# > many unsupervised methods still struggle to accurately model large displacement
# > motions when large motion differences occur between source and driving images. [...]
# > we propose an unsupervised anytime interpolation based large displacement motion
# > transfer method, which can generate a series of anytime interpolated images between
# > source and driving images. By decomposing large displacement motion into many small
# > displacement motions, difficulty of large displacement motion estimation is reduced.
# > (Wang & Li, 2025, abstract)
#
# :::{important}
# This chapter is a test of the paper's **principle** on a small model, not a
# reproduction of its network. The paper's text, code and numbers are not public; only the
# abstract and its summary are. The interpolator, the selector and the bidirectional
# losses below are our reconstruction from the abstract, built on a small keypoint-and-warping backbone of the FOMM family {cite}`siarohin2019fomm`, trained on procedurally
# drawn sprites whose keypoints are known exactly. Nothing here is checked against the
# paper's full text.
# :::
#
# This notebook builds the pieces on data you can look at; [the
# reproduction](reproduction.ipynb) measures whether going through an interpolated image
# helps, and where.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import numpy as np

from icml25 import book
from icml25 import motion_transfer as M

from _chapter import EDGES

SIZES = {
    "quick": dict(n_videos=6),
    "book": dict(n_videos=30),
    "paper": dict(n_videos=200),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
models, (evaluator, eval_record), config = M.load_models(seed)
COLOURS = {"plain": "0.45", "bidirectional": book.PALETTE[0],
           "farneback": book.PALETTE[1], "keypoints": book.PALETTE[3]}

# %% [markdown]
# ## Sprites whose keypoints are known
#
# The paper's benchmarks (talking heads, Tai-Chi, animated GIFs) need an external landmark
# or pose detector to score motion. Here `M.make_videos` draws articulated **sprites** at
# {glue:text}`img_side`x{glue:text}`img_side` pixels: a torso with two arms at its upper
# end and a leg at its lower end, each part a capsule in its own colour. An identity fixes
# the colours and the part lengths and widths; a pose is a centre, a torso angle and three
# limb angles. A video moves one identity linearly in pose space from a random start to a
# random end pose over {glue:text}`n_frames` frames, so its frames are small displacements
# of one another near the diagonal and large ones far from it. The five joints (the torso's
# two ends and the three limb tips) are exact.
#
# The **displacement** of a pair is the mean distance between its joints in pixels. As in
# the FOMM protocol, test pairs take a held-out video's first frame as source and every
# later frame as driving frame; we bin them into small (below {glue:text}`edge_small`
# pixels), medium and large (above {glue:text}`edge_large` pixels) displacements.

# %%
pairs = M.test_pairs(size.n_videos, config["n_frames"],
                     seed=run.seed_of("sprite-pairs"))
bins = M.bin_displacement(pairs["displacement"], EDGES)
counts = np.bincount(bins, minlength=3)
print(f"{len(bins)} test pairs: {counts[0]} small, {counts[1]} medium, "
      f"{counts[2]} large (median displacement "
      f"{np.median(pairs['displacement']):.1f} px)")
book.glue(img_side=M.SIZE, n_frames=config["n_frames"], edge_small=f"{EDGES[0]:g}",
          edge_large=f"{EDGES[1]:g}")

# %% tags=["remove-output"]
video = int(np.argmax(pairs["displacement"].reshape(size.n_videos, -1)[:, -1]))
show = [0, 3, 6, 9, config["n_frames"] - 1]
fig, axes = book.figure(len(show) + 1, height=1.6,
                        gridspec_kw=dict(width_ratios=[1] * len(show) + [2.2]))
length = pairs["identity"]["length"][video]
for ax, f in zip(axes, show):
    ax.imshow(pairs["frames"][video, f].transpose(1, 2, 0), extent=(0, 32, 32, 0))
    j = M.joints(pairs["poses"][video, f], length)
    ax.scatter(j[:, 0], j[:, 1], s=8, c="w", edgecolors="k", linewidths=0.5)
    ax.set_title(f"frame {f}", fontsize=8)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
ax = axes[-1]
ax.hist(pairs["displacement"], bins=30, color="0.6")
for e in EDGES:
    ax.axvline(e, color="k", ls=":", lw=1)
ax.set_xlabel("displacement (px)", fontsize=8)
ax.set_ylabel("test pairs", fontsize=8)
book.show_figure(fig, "fig_sprites")

# %% [markdown]
# ```{glue:figure} fig_sprites
# :alt: Five small frames of one sprite video, a coloured torso with two arms and a leg turning and moving across a dark background, with its five joints marked as white dots; on the right a histogram of the displacement of all test pairs with dotted lines at 3 and 6 pixels.
# :name: fig-06-sprites
#
# **A video moves one sprite from a start pose to an end pose; far frames are large
# displacements.** Frames of the test video whose last frame is furthest from its first,
# with the exact joints (white); right: the displacement of every test pair (first frame
# against each later frame) with the bin edges (dotted).
# ```

# %% [markdown]
# ## The backbone: keypoints, dense motion, warping
#
# The paper builds on an unsupervised keypoint model of the FOMM/TPSMM family
# {cite}`siarohin2019fomm,zhao2022tpsmm` (which one is not stated in the abstract). Ours
# is a small member of it, `M.Animator`, with three parts:
#
# ```{prf:definition} A zeroth-order keypoint animator
# :label: def-06-backbone
#
# A **keypoint detector** maps an image to $K$ heatmaps $h_k$ and keypoints
# $k_k=\sum_z z\,\mathrm{softmax}(h_k/\tau)(z)$ in $[-1,1]^2$ (soft-argmax). Given source
# and driving keypoints, each keypoint proposes a backward motion
# $T_k(z)=z-k^D_k+k^S_k$ and the background proposes $T_0(z)=z$. A **dense motion**
# network sees the Gaussian heatmap differences and the source warped by each $T_k$, and
# returns soft masks $m_k(z)$ ($\sum_k m_k=1$) and an occlusion map $o(z)\in[0,1]$; the
# flow is $\mathcal T(z)=\sum_{k=0}^K m_k(z)T_k(z)$. A **generator** encodes $S$, warps its
# features by $\mathcal T$, multiplies them by $o$ and decodes $\hat D=G(S,k^S\to k^D)$.
# Training uses pairs of frames of one video, with the pyramid $L_1$ loss
# $\lVert\hat D-D\rVert_1$ (full and half resolution) and FOMM's equivariance loss: for a
# random affine map $A$, the keypoints of the warped image map back onto those of the
# original, $A\,k(D\circ A)\approx k(D)$; a separation term
# $\operatorname{mean}_{k\neq l}e^{-\lVert k_k-k_l\rVert^2/2\sigma^2}$
# {cite}`zhang2018unsupervised` keeps the keypoints apart.
# ```
#
# FOMM adds a local affine Jacobian per keypoint (first order) and TPSMM replaces the
# translations by thin-plate splines; at {glue:text}`img_side` pixels translations mixed by
# soft masks can move each part, and they keep training within minutes
# ({glue:text}`n_params` parameters). Without the separation term, which FOMM does not
# use, our short trial runs plateaued at a reconstruction loss about 40% higher and
# barely moved the sprites: keypoints gathered on the sprite's centroid satisfy
# equivariance but explain only a global translation, a likely cause that we did not
# examine further.
#
# ## The paper's additions, as we reconstruct them
#
# ```{prf:algorithm} Anytime interpolation, selection, transfer
# :label: alg-06-anytime
#
# **Inputs** source $S$, driving frame $D$, fractions $t_1,\dots,t_n\in(0,1)$
#
# 1. $k^S=k(S)$, $k^D=k(D)$.
# 2. For each $t$: the interpolated keypoints $k^t=(1-t)k^S+tk^D$ and the **interpolated
#    image** $I_t=G(S,k^S\to k^t)$; then the final $Y_t=G(I_t,k(I_t)\to k^D)$, a transfer
#    over the remaining $(1-t)$ of the displacement.
# 3. **Selector**: $t^*=\arg\min_t\lVert k(Y_t)-k^D\rVert_1$, the candidate whose result
#    the model's own detector finds closest to the driving keypoints (it reads $k^D$,
#    never the pixels of $D$).
# 4. **Return** $Y_{t^*}$.
# ```
#
# The abstract says that "a selector [...] can select optimal interpolated image", but not
# how; ours is one unsupervised criterion that fits. In `transfer_anytime`, the loop over
# `ts` computes `inter` ($I_t$), `y` ($Y_t$) and its score $\lVert k(Y_t)-k^D\rVert_1$;
# `pick = scores.argmin(0)` is the selector of step 3.
#
# :::{dropdown} The code: `transfer_anytime`, the algorithm above
# :open:
# ```{literalinclude} /lib/icml25/motion_transfer/transfer.py
# :pyobject: transfer_anytime
# :caption: `icml25.motion_transfer.transfer_anytime`
# :language: python
# ```
# :::
#
# Since no real $I_t$ exists to train the interpolation, the paper proposes a
# **bidirectional training strategy** with constraints on the interpolated image and losses
# on the features of a pre-trained Vision Transformer. Our reconstruction
# (`M.bidirectional_loss`) interpolates from both ends to the same keypoints $k^t$,
# $I_t=G(S,k^S\to k^t)$ and $I'_t=G(D,k^D\to k^t)$, and asks that (i) each chain reaches the
# other end, $G(I_t,k(I_t)\to k^D)\approx D$ and $G(I'_t,k(I'_t)\to k^S)\approx S$, (ii) the
# two interpolations agree, $I_t\approx I'_t$, and (iii) both land on their keypoints,
# $k(I_t)\approx k^t\approx k(I'_t)$. No ViT weights can be loaded offline, so the feature
# losses are the same pyramid $L_1$ as the reconstruction loss. In `bidirectional_loss`,
# `fwd` and `bwd` are $I_t$ and $I'_t$, and `chain`, `agree` and `kp` are the constraints
# (i), (ii) and (iii).
#
# ```{literalinclude} /lib/icml25/motion_transfer/model.py
# :pyobject: bidirectional_loss
# :caption: `icml25.motion_transfer.model.bidirectional_loss`: the bidirectional terms
# :language: python
# ```
#
# ## The committed models and their training
#
# Training does not fit the book's time budget, so `python -m icml25.motion_transfer
# train` trained, for each of five seeds, a backbone for {glue:text}`steps` steps on
# {glue:text}`n_train_videos` videos, then continued it for {glue:text}`finetune` more
# steps twice: once with the reconstruction and equivariance losses only (**plain**) and
# once adding the bidirectional terms (**bidirectional**); the two differ only in that
# term. An external **pose detector** with the same architecture, trained on the exact
# joints of other videos, plays the part of FOMM's pretrained landmark detector in the
# evaluation.

# %%
for name, (_, rec) in models.items():
    print(f"{name:14s} backbone {config['steps']} + {config['finetune']} steps, "
          "last reconstruction L1 "
          f"{rec['finetune']['recon'][-1]:.3f}")
det_err = np.linalg.norm(M.detect(evaluator, pairs["driving"]) - pairs["joints_d"],
                         axis=-1).mean()
print(f"pose detector: mean error {det_err:.2f} px on the real test frames")
book.glue(steps=config["steps"], finetune=config["finetune"],
          n_train_videos=config["n_videos"], det_err=float(det_err),
          ckpt_kb=int(book.data.path(M.CHECKPOINT).stat().st_size / 1024),
          n_params=f"{sum(p.numel() for p in models['plain'][0].parameters()):,}")

# %% tags=["remove-output"]
fig, axes = book.figure(2, height=2.6)
base = models["plain"][1]["base"]
axes[0].plot(base["step"], base["recon"], color="k", label="backbone")
for name in ("plain", "bidirectional"):
    h = models[name][1]["finetune"]
    axes[0].plot(np.array(h["step"]) + config["steps"], h["recon"], color=COLOURS[name],
                 label=name)
axes[0].set_yscale("log")
axes[0].set_xlabel("step")
axes[0].set_ylabel("reconstruction loss (log)")
axes[0].legend(fontsize=8)
h = eval_record["history"]
axes[1].plot(h["step"], np.array(h["loss"]) * M.SIZE / 2, color=COLOURS["keypoints"])
axes[1].set_yscale("log")
axes[1].set_xlabel("step")
axes[1].set_ylabel("pose detector L1 (px, log)")
book.show_figure(fig, "fig_training")

# %% [markdown]
# ```{glue:figure} fig_training
# :alt: Left, the reconstruction loss on a log scale against training step: one black curve for the shared backbone falling steeply, then a grey and a blue curve continuing it for the plain and bidirectional models. Right, the pose detector's training loss in pixels falling on a log scale.
# :name: fig-06-training
#
# **The backbone's reconstruction loss flattens within the schedule; both continuations
# go on from it.** Training records stored in the committed checkpoint (this notebook's
# seed): the pyramid $L_1$ reconstruction term, averaged over blocks of ten steps (left),
# and the pose detector's joint error in pixels (right).
# ```
#
# The checkpoint holds every seed's models in half precision
# ({glue:text}`ckpt_kb` KB). The pose detector finds the joints of real test frames within
# {glue:text}`det_err:.2f` pixels on average, the floor under every AKD below.
#
# ## One large displacement, step by step
#
# The pair of the figure above: the first frame as source, the last as driving frame. The
# bidirectional model transfers it directly and through each interpolated image.

# %%
i = int(np.flatnonzero((pairs["video"] == video)
                       & (pairs["frame"] == config["n_frames"] - 1))[0])
model = models["bidirectional"][0]
s, d = pairs["source"][i:i + 1], pairs["driving"][i:i + 1]
direct = M.transfer_direct(model, s, d)
anytime = M.transfer_anytime(model, s, d)
err = {"direct": M.l1(direct, d)[0]}
err |= {f"t={t}": M.l1(y, d)[0] for t, y in zip((0.25, 0.5, 0.75),
                                               anytime["candidates"])}
print(f"displacement {pairs['displacement'][i]:.1f} px; selector picks t = "
      f"{anytime['t'][0]}")
print("L1 against the driving frame: "
      + ", ".join(f"{k} {v:.3f}" for k, v in err.items()))
book.glue(demo_disp=float(pairs["displacement"][i]), demo_direct=float(err["direct"]),
          demo_selected=float(M.l1(anytime["output"], d)[0]),
          demo_none=float(M.l1(s, d)[0]), demo_t=float(anytime["t"][0]))

# %% tags=["remove-output"]
fig, axes = book.figure(6, 2, height=1.35)
top = [(s[0], "source S"), *[(anytime["intermediates"][j, 0], f"$I_{{{t}}}$")
                             for j, t in enumerate((0.25, 0.5, 0.75))],
       (d[0], "driving D"), (direct[0], "direct")]
bottom = [(None, ""), *[(anytime["candidates"][j, 0], f"$Y_{{{t}}}$")
                        for j, t in enumerate((0.25, 0.5, 0.75))],
          (anytime["output"][0], f"selected ($t^*$={anytime['t'][0]})"),
          (np.abs(anytime["output"][0] - d[0]), "|selected - D|")]
for row, panels in enumerate((top, bottom)):
    for ax, (img, title) in zip(axes[row], panels):
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
        if img is None:
            ax.axis("off")
            continue
        ax.imshow(np.clip(img.transpose(1, 2, 0), 0, 1))
        ax.set_title(title, fontsize=8)
book.show_figure(fig, "fig_anytime")

# %% [markdown]
# ```{glue:figure} fig_anytime
# :alt: Two rows of small images. Top: the source sprite, three interpolated images at t equal to 0.25, 0.5 and 0.75 in which the sprite turns progressively towards the driving pose, the driving frame, and the direct transfer. Bottom: the three final transfers from each interpolated image, the selected one, and its absolute difference from the driving frame.
# :name: fig-06-anytime
#
# **One large displacement, both routes.** Top: source, interpolated images $I_t$,
# driving frame and the direct transfer; bottom: the transfers $Y_t$ from each $I_t$ to
# the driving keypoints, the one the selector picks and its absolute error. Displacement
# {glue:text}`demo_disp:.1f` px.
# ```
#
# Against the driving frame, the direct transfer has an $L_1$ error of
# {glue:text}`demo_direct:.3f`, the selected two-step transfer
# {glue:text}`demo_selected:.3f`, and the untouched source {glue:text}`demo_none:.3f`. On
# a displacement this large the small model does not turn the sprite all the way by
# either route: in its training videos, pairs this far apart are a small minority.
#
# Whether the two-step route is better than the direct one on average, and for which
# displacements, is the question of [the reproduction](reproduction.ipynb).
#
# ## The classical-flow peer
#
# The decomposition principle does not need a network. OpenCV's Farnebäck optical flow
# {cite}`farneback2003two` estimates dense motion between two frames by local polynomial
# expansion, and, like any local method, loses track when the motion is larger than its
# window and pyramid reach. `M.farneback_direct` warps $S$ by the flow from $D$ to $S$;
# `M.farneback_chain` composes the flows between consecutive **real** frames of the video,
# each a small displacement. The chained version sees the true in-between frames, which
# the network does not: it shows the principle with exact intermediates, not the paper's
# method.

# %%
last = pairs["frames"][video]
chain = M.farneback_chain(last[None])
fdirect = M.farneback_direct(last[:1], last[-1:])
target = last[-1:]
print(f"Farnebäck, L1 to the last frame: direct {M.l1(fdirect, target)[0]:.3f},\n"
      f"  chained through {len(last) - 2} real frames {M.l1(chain, target)[0]:.3f}, "
      f"no motion {M.l1(last[:1], target)[0]:.3f}")

# %% [markdown]
# ## Exercises
#
# ```{exercise} Two hops or three?
# :label: ex-06-hops
#
# **Level:** medium · **Time:** about 15 minutes.
#
# The algorithm above takes one interpolated image. Write a chain of $n$ hops,
# $S\to I_{1/n}\to I_{2/n}\to\dots\to D$, each a transfer to the keypoints $k^{j/n}$
# interpolated between $k^S$ and $k^D$, and compare its mean $L_1$ with the direct
# transfer on the large-displacement test pairs for $n=1,2,3,4$. What happens as $n$
# grows, and why?
# ```
#
# ```{solution-start} ex-06-hops
# :class: dropdown
# ```
#
# Two forces pull against each other. Each hop is a smaller displacement, which the
# model handles better; but each also re-renders the sprite, so the generator's small
# errors (blur, colour bleeding at the edges) accumulate, and the keypoints of the next
# hop are read from the previous output, so an error in one hop moves the next. Which
# one wins is what the numbers below say for the committed model.

# %%
import torch


def hops(model, source, driving, n):
    """Transfer in n equal keypoint steps, re-detecting after every hop."""
    with torch.no_grad():
        s, d = torch.as_tensor(source), torch.as_tensor(driving)
        k_s, k_d = model.detector(s), model.detector(d)
        img = s
        for j in range(1, n + 1):
            k_next = (1 - j / n) * k_s + j / n * k_d
            img = model.animate(img, model.detector(img), k_next)
    return img.numpy()


large = bins == 2
for n in (1, 2, 3, 4):
    out = hops(model, pairs["source"][large], pairs["driving"][large], n)
    print(f"n = {n}: mean L1 {M.l1(out, pairs['driving'][large]).mean():.4f}")
    book.glue(f"ex_hops_{n}", float(M.l1(out, pairs["driving"][large]).mean()))

# %% [markdown]
# With $n=1$ (the direct transfer) the mean $L_1$ is {glue:text}`ex_hops_1:.4f`, with
# two hops {glue:text}`ex_hops_2:.4f`, with four {glue:text}`ex_hops_4:.4f`.
#
# ```{solution-end}
# ```
#
# ```{exercise} How good is the evaluation detector?
# :label: ex-06-detector
#
# **Level:** easy · **Time:** about 5 minutes.
#
# AKD compares the joints the pose detector finds on a generated frame with those it finds
# on the real driving frame. Compute the AKD of the *real* driving frames against their
# exact joints, and the AKD of the untouched source (no motion at all) by displacement
# bin. Which AKD values below can be read as "good"?
# ```
#
# ```{solution-start} ex-06-detector
# :class: dropdown
# ```
#
# The detector's own error is the floor; the no-motion AKD is the ceiling any transfer
# must beat, and it grows with the displacement by definition.

# %%
real = M.detect(evaluator, pairs["driving"])
floor, _ = M.akd_mkr(real, pairs["joints_d"])
still, _ = M.akd_mkr(M.detect(evaluator, pairs["source"]), real)
for b, name in enumerate(("small", "medium", "large")):
    print(f"{name:7s} detector floor {floor[bins == b].mean():.2f} px, "
          f"no motion {still[bins == b].mean():.2f} px")
book.glue(ex_floor=float(floor.mean()))

# %% [markdown]
# ```{solution-end}
# ```

# %%
book.finish()
