"""Independent computations spread over processes, with the arithmetic of a serial run.

A chapter's independent runs (the initialisations of a model, the data sets of a sweep) can be
spread over the machine's cores. The results equal those of running them one after the other
only if every worker computes as the calling process does: the same environment (hence the
pinned CPU numerics of :mod:`icml25.common.numerics`) and one BLAS/OpenMP/torch thread, since a
reduction split over another number of threads sums in another order. :func:`starmap` fixes
both, whatever the number of cores, so the values do not depend on ``n_jobs``.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Callable, Sequence

from icml25.common.validation import check_int


def starmap(fn: Callable, jobs: Sequence[tuple], *, n_jobs: int = 1) -> list:
    """``[fn(*args) for args in jobs]``, computed in ``n_jobs`` processes.

    Parameters
    ----------
    fn : callable
        A function importable by the workers (a module's, not a notebook's own), or one that
        cloudpickle can carry.
    jobs : sequence of tuple
        The positional arguments of each call; they and the results travel by pickle, so a
        torch module comes back as a trained copy, not the object passed in.
    n_jobs : int
        Worker processes (joblib's loky backend, one thread each); 1 runs in this process.

    Returns
    -------
    list
        The results, in the order of ``jobs``.
    """
    check_int(n_jobs, "n_jobs", minimum=1)
    jobs = list(jobs)
    if any(not isinstance(args, tuple) for args in jobs):
        raise ValueError("jobs must be a sequence of argument tuples")
    if n_jobs == 1 or len(jobs) < 2:
        return [fn(*args) for args in jobs]
    from joblib import Parallel, delayed, parallel_config

    # inner_max_num_threads=1: loky would otherwise give each worker cores // n_jobs threads
    with parallel_config(backend="loky", inner_max_num_threads=1):
        return Parallel(n_jobs=min(n_jobs, len(jobs)))(delayed(fn)(*args) for args in jobs)


def start_workers(n_jobs: int, *modules: str) -> threading.Thread | None:
    """Start :func:`starmap`'s ``n_jobs`` worker processes now, in the background, and import
    ``modules`` in them (``n_jobs`` imports of each, spread over the workers by joblib).

    A worker takes seconds to start and import torch or scikit-learn, and the first
    :func:`starmap` waits for it. Started while this process computes on one core (training a
    model), the workers are ready when the first :func:`starmap` comes, on a core that would
    have idled. Results do not change: the workers are the ones :func:`starmap` reuses.

    Returns
    -------
    The background thread (``join`` it to wait), or ``None`` when ``n_jobs`` is 1.
    """
    check_int(n_jobs, "n_jobs", minimum=1)
    for name in modules:
        if not isinstance(name, str) or importlib.util.find_spec(name) is None:
            raise ValueError(f"start_workers imports modules by name; {name!r} is not one")
    if n_jobs == 1:
        return None
    thread = threading.Thread(
        target=starmap, args=(importlib.import_module, [(m,) for m in modules or ("os",)] * n_jobs),
        kwargs={"n_jobs": n_jobs}, daemon=True, name="icml25 start_workers")
    thread.start()
    return thread
