# %% [markdown]
# # The method: projecting labelled data to a line
#
# Optimal transport between *labelled* datasets needs a distance between labels. OTDD
# {cite}`alvarezmelis2020otdd` takes it from the data: a label $y$ is the distribution $q_y$ of
# the features that carry it, and two labels are as far apart as the Wasserstein distance between
# their feature distributions. That is geometrically right and expensive: one OT problem per pair of
# labels, then one between the datasets. s-OTDD {cite}`nguyen2025sotdd` keeps the geometry and
# drops the cost by projecting every labelled point $(x, y)$ to **one real number**, where optimal
# transport has a closed form.
#
# > The core innovation is Moment Transform Projection (MTP), which maps a label, represented as a
# > distribution over features, to a real number. Using MTP, we derive a data point projection that
# > transforms datasets into one-dimensional distributions. (Nguyen et al., 2025, abstract)
#
# This notebook builds the projection step by step on a 2-D toy you can see, then checks the
# properties a distance between datasets must have. The experiments of the paper are in
# [the reproduction](reproduction.ipynb).

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import os

# POT runs on numpy arrays only here: skip loading its torch backend (about 1.5 s per
# notebook).
os.environ.setdefault("POT_BACKEND_DISABLE_PYTORCH", "1")

import numpy as np  # noqa: E402
import ot  # noqa: E402

from icml25 import book
from icml25.sotdd import draw_projections, otdd_exact, project_dataset, sotdd

SIZES = {
    "quick": dict(n_per_class=60, n_projections=200),
    "book": dict(n_per_class=150, n_projections=1000),
    "paper": dict(n_per_class=1000, n_projections=10000),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
# Colours: one per distance, the same in every figure of the chapter; the toy's labels
# and the two datasets get colours of their own.
COLOURS = {"s-OTDD": book.PALETTE[0], "exact OTDD": book.PALETTE[1],
           "label-blind SW": book.PALETTE[2]}
LABEL_COLOURS = [book.PALETTE[3], book.PALETTE[4], book.PALETTE[7]]
DATASET_COLOURS = {"D1": "0.6", "D2": book.PALETTE[7]}

# %% [markdown]
# ## A toy with three labels
#
# Dataset $D_1$ has three Gaussian blobs in the plane, one per label. Dataset $D_2$ has **the same
# points**; only some labels differ: a fraction of the points carry a label drawn at random. Any
# distance that looks only at the features sees two identical datasets
# ({numref}`fig-11-toy`).

# %% tags=["remove-output"]
centres = np.array([[-2.0, 0.0], [2.0, 0.0], [0.0, 2.5]])
n = size.n_per_class
toy_rng = run.rng("toy-points")
X = np.concatenate([c + 0.6 * toy_rng.standard_normal((n, 2)) for c in centres])
y1 = np.repeat([0, 1, 2], n)


def relabel(labels, fraction, rng, n_classes=3):
    """Give a random label (any class, possibly the same) to a `fraction` of points."""
    labels = labels.copy()
    chosen = rng.random(labels.size) < fraction
    labels[chosen] = rng.integers(0, n_classes, chosen.sum())
    return labels


y2 = relabel(y1, 0.4, run.rng("toy-relabel"))

fig, axes = book.figure(2, height=3.4, sharey=True)
for ax, labels, title in [(axes[0], y1, "$D_1$"),
                          (axes[1], y2, "$D_2$: same points, 40% relabelled")]:
    for c in range(3):
        ax.scatter(*X[labels == c].T, s=8, alpha=0.7, label=f"label {c}",
                   color=LABEL_COLOURS[c])
    ax.set_title(title)
    ax.set_aspect("equal")
fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=3,
           markerscale=2)
book.show_figure(fig, "fig_toy")

