# %% [markdown]
# # The method: optimistic optimisation on a learned partition
#
# A black box $f$ on a box $\mathcal X\subset\mathbb R^d$, a fixed budget of $n$
# evaluations, no gradients: find a point whose value is as close to $\min f$ as possible.
# Sunkara and Tripathy {cite}`sunkara2025adaptive` start from SequOOL
# {cite}`bartlett2019simple`, an optimiser that cuts the box into ever smaller cells and
# trusts the cells that look best, and change *how* the box is cut:
#
# > In this paper, we study the class of "Optimistic Optimization" algorithms for black-box
# > optimization that use a partitioning scheme for the domain. We develop algorithms that
# > learn a good partitioning scheme and use flexible surrogate models such as neural
# > networks in the optimization procedure. (Sunkara & Tripathy, 2025, abstract)
#
# This notebook builds the method in three steps you can run: SequOOL on a toy you can see;
# learning the directions in which $f$ varies, from finite differences and sparse recovery;
# SequOOL in the box of the learned coordinates. The experiments are in
# [the reproduction](reproduction.ipynb). The algorithms are numbered here, 1 to 3, in the
# order of the authors' release (`learned_subspace` in `src/dimension_reduction.py`, then its
# look-ahead variant); the release itself numbers none, and the paper's own numbering was not
# readable here.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import numpy as np
from scipy.optimize import linprog

from icml25 import book
from icml25 import optimistic as oo

