# %% [markdown]
# # Reproduction: accuracy as the grid refines, and cost
#
# > In numerical experiments, we demonstrate the advantages of our method in solving several
# > benchmark PDEs. (Xu et al., 2025, abstract)

# %% [markdown]
# :::{admonition} Results at a glance
# :class: tip
# ```{glue:md} results_at_a_glance
# :format: myst
# ```
# :::

# %% [markdown]
# Three solvers on the same grids, in the same run:
#
# * **SKS**, the paper's solver (`icml25.kernel_pde.solve_sks`): kernel interpolation on the grid,
#   Kronecker algebra, Newton with preconditioned GMRES;
# * **DAKS**, the dense Gaussian-process solver of Chen et al. (`solve_daks`): the differential
#   functionals in a dense Gram matrix, Gauss-Newton with a Cholesky factorisation;
# * **FD**, second-order finite differences with SciPy's sparse direct solver (`solve_fd`).
#
# Three benchmarks on the unit square with Dirichlet data, each with a known solution: the
# nonlinear elliptic equation of both papers, an Allen-Cahn type equation, and a regularised Eikonal
# equation (which adds first derivatives to the operator). Both kernel solvers use the Gaussian
# kernel with $\ell=0.1$ and a nugget of $10^{-10}$, fixed for every grid: nothing is tuned per run.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import numpy as np

from icml25 import book
from icml25.kernel_pde import (
    allen_cahn,
    eikonal,
    nonlinear_elliptic,
    solve_daks,
    solve_fd,
    solve_sks,
)

SIZES = {
    "quick": dict(
        grids_sks=(8, 12, 16, 24, 32), grids_daks=(8, 12, 16), grids_fd=(8, 16, 32, 64),
        grids_sks_eik=(8, 12, 16, 24), grids_daks_eik=(8, 12),
        cost_sks=(16, 24, 32, 48), cost_daks=(8, 12, 16, 20), cost_fd=(16, 32, 64, 128),
    ),
    "book": dict(
        grids_sks=(8, 12, 16, 24, 32, 48, 64), grids_daks=(8, 12, 16, 24, 32),
        grids_fd=(8, 16, 32, 64, 128, 256),
        grids_sks_eik=(8, 12, 16, 24, 32, 48), grids_daks_eik=(8, 12, 16, 24),
        cost_sks=(16, 24, 32, 48, 64, 96, 128), cost_daks=(12, 16, 20, 24, 28, 32, 36),
        cost_fd=(16, 32, 64, 128, 256),
    ),
    "paper": dict(
        grids_sks=(8, 12, 16, 24, 32, 48, 64, 96, 128),
        grids_daks=(8, 12, 16, 24, 32, 40, 48),
        grids_fd=(8, 16, 32, 64, 128, 256, 512),
        grids_sks_eik=(8, 12, 16, 24, 32, 48, 64, 96),
        grids_daks_eik=(8, 12, 16, 24, 32),
        cost_sks=(16, 24, 32, 48, 64, 96, 128, 192, 256),
        cost_daks=(12, 16, 20, 24, 28, 32, 36, 40, 48),
        cost_fd=(16, 32, 64, 128, 256, 512),
    ),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
# One colour and marker per solver, the same in every figure of the chapter.
STYLE = {"SKS": dict(color=book.PALETTE[0], marker="o"),
         "DAKS": dict(color=book.PALETTE[1], marker="s"),
         "FD": dict(color=book.PALETTE[2], marker="d")}

# %% [markdown]
# ## 1. Error as the grid refines
#
# Relative $L^2$ error of the nodal solution against the known solution, for grids of $n\times n$
# points ({numref}`fig-10-errors`). The dense solver stops where its Gram matrix makes a grid
# cost more than a few seconds.

# %%
benchmarks = {
    "nonlinear elliptic": (nonlinear_elliptic(), size.grids_sks, size.grids_daks),
    "Allen-Cahn (a = 2)": (allen_cahn(2.0), size.grids_sks, size.grids_daks),
    "regularised Eikonal": (eikonal(0.1), size.grids_sks_eik, size.grids_daks_eik),
}
errors = {}
for name, (pde, grids_sks, grids_daks) in benchmarks.items():
    errors[name] = {
        "SKS": {n: solve_sks(pde, n).error for n in grids_sks},
        "DAKS": {n: solve_daks(pde, n).error for n in grids_daks},
        "FD": {n: solve_fd(pde, n).error for n in size.grids_fd},
    }

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(3, height=3.1, sharey=True)
for ax, (name, by_method) in zip(axes, errors.items()):
    for method, errs in by_method.items():
        ns = np.array(sorted(errs))
        ax.loglog(ns**2, [errs[n] for n in ns], "-", label=method, **STYLE[method])
    ax.set_title(name, fontsize=10)
    ax.set_xlabel("collocation points N")
axes[0].set_ylabel("relative L2 error")
fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=3)
book.show_figure(fig, "fig_errors")