# %% [markdown]
# ```{glue:figure} fig_toy
# :alt: Two scatter plots of the same points in the plane, three round clusters. Left, each cluster has a single label colour. Right, the same clusters with many points in the colours of the other labels.
# :name: fig-11-toy
#
# **Same features, different labels: a distance that ignores labels cannot tell these two
# datasets apart.** $D_1$: three Gaussian blobs, one label each. $D_2$: the same points,
# with 40% of them given a label drawn at random (possibly their own).
# ```

# %% [markdown]
# ## One projection, step by step
#
# ```{prf:definition} Moment Transform Projection and data-point projection
# :label: def-sotdd-projection
#
# Draw $\theta\sim\mathcal U(\mathbb S^{d-1})$, moment orders $\lambda_j\sim$ zero-truncated
# Poisson of rate $j$ ($j=1,\dots,k$) and $\psi\sim\mathcal U(\mathbb S^{k})$. The **Moment
# Transform Projection** of a label with feature distribution $q_y$ is the vector
#
# $$\mathrm{MTP}_j(q_y) = \frac{1}{\lambda_j!}\,\mathbb E_{x'\sim q_y}\!\left[(\theta^\top x')^{\lambda_j}\right],
#   \qquad j = 1,\dots,k,$$
#
# and a labelled point projects to
#
# $$z(x, y) = \psi_0\,\theta^\top x + \sum_{j=1}^{k}\psi_j\,\mathrm{MTP}_j(q_y).$$
# ```
#
# The first term is the usual sliced-Wasserstein projection of the feature. The second is the same
# for every point of a label: it places the label by the projected moments of its feature
# distribution. Two points with the same feature but different labels land at different places,
# and two labels land close together when their features project alike, whatever their names.
# In `project_dataset`, `P` holds $\theta^\top x$ for every point and projection, the loop
# over exponents fills `moment_means` with the class means of $(\theta^\top x)^{\lambda_j}$,
# `mtp` divides them by $\lambda_j!$, and the last line is $z(x,y)$.
#
# :::{dropdown} The code: `project_dataset`, the data-point projection
# :open:
# ```{literalinclude} /lib/icml25/sotdd.py
# :pyobject: project_dataset
# :caption: `icml25.sotdd.project_dataset`
# :language: python
# ```
# :::
#
# {numref}`fig-11-projection` draws one projection of the toy.

# %%
proj = draw_projections(n_features=2, n_projections=1, n_moments=5,
                        rng=run.rng("one-projection"))
theta, lam, psi = proj.theta[0], proj.moments[0], proj.psi[0]
z1 = project_dataset(X, y1, proj)[:, 0]
z2 = project_dataset(X, y2, proj)[:, 0]
print("theta =", np.round(theta, 3), "| moment orders lambda =", lam)
print("psi =", np.round(psi, 3))

# %% tags=["remove-output"]
fig, axes = book.figure(2, height=3.0)
ax = axes[0]
for c in range(3):
    ax.scatter(X[y1 == c] @ theta, z1[y1 == c], s=6, alpha=0.6, label=f"label {c}",
               color=LABEL_COLOURS[c])
ax.set_xlabel(r"feature projection $\theta^\top x$")
ax.set_ylabel(r"$z(x, y)$ in $D_1$")
ax.set_title("each label shifts its points by one amount", fontsize=10)
ax.legend(markerscale=2)
bins = np.linspace(min(z1.min(), z2.min()), max(z1.max(), z2.max()), 50)
axes[1].hist(z1, bins, alpha=0.6, label="$D_1$", color=DATASET_COLOURS["D1"])
axes[1].hist(z2, bins, histtype="step", lw=1.5, label="$D_2$",
             color=DATASET_COLOURS["D2"])
axes[1].set_xlabel("$z$")
axes[1].set_ylabel("points")
axes[1].set_title("the two projected datasets", fontsize=10)
axes[1].legend()
book.show_figure(fig, "fig_projection")