SIZES = {
    "quick": dict(toy_budget=60, bp_checks=3, ex_seeds=2, ex_budget=300, nn_evals=200),
    "book": dict(toy_budget=90, bp_checks=10, ex_seeds=5, ex_budget=1000, nn_evals=300),
    "paper": dict(toy_budget=200, bp_checks=50, ex_seeds=20, ex_budget=3000,
                  nn_evals=500),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
# one colour per method, in both notebooks of the chapter
COLOURS = {"sequool": book.PALETTE[0], "learned": book.PALETTE[1],
           "learned_fd": book.PALETTE[2], "truth": "0.2"}

# %% [markdown]
# ## Optimism on a tree of boxes
#
# ```{prf:definition} Simple regret, multi-index function
# :label: def-14-regret
#
# After $n$ evaluations $f(x_1),\dots,f(x_n)$ an optimiser reports its best point; its
# **simple regret** is $r_n=\min_{t\le n}f(x_t)-\min_{\mathcal X}f$. A **multi-index
# function** depends on $x\in\mathbb R^d$ only through $m<d$ linear combinations:
# $f(x)=g(A(x-x^\star))$ with $A\in\mathbb R^{m\times d}$ of orthonormal rows. It is
# constant along the $d-m$ directions orthogonal to the rows of $A$.
# ```
#
# SequOOL keeps a ternary tree of boxes. The root is $\mathcal X$, evaluated at its centre.
# *Opening* a box cuts it into three equal slabs along one axis; the middle slab has the same
# centre as its parent and inherits its value, the two outer ones are evaluated at their
# centres. The algorithm walks down the depths once:
#
# ```{prf:algorithm} SequOOL (Bartlett, Gabillon & Valko, 2019), as in the paper's code
# :label: alg-14-sequool
#
# **Input** budget $n$, box $\mathcal X$. Set $h_{\max}=\lfloor n/\overline{\log}(n)\rfloor$,
# $\overline{\log}(n)=\sum_{i=1}^n 1/i$.
#
# 1. Evaluate the centre of $\mathcal X$.
# 2. For $h=0,1,\dots,h_{\max}$: open the $\min(\lfloor h_{\max}/h\rfloor,N_h)$ boxes of depth
#    $h$ with the lowest centre values ($1$ box at $h=0$; $N_h$ boxes exist at depth $h$),
#    cutting along axis $h \bmod d$.
# 3. Return the best point evaluated.
# ```
#
# Few boxes are opened deep down and many near the top: $\lfloor h_{\max}/h\rfloor$ hedges
# over the unknown smoothness of $f$ (the boxes that look best at depth $h$ hold the
# minimiser if $f$ is smooth enough at that scale). At $n=$ {glue:text}`n_schedule` the
# tree goes down to depth $h_{\max}=$ {glue:text}`h_max`, opening at most
# {glue:text}`cap1` boxes at depth 1 and {glue:text}`cap10` at depth 10. Each opening costs
# two evaluations, so the deepest depths are cut short when the budget runs out.
#
# In `_sequool_box`, the loop over `h` is step 2: `lo` and `hi` are the corners of the boxes
# of depth $h$ and `vals` their centre values, `best` the `k` lowest of them, `axis` is
# $h \bmod m$, the two outer thirds are evaluated at their centres (`outer_vals`) and the
# middle third inherits its parent's value `pval`. `to_x` maps box coordinates to points: the
# identity for SequOOL itself, $c+V\alpha$ on the learned partition below.
#
# ```{literalinclude} /lib/icml25/optimistic/sequool.py
# :pyobject: _sequool_box
# :caption: `icml25.optimistic.sequool._sequool_box`: SequOOL's walk down the depths
# :language: python
# ```
#
# The toy below is a valley in $d=2$: $f(x)=(a^\top(x-x^\star))^2$ depends on one direction
# $a$ ($m=1$). SequOOL does not know that; its cuts follow the coordinate axes.

# %%
toy = oo.make_problem("sphere", 2, active_dim=1, seed=run.seed_of("toy-problem"))
toy_seq = oo.sequool(toy.f, toy.bounds, size.toy_budget, history=True)
toy_learned = oo.learned_partition(toy.f, toy.bounds, size.toy_budget, active_dim=1,
                                   seed=run.seed_of("toy-search"), directions=2,
                                   history=True)
h_max, caps = oo.sequool_schedule(1000)
book.glue(n_schedule="1,000", h_max=h_max, cap1=int(caps[1]), cap10=int(caps[10]),
          toy_budget=size.toy_budget, toy_seq=toy_seq.fun, toy_learned=toy_learned.fun,
          toy_n_learn=toy_learned.n_learn,
          toy_angle=np.degrees(oo.principal_angle(toy_learned.subspace, toy.A.T)))

# %% tags=["remove-output"]
fig, axes = book.figure(2, height=3.4, sharey=True)
grid = np.linspace(-5, 5, 201)
X1, X2 = np.meshgrid(grid, grid)
F = toy.f(np.c_[X1.ravel(), X2.ravel()]).reshape(X1.shape)
for ax, res, key, title in ((axes[0], toy_seq, "sequool", "SequOOL: axis-aligned cuts"),
                            (axes[1], toy_learned, "learned",
                             "learned: cuts along the learned line")):
    ax.contourf(X1, X2, np.log10(F + 1e-3), levels=14, cmap="Greys_r", alpha=0.55)
    pts = res.info["points"]
    learn = pts[:res.n_learn]
    ax.plot(*pts[res.n_learn:].T, "o", ms=3, color=COLOURS[key],
            label=f"search ({res.n_evals - res.n_learn} evaluations)")
    if res.n_learn:
        ax.plot(*learn.T, "s", ms=3, color=COLOURS["truth"],
                label=f"learning ({res.n_learn} evaluations)")
        ax.axline((0, 0), slope=res.subspace[1, 0] / res.subspace[0, 0], lw=0.8,
                  color=COLOURS[key], ls=":")
    ax.plot(*res.x, "*", ms=11, color="k", label="best point")
    ax.set_xlim(-5, 5)
    ax.set_ylim(-5, 5)
    ax.set_aspect("equal")
    ax.set_title(title)
    ax.set_xlabel("$x_1$")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=8)
axes[0].set_ylabel("$x_2$")
book.show_figure(fig, "fig_toy")

# %% [markdown]
# ```{glue:figure} fig_toy
# :alt: Two square panels over the box from -5 to 5 with grey contours of a straight diagonal valley. Left, SequOOL's evaluated points form a grid of thirds that thickens into clusters along the valley floor. Right, a few learning points sit on the unit circle around the origin, a dotted line through the origin follows the learned direction across the valley, and all search points lie on that line, clustered where it crosses the valley floor.
# :name: fig-14-toy
#
# **SequOOL spends its evaluations cutting a direction in which $f$ does not change; the
# learned method searches one line across the valley.** The same budget on $f(x)=(a^\top(x-
# x^\star))^2$ in $d=2$: SequOOL's points (left) and the learned method's learning samples
# and search points (right).
# ```

