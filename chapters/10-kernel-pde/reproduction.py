# %% [markdown]
# # Reproduction: the paper's solver, our variant and the dense baseline
#
# > In numerical experiments, we demonstrate the advantages of our method in solving several
# > benchmark PDEs. (Xu et al., 2025, abstract)

# %% [markdown]
# Four solvers, on the same problems and in the same run:
#
# * **SKS**, the paper's solver as its official code runs it (`icml25.kernel_pde.solve_sks`):
#   the kernel interpolant on a grid with Kronecker algebra, and a *penalised* loss,
#   $\tfrac12\eta^\top\tilde K^{-1}\eta + v\sum_{\text{all nodes}}(P[u]-f)^2 +
#   \tau\sum_{\text{boundary}}(u-g)^2$ with $v=10^4$, $\tau=10^{12}$ and a nugget $j=10^{-6}$,
#   minimised by Gauss-Newton (the paper's optimiser for the elliptic equation) or Adam (its
#   optimiser for the others);
# * **Newton-Kronecker**, *our variant* (`solve_collocation`): the same interpolant, but the
#   collocation equations solved exactly by Newton's method, each Newton system by GMRES with
#   Kronecker products only, so that no $N\times N$ matrix is ever formed;
# * **DAKS**, the dense Gaussian-process solver of Chen et al. (`solve_daks`) in their
#   elimination form: the Laplacian functionals in a dense Gram matrix, Gauss-Newton with a
#   Cholesky factorisation, their adaptive nugget;
# * **FD**, second-order finite differences with SciPy's sparse direct solver (`solve_fd`).
#
# Benchmarks: the paper's nonlinear elliptic equation (with the official code's solution,
# coefficient 2), its Allen-Cahn equation, its Burgers equation, and a regularised Eikonal
# equation with a manufactured solution. Errors are relative $L^2$ errors on a $60\times60$ test
# grid, through each kernel solver's interpolant (the dense solver's posterior mean), and for
# finite differences at the nodes. We report the error of the **final** iterate. The paper's
# code reports the smallest test error met during training, which selects an iterate by
# looking at the answer; we show that figure beside ours, and it differs little here because
# Gauss-Newton converges in a few steps.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import numpy as np

from icml25 import book
from icml25.book.tables import markdown_table
from icml25.kernel_pde import (
    allen_cahn,
    burgers,
    eikonal,
    nonlinear_elliptic,
    solve_collocation,
    solve_daks,
    solve_fd,
    solve_sks,
)

SIZES = {
    "quick": dict(
        # (grid, length scale): the official elliptic configurations, cut short
        sks=((18, 0.2), (25, 0.1), (35, 0.1)),
        ours=(8, 16, 24, 32),
        daks=(8, 12, 18, 25),
        elliptic_adam=((18, 0.2),),
        elliptic_adam_steps=2000,
        fd=(16, 32, 64),
        ac_a=6.0,
        ac_sks=(36,),
        ac_ours=(24, 36, 49),
        ac_daks=(36,),
        ac15_ours=(64, 80),
        fd_ac=(32, 64, 128),
        burgers=((42, 14),),
        adam_steps=1000,
        repeats=1,
        adam_fast_steps=2000,
        eik_sks=(12, 16),
        eik_ours=(8, 16, 24),
        eik_daks=(8, 12),
    ),
    "book": dict(
        sks=((18, 0.2), (25, 0.1), (35, 0.1), (49, 0.1)),
        ours=(8, 12, 16, 24, 32, 48, 64, 96, 128, 160, 192),
        daks=(8, 12, 18, 25, 30, 35, 42),
        elliptic_adam=((25, 0.1), (35, 0.1)),
        elliptic_adam_steps=10000,
        fd=(16, 32, 64, 128, 256),
        ac_a=6.0,
        ac_sks=(24, 36, 49),
        ac_ours=(24, 36, 49, 64, 96),
        ac_daks=(24, 36),
        ac15_ours=(64, 80, 100, 128),
        fd_ac=(32, 64, 128, 256),
        burgers=((42, 14),),
        adam_steps=5000,
        repeats=3,
        adam_fast_steps=20000,
        eik_sks=(12, 16, 25),
        eik_ours=(8, 12, 16, 24, 32),
        eik_daks=(8, 12, 16),
    ),
    "paper": dict(
        sks=((18, 0.2), (25, 0.1), (35, 0.1), (49, 0.1)),
        ours=(8, 12, 16, 24, 32, 48, 64, 96, 128, 160, 192, 256),
        daks=(8, 12, 18, 25, 30, 35, 42, 49),
        elliptic_adam=((25, 0.1), (35, 0.1), (49, 0.1)),
        elliptic_adam_steps=50000,
        fd=(16, 32, 64, 128, 256, 512),
        ac_a=15.0,
        ac_sks=(64, 80),
        ac_ours=(64, 80, 100, 128, 160),
        ac_daks=(64,),
        ac15_ours=(64, 80, 100, 128, 160, 200),
        fd_ac=(32, 64, 128, 256, 512),
        burgers=((42, 14), (60, 20)),
        repeats=3,
        adam_steps=50000,
        adam_fast_steps=50000,
        eik_sks=(12, 18, 25, 35, 49),
        eik_ours=(8, 12, 16, 24, 32, 48, 64),
        eik_daks=(8, 12, 16, 24, 30),
    ),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
timed = book.measure.timed
# One colour and marker per solver, the same in every figure of the chapter.
STYLE = {
    "SKS": dict(color=book.PALETTE[0], marker="o"),
    "Newton-Kronecker": dict(color=book.PALETTE[3], marker="^"),
    "DAKS": dict(color=book.PALETTE[1], marker="s"),
    "FD": dict(color=book.PALETTE[2], marker="d"),
}


def sweep(solve, grids):
    """Solve on every grid; keep (CPU seconds, result). A grid is n or (n, ell).

    Times are the least CPU time of up to ``size.repeats`` runs (one when a run
    takes over a second), ``book.measure.timed``.
    """
    out = {}
    for grid in grids:
        n, kwargs = (
            (grid[0], dict(ell=grid[1])) if isinstance(grid, tuple) else (grid, {})
        )
        out[n] = timed(lambda: solve(n, **kwargs), repeats=size.repeats)
    return out


def errors_of(runs, field="test_error"):
    return {n: getattr(result, field) for n, (_, result) in runs.items()}


def times_of(runs):
    return {n: seconds for n, (seconds, _) in runs.items()}


# %% [markdown]
# ## 1. The elliptic benchmark: accuracy and cost in one sweep
#
# $-\Delta u+u^3=f$ on the unit square, $u^*=\sin\pi x\sin\pi y+2\sin4\pi x\sin4\pi y$, zero
# boundary values. SKS runs the official configurations: grids of 18, 25, 35 and 49 points a
# side, $\ell=0.2$ on the first and $0.1$ on the others, Gauss-Newton from $\eta=0$ for up to
# 49 steps. Ours stops once the loss no longer changes; the official code has no stopping
# rule, always takes the 49 steps, and reports the least test error over them. Run to the
# same 49 steps, our implementation ends on the authors' solution (relative difference below
# $10^{-7}$ at 18 and 25 points a side, checked against their recorded solutions by the
# book's tests); their intermediate steps differ a little, since their Gauss-Newton matrix
# linearises $u^3$ in $\eta$ rather than in $u$. The other solvers use $\ell=0.1$ and a
# nugget of $10^{-10}$, fixed for every grid. Every solve is timed (the least CPU time of up to
# three runs; one when a run takes over a second), so that one sweep gives both the error and
# the cost ({numref}`fig-10-elliptic`).

# %%
pde = nonlinear_elliptic()
elliptic = {
    "SKS": sweep(lambda n, **kw: solve_sks(pde, n, **kw), size.sks),
    "Newton-Kronecker": sweep(lambda n: solve_collocation(pde, n), size.ours),
    "DAKS": sweep(lambda n: solve_daks(pde, n), size.daks),
    "FD": sweep(lambda n: solve_fd(pde, n), size.fd),
}
elliptic_errors = {
    m: errors_of(r, "error" if m == "FD" else "test_error") for m, r in elliptic.items()
}
cost = {m: times_of(r) for m, r in elliptic.items()}

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.2)
for method in elliptic:
    ns = np.array(sorted(cost[method]))
    axes[0].loglog(
        ns**2,
        [elliptic_errors[method][n] for n in ns],
        "-",
        label=method,
        **STYLE[method],
    )
    axes[1].loglog(
        ns**2, [cost[method][n] for n in ns], "-", label=method, **STYLE[method]
    )
