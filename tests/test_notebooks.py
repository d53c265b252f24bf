"""Every chapter notebook: clean sources, identical pairs, fresh outputs and seed records.

No test here times anything: budgets are read from the durations the executions recorded and
reported by `make status` (a test that timed a run under its own load would fail on a busy
machine and prove nothing on an idle one).
"""

import re

import nbformat
import pytest

from icml25.book.site import ledger
from icml25.book.run import notebooks, robustness, runner
from icml25.common import paths
from icml25.book.run.staleness import state

SOURCES = [py for chapter in notebooks.chapters() for py in chapter.notebooks]
IDS = [paths.relative(py) for py in SOURCES]
CHAPTERS = notebooks.chapters()


def test_there_are_chapters():
    assert SOURCES, "no chapter notebooks found under chapters/"


@pytest.mark.parametrize("py", SOURCES, ids=IDS)
def test_source_is_clean(py):
    text = py.read_text()
    assert "injected-parameters" not in text, "an injected papermill cell was saved in the source"
    assert "papermill" not in text.split("\n# %%")[0], "papermill metadata in the source header"
    assert text.startswith("# %%"), "the source must be py:percent with no notebook metadata header"
    assert not notebooks.clean_source_needed(py), "run `python -m icml25.book clean`"


@pytest.mark.parametrize("py", SOURCES, ids=IDS)
def test_structure(py):
    nb = notebooks.read_source(py)
    declared = notebooks.parameters(py)
    assert declared["mode"].default == "book", "the parameters cell must default to book mode"
    assert "seed" in declared
    assert notebooks.code_cells(nb)[-1] == "book.finish()", "the last code cell must be book.finish()"


@pytest.mark.parametrize("py", SOURCES, ids=IDS)
def test_pair_has_identical_code(py):
    executed = py.with_suffix(".ipynb")
    assert executed.exists(), f"{executed.name} is missing: run `make run CHAPTER=...`"
    nb = nbformat.read(executed, as_version=4)
    assert notebooks.code_cells(nb) == notebooks.code_cells(notebooks.read_source(py))


@pytest.mark.parametrize("py", SOURCES, ids=IDS)
def test_published_notebook_is_fresh(py):
    s = state(py)
    assert not s.stale, f"stale ({'; '.join(s.reasons)}): re-execute with `make book`"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_seed_robustness_record_is_current(chapter):
    problems = robustness.problems(chapter)
    assert not problems, "; ".join(problems)