# %% [markdown]
# With {glue:text}`toy_budget` evaluations SequOOL ends at regret
# {glue:text}`toy_seq:.1e` and the learned method, after spending
# {glue:text}`toy_n_learn` of them on learning a direction
# {glue:text}`toy_angle:.1e`° from the true one, at {glue:text}`toy_learned:.1e`
# ({numref}`fig-14-toy`). The point of the paper is that the gain grows with $d-m$: SequOOL
# cuts every axis in turn, $d$ cuts to shrink all sides once, while the learned method cuts
# only $m$.
#
# ## Learning the subspace
#
# The gradient of $f(x)=g(A(x-x^\star))$ is $\nabla f(x)=A^\top\nabla g(\cdot)$: it always
# lies in the $m$-dimensional row space of $A$. Gradients at a few points therefore span that
# space, and the top-$m$ right singular vectors of the matrix of gradients are a basis of it.
# Without gradients, the authors' release *senses* them:
#
# ```{prf:algorithm} Learning the subspace (Algorithm 1, as the authors' code does it)
# :label: alg-14-learn
#
# 1. Draw $m_x$ points $X_j=\xi_j/\|\xi_j\|$, $\xi_j\sim\mathcal N(0,I_d)$, on the unit
#    sphere around the centre of the domain, and one matrix $\Phi\in\{\pm1/\sqrt{m_\phi}\}^
#    {m_\phi\times d}$ of Rademacher directions of full row rank.
# 2. Finite differences $Y_{ij}=\big(f(X_j+\epsilon\phi_i)-f(X_j)\big)/\epsilon\approx
#    \phi_i^\top\nabla f(X_j)$, $\epsilon=10^{-3}$: $m_x(m_\phi+1)$ evaluations.
# 3. Recover each gradient by basis pursuit, $\hat g_j=\arg\min\|g\|_1$ subject to
#    $\Phi g=Y_{:,j}$.
# 4. $V$ = the top-$m$ right singular vectors of $[\hat g_1,\dots,\hat g_{m_x}]^\top$.
# ```
#
# In `learn_subspace`, `X` holds the $m_x$ points of step 1 and `phi` is $\Phi$, `Y` the
# finite differences of step 2, `G` the recovered gradients of step 3 (a plain solve when
# $m_\phi=d$ makes $\Phi$ invertible), and the SVD is step 4.
#
# ```{literalinclude} /lib/icml25/optimistic/subspace.py
# :pyobject: learn_subspace
# :caption: `icml25.optimistic.learn_subspace`: Algorithm 1
# :language: python
# ```
#
# Step 3 is compressed sensing: with $m_\phi<d$ measurements it is exact when the gradient is
# *sparse*, with few non-zero entries. `oo.basis_pursuit` solves all columns at once by ADMM
# {cite}`boyd2011distributed`; the cell compares its $\ell_1$ norms with those of SciPy's
# linear-programming solver (HiGHS) on the standard reformulation $g=u-v$, $u,v\ge0$, and
# then recovers a 2-sparse and a dense vector in $d=20$ from $m_\phi=8$ measurements.

# %%
bp_rng = run.rng("basis-pursuit-checks")
gaps = []
for _ in range(size.bp_checks):
    d_bp, k_bp = 20, 8
    phi = bp_rng.choice([-1.0, 1.0], size=(k_bp, d_bp)) / np.sqrt(k_bp)
    if np.linalg.matrix_rank(phi) < k_bp:
        continue
    y = phi @ bp_rng.standard_normal(d_bp)
    ours = oo.basis_pursuit(phi, y)
    lp = linprog(np.ones(2 * d_bp), A_eq=np.c_[phi, -phi], b_eq=y, bounds=(0, None))
    gaps.append(abs(np.abs(ours).sum() - lp.fun) / lp.fun)
sparse = np.zeros(20)
sparse[[2, 11]] = [1.5, -0.7]
dense = bp_rng.standard_normal(20)
dense *= np.linalg.norm(sparse) / np.linalg.norm(dense)
errors = {}
for name, g in (("sparse", sparse), ("dense", dense)):
    rec = oo.basis_pursuit(phi, phi @ g, iterations=3000)
    errors[name] = float(np.linalg.norm(rec - g) / np.linalg.norm(g))
book.glue(bp_checks=len(gaps), bp_gap=max(gaps), err_sparse=errors["sparse"],
          err_dense=errors["dense"])

# %% tags=["nbval-check-output"]
book.claim("bp-equals-lp", max(gaps))