axes[0].set_ylabel("relative L2 error")
axes[0].set_title("error of the final iterate", fontsize=10)
axes[1].set_ylabel("CPU seconds (least of repeats)")
axes[1].set_title("CPU time of one solve", fontsize=10)
for ax in axes:
    ax.set_xlabel("collocation points N")
fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=4)
book.show_figure(fig, "fig_elliptic")

# %% [markdown]
# ```{glue:figure} fig_elliptic
# :alt: Two log-log panels against the number of collocation points. Left, relative error: the three kernel solvers fall steeply and close together, finite differences along a shallower line. Right, CPU time: the dense solver's line is the steepest and stops earliest; the paper's Gauss-Newton solver is a little less steep; our Newton-Kronecker variant and finite differences reach far larger grids.
# :name: fig-10-elliptic
#
# **The kernel solvers agree in accuracy; they differ in cost.** Relative $L^2$ error (left)
# and CPU time (right) against the number of collocation points $N=n^2$ on the nonlinear
# elliptic benchmark, for the paper's solver (SKS, its official configurations), our
# Newton-Kronecker variant, the dense Gaussian-process solver of Chen et al. (DAKS) and
# second-order finite differences (FD).
# ```

# %% tags=["nbval-check-output"]
rows = []
for n, (seconds, result) in elliptic["SKS"].items():
    rows.append(
        [
            f"{n} x {n}",
            result.newton_iterations,
            f"{result.test_error:.1e}",
            f"{result.best_test_error:.1e}",
            # the dense solver runs only on the grids it fits in its budget
            f"{elliptic_errors['DAKS'][n]:.1e}" if n in elliptic_errors["DAKS"]
            else "not run",
        ]
    )
print(
    markdown_table(
        ["grid", "GN steps", "final error", "smallest error", "DAKS error"], rows
    )
)


# %% [markdown]
# In the table, the Gauss-Newton (GN) steps and the final and smallest test errors are SKS's;
# the smallest over the steps is what the official code reports.
#
# The paper claims accuracy comparable to the dense solver. "Comparable" is read as: on every
# grid where both solvers resolve the solution (both errors below $10^{-2}$), SKS's error is
# at most 3 times the dense solver's. The
# restriction to grids where both errors are below $10^{-2}$ was added in a later revision,
# as the ledger records. A grid where SKS is the more
# accurate does not count against the claim. The convergence rate is read between the two
# official grids with the same length scale below the nugget's floor, 25 and 35 points a side:
# an observed order in $h$ above 2 beats second-order finite differences.

# %% tags=["nbval-check-output"]
def order(errs, grids):
    """Observed order in the grid spacing h = 1/(n-1): slope of log error on log h."""
    ns = np.array(grids)
    return float(-np.polyfit(np.log(ns - 1), np.log([errs[n] for n in ns]), 1)[0])


both = [
    n
    for n in elliptic_errors["SKS"]
    if n in elliptic_errors["DAKS"]
    and max(elliptic_errors["SKS"][n], elliptic_errors["DAKS"][n]) < 1e-2
]
ratios = {n: elliptic_errors["SKS"][n] / elliptic_errors["DAKS"][n] for n in both}
worst_n = max(ratios, key=ratios.get)
book.glue("acc_grids", ", ".join(str(n) for n in both))
book.glue("acc_worst", ratios[worst_n])
book.glue("acc_best", min(ratios.values()))
book.claim(
    "comparable-accuracy", ratios[worst_n],
    note=f"ours: the largest SKS error / dense error, at n = {worst_n}; grids "
    f"{', '.join(map(str, both))}; the smallest ratio is {min(ratios.values()):.2g}",
)
rate_grids = [n for n in (25, 35) if n in elliptic_errors["SKS"]]
sks_rate = (
    order(elliptic_errors["SKS"], rate_grids) if len(rate_grids) == 2 else float("nan")
)
fd_rate = order(elliptic_errors["FD"], sorted(elliptic_errors["FD"]))
ours_rate = order(
    elliptic_errors["Newton-Kronecker"],
    [n for n in elliptic_errors["Newton-Kronecker"] if 12 <= n <= 32],
)
book.glue("sks_rate", sks_rate)
book.glue("fd_rate", fd_rate)
book.glue("ours_rate", ours_rate)
book.claim(
    "convergence-rate", sks_rate,
    note=f"finite differences: order {fd_rate:.2f}; our variant {ours_rate:.1f} "
    "(n 12-32)",
)

# %% [markdown]
# Where both resolve the solution (grids {glue:text}`acc_grids`), the largest ratio of SKS's
# error to the dense solver's is {glue:text}`acc_worst:.2f` and the smallest
# {glue:text}`acc_best:.2g`: the penalised loss with its larger nugget is, if anything, the
# more accurate here. Observed orders in $h$: SKS {glue:text}`sks_rate:.1f` between its grids
# 25 and 35, our variant {glue:text}`ours_rate:.1f` over 12 to 32 points a side, finite
# differences {glue:text}`fd_rate:.2f` (their theoretical 2). Both kernel solvers then meet a
# floor set by the nugget and the conditioning of the Gaussian kernel matrix (exercise 2).
#
# ## 2. Accuracy at equal time, and how far each solver scales
#
# The paper's case is efficiency: the Kronecker structure avoids the dense Gram matrix, so
# that the solver takes many more collocation points for the same cost. What a reader wants
# from that is **accuracy at equal time**: within the CPU time the dense solver needs, does
# the paper's solver reach a lower error? We put five error-against-time fronts side by
# side ({numref}`fig-10-fronts`):
#
# * **the authors' released code**, run outside the book (their JAX module unchanged, one
#   thread; `data/reference/kernel_pde/`): it always takes 49 Gauss-Newton steps and forms
#   the dense $N\times N$ Gauss-Newton matrix by automatic differentiation. Its recorded
#   CPU times, at 35 and 49 points a side, are placed on this run's time axis by the ratio
#   of this run's dense-solver time at 35 points a side to the same solver's time on that
#   machine class, an estimate good to a factor of about 1.5 (the two were measured on
#   different days, under different loads); its errors are the least over its 49 steps;
# * **SKS with Gauss-Newton**, our implementation of the same loss and optimiser, stopping
#   once the loss no longer changes (section 1's sweep);
# * **SKS with Adam**: the same penalised loss minimised by gradient steps at a rate of
#   $10^{-3}$, every step a few Kronecker products (one run per grid gives a whole curve:
#   the error along the iterations against the CPU time spent). This is how the official
#   Allen-Cahn and Burgers code runs; it never forms an $N\times N$ matrix;
# * **our Newton-Kronecker variant** and **the dense GP solver** (section 1's sweep).
#
# The claims read the fronts at one time: the dense solver's CPU time on its largest grid.
# Two ask about the paper's solver (its penalised loss, with either of its optimisers): is
# its best error within that time lower than the dense solver's, and how many collocation
# points does it solve in that time? The pre-registered reading of "scales efficiently"
# was at least 4 times as many points. Two ask the same of our variant; the threshold of 16
# times for the variant's points was raised from 4 after an earlier version of the variant
# had been measured at 7.1 times, and the ledger records that. CPU times depend on the
# machine, so the tests that re-execute the notebook do not compare these values.

