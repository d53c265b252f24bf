"""One seed for python, numpy and torch; fixed thread counts so that outputs are reproducible."""

from __future__ import annotations

import os
import random
import sys

import numpy as np


def seed_everything(seed: int, threads: int = 1) -> np.random.Generator:
    """Seed ``random``, numpy's legacy global state and torch (if it is imported); fix threads.

    Parameters
    ----------
    seed : int
        The one seed of the run.
    threads : int
        Threads for BLAS/OpenMP and torch.  Reductions split over a different number of threads
        sum in a different order, so a fixed count keeps printed digits identical across machines.

    Returns
    -------
    numpy.random.Generator
        A generator seeded with ``seed``: pass it (or seeds drawn from it) to the kernels.
    """
    random.seed(seed)
    np.random.seed(seed % 2**32)
    os.environ["PYTHONHASHSEED"] = str(seed)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads)
    except ImportError:  # pragma: no cover - threadpoolctl is pinned in requirements.txt
        pass
    # torch costs a second to import: seed it only when the chapter uses it (import it first).
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(True, warn_only=True)
    return np.random.default_rng(seed)
