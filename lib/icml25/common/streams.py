"""One run seed, named independent streams, fixed thread counts: reproducible randomness.

Every random draw of a run derives from the run seed $s$ through numpy's ``SeedSequence``: the
stream named ``name`` is ``SeedSequence(entropy=s, spawn_key=(h(name),))``, with $h$ the first
64 bits of the name's sha256. SeedSequence hashes its entropy and spawn key together, so two
streams share nothing unless both the run seed and the name are equal; in particular run 1's
streams are not run 0's streams shifted by one, as an offset added to the seed would make them,
and a seed record over runs $0, \\dots, n-1$ holds $n$ independent replications.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys

import numpy as np


def _name_key(name: str) -> int:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"a stream name must be a non-empty string; got {name!r}")
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")


def stream(seed: int, name: str) -> np.random.SeedSequence:
    """The seed sequence of stream ``name`` of run ``seed``.

    Parameters
    ----------
    seed : int
        The run seed $s \\ge 0$.
    name : str
        What the stream draws (``"bootstrap"``, ``"screen"``, ``"init-3"``); a name is used for
        one purpose in a run.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"the run seed must be a non-negative integer; got {seed!r}")
    return np.random.SeedSequence(entropy=int(seed), spawn_key=(_name_key(name),))


def stream_int(seed: int, name: str) -> int:
    """A 63-bit integer drawn from :func:`stream` (for kernels and torch, which take an int)."""
    words = stream(seed, name).generate_state(2, np.uint32)
    return int(words[0]) | (int(words[1]) & 0x7FFFFFFF) << 32


def seed_everything(seed: int, threads: int = 1) -> None:
    """Seed ``random``, numpy's legacy global state and torch (if it is imported); fix threads.

    The global states are seeded only so that a library that draws from them behind the
    chapter's back is reproducible too; chapters draw from named streams (:func:`stream`).

    Parameters
    ----------
    seed : int
        The one seed of the run.
    threads : int
        Threads for BLAS/OpenMP and torch.  Reductions split over a different number of threads
        sum in a different order, so a fixed count keeps printed digits identical across machines.
    """
    global_seed = stream_int(seed, "global state")
    random.seed(global_seed)
    np.random.seed(global_seed % 2**32)
    os.environ["PYTHONHASHSEED"] = str(seed)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads)
    except ImportError:  # pragma: no cover - threadpoolctl is pinned in requirements.txt
        pass
    # torch costs a second to import: seed it only when the chapter uses it (import it first).
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(global_seed)
        torch.set_num_threads(threads)
        # The flag of torch.use_deterministic_algorithms(True, warn_only=True) for eager code,
        # set directly: that function also imports torch._inductor's config (1.4 s, sympy
        # included) to set a flag that only compiled code reads, and no chapter compiles.
        torch._C._set_deterministic_algorithms(True, warn_only=True)


def as_generator(seed) -> np.random.Generator:
    """A numpy ``Generator`` from what a public function was handed as its ``seed``.

    Parameters
    ----------
    seed : int, sequence of int, numpy.random.SeedSequence or numpy.random.Generator
        A ``Generator`` is returned unchanged (its state is shared with the caller, who then
        sees it advance); anything else goes to ``numpy.random.default_rng``: a non-negative
        integer, a sequence of them, a ``SeedSequence`` (:func:`stream`) or a bit generator.

    Raises
    ------
    ValueError
        For ``None`` (fresh OS entropy: a run that no seed reproduces), ``bool``, a negative
        integer, a float, a string or anything else, naming what was passed.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, (np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(seed)
    if isinstance(seed, (bool, np.bool_)) or seed is None or isinstance(seed, (str, bytes)):
        ok = False
    elif isinstance(seed, (int, np.integer)):
        ok = seed >= 0
    else:
        try:
            arr = np.asarray(seed)
        except (TypeError, ValueError):  # pragma: no cover - ragged input
            arr = np.asarray([], dtype=object)
        ok = (arr.ndim == 1 and arr.size > 0 and arr.dtype.kind in "iu"
              and bool((arr >= 0).all()))
    if not ok:
        raise ValueError("seed must be a non-negative integer, a sequence of them, a "
                         f"SeedSequence or a Generator; got {seed!r} ({type(seed).__name__})")
    return np.random.default_rng(seed)