# %%
import json


def slope(by_n):
    """Growth exponent of the time in N = n^2, fitted on the larger half of grids."""
    ns = np.array(sorted(by_n))[len(by_n) // 2 :]
    return book.measure.loglog_slope(ns**2, [by_n[n] for n in ns])


def best_within(points, limit):
    """Least error among (seconds, error) points reached within `limit` seconds."""
    errs = [e for t, e in points if t <= limit]
    return min(errs) if errs else float("nan")


def time_to(points, level):
    r"""CPU seconds a method takes to reach test error `level`, read continuously.

    Along the front $e^*(t) = \min_{t_i \le t} e_i$ of its (seconds, error)
    points, the first point at or below the level is $(t_j, e^*_j)$; between it
    and the point before, $\log e^*$ is read linear in $\log t$ (a power law on
    that stretch), so the time moves with every measured time, where "within the
    budget or not" moves only when a time crosses it. Infinite if the method never
    reaches the level.
    """
    pts = sorted(points)
    t = np.array([p[0] for p in pts], float)
    front = np.minimum.accumulate(np.array([p[1] for p in pts], float))
    reached = np.flatnonzero(front <= level)
    if reached.size == 0:
        return float("inf")
    j = int(reached[0])
    if j == 0 or t[j - 1] <= 0:
        return float(t[j])
    w = np.log(level / front[j - 1]) / np.log(front[j] / front[j - 1])
    return float(t[j - 1] * (t[j] / t[j - 1]) ** w)


adam_runs = {
    n: solve_sks(
        pde, n, ell=ell, optimizer="adam", lr=1e-3,
        iterations=size.elliptic_adam_steps,
        track_every=size.elliptic_adam_steps // 10,
    )
    for n, ell in size.elliptic_adam
}
points = {
    m: [(cost[m][n], elliptic_errors[m][n]) for n in cost[m]] for m in elliptic
}
points["SKS, Adam"] = [
    (t, e)
    for r in adam_runs.values()
    for t, (_, e) in zip(r.history_seconds, r.history)
]
# the authors' released code: errors (least over its 49 steps, RMSE on their 200 x 200
# grid, made relative) and CPU times recorded outside the book
with np.load(book.data.path("reference/kernel_pde/authors_solutions.npz")) as file:
    released = json.loads(str(file["meta"]))["configs"]
timings = json.loads(
    book.data.path("reference/kernel_pde/authors_jax.json").read_text()
)["timings"]
yardstick = json.loads(
    book.data.path("reference/kernel_pde/yardstick.json").read_text()
)
g200 = np.linspace(0, 1, 200)
rms200 = np.sqrt(np.mean(pde.solution(*np.meshgrid(g200, g200)) ** 2))
released_error = {c["grid"]: c["min_rmse"] / rms200 for c in released}
scale = cost["DAKS"].get(yardstick["grid"], np.nan) / yardstick["seconds"]
points["released code"] = [
    (t["seconds"] * scale, released_error[t["grid"]])
    for t in timings
    if np.isfinite(scale)
]

daks_largest = max(cost["DAKS"])
budget = cost["DAKS"][daks_largest]
daks_best = best_within(points["DAKS"], budget)


def points_within(method):
    """Collocation points solved in the dense solver's time, over the dense solver's:
    the grid side where the method's CPU time reaches the budget, on a log-log line
    through the two measured grids around it (past the largest grid, through the last
    two: the local growth rate carried on); and the largest measured grid within it."""
    ns = sorted(cost[method])
    fits = [n for n in ns if cost[method][n] <= budget]
    side = book.measure.loglog_crossing(ns, [cost[method][n] for n in ns], budget,
                                        extrapolate=True)
    return side**2 / daks_largest**2, (max(fits) if fits else 0)


ours_ratio, ours_within = points_within("Newton-Kronecker")
sks_ratio, sks_within = points_within("SKS")
sks_gn_best = best_within(points["SKS"], budget)
sks_adam_best = best_within(points["SKS, Adam"], budget)
sks_best = min(sks_gn_best, sks_adam_best)
ours_best = best_within(points["Newton-Kronecker"], budget)
# the same question asked of the clock: the time to reach the dense solver's least
# error, over its time; below 1 exactly when the error within the budget is lower
sks_time = min(time_to(points["SKS"], daks_best),
               time_to(points["SKS, Adam"], daks_best))
ours_time = time_to(points["Newton-Kronecker"], daks_best)
released_within = [
    t["grid"] for t in timings if np.isfinite(scale) and t["seconds"] * scale <= budget
]
turn = {  # the grid of each sweep's least error: past it, a larger grid buys nothing
    m: min(elliptic_errors[m], key=elliptic_errors[m].get) for m in elliptic
}
for method, by_n in elliptic_errors.items():
    print(
        f"{method:17s} least error {min(by_n.values()):.1e} at n = {turn[method]};"
        f" within {budget:.2f} s: {best_within(points[method], budget):.1e}"
    )
print(f"SKS, Adam         within {budget:.2f} s: {sks_adam_best:.1e}")
print(
    "released code     "
    + ", ".join(f"n = {t['grid']}: {t['seconds'] * scale:.1f} s" for t in timings)
)
print(
    f"  on this run's time axis (x{scale:.2f}); grids within the budget: "
    + (", ".join(map(str, released_within)) or "none")
)

# %% tags=["nbval-check-output"]
# The claims, in their own cell: the lines above print times, which differ run to run.
book.glue("daks_largest", daks_largest)
book.glue("daks_seconds", budget)
book.glue("daks_best", daks_best)
book.glue("ours_within", ours_within)
book.glue("ours_ratio", ours_ratio)
book.glue("sks_within", sks_within)
book.glue("sks_ratio", sks_ratio)
book.glue("sks_gn_best", sks_gn_best)
book.glue("sks_adam_best", sks_adam_best)
book.glue("ours_best", ours_best)
book.glue("ours_turn", turn["Newton-Kronecker"])
book.glue("released_35", timings[0]["seconds"] * scale)
book.glue("released_35_error", released_error[timings[0]["grid"]])
book.glue("adam_largest", max(adam_runs))
book.glue("adam_final", adam_runs[max(adam_runs)].test_error)
book.glue("adam_steps", size.elliptic_adam_steps)
for method, key in (
    ("DAKS", "daks"),
    ("SKS", "sks"),
    ("Newton-Kronecker", "ours"),
    ("FD", "fd"),
):
    book.glue(f"slope_{key}", slope(cost[method]))
book.claim(
    "larger-grids", sks_ratio,
    shown={"grid within the time": sks_within, "dense grid": daks_largest,
           "budget s": budget},
    note="the paper's solver (Gauss-Newton, our implementation): the grid where its "
    "time reaches the dense solver's, on a log-log line through its measured grids, "
    f"squared, over ${daks_largest}^2$ (largest grid measured within: "
    f"${sks_within}^2$); "
    "the released code: "
    + (", ".join(f"${n}^2$" for n in released_within) or "none of its recorded grids"),
)
book.claim(
    "larger-grids-variant", ours_ratio,
    shown={"grid within the time": ours_within, "dense grid": daks_largest},
    note="ours: ratio of collocation points at equal CPU time, the grid read off a "
    "log-log line through the measured grids; its error is least at n = "
    f"{turn['Newton-Kronecker']}",
)
book.claim(
    "equal-time-accuracy", sks_time / budget,
    shown={"error ratio": sks_best / daks_best, "SKS Gauss-Newton": sks_gn_best,
           "SKS Adam": sks_adam_best, "dense GP": daks_best, "budget s": budget},
    note="CPU time the paper's solver takes to reach the dense solver's least error, "
    "read off a log-log line along its error front, over the dense solver's time on "
    "its largest grid; the ratio of the least errors within that time is shown",
)
book.claim(
    "equal-time-accuracy-variant", ours_time / budget,
    shown={"error ratio": ours_best / daks_best, "Newton-Kronecker": ours_best,
           "dense GP": daks_best, "budget s": budget},
    note="read as equal-time-accuracy",
)

# %% tags=["hide-input", "remove-output"]
FRONT_STYLE = {
    "released code": dict(color=book.PALETTE[0], marker="x", ls=":"),
    "SKS": dict(color=book.PALETTE[0], marker="o", ls="-"),
    "SKS, Adam": dict(color=book.PALETTE[4], marker="", ls="-"),
    "Newton-Kronecker": dict(STYLE["Newton-Kronecker"], ls="-"),
    "DAKS": dict(STYLE["DAKS"], ls="-"),
}
LABEL = {"SKS": "SKS, Gauss-Newton", "released code": "released code (scaled time)"}
fig, ax = book.figure(height=3.4)
for method, style in FRONT_STYLE.items():
    if not points[method]:
        continue
    if method == "SKS, Adam":
        for n, r in adam_runs.items():
            errs = [e for _, e in r.history]
            ax.loglog(
                r.history_seconds, errs, lw=1, label=f"SKS, Adam (n = {n})",
                color=style["color"], alpha=1.0 if n == max(adam_runs) else 0.6,
            )
        continue
    t, e = zip(*sorted(points[method]))
    ax.loglog(t, e, label=LABEL.get(method, method), ms=4, **style)
ax.axvline(budget, color="grey", ls=":", lw=1)
ax.set_xlabel("CPU seconds")
ax.set_ylabel("relative L2 error")
ax.legend(fontsize=7, ncol=2)
book.show_figure(fig, "fig_fronts")

# %% [markdown]
# ```{glue:figure} fig_fronts
# :alt: Log-log plot of relative error against CPU seconds on the elliptic benchmark. The dense GP solver and the paper's solver with Gauss-Newton fall steeply over similar times; our Newton-Kronecker variant reaches low errors in a fraction of the time and then its error rises again on larger grids; the Adam curves of the paper's loss fall slowly and stay far above; the authors' released code, placed on this time axis, sits to the right of the dense solver. A dotted vertical line marks the dense solver's time on its largest grid.
# :name: fig-10-fronts
#
# **Accuracy at equal time.** Relative $L^2$ test error against CPU time on the nonlinear
# elliptic benchmark: one point per grid for the sweeps, one curve per grid for Adam (the
# error along its iterations), and the authors' released code at its two timed grids,
# placed on this run's time axis through the dense solver's time (an estimate). Dotted
# line: the dense solver's time on its largest grid, where the claims read the fronts.
# ```
#
# The dense solver needs {glue:text}`daks_seconds:.1f` s for {glue:text}`daks_largest`
# points a side, for an error of {glue:text}`daks_best:.1e`. Within that time:
#
# * the paper's solver with Gauss-Newton, our implementation, solves grids up to
#   {glue:text}`sks_within` points a side, with an error of {glue:text}`sks_gn_best:.1e`;
#   read off a log-log line through its measured times (past its largest grid, at the
#   growth rate of the last two), it reaches the dense solver's time at
#   {glue:text}`sks_ratio:.1f` times as many points. Its Gauss-Newton step forms and factorises
#   an $N\times N$ matrix, so its time grows like the dense solver's (fitted exponents in $N$
#   over the larger grids: SKS {glue:text}`slope_sks:.2f`, dense GP
#   {glue:text}`slope_daks:.2f`), with a smaller constant;
# * the authors' released code takes about {glue:text}`released_35:.0f` s on this run's
#   axis for its 35-point grid (error {glue:text}`released_35_error:.1e`, the least over its
#   steps): it always takes 49 steps where ours stops after a handful, and it builds the
#   Gauss-Newton matrix by automatic differentiation of the whole loss;
# * the same penalised loss by Adam, matrix-free, reaches only
#   {glue:text}`sks_adam_best:.1e`: its steps are cheap but it needs tens of thousands of
#   them (after {glue:text}`adam_steps` steps on {glue:text}`adam_largest` points a side it
#   is at {glue:text}`adam_final:.1e`);
# * our Newton-Kronecker variant solves {glue:text}`ours_within` points a side within
#   the time, and would reach it at {glue:text}`ours_ratio:.0f` times as many points
#   (read off a log-log line through its measured grids), and reaches
#   {glue:text}`ours_best:.1e`; but its error is least at {glue:text}`ours_turn` points a
#   side and rises beyond, so the extra points buy no accuracy (exercise 2: the nugget's
#   floor). Its time grows with exponent {glue:text}`slope_ours:.2f`, finite differences'
#   with {glue:text}`slope_fd:.2f`.
#
# So the paper's loss is accurate, and at equal time its Gauss-Newton form competes with
# the dense solver on accuracy; what the Kronecker structure promises for scale needs a
# solver that stays matrix-free *and* converges in few steps, which neither of the
# official optimisers is on this benchmark.
#
# ## 3. Allen-Cahn
#
# The paper's equation, $\Delta u+u^3-u=f$ with
# $u^*=\sin(2\pi ax)\cos(2\pi ay)+\sin2\pi x\cos2\pi y$ and its values on the boundary. The
# paper uses $a=15$ and $20$ on grids of $80^2$ to $200^2$ with Adam for up to 500,000 steps.
# In book mode all four solvers run at $a=6$, where grids of a few dozen points a side resolve
# the solution and the Gauss-Newton matrix stays small; our variant and finite differences also
# run at the paper's $a=15$. Paper mode runs every solver at $a=15$. SKS uses the official
# Allen-Cahn nugget $5\times10^{-6}$; all kernel solvers use $\ell=0.05$ at $a=6$ (a tenth of a
# wavelength of the fast mode) and $\ell=0.02$ at $a=15$.

# %%
a = size.ac_a
ell_ac = 0.05 if a < 10 else 0.02
ac = allen_cahn(a)
AC_NEWTON = 4  # a converged solve needs 3 or 4 steps here
ac_runs = {
    "SKS": sweep(lambda n: solve_sks(ac, n, ell=ell_ac, nugget=5e-6), size.ac_sks),
    # at most AC_NEWTON Newton steps: where our variant stalls (below), it stays stalled
    "Newton-Kronecker": sweep(
        lambda n: solve_collocation(ac, n, ell=ell_ac, max_iter=AC_NEWTON), size.ac_ours
    ),
    "DAKS": sweep(lambda n: solve_daks(ac, n, ell=ell_ac), size.ac_daks),
    "FD": sweep(lambda n: solve_fd(ac, n), size.fd_ac),
}
ac_errors = {
    m: errors_of(r, "error" if m == "FD" else "test_error") for m, r in ac_runs.items()
}
ac15 = allen_cahn(15.0)
ac15_runs = {
    "Newton-Kronecker": sweep(
        lambda n: solve_collocation(ac15, n, ell=0.02), size.ac15_ours
    ),
    "FD": sweep(lambda n: solve_fd(ac15, n), size.fd_ac[1:]),
}
ac15_errors = {
    m: errors_of(r, "error" if m == "FD" else "test_error")
    for m, r in ac15_runs.items()
}

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.1, sharey=True)
for ax, errs, title in (
    (axes[0], ac_errors, f"a = {a:g}"),
    (axes[1], ac15_errors, "a = 15"),
):
    for method, by_n in errs.items():
        ns = np.array(sorted(by_n))
        ax.loglog(ns**2, [by_n[n] for n in ns], "-", label=method, **STYLE[method])
    ax.set_title(f"Allen-Cahn, {title}", fontsize=10)
    ax.set_xlabel("collocation points N")
