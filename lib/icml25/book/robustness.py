"""Seed robustness: is a published verdict a finding, or the luck of seed 0?

``python -m icml25.book robustness 11 --seeds 5`` re-executes chapter 11's notebooks in book mode
with seeds 1, ..., n-1 (seed 0 is the published run, read from the committed notebook), in
parallel jobs, and writes ``chapters/11-.../_robustness.json``: for every claim, the verdict and
value under each seed, and the sha256 of every input that decides them (the notebooks' sources,
the method modules, the data). The claims ledger reads it and shows "holds in k of n seeds"; a
claim whose verdict changes with the seed is **fragile**.

The record is **stale** when the code of a chapter notebook (its code cells up to the last claim:
prose and the exercises' solutions do not move a claim), a method module or a data file changed since, or when the published claims are not the
ones it covers; the tests fail on a stale or missing record.
Changes to the book machinery (``icml25/book/``: formatting, recording) do not make it stale:
a change there that moved a figure would first make the published notebooks stale.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import notebooks, paths
from .claims import SEEDS_FILE, seed_summary
from .hashing import sha256_file
from .staleness import read_record, state

RECORD = SEEDS_FILE
MACHINERY = "lib/icml25/book/"


def record_path(chapter: notebooks.Chapter) -> Path:
    return chapter.path / RECORD


#: Suffix of a notebook source's key in a record: the digest covers its code cells only.
CODE = "#code"


#: Tag of the cells whose outputs the tests compare: every claim cell carries it.
CHECKED = "nbval-check-output"


def code_digest(py: Path) -> str:
    """sha256 of the code cells that can move a claim: in order, up to the last cell tagged
    ``nbval-check-output`` (every claim cell is); all code cells when none is tagged.

    Markdown cannot move a figure, and neither can code that runs after the last claim (the
    exercises' worked solutions, the closing ``book.finish()``): editing them leaves the seeds
    standing, while the published notebook still goes stale and is re-executed.
    """
    import hashlib

    cells = [c for c in notebooks.read_source(py).cells if c.cell_type == "code"]
    checked = [i for i, c in enumerate(cells) if CHECKED in c.metadata.get("tags", [])]
    last = checked[-1] if checked else len(cells) - 1
    code = "\n\x00\n".join(c.source.strip() for c in cells[: last + 1])
    return hashlib.sha256(code.encode()).hexdigest()


def _digest(rel: str) -> str | None:
    path = paths.ROOT / rel.removesuffix(CODE)
    if not path.exists():
        return None
    return code_digest(path) if rel.endswith(CODE) else sha256_file(path)


def _inputs(states) -> dict[str, str]:
    """Code of the notebooks and loaded inputs of the published runs, outside the machinery."""
    found = {}
    for s in states:
        found[paths.relative(s.source) + CODE] = code_digest(s.source)
        for rel, digest in s.record.get("inputs", {}).items():
            if not rel.startswith(MACHINERY) and not rel.endswith(RECORD):
                found[rel] = digest
    return dict(sorted(found.items()))


def _claims_of(record: dict) -> dict[str, dict]:
    return {c["id"]: {"verdict": c["verdict"], "value": c["value"]} for c in record["claims"]}


def published(chapter: notebooks.Chapter):
    """The fresh published states of the chapter's notebooks; raise if one is stale."""
    states = [state(py) for py in chapter.notebooks]
    # A notebook stale only because of the seed record (which it displays) still ran this code.
    stale = [paths.relative(s.source) for s in states
             if any(RECORD not in reason for reason in s.reasons)]
    if stale:
        raise ValueError(f"re-execute first (`make run CHAPTER={chapter.name[:2]}`): stale {stale}")
    return states


def measure(chapters: list[notebooks.Chapter], seeds: int = 5, *, jobs: int = 2,
            scheduler: str | None = None, log=print) -> dict[str, dict]:
    """Run seeds ``1 .. seeds-1`` of every notebook of ``chapters``; build one record per chapter.

    All executions share one pool (chapters and seeds are independent): ``jobs`` local
    processes, or the workers of the Dask cluster at ``scheduler`` (see :mod:`.executor`).
    Returns ``{chapter name: record}`` for the chapters whose runs all succeeded (not written).

    Raises
    ------
    ValueError
        When ``seeds < 2`` or a published notebook is stale (seed 0 must be the published run).
    RuntimeError
        When a seeded execution fails, after the others ran; the error names the notebook and
        cell, and the records of the chapters that did not fail are attached as ``.records``.
    """
    from .runner import execute_all

    if seeds < 2:
        raise ValueError(f"seed robustness needs at least 2 seeds; got {seeds}")
    states = {chapter.name: published(chapter) for chapter in chapters}
    runs = {(name, s.source.name): {0: _claims_of(s.record)}
            for name, chapter_states in states.items() for s in chapter_states}
    todo = [(s.source, {"seed": k}) for k in range(1, seeds)
            for chapter_states in states.values() for s in chapter_states]
    failed = {}
    for result in execute_all(todo, jobs=jobs, scheduler=scheduler, progress=False,
                              log=log):
        if not result.ok:
            failed[result.chapter] = result.error
            continue
        record = read_record(paths.ROOT / result.output)
        runs[(result.chapter, result.notebook)][record["seed"]] = _claims_of(record)
    records = {}
    for name, chapter_states in states.items():
        if name in failed:
            continue
        claims = []
        for s in chapter_states:
            by_seed = runs[(name, s.source.name)]
            for c in s.record["claims"]:
                claims.append({
                    "id": c["id"],
                    "notebook": s.source.name,
                    "kind": c.get("kind", "claim"),
                    "published": c["verdict"],
                    "seeds": {str(k): by_seed[k].get(c["id"]) for k in sorted(by_seed)},
                })
        records[name] = {
            "mode": "book",
            "seeds": list(range(seeds)),
            "inputs": _inputs(chapter_states),
            "claims": claims,
        }
    if failed:
        error = RuntimeError("seeded run failed: " + "; ".join(failed.values()))
        error.records = records
        raise error
    return records


def write(chapter: notebooks.Chapter, record: dict) -> Path:
    path = record_path(chapter)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(record, indent=1, sort_keys=False) + "\n")
    partial.replace(path)
    return path