# %% [markdown]
# ```{glue:figure} fig_projection
# :alt: Left, a scatter of the projected value z against the feature projection for the points of D1: three parallel straight lines, one per label, offset from each other. Right, histograms of z for D1 (grey bars) and D2 (black outline), which differ.
# :name: fig-11-projection
#
# **The label term moves every point of a label by the same amount, so relabelled points
# change the one-dimensional distribution.** One random projection of the toy. Left: each
# point's $z(x,y)$ against its feature projection $\theta^\top x$ in $D_1$; the three labels
# lie on parallel lines. Right: the distributions of $z$ in $D_1$ and $D_2$, whose
# difference the 1-D Wasserstein distance measures.
# ```

# %% [markdown]
# Along the feature direction alone ($\theta^\top x$) the two datasets are identical. After the
# moment transform, the relabelled points of $D_2$ sit at other heights, and the two 1-D
# distributions differ. The 1-D Wasserstein distance between them is a sorted difference.
#
# ```{prf:definition} s-OTDD
# :label: def-sotdd
#
# For $L$ projections drawn once and **shared by both datasets**,
#
# $$\text{s-OTDD}_p(D_1, D_2) = \Big(\frac1L\sum_{l=1}^L W_p^p\big(z_l\sharp D_1,\ z_l\sharp D_2\big)\Big)^{1/p},
# \qquad W_p^p(\mu,\nu) = \int_0^1\big|F_\mu^{-1}(t)-F_\nu^{-1}(t)\big|^p\,dt.$$
# ```
#
# Each projection costs a matrix product ($O(nd)$), the class moments ($O(nk)$, a segment sum over
# points sorted by label, so the number of classes does not matter) and a sort ($O(n\log n)$).
# `sotdd` draws the projections once per chunk and applies them to both datasets; with
# equal sizes `wasserstein_1d_pp` is the mean of $|a-b|^p$ over the sorted samples, and
# otherwise it integrates the two quantile functions exactly on their merged jumps.
# `sotdd` computes the same values as `project_dataset` followed by `wasserstein_1d_pp`,
# in a faster layout: one matrix product per dataset, the class moments of each
# projection as one polynomial, and every projected row sorted in place. The polynomial is
# evaluated by a small compiled kernel (numba) on runs of points that stay in the CPU's
# fastest cache, with the same arithmetic on every machine; the whole takes about 1.2 times
# the product and the sort alone (the book's Performance page).
#
# The chapter computes in float64. `sotdd(..., dtype="float32")`, the authors' precision,
# halves the memory that the product and the sort move: it runs about 1.7 times sooner
# (about 1.4 times its own float32 product and sort), and its distances differ from the
# float64 ones by about $10^{-8}$ relative, far below the Monte-Carlo error of $L$
# projections (a test measures both). The chapter keeps float64 because its checks compare
# values to $10^{-11}$ (against the definition, and per projection against the authors'
# code), and its datasets are small enough that the time saved is a few milliseconds.
#
# :::{dropdown} The code: `sotdd` and the one-dimensional $W_p^p$
# ```{literalinclude} /lib/icml25/sotdd.py
# :pyobject: sotdd
# :caption: `icml25.sotdd.sotdd`: the average over shared projections
# :language: python
# ```
#
# ```{literalinclude} /lib/icml25/sotdd.py
# :pyobject: wasserstein_1d_pp
# :caption: `icml25.sotdd.wasserstein_1d_pp`: $W_p^p$ on the line
# :language: python
# ```
# :::

# %% [markdown]
# ## Label-blind slicing misses what s-OTDD sees
#
# POT's `sliced_wasserstein_distance` projects features only. On our pair it returns zero however
# many labels change, while s-OTDD and exact OTDD grow.

