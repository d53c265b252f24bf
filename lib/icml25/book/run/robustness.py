"""The seed record: every claim measured under independent run seeds, to be pooled.

``python -m icml25.book robustness 11 --seeds 5`` re-executes chapter 11's notebooks in book mode
with seeds 1, ..., n-1 (seed 0 is the published run, read from the committed notebook), in
parallel jobs, and writes ``chapters/11-.../_robustness.json``: for every claim, the value, the
run's interval, threshold and verdict under each seed, and the sha256 of every input that decides
them (the notebooks' code, the method modules, the data, the declarations). The pages' verdicts
pool these seeds (:mod:`icml25.book.pooling`); ``--until-decided`` adds seeds while a claim is
undecided, up to its declared ``max_seeds``, in the chapters cheap enough to re-run.

The record is **stale** when the code of a chapter notebook (its code cells up to the last claim:
prose and the exercises' solutions do not move a claim), a method module or a data file changed since, or when the published claims are not the
ones it covers; the tests fail on a stale or missing record.
Changes to the book machinery (``icml25/book/``: formatting, recording) do not make it stale:
a change there that moved a figure would first make the published notebooks stale.
"""

from __future__ import annotations

import json
from pathlib import Path

from icml25.book import declarations
from icml25.book.claims import SEEDS_FILE
from icml25.book.run import notebooks
from icml25.book.run.staleness import input_digest, state
from icml25.common import paths

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
    if rel.endswith(CODE):
        path = paths.ROOT / rel.removesuffix(CODE)
        return code_digest(path) if path.exists() else None
    return input_digest(rel)


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
    """``{id: {value, interval, verdict, threshold}}`` of one execution's record."""
    return {c["id"]: {"value": c["value"], "interval": c.get("interval"),
                      "verdict": c["verdict"], "threshold": c["threshold"]}
            for c in record["claims"]}


def published(chapter: notebooks.Chapter):
    """The fresh published states of the chapter's notebooks; raise if one is stale."""
    states = [state(py) for py in chapter.notebooks]
    stale = [paths.relative(s.source) for s in states if s.stale]
    if stale:
        raise ValueError(f"re-execute first (`make run CHAPTER={chapter.name[:2]}`): stale {stale}")
    return states


def measure(chapters: list[notebooks.Chapter], seeds: int = 5, *, jobs: int = 2,
            scheduler: str | None = None, log=print) -> dict[str, dict]:
    """Make every chapter's record hold at least seeds ``0 .. seeds-1``; return ``{name: record}``.

    Seed 0 is the published run, read from the committed notebook. The seeds a chapter's
    current record already holds are kept (more than ``seeds`` too); only the missing ones run,
    all chapters' runs in one pool (``jobs`` local processes, or the workers of the Dask cluster
    at ``scheduler``); a notebook that reports no claim is not run. A stale record is measured
    anew. The records are returned, not written.

    Raises
    ------
    ValueError
        When ``seeds < 2`` or a published notebook is stale (seed 0 must be the published run).
    RuntimeError
        When a seeded execution fails, after the others ran; the error names the notebook and
        cell, and the records of the chapters that did not fail are attached as ``.records``.
    """
    from icml25.book.run.runner import execute_all
    from icml25.book.run.spec import RunSpec

    if seeds < 2:
        raise ValueError(f"seed robustness needs at least 2 seeds; got {seeds}")
    states = {chapter.name: published(chapter) for chapter in chapters}
    runs: dict[tuple[str, str], dict[int, dict]] = {}
    todo = []
    for chapter in chapters:
        kept = read(chapter) if not problems(chapter) else None
        for s in states[chapter.name]:
            if not s.claims:
                continue
            by_seed = {0: _claims_of(s.record)}
            if kept:
                for c in kept["claims"]:
                    if c["notebook"] == s.source.name:
                        for k, v in c["seeds"].items():
                            if int(k) != 0 and v is not None:
                                by_seed.setdefault(int(k), {})[c["id"]] = v
            runs[(chapter.name, s.source.name)] = by_seed
            todo += [RunSpec.of(s.source, {"seed": k}) for k in range(1, seeds)
                     if k not in by_seed]
    failed = {}
    for result in execute_all(todo, jobs=jobs, scheduler=scheduler, progress=False, log=log):
        if not result.ok:
            failed[result.chapter] = result.error
            continue
        record = result.record
        runs[(result.chapter, result.notebook)][record["seed"]] = _claims_of(record)
    records = {}
    for name, chapter_states in states.items():
        if name in failed:
            continue
        claims, every = [], set()
        for s in chapter_states:
            if not s.claims:
                continue
            by_seed = runs[(name, s.source.name)]
            every |= set(by_seed)
            for c in s.record["claims"]:
                claims.append({
                    "id": c["id"],
                    "notebook": s.source.name,
                    "kind": c.get("kind", "claim"),
                    "seeds": {str(k): by_seed[k].get(c["id"]) for k in sorted(by_seed)},
                })
        records[name] = {
            "mode": "book",
            "seeds": sorted(every),
            "inputs": _inputs(chapter_states),
            "claims": claims,
        }
    if failed:
        error = RuntimeError("seeded run failed: " + "; ".join(failed.values()))
        error.records = records
        raise error
    return records