def read(chapter: notebooks.Chapter) -> dict | None:
    path = record_path(chapter)
    return json.loads(path.read_text()) if path.exists() else None


def problems(chapter: notebooks.Chapter) -> list[str]:
    """Why the chapter's robustness record is missing or stale; empty when it is current."""
    record = read(chapter)
    if record is None:
        return [f"{chapter.name}: no {RECORD} (run `make robustness CHAPTER={chapter.name[:2]}`)"]
    found = []
    for rel, digest in record["inputs"].items():
        if _digest(rel) != digest:
            found.append(f"{chapter.name}: input changed since the seeds ran: {rel}")
    states = [state(py) for py in chapter.notebooks]
    now = {(s.source.name, c["id"]) for s in states if s.record for c in s.claims}
    covered = {(c["notebook"], c["id"]) for c in record["claims"]}
    if now != covered:
        found.append(f"{chapter.name}: claims changed since the seeds ran: "
                     f"{sorted(now ^ covered)}")
    published_ = {(s.source.name, c["id"]): c for s in states if s.record for c in s.claims}
    for c in record["claims"]:
        key = (c["notebook"], c["id"])
        now = published_.get(key)
        # A timed claim's verdict may differ between two executions of the same code.
        if now and not now.get("timed") and now["verdict"] != c["published"]:
            found.append(f"{chapter.name}: {c['id']} is published as {now['verdict']!r}, "
                         f"the seeds ran with {c['published']!r}")
    return found


def summary(claim_record: dict) -> dict:
    """``{"holds": k, "n": n, "fragile": bool, "verdicts": {...}}`` for one claim's seeds."""
    return seed_summary(claim_record["seeds"])


def by_claim(chapter: notebooks.Chapter) -> dict[tuple[str, str], dict]:
    """``{(notebook, claim id): summary}`` from the chapter's record (empty when missing).

    Seed 0 counts with the published verdict (the same code, but a timed claim may differ).
    """
    record = read(chapter)
    if record is None:
        return {}
    published_ = {(py.name, c["id"]): c["verdict"] for py in chapter.notebooks
                  for c in state(py).claims}
    found = {}
    for c in record["claims"]:
        key = (c["notebook"], c["id"])
        seeds = dict(c["seeds"])
        if key in published_ and "0" in seeds:
            seeds["0"] = {**(seeds["0"] or {}), "verdict": published_[key]}
        found[key] = seed_summary(seeds)
    return found