@pytest.mark.parametrize("py", SOURCES, ids=IDS)
def test_every_claim_cell_is_compared_by_the_tests(py):
    nb = nbformat.read(py.with_suffix(".ipynb"), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and "book.claim(" in cell.source:
            assert "nbval-check-output" in cell.metadata.get("tags", []), cell.source[:80]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_every_failed_claim_gives_a_reason(chapter):
    from icml25.book.site import ledger

    for row in ledger.rows(chapter):
        if row.verdict == "does not hold" or row.published.verdict == "does not hold":
            why = row.published.note.strip() or (row.declaration and row.declaration.why)
            assert why, f"claim {row.id!r} does not hold and says not why"


@pytest.mark.parametrize("py", SOURCES, ids=IDS)
def test_code_fits_88_columns(py):
    nb = notebooks.read_source(py)
    long = [line for cell in nb.cells if cell.cell_type == "code"
            for line in cell.source.splitlines() if len(line) > 88]
    assert not long, f"{len(long)} code line(s) over 88 columns, e.g. {long[0]!r}"


#: Words of the team's notes that a reader never sees (they have the paper, not our notes).
INTERNAL = re.compile(r"\b(brief|briefs|pilot|pilots|issue tracker|wording unverified|"
                      r"we could not check)\b", re.I)


def _reader_facing():
    yield from SOURCES
    for chapter in CHAPTERS:
        yield from chapter.path.glob("*.md")
    yield from paths.BOOK.glob("*.md")


@pytest.mark.parametrize("path", list(_reader_facing()), ids=paths.relative)
def test_no_internal_vocabulary_reaches_the_reader(path):
    hits = [f"line {n}: {line.strip()[:100]}" for n, line in
            enumerate(path.read_text().splitlines(), 1) if INTERNAL.search(line)]
    assert not hits, "internal words in reader-facing text:\n" + "\n".join(hits)


def test_claims_ledger_is_generated_from_the_notebooks():
    outdated = [paths.relative(p) for p in ledger.outdated()]
    assert not outdated, f"out of date: {outdated}; run `python -m icml25.book ledger`"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_front_page_card_has_its_question_finding_and_prerequisites(chapter):
    from icml25.book.site import landing

    assert not landing.problems(chapter)
    assert landing.fields(chapter)["question"].endswith("?"), "the card's question asks nothing"


def test_toc_lists_every_chapter_notebook():
    toc = (paths.ROOT / "_toc.yml").read_text()
    for py in SOURCES:
        assert paths.relative(py.with_suffix("")) in toc


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_quick_mode_runs(chapter):
    results = runner.run([chapter], {"mode": "quick"}, progress=False, log=lambda *_: None)
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert all(r.output.startswith("_build/runs/") for r in results)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_front_page_card_stands_alone_and_is_short(chapter):
    """A card is read without its chapter: its question names its subject (no "this reward",
    "such a model") and its finding, the first sentence of "What we found.", is short."""
    import re

    from icml25.book.site import landing

    found = landing.fields(chapter)
    assert not re.search(r"\b(such an?|this|these|those)\b", found["question"],
                         re.I), \
        f"the card's question leans on the text before it: {found['question']}"
    finding = landing.first_sentence(found["finding"])
    assert len(finding.split()) <= 45, f"the card's finding has {len(finding.split())} words"


_NEGATIVE = re.compile(r"\b(not|no|fails?|failed|misses|short of|falls? short)\b", re.I)
_UNDECIDED = re.compile(r"\b(undecided|inconclusive|not decided|too close to call|open)\b", re.I)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_summary_sentences_agree_with_the_verdicts_they_name(chapter):
    """A sentence of "What we found." that names a claim ({claim}`id`, shown as the claim's
    pooled verdict) says what the verdict says: a claim that does not hold is not reported as
    holding, an undecided one as decided."""
    from icml25.book.site import landing, ledger

    verdicts = {r.id: r.verdict for r in ledger.rows(chapter)}
    for sentence in landing._sentences(landing.fields(chapter)["finding"] or ""):
        for claim_id in re.findall(r"\{claim\}`([^`]+)`", sentence):
            assert claim_id in verdicts, f"{{claim}}`{claim_id}`: no such claim"
            verdict = verdicts[claim_id]
            if verdict == "does not hold":
                assert _NEGATIVE.search(sentence), f"{claim_id} does not hold: {sentence}"
            elif verdict == "inconclusive":
                assert _UNDECIDED.search(sentence), f"{claim_id} is undecided: {sentence}"
            else:
                assert not _UNDECIDED.search(sentence) and "does not hold" not in sentence, \
                    f"{claim_id} holds: {sentence}"


def test_the_chapter_template_runs_from_a_copy_and_declares_its_claims(tmp_path):
    """``chapters/_template`` is what a new chapter starts from: its notebooks run as they
    stand (book mode, from a copy) and report only claims that its ``claims.toml`` declares."""
    import os
    import shutil
    import subprocess
    import sys

    from icml25.book import declarations

    template = paths.CHAPTERS / "_template"
    copy = tmp_path / "99-template"
    shutil.copytree(template, copy)
    declared = declarations.load(copy)
    for name in ("method", "reproduction"):
        source = (copy / f"{name}.py").read_text()
        reported = set(re.findall(r'book\.claim\("([^"]+)"', source))
        assert reported and reported == {i for i, d in declared.items() if d.notebook == name}
        done = subprocess.run([sys.executable, f"{name}.py"], cwd=copy, capture_output=True,
                              text=True, timeout=120, env={**os.environ, "MPLBACKEND": "Agg"})
        assert done.returncode == 0, done.stderr[-2000:]
        assert "HOLDS" in done.stdout.upper()


#: The method modules of each chapter (the README's table); ``minilm`` is the shared encoder.
METHOD_MODULES = {
    "01": {"cross_learning"}, "02": {"microscopy_mae"}, "03": {"tta"}, "04": {"dct_gmm"},
    "05": {"sae_probing", "minilm"}, "06": {"motion_transfer"}, "07": {"transfer_theory"},
    "08": {"rate", "minilm"}, "09": {"selfcite"}, "10": {"kernel_pde"},
    "11": {"sotdd", "sotdd_transfer"}, "12": {"equal_share"}, "13": {"vfl_coresets"},
    "14": {"optimistic"}, "15": {"metric_mst"}, "16": {"sum_of_parts"}, "17": {"htmp"},
    "18": {"cell_diff"}, "19": {"rationales", "minilm"},
}


def test_a_method_module_is_an_input_of_its_own_chapters_only():
    """Provenance is precise: a change to a method's arithmetic stales the chapters that ran
    it and no other (the modules a run imported are its inputs, by code digest)."""
    assert sorted(METHOD_MODULES) == [f"{c.number:02d}" for c in notebooks.chapters()]
    for chapter in notebooks.chapters():
        for py in chapter.notebooks:
            record = state(py).record
            inputs = record.get("inputs", {}) if record else {}
            used = {rel.split("/")[2].removesuffix(".py") for rel in inputs
                    if rel.startswith("lib/icml25/")
                    and rel.split("/")[2] not in ("book", "common", "__init__.py")}
            assert used and used <= METHOD_MODULES[f"{chapter.number:02d}"], (py.name, used)


def test_no_run_reads_the_build_time_declarations():
    """A run reads only the fields that decide its verdicts (icml25.book.declared); the full
    declarations module, with its words, labels and validation, is read when the pages are
    built. So no published notebook lists it among its inputs, and a new build-time field of a
    declaration re-executes nothing."""
    from icml25.book import declarations, declared

    for chapter in notebooks.chapters():
        parsed = declarations.load(chapter.path)
        # the two readers of claims.toml agree on what a run reads
        assert declared.run_fields(chapter.path) == {i: d.run_fields() for i, d in parsed.items()}
        for py in chapter.notebooks:
            record = state(py).record
            inputs = record.get("inputs", {}) if record else {}
            if record and record.get("claims"):  # a notebook that reports claims reads them
                assert "lib/icml25/book/declared.py" in inputs, py
            assert "lib/icml25/book/declarations.py" not in inputs, py


@pytest.mark.parametrize("py", [c.path / "method.py" for c in notebooks.chapters()],
                         ids=lambda p: p.parent.name)
def test_the_first_listing_of_a_method_starts_open(py):
    """The method's code beside the idea: its first listing is open on the page (the prose
    names its variables); the others may start folded, and every one prints."""
    lines = py.read_text().split("\n")
    first = next((i for i, line in enumerate(lines)
                  if line.startswith("# :::{dropdown} The code")), None)
    if first is not None:
        assert lines[first + 1].strip() == "# :open:", f"{py.name}: first listing folded"
