# %% [markdown]
# # Reproduction: learned partitions against SequOOL, DIRECT and CMA-ES
#
# The paper's numerical claims, re-run on multi-index test functions with every method in
# the same run and every evaluation counted:
#
# > For multi-index functions on an $m$-dimensional subspace within $d$ dimensions, our
# > algorithm attains $\tilde{O}(n^{-\beta / d})$ regret, where
# > $\beta = 1 + \frac{d-m}{2m-1}$, as opposed to $\tilde{O}(n^{-1/d})$ for SequOOL, a
# > state-of-the-art optimistic optimization algorithm. Our approach is competitive across a
# > wide range of numerical benchmarks. (Sunkara & Tripathy, 2025, abstract)

# %% [markdown]
# All methods minimise the same functions $f(x)=g(A(x-x^\star))$ on $[-5,5]^d$ with $m=2$
# active directions (`icml25.optimistic.make_problem`, built in [the method](method.ipynb));
# each seed draws a new rotation $A$ and a new optimum $x^\star$, and $\min f=0$, so the
# best value found *is* the simple regret. The learned method appears three times: with the
# compressed-sensing gradient recovery of the paper's code ($m_\phi=4$ sensing directions per
# point, "learned, $m_\phi=4$", the paper's configuration), with the paper's second learner,
# a one-hidden-layer network fitted to uniform samples whose first layer's singular vectors
# give the subspace ("learned, neural"), and with full forward differences ($m_\phi=d$,
# "learned, $m_\phi=d$", our variant). All three spend 20% of the budget learning, about the
# share of the paper's code (500 of 2,500 evaluations).
#
# Two rules hold for every comparison in this chapter. **Equal budgets:** the learning
# samples are evaluations like any other and come out of the same budget $n$ as the search,
# and every method, random search included, gets the same $n$. **In the domain only:** a
# point of the learned plane that leaves $[-5,5]^d$ is *clipped* to the domain before it is
# evaluated, so no method scores a point outside the box. Section 4 shows what changes when
# either rule is dropped, as it is in the authors' released code. The peers are SciPy's DIRECT {cite}`jones1993lipschitzian`
# and CMA-ES from the `cma` package {cite}`hansen2016cma`, with random search as the floor;
# the test functions follow the COCO definitions {cite}`hansen2009real` as the paper's code
# does. The thresholds of the claims were fixed from the paper's
# statements before the run. The paper's second application, weight quantisation of the
# OPT-1.3B language model, needs the model's weights and a GPU and is not reproduced here.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import numpy as np
import pandas as pd
from IPython.display import display

from icml25 import book
from icml25 import optimistic as oo

