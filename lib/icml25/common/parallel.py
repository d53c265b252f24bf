"""Independent computations spread over processes, with the arithmetic of a serial run.

A chapter's independent runs (the initialisations of a model, the data sets of a sweep) can be
spread over the machine's cores. The results equal those of running them one after the other
only if every worker computes as the calling process does: the same environment (hence the
pinned CPU numerics of :mod:`icml25.common.numerics`) and one BLAS/OpenMP/torch thread, since a
reduction split over another number of threads sums in another order. :func:`starmap` fixes
both, whatever the number of cores, so the values do not depend on ``n_jobs``.
"""

from __future__ import annotations

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