# %% [markdown]
# ADMM matches the linear program to a relative {glue:text}`bp_gap:.0e` over
# {glue:text}`bp_checks` instances. The 2-sparse vector is recovered with relative error
# {glue:text}`err_sparse:.0e`, the dense one with {glue:text}`err_dense:.2f`: eight numbers
# cannot pin down twenty free ones. The gradients of a multi-index function with a random
# rotation $A$ are dense, which is why the reproduction also runs the method with $m_\phi=d$
# (then $\Phi$ is invertible and step 3 returns the finite-difference gradient itself), and
# measures what the paper's $m_\phi=4$ recovers.
#
# ### The second learner: a neural surrogate
#
# The paper's other way to find the subspace needs no finite differences at all. Fit a
# network with one hidden layer, $\hat f(x)=w_2^\top\sigma(W_1u+b_1)+b_2$ ($u$ the point
# scaled to $[-1,1]^d$, $\sigma$ the ReLU), to the values of $f$ at uniform samples of the
# domain. Its gradient $\nabla_u\hat f=W_1^\top(\sigma'(\cdot)\odot w_2)$ lies in the row
# space of $W_1$; to fit a function of $Ax$ the rows of $W_1$ grow along the rows of $A$,
# and a weight penalty shrinks everything else. The top-$m$ right singular vectors of $W_1$,
# mapped back to $x$, are the learned subspace (`oo.neural_subspace`: 64 hidden units,
# scikit-learn's Adam, seeded, so the result is a function of the seed). The samples are
# inside the domain and are evaluations like any other, charged to the budget. The cell
# compares both learners at the same number of evaluations on a sphere and a sharp ridge
# in $d=10$, $m=2$, with a random plane for reference.

# %%
nn_rng = run.rng("neural-demo")
print("largest principal angle to the true plane (degrees), d = 10, m = 2")
print(f"{'':12s} {'evals':>6s} {'m_phi=4':>8s} {'m_phi=d':>8s} {'neural':>8s} "
      f"{'random':>8s}")
demo_angles = {}
for name in ("sphere", "sharp_ridge"):
    demo = oo.make_problem(name, 10, seed=run.seed_of(f"neural-demo-{name}"))
    row = []
    for directions in (4, 10):
        points = size.nn_evals // (directions + 1)
        fc = oo.CountedFunction(demo.f, size.nn_evals, vectorized=True)
        V = oo.learn_subspace(fc, np.zeros(10), 2, points, directions=directions,
                              rng=nn_rng)
        row.append(np.degrees(oo.principal_angle(V, demo.A.T)))
    fc = oo.CountedFunction(demo.f, size.nn_evals, vectorized=True)
    V = oo.neural_subspace(fc, demo.bounds, 2, size.nn_evals, rng=nn_rng)
    row.append(np.degrees(oo.principal_angle(V, demo.A.T)))
    plane = np.linalg.qr(nn_rng.standard_normal((10, 2)))[0]
    row.append(np.degrees(oo.principal_angle(plane, demo.A.T)))
    demo_angles[name] = row
    print(f"{name:12s} {size.nn_evals:6d} " + " ".join(f"{a:8.1f}" for a in row))
book.glue(nn_evals=size.nn_evals, nn_sphere=demo_angles["sphere"][2],
          nn_ridge=demo_angles["sharp_ridge"][2], cs_sphere=demo_angles["sphere"][0])

# %% [markdown]
# With {glue:text}`nn_evals` evaluations the network's plane is
# {glue:text}`nn_sphere:.0f`° from the truth on the sphere and {glue:text}`nn_ridge:.0f`° on
# the sharp ridge, against {glue:text}`cs_sphere:.0f`° for compressed sensing with
# $m_\phi=4$ on the sphere. The network needs no sparse gradients, since it fits $f$ itself,
# but a fit to a few hundred samples is only approximately a function of $Ax$, so it does
# not recover the plane exactly as full forward differences do. The reproduction measures
# it on every test function, in the same budget as the search.
#
# ## SequOOL in the learned coordinates
#
# ```{prf:algorithm} SequOOL on the learned partition (Algorithm 2)
# :label: alg-14-learned
#
# Write $x=c+V\alpha$, $c$ the centre of the domain, $\alpha\in\mathbb R^m$. The box of
# $\alpha$ has sides $\pm\sum_j|V_{ji}|(u_j-\ell_j)/2$, the range of $v_i^\top(x-c)$ over the
# domain. Run SequOOL on that box with the evaluations left, cutting along axis $h \bmod m$,
# and evaluate $f$ at $x=c+V\alpha$ (clipped to the domain).
# ```
#
# `oo.learned_partition` does exactly this: after learning $V$ it computes the half-widths
# `half` of the box of $\alpha$ and hands `_sequool_box` (above) the map
# $\alpha\mapsto c+V\alpha$, clipped to the domain, as its `to_x`.
#
# If $V$ spans the rows of $A$, $f(c+V\alpha)=g(AV\alpha+A(c-x^\star))$ is an
# $m$-dimensional function of $\alpha$ that reaches $\min f$: SequOOL on $m$ dimensions instead
# of $d$. The paper's theorem quantifies the gain for $g$ with the smoothness SequOOL's
# analysis needs: simple regret $\tilde O(n^{-\beta/d})$ with
# $\beta=1+\frac{d-m}{2m-1}$, against SequOOL's $\tilde O(n^{-1/d})$. The exponents:

# %%
print(" d   m   beta    learned  SequOOL")
for d_r, m_r in ((5, 2), (5, 1), (10, 2), (20, 2), (20, 5)):
    beta = 1 + (d_r - m_r) / (2 * m_r - 1)
    print(f"{d_r:2d}  {m_r:2d}  {beta:5.2f}   n^-{beta / d_r:.3f}  n^-{1 / d_r:.3f}")
book.glue(beta_10_2=1 + 8 / 3)

# %% [markdown]
# At $d=10$, $m=2$, $\beta=$ {glue:text}`beta_10_2:.2f`: the exponent is almost four times
# SequOOL's. These are upper bounds; the reproduction measures slopes at finite $n$ and does
# not claim the rates.
#
# Every evaluation goes through `oo.CountedFunction`, which refuses the one call that would
# exceed the budget; the learning samples are counted in the same budget. The counts of the
# toy runs:

# %%
print(f"SequOOL: {toy_seq.n_evals} evaluations of a budget of {size.toy_budget}")
print(f"learned: {toy_learned.n_learn} learning + "
      f"{toy_learned.n_evals - toy_learned.n_learn} search = {toy_learned.n_evals}")

# %% [markdown]
# ## Exercises
#
# ```{exercise} SequOOL and the dimension
# :label: ex-14-dimension
#
# **Level:** easy · **Time:** about 10 minutes.
#
# Run SequOOL with $n=500$ on the sharp ridge (`oo.make_problem("sharp_ridge", d)`, $m=2$)
# for $d\in\{2,5,10,20\}$, five seeds each. The function depends on two directions in every
# case. How does the median regret change with $d$, and why?
# ```
#
# ```{solution-start} ex-14-dimension
# :class: dropdown
# ```
#
# SequOOL cuts the axes in turn, so after $h$ depths each side has been cut about $h/d$ times:
# the larger $d$, the larger the boxes at a given depth, *even though* $f$ only varies in two
# directions (a rotated valley crosses every axis). This is the $n^{-1/d}$ of its regret
# bound. With five seeds the trend is noisy between neighbouring $d$, but $d=20$ is clearly
# worst.

# %%
dim_regret = {}
for d_ex in (2, 5, 10, 20):
    problems = [oo.make_problem("sharp_ridge", d_ex,
                                seed=run.seed_of(f"dimension-exercise-{d_ex}-{s}"))
                for s in range(size.ex_seeds)]
    runs = [oo.sequool(p.f, p.bounds, 500, vectorized=True).fun for p in problems]
    dim_regret[d_ex] = float(np.median(runs))
    print(f"d = {d_ex:2d}: median regret {dim_regret[d_ex]:.1e}")
book.glue(ex_dim_2=dim_regret[2], ex_dim_20=dim_regret[20])

# %% [markdown]
# From {glue:text}`ex_dim_2:.1e` at $d=2$ to {glue:text}`ex_dim_20:.1e` at $d=20$.
#
# ```{solution-end}
# ```
#
# ```{exercise} The price of learning
# :label: ex-14-oracle
#
# **Level:** medium · **Time:** about 15 minutes.
#
# `oo.learned_partition` accepts `subspace=` to skip the learning step (an oracle that knows
# $A$). On the sharp ridge in $d=20$, compare the median regret over a few seeds of the
# oracle and of the learned method with full differences (`directions=20`), at the same
# budget. What does learning cost, and where does the difference come from?
# ```
#
# ```{solution-start} ex-14-oracle
# :class: dropdown
# ```
#
# Two costs: the 20% of the budget spent learning (SequOOL then runs a shallower tree), and
# the learned subspace's error, printed below as the largest principal angle. With only a
# few learning points on the sharp ridge, a point close to its kink can tilt the learned
# plane (the reproduction's section 2).