axes[0].set_ylabel("relative L2 error")
fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=4)
book.show_figure(fig, "fig_allen_cahn")

# %% [markdown]
# ```{glue:figure} fig_allen_cahn
# :alt: Two log-log panels of relative error against collocation points for the Allen-Cahn equation. Left, at the book's frequency, the three kernel solvers fall together, steeper than finite differences. Right, at the paper's frequency 15, our variant falls from about 1e-2 to below 1e-3 as the grid refines; finite differences stay far above it.
# :name: fig-10-allen-cahn
#
# **At the paper's frequency the kernel collocation resolves the solution on grids of about a
# hundred points a side.** Relative $L^2$ error against the number of collocation points on the
# Allen-Cahn equation, at the book's frequency with all four solvers (left) and at the paper's
# $a=15$ with our Newton-Kronecker variant and finite differences (right; paper mode adds the
# other two).
# ```

# %%
# The errors printed here, the claim below in its own cell: an error's second digit may
# move with the last bits of a kernel, the claim's value only within its tolerance.
for label, errs in ((f"a = {a:g}", ac_errors), ("a = 15", ac15_errors)):
    print(f"Allen-Cahn, {label}")
    for method, by_n in errs.items():
        print(
            f"  {method:17s}", " ".join(f"{n}:{e:.1e}" for n, e in sorted(by_n.items()))
        )
