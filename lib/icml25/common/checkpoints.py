"""The training commands of the chapters whose models are committed, written once.

A chapter whose torch models cannot train inside its budget commits them: a project command
``python -m icml25.<method> train data/<method>/models.pt [--seeds N] [--jobs J]`` trains one
seed per process and saves the weights with their training records. This module holds the two
parts those commands share: the map over seeds (:func:`map_seeds`) and the command line
(:func:`train_command`). Chapters never import it: only the commands do.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from pathlib import Path


def map_seeds(fn: Callable, args: Iterable, jobs: int = 1) -> list:
    """``[fn(a) for a in args]``, in ``jobs`` worker processes when ``jobs > 1``.

    Workers are *spawned*, not forked: each starts a fresh interpreter, so no torch thread pool
    or random state is inherited from the parent, and a seed trains the same in a worker as in
    the parent. ``fn`` must be a module-level function (it is pickled) and should set its own
    torch thread count (one thread per worker keeps float sums identical across ``jobs``).
    """
    args = list(args)
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer; got {jobs!r}")
    if jobs == 1 or len(args) <= 1:
        return [fn(a) for a in args]
    import multiprocessing as mp

    with mp.get_context("spawn").Pool(min(jobs, len(args))) as pool:
        return pool.map(fn, args)


def train_command(prog: str, save: Callable, *, seeds: int, argv=None,
                  extra: dict[str, Callable] | None = None) -> None:
    """Parse ``train OUT [--seeds N] [--jobs J]`` and call ``save(OUT, range(N), jobs=J)``.

    Parameters
    ----------
    prog : str
        The command as a reader types it (``"python -m icml25.rationales"``).
    save : callable
        ``save(path, seeds, jobs=...)``: trains the seeds and writes the checkpoint.
    seeds : int
        The default number of seeds (0, ..., seeds - 1): the committed checkpoint's.
    extra : dict, optional
        Other sub-commands that write one file: ``{name: fn(path)}``.
    """
    extra = dict(extra or {})
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("what", choices=["train", *extra])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seeds", type=int, default=seeds)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.jobs < 1:
        parser.error(f"--seeds and --jobs must be positive; got {args.seeds}, {args.jobs}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.what == "train":
        save(args.out, range(args.seeds), jobs=args.jobs)
    else:
        extra[args.what](args.out)
    print(f"wrote {args.out}")
