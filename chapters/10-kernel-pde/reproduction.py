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
# Plot, for the elliptic benchmark, the error of each solver against its wall time. Which solver
# reaches an error of $10^{-4}$ first?
# ```
#
# ```{solution} ex-pde-pareto
# :class: dropdown
#
# Combine `errors["nonlinear elliptic"]` with `cost`. Second-order finite differences need
# $h\approx 10^{-2}$ or finer for $10^{-4}$, i.e. hundreds of points per side; both kernel solvers
# get there near $32\times32$, and SKS does so in a fraction of the dense solver's time.
# ```
#
# ```{exercise} The nugget floor
# :label: ex-pde-nugget
#
# Repeat section 1 for SKS with nuggets $10^{-8}$, $10^{-10}$ and $10^{-12}$. Where does the error
# curve flatten in each case, and what limits how small the nugget can be?
# ```
#
# ```{solution} ex-pde-nugget
# :class: dropdown
#
# The floor moves down with the nugget until the Cholesky factorisation of $K_k$ loses accuracy:
# the Gaussian kernel matrix's condition number grows exponentially with the number of nodes per
# length scale, so in double precision the nugget cannot go far below $10^{-12}$ on fine grids.
# ```
#
# ```{exercise} Preconditioning
# :label: ex-pde-precond
#
# SKS preconditions GMRES with the exact inverse of the constant-coefficient Laplacian part. Count
# the GMRES iterations per Newton step for the elliptic and the Allen-Cahn problems. Why does the
# preconditioner work less well for Allen-Cahn?
# ```
#
# ```{solution} ex-pde-precond
# :class: dropdown
#
# The preconditioner uses the mean of the reaction coefficient $3u^2$ (elliptic) or $3u^2-1$
# (Allen-Cahn). The Allen-Cahn coefficient changes sign over the domain, so a constant shift
# approximates it worse and GMRES needs more iterations.
# ```

# %%
book.finish()
