# %% [markdown]
# # The method: a forest, then a cheap completion
#
# A minimum spanning tree (MST) of $n$ points connects them all with the least total length. It is
# the backbone of single-linkage clustering and of many geometric algorithms. In a Euclidean space
# of low dimension, trees of space partitions find it fast; in an **arbitrary metric space** (edit
# distance between strings, Jaccard distance between sets, a learned distance) nothing is known
# about the points except their distances, and even an approximate MST needs
# $\Omega(n^2)$ distance evaluations in the worst case.
#
# Veldt et al. {cite}`veldt2025mfc` split the problem in two:
#
# > We introduce a framework for metric MSTs that first (1) finds a forest of trees using practical
# > heuristics, and then (2) finds a small weight set of edges to connect disjoint components in the
# > forest into a spanning tree. We prove that optimally solving step (2) still takes
# > $\Omega(n^2)$ time, but we provide a subquadratic 2.62-approximation algorithm.
#
# This notebook runs both steps on a small 2-D example that we can draw, checks the two guarantees
# of the paper on it, and shows what happens when the forest of step (1) is bad. The experiments at
# scale are in [the reproduction](reproduction.ipynb).

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import numpy as np

from icml25 import book
from icml25.metric_mst import (
    DistanceOracle,
    exact_mst,
    forest_completion_mst,
    gaussian_mixture,
    k_center,
    mfc_ratio,
    overlap_gamma,
)

SIZES = {
    "quick": dict(n=120, n_clusters=5),
    "book": dict(n=300, n_clusters=8),
    "paper": dict(n=2000, n_clusters=45),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
X = gaussian_mixture(size.n, 2, 6, run.rng)
exact = exact_mst(X)


def draw_tree(ax, X, edges, **style):
    for i, j in edges:
        ax.plot(*X[[i, j]].T, **style)


# %% [markdown]
# ## Step 1: a forest from a heuristic
#
# The paper's heuristic is **k-center clustering** by Gonzalez's farthest-first traversal: start
# from a random point, repeatedly add the point farthest from all centers chosen so far, and assign
# every point to its nearest center. With $t$ centers this takes $nt$ distance evaluations. Inside
# each cluster an exact MST is cheap: $\binom{|C_i|}{2}$ evaluations. The union of these small MSTs
# is the forest $F$.

# %%
oracle = DistanceOracle(X)
assignment, centers = k_center(oracle, size.n_clusters, seed=seed)
tree = forest_completion_mst(X, n_clusters=size.n_clusters, seed=seed)
forest = tree.edges[: tree.n_forest_edges]
completion = tree.edges[tree.n_forest_edges :]

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.4, sharex=True, sharey=True)
for c in range(size.n_clusters):
    axes[0].scatter(*X[assignment == c].T, s=7, color=book.PALETTE[c % 8])
axes[0].scatter(*X[centers].T, marker="x", s=60, color="black")
axes[0].set_title(f"k-center clusters (t = {size.n_clusters}; x: centers)")
axes[1].scatter(*X.T, s=4, color="grey")
draw_tree(axes[1], X, forest, color=book.PALETTE[0], lw=1)
axes[1].set_title("the forest: an exact MST inside each cluster")
book.show_figure(fig, "fig_forest")

# %% [markdown]
# ```{glue:figure} fig_forest
# :alt: Two scatter plots of the same 2-D points. Left, the points coloured by k-center cluster, with black crosses at the centers; right, grey points joined by blue tree edges that stay inside each cluster.
# :name: fig-15-forest
#
# **Step 1 of the framework: cheap clusters, then an exact MST inside each.** Left: the
# k-center clusters of the toy mixture (colours) and their centers (crosses). Right: the
# forest $F$, the union of the exact MSTs of the clusters; it has one tree per cluster
# and no edge between clusters yet.
# ```
#
# {numref}`fig-15-forest` shows both halves of step 1.

