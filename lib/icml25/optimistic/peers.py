"""Peers measured in the same runs: random search, SciPy's DIRECT, CMA-ES."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from icml25.common.streams import as_generator

from .counting import BudgetExhausted, CountedFunction, Result, _bounds


def random_search(f: Callable, bounds, budget: int, *, seed=0,
                  vectorized: bool = False) -> Result:
    """``budget`` points uniform in the box; the best is kept."""
    box = _bounds(bounds)
    fc = CountedFunction(f, budget, vectorized=vectorized)
    rng = as_generator(seed)
    fc(rng.uniform(box[:, 0], box[:, 1], size=(fc.budget, box.shape[0])))
    return fc.result()


def direct(f: Callable, bounds, budget: int, *, locally_biased: bool = False) -> Result:
    """SciPy's DIRECT (``scipy.optimize.direct``, Jones et al. 1993), stopped at ``budget``."""
    from scipy.optimize import direct as scipy_direct

    box = _bounds(bounds)
    fc = CountedFunction(f, budget)
    try:
        scipy_direct(fc, [tuple(b) for b in box], maxfun=fc.budget, maxiter=10**6, eps=1e-4,
                     locally_biased=locally_biased, vol_tol=0.0, len_tol=0.0)
    except BudgetExhausted:
        pass
    return fc.result()


def cma_es(f: Callable, bounds, budget: int, *, seed=0, sigma0: float = 0.3,
           vectorized: bool = False) -> Result:
    """CMA-ES (the ``cma`` package, Hansen) from the box's centre, step ``sigma0`` x width.

    The search runs in coordinates scaled to $[0,1]^d$ with cma's box constraints; each
    generation is evaluated as one batch and the last one is cut to what the budget allows.
    """
    import cma

    box = _bounds(bounds)
    d = box.shape[0]
    fc = CountedFunction(f, budget, vectorized=vectorized)
    width = box[:, 1] - box[:, 0]
    seed_int = int(as_generator(seed).integers(1, 2**31 - 1))
    es = cma.CMAEvolutionStrategy(np.full(d, 0.5), sigma0, {
        "bounds": [0.0, 1.0], "seed": seed_int, "verbose": -9, "maxfevals": np.inf,
        "tolfun": 0.0, "tolx": 0.0, "tolfunhist": 0.0, "tolstagnation": 10**9,
        "tolflatfitness": 10**9})
    while fc.remaining > 0 and not es.stop():
        asked = es.ask()
        unit = np.clip(np.array(asked), 0.0, 1.0)
        take = min(len(unit), fc.remaining)
        values = np.atleast_1d(fc(box[:, 0] + unit[:take] * width))
        if take < len(unit):
            break
        es.tell(asked, list(values))
    return fc.result()


