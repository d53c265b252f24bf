"""The committed models' checkpoints and training commands, written once.

A chapter whose torch models cannot train inside its budget commits them: a project command
``python -m icml25.<method> train data/<method>/models.pt [--seeds N] [--jobs J]`` trains one
seed per process and saves the weights with their training records. This module holds what
those commands share: the map over seeds (:func:`map_seeds`), the command line
(:func:`train_command`), and the file itself (:func:`save`, :func:`load`, :func:`seed_state`).
Chapters never import it: they call their method's ``load_models(seed)``.

The file
--------
One torch file (``torch.save`` of plain dicts, read back with ``weights_only=True``)::

    {"format": "icml25.checkpoint/1",
     "config":  {...},                                 # how the models were trained
     "seeds":   {seed: {model name: state dict}},      # the models of each training seed
     "shared":  {model name: state dict},              # models trained once (no seed)
     "records": {seed: {...}, "<name>": {...}}}        # deterministic training records

Its bytes depend only on what is saved: :func:`save` serialises into memory (so the archive
is not named after the file), copies every tensor to its own contiguous CPU storage, orders the
seeds, and refuses run-dependent fields (CPU or wall seconds, dates, host names, thread counts;
see :data:`TIMING_KEYS`) anywhere in ``config`` or ``records``. Saving the same content twice
gives the same sha256, and retraining with the same code and torch build on one thread per seed
(deterministic weights and losses) rewrites the file bit for bit. The file is written atomically (a temporary file in the same folder,
then :func:`os.replace`), so an interrupted command never leaves a half-written checkpoint.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import pickle
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

__all__ = [
    "FORMAT",
    "TIMING_KEYS",
    "Checkpoint",
    "half",
    "load",
    "map_seeds",
    "save",
    "seed_state",
    "train_command",
]

#: The format tag stored in every checkpoint; :func:`load` refuses other files.
FORMAT = "icml25.checkpoint/1"

#: Record or config keys that :func:`save` refuses: they measure the run, not the models.
#: A key is refused when it, or one of its ``_``-separated words, is in this set, or when it
#: ends in ``_s`` (``cpu_s``, ``wall_s``: seconds).
TIMING_KEYS = frozenset({
    "cpu", "wall", "time", "times", "timing", "timings", "seconds", "secs", "elapsed",
    "duration", "date", "datetime", "timestamp", "host", "hostname", "threads",
    "num_threads", "nthreads", "pid"})

_SCALARS = (bool, int, float, str, type(None))


class Checkpoint(NamedTuple):
    """What :func:`load` returns (and :func:`save` takes, as keywords)."""

    config: dict
    """How the models were trained (the training configuration)."""
    seeds: dict
    """``{seed: {model name: state dict}}``: the models of each training seed."""
    records: dict
    """Deterministic training records: ``{seed: {...}}`` per seed, string keys otherwise."""
    shared: dict
    """``{model name: state dict}``: models trained once, not per seed (may be empty)."""


def _timing_key(key) -> bool:
    if not isinstance(key, str):
        return False
    k = key.lower()
    return k in TIMING_KEYS or k.endswith("_s") or any(
        w in TIMING_KEYS for w in re.split(r"[_\-\s.]+", k) if w)


def _plain(value, where: str, torch):
    """``value`` checked (no timing keys, only types ``weights_only`` loading accepts) and
    with every tensor copied to its own contiguous CPU storage."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone(memory_format=torch.contiguous_format)
    if type(value) in _SCALARS:
        return value
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if type(k) not in (str, int):
                raise TypeError(f"{where}: keys must be str or int; got {k!r}")
            if _timing_key(k):
                raise ValueError(
                    f"{where}[{k!r}] looks like a timing or machine field: a checkpoint's bytes "
                    "must depend only on the weights, the config and deterministic records "
                    "(print timings instead of saving them)")
            out[k] = _plain(v, f"{where}[{k!r}]", torch)
        return out
    if isinstance(value, (list, tuple)):
        items = [_plain(v, f"{where}[{i}]", torch) for i, v in enumerate(value)]
        return items if isinstance(value, list) else tuple(items)
    raise TypeError(f"{where} is a {type(value).__module__}.{type(value).__name__}; a "
                    "checkpoint holds tensors, dicts, lists, tuples and Python scalars "
                    "(convert NumPy arrays with torch.from_numpy or .tolist(), NumPy "
                    "scalars with float() or int())")


def _state_dicts(models, where: str, torch) -> dict:
    out = {}
    for name, state in models.items():
        if not isinstance(name, str):
            raise TypeError(f"{where}: model names must be str; got {name!r}")
        if not isinstance(state, Mapping) or not all(
                isinstance(k, str) and isinstance(t, torch.Tensor) for k, t in state.items()):
            raise TypeError(f"{where}[{name!r}] must be a state dict (str -> tensor)")
        # parameter names are the model's (``time.0.weight``): no timing-key check here
        out[name] = {k: _plain(t, f"{where}[{name!r}][{k!r}]", torch)
                     for k, t in state.items()}
    return out


