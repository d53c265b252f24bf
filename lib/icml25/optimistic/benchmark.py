"""Every method on every problem at equal budgets, and paired win rates."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from icml25.common.streams import as_generator, stream
from icml25.common.validation import check_int

from .counting import Result
from .learned import learned_partition
from .peers import cma_es, direct, random_search
from .problems import Problem, make_problem
from .sequool import sequool
from .subspace import principal_angle

#: The methods of :func:`benchmark`: SequOOL and the learned variants are rerun per budget
#: (their trees depend on it); the peers run once at the largest budget and are read off
#: their best-so-far traces (their runs do not depend on the budget). ``learned`` senses
#: gradients with the paper's 4 compressed-sensing directions, ``learned_fd`` with $d$
#: (forward differences, our variant), ``learned_nn`` fits the neural surrogate; all three
#: spend 20% of the budget learning and clip their points to the domain.
METHODS = ("sequool", "learned", "learned_fd", "learned_nn", "direct", "cma_es", "random")
ANYTIME = ("direct", "cma_es", "random")


@dataclass
class Benchmark:
    """Simple regrets of :func:`benchmark`.

    Attributes
    ----------
    regret : dict method -> ndarray (functions, dims, seeds, budgets)
        $f(x_n)-\\min f$ of the best point after each budget (floored at 0).
    angle : dict method -> ndarray (functions, dims, seeds, budgets)
        Largest principal angle (radians) of the learned subspace (learned methods only).
    seconds : dict method -> float
        Wall-clock seconds spent in each method, all runs together.
    evals : dict method -> int
        Evaluations made by each method, all runs together.
    """

    functions: tuple
    dims: tuple
    seeds: tuple
    budgets: tuple
    regret: dict
    angle: dict
    seconds: dict
    evals: dict
    max_evals_over_budget: int = 0


def _run(method: str, problem: Problem, budget: int, seed, assumed: int) -> Result:
    f, b = problem.f, problem.bounds
    if method == "sequool":
        return sequool(f, b, budget, vectorized=True)
    if method == "learned":
        return learned_partition(f, b, budget, active_dim=assumed, seed=seed, vectorized=True)
    if method == "learned_fd":
        return learned_partition(f, b, budget, active_dim=assumed, seed=seed, vectorized=True,
                                 directions=problem.d)
    if method == "learned_nn":
        return learned_partition(f, b, budget, active_dim=assumed, seed=seed, vectorized=True,
                                 learner="neural")
    if method == "direct":
        return direct(f, b, budget)
    if method == "cma_es":
        return cma_es(f, b, budget, seed=seed, vectorized=True)
    if method == "random":
        return random_search(f, b, budget, seed=seed, vectorized=True)
    raise ValueError(f"unknown method {method!r}; choose from {', '.join(METHODS)}")


def benchmark(functions, dims, seeds, budgets, *, methods=METHODS, active_dim: int = 2,
              assumed_dim: int | None = None) -> Benchmark:
    r"""Every method on every problem ``make_problem(name, d, seed=...)``, for each seed.

    Seeds: each seed $s$ (a non-negative int, e.g. a run's replication seed) gives, per
    function and $d$, two independent named streams (:func:`icml25.common.streams.stream`):
    ``"problem {name} d={d}"`` draws the problem, ``"search {name} d={d}"`` the methods'
    randomness. ``assumed_dim`` (default ``active_dim``) is the $m$ given to the learned
    methods, to study a wrong guess.
    """
    functions, dims, seeds = tuple(functions), tuple(dims), tuple(seeds)
    budgets = tuple(check_int(n, "budget", minimum=1) for n in budgets)
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown method {m!r}; choose from {', '.join(METHODS)}")
    assumed = (active_dim if assumed_dim is None
               else check_int(assumed_dim, "assumed_dim", minimum=1))
    shape = (len(functions), len(dims), len(seeds), len(budgets))
    regret = {m: np.full(shape, np.nan) for m in methods}
    angle = {m: np.full(shape, np.nan) for m in methods if m.startswith("learned")}
    seconds = {m: 0.0 for m in methods}
    evals = {m: 0 for m in methods}
    over = 0
    for i, name in enumerate(functions):
        for j, d in enumerate(dims):
            for k, s in enumerate(seeds):
                problem = make_problem(name, d, active_dim=active_dim,
                                       seed=stream(int(s), f"problem {name} d={d}"))
                run_problem = Problem(problem.name, problem.A, problem.x_star, problem.bounds)
                for m in methods:
                    rng_seed = stream(int(s), f"search {name} d={d}")
                    runs = [max(budgets)] if m in ANYTIME else budgets
                    for n in runs:
                        start = time.perf_counter()
                        res = _run(m, run_problem, n, rng_seed, assumed)
                        seconds[m] += time.perf_counter() - start
                        evals[m] += res.n_evals
                        over = max(over, res.n_evals - n)
                        if m in ANYTIME:
                            regret[m][i, j, k] = np.maximum(res.best_at(budgets), 0.0)
                        else:
                            b = budgets.index(n)
                            regret[m][i, j, k, b] = max(res.fun, 0.0)
                            if m in angle:
                                angle[m][i, j, k, b] = principal_angle(res.subspace,
                                                                       problem.A.T)
    return Benchmark(functions, dims, seeds, budgets, regret, angle, seconds, evals, over)


def win_rate(ours, theirs, *, floor: float = 1e-10, n_boot: int = 2000, seed=0):
    r"""Share of paired runs where ``ours`` has the lower regret, with a 95% bootstrap interval.

    Regrets below ``floor`` count as equal (both solved to floating-point precision); a tie
    counts one half. The interval resamples the pairs (each pair is an independent problem).

    Returns
    -------
    rate : float
    interval : (float, float)
    """
    a = np.maximum(np.ravel(np.asarray(ours, dtype=float)), floor)
    b = np.maximum(np.ravel(np.asarray(theirs, dtype=float)), floor)
    if a.shape != b.shape or a.size == 0:
        raise ValueError(f"ours and theirs must be non-empty and paired; got {a.shape}, "
                         f"{b.shape}")
    if np.any(np.isnan(a)) or np.any(np.isnan(b)):
        raise ValueError("regrets must not be NaN")
    score = (a < b) + 0.5 * (a == b)
    rng = as_generator(seed)
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    boot = score[rng.integers(0, score.size, (n_boot, score.size))].mean(1)
    return float(score.mean()), (float(np.quantile(boot, 0.025)),
                                 float(np.quantile(boot, 0.975)))