# %% tags=["nbval-check-output"]
fractions = [0.0, 0.2, 0.4, 0.6, 0.8]
# one draw of projections shared by every distance of this notebook (sharing is what
# makes d(D, D) exactly 0); the relabelling stream restarts at each fraction, so the
# relabelled points at 20% are among those at 40%, and so on
proj_seed = run.seed_of("projections")
sw_seed = run.seed_of("sliced-wasserstein") % 2**32  # POT takes a 32-bit seed
rows = []
for f in fractions:
    y_f = relabel(y1, f, run.rng("relabel-sweep"))
    rows.append((
        f,
        sotdd(X, y1, X, y_f, n_projections=size.n_projections, seed=proj_seed),
        otdd_exact(X, y1, X, y_f),
        ot.sliced_wasserstein_distance(X, X, n_projections=size.n_projections,
                                       seed=sw_seed),
    ))
print(" fraction  s-OTDD   OTDD   label-blind SW")
for f, s, o, w in rows:
    print(f"  {f:.1f}    {s:7.4f}  {o:6.3f}   {w:.3g}")

# %% tags=["remove-output"]
s_vals = np.array([r[1] for r in rows])
o_vals = np.array([r[2] for r in rows])
book.glue(toy_sotdd_08=s_vals[-1], toy_otdd_08=o_vals[-1])
fig, ax = book.figure(height=2.8)
ax.plot(fractions, s_vals / s_vals.max(), "o-", label="s-OTDD (scaled to max 1)",
        color=COLOURS["s-OTDD"])
ax.plot(fractions, o_vals / o_vals.max(), "s-", label="exact OTDD (scaled to max 1)",
        color=COLOURS["exact OTDD"])
ax.plot(fractions, [r[3] for r in rows], "^-", label="label-blind sliced Wasserstein",
        color=COLOURS["label-blind SW"])
ax.set_xlabel("fraction of relabelled points")
ax.set_ylabel("distance")
ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
book.show_figure(fig, "fig_label_awareness")

# %% [markdown]
# ```{glue:figure} fig_label_awareness
# :alt: Three lines against the fraction of relabelled points: s-OTDD and exact OTDD, each scaled to a maximum of 1, rise from 0; the label-blind sliced Wasserstein distance stays flat at 0.
# :name: fig-11-label-awareness
#
# **s-OTDD and exact OTDD grow as labels change; the label-blind sliced Wasserstein
# distance stays at zero.** Distances between $D_1$ and a copy of it with a growing
# fraction of labels redrawn at random; s-OTDD and OTDD are scaled to a maximum of 1
# because they live on different scales.
# ```

# %% [markdown]
# In {numref}`fig-11-label-awareness`, at 80% relabelled points s-OTDD reads
# {glue:text}`toy_sotdd_08:.4f` and OTDD {glue:text}`toy_otdd_08:.3f`. The two live on
# different scales (s-OTDD averages over directions, OTDD transports in the full space), so
# the book compares them by **rank**, never by value.

# %% [markdown]
# ## What a dataset distance must satisfy
#
# The issues of the original OTDD code are a list of ways a dataset distance goes wrong: a dataset
# at non-zero distance from itself, asymmetry, dependence on the *names* of the labels. With the
# projections shared by both datasets, s-OTDD has none of these, exactly, not just up to Monte-Carlo
# error. The check below also runs two datasets of different sizes with disjoint label sets.

# %% tags=["nbval-check-output"]
L = size.n_projections
renamed = np.array([7, 3, 5])[y1]  # the same labels under other names
half = slice(None, None, 2)
checks = {
    "d(D1, D1) == 0": sotdd(X, y1, X, y1, n_projections=L, seed=proj_seed) == 0.0,
    "d(D1, D2) == d(D2, D1)": sotdd(X, y1, X, y2, n_projections=L, seed=proj_seed)
    == sotdd(X, y2, X, y1, n_projections=L, seed=proj_seed),
    "d(D1, renamed D1) == 0":
    sotdd(X, y1, X, renamed, n_projections=L, seed=proj_seed) == 0.0,
    "unequal sizes, disjoint labels > 0": sotdd(
        X, y1, X[half] + 0.5, renamed[half] + 100, n_projections=L, seed=proj_seed
    )
    > 0,
}
for name, ok in checks.items():
    print(f"{name:38s} {ok}")