stall_n = max(ac_errors["Newton-Kronecker"])
stall = ac_runs["Newton-Kronecker"][stall_n][1]
print(
    f"our variant on {stall_n} x {stall_n}: {stall.newton_iterations} Newton steps;\n"
    f"  error at the nodes {stall.error:.1e}, between them {stall.test_error:.1e}"
)

# %% tags=["nbval-check-output"]
ac_common = [
    n
    for n in ac_errors["SKS"]
    if n in ac_errors["DAKS"] and max(ac_errors["SKS"][n], ac_errors["DAKS"][n]) < 1e-2
]
ac_ratio = max(
    (ac_errors["SKS"][n] / ac_errors["DAKS"][n] for n in ac_common), default=np.nan
)
book.glue("ac_a_text", f"{a:g}")
book.glue("stall_n", stall_n)
book.glue("stall_steps", stall.newton_iterations)
book.glue("stall_residual", stall.residual_norm)
book.glue("stall_nodes", stall.error)
book.glue("stall_test", stall.test_error)
ac15_finest = max(ac15_errors["Newton-Kronecker"])
book.glue("ac_ratio", ac_ratio)
book.glue("ac_common", ", ".join(map(str, ac_common)) or "none")
book.glue("ac15_finest", ac15_finest)
book.glue("ac15_error", ac15_errors["Newton-Kronecker"][ac15_finest])
book.glue("ac15_seconds", times_of(ac15_runs["Newton-Kronecker"])[ac15_finest])
book.glue("ac15_fd", ac15_errors["FD"][max(ac15_errors["FD"])])
book.glue("ac15_fd_n", max(ac15_errors["FD"]))
if ac_common:
    book.claim(
        "comparable-accuracy-allen-cahn", ac_ratio,
        note=f"ours: a = {a:g} in this mode (grids {', '.join(map(str, ac_common))}); "
        "the paper's a = 15 needs grids the Gauss-Newton matrix cannot take in book "
        "mode",
    )
else:  # e.g. paper mode at a = 15: the dense solver's grids stop before 1e-2 is reached
    print(
        f"Not measured at a = {a:g}: no grid on which both SKS and the dense solver "
        "are below 1e-2\n(the comparison is only meaningful where both have converged)."
    )

# %% [markdown]
# At $a={glue:text}`ac_a_text`$ the largest ratio of SKS's error to the dense solver's on the
# common grids ({glue:text}`ac_common`) is {glue:text}`ac_ratio:.2f`. At the paper's $a=15$,
# our variant reaches {glue:text}`ac15_error:.1e` on {glue:text}`ac15_finest` points a side in
# {glue:text}`ac15_seconds:.2f` s; finite differences are at {glue:text}`ac15_fd:.1e` on
# {glue:text}`ac15_fd_n` points a side. The follow-up paper of the same group reports, for SKS
# at $a=15$, a relative error of about $10^{-4}$ on an $80^2$ grid, with far more iterations
# than a book run affords.
#
# Our variant has a weakness that the penalised loss does not have. The linearised Allen-Cahn
# operator $\Delta+3u^2-1$ is indefinite, and when the length scale is long compared with the
# grid spacing, many of the kernel's interior differentiation modes are nugget-dominated and
# close to null: exact collocation leaves them nearly unconstrained. On the finest grid of the
# left panel ({glue:text}`stall_n` points a side, $\ell=0.05$) Newton's method took
# {glue:text}`stall_steps` steps, its cap here, to a residual of
# {glue:text}`stall_residual:.1e` (a converged solve needs 3 or 4 and reaches $10^{-10}$); the error is
# {glue:text}`stall_nodes:.1e` at the nodes but {glue:text}`stall_test:.1e` between them, where
# those modes show. The prior term $\tfrac12\eta^\top\tilde K^{-1}\eta$ of the paper's loss
# penalises exactly those modes.
#
# ## 4. Burgers' equation
#
# $u_t+uu_x=\nu u_{xx}$ on $x\in[-1,1]$, $t\in[0,1]$, $u(x,0)=-\sin\pi x$, $u(\pm1,t)=0$, with
# $\nu=0.02$: a shock forms at $x=0$ near $t=1/\pi$. The reference is the exact solution by the
# Cole-Hopf transform (`burgers_reference`, by quadrature). The grid is the official code's
# smallest Burgers configuration, 42 points in $x$ by 14 in $t$ with $\ell_x=0.05$,
# $\ell_t=0.3$ and a nugget of $10^{-8}$, in the whitened parametrisation
# $\eta=(L_x\otimes L_t)\,\mathrm{vec}A$ that the official code uses. Three optimisers of the
# same loss: the official schedule (Adam, 800 steps on the boundary data alone at a rate of
# $10^{-3}$, then the full loss at $10^{-4}$) cut to the book's budget, Adam at $10^{-3}$
# throughout, and Gauss-Newton. The official code also learns the penalty weights and runs
# 50,000 to 300,000 steps; we keep the weights fixed, at $v=10^{15}$, $\tau=10^{22}$ for Adam as
# in the official code, and $v=10^4$, $\tau=10^{12}$ for Gauss-Newton, whose full steps diverge
# with the larger weights (the loss's minimiser barely moves between the two settings).