class _Unshared:
    """``pickle`` for :func:`save`, with its memo off (``Pickler.fast``): an object met twice is
    written twice. With the memo on, the bytes depended on which equal objects were the same
    object: a record computed in this process shares its key strings across seeds, one sent
    back by a worker process does not, so ``--jobs 1`` and ``--jobs 2`` wrote different files
    of the same content. (Tensors are unaffected: torch writes each storage once, by its own
    table.)"""

    class Pickler(pickle.Pickler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.fast = True

    Unpickler = pickle.Unpickler
    __name__ = "pickle"


def save(path, *, config: dict, seeds: dict, records: dict | None = None,
         shared: dict | None = None) -> str:
    """Write a checkpoint whose bytes depend only on its content, atomically.

    Parameters
    ----------
    path : str or Path
        The file to write (its folder must exist); replaced atomically.
    config : dict
        The training configuration (JSON-like: str keys, scalars, lists, tuples).
    seeds : dict
        ``{seed (int): {model name: state dict}}``: the models of each training seed, saved
        in the precision given (see :func:`half`). Seeds are stored in increasing order.
    records : dict, optional
        Deterministic training records (loss curves, step counts, curation outcomes):
        ``{seed: {...}}`` for the seeds' records, string keys for the rest. Values are
        dicts, lists, tuples, Python scalars or tensors.
    shared : dict, optional
        ``{model name: state dict}``: models trained once for every seed (an evaluator).

    Returns
    -------
    str
        The sha256 of the bytes written (what ``data/MANIFEST`` records).

    Raises
    ------
    ValueError
        When ``config`` or ``records`` hold a timing or machine field (:data:`TIMING_KEYS`),
        or ``seeds`` is empty.
    TypeError
        When a value is of a type ``torch.load(weights_only=True)`` cannot read back
        (a NumPy array, say), or a seed is not an int.
    """
    import torch

    if not isinstance(seeds, Mapping) or not seeds:
        raise ValueError("seeds must be a non-empty {seed: {name: state dict}} mapping")
    bad = [s for s in seeds if type(s) is not int]
    if bad:
        raise TypeError(f"training seeds must be ints; got {bad!r}")
    blob = {
        "format": FORMAT,
        "config": _plain(dict(config), "config", torch),
        "seeds": {s: _state_dicts(seeds[s], f"seeds[{s}]", torch) for s in sorted(seeds)},
        "shared": _state_dicts(dict(shared or {}), "shared", torch),
        "records": _plain(dict(records or {}), "records", torch),
    }
    buffer = io.BytesIO()
    torch.save(blob, buffer, pickle_module=_Unshared)
    data = buffer.getvalue()
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would survive the replace
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return hashlib.sha256(data).hexdigest()


def load(path) -> Checkpoint:
    """Read a checkpoint written by :func:`save` (``weights_only``: no code runs).

    Parameters
    ----------
    path : str or Path
        The file (chapters' methods pass ``icml25.common.data.path(...)``, which checks
        its sha256 against ``data/MANIFEST`` first).

    Returns
    -------
    Checkpoint
        ``(config, seeds, records, shared)``, as saved; tensors on the CPU.

    Raises
    ------
    ValueError
        When the file is not a checkpoint of this format (an older layout: re-save it).
    """
    import torch

    blob = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        found = blob.get("format") if isinstance(blob, dict) else type(blob).__name__
        raise ValueError(f"{path} is not an {FORMAT} checkpoint (format {found!r})")
    return Checkpoint(blob["config"], blob["seeds"], blob["records"], blob["shared"])


def seed_state(checkpoint: Checkpoint, seed: int, command: str) -> dict:
    """The state dicts of training seed ``seed``, or an error that says how to train it.

    Parameters
    ----------
    checkpoint : Checkpoint
        What :func:`load` returned.
    seed : int
        The training seed.
    command : str
        The training command (``"python -m icml25.rationales train data/rationales/models.pt"``),
        named in the error.

    Raises
    ------
    ValueError
        When the checkpoint does not hold ``seed``.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed not in checkpoint.seeds:
        held = sorted(checkpoint.seeds)
        more = (f"; `{command} --seeds N` trains seeds 0..N-1 (N > {seed} includes it)"
                if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0 else "")
        raise ValueError(f"the committed models hold training seeds {held}, not {seed!r}{more}")
    return checkpoint.seeds[seed]


def half(state: Mapping) -> dict:
    """``state`` with its floating-point tensors in float16 (how most books commit weights)."""
    return {k: v.half() if v.is_floating_point() else v for k, v in state.items()}


def train_in_worker(train: Callable, args: tuple) -> tuple[int, dict]:
    """One seed's training as a worker of :func:`map_seeds` runs it.

    ``args`` is ``(seed, *rest)`` and ``train(seed, *rest)`` returns ``{name: (model, record)}``.
    The worker trains on one torch thread (float sums then do not depend on ``--jobs``), prints
    the CPU seconds it took (never stored: a file holding them would not regenerate to its
    sha256), and returns ``(seed, {name: (state_dict, record)})`` with the weights copied and the
    records' arrays as lists, ready for :func:`save`. Pass it as
    ``functools.partial(train_in_worker, train_models)``: both are module-level, so it pickles.
    """
    import time

    import numpy as np
    import torch

    seed, *rest = args
    torch.set_num_threads(1)
    start = time.process_time()
    models = train(seed, *rest)
    print(f"seed {seed}: trained in {time.process_time() - start:.0f} CPU-s", flush=True)
    return seed, {name: ({k: v.detach().clone() for k, v in model.state_dict().items()},
                         {k: (v.tolist() if isinstance(v, np.ndarray) else v)
                          for k, v in record.items()})
                  for name, (model, record) in models.items()}


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


def _pinned_or_restart() -> None:
    """Train under the book's pinned CPU numerics (:mod:`icml25.common.numerics`), as every
    chapter runs: a command started without them restarts itself with them. torch reads
    ``ATEN_CPU_CAPABILITY`` when it loads, so setting it in a process that has imported torch
    would come too late; a fresh process (and every worker it spawns) reads it in time. Without
    the pins, a machine with AVX-512 trains weights that differ in their last bits."""
    import sys

    from icml25.common import numerics

    if numerics.pin_process() and not os.environ.get("ICML25_TRAIN_RESTARTED"):
        os.environ["ICML25_TRAIN_RESTARTED"] = "1"
        sys.stdout.flush()
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])


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
    _pinned_or_restart()
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