SIZES = {
    "quick": dict(functions=("sphere", "sharp_ridge", "rastrigin"),
                  budgets=(200, 500), n_claim=500, other_dims=(5,), seeds=2,
                  angle_points=(2, 10, 40), angle_seeds=2, mismatch_seeds=2,
                  edge_seeds=2),
    "book": dict(functions=oo.FUNCTIONS, budgets=(200, 500, 1000), n_claim=1000,
                 other_dims=(5, 20), seeds=4, angle_points=(2, 10, 50, 100),
                 angle_seeds=4, mismatch_seeds=4, edge_seeds=5),
    "paper": dict(functions=oo.FUNCTIONS, budgets=(300, 1000, 3000, 10000),
                  n_claim=1000, other_dims=(5, 20), seeds=20,
                  angle_points=(2, 5, 10, 25, 50, 100, 200), angle_seeds=20,
                  mismatch_seeds=20, edge_seeds=20),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
D_CURVE, N_CLAIM = 10, size.n_claim  # dimension of the regret curves; claims' budget
FLOOR = 1e-10                 # regrets below this count as solved (float precision)
# independent replications, each with its own problems and searches (oo.benchmark)
SEEDS = tuple(run.seed_of(f"replication-{i}") for i in range(size.seeds))
NAMES = {"sequool": "SequOOL", "learned": "learned, $m_\\phi=4$",
         "learned_fd": "learned, $m_\\phi=d$", "learned_nn": "learned, neural",
         "direct": "DIRECT (SciPy)", "cma_es": "CMA-ES (cma)",
         "random": "random search"}
COLOURS = {"sequool": book.PALETTE[0], "learned": book.PALETTE[1],
           "learned_fd": book.PALETTE[2], "learned_nn": book.PALETTE[5],
           "direct": book.PALETTE[3], "cma_es": book.PALETTE[4], "random": "0.55"}
PLAIN = {"sequool": "SequOOL", "learned": "learned, m_phi=4",
         "learned_fd": "learned, m_phi=d", "learned_nn": "learned, neural",
         "direct": "DIRECT (SciPy)", "cma_es": "CMA-ES (cma)",
         "random": "random search"}
TITLES = {"sphere": "sphere", "ellipsoid": "ellipsoid", "sharp_ridge": "sharp ridge",
          "rastrigin": "Rastrigin", "branin": "Branin",
          "styblinski_tang": "Styblinski–Tang"}

# %% [markdown]
# ## 1. Simple regret against the budget
#
# At $d=$ {glue:text}`d_curve` every function is optimised with budgets
# $n\in$ {glue:text}`budgets` over {glue:text}`n_seeds` seeds. SequOOL and the learned
# method are rerun for each budget, because SequOOL's tree depends on $n$ (through
# $h_{\max}$), as the paper's code does; DIRECT, CMA-ES and random search run once with the
# largest budget and are read off their best-so-far traces, which do not depend on it. The
# same methods except CMA-ES (the slowest per evaluation, see below) then run at $n=$
# {glue:text}`n_claim` in $d\in$ {glue:text}`other_dims`.

# %%
curve = oo.benchmark(size.functions, (D_CURVE,), SEEDS, size.budgets)
NOT_CMA = tuple(m for m in oo.METHODS if m != "cma_es")
dims = oo.benchmark(size.functions, size.other_dims, SEEDS, (N_CLAIM,), methods=NOT_CMA)
all_dims = tuple(sorted(size.other_dims + (D_CURVE,)))
at_claim = {}  # method -> regret (functions, dims, seeds) at n = N_CLAIM
for m in oo.METHODS:
    parts = {D_CURVE: curve.regret[m][:, 0, :, size.budgets.index(N_CLAIM)]}
    for j, d in enumerate(size.other_dims):
        parts[d] = (dims.regret[m][:, j, :, 0] if m in dims.regret
                    else np.full_like(parts[D_CURVE], np.nan))
    at_claim[m] = np.stack([parts[d] for d in all_dims], axis=1)
over_budget = max(curve.max_evals_over_budget, dims.max_evals_over_budget)
n_runs = sum(v.size for v in curve.regret.values()) + sum(
    v.size for v in dims.regret.values())
book.glue(d_curve=D_CURVE, budgets=", ".join(f"{n:,}" for n in size.budgets),
          n_seeds=size.seeds, n_claim=f"{N_CLAIM:,}",
          other_dims=", ".join(str(d) for d in size.other_dims),
          all_dims=", ".join(str(d) for d in all_dims), n_functions=len(size.functions),
          n_pairs=at_claim["sequool"].size)

# %% tags=["remove-output"]
SHOW = 1e-12  # regrets below this are drawn at it
rows = int(np.ceil(len(size.functions) / 3))
fig, axes = book.figure(3, rows, height=2.5, sharex=True)
axes = np.atleast_2d(axes)
for i, name in enumerate(size.functions):
    ax = axes.flat[i]
    for m in oo.METHODS:
        r = np.maximum(curve.regret[m][i, 0], SHOW)                 # (seeds, budgets)
        q25, q50, q75 = np.quantile(r, [0.25, 0.5, 0.75], axis=0)
        ax.plot(size.budgets, q50, "o-", ms=3, color=COLOURS[m], label=NAMES[m])
        ax.fill_between(size.budgets, q25, q75, color=COLOURS[m], alpha=0.15, lw=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(size.budgets, [f"{n:,}" for n in size.budgets])
    ax.minorticks_off()
    ax.set_title(TITLES[name])
    if i % 3 == 0:
        ax.set_ylabel("simple regret")
    if i >= len(size.functions) - 3:
        ax.set_xlabel("evaluations $n$")
for ax in axes.flat[len(size.functions):]:
    ax.set_visible(False)
handles, names = axes.flat[0].get_legend_handles_labels()
fig.legend(handles, names, loc="outside upper center", ncol=4, fontsize=8)
book.show_figure(fig, "fig_curves")

# %% [markdown]
# ```{glue:figure} fig_curves
# :alt: Six log-log panels, one per test function in dimension 10, of simple regret against the number of evaluations for seven methods: SequOOL, the learned method with 4 and with d sensing directions and with the neural surrogate, DIRECT, CMA-ES and random search. Lines are medians over seeds and bands the interquartile range. On the sphere, Branin and Styblinski-Tang the learned method with d directions reaches the floor of the plot first; on the sharp ridge it is lowest at every budget; on Rastrigin SequOOL gets lower at the largest budget; on the ellipsoid every method stays above about 0.01.
# :name: fig-14-curves
#
# **At $d=10$ the learned method with full differences reaches the floor first on three
# functions and leads on the sharp ridge, SequOOL is better on Rastrigin at the largest
# budget, and with four sensing directions the learned method is erratic.** Median simple regret over seeds
# (bands: quartiles) at $d=10$, $m=2$; regrets below $10^{-12}$ are drawn at $10^{-12}$.
# ```

# %% tags=["remove-output"]
methods_shown = list(oo.METHODS)
labels = [f"{TITLES[f]}, d={d}" for f in size.functions for d in all_dims]
medians = np.stack([np.median(at_claim[m], axis=2).ravel() for m in methods_shown], 1)
logs = np.log10(np.maximum(medians, SHOW))
fig, ax = book.figure(height=0.28 * len(labels) + 1.2)
image = ax.imshow(logs, aspect="auto", cmap="viridis_r", vmin=-12, vmax=2)
for (r_, c_), v in np.ndenumerate(logs):
    ax.text(c_, r_, "not run" if np.isnan(v) else f"{int(round(v)) + 0:d}",
            ha="center", va="center", fontsize=7,
            color="white" if v > -5 else "black")
ax.set_xticks(range(len(methods_shown)),
              [NAMES[m].replace(", ", ",\n").replace(" (", "\n(")
               for m in methods_shown],
              rotation=0, fontsize=7)
ax.set_yticks(range(len(labels)), labels, fontsize=7)
fig.colorbar(image, ax=ax, label="log10 median regret", shrink=0.6)
ax.set_title(f"median simple regret at n = {N_CLAIM:,}")
book.show_figure(fig, "fig_table")


# %% [markdown]
# ```{glue:figure} fig_table
# :alt: A heat map with one row per test function and dimension and one column per method; each cell holds the base-10 logarithm of the median simple regret at 1,000 evaluations, from -12 (solved to floating-point precision) to about 2.
# :name: fig-14-table
#
# **At a fixed budget the learned method with full differences solves most functions in every
# dimension; SequOOL's precision drops as $d$ grows, and the ellipsoid defeats everyone.**
# CMA-ES ran at $d=10$ only. Each cell is $\log_{10}$ of the median simple regret over seeds at $n=$
# {glue:text}`n_claim` (at most $-12$: solved to floating-point precision).
# ```

# %% [markdown]
# ### The claims at equal budget
#
# The paper's main comparison is with SequOOL: learning the partition should lower the
# simple regret on multi-index functions. Each of the {glue:text}`n_pairs` problems (function
# $\times$ dimension $\times$ seed) at $n=$ {glue:text}`n_claim` is a pair; the statistic is the
# share of pairs where the learned method ends lower (regrets below $10^{-10}$ count as equal,
# a tie as one half). "Lower than SequOOL" is read as a share above one half; the interval is
# a 95% bootstrap over the pairs. "Competitive across a wide range of benchmarks" is read as:
# a lower median regret than DIRECT, the classical partition-based optimiser, in at least half
# of the (function, dimension) cells, with a bootstrap over seeds. It is checked twice: for
# the paper's configuration ($m_\phi=4$), which is the paper's claim, and for our
# forward-difference variant. Random search at the same budget is the floor every learned
# method is also held against.

# %%
def cells_won(ours, theirs, rng, n_boot=1000):
    """Share of cells with a lower median than ``theirs``; bootstrap over seeds."""
    def share(a, b):
        a = np.median(np.maximum(a, FLOOR), -1)
        b = np.median(np.maximum(b, FLOOR), -1)
        return ((a < b) + 0.5 * (a == b)).mean()

    idx = rng.integers(0, ours.shape[-1], (n_boot, ours.shape[-1]))
    boot = [share(ours[..., i], theirs[..., i]) for i in idx]
    return float(share(ours, theirs)), tuple(np.quantile(boot, [0.025, 0.975]))


LEARNED = ("learned", "learned_nn", "learned_fd")
wins = {m: oo.win_rate(at_claim[m], at_claim["sequool"], floor=FLOOR,
                       seed=run.seed_of(f"bootstrap-pairs-{m}"))
        for m in LEARNED}
vs_random = {m: oo.win_rate(at_claim[m], at_claim["random"], floor=FLOOR,
                            seed=run.seed_of(f"bootstrap-random-{m}"))[0]
             for m in LEARNED + ("sequool", "direct")}
vs_direct = cells_won(at_claim["learned_fd"], at_claim["direct"],
                      run.rng("bootstrap-cells-direct"))
vs_direct_paper = cells_won(at_claim["learned"], at_claim["direct"],
                            run.rng("bootstrap-cells-direct-paper"))
vs_direct_nn = cells_won(at_claim["learned_nn"], at_claim["direct"],
                         run.rng("bootstrap-cells-direct-neural"))[0]
per_dim = {d: oo.win_rate(at_claim["learned_fd"][:, j], at_claim["sequool"][:, j],
                          floor=FLOOR)[0] for j, d in enumerate(all_dims)}
per_dim4 = {d: oo.win_rate(at_claim["learned"][:, j], at_claim["sequool"][:, j],
                           floor=FLOOR)[0] for j, d in enumerate(all_dims)}
for m in wins:
    book.glue(f"win_{m}", wins[m][0])
for m in vs_random:
    book.glue(f"vs_random_{m}", vs_random[m])
for d in all_dims:
    book.glue(f"win_fd_d{d}", per_dim[d])
    book.glue(f"win_4_d{d}", per_dim4[d])
book.glue(vs_direct=vs_direct[0], vs_direct_paper=vs_direct_paper[0],
          vs_direct_nn=vs_direct_nn, over_budget=over_budget, n_runs=n_runs)
print("share of paired problems won (ties one half) at n =", N_CLAIM)
print(f"  {'':24s} {'vs SequOOL':>10s} {'vs random search':>17s}")
for m in LEARNED + ("sequool", "direct"):
    against = f"{wins[m][0]:10.2f}" if m in wins else f"{'':10s}"
    print(f"  {PLAIN[m]:24s} {against} {vs_random[m]:17.2f}")

# %% tags=["nbval-check-output"]
book.claim(
    "beats-sequool", wins["learned"][0], interval=wins["learned"][1],
    note="ours: share of pairs won (ties one half); interval: 95% bootstrap over "
    "pairs; per d: " + ", ".join(f"{d}: {per_dim4[d]:.2f}" for d in all_dims),
)
book.claim(
    "beats-sequool-nn", wins["learned_nn"][0], interval=wins["learned_nn"][1],
    note="ours: share of pairs won (ties one half); interval: 95% bootstrap over pairs",
)
book.claim(
    "beats-sequool-fd", wins["learned_fd"][0], interval=wins["learned_fd"][1],
    note="ours: share of pairs won (ties one half); interval: 95% bootstrap over "
    "pairs; per d: " + ", ".join(f"{d}: {per_dim[d]:.2f}" for d in all_dims),
)
book.claim(
    "competitive-direct-paper", vs_direct_paper[0], interval=vs_direct_paper[1],
    note="ours: share of cells (ties one half); interval: 95% bootstrap over seeds; "
    f"the neural learner: {vs_direct_nn:.2f}",
)
book.claim(
    "competitive-direct", vs_direct[0], interval=vs_direct[1],
    note="ours: share of cells (ties one half); interval: 95% bootstrap over seeds",
)
book.claim(
    "budget-respected", over_budget,
    note="counted by a wrapper that refuses the call; learning samples included",
)


# %% [markdown]
# With the paper's compressed-sensing settings the learned method wins
# {glue:text}`win_learned:.2f` of the pairs ({glue:text}`win_4_d5:.2f`,
# {glue:text}`win_4_d10:.2f` and {glue:text}`win_4_d20:.2f` at $d=5$, 10, 20): its subspace
# is often far off (section 2), and it then wins or loses by chance. With full differences
# it wins {glue:text}`win_learned_fd:.2f` ({glue:text}`win_fd_d5:.2f`,
# {glue:text}`win_fd_d10:.2f` and {glue:text}`win_fd_d20:.2f`), and with the neural
# surrogate {glue:text}`win_learned_nn:.2f`. Against DIRECT, the paper's configuration has
# the lower median in {glue:text}`vs_direct_paper:.2f` of the cells, the neural learner in
# {glue:text}`vs_direct_nn:.2f` and our forward-difference variant in
# {glue:text}`vs_direct:.2f`. Against random search at the same budget, the shares of
# pairs won are {glue:text}`vs_random_learned:.2f` ($m_\phi=4$),
# {glue:text}`vs_random_learned_nn:.2f` (neural), {glue:text}`vs_random_learned_fd:.2f`
# ($m_\phi=d$), {glue:text}`vs_random_sequool:.2f` (SequOOL) and
# {glue:text}`vs_random_direct:.2f` (DIRECT). In this run the gain grows
# with $d$, the direction the rates predict: SequOOL's precision at a fixed budget falls as
# $d$ grows, while the learned method searches two dimensions whatever $d$
# ({numref}`fig-14-table`). Its losses are concentrated on the ellipsoid and Rastrigin,
# discussed in section 3. With this many problems the lower end of the full-difference
# claim's interval lies close to one half, so one run may not decide it; the published
# verdict is the one pooled over seeds in the ledger.

# %% [markdown]
# ### Rates: the measured slopes
#
# The paper's rate $\tilde O(n^{-\beta/d})$ is an upper bound under smoothness assumptions
# that these functions only partly satisfy, and most of them are solved to floating-point
# precision at these budgets, where a slope means nothing. On the sharp ridge
# $z_1^2+10\|z_{2:}\|$, which no method solves exactly, the log-log slope of the median
# regret against $n$ is measurable. The theorem's exponents at $d=10$, $m=2$ are
# $\beta/d=$ {glue:text}`rate_learned:.3f` for the learned method and $1/d=0.1$ for SequOOL;
# we report the fitted slopes without claiming them.

# %%
def slope(budgets, regrets):
    """Least-squares slope of log10 median regret against log10 n."""
    y = np.log10(np.maximum(np.median(regrets, axis=0), SHOW))
    return float(np.polyfit(np.log10(budgets), y, 1)[0])


beta = 1 + (D_CURVE - 2) / (2 * 2 - 1)
book.glue(rate_learned=beta / D_CURVE)
ridge = size.functions.index("sharp_ridge")
slopes = {m: slope(size.budgets, curve.regret[m][ridge, 0]) for m in oo.METHODS}
boot_rng = run.rng("bootstrap-slopes")
boot_diff = []
for _ in range(1000):
    pick = boot_rng.integers(0, size.seeds, size.seeds)
    boot_diff.append(slope(size.budgets, curve.regret["learned_fd"][ridge, 0][pick])
                     - slope(size.budgets, curve.regret["sequool"][ridge, 0][pick]))
slope_diff = slopes["learned_fd"] - slopes["sequool"]
slope_interval = tuple(np.quantile(boot_diff, [0.025, 0.975]))
for m in oo.METHODS:
    book.glue(f"slope_{m}", slopes[m])

# %%
print("log-log slope of the median regret on the sharp ridge, d = 10")
for m in oo.METHODS:
    print(f"  {PLAIN[m]:24s} {slopes[m]:+.2f}")

# %% tags=["nbval-check-output"]
book.claim(
    "steeper-slope", slope_diff, interval=slope_interval,
    shown={"learned partition": slopes["learned_fd"], "SequOOL": slopes["sequool"]},
    note="ours: the two slopes; interval of their difference: 95% bootstrap over seeds",
)

# %% [markdown]
# The slope claim is hard to decide from one run too: three budgets and a handful of
# problems give slopes with a wide bootstrap interval, although the learned method's median
# regret on the ridge is the lowest at every budget ({numref}`fig-14-curves`); its
# verdict is the one pooled over seeds in the ledger.
#
# ### Time
#
# The methods' costs per evaluation differ by orders of magnitude, although all evaluate the
# same cheap functions. Times are wall-clock on the machine that ran this page, all runs of
# section 1 together, divided by the evaluations made; their ratios are the point.

# %%
per_eval = {m: (curve.seconds[m] + dims.seconds.get(m, 0.0))
            / (curve.evals[m] + dims.evals.get(m, 0)) for m in oo.METHODS}
print("time per evaluation, relative to SequOOL")
for m in oo.METHODS:
    print(f"  {PLAIN[m]:24s} {per_eval[m] / per_eval['sequool']:8.2f} x")
book.glue(cma_over_sequool=per_eval["cma_es"] / per_eval["sequool"],
          direct_over_sequool=per_eval["direct"] / per_eval["sequool"],
          learned_over_sequool=per_eval["learned_fd"] / per_eval["sequool"])


# %% [markdown]
# The learned method costs {glue:text}`learned_over_sequool:.1f` times SequOOL's time per
# evaluation (the learning step is a few small matrix products and one SVD); SciPy's DIRECT
# {glue:text}`direct_over_sequool:.0f` times, mostly Python calls of the objective one point
# at a time; CMA-ES {glue:text}`cma_over_sequool:.0f` times (its pure-Python generation
# update). For expensive black boxes, the setting the paper has in mind, all of these are
# negligible next to one evaluation; the regret at equal budget is the comparison that counts.
#
# ## 2. Learning the subspace: principal angles against evaluations spent
#
# How much of the budget does Algorithm 1 need? The cell learns the subspace alone, at
# $m_x$ points on the unit sphere, with $m_\phi=4$ (the paper's code) or $m_\phi=d$ sensing
# directions, and measures the largest principal angle between the learned and the true
# subspace, on the sphere, the sharp ridge and Branin, for {glue:text}`angle_seeds` seeds.
# The neural surrogate gets as many uniform samples as the paper's default sensing step
# spends ({glue:text}`default_evals` evaluations). The reference that plays random search's
# part here is a *random* plane: its median largest angle to the true one, from 1,000
# uniformly drawn planes.

# %%
def learned_angles(d, directions, points, replications):
    """Largest principal angles (degrees), shape (functions, points, replications).

    The problems and the learning samples do not depend on ``directions``: both numbers
    of sensing directions see the same ones.
    """
    out = np.empty((3, len(points), replications))
    for i, name in enumerate(("sphere", "sharp_ridge", "branin")):
        for k in range(replications):
            problem = oo.make_problem(
                name, d, seed=run.seed_of(f"angle-problem-{name}-d{d}-{k}"))
            for j, p in enumerate(points):
                fc = oo.CountedFunction(problem.f, 10**6, vectorized=True)
                V = oo.learn_subspace(
                    fc, np.zeros(d), 2, p, directions=directions,
                    rng=run.seed_of(f"angle-samples-{name}-d{d}-{k}-{p}"))
                out[i, j, k] = np.degrees(oo.principal_angle(V, problem.A.T))
    return out


def neural_angles(d, evals, replications):
    """Largest principal angles (degrees) of the neural surrogate, (functions, reps)."""
    out = np.empty((3, replications))
    for i, name in enumerate(("sphere", "sharp_ridge", "branin")):
        for k in range(replications):
            problem = oo.make_problem(
                name, d, seed=run.seed_of(f"angle-problem-{name}-d{d}-{k}"))
            fc = oo.CountedFunction(problem.f, evals, vectorized=True)
            V = oo.neural_subspace(fc, problem.bounds, 2, evals,
                                   rng=run.seed_of(f"angle-neural-{name}-d{d}-{k}"))
            out[i, k] = np.degrees(oo.principal_angle(V, problem.A.T))
    return out


def random_plane_angle(d, rng, draws=1000):
    """Median largest angle between a uniformly random plane and a fixed one."""
    fixed = np.eye(d)[:, :2]
    return float(np.median([np.degrees(oo.principal_angle(
        np.linalg.qr(rng.standard_normal((d, 2)))[0], fixed)) for _ in range(draws)]))


points = np.array(size.angle_points)
angles = {(d, k): learned_angles(d, k, points, size.angle_seeds)
          for d in all_dims for k in (4, d)}
default_points = 100 if 100 in size.angle_points else size.angle_points[-1]
nn_angles = {d: neural_angles(d, default_points * 5, size.angle_seeds)
             for d in all_dims}
plane_rng = run.rng("random-planes")
random_planes = {d: random_plane_angle(d, plane_rng) for d in all_dims}
for d in all_dims:
    book.glue(f"nn_median_d{d}", float(np.median(nn_angles[d])))
    book.glue(f"random_plane_d{d}", random_planes[d])
d5_default = angles[(all_dims[0], 4)][:, list(points).index(default_points)].ravel()
boot_rng = run.rng("bootstrap-angles")
d5_boot = np.median(d5_default[boot_rng.integers(0, d5_default.size,
                                                 (1000, d5_default.size))], axis=1)
d5_median = float(np.median(d5_default))
fd_all = {d: angles[(d, d)] for d in all_dims}         # (functions, points, seeds)
fd_worst = max(float(a.max()) for a in fd_all.values())
fd_median = float(np.median(np.concatenate([a.ravel() for a in fd_all.values()])))
worst_d = max(fd_all, key=lambda d: fd_all[d].max())
worst_fn, worst_p, _ = np.unravel_index(np.argmax(fd_all[worst_d]),
                                        fd_all[worst_d].shape)
worst_where = (f"{('sphere', 'sharp ridge', 'Branin')[worst_fn]}, d = {worst_d}, "
               f"{points[worst_p]} points")
book.glue(angle_seeds=size.angle_seeds, d5_median=d5_median,
          default_points=default_points, default_evals=default_points * 5,
          fd_worst=fd_worst, fd_median=fd_median, fd_where=worst_where)
for d in all_dims:
    book.glue(f"cs_median_d{d}", float(np.median(angles[(d, 4)][:, -1])))

# %% tags=["remove-output"]
fig, ax = book.figure(height=3.0)
for j, d in enumerate(all_dims):
    for k in (4, d):
        med = np.median(angles[(d, k)].transpose(1, 0, 2).reshape(len(points), -1),
                        axis=1)
        evals = points * (min(k, d) + 1)
        ax.plot(evals, med, "--" if k == 4 else "-", marker="o", ms=3,
                color=book.PALETTE[j],
                label=f"d = {d}, " + ("$m_\\phi=4$" if k == 4 else "$m_\\phi=d$"))
    ax.plot([default_points * 5], [np.median(nn_angles[d])], "D", ms=6, mfc="none",
            color=book.PALETTE[j], label=f"d = {d}, neural")
    ax.axhline(random_planes[d], color=book.PALETTE[j], lw=0.8, ls=":",
               label=f"d = {d}, random plane")
ax.set_xscale("log")
ax.set_xlabel("evaluations spent learning, $m_x(m_\\phi+1)$")
ax.set_ylabel("largest principal angle (°)")
ax.set_ylim(-2, 92)
ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
book.show_figure(fig, "fig_angles")

# %% [markdown]
# ```{glue:figure} fig_angles
# :alt: Largest principal angle in degrees between the learned and the true two-dimensional subspace against the evaluations spent learning, on a log axis, for d = 5, 10 and 20. Solid lines (d sensing directions per point) are at zero from the first point on. Dashed lines (4 directions) stay between about 30 and 80 degrees and barely fall with more evaluations, higher for larger d. Open diamonds mark the neural surrogate at the paper's default learning budget, and dotted horizontal lines the median angle of a random plane for each d.
# :name: fig-14-angles
#
# **Full forward differences find the subspace from two points on; four compressed-sensing
# directions do not, at any budget, once the gradients are dense; the neural surrogate lies
# in between.** Median over three functions and the seeds of the largest principal angle
# between the learned and the true subspace; dotted: a random plane.
# ```

# %% [markdown]
# With $m_\phi=d$ the median angle is {glue:text}`fd_median:.1e`°: forward differences
# along $d$ independent directions *are* the gradient up to $O(\epsilon)$, and two generic
# gradients of a function of $Az$ span the row space of $A$. The worst run, at
# {glue:text}`fd_worst:.1f`° ({glue:text}`fd_where`), shows the exceptions: a learning point
# within $\epsilon$ of the sharp ridge's kink $z_2=0$, where a forward difference is not a
# directional derivative and the recovered "gradient" leaves the row space, and Branin's large
# curvature, whose $O(\epsilon)$ error tilts the plane by a few degrees when only two points
# span it.
# With the paper's $m_\phi=4$, the median angle at {glue:text}`default_evals` evaluations is
# {glue:text}`cs_median_d5:.0f`° at $d=5$, {glue:text}`cs_median_d10:.0f`° at $d=10$ and
# {glue:text}`cs_median_d20:.0f`° at $d=20$, and more points do not help. The reason is structural: every point is sensed
# with the *same* $\Phi$, so each recovered gradient is the sparsest vector with the right
# four projections, a function of $\Phi\nabla f$ only. $\ell_1$ recovery is exact for
# gradients with at most a few non-zero entries, i.e. when the rows of $A$ are sparse; a
# random rotation makes them dense. The paper's code draws dense rotations too; its default
# $d=5$ leaves a single unmeasured direction, which is why it can work there. A random
# plane is {glue:text}`random_plane_d5:.0f`°, {glue:text}`random_plane_d10:.0f`° and
# {glue:text}`random_plane_d20:.0f`° off at $d=5$, 10 and 20.
#
# The neural surrogate, with the same {glue:text}`default_evals` evaluations spent on
# uniform samples, lands at a median of {glue:text}`nn_median_d5:.0f`°,
# {glue:text}`nn_median_d10:.0f`° and {glue:text}`nn_median_d20:.0f`° at $d=5$, 10 and 20: it does not need sparse
# gradients, because it fits $f$ itself rather than recovering gradients from four
# projections, but a network fitted to a few hundred samples is only approximately a
# function of $Ax$, so it does not reach the exactness of full forward differences.

# %% tags=["nbval-check-output"]
book.claim(
    "cs-recovery-d5", d5_median, interval=tuple(np.quantile(d5_boot, [0.025, 0.975])),
    note="ours: median over 3 functions x seeds (degrees); interval: 95% bootstrap; "
    "each recovered gradient is the sparsest vector matching 4 projections, and these "
    "gradients are dense",
)
book.claim(
    "fd-recovery", fd_worst,
    note=f"ours: the worst run ({worst_where}); forward differences are not "
    "derivatives at the sharp ridge's kink, and carry $O(\\epsilon)$ curvature errors",
)

# %% [markdown]
# Why does the learned method with $m_\phi=4$ still solve some problems with a subspace that
# is 70° off? For a multi-index function *any* $m$-dimensional subspace $V$ with $AV$
# invertible contains points with $Ax=Ax^\star$, i.e. minimisers; a wrong subspace makes the
# search box larger and the problem worse conditioned (through $(AV)^{-1}$), and it may put
# the minimiser outside the domain, but it does not remove it. The correct subspace is the
# best-conditioned choice, which is what the theory exploits.
#
# ## 3. Where it loses
#
# **The ellipsoid.** $g(z)=T_{osz}(z)_1^2+10^6\,T_{osz}(z)_2^2$ (COCO's; the authors' released
# ellipsoid has 100 for $10^6$): every gradient points almost
# along the stiff direction, so the recovered gradients have one dominant singular value and
# the second learned direction is noise. The median angle of the learned subspace on the
# ellipsoid at $d=10$ was {glue:text}`ellipsoid_angle:.0f`° (sphere:
# {glue:text}`sphere_angle:.1e`°), and the method then searches a plane that misses the weak
# direction's minimiser by a wide margin.
#
# **Rastrigin.** The learned method with full differences ends at a regret above 0.5 in
# {glue:text}`rastrigin_stuck` of {glue:text}`rastrigin_total` Rastrigin problems at
# $n=$ {glue:text}`n_claim`: a local minimum, about one unit off in one coordinate. Its 20% spent on learning
# leaves a shallower tree than SequOOL's, and the optimistic rule commits to the wrong basin.
#
# **An active dimension larger than assumed.** Below, $f$ depends on $m=3$ directions and
# the learned method is told $m=2$ or $m=3$ ($d=10$, sphere and sharp ridge).

# %%
if "ellipsoid" in size.functions:
    ell = size.functions.index("ellipsoid")
    book.glue(ellipsoid_angle=float(np.degrees(np.nanmedian(
        curve.angle["learned_fd"][ell]))))
else:
    book.glue(ellipsoid_angle=float("nan"))
sph = size.functions.index("sphere")
ras = size.functions.index("rastrigin")
book.glue(sphere_angle=float(np.degrees(np.nanmedian(curve.angle["learned_fd"][sph]))),
          rastrigin_stuck=int((at_claim["learned_fd"][ras] > 0.5).sum()),
          rastrigin_total=int(at_claim["learned_fd"][ras].size))

mismatch_seeds = tuple(run.seed_of(f"mismatch-replication-{i}")
                       for i in range(size.mismatch_seeds))
mismatch = {
    a: oo.benchmark(("sphere", "sharp_ridge"), (D_CURVE,), mismatch_seeds, size.budgets,
                    methods=("sequool", "learned_fd", "random"), active_dim=3,
                    assumed_dim=a)
    for a in (2, 3)}

# %% tags=["remove-output"]
fig, axes = book.figure(2, height=2.8, sharey=True)
for i, (ax, name) in enumerate(zip(axes, ("sphere", "sharp_ridge"))):
    rows_ = {"SequOOL": (mismatch[2].regret["sequool"][i, 0], COLOURS["sequool"], "-"),
             "random search": (mismatch[2].regret["random"][i, 0], COLOURS["random"],
                               "-"),
             "learned, told m = 3": (mismatch[3].regret["learned_fd"][i, 0],
                                     COLOURS["learned_fd"], "-"),
             "learned, told m = 2": (mismatch[2].regret["learned_fd"][i, 0],
                                     COLOURS["learned_fd"], "--")}
    for label, (r, colour, style) in rows_.items():
        ax.plot(size.budgets, np.median(np.maximum(r, SHOW), 0), style, marker="o",
                ms=3, color=colour, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(size.budgets, [f"{n:,}" for n in size.budgets])
    ax.minorticks_off()
    ax.set_xlabel("evaluations $n$")
    ax.set_title(f"{TITLES[name]}, m = 3, d = {D_CURVE}")
axes[0].set_ylabel("median simple regret")
axes[1].legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
book.show_figure(fig, "fig_mismatch")
under = np.median(mismatch[2].regret["learned_fd"][:, 0, :, -1], axis=1)
book.glue(under_sphere=float(under[0]), under_ridge=float(under[1]),
          seq_m3_ridge=float(np.median(mismatch[2].regret["sequool"][1, 0, :, -1])),
          rand_m3_ridge=float(np.median(mismatch[2].regret["random"][1, 0, :, -1])))

# %% [markdown]
# ```{glue:figure} fig_mismatch
# :alt: Two log-log panels, sphere and sharp ridge with three active directions in dimension 10, median simple regret against evaluations. SequOOL falls steadily. The learned method told the right dimension 3 is lowest. Told 2, it stays flat at a regret of order 1 or more whatever the budget.
# :name: fig-14-mismatch
#
# **Assuming too few active directions puts a floor under the regret that no budget
# removes.** A two-dimensional subspace of a function of three directions misses the
# minimiser; SequOOL, which assumes nothing, keeps improving.
# ```

# %% [markdown]
# Told $m=2$ when $m=3$, the learned method stops at a median regret of
# {glue:text}`under_sphere:.2g` on the sphere and {glue:text}`under_ridge:.2g` on the sharp
# ridge at the largest budget, where SequOOL reaches {glue:text}`seq_m3_ridge:.2g` on the
# ridge and random search {glue:text}`rand_m3_ridge:.2g`. The paper's method takes $m$ as
# given; the SVD's singular values show the gap (an exercise below).
#
# ## 4. Equal budgets, in-domain points, and the authors' released code
#
# Every comparison above charges the learning samples to the budget and evaluates only
# points inside the domain. The authors' released code (`raja-sunkara/Learned-Partitions-SequOOL`, snapshot `b881082`) does neither, and this matters for how its learned method
# looks. Run beside it on a rotated Branin ($d=10$, $n=1{,}500$, 5 seeds) and on its own
# sharp ridge, on a 2-core CPU, with these facts about the authors' released code:
#
# * **SequOOL is the same.** Both codes give identical SequOOL results (regret
#   $1.7\times10^{-16}$ on Branin, $2.2\times10^{-6}$ on the sharp ridge).
# * **The compressed-sensing subspace is as poor in both.** At the released defaults
#   (4 Rademacher directions, 100 points) the largest principal angle to the true plane is
#   51–83° with the released code and 60–90° with ours, close to a random plane; cvxpy and
#   our ADMM reach the same $\ell_1$ objective (gap at most $2\times10^{-13}$), the
#   minimiser being not unique.
# * **Points outside the domain.** The released learned SequOOL evaluates the points of the
#   learned plane without clipping them to the domain (`src/dimension_reduction.py`): 61% of
#   its points fall outside $[-5,5]^d$, and its best point lies outside in 5 of 5 seeds.
#   Counting in-domain points only, it scores 7.6 on Branin, against 3.3 for random search.
# * **Learning samples on top of the budget.** It spends the learning samples in addition
#   to $n$: 2,247 evaluations for $n=1{,}500$ (the sensing step re-evaluates $f$ at each
#   sample point for every direction).
# * **Its test functions hide the question.** They place the optimum so that its
#   projection on the active plane stays inside the box, so the plane through the centre
#   always holds an in-domain minimiser when it is the right plane.
#
# Those figures come from the authors' code, run once outside the book; what it computed
# is kept with the book, and a test compares ours with it function by function
# ([Against the authors' code](../../book/authors.md)). It also showed that the released ellipsoid weighs its second
# coordinate by 100, where ours, as COCO's, weighs it by $10^6$: the ellipsoid of section 3
# is far harder than the authors', and its losses say nothing about theirs. The cell below measures *both ways* with our code on the same
# kind of problem: a rotated Branin in $d=10$ whose in-plane minimiser nearest the centre
# is pushed out to 90% of the half-width in its largest coordinate (a rule fixed before the
# run), at the released defaults ($n=1{,}500$ for the search, 500 learning evaluations:
# 100 points with 4 directions). **As released:** the 500 learning evaluations come on top
# (2,000 in all) and the plane's points are evaluated where they are; its regret is shown
# both counting every point and counting in-domain points only. **Equal budget, in the
# domain:** 500 learning and 1,000 search evaluations (1,500 in all), points clipped to the
# domain. Random search gets 1,500 and 2,000 evaluations, the two totals.

# %%
EDGE_D, EDGE_N, EDGE_LEARN = 10, 1500, 500


def edge_branin(k):
    """Rotated Branin whose in-plane minimiser nearest the centre sits near the edge."""
    base = oo.make_problem("branin", EDGE_D, seed=run.seed_of(f"edge-problem-{k}"))
    nearest = base.A.T @ (base.A @ base.x_star)    # the minimiser closest to the centre
    x_star = nearest * (0.9 * 5.0 / np.abs(nearest).max())
    return oo.Problem("branin", base.A, x_star, base.bounds)


EDGE_ROWS = {  # label -> (total evaluations, keyword arguments of learned_partition)
    "learned, m_phi=4, as released": (EDGE_N + EDGE_LEARN, {"clip": False}),
    "learned, m_phi=4, equal budget": (EDGE_N, {}),
    "learned, neural, as released": (EDGE_N + EDGE_LEARN,
                                     {"clip": False, "learner": "neural"}),
    "learned, neural, equal budget": (EDGE_N, {"learner": "neural"}),
    "learned, m_phi=d, equal budget": (EDGE_N, {"directions": EDGE_D}),
}
edge = {label: {"all": [], "inside": [], "outside": [], "best_out": [], "evals": []}
        for label in (*EDGE_ROWS, "SequOOL", "random search, 1,500",
                      "random search, 2,000")}
for k in range(size.edge_seeds):
    problem = edge_branin(k)
    search = run.seed_of(f"edge-search-{k}")
    results = {label: oo.learned_partition(problem.f, problem.bounds, total,
                                           active_dim=2, seed=search,
                                           learn_evals=EDGE_LEARN, vectorized=True,
                                           **kwargs)
               for label, (total, kwargs) in EDGE_ROWS.items()}
    results["SequOOL"] = oo.sequool(problem.f, problem.bounds, EDGE_N, vectorized=True)
    rand = oo.random_search(problem.f, problem.bounds, EDGE_N + EDGE_LEARN, seed=search,
                            vectorized=True)
    for label, res in results.items():
        row = edge[label]
        row["all"].append(max(res.fun, 0.0))             # min f = 0: floor round-off
        row["inside"].append(max(res.info.get("best_inside", res.fun), 0.0))
        row["outside"].append(res.info.get("outside_share", 0.0))
        row["best_out"].append(res.info.get("best_outside", False))
        row["evals"].append(res.n_evals)
    for label, n in (("random search, 1,500", EDGE_N),
                     ("random search, 2,000", EDGE_N + EDGE_LEARN)):
        best = max(float(rand.best_at(n)[0]), 0.0)
        for key, value in (("all", best), ("inside", best), ("outside", 0.0),
                           ("best_out", False), ("evals", n)):
            edge[label][key].append(value)
for label, row in edge.items():
    # random search with the same total number of evaluations, in-domain regret compared
    peer = edge["random search, 2,000" if np.max(row["evals"]) > EDGE_N
                else "random search, 1,500"]["all"]
    row["loses"] = int(np.sum(np.array(row["inside"]) > np.array(peer)))
print(f"rotated Branin near the edge, d = {EDGE_D}; medians over "
      f"{size.edge_seeds} problems")
display(pd.DataFrame(  # an HTML table: it scrolls on a narrow screen, text would not
    [{"method": label, "evals": int(np.max(row["evals"])),
      "regret": f"{np.median(row['all']):.3g}",
      "in-domain regret": f"{np.median(row['inside']):.3g}",
      "points outside": f"{np.mean(row['outside']):.0%}",
      "best point outside": f"{int(np.sum(row['best_out']))}/{size.edge_seeds}",
      "worse than random": f"{row['loses']}/{size.edge_seeds}"}
     for label, row in edge.items()]).set_index("method"))
released = edge["learned, m_phi=4, as released"]
book.glue(edge_seeds=size.edge_seeds,
          edge_released_all=float(np.median(released["all"])),
          edge_released_inside=float(np.median(released["inside"])),
          edge_released_outside=float(np.mean(released["outside"])),
          edge_released_bestout=int(np.sum(released["best_out"])),
          edge_equal=float(np.median(edge["learned, m_phi=4, equal budget"]["all"])),
          edge_released_loses=released["loses"],
          edge_equal_loses=edge["learned, m_phi=4, equal budget"]["loses"],
          edge_nn_loses=edge["learned, neural, equal budget"]["loses"],
          edge_nn_equal=float(np.median(edge["learned, neural, equal budget"]["all"])),
          edge_nn_outside=float(np.mean(
              edge["learned, neural, as released"]["outside"])),
          edge_fd_equal=float(np.median(edge["learned, m_phi=d, equal budget"]["all"])),
          edge_sequool=float(np.median(edge["SequOOL"]["all"])),
          edge_random=float(np.median(edge["random search, 1,500"]["all"])),
          edge_random2=float(np.median(edge["random search, 2,000"]["all"])))

# %% tags=["remove-output"]
fig, ax = book.figure(height=3.2)
labels_edge = list(edge)
for i, label in enumerate(labels_edge):
    row = edge[label]
    colour = (COLOURS["random"] if label.startswith("random") else COLOURS["sequool"]
              if label == "SequOOL" else COLOURS["learned_nn"] if "neural" in label
              else COLOURS["learned_fd"] if "m_phi=d" in label else COLOURS["learned"])
    inside = np.maximum(row["inside"], SHOW)
    ax.plot(inside, np.full(len(inside), i), "o", ms=4, color=colour,
            label="in-domain points only" if i == 0 else None)
    if "as released" in label:
        ax.plot(np.maximum(row["all"], SHOW), np.full(len(inside), i), "x", ms=5,
                color="k",
                label="counting points outside the domain" if i == 0 else None)
ax.axvline(np.median(edge["random search, 1,500"]["all"]), color=COLOURS["random"],
           ls=":", lw=1)
ax.set_xscale("log")
ax.set_yticks(range(len(labels_edge)),
              [f"{lab} ({int(np.max(edge[lab]['evals'])):,})" for lab in labels_edge],
              fontsize=7)
ax.invert_yaxis()
ax.set_xlabel("simple regret (one marker per problem)")
ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=7)
book.show_figure(fig, "fig_edge")

# %% [markdown]
# ```{glue:figure} fig_edge
# :alt: A dot plot with one row per method and accounting, simple regret on a log axis, one marker per problem, on a rotated Branin in dimension 10 whose optimum is near the edge of the domain. Rows: the learned method with 4 sensing directions and with the neural surrogate, each as released (2,000 evaluations, points outside the domain evaluated) and at an equal budget of 1,500 in the domain; the forward-difference variant; SequOOL; random search with 1,500 and 2,000 evaluations. Crosses on the as-released rows mark the regret counting points outside the domain; circles count in-domain points only. A dotted line marks random search's median at 1,500.
# :name: fig-14-edge
#
# **Counted the released way, a learned method is credited with points outside the domain
# and with evaluations beyond the budget; the in-domain circles are what it found.**
# Rotated Branin, $d=10$, optimum near the edge; the number of evaluations of each row in
# brackets; the dotted line is random search's median at 1,500 evaluations. Regrets below
# $10^{-12}$ are drawn at $10^{-12}$.
# ```

# %% [markdown]
# As released, the paper's configuration reaches a median regret of
# {glue:text}`edge_released_all:.2g` counting every point, but
# {glue:text}`edge_released_outside:.0%` of its search points lie outside the domain and its
# best point is outside in {glue:text}`edge_released_bestout` of
# {glue:text}`edge_seeds` problems; counting in-domain points only it scores
# {glue:text}`edge_released_inside:.2g`, and it ends above random search with the same
# 2,000 evaluations in {glue:text}`edge_released_loses` of {glue:text}`edge_seeds`
# problems. The neural learner as released puts {glue:text}`edge_nn_outside:.0%` of its
# search points outside the domain. At an equal budget in the domain the paper's
# configuration scores {glue:text}`edge_equal:.2g` (above
# random search in {glue:text}`edge_equal_loses` of {glue:text}`edge_seeds`), the neural
# learner {glue:text}`edge_nn_equal:.2g` ({glue:text}`edge_nn_loses` of
# {glue:text}`edge_seeds`) and our forward-difference variant
# {glue:text}`edge_fd_equal:.2g`, against {glue:text}`edge_sequool:.2g` for SequOOL and
# {glue:text}`edge_random:.2g` for random search with the same 1,500 evaluations
# ({glue:text}`edge_random2:.2g` with 2,000). How the paper's configuration fares here
# depends on its plane, which is far off (section 2): with a wrong plane, the plane's own
# minimiser may lie outside the box, and then either the released code scores an out-of-domain point or
# clipping moves the search onto the boundary, where it can end behind plain random points.
# SequOOL is helped by the geometry of this problem: Branin's minimisers form an
# eight-dimensional affine set that its axis-aligned grid meets.
#
# ## What differs from the paper, and why
#
# * **Scale and protocol.** The paper's code fixes one test function per experiment (one
#   rotation, seed 123), runs 100 trials that differ in the learning samples, at $d=5$,
#   $m=2$, and adds 500 learning evaluations on top of SequOOL's budget. Here each seed draws
#   a new function, $d\in$ {glue:text}`all_dims`, and the learning samples come out of the
#   same budget as everything else (20% of it), so that all methods compare at equal
#   evaluations; section 4 measures the released accounting too.
# * **Gradient recovery.** Basis pursuit is solved by ADMM instead of cvxpy (the method
#   notebook checks it against a linear program), and the function is evaluated once per
#   learning point instead of once per (point, direction) pair; the recovery problem is the
#   same. The variant with $m_\phi=d$ is ours, added because section 2 shows that the
#   paper's $m_\phi=4$ cannot recover dense gradients beyond $d=5$.
# * **The neural surrogate** is smaller than the released one: 64 ReLU units, scikit-learn's
#   Adam for 300 epochs with an $L_2$ penalty, on inputs scaled to $[-1,1]^d$, and the
#   samples it gets from the shared budget (20%, or 500 in section 4), against 500 to 3,000
#   units, 5,000 epochs, a 20-trial hyperparameter search and 1,500 samples on top of the
#   budget in the released code. It runs in a fraction of a second on a CPU.
# * **SequOOL** follows the paper's code: $h_{\max}=\lfloor n/\overline{\log}(n)\rfloor$ with
#   $n$ the number of evaluations, cuts along axis $h\bmod d$. In Bartlett et al.'s analysis
#   $n$ counts openings; an opening costs two evaluations here, so the deepest levels can be
#   cut short by the budget, which no run exceeds.
# * **The learned box.** Its sides are the ranges of $v_i^\top x$ over the domain, computed in
#   closed form (the paper's code enumerates the $2^d$ corners, or samples 400,000 points
#   for $d\ge15$); points of the subspace that leave the domain are clipped to it, so no
#   method is credited with a point outside the domain (the released code evaluates them
#   unclipped; section 4).
# * **Test functions** follow the paper's code (COCO-style, sharp ridge with factor 10) with
#   $f_{\text{opt}}=0$, so that the value found is the regret. Branin and Styblinski–Tang are
#   shifted so that a minimiser sits at $z=0$.
# * **Not reproduced.** The look-ahead choice of the split direction (Algorithm 3, the
#   release's `dimension_reduction_and_look_ahead.py`); the
#   weight-quantisation task of OPT-1.3B (it needs the model's weights and a GPU); the
#   other baselines of the paper's
#   code (SOO, dual annealing, Bayesian optimisation, REMBO, HeSBO). The rate theorem is not
#   claimed: the slopes above are measurements at small $n$.
#
# ## Exercises
#
# ```{exercise} How much of the budget should go to learning?
# :label: ex-14-fraction
#
# **Level:** easy · **Time:** about 10 minutes.
#
# Run the learned method with full differences on the sharp ridge at $d=20$, $n=1{,}000$,
# with `learn_fraction` in $\{0.05, 0.2, 0.5\}$ over five seeds. Which share gives the lowest
# median regret, and what is the least that can work?
# ```
#
# ```{solution-start} ex-14-fraction
# :class: dropdown
# ```
#
# With $m_\phi=d=20$ each learning point costs 21 evaluations; two points (42 evaluations,
# `learn_fraction` 0.05 of 1,000) already give the subspace. More learning points buy little
# once the subspace is right, and take evaluations from SequOOL; fewer than two points cannot
# span a plane (the call raises an error), so about 0.05 is the least that can work here.

# %%
fraction_regret = {}
for frac in (0.05, 0.2, 0.5):
    regrets = []
    for s in range(5):
        # the same five problems and searches for every fraction
        problem = oo.make_problem("sharp_ridge", 20,
                                  seed=run.seed_of(f"fraction-exercise-problem-{s}"))
        res = oo.learned_partition(problem.f, problem.bounds, 1000, active_dim=2,
                                   seed=run.seed_of(f"fraction-exercise-search-{s}"),
                                   directions=20, learn_fraction=frac, vectorized=True)
        regrets.append(res.fun)
    fraction_regret[frac] = float(np.median(regrets))
    print(f"learn_fraction {frac:4.2f}: {int(frac * 1000) // 21} points, "
          f"median regret {fraction_regret[frac]:.2e}")
book.glue(ex_frac_best=min(fraction_regret, key=fraction_regret.get))

# %% [markdown]
# The lowest median regret comes with `learn_fraction` = {glue:text}`ex_frac_best`: the rest
# of the budget is worth more to SequOOL's tree than more learning points.
#
# ```{solution-end}
# ```
#
# ```{exercise} Reading the active dimension off the singular values
# :label: ex-14-rank
#
# **Level:** medium · **Time:** about 15 minutes.
#
# Section 3 gave the learned method the wrong $m$. Sense the gradients of a sphere with
# $m=3$ active directions in $d=10$ at ten points (full differences), and look at the
# singular values of the recovered gradient matrix. How would you choose $m$ from them?
# ```
#
# ```{solution-start} ex-14-rank
# :class: dropdown
# ```
#
# The gradients of $g(Az)$ lie in the $m$-dimensional row space of $A$, so the gradient matrix
# has $m$ singular values of the size of the gradients, and the rest at the level of the
# finite-difference error. That error is not zero: a forward difference adds
# $\tfrac\epsilon2\phi_i^\top H\phi_i$, and for a quadratic the Hessian $H$ is the same at
# every point, so it adds one more direction at size $O(\epsilon)$, with a gap of its own
# below it. Reading off the *largest* gap would count it; counting the singular values above
# a threshold well above $\epsilon$ relative to the largest, say $10^{-2}$, does not. (The
# paper's code has a related option: keep the directions that explain 95% of the variance.)

# %%
problem = oo.make_problem("sphere", 10, active_dim=3,
                          seed=run.seed_of("rank-exercise-problem"))
rng_ex = run.rng("rank-exercise-points")
X = rng_ex.standard_normal((10, 10))
X /= np.linalg.norm(X, axis=1, keepdims=True)
eps = 1e-3
G = np.array([(problem.f(X + eps * e) - problem.f(X)) / eps for e in np.eye(10)]).T
singular = np.linalg.svd(G, compute_uv=False)
print("singular values:", " ".join(f"{v:.1e}" for v in singular))
gap = singular[:-1] / np.maximum(singular[1:], 1e-300)
print(f"largest gap after value {int(np.argmax(gap)) + 1}; "
      f"values above 1e-2 x the largest: {int((singular > 1e-2 * singular[0]).sum())}")
book.glue(ex_rank_gap=int(np.argmax(gap)) + 1,
          ex_rank=int((singular > 1e-2 * singular[0]).sum()),
          ex_fourth=float(singular[3]))

# %% [markdown]
# The threshold counts {glue:text}`ex_rank` directions, the active dimension; the largest gap
# comes after value number {glue:text}`ex_rank_gap`, below the finite-difference direction
# of size {glue:text}`ex_fourth:.0e`.
#
# ```{solution-end}
# ```

# %%
book.finish()