# %%
nu = 0.02
bur = burgers(nu)
burgers_rows = {}
for nx, nt in size.burgers:
    common = dict(ell=(0.05 * 42 / nx, 0.3 * 14 / nt), nugget=1e-8, whiten=True)
    adam = dict(
        optimizer="adam",
        lr=1e-3,
        warmup=800,
        v=1e15,
        tau=1e22,
        track_every=1000,
        **common,
    )
    burgers_rows[(nx, nt)] = {
        "Adam, official schedule": timed(
            lambda: solve_sks(
                bur, (nx, nt), iterations=size.adam_steps, lr_after_warmup=1e-4, **adam
            ),
            repeats=1,
        ),
        "Adam, rate 1e-3": timed(
            lambda: solve_sks(bur, (nx, nt), iterations=size.adam_fast_steps, **adam),
            repeats=1,
        ),
        "Gauss-Newton": timed(lambda: solve_sks(bur, (nx, nt), **common), repeats=1),
    }

# %%
rows = []
for (nx, nt), runs in burgers_rows.items():
    for name, (seconds, result) in runs.items():
        rows.append(
            [
                f"{nx} x {nt}",
                name,
                result.newton_iterations,
                f"{result.test_error:.1e}",
                f"{result.best_test_error:.1e}",
            ]
        )
print(
    markdown_table(
        ["grid", "optimiser", "steps", "final error", "smallest error"], rows
    )
)

# %% tags=["nbval-check-output"]
grid0 = size.burgers[0]
gn = burgers_rows[grid0]["Gauss-Newton"]
fast = burgers_rows[grid0]["Adam, rate 1e-3"]
official = burgers_rows[grid0]["Adam, official schedule"]
book.glue("bur_gn", gn[1].test_error)
book.glue("bur_gn_steps", gn[1].newton_iterations)
book.glue("bur_fast", fast[1].test_error)
book.glue("bur_fast_steps", fast[1].newton_iterations)
book.glue("bur_official", official[1].test_error)
book.glue("bur_official_steps", official[1].newton_iterations)
book.glue("bur_speed", fast[0] / gn[0])
book.claim(
    "burgers-optimisers-agree", abs(fast[1].test_error / gn[1].test_error - 1),
    note=f"Gauss-Newton {gn[1].test_error:.2e} in {gn[1].newton_iterations} steps, "
    "Adam "
    f"{fast[1].test_error:.2e} in {fast[1].newton_iterations}",
)