# %% [markdown]
# ## Step 2: completing the forest
#
# ```{prf:definition} Metric forest completion (MFC)
# :label: def-mfc
#
# Given points with a metric $d$ and a forest $F$ with components $C_1,\dots,C_t$, find a set of
# edges $E$ such that $F\cup E$ is a spanning tree of least weight $w(F)+w(E)$.
# ```
#
# The optimal completion is the MST of the graph in which each component is a node and the edge
# between two components weighs their **closest pair**, which needs all distances between
# components: $\Omega(n^2)$ again. The paper's **MFC-Approx** looks at far fewer pairs. It picks one
# representative $r_i$ per component (the official code takes its first point) and, for each pair
# of components, keeps the lightest of the edges from $r_i$ to $C_j$ and from $C_i$ to $r_j$:
#
# $$\hat w(i, j) = \min\Big(\min_{v\in C_j} d(r_i, v),\ \min_{u\in C_i} d(u, r_j)\Big).$$
#
# That is $nt$ evaluations: every point against every representative. An MST of the $t$-node graph
# with weights $\hat w$, mapped back to the realising point pairs, completes the forest.
#
# ```{prf:theorem} MFC-Approx (Veldt et al., 2025)
# :label: thm-mfc-approx
#
# In any metric space, the tree $F\cup E$ found by MFC-Approx weighs at most $2.62$ times the
# best completion of the same forest, $w(F)+w(E^*)$.
# ```
#
# The forest's weight is part of the objective, and must be: the completion edges *alone* admit no
# constant factor. Two components whose representatives sit at their far ends, with their closest
# pair at the near ends, make $w(E)/w(E^*)$ as large as one likes, and the test suite builds such
# a case. The proof routes the closest pair $(u, v)$ through the representatives with the triangle
# inequality, and the detour from $u$ to $r_i$ is paid for by the forest's own path between them.

# %% tags=["hide-input", "remove-output"]
fig, ax = book.figure(height=4.6)
ax.scatter(*X.T, s=4, color="grey")
draw_tree(ax, X, forest, color=book.PALETTE[0], lw=1)
draw_tree(ax, X, completion, color=book.PALETTE[3], lw=2.5)
reps = [np.flatnonzero(tree.components == c)[0]
        for c in range(tree.components.max() + 1)]
ax.scatter(*X[reps].T, marker="s", s=40, color=book.PALETTE[3],
           label="representatives $r_i$")
missed = ({tuple(sorted(e)) for e in exact.edges}
          - {tuple(sorted(e)) for e in tree.edges})
draw_tree(ax, X, list(missed), color="black", lw=0.8, ls=":")
ax.plot([], [], color=book.PALETTE[0], lw=1, label="forest edges")
ax.plot([], [], color=book.PALETTE[3], lw=2.5, label="completion edges")
ax.plot([], [], color="black", lw=0.8, ls=":", label="exact-MST edges not used")
fig.legend(loc="outside lower center", ncols=4)  # below the axes, off the data
ax.set_title("forest + completion = an approximate MST")
book.show_figure(fig, "fig_completion")


# %% [markdown]
# ```{glue:figure} fig_completion
# :alt: The 2-D points with the blue forest edges, a few thick orange-red completion edges joining the trees, square markers at one representative per tree, and dotted black segments where the exact MST uses an edge that the approximate tree does not.
# :name: fig-15-completion
#
# **A few completion edges through the representatives turn the forest into a spanning
# tree.** Blue: the forest of {numref}`fig-15-forest`; thick: the edges that MFC-Approx
# adds, each found from a representative $r_i$ (squares); dotted: the edges of the exact
# MST that the approximate tree leaves out.
# ```
#
# In {numref}`fig-15-completion` the dotted edges show where the approximate tree differs
# from the exact one.

# %% [markdown]
# ## How good is the tree?
#
# The paper's second result is **learning-augmented**: the final tree is good when the forest of
# step (1) agrees with an optimal MST. The measure of agreement is
#
# $$\gamma = \frac{w(F)}{w\big(\{e\in M^*: e\text{ joins two points of the same component}\}\big)}\ \ge 1,$$
#
# the weight of the forest over the weight of the optimal tree's edges inside the components. A
# forest that *is* the part of an optimal MST inside its components has $\gamma = 1$.
#
# ```{prf:theorem} Learning-augmented MST (Veldt et al., 2025)
# :label: thm-mfc-gamma
#
# If the forest has overlap measure $\gamma$, forest completion by MFC-Approx returns a spanning
# tree of weight at most $(2\gamma+1)\,w(M^*)$.
# ```

# %% tags=["nbval-check-output"]
def report(name, tree):
    gamma = overlap_gamma(tree, exact)
    ratio = tree.weight / exact.weight
    completion_ratio = mfc_ratio(tree, X)
    pairs = size.n * (size.n - 1) // 2
    print(f"{name}:\n"
          f"  weight / MST = {ratio:.3f}, gamma = {gamma:.3f} "
          f"(bound 2*gamma+1 = {2 * gamma + 1:.3f})\n"
          f"  weight / best completion of the forest = {completion_ratio:.3f} "
          f"(bound 2.62)\n"
          f"  distances evaluated: {tree.evaluations / pairs:.1%} of all pairs")
    return ratio, gamma


good = report("k-center forest", tree)