def carry_over(chapters: list[notebooks.Chapter], *, jobs: int = 2,
               scheduler: str | None = None, log=print) -> dict[str, dict]:
    """Keep seed records through a change that moves no measured value; return the kept ones.

    A refactor (a module moved, a helper written once instead of twice) changes the inputs'
    digests, so every record it touches goes stale although no value moved; measuring all the
    seeds again costs the whole record. Instead, for each chapter whose record is current except
    for changed inputs (the same claims, which :func:`problems` checks) and, where the inputs
    changed the numerics (another MKL branch), a published seed 0 that moved within each claim's
    declared tolerance (the ledger pools the published run as seed 0, so the record takes its
    value), the record's highest seed is executed again and every claim
    compared with what the record holds (:func:`icml25.book.claims.same_result`: the verdict
    exactly, the value within the claim's declared tolerance; a timed claim for its presence).
    When all agree, the record is returned with today's input digests and a ``carried`` entry
    (date, the seed re-measured, the inputs that changed); when one differs, the chapter is left
    out and its record stays stale: its seeds must be measured again.
    """
    import datetime

    from icml25.book.claims import same_result
    from icml25.book.run.runner import execute_all
    from icml25.book.run.spec import RunSpec

    candidates, todo = {}, []
    for chapter in chapters:
        record, found = read(chapter), problems(chapter)
        if record is None or not found:
            continue
        states = published(chapter)
        changed = _changed_inputs(record)
        moves = _seed0_moves(record, states)
        tolerances = declarations.tolerances(chapter.path)
        # seed 0 may have moved within the claim's tolerance (new numerics): it is the
        # published run, which the ledger pools in its place anyway
        moved_far = [problem for zero, now in moves
                     if (problem := same_result(zero, now, tolerances.get(zero["id"])))]
        if len(found) != len(changed) + len(moves) or moved_far:
            log(f"{chapter.name}: not carried over: "
                + "; ".join(moved_far or [f for f in found if "input changed" not in f
                                          and "seed 0 in the record" not in f]))
            continue
        seed = max(record["seeds"])
        if seed == 0:
            continue
        if moves:
            changed = [*changed, f"seed 0 moved within tolerance in {len(moves)} claim(s)"]
        candidates[chapter.name] = (chapter, record, states, seed, changed)
        todo += [RunSpec.of(s.source, {"seed": seed}) for s in states if s.claims]
    reruns: dict[str, list] = {}
    for result in execute_all(todo, jobs=jobs, scheduler=scheduler, progress=False, log=log):
        reruns.setdefault(result.chapter, []).append(result)
    kept = {}
    for name, (chapter, record, states, seed, changed) in candidates.items():
        results = reruns.get(name, [])
        failed = [r.error for r in results if not r.ok]
        if failed:
            log(f"{name}: not carried over: {'; '.join(failed)}")
            continue
        now = {(r.notebook, c["id"]): c for r in results for c in r.record["claims"]}
        tolerances = declarations.tolerances(chapter.path)
        differ = []
        for c in record["claims"]:
            key = (c["notebook"], c["id"])
            then = c["seeds"].get(str(seed))
            if then is None:
                continue
            if key not in now:
                differ.append(f"{c['id']}: not reported")
                continue
            problem = same_result({"id": c["id"], **then}, now[key],
                                  tolerances.get(c["id"]))
            if problem:
                differ.append(problem)
        if differ:
            log(f"{name}: not carried over; seed {seed} measures differently now: "
                + "; ".join(differ))
            continue
        published_ = {(s.source.name, c["id"]): c for s in states for c in s.claims}
        claims = []
        for c in record["claims"]:  # seed 0 is the published run, as the ledger pools it
            now0 = published_.get((c["notebook"], c["id"]))
            seeds = dict(c["seeds"])
            if now0 is not None and "0" in seeds:
                seeds["0"] = {k: now0.get(k) for k in ("value", "interval", "verdict")}
            claims.append({**c, "seeds": seeds})
        kept[name] = {**record, "claims": claims, "inputs": _inputs(states), "carried": [
            *record.get("carried", []),
            {"date": datetime.date.today().isoformat(), "seed": seed, "changed": changed}]}
        log(f"{name}: seed {seed} measures what the record holds; the record is carried over")
    return kept