# %% [markdown]
# Renaming the labels of a dataset leaves it at distance **zero** from itself: labels enter only
# through their feature distributions. That is what lets s-OTDD compare datasets with different
# numbers of classes or disjoint label sets (say, digits against letters).
#
# ## Exercises
#
# ```{exercise} The label-blind special case
# :label: ex-sotdd-blind
#
# **Level:** easy · **Time:** about 10 minutes.
#
# Which choice of the mixing vector $\psi$ turns s-OTDD into the label-blind sliced Wasserstein
# distance? Check it numerically with `project_dataset` and a hand-made `Projections`.
# ```
#
# ```{solution-start} ex-sotdd-blind
# :class: dropdown
# ```
#
# $\psi = (1, 0, \dots, 0)$ keeps only $\theta^\top x$: the label term
# $\sum_j\psi_j\,\mathrm{MTP}_j$ vanishes. The cell keeps the directions and moment orders
# of a fresh draw, replaces every $\psi_l$ by the first unit vector, and compares the
# projections with $X\theta^\top$ and the distance between $D_1$ and $D_2$ with the one
# under the original $\psi$.

# %%
from icml25.sotdd import Projections, wasserstein_1d_pp

drawn = draw_projections(n_features=2, n_projections=L, n_moments=5,
                         rng=run.rng("exercise-projections"))
blind = Projections(theta=drawn.theta, moments=drawn.moments,
                    psi=np.tile(np.eye(6)[0], (L, 1)))


def distance_with(p):
    """s-OTDD between D1 and D2 (40% relabelled) for the given projections."""
    w = wasserstein_1d_pp(project_dataset(X, y1, p), project_dataset(X, y2, p))
    return np.sqrt(w.mean())


gap_blind = np.abs(project_dataset(X, y1, blind) - X @ blind.theta.T).max()
print(f"max |z(x, y) - theta^T x| with psi = e_0: {gap_blind:.1e}")
print(f"distance(D1, D2), psi = e_0:      {distance_with(blind):.4f}")
print(f"distance(D1, D2), psi as drawn:   {distance_with(drawn):.4f}")
book.glue(ex_blind_drawn=distance_with(drawn))


# %% [markdown]
# With $\psi=e_0$ every projected point equals its feature projection, so $D_1$ and the
# relabelled $D_2$ project to the same multiset and their distance is exactly zero, as the
# label-blind sliced Wasserstein distance. The same directions with the drawn $\psi$ give
# {glue:text}`ex_blind_drawn:.4f`: all the label awareness sits in $\psi_1,\dots,\psi_k$.
#
# ```{solution-end}
# ```
#
# ```{exercise} Why exactly zero?
# :label: ex-sotdd-zero
#
# **Level:** medium · **Time:** about 15 minutes.
#
# Prove that $\text{s-OTDD}(D, D)=0$ and that s-OTDD is symmetric when both datasets share the
# projections, and explain why two *independent* draws of projections would not give 0.
# ```
#
# ```{solution-start} ex-sotdd-zero
# :class: dropdown
# ```
#
# With shared $(\theta,\lambda,\psi)$ the projected samples of $D$ and $D$ are the same multiset,
# so every sorted difference is 0; $|a-b|^p=|b-a|^p$ gives symmetry. Independent draws compare
# $z_l\sharp D$ with $z'_l\sharp D$ for *different* maps $z_l\neq z'_l$: each term is a
# positive number, and their average converges to a positive limit, not to zero, as $L$
# grows. The cell measures that floor for $D_1$ against itself and sets it beside the
# distance between $D_1$ and $D_2$.