# %% [markdown]
# The clusters of k-center follow the geometry of the data, so the forest is almost the optimal
# tree's restriction ($\gamma$ close to 1) and the completion adds a few short edges.
#
# ## A bad forest
#
# Now the forest comes from a **random** partition of the points into the same number of parts:
# each part's exact MST is long and crosses the whole picture. MFC-Approx still returns a spanning
# tree within its guarantee, but the guarantee, $(2\gamma+1)$, is now weak, and so is the tree.

# %% tags=["nbval-check-output"]
random_parts = np.random.default_rng(seed + 1).integers(0, size.n_clusters, size.n)
bad_tree = forest_completion_mst(X, components=random_parts)
bad = report("random forest", bad_tree)

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.3, sharex=True, sharey=True)
for ax, t_, title in [(axes[0], tree, "k-center forest"),
                      (axes[1], bad_tree, "random forest")]:
    ax.scatter(*X.T, s=4, color="grey")
    draw_tree(ax, X, t_.edges, color=book.PALETTE[0], lw=0.8)
    ax.set_title(f"{title}: {t_.weight / exact.weight:.2f} x MST weight")
book.show_figure(fig, "fig_good_bad")
book.glue("good_ratio", good[0])
book.glue("good_gamma", good[1])
book.glue("bad_ratio", bad[0])
book.glue("bad_gamma", bad[1])

# %% [markdown]
# ```{glue:figure} fig_good_bad
# :alt: Two spanning trees of the same 2-D points. Left, from the k-center forest, short edges that follow the clusters; right, from a random forest, many long edges that cross the picture.
# :name: fig-15-good-bad
#
# **The forest sets the quality: k-center gives a near-optimal tree, a random partition a
# long, tangled one.** The spanning trees that MFC-Approx returns from the two forests;
# each title gives the tree's weight over the exact MST's.
# ```
#
# With the k-center forest ({numref}`fig-15-good-bad`, left) the tree weighs {glue:text}`good_ratio:.3f` times the MST
# ($\gamma$ = {glue:text}`good_gamma:.2f`); with the random forest {glue:text}`bad_ratio:.2f` times
# ($\gamma$ = {glue:text}`bad_gamma:.2f`). Both respect $(2\gamma+1)$. The lesson of the paper is
# in the split: step (2) is cheap and safe whatever the forest, and the quality comes from the
# forest, which is where domain knowledge or a learned model can enter.
#
# ## Exercises
#
# ```{exercise} How many clusters?
# :label: ex-mst-clusters
#
# With balanced clusters, MFC makes about $nt + t\binom{n/t}{2} + nt$ distance evaluations. Which
# $t$ minimises it, and what is then the growth of the count with $n$? Check it with
# `forest_completion_mst(X, n_clusters=t).evaluations` for a few $t$.
# ```
#
# ```{solution} ex-mst-clusters
# :class: dropdown
#
# The count is about $2nt + n^2/(2t)$, minimised at $t = \sqrt{n}/2$, where it is
# $2n^{3/2}$: subquadratic, with exponent $3/2$. The default $t=\lceil\sqrt n\rceil$ costs
# $2.5\,n^{3/2}$, a quarter more, for a forest of smaller clusters. Unbalanced clusters (k-center on
# clustered data) move the count up.
# ```
#
# ```{exercise} Not a metric
# :label: ex-mst-cosine
#
# Cosine "distance" $1-\cos(x, y)$ breaks the triangle inequality. Find three vectors in the plane
# that show it, and explain which step of the 2.62 guarantee fails. Is the output still a spanning
# tree?
# ```
#
# ```{solution} ex-mst-cosine
# :class: dropdown
#
# Take angles $0$, $45°$ and $90°$: $d(0, 90°)=1$ but $d(0,45°)+d(45°,90°)=2(1-\cos 45°)\approx 0.59$.
# The guarantee bounds a closest pair between two components by paths through representatives with
# the triangle inequality, so it no longer applies; the output is still a spanning tree, since the
# construction never uses the metric's axioms. The test suite finds completions above 2.62 times the
# optimum under cosine distance.
# ```
#
# ```{exercise} Which representative?
# :label: ex-mst-representative
#
# The official code takes the first point of each component as its representative. Would the
# k-center *center* be a better choice? Modify `complete_forest` to use the centers and compare
# the completion weight on the toy. Does the evaluation count change?
# ```
#
# ```{solution} ex-mst-representative
# :class: dropdown
#
# The center is the point k-center placed in the middle of its cluster, so distances from it to
# other clusters tend to be smaller than from an arbitrary member, and the candidate edges are
# shorter on average. The count does not change ($n$ distances per representative); with centers it
# could even drop by $nt$, since k-center already computed the distances from every point to every
# center.
# ```

# %%
book.finish()