def write(chapter: notebooks.Chapter, record: dict) -> Path:
    path = record_path(chapter)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(record, indent=1, sort_keys=False) + "\n")
    partial.replace(path)
    return path


def read(chapter: notebooks.Chapter) -> dict | None:
    path = record_path(chapter)
    return json.loads(path.read_text()) if path.exists() else None


def _changed_inputs(record: dict) -> list[str]:
    """The record's inputs whose digest differs from today's (or that are gone)."""
    return [rel for rel, digest in record["inputs"].items() if _digest(rel) != digest]


def _seed0_moves(record: dict, states) -> list[tuple[dict, dict]]:
    """``[(the record's seed 0, the published claim)]`` for each claim whose published value
    is not the value the record holds for seed 0 (timed claims aside: every run times anew)."""
    published_ = {(s.source.name, c["id"]): c for s in states if s.record for c in s.claims}
    timed = {i for s in states
             for i, d in declarations.for_notebook(s.source.parent, s.source.stem).items()
             if d.timed}
    moves = []
    for c in record["claims"]:
        now = published_.get((c["notebook"], c["id"]))
        zero = c["seeds"].get("0")
        if now and zero and c["id"] not in timed and now["value"] != zero["value"]:
            moves.append(({"id": c["id"], **zero}, now))
    return moves


def problems(chapter: notebooks.Chapter) -> list[str]:
    """Why the chapter's seed record is missing or stale; empty when it is current."""
    record = read(chapter)
    if record is None:
        return [f"{chapter.name}: no {RECORD} (run `make robustness CHAPTER={chapter.name[:2]}`)"]
    if "claims" not in record or any("published" in c for c in record["claims"]):
        return [f"{chapter.name}: {RECORD} has the old format; run the seeds again"]
    found = [f"{chapter.name}: input changed since the seeds ran: {rel}"
             for rel in _changed_inputs(record)]
    states = [state(py) for py in chapter.notebooks]
    now = {(s.source.name, c["id"]) for s in states if s.record for c in s.claims}
    covered = {(c["notebook"], c["id"]) for c in record["claims"]}
    if now != covered:
        found.append(f"{chapter.name}: claims changed since the seeds ran: "
                     f"{sorted(now ^ covered)}")
    for zero, now_ in _seed0_moves(record, states):
        found.append(f"{chapter.name}: {zero['id']}: seed 0 in the record is "
                     f"{zero['value']!r}, the published notebook's {now_['value']!r}")
    return found