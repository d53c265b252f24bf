"""Execute chapters with papermill, safely.

* **book** mode with default parameters is the publication run: the executed notebook replaces
  the committed ``.ipynb`` atomically, and only when every cell ran.
* any other mode, or any override, writes to ``_build/runs/<chapter>/<notebook>.<tag>.ipynb``.
* a failing notebook is reported (notebook, cell, error), its partial output kept under
  ``_build/runs/failed/``, and the other chapters still run; the caller exits non-zero.
* every kernel starts with the pinned CPU numerics of :mod:`icml25.common.numerics`, and with its
  own log quietened (its start-up warnings are not the reader's business).
* kernels talk to the runner over Unix sockets in the run's scratch folder, not TCP ports: a
  port picked free can be taken by another process before the kernel binds it ("Address already
  in use"), a race that parallel runs and the test suite's Dask cluster made real.
* ``jobs > 1`` runs notebooks in parallel processes, one kernel each (kernels are
  single-threaded, so one job per core); ``scheduler`` sends them to a Dask distributed cluster
  instead (:mod:`icml25.book.run.executor`). Either way a worker only executes and returns the
  notebook; this process checks its provenance against the checkout and writes it.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from icml25.book.params import RECORD_ENV, SCHEDULER_ENV, SOURCE_ENV
from icml25.book.run import notebooks
from icml25.book.run.spec import RunSpec
from icml25.book.run.staleness import input_digest
from icml25.common import numerics, paths
from icml25.common.hashing import sha256_file


@dataclass
class Result:
    chapter: str
    notebook: str
    mode: str
    ok: bool
    seconds: float
    output: str = ""
    claims_held: int = 0
    claims_total: int = 0
    error: str = ""
    #: The run's provenance record (what ``book.finish()`` wrote, with the runner's additions).
    record: dict | None = None
    #: Whether its notebook replaced the committed one (set when it is written).
    published: bool = False


def specs(chapters: list[notebooks.Chapter], overrides: dict) -> list[RunSpec]:
    """One checked :class:`RunSpec` per notebook of the chapters: nothing runs if one is refused."""
    return [RunSpec.of(py, overrides) for chapter in chapters for py in chapter.notebooks]


def _strip_execution_metadata(nb) -> None:
    """Drop papermill's and nbclient's timestamps: the committed notebook changes only with content."""
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if cell.metadata.get("tags") == []:
            cell.metadata.pop("tags")


@dataclass
class Outcome:
    """What one execution sends back to the process that writes files (possibly from a worker)."""

    result: Result
    notebook: str | None = None  # the executed notebook (nbformat JSON), when every cell ran
    partial: str | None = None  # what a failed run had executed, for _build/runs/failed/


def unix_socket_manager(base: type) -> type:
    """``base`` (a jupyter_client kernel manager) with the kernel on Unix sockets in a folder.

    jupyter_client's TCP transport picks each port by binding it, releasing it and handing the
    number to the kernel; another process can take the port in between ("Address already in
    use", then "Kernel didn't respond"). Socket files in a folder of the run's own cannot
    collide. The folder is the ``folder`` argument, or a fresh temporary one removed with the
    kernel's other files. On Windows (no Unix sockets) ``base`` is returned unchanged.
    """
    if os.name != "posix":
        return base
    from jupyter_core.utils import run_sync

    class UnixSocketKernelManager(base):
        def __init__(self, folder: str | Path | None = None, **kwargs):
            self._own_folder = None if folder else tempfile.mkdtemp(prefix="icml25-kernel-")
            where = Path(folder or self._own_folder) / "kernel"
            super().__init__(transport="ipc", ip=str(where), **kwargs)

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            # What shutdown_kernel awaits, in the synchronous manager and the asynchronous one.
            await super()._async_cleanup_resources(restart=restart)
            if self._own_folder and not restart:
                shutil.rmtree(self._own_folder, ignore_errors=True)

        # The base binds cleanup_resources to its own coroutine: re-bind it to this one.
        cleanup_resources = (_async_cleanup_resources
                             if inspect.iscoroutinefunction(base.cleanup_resources)
                             else run_sync(_async_cleanup_resources))

    UnixSocketKernelManager.__qualname__ = f"UnixSocket{base.__name__}"
    return UnixSocketKernelManager


def run_notebook(spec: RunSpec, *, progress: bool = False, timeout: int = 1200) -> Outcome:
    """Execute one notebook in a scratch folder and return it; write nothing else.

    The spec names the source relative to the repository root, so a worker on another machine
    resolves it in its own checkout of the same commit. This is what a pool worker runs;
    :func:`deliver` writes the result where it belongs, in the client's checkout.
    """
    import papermill

    py = spec.path
    chapter, mode = py.parent.name, spec.mode
    source_sha256 = sha256_file(py)  # what is executed, even if the file is edited meanwhile
    numerics.pin_process()  # the kernel inherits this process's environment
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="icml25-run-") as tmp:
        source_nb = notebooks.read_source(py)
        source_path = Path(tmp) / f"{py.stem}.ipynb"
        nbformat.write(source_nb, source_path)
        out_path = Path(tmp) / f"{py.stem}.out.ipynb"
        record_path = Path(tmp) / "record.json"
        previous = os.environ.get(RECORD_ENV)
        os.environ[RECORD_ENV] = str(record_path)
        os.environ[SOURCE_ENV] = paths.relative(py)  # the kernel finds the chapter's seed record
        from jupyter_client.manager import AsyncKernelManager  # papermill's (nbclient's) own

        manager = unix_socket_manager(AsyncKernelManager)
        try:
            papermill.execute_notebook(
                str(source_path),
                str(out_path),
                # The publication run injects nothing: the committed notebook is the source's code.
                parameters=spec.injected,
                kernel_name="python3",
                cwd=str(py.parent),
                progress_bar=progress,
                execution_timeout=timeout,
                log_output=False,
                # The kernel's own log (e.g. "running over TCP without encryption" on a
                # loopback-only connection, "KeyboardInterrupt caught" at shutdown) is noise for a
                # reader: a failing cell is reported by papermill, not by this log.
                extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
                kernel_manager_class=manager,
            )
        except Exception as exc:  # papermill raises PapermillExecutionError for a failing cell
            seconds = time.perf_counter() - started
            index, count = getattr(exc, "cell_index", None), getattr(exc, "exec_count", None)
            where = (f"cell {index + 1} of {len(source_nb.cells)} (In [{count}])"
                     if index is not None else "before any cell ran")
            error = f"{getattr(exc, 'ename', type(exc).__name__)}: {getattr(exc, 'evalue', exc)}"
            return Outcome(
                Result(chapter, py.name, mode, False, seconds,
                       error=f"{paths.relative(py)} {where}: {error}".strip()),
                partial=out_path.read_text() if out_path.exists() else None)
        finally:
            os.environ.pop(SOURCE_ENV, None)
            if previous is None:
                os.environ.pop(RECORD_ENV, None)
            else:
                os.environ[RECORD_ENV] = previous
        seconds = time.perf_counter() - started
        if not record_path.exists():
            return Outcome(Result(chapter, py.name, mode, False, seconds, error=(
                f"{paths.relative(py)}: the last cell must call book.finish()")))
        record = json.loads(record_path.read_text())
        record["duration_s"] = round(seconds, 1)  # wall time, kernel start-up included
        # How busy the machine was: a duration measured under load says little about a budget.
        record["load"] = {"cores": os.cpu_count(), "before": round(load_before, 2),
                          "after": round(os.getloadavg()[0], 2)}
        record["source"] = paths.relative(py)
        record["source_sha256"] = source_sha256
        record["overrides"] = spec.extra
        nb = nbformat.read(out_path, as_version=4)
    _strip_execution_metadata(nb)
    nb.metadata["icml25"] = record
    held = sum(c["verdict"] == "holds" for c in record["claims"])
    return Outcome(Result(chapter, py.name, mode, True, seconds, "", held, len(record["claims"]),
                          record=record), notebook=nbformat.writes(nb))


def _foreign_inputs(py: Path, record: dict) -> list[str]:
    """Inputs a run recorded whose digest is not this checkout's (a worker ran other code)."""
    found = [paths.relative(py)] if record["source_sha256"] != sha256_file(py) else []
    for rel, digest in record.get("inputs", {}).items():
        if input_digest(rel) != digest:
            found.append(rel)
    return found


def deliver(spec: RunSpec, outcome: Outcome) -> Result:
    """Write an execution's notebook where it belongs, atomically; return its :class:`Result`.

    A run whose recorded inputs (source, modules, data) are not this checkout's is refused: its
    provenance would not describe the committed code. A failed run's partial notebook goes to
    ``_build/runs/failed/``; the committed notebook is never touched by a failure.
    """
    result, py, target = outcome.result, spec.path, spec.target
    if not result.ok:
        if outcome.partial is not None:
            failed = spec.failed_target
            failed.parent.mkdir(parents=True, exist_ok=True)
            failed.write_text(outcome.partial)
            result.output = paths.relative(failed)
        return result
    record = nbformat.reads(outcome.notebook, as_version=4).metadata["icml25"]
    foreign = _foreign_inputs(py, record)
    if foreign:
        result.ok = False
        result.error = (f"{paths.relative(py)}: executed with other versions of "
                        f"{', '.join(foreign)} than this checkout's; nothing written")
        return result
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    partial.write_text(outcome.notebook)
    partial.replace(target)  # atomic: a reader never sees a half-written notebook
    result.output, result.published = paths.relative(target), spec.publishes
    return result


def execute(spec: RunSpec, *, progress: bool = True, timeout: int = 1200) -> Result:
    """Execute one notebook here and write its result; see the module docstring."""
    return deliver(spec, run_notebook(spec, progress=progress, timeout=timeout))


def execute_all(todo: list[RunSpec], *, jobs: int = 1, scheduler: str | None = None,
                progress: bool = True, log=print):
    """Execute every :class:`RunSpec` of ``todo``; yield each :class:`Result` as it completes.

    One notebook at a time in this process when ``jobs == 1`` and no scheduler is named (with a
    progress bar); otherwise every execution is a task of one pool (:mod:`.executor`): ``jobs``
    local processes, or the workers of the Dask cluster at ``scheduler`` (or
    ``$ICML25_SCHEDULER``). Results are written here as they arrive; a failure, or a worker that
    died, is reported with the notebook named and does not stop the rest.
    """
    from concurrent.futures import as_completed

    from icml25.book.run import executor

    total = len(todo)
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1; got {jobs}")
    scheduler = scheduler or os.environ.get(SCHEDULER_ENV) or None
    per_chapter = {}
    for spec in todo:
        per_chapter[spec.path.parent.name] = per_chapter.get(spec.path.parent.name, 0) + 1
    done_in = dict.fromkeys(per_chapter, 0)

    def report(index, spec, result):
        status = "ok" if result.ok else "FAILED"
        name = spec.path.parent.name
        done_in[name] += 1
        log(f"[{index}/{total}] {spec}: {status} in {result.seconds:.1f} s"
            + (f" → {result.output}" if result.ok else f"\n    {result.error}")
            + (f"  ({name}: {done_in[name]}/{per_chapter[name]} done)"
               if per_chapter[name] > 1 else ""))
        sys.stdout.flush()

    if (jobs == 1 or total <= 1) and not scheduler:
        for index, spec in enumerate(todo, 1):
            log(f"[{index}/{total}] {spec} …")
            sys.stdout.flush()
            result = execute(spec, progress=progress)
            report(index, spec, result)
            yield result
        return
    if not total:
        return
    numerics.pin_process()
    pool = executor.open_pool(jobs, scheduler)
    try:
        log(f"{total} notebook execution(s) on {pool.description} …")
        futures = {pool.submit(run_notebook, spec): spec for spec in todo}
        for index, future in enumerate(as_completed(futures), 1):
            spec = futures[future]
            try:
                result = deliver(spec, future.result())
            except Exception as exc:  # a worker that died or refused: like a failing notebook
                what = type(exc).__name__
                result = Result(spec.path.parent.name, spec.path.name, spec.mode, False, 0.0,
                                error=f"{spec.source}: {what} on the worker: {exc}")
            report(index, spec, result)
            yield result
    finally:
        pool.close()


def refresh_prose(py: Path) -> bool:
    """Bring a published notebook's prose up to its source without executing it; ``True``
    when done.

    Only when the source changed in its Markdown alone: the same code cells, in the same order,
    and no other reason for staleness. The executed code cells keep their outputs (their tags
    follow the source), the Markdown cells are the source's, and the provenance records the new
    source. An edit of prose re-executes nothing, so it moves no value and needs no seed run.
    """
    from icml25.book.run.staleness import state

    found = state(py)
    if not found.stale or found.reasons != [f"source changed: {py.name}"]:
        return False
    executed = nbformat.read(py.with_suffix(".ipynb"), as_version=4)
    source = notebooks.read_source(py)
    if notebooks.code_cells(source) != notebooks.code_cells(executed):
        return False
    ran = iter(c for c in executed.cells if c.cell_type == "code")
    # the k-th Markdown cell keeps the id it had, so that links into the notebook hold
    prose_ids = iter([c.get("id") for c in executed.cells if c.cell_type != "code"])
    cells = []
    for cell in source.cells:
        if cell.cell_type == "code":
            done = next(ran)
            done.metadata["tags"] = cell.metadata.get("tags", [])
            if not done.metadata["tags"]:
                del done.metadata["tags"]
            cells.append(done)
        else:
            cell["id"] = next(prose_ids, None) or cell.get("id")
            cells.append(cell)
    executed.cells = cells
    executed.metadata["icml25"]["source_sha256"] = sha256_file(py)
    target = py.with_suffix(".ipynb")
    partial = target.with_name(f".{target.name}.partial")
    nbformat.write(executed, partial)
    partial.replace(target)
    return True


def run(
    chapters: list[notebooks.Chapter],
    overrides: dict,
    *,
    only_stale: bool = False,
    progress: bool = True,
    jobs: int = 1,
    scheduler: str | None = None,
    log=print,
) -> list[Result]:
    """Execute the chosen chapters' notebooks; a failure does not stop the others."""
    from icml25.book.run.staleness import state

    todo = [spec for spec in specs(chapters, overrides)
            if not only_stale or state(spec.path).stale]
    if only_stale:  # prose edits: the Markdown is copied over, nothing is executed
        refreshed = [spec for spec in todo if spec.publishes and refresh_prose(spec.path)]
        for spec in refreshed:
            log(f"prose refreshed, nothing executed: {spec.source}")
        todo = [spec for spec in todo if spec not in refreshed]
    if os.environ.get(numerics.PERTURB) and any(spec.publishes for spec in todo):
        raise ValueError(f"{numerics.PERTURB} is set: a run under perturbed numerics never "
                         "replaces a published notebook (python -m icml25.book perturbed "
                         "compares one with it)")
    if only_stale and not todo:
        log("Nothing is stale: every committed notebook is what its sources produce.")
    results = list(execute_all(todo, jobs=jobs, scheduler=scheduler, progress=progress,
                               log=log))
    order = {(spec.path.parent.name, spec.path.name): i for i, spec in enumerate(todo)}
    return sorted(results, key=lambda r: order[(r.chapter, r.notebook)])


def summary(results: list[Result]) -> str:
    """The table printed at the end of a run."""
    from icml25.book.tables import markdown_table

    rows = [
        [r.chapter, r.notebook, r.mode, "ok" if r.ok else "FAILED", f"{r.seconds:.1f}",
         f"{r.claims_held}/{r.claims_total}" if r.ok else "-", r.output or r.error]
        for r in results
    ]
    return markdown_table(
        ["chapter", "notebook", "mode", "result", "seconds", "claims held", "output"], rows
    )