# %% tags=["hide-input", "remove-output"]
nx, nt = grid0
result = gn[1]
xs = np.linspace(-1, 1, 201)
fig, axes = book.figure(2, height=3.0)
for t_index, colour in zip((0, nt // 2, nt - 1), book.PALETTE[:3]):
    t = bur.axes((nx, nt))[1][t_index]
    axes[0].plot(
        xs,
        bur.solution(xs, np.full_like(xs, t)),
        color=colour,
        lw=1.5,
        label=f"t = {t:.2f}",
    )
    axes[0].plot(bur.axes((nx, nt))[0], result.u[:, t_index], "o", color=colour, ms=3)
axes[0].set_xlabel("x")
axes[0].set_ylabel("u")
axes[0].legend(fontsize=8)
axes[0].set_title("exact (lines), SKS at the nodes (dots)", fontsize=10)
for name, (_, res) in burgers_rows[grid0].items():
    steps, errs = zip(*res.history)
    axes[1].loglog(steps, errs, "-o", ms=3, label=name)
axes[1].set_xlabel("optimiser step")
axes[1].set_ylabel("test error")
axes[1].set_title("test error during optimisation", fontsize=10)
axes[1].legend(fontsize=8)
book.show_figure(fig, "fig_burgers")

# %% [markdown]
# ```{glue:figure} fig_burgers
# :alt: Left, Burgers' solution against x at three times, exact curves and SKS's nodal values as dots, the profile steepening into a shock at x = 0. Right, test error against optimiser step on log axes: Gauss-Newton reaches its final error within a few steps, Adam at rate 1e-3 approaches it over thousands of steps, Adam on the official schedule is still far above it at the end of the book's budget.
# :name: fig-10-burgers
#
# **Gauss-Newton reaches in a few steps the error that Adam approaches over thousands.**
# Burgers' equation with $\nu=0.02$ on the official code's smallest grid: the exact solution
# and the SKS solution at three times (left), and the test error during optimisation for the
# three optimisers of the same penalised loss (right).
# ```
#
# Gauss-Newton ends at a test error of {glue:text}`bur_gn:.2e` after
# {glue:text}`bur_gn_steps` steps; Adam at a rate of $10^{-3}$ at {glue:text}`bur_fast:.2e` after
# {glue:text}`bur_fast_steps` steps and {glue:text}`bur_speed:.0f` times the time; Adam on the
# official schedule, cut to {glue:text}`bur_official_steps` steps, is still at
# {glue:text}`bur_official:.2e`: at a rate of $10^{-4}$ it needs the official code's tens of
# thousands of steps. The error at this grid is set by the grid and the length scales, not by
# the optimiser: the shock, about $\nu$ wide, falls between nodes $0.05$ apart. Finer grids (the
# official code goes to $600\times200$) and $\nu=0.001$ are for paper mode and beyond.
#
# ## 5. A regularised Eikonal equation
#
# $|\nabla u|^2-\epsilon\Delta u=f$ with $\epsilon=0.1$ and a manufactured solution
# $u^*=\sin\pi x\sin\pi y$ (the paper uses $f=1$ and a Cole-Hopf reference). First derivatives
# enter the operator: the dense solver adds two gradient functionals per interior node, SKS one
# more pair of one-dimensional matrices.

# %%
eik = eikonal(0.1)
eik_runs = {
    "SKS": sweep(lambda n: solve_sks(eik, n), size.eik_sks),
    "Newton-Kronecker": sweep(lambda n: solve_collocation(eik, n), size.eik_ours),
    "DAKS": sweep(lambda n: solve_daks(eik, n), size.eik_daks),
    "FD": sweep(lambda n: solve_fd(eik, n), (16, 32, 64, 128)),
}
eik_errors = {
    m: errors_of(r, "error" if m == "FD" else "test_error") for m, r in eik_runs.items()
}

# %% tags=["nbval-check-output"]
for method, by_n in eik_errors.items():
    print(f"{method:17s}", " ".join(f"{n}:{e:.1e}" for n, e in sorted(by_n.items())))
eik_daks_n = max(eik_errors["DAKS"])
book.glue("eik_daks_n", eik_daks_n)
book.glue("eik_daks_s", times_of(eik_runs["DAKS"])[eik_daks_n])
eik_sks_n = max(n for n in eik_errors["SKS"] if n <= eik_daks_n + 1)
book.glue("eik_sks_n", eik_sks_n)
book.glue("eik_sks", eik_errors["SKS"][eik_sks_n])
eik_ours_n = max(eik_errors["Newton-Kronecker"])
book.glue("eik_ours", eik_errors["Newton-Kronecker"][eik_ours_n])
book.glue("eik_ours_n", eik_ours_n)
book.glue("eik_sks_coarse_n", min(eik_errors["SKS"]))
book.glue("eik_sks_coarse", eik_errors["SKS"][min(eik_errors["SKS"])])
book.glue("eik_daks", eik_errors["DAKS"][eik_daks_n])

# %% [markdown]
# The dense solver's Gram matrix now has four blocks per interior node: on
# {glue:text}`eik_daks_n` points a side it takes {glue:text}`eik_daks_s:.1f` s, for an error of
# {glue:text}`eik_daks:.1e`. On {glue:text}`eik_sks_n` points a side SKS's error is
# {glue:text}`eik_sks:.1e`, and our variant reaches {glue:text}`eik_ours:.1e` on
# {glue:text}`eik_ours_n`. On its coarsest grid, {glue:text}`eik_sks_coarse_n` points a side,
# SKS's Gauss-Newton ends far from the solution (error {glue:text}`eik_sks_coarse:.2f`); the
# gradient term $|\nabla u|^2$ vanishes at the starting point $\eta=0$, and we have not looked
# further into which stationary point it finds there.
#
# ## What differs from the paper, and why
#
# * **Optimiser.** SKS minimises the paper's penalised loss with the official code's weights,
#   nugget and length scales; for the elliptic equation by Gauss-Newton as the paper does, for
#   Burgers by Gauss-Newton beside Adam (the paper's), which reaches the same minimum in far
#   fewer steps. The official code learns Burgers' penalty weights; ours are fixed.
# * **Error protocol.** Final iterate, on a $60\times60$ test grid, relative $L^2$ (the official
#   code prints a root-mean-square error, labelled "MSE", on a $200\times200$ grid, and keeps
#   the smallest over training: for the elliptic equation, over all 49 Gauss-Newton steps,
#   which it always takes).
# * **Precision.** Float64 throughout, as in the official code: its double-precision switch
#   is commented out, but its tensor library's JAX backend turns it on.
# * **Benchmarks and scale.** The elliptic grids are the official ones. Allen-Cahn runs at
#   $a=6$ for all solvers in book mode, at the paper's $a=15$ for our variant and finite
#   differences (paper mode: every solver at $a=15$); Burgers at $\nu=0.02$ on the smallest
#   official grid only; the Eikonal equation with a manufactured solution instead of the
#   paper's constant right-hand side with a Cole-Hopf reference.
# * **Our variant.** Newton-Kronecker solves the collocation equations exactly and never forms
#   an $N\times N$ matrix; it is ours, not the paper's, and it is what reaches the large grids
#   in section 2 (its claims there are labelled as ours).
#
# ## Exercises
#
# ```{exercise} Error against time
# :label: ex-pde-pareto
#
# **Level:** easy · **Time:** about 15 minutes.
#
# Plot, for the elliptic benchmark, the error of each solver against its CPU time. Which solver
# reaches an error of $10^{-4}$ first?
# ```
#
# ```{solution-start} ex-pde-pareto
# :class: dropdown
# ```
#
# Section 1's sweep already pairs every grid's error with its time; read off, per solver, the
# first grid whose error is below $10^{-4}$. Where finite differences do not get there, their
# fitted order in $h$ says how fine a grid they would need.

# %%
TARGET = 1e-4
fig, ax = book.figure(height=3.2)
first_hit = {}
for method in elliptic:
    ns = sorted(cost[method])
    errs = [elliptic_errors[method][n] for n in ns]
    ax.loglog([cost[method][n] for n in ns], errs, "-", label=method, **STYLE[method])
    first_hit[method] = next((n for n, e in zip(ns, errs) if e <= TARGET), None)
ax.axhline(TARGET, color="grey", ls=":", lw=1)
ax.set_xlabel("CPU time of one solve (s)")
ax.set_ylabel("relative L2 error")
ax.legend(fontsize=8)
book.glue("fig_ex_pareto", fig)  # placed, captioned, below

reached = {m: n for m, n in first_hit.items() if n is not None}
winner = min(reached, key=lambda m: cost[m][reached[m]]) if reached else "none"
for method, n_hit in first_hit.items():
    print(
        f"{method:17s} first grid with error <= 1e-4:",
        (
            f"{n_hit} x {n_hit} in {cost[method][n_hit]:.3f} s"
            if n_hit
            else "none of the grids"
        ),
    )
fd_largest = max(elliptic_errors["FD"])
fd_needed = 1 + (fd_largest - 1) * (elliptic_errors["FD"][fd_largest] / TARGET) ** (
    1 / fd_rate
)
print(
    f"FD, at its fitted order {fd_rate:.2f}, would need about {fd_needed:.0f} points "
    "a side"
)
book.glue(ex_pareto_winner=winner, ex_pareto_fd_n=fd_needed)

# %% [markdown]
# ```{glue:figure} fig_ex_pareto
# :alt: Error against CPU time of one solve, log-log, for the four solvers on the nonlinear elliptic problem, with a dotted line at the error 1e-4.
# :name: fig-10-ex-pareto
#
# **Error against cost, per solver.** Each curve joins the grids of section 1's sweep; the
# dotted line is the target error $10^{-4}$.
# ```
#
# In this run, the first solver to reach $10^{-4}$ is: {glue:text}`ex_pareto_winner`. The
# kernel solvers get there on grids of similar size, so the one that is cheaper per grid wins,
# and the dense solver's cost grows as $N^3$. Finite differences converge at order
# {glue:text}`fd_rate:.2f` in $h$ and would need about {glue:text}`ex_pareto_fd_n:.0f` points a
# side. The answer depends on the machine only through the time axis; which grid each solver
# needs does not.
#
# ```{solution-end}
# ```
#
# ```{exercise} The nugget floor
# :label: ex-pde-nugget
#
# **Level:** medium · **Time:** about 25 minutes.
#
# Repeat section 1 for our Newton-Kronecker variant with nuggets $10^{-8}$, $10^{-10}$ and
# $10^{-12}$. Where does the error curve flatten in each case, and what limits how small the
# nugget can be?
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

nugget_grids = [n for n in size.ours if n <= 64]
nugget_errors = {1e-8: {}, 1e-10: elliptic_errors["Newton-Kronecker"], 1e-12: {}}
for nug in (1e-8, 1e-12):
    nugget_errors[nug] = {
        n: solve_collocation(pde, n, nugget=nug).test_error for n in nugget_grids
    }
print("nugget  " + " ".join(f"{n:>8d}" for n in nugget_grids))
for nug, errs in nugget_errors.items():
    print(f"{nug:6.0e}  " + " ".join(f"{errs[n]:8.1e}" for n in nugget_grids))
print("\nbare K_1 (no nugget): smallest computed eigenvalue, Cholesky possible?")
bare = {}
for n in nugget_grids:
    K_bare = gaussian_kernel_1d(uniform_grid(n), uniform_grid(n), 0.1)
    try:
        sla.cho_factor(K_bare)
        factorises = "yes"
    except np.linalg.LinAlgError:
        factorises = "no"
    bare[n] = np.linalg.eigvalsh(K_bare).min()
    print(f"  n = {n:3d}: {bare[n]:+.1e}  {factorises}")
finest = max(nugget_grids)
for nug, label in ((1e-8, "8"), (1e-10, "10"), (1e-12, "12")):
    book.glue(f"ex_nugget_floor_{label}", nugget_errors[nug][finest])
floors = [nugget_errors[nug][finest] for nug in (1e-8, 1e-10, 1e-12)]
book.glue(ex_nugget_gain_1=floors[0] / floors[1],
          ex_nugget_gain_2=floors[1] / floors[2], ex_nugget_min_eig=bare[finest],
          ex_nugget_finest=finest)

# %% [markdown]
# On the coarse grids the three curves coincide: there the error is the discretisation's,
# and the nugget is far below everything. They part where the kernel matrix becomes
# numerically singular, and each flattens at its own floor: on the
# {glue:text}`ex_nugget_finest`-point grid the error is
# {glue:text}`ex_nugget_floor_8:.1e`, {glue:text}`ex_nugget_floor_10:.1e` and
# {glue:text}`ex_nugget_floor_12:.1e` for nuggets $10^{-8}$, $10^{-10}$ and $10^{-12}$: the
# two hundredfold steps divide the error by {glue:text}`ex_nugget_gain_1:.2g` and
# {glue:text}`ex_nugget_gain_2:.2g` (below 1: the smaller nugget did worse), nowhere near a
# hundred each. The nugget cannot go to zero: the
# smallest eigenvalue that double precision computes for the bare $K_1$ shrinks towards
# rounding level as the grid refines (on the finest grid, {glue:text}`ex_nugget_min_eig:.1e`;
# a negative value is pure rounding, since the true matrix is positive definite), and once it
# is negative the Cholesky factorisation of the bare matrix fails. A nugget has to stay well
# above that rounding level; as it approaches it, the differentiation matrices lose digits.
# The paper's code uses a far larger nugget, $10^{-6}$, and its penalised loss turns the nugget
# into a regulariser rather than a numerical patch.
#
# ```{solution-end}
# ```
#
# ```{exercise} Preconditioning
# :label: ex-pde-precond
#
# **Level:** hard · **Time:** about 40 minutes.
#
# Our variant preconditions GMRES with the exact inverse of the constant-coefficient part of
# the Newton matrix: the Laplacian plus the *mean* of the reaction coefficient
# $\partial R/\partial u$. Count the GMRES iterations for the elliptic and the Allen-Cahn
# problems. The Allen-Cahn coefficient $3u^2-1$ changes sign over the domain, and its
# Laplacian enters with the other sign; does the preconditioner work less well for it?
# ```
#
# ```{solution-start} ex-pde-precond
# :class: dropdown
# ```
#
# `solve_collocation` does not report its GMRES iterations, so the code rebuilds one Newton
# system, the one at the exact solution (where Newton's last steps are), from the library's
# differentiation matrices, and counts the iterations to a relative residual of $10^{-10}$
# with and without the preconditioner. The Laplacian's coefficient $c$ is $-1$ for the
# elliptic equation and $+1$ for Allen-Cahn.

# %%
from scipy.sparse import linalg as spla

from icml25.kernel_pde import KroneckerInterpolant


def gmres_iterations(problem, n, ell, precondition=True):
    """GMRES iterations for the Newton matrix of `problem` at its exact solution."""
    g = uniform_grid(n)
    m = n - 2
    inner = slice(1, n - 1)
    A = KroneckerInterpolant((g, g), ell).differentiation_matrix(0, 2)[inner, inner]
    Xi, Yi = np.meshgrid(g[inner], g[inner], indexing="ij")
    partials = problem.partials({"u": problem.solution(Xi, Yi)}, Xi, Yi)
    coef, c = partials["u"], partials["uxx"]  # dR/du at u*, the Laplacian's sign
    lam, V = np.linalg.eig(A)  # the same 1-D matrix on both axes
    V_inv = np.linalg.inv(V)
    denom = c * (lam[:, None] + lam[None, :]) + coef.mean()

    def newton_matrix(v):
        W = v.reshape(m, m)
        return (c * (A @ W + W @ A.T) + coef * W).ravel()

    def fast_diagonalisation(v):
        return np.real(V @ ((V_inv @ v.reshape(m, m) @ V_inv.T) / denom) @ V.T).ravel()

    op = spla.LinearOperator((m * m, m * m), matvec=newton_matrix, dtype=float)
    pre = (
        spla.LinearOperator((m * m, m * m), matvec=fast_diagonalisation, dtype=float)
        if precondition
        else None
    )
    rhs = run.rng(f"GMRES right-hand side, n = {n}").standard_normal(m * m)
    count = [0]
    spla.gmres(
        op,
        rhs,
        M=pre,
        rtol=1e-10,
        atol=0.0,
        restart=100,
        maxiter=10,
        callback=lambda _: count.__setitem__(0, count[0] + 1),
        callback_type="pr_norm",
    )
    return count[0], coef


problems = {"elliptic": (pde, 0.1), "Allen-Cahn": (allen_cahn(2.0), 0.1)}
precond_rows = {}
print(
    "problem      dR/du: min   mean    max   iterations: n=16  n=32  "
    "n=16 unpreconditioned"
)
for name, (problem, ell) in problems.items():
    it16, coef = gmres_iterations(problem, 16, ell)
    it32, _ = gmres_iterations(problem, 32, ell)
    plain16, _ = gmres_iterations(problem, 16, ell, precondition=False)
    g_fine = np.linspace(0, 1, 201)
    amplitude = np.abs(problem.solution(*np.meshgrid(g_fine, g_fine))).max()
    precond_rows[name] = (it16, it32, plain16, coef.std(), amplitude)
    print(
        f"{name:11s} {coef.min():9.2f} {coef.mean():6.2f} {coef.max():6.2f}"
        f"   {it16:15d} {it32:5d} {plain16:9d}"
    )
for name, key in (("elliptic", "ell"), ("Allen-Cahn", "ac")):
    book.glue(f"ex_pre_{key}_16", precond_rows[name][0])
    book.glue(f"ex_pre_{key}_32", precond_rows[name][1])
    book.glue(f"ex_pre_{key}_plain", precond_rows[name][2])
    book.glue(f"ex_pre_{key}_std", precond_rows[name][3])
    book.glue(f"ex_pre_{key}_amp", precond_rows[name][4])

# %% [markdown]
# With an Allen-Cahn problem at $a=2$: on the $32\times32$ grid GMRES needs
# {glue:text}`ex_pre_ell_32` iterations for the elliptic problem and {glue:text}`ex_pre_ac_32`
# for Allen-Cahn. What the preconditioner leaves out is the *variation* of the coefficient
# around its mean: for the elliptic problem, whose solution reaches
# {glue:text}`ex_pre_ell_amp:.1f` in amplitude, $3u^2$ has a standard deviation of
# {glue:text}`ex_pre_ell_std:.1f` over the nodes; for this Allen-Cahn problem, whose solution
# reaches {glue:text}`ex_pre_ac_amp:.1f`, {glue:text}`ex_pre_ac_std:.1f`. With either, the
# preconditioner cuts the iterations by a large factor (on the $16\times16$ grid from
# {glue:text}`ex_pre_ell_plain` to {glue:text}`ex_pre_ell_16` for the elliptic problem, from
# {glue:text}`ex_pre_ac_plain` to {glue:text}`ex_pre_ac_16` for Allen-Cahn). The sign of the
# Laplacian does not matter to a preconditioner that inverts it exactly; what matters is
# whether $c(\lambda_1+\lambda_2)+\overline{\partial R/\partial u}$ comes close to zero for some
# pair of eigenvalues. With the indefinite Allen-Cahn operator it can: the kernel's
# differentiation matrices have eigenvalues near zero on fine grids with a long length scale
# (section 3), and there both the preconditioner and Newton's method struggle.
#
# ```{solution-end}
# ```

# %%
book.finish()