# %%
def self_distance_independent(n_proj):
    """D1 against itself, each side with its own draw of n_proj projections."""
    pa, pb = (draw_projections(n_features=2, n_projections=n_proj, n_moments=5,
                               rng=run.rng(f"independent-projections-{side}"))
              for side in ("a", "b"))
    w = wasserstein_1d_pp(project_dataset(X, y1, pa), project_dataset(X, y1, pb))
    return np.sqrt(w.mean())


shared_self = sotdd(X, y1, X, y1, n_projections=L, seed=proj_seed)
floor = {n_proj: self_distance_independent(n_proj) for n_proj in (L // 10, L, 4 * L)}
d12 = sotdd(X, y1, X, y2, n_projections=L, seed=proj_seed)
print(f"shared projections, d(D1, D1):            {shared_self}")
for n_proj, value in floor.items():
    print(f"independent draws,  d(D1, D1), L = {n_proj:5d}:  {value:.4f}")
print(f"shared projections, d(D1, D2 40% relabelled): {d12:.4f}")
book.glue(ex_zero_floor=floor[L], ex_zero_d12=d12)

# %% [markdown]
# With independent draws the self-distance does not shrink with $L$: it settles near
# {glue:text}`ex_zero_floor:.3f`, larger than the distance {glue:text}`ex_zero_d12:.4f`
# between $D_1$ and its 40%-relabelled copy measured with shared projections. Sharing the
# draw is what makes s-OTDD a usable distance, not a Monte-Carlo nicety.
#
# ```{solution-end}
# ```
#
# ```{exercise} How many moments?
# :label: ex-sotdd-moments
#
# **Level:** easy · **Time:** about 10 minutes.
#
# Repeat the label-awareness table with `n_moments=1` (the setting of the paper's *NIST script)
# and `n_moments=8` (the code's default). What changes, and why can one moment already separate the
# three labels of the toy?
# ```
#
# ```{solution-start} ex-sotdd-moments
# :class: dropdown
# ```
#
# The cell recomputes s-OTDD for the same relabelled copies with $k=1$, $5$ and $8$
# moments, and divides each column by its value at 80% to compare the shapes.

# %%
moment_table = {}
for k in (1, 5, 8):
    moment_table[k] = np.array([
        sotdd(X, y1, X, relabel(y1, f, run.rng("relabel-sweep")),
              n_projections=L, n_moments=k, seed=proj_seed)
        for f in fractions])
print(" fraction   " + "   ".join(f"k = {k}" for k in moment_table)
      + "   |  scaled to 80%: k = 1, 5, 8")
for i, f in enumerate(fractions):
    print(f"  {f:.1f}    " + "  ".join(f"{v[i]:6.4f}" for v in moment_table.values())
          + "   |  " + "  ".join(f"{v[i] / v[-1]:.2f}" for v in moment_table.values()))
# ex_p_lambda1: P(lambda = 1) for a zero-truncated Poisson(1)
book.glue(ex_moments_k1=moment_table[1][-1], ex_moments_k5=moment_table[5][-1],
          ex_moments_k8=moment_table[8][-1], ex_p_lambda1=1 / (np.e - 1))

# %% [markdown]
# All three grow with the fraction of relabelled points, with nearly the same shape once
# scaled: the number of moments changes the scale, not the ranking (at 80%:
# {glue:text}`ex_moments_k1:.4f` with one moment, {glue:text}`ex_moments_k5:.4f` with five,
# {glue:text}`ex_moments_k8:.4f` with eight). With one moment the label term is
# $\psi_1\,\mathbb E_{q_y}[(\theta^\top x)^{\lambda_1}]/\lambda_1!$, most often a projected
# mean ($\lambda_1=1$ with probability
# $1/(e-1)\approx$ {glue:text}`ex_p_lambda1:.2f`). The toy's labels have distinct
# means, so one moment already separates them; higher moments matter for labels that share a
# mean but differ in spread or shape.
#
# ```{solution-end}
# ```

# %%
book.finish()