# %% [markdown]
# ```{glue:figure} fig_errors
# :alt: Three log-log panels of relative error against the number of collocation points, one per benchmark. The errors of the two kernel solvers fall steeply and nearly together; finite differences fall along a shallower straight line.
# :name: fig-10-errors
#
# **Both kernel solvers' errors fall far faster with the number of points than
# second-order finite differences'.** Relative $L^2$ error against the number of
# collocation points $N=n^2$ for SKS (the paper's solver), DAKS (the dense
# Gaussian-process solver of Chen et al.) and finite differences (FD), on the nonlinear
# elliptic, Allen-Cahn and regularised Eikonal benchmarks.
# ```

# %% tags=["nbval-check-output"]
def rate(errs, upto=None):
    """Observed order in the grid spacing h = 1/(n-1): slope of log error on log h."""
    ns = np.array([n for n in sorted(errs) if upto is None or n <= upto])
    return float(-np.polyfit(np.log(ns - 1), np.log([errs[n] for n in ns]), 1)[0])


for name, by_method in errors.items():
    print(name)
    for method, errs in by_method.items():
        cells = " ".join(f"{n}:{e:.1e}" for n, e in sorted(errs.items()))
        print(f"  {method:5s} {cells}")

# %% [markdown]
# On the finer grids the two kernel solvers' errors are close: they solve collocation problems with
# the same kernel, one through the interpolant, the other through a Gram matrix of functionals.
# Both converge much faster than second-order finite differences, until SKS reaches a floor near
# $10^{-6}$ set by the nugget and the conditioning of the Gaussian kernel matrix.
#
# The threshold of the first claim was fixed before the run: "comparable accuracy" is
# read as SKS's error at most 3 times the dense solver's at every grid where both run.
# The paper claims that taking the operators out of the kernel costs no accuracy, so the
# claim bounds the ratio SKS error / dense error from above, and a grid where SKS is the
# more accurate one (the coarsest grids, where the dense solver is worse by a larger
# factor) does not count against it.

# %% tags=["nbval-check-output"]
ratios = {(name, n): by_method["SKS"][n] / by_method["DAKS"][n]
          for name, by_method in errors.items() for n in by_method["DAKS"]
          if n in by_method["SKS"]}
(worst_name, worst_n), worst_factor = max(ratios.items(), key=lambda kv: kv[1])
(best_name, best_n), best_factor = min(ratios.items(), key=lambda kv: kv[1])
worst_case = f"factor {worst_factor:.2f} on the {worst_name} benchmark at n = {worst_n}"
book.claim(
    "comparable-accuracy",
    "SKS's error is at most 3 times the dense GP solver's at every common grid "
    "(three benchmarks)",
    worst_factor, "<=", 3,
    paper="comparable accuracy to the kernel solver that embeds the operators in the "
    "kernel",
    note=f"ours: the largest SKS error / dense error; the smallest is "
    f"{best_factor:.2g} ({best_name}, n = {best_n}), where SKS is the more accurate",
)
fd_rate = rate(errors["nonlinear elliptic"]["FD"], upto=None)
sks_rate = rate(errors["nonlinear elliptic"]["SKS"], upto=32)
book.glue("fd_rate", fd_rate)
book.glue("worst_case", worst_case)
book.glue("sks_rate", sks_rate)
book.claim(
    "convergence-rate",
    "SKS converges faster than second order on the elliptic benchmark before its floor "
    "(observed order in h for n <= 32 above 2)",
    sks_rate, ">", 2,
    paper="a convergence proof with a rate under regularity assumptions",
    note=f"finite differences: order {fd_rate:.2f}",
)

