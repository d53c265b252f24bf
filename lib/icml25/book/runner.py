"""Execute chapters with papermill, safely.

* **book** mode with default parameters is the publication run: the executed notebook replaces
  the committed ``.ipynb`` atomically, and only when every cell ran.
* any other mode, or any override, writes to ``_build/runs/<chapter>/<notebook>.<tag>.ipynb``.
* a failing notebook is reported (notebook, cell, error), its partial output kept under
  ``_build/runs/failed/``, and the other chapters still run; the caller exits non-zero.
* every kernel starts with the pinned CPU numerics of :mod:`icml25.book.numerics`, and with its
  own log quietened (its start-up warnings are not the reader's business).
* ``jobs > 1`` runs notebooks in parallel processes, one kernel each (kernels are
  single-threaded, so one job per core).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from . import RECORD_ENV, notebooks, numerics, paths
from .claims import SOURCE_ENV
from .hashing import sha256_file
from .params import validate_overrides


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


def run_tag(mode: str, overrides: dict) -> str:
    extra = [f"{k}={v}" for k, v in sorted(overrides.items()) if k != "mode"]
    return ".".join([mode, *extra])


def validate(chapters: list[notebooks.Chapter], overrides: dict) -> dict[Path, dict]:
    """Check the overrides against every notebook first: nothing runs if one is refused."""
    checked = {}
    for chapter in chapters:
        for py in chapter.notebooks:
            checked[py] = validate_overrides(
                overrides, notebooks.parameters(py), paths.relative(py)
            )
    return checked


def _strip_execution_metadata(nb) -> None:
    """Drop papermill's and nbclient's timestamps: the committed notebook changes only with content."""
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if cell.metadata.get("tags") == []:
            cell.metadata.pop("tags")


def execute(py: Path, overrides: dict, *, progress: bool = True, timeout: int = 1200) -> Result:
    """Execute one notebook source; see the module docstring for where the result goes."""
    import papermill

    chapter = py.parent.name
    mode = overrides.get("mode", "book")
    publish = mode == "book" and not {k for k in overrides if k != "mode"}
    tag = run_tag(mode, overrides)
    target = py.with_suffix(".ipynb") if publish else paths.RUNS / chapter / f"{py.stem}.{tag}.ipynb"
    source_sha256 = sha256_file(py)  # what is executed, even if the file is edited meanwhile
    numerics.pin_process()  # the kernel inherits this process's environment
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
        try:
            papermill.execute_notebook(
                str(source_path),
                str(out_path),
                # The publication run injects nothing: the committed notebook is the source's code.
                parameters=None if publish else dict(overrides),
                kernel_name="python3",
                cwd=str(py.parent),
                progress_bar=progress,
                execution_timeout=timeout,
                log_output=False,
                # The kernel's own log (e.g. "running over TCP without encryption" on a
                # loopback-only connection, "KeyboardInterrupt caught" at shutdown) is noise for a
                # reader: a failing cell is reported by papermill, not by this log.
                extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
            )
        except Exception as exc:  # papermill raises PapermillExecutionError for a failing cell
            seconds = time.perf_counter() - started
            failed = paths.RUNS / "failed" / chapter / f"{py.stem}.{tag}.ipynb"
            if out_path.exists():
                failed.parent.mkdir(parents=True, exist_ok=True)
                out_path.replace(failed)
            index, count = getattr(exc, "cell_index", None), getattr(exc, "exec_count", None)
            where = (f"cell {index + 1} of {len(source_nb.cells)} (In [{count}])"
                     if index is not None else "before any cell ran")
            error = f"{getattr(exc, 'ename', type(exc).__name__)}: {getattr(exc, 'evalue', exc)}"
            return Result(chapter, py.name, mode, False, seconds, paths.relative(failed),
                          error=f"{paths.relative(py)} {where}: {error}".strip())
        finally:
            os.environ.pop(SOURCE_ENV, None)
            if previous is None:
                os.environ.pop(RECORD_ENV, None)
            else:
                os.environ[RECORD_ENV] = previous
        seconds = time.perf_counter() - started
        if not record_path.exists():
            return Result(chapter, py.name, mode, False, seconds,
                          error=f"{paths.relative(py)}: the last cell must call book.finish()")
        record = json.loads(record_path.read_text())
        record["duration_s"] = round(seconds, 1)  # wall time, kernel start-up included
        record["source"] = paths.relative(py)
        record["source_sha256"] = source_sha256
        record["overrides"] = {k: v for k, v in overrides.items() if k != "mode"}
        nb = nbformat.read(out_path, as_version=4)
        _strip_execution_metadata(nb)
        nb.metadata["icml25"] = record
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")
        nbformat.write(nb, partial)
        partial.replace(target)  # atomic: a reader never sees a half-written notebook
    held = sum(c["verdict"] == "holds" for c in record["claims"])
    return Result(chapter, py.name, mode, True, seconds, paths.relative(target),
                  held, len(record["claims"]))


def _execute_job(job):
    py, overrides = job
    return execute(py, overrides, progress=False)


def execute_all(jobs_list, *, jobs: int = 1, progress: bool = True, log=print):
    """Execute ``[(py, overrides), ...]``; yield each :class:`Result` as it completes.

    One notebook at a time in this process when ``jobs == 1`` (with a progress bar); otherwise
    ``jobs`` worker processes, each running one kernel at a time. A failure does not stop the rest.
    """
    total = len(jobs_list)
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1; got {jobs}")

    def report(index, py, overrides, result):
        mode = overrides.get("mode", "book")
        status = "ok" if result.ok else "FAILED"
        extra = ", ".join(f"{k}={v}" for k, v in overrides.items() if k != "mode")
        log(f"[{index}/{total}] {py.parent.name}/{py.name} ({mode} mode{', ' + extra if extra else ''})"
            f": {status} in {result.seconds:.1f} s"
            + (f" → {result.output}" if result.ok else f"\n    {result.error}"))
        sys.stdout.flush()

    if jobs == 1 or total <= 1:
        for index, (py, overrides) in enumerate(jobs_list, 1):
            log(f"[{index}/{total}] {py.parent.name}/{py.name} "
                f"({overrides.get('mode', 'book')} mode) …")
            sys.stdout.flush()
            result = execute(py, overrides, progress=progress)
            report(index, py, overrides, result)
            yield result
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed

    numerics.pin_process()
    log(f"{total} notebook execution(s) on {jobs} parallel jobs …")
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(_execute_job, job): job for job in jobs_list}
        for index, future in enumerate(as_completed(futures), 1):
            py, overrides = futures[future]
            try:
                result = future.result()
            except Exception as exc:  # a worker that died: report it like a failing notebook
                result = Result(py.parent.name, py.name, overrides.get("mode", "book"), False, 0.0,
                                error=f"{paths.relative(py)}: worker failed: {exc!r}")
            report(index, py, overrides, result)
            yield result


def run(
    chapters: list[notebooks.Chapter],
    overrides: dict,
    *,
    only_stale: bool = False,
    progress: bool = True,
    jobs: int = 1,
    log=print,
) -> list[Result]:
    """Execute the chosen chapters' notebooks; a failure does not stop the others."""
    from .staleness import state

    validate(chapters, overrides)
    todo = [
        (py, dict(overrides))
        for chapter in chapters
        for py in chapter.notebooks
        if not only_stale or state(py).stale
    ]
    if only_stale and not todo:
        log("Nothing is stale: every committed notebook is what its sources produce.")
    results = list(execute_all(todo, jobs=jobs, progress=progress, log=log))
    order = {(py.parent.name, py.name): i for i, (py, _) in enumerate(todo)}
    return sorted(results, key=lambda r: order[(r.chapter, r.notebook)])


def summary(results: list[Result]) -> str:
    """The table printed at the end of a run."""
    from .tables import markdown_table

    rows = [
        [r.chapter, r.notebook, r.mode, "ok" if r.ok else "FAILED", f"{r.seconds:.1f}",
         f"{r.claims_held}/{r.claims_total}" if r.ok else "-", r.output or r.error]
        for r in results
    ]
    return markdown_table(
        ["chapter", "notebook", "mode", "result", "seconds", "claims held", "output"], rows
    )
