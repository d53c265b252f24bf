"""Where notebook executions run: a local pool of processes, or a Dask distributed cluster.

The runner hands every execution (one notebook, one set of overrides) to one *pool* and collects
the results as they complete. Two pools, one interface (``submit`` → a
:class:`concurrent.futures.Future`, ``close``):

* **local** (the default): ``jobs`` worker processes on this machine, one single-threaded kernel
  each, so ``jobs`` = the number of cores. ``jobs == 1`` runs in this process.
* **dask**: ``--scheduler tcp://HOST:8786`` (or ``$ICML25_SCHEDULER``) sends each execution as one
  task to a Dask distributed cluster whose workers were started from a checkout of the same
  commit with the same pinned stack (``make worker SCHEDULER=tcp://HOST:8786``). The executed
  notebook and its provenance record come back to this process, which writes them (atomically,
  as for a local run): a worker never writes into anyone's checkout.

A worker whose environment differs from the client's would make the provenance record lie, so
before anything runs each worker's :func:`fingerprint` (Python, the pinned packages' versions, the
sha256 of every source under ``lib/icml25`` and ``chapters``, of ``data/MANIFEST``) is compared with
the client's, and a mismatch is refused with the differences named. After a run, the client also
checks every input the worker recorded against its own files (see ``runner.deliver``).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from importlib import metadata

from icml25.book.params import SCHEDULER_ENV
from icml25.common import paths
from icml25.common.hashing import sha256_file

#: Environment variable naming a Dask scheduler (``tcp://host:8786``); ``--scheduler`` wins.
REQUIREMENTS = ("requirements.txt", "requirements-nodeps.txt")
_PIN = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*==")


class WorkerMismatch(RuntimeError):
    """A worker's Python, packages or sources differ from the client's."""


def pinned_packages() -> list[str]:
    """Names of the packages pinned (``name==version``) in the requirements files."""
    names = []
    for name in REQUIREMENTS:
        path = paths.ROOT / name
        if path.exists():
            names += [m.group(1) for line in path.read_text().splitlines()
                      if (m := _PIN.match(line))]
    return sorted(set(names), key=str.lower)


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


@functools.lru_cache(maxsize=1)
def fingerprint() -> dict:
    """What decides an execution's result, on this machine.

    ``{"python": "3.11.x", "packages": {name: version}, "sources": {path: sha256}}``, where
    ``sources`` covers every ``.py`` under ``lib/icml25`` and ``chapters``, the requirements files
    and ``data/MANIFEST`` (which holds the data files' digests). Cached: computed once per process.
    """
    files = sorted(
        p for top in ("lib/icml25", "chapters") for p in (paths.ROOT / top).rglob("*.py")
        if "__pycache__" not in p.parts
    )
    files += [paths.ROOT / name for name in (*REQUIREMENTS, "data/MANIFEST")]
    return {
        "python": sys.version.split()[0],
        "packages": {name: _version(name) for name in pinned_packages()},
        "sources": {paths.relative(p): sha256_file(p) for p in files if p.exists()},
    }


def digest(print_: dict) -> str:
    """One sha256 for a fingerprint (what a task carries to be checked on its worker)."""
    return hashlib.sha256(repr(sorted(print_.items())).encode()).hexdigest()


def differences(ours: dict, theirs: dict, *, limit: int = 6) -> list[str]:
    """What differs between two fingerprints, most telling first, at most ``limit`` lines."""
    found = []
    if ours["python"] != theirs["python"]:
        found.append(f"Python {theirs['python']} (client: {ours['python']})")
    for kind, noun in (("packages", "package"), ("sources", "file")):
        a, b = ours[kind], theirs[kind]
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                mine, yours = a.get(key, "missing"), b.get(key, "missing")
                if kind == "sources":
                    mine, yours = mine[:12], yours[:12]
                found.append(f"{noun} {key}: {yours} (client: {mine})")
    return found[:limit] + ([f"... and {len(found) - limit} more"] if len(found) > limit else [])


def check_fingerprint(expected: str) -> None:
    """Refuse to run on a worker whose fingerprint is not the client's (called in every task)."""
    if digest(fingerprint()) != expected:
        raise WorkerMismatch(
            f"worker pid {os.getpid()} at {paths.ROOT} has another Python, package versions or "
            "sources than the client; start it from a checkout of the client's commit "
            "(`make worker`)")


class LocalPool:
    """``jobs`` processes on this machine (``concurrent.futures``)."""

    def __init__(self, jobs: int):
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1; got {jobs}")
        self.jobs = jobs
        self._pool = ProcessPoolExecutor(max_workers=jobs)
        self.description = f"{jobs} local process(es)"

    def submit(self, fn, *args) -> Future:
        return self._pool.submit(fn, *args)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskPool:
    """The workers of a Dask distributed cluster, each execution one task.

    Parameters
    ----------
    address : str or distributed.Client
        The scheduler's address (``tcp://host:8786``), or a connected client (tests).
    connect_s, wait_s : float
        How long to wait for the scheduler to answer, then for at least one worker.
    """

    def __init__(self, address, *, connect_s: float = 20.0, wait_s: float = 60.0):
        try:
            from distributed import Client
        except ImportError as exc:  # pragma: no cover - distributed is pinned
            raise ValueError("--scheduler needs `distributed` (pinned in requirements.txt)") from exc
        self._own = not isinstance(address, Client)
        try:
            self.client = Client(address, timeout=f"{connect_s}s") if self._own else address
        except OSError as exc:
            raise ValueError(f"no Dask scheduler answers at {address!r}: {exc}") from exc
        try:
            self.client.wait_for_workers(1, timeout=wait_s)
        except TimeoutError as exc:
            self.close()
            raise ValueError(f"the Dask scheduler at {address!r} has no worker after {wait_s:.0f} s "
                             "(start some: `make worker SCHEDULER=...`)") from exc
        self.expected = self._check_workers()
        info = self.client.scheduler_info()
        workers = info.get("workers", {})
        threads = sum(w.get("nthreads", 1) for w in workers.values())
        self.description = (f"Dask cluster at {info.get('address', address)}: "
                            f"{len(workers)} worker(s), {threads} thread(s)")
        if "dashboard" in info.get("services", {}):
            self.description += f"; dashboard {self.client.dashboard_link}"

    def _check_workers(self) -> str:
        ours = fingerprint()
        theirs = self.client.run(_worker_fingerprint)
        for worker, print_ in sorted(theirs.items()):
            if print_ != ours:
                lines = "\n    ".join(differences(ours, print_))
                raise WorkerMismatch(
                    f"worker {worker} differs from this checkout; refusing to run, since its "
                    f"provenance records would not describe this code:\n    {lines}\n"
                    "Start workers from a checkout of the same commit: `make worker "
                    "SCHEDULER=...` (it installs the pinned stack first).")
        return digest(ours)

    def submit(self, fn, *args) -> Future:
        """Submit ``fn(*args)`` as one task; a :class:`concurrent.futures.Future` of its result."""
        from distributed import Future as DaskFuture

        task = self.client.submit(_checked, self.expected, fn, *args, pure=False)
        done: Future = Future()

        def settle(f: DaskFuture):
            try:
                done.set_result(f.result())
            except BaseException as exc:  # KilledWorker (a worker died), WorkerMismatch, ...
                done.set_exception(exc)

        task.add_done_callback(settle)
        done._dask = task  # keep the task alive until its result is read
        return done

    def close(self) -> None:
        if self._own:
            self.client.close()


def _worker_fingerprint() -> dict:
    # Sent by reference: the worker computes its own, whatever the client's module holds.
    return fingerprint()


def _checked(expected: str, fn, *args):
    check_fingerprint(expected)
    return fn(*args)


def open_pool(jobs: int = 1, scheduler: str | None = None):
    """The pool an execution goes to: Dask when a scheduler is named (argument or environment)."""
    scheduler = scheduler or os.environ.get(SCHEDULER_ENV) or None
    if scheduler:
        return DaskPool(scheduler)
    return LocalPool(jobs)