# %% [markdown]
# The largest ratio of SKS's error to the dense solver's, which decides the first
# verdict: a {glue:text}`worst_case`. The two kernel solvers are furthest apart on the
# coarsest grids, where SKS is the more accurate one.
#
# Observed orders in the grid spacing on the elliptic benchmark: finite differences
# {glue:text}`fd_rate:.2f` (their theoretical 2), SKS {glue:text}`sks_rate:.1f` over the grids up
# to $32\times32$, the spectral-like convergence of smooth-kernel collocation. Beyond that the
# nugget floor flattens the SKS curve: refining further needs a smaller nugget, a better
# conditioned kernel or the paper's optimiser, which we do not reproduce.
#
# ## 2. Cost as the number of collocation points grows
#
# Wall time and peak memory of one full solve of the elliptic benchmark
# ({numref}`fig-10-cost`). Times are the median of up to three runs (one when a run takes over a second); memory is the peak traced by `tracemalloc` in
# a separate run (numpy arrays; SciPy's sparse factorisation is mostly outside it).

# %%
pde = nonlinear_elliptic()
solvers = {"SKS": (solve_sks, size.cost_sks), "DAKS": (solve_daks, size.cost_daks),
           "FD": (solve_fd, size.cost_fd)}
cost = {m: {} for m in solvers}
memory = {m: {} for m in solvers}
for method, (solver, grids) in solvers.items():
    for n in grids:
        cost[method][n], _ = book.measure.timed(lambda: solver(pde, n), repeats=3)
        # Tracing every allocation slows allocation-heavy code several-fold, so memory
        # is measured in a separate run, and only where a run is cheap (under a second).
        if cost[method][n] < 1.0:
            memory[method][n], _ = book.measure.peak_memory_mib(lambda: solver(pde, n))

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.2)
for method, by_n in cost.items():
    ns = np.array(sorted(by_n))
    axes[0].loglog(ns**2, [by_n[n] for n in ns], "-", label=method, **STYLE[method])
    mem_ns = np.array(sorted(memory[method]))
    axes[1].loglog(mem_ns**2, [memory[method][n] for n in mem_ns], "-", label=method,
                   **STYLE[method])
axes[0].set_xlabel("collocation points N")
axes[0].set_ylabel("seconds")
axes[0].set_title("wall time of one solve", fontsize=10)
axes[1].set_xlabel("collocation points N")
axes[1].set_ylabel("peak MiB (tracemalloc)")
axes[1].set_title("peak memory", fontsize=10)
fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=3)
book.show_figure(fig, "fig_cost")


# %% [markdown]
# ```{glue:figure} fig_cost
# :alt: Two log-log panels against the number of collocation points. Left, wall time: the dense solver's line is the steepest and stops at the smallest grids, SKS and finite differences continue to far larger grids. Right, peak memory: the dense solver's line rises steeply, SKS and finite differences grow slowly.
# :name: fig-10-cost
#
# **The dense solver's time and memory grow much faster with the number of points than
# those of SKS and finite differences.** Wall time (median of up to three runs) and peak
# memory traced by `tracemalloc` of one full solve of the
# nonlinear elliptic benchmark, against the number of collocation points $N=n^2$. Memory
# is traced only for runs under a second.
# ```

# %% [markdown]
# The claim reads the ratio of collocation points at equal wall time: the largest grid
# SKS solves within the time the dense solver needs for its largest grid here. "Far
# larger grids at the same cost" is read, before the run, as at least four times as many
# points. Wall times depend on the machine: when the tests re-execute the notebook they
# require the same verdict but let the ratio move by one grid step of SKS (a relative
# tolerance of 0.8), since a faster or slower CPU shifts which grid fits in the dense
# solver's time.