# %%
oracle, learned, tilt = [], [], []
for s in range(size.ex_seeds):
    ridge = oo.make_problem("sharp_ridge", 20,
                            seed=run.seed_of(f"oracle-exercise-problem-{s}"))
    oracle.append(oo.learned_partition(ridge.f, ridge.bounds, size.ex_budget,
                                       active_dim=2, subspace=ridge.A.T,
                                       vectorized=True).fun)
    res = oo.learned_partition(ridge.f, ridge.bounds, size.ex_budget, active_dim=2,
                               seed=run.seed_of(f"oracle-exercise-search-{s}"),
                               directions=20, vectorized=True)
    learned.append(res.fun)
    tilt.append(np.degrees(oo.principal_angle(res.subspace, ridge.A.T)))
print(f"median regret, oracle subspace:  {np.median(oracle):.2e}")
print(f"median regret, learned subspace: {np.median(learned):.2e}")
print("largest principal angles (°):", " ".join(f"{t:.1e}" for t in tilt))
book.glue(ex_oracle=float(np.median(oracle)), ex_learned=float(np.median(learned)),
          ex_budget=size.ex_budget)

# %% [markdown]
# At $n=$ {glue:text}`ex_budget`: oracle {glue:text}`ex_oracle:.1e`, learned
# {glue:text}`ex_learned:.1e`.
#
# ```{solution-end}
# ```
#
# ```{exercise} When sparse recovery works
# :label: ex-14-sparse
#
# **Level:** medium · **Time:** about 20 minutes.
#
# Build a multi-index function whose active directions are *sparse*: $A$ with rows
# $e_3$ and $e_7$ in $d=20$ (`oo.Problem("sphere", A, x_star, bounds)`). Learn its subspace
# from 20 points with $m_\phi\in\{4,8,12\}$ sensing directions (`oo.learn_subspace`) and
# compare the principal angles with those of a random rotation. Why does $m_\phi=4$ fail
# even for sparse gradients?
# ```
#
# ```{solution-start} ex-14-sparse
# :class: dropdown
# ```
#
# A Rademacher matrix with 4 rows has only $2^4/2=8$ different columns up to sign, so among
# $d=20$ columns some coincide: two coordinates with the same column give the same
# measurements, and no recovery can tell them apart. With 8 rows repeats are rarer and the
# 2-sparse gradients are found in most draws; with 12, in all of them. Dense gradients are
# never recovered: that needs $m_\phi\ge d$. This is the setting compressed sensing was
# made for, the one the SI-BO line of work {cite}`djolonga2013high` assumes.

# %%
A_sparse = np.zeros((2, 20))
A_sparse[0, 3], A_sparse[1, 7] = 1.0, 1.0
sparse_angles = {}
for k_dir in (4, 8, 12):
    for label in ("sparse rows", "random rotation"):
        found = []
        for s in range(size.ex_seeds):
            # the same problems and sensing draws for every m_phi and both A's
            problem = oo.make_problem(
                "sphere", 20, seed=run.seed_of(f"sparse-exercise-problem-{s}"))
            if label == "sparse rows":
                problem = oo.Problem("sphere", A_sparse, problem.x_star, problem.bounds)
            fc = oo.CountedFunction(problem.f, 10**4, vectorized=True)
            V = oo.learn_subspace(fc, np.zeros(20), 2, 20, directions=k_dir,
                                  rng=run.seed_of(f"sparse-exercise-sensing-{s}"))
            found.append(np.degrees(oo.principal_angle(V, problem.A.T)))
        sparse_angles[(k_dir, label)] = float(np.median(found))
        print(f"m_phi = {k_dir:2d}, {label:15s}: "
              f"median angle {np.median(found):5.1f}°")
book.glue(ex_sparse_4=sparse_angles[(4, "sparse rows")],
          ex_sparse_12=sparse_angles[(12, "sparse rows")],
          ex_dense_12=sparse_angles[(12, "random rotation")])

# %% [markdown]
# Sparse rows: median {glue:text}`ex_sparse_4:.0f`° with $m_\phi=4$ and
# {glue:text}`ex_sparse_12:.1f`° with $m_\phi=12$; a random rotation with $m_\phi=12$:
# {glue:text}`ex_dense_12:.0f`°.
#
# ```{solution-end}
# ```

# %%
book.finish()