# %% tags=["nbval-check-output"]
def slope(by_n):
    """Growth exponent of the time in N = n^2, fitted on the larger half of grids."""
    ns = np.array(sorted(by_n))[len(by_n) // 2 :]
    return book.measure.loglog_slope(ns**2, [by_n[n] for n in ns])


daks_largest = max(cost["DAKS"])
budget = cost["DAKS"][daks_largest]
sks_within = max((n for n, t in cost["SKS"].items() if t <= budget), default=None)
points_ratio = (sks_within**2 / daks_largest**2) if sks_within else 0.0
book.glue("daks_largest", daks_largest)
book.glue("daks_seconds", budget)
book.glue("sks_within", sks_within or 0)
book.glue("points_ratio", points_ratio)
book.glue("slope_daks", slope(cost["DAKS"]))
book.glue("slope_sks", slope(cost["SKS"]))
book.glue("slope_fd", slope(cost["FD"]))
mem_n = max(memory["DAKS"])
book.glue("mem_n", mem_n)
book.glue("mem_daks", memory["DAKS"][mem_n])
book.claim(
    "larger-grids",
    "at the dense solver's largest measured cost, SKS solves at least 4x as many "
    "collocation points",
    points_ratio, ">=", 4,
    timed=True,
    rtol=0.8,  # timings: one SKS grid step either way (96 -> 128 per side is +78%)
    paper="avoids the full Gram matrix and scales efficiently to a large number of "
    "collocation points",
    note="ours: ratio of collocation points at equal wall time",
)

# %% [markdown]
# The dense solver needs {glue:text}`daks_seconds:.1f` s for a {glue:text}`daks_largest`-point
# grid side; in that time SKS solves a
# {glue:text}`sks_within`-point side, {glue:text}`points_ratio:.0f` times as many collocation points.
# Fitted growth of the wall time with $N$: dense GP {glue:text}`slope_daks:.2f` (a Cholesky
# factorisation of a matrix about twice the size of $N$ costs $N^3$), SKS
# {glue:text}`slope_sks:.2f`, finite differences {glue:text}`slope_fd:.2f`.
#
# Finite differences remain the fastest per grid, but at second order: SKS reaches an error that
# finite differences would need far finer grids for. The fair comparison is error against time,
# which exercise 1 asks for. In memory, the dense solver's Gram matrix dominates: at
# {glue:text}`mem_n` points per side it peaks at {glue:text}`mem_daks:.0f` MiB, and its growth in
# the right-hand panel of {numref}`fig-10-cost` is quadratic in $N$, where SKS and finite
# differences grow linearly.
#
# ## What differs from the paper, and why
#
# * **Optimiser.** The paper minimises a kernel-regularised loss; we solve the collocation
#   equations exactly (the limit of a large penalty) by Newton's method with GMRES. Its official code
#   could not be consulted from here.
# * **Benchmarks.** Manufactured solutions throughout; the Allen-Cahn frequency is $a=2$ instead of
#   15 or 20 (which need grids beyond the book's budget); the Eikonal equation uses a smooth
#   manufactured solution instead of the paper's constant right-hand side with a Cole-Hopf reference.
#   Burgers' equation is not included.
# * **Scale.** Up to about {glue:text}`sks_within` points per side in book mode; paper mode goes
#   further.
#
# ## Exercises
#
# ```{exercise} Error against time
# :label: ex-pde-pareto
#
# **Level:** easy · **Time:** about 15 minutes.
#
# Plot, for the elliptic benchmark, the error of each solver against its wall time. Which solver
# reaches an error of $10^{-4}$ first?
# ```
#
# ```{solution-start} ex-pde-pareto
# :class: dropdown
# ```
#
# Pair `errors["nonlinear elliptic"]` with `cost` on the grids that both sections ran, and
# read off, per solver, the first grid whose error is below $10^{-4}$. Where finite
# differences do not get there, their fitted order in $h$ says how fine a grid they would
# need.

# %%
TARGET = 1e-4
elliptic_errors = errors["nonlinear elliptic"]
fig, ax = book.figure(height=3.2)
first_hit = {}
for method in ("SKS", "DAKS", "FD"):
    common = sorted(set(elliptic_errors[method]) & set(cost[method]))
    errs = [elliptic_errors[method][n] for n in common]
    times = [cost[method][n] for n in common]
    ax.loglog(times, errs, "-", label=method, **STYLE[method])
    first_hit[method] = next((n for n, e in zip(common, errs) if e <= TARGET), None)
ax.axhline(TARGET, color="grey", ls=":", lw=1)
ax.set_xlabel("wall time of one solve (s)")
ax.set_ylabel("relative L2 error")
ax.legend(fontsize=8)
book.glue("fig_ex_pareto", fig)  # placed, captioned, below

reached = {m: n for m, n in first_hit.items() if n is not None}
winner = min(reached, key=lambda m: cost[m][reached[m]]) if reached else "none"
for method, n_hit in first_hit.items():
    print(f"{method:5s} first grid with error <= 1e-4:",
          f"{n_hit} x {n_hit}" if n_hit else "none of the grids run")
fd_largest = max(elliptic_errors["FD"])
fd_needed = 1 + (fd_largest - 1) * (elliptic_errors["FD"][fd_largest] / TARGET) ** (
    1 / fd_rate)
print(f"FD, at its fitted order {fd_rate:.2f}, would need about {fd_needed:.0f} points "
      "a side")
book.glue("ex_pareto_winner", winner)
book.glue("ex_pareto_fd_n", fd_needed)

# %% [markdown]
# ```{glue:figure} fig_ex_pareto
# :alt: Error against wall time of one solve, log-log, for SKS, DAKS and finite differences on the nonlinear elliptic problem, with a dotted line at the error 1e-4.
# :name: fig-10-ex-pareto
#
# **Error against cost, per solver.** Each curve joins the grids that both the accuracy and the cost sections ran; the dotted line is the target error $10^{-4}$.
# ```
#
# In this run, the first solver to reach $10^{-4}$ is: {glue:text}`ex_pareto_winner`.
# The kernel solvers get there on the same grid, so the one that is cheaper per grid wins,
# and the dense solver's cost grows as $N^3$. Finite differences converge at order
# {glue:text}`fd_rate:.2f` in $h$ and would need about
# {glue:text}`ex_pareto_fd_n:.0f` points a side. The answer depends on the machine only
# through the time axis; which grid each solver needs does not.
#
# ```{solution-end}
# ```
#
# ```{exercise} The nugget floor
# :label: ex-pde-nugget
#
# **Level:** medium · **Time:** about 25 minutes.
#
# Repeat section 1 for SKS with nuggets $10^{-8}$, $10^{-10}$ and $10^{-12}$. Where does the error
# curve flatten in each case, and what limits how small the nugget can be?
# ```
#
# ```{solution-start} ex-pde-nugget
# :class: dropdown
# ```
#
# On the elliptic benchmark ($10^{-10}$ is section 1's own run, reused), then the smallest
# eigenvalue that double precision computes for the bare one-dimensional kernel matrix
# $K_1$ on each grid.

# %%
from scipy import linalg as sla

from icml25.kernel_pde import gaussian_kernel_1d, uniform_grid

elliptic = benchmarks["nonlinear elliptic"][0]
nugget_errors = {1e-8: {}, 1e-10: elliptic_errors["SKS"], 1e-12: {}}
for nug in (1e-8, 1e-12):
    nugget_errors[nug] = {n: solve_sks(elliptic, n, nugget=nug).error
                          for n in size.grids_sks}
print("nugget  " + " ".join(f"{n:>8d}" for n in size.grids_sks))
for nug, errs in nugget_errors.items():
    print(f"{nug:6.0e}  " + " ".join(f"{errs[n]:8.1e}" for n in size.grids_sks))
print("\nbare K_1 (no nugget): smallest computed eigenvalue, Cholesky possible?")
bare = {}
for n in size.grids_sks:
    K_bare = gaussian_kernel_1d(uniform_grid(n), uniform_grid(n), 0.1)
    try:
        sla.cho_factor(K_bare)
        factorises = "yes"
    except np.linalg.LinAlgError:
        factorises = "no"
    bare[n] = np.linalg.eigvalsh(K_bare).min()
    print(f"  n = {n:3d}: {bare[n]:+.1e}  {factorises}")
finest = max(size.grids_sks)
for nug, label in ((1e-8, "8"), (1e-10, "10"), (1e-12, "12")):
    book.glue(f"ex_nugget_floor_{label}", nugget_errors[nug][finest])
floors = [nugget_errors[nug][finest] for nug in (1e-8, 1e-10, 1e-12)]
book.glue("ex_nugget_gain_1", floors[0] / floors[1])
book.glue("ex_nugget_gain_2", floors[1] / floors[2])
book.glue("ex_nugget_min_eig", bare[finest])
book.glue("ex_nugget_finest", finest)

# %% [markdown]
# On the coarse grids the three curves coincide: there the error is the discretisation's,
# and the nugget is far below everything. They part where the kernel matrix becomes
# numerically singular, and each flattens at its own floor: on the
# {glue:text}`ex_nugget_finest`-point grid the error is
# {glue:text}`ex_nugget_floor_8:.1e`, {glue:text}`ex_nugget_floor_10:.1e` and
# {glue:text}`ex_nugget_floor_12:.1e` for nuggets $10^{-8}$, $10^{-10}$ and $10^{-12}$:
# each hundredfold smaller nugget lowers the floor by a factor of
# {glue:text}`ex_nugget_gain_1:.0f` and then {glue:text}`ex_nugget_gain_2:.0f`, not a hundred.
# The nugget cannot go to zero: the smallest eigenvalue that double precision computes for
# the bare $K_1$ shrinks towards rounding level as the grid refines (on the finest grid,
# {glue:text}`ex_nugget_min_eig:.1e`; a negative value is pure rounding, since the true
# matrix is positive definite), and once it is negative the Cholesky factorisation of the
# bare matrix fails. A nugget has to stay well above that rounding level; as it approaches
# it, the differentiation matrices lose digits and the Newton-GMRES solve slows down.
#
# ```{solution-end}
# ```
#
# ```{exercise} Preconditioning
# :label: ex-pde-precond
#
# **Level:** hard · **Time:** about 40 minutes.
#
# SKS preconditions GMRES with the exact inverse of the constant-coefficient part of the Newton
# matrix: the Laplacian plus the *mean* of the reaction coefficient $\partial R/\partial u$.
# Count the GMRES iterations for the elliptic and the Allen-Cahn problems. The Allen-Cahn
# coefficient $3u^2-1$ changes sign over the domain; does the preconditioner work less well
# for it?
# ```
#
# ```{solution-start} ex-pde-precond
# :class: dropdown
# ```
#
# `solve_sks` does not report its GMRES iterations, so the code rebuilds one Newton system,
# the one at the exact solution (where Newton's last steps are), from the library's
# differentiation matrices, and counts the iterations to a relative residual of $10^{-10}$
# (the solver's own tolerance) with and without the preconditioner.

# %%
from scipy.sparse import linalg as spla

from icml25.kernel_pde import KroneckerInterpolant


def gmres_iterations(problem, n, precondition=True):
    """GMRES iterations for the Newton matrix of `problem` at its exact solution."""
    g = uniform_grid(n)
    m = n - 2
    inner = slice(1, n - 1)
    A = KroneckerInterpolant((g, g), 0.1).differentiation_matrix(0, 2)[inner, inner]
    Xi, Yi = np.meshgrid(g[inner], g[inner], indexing="ij")
    exact = problem.solution(Xi, Yi)
    coef = problem.partials({"u": exact}, Xi, Yi)["u"]  # dR/du at u*
    lam, V = np.linalg.eig(A)  # the same 1-D matrix on both axes
    V_inv = np.linalg.inv(V)
    denom = -(lam[:, None] + lam[None, :]) + coef.mean()

    def newton_matrix(v):
        W = v.reshape(m, m)
        return (-(A @ W) - W @ A.T + coef * W).ravel()

    def fast_diagonalisation(v):
        return np.real(V @ ((V_inv @ v.reshape(m, m) @ V_inv.T) / denom) @ V.T).ravel()

    op = spla.LinearOperator((m * m, m * m), matvec=newton_matrix, dtype=float)
    pre = (spla.LinearOperator((m * m, m * m), matvec=fast_diagonalisation, dtype=float)
           if precondition else None)
    rhs = np.random.default_rng([seed, 10, n]).standard_normal(m * m)
    count = [0]
    spla.gmres(op, rhs, M=pre, rtol=1e-10, atol=0.0, restart=100, maxiter=10,
               callback=lambda _: count.__setitem__(0, count[0] + 1),
               callback_type="pr_norm")
    return count[0], coef


problems = {"elliptic": benchmarks["nonlinear elliptic"][0],
            "Allen-Cahn": benchmarks["Allen-Cahn (a = 2)"][0]}
precond_rows = {}
print("problem      dR/du: min   mean    max   iterations: n=16  n=32  "
      "n=16 unpreconditioned")
for name, problem in problems.items():
    it16, coef = gmres_iterations(problem, 16)
    it32, _ = gmres_iterations(problem, 32)
    plain16, _ = gmres_iterations(problem, 16, precondition=False)
    g_fine = np.linspace(0, 1, 201)
    amplitude = np.abs(problem.solution(*np.meshgrid(g_fine, g_fine))).max()
    precond_rows[name] = (it16, it32, plain16, coef.std(), amplitude)
    print(f"{name:11s} {coef.min():9.2f} {coef.mean():6.2f} {coef.max():6.2f}"
          f"   {it16:15d} {it32:5d} {plain16:9d}")
for name, key in (("elliptic", "ell"), ("Allen-Cahn", "ac")):
    book.glue(f"ex_pre_{key}_16", precond_rows[name][0])
    book.glue(f"ex_pre_{key}_32", precond_rows[name][1])
    book.glue(f"ex_pre_{key}_plain", precond_rows[name][2])
    book.glue(f"ex_pre_{key}_std", precond_rows[name][3])
    book.glue(f"ex_pre_{key}_amp", precond_rows[name][4])

# %% [markdown]
# Not here. On the $32\times32$ grid GMRES needs {glue:text}`ex_pre_ell_32` iterations for the
# elliptic problem and {glue:text}`ex_pre_ac_32` for Allen-Cahn: the sign change does not
# hurt. What the preconditioner leaves out is the *variation* of the coefficient around its
# mean, and that is larger for the elliptic problem, whose solution reaches
# {glue:text}`ex_pre_ell_amp:.1f` in amplitude ($3u^2$ has a standard deviation of
# {glue:text}`ex_pre_ell_std:.1f` over the nodes), than for this Allen-Cahn problem, whose
# solution reaches {glue:text}`ex_pre_ac_amp:.1f` (standard deviation
# {glue:text}`ex_pre_ac_std:.1f`). With either, the preconditioner cuts the iterations by a
# large factor (on the $16\times16$ grid from {glue:text}`ex_pre_ell_plain` to
# {glue:text}`ex_pre_ell_16` for the elliptic problem, from {glue:text}`ex_pre_ac_plain` to
# {glue:text}`ex_pre_ac_16` for Allen-Cahn), and the preconditioned counts grow only slowly
# as the grid refines. A sign change would matter
# if the mean coefficient brought the constant-coefficient part close to singular (a mean
# near minus the smallest eigenvalue of $-\Delta$); at $a=2$ it is nowhere near.
#
# ```{solution-end}
# ```

# %%
book.finish()
