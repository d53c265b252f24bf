"""Every chapter notebook: clean sources, identical pairs, fresh outputs, quick mode in budget."""

import time

import nbformat
import pytest

from icml25.book import ledger, notebooks, paths, runner
from icml25.book.staleness import state

SOURCES = [py for chapter in notebooks.chapters() for py in chapter.notebooks]
IDS = [paths.relative(py) for py in SOURCES]
BOOK_BUDGET_S, QUICK_BUDGET_S = 90, 20


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


def test_chapters_fit_the_book_budget():
    for chapter in notebooks.chapters():
        seconds = sum(state(py).duration or 0 for py in chapter.notebooks)
        assert seconds <= BOOK_BUDGET_S, f"{chapter.name} took {seconds:.0f} s in book mode"


def test_claims_ledger_is_generated_from_the_notebooks():
    outdated = [paths.relative(p) for p in ledger.outdated()]
    assert not outdated, f"out of date: {outdated}; run `python -m icml25.book ledger`"


def test_toc_lists_every_chapter_notebook():
    toc = (paths.ROOT / "_toc.yml").read_text()
    for py in SOURCES:
        assert paths.relative(py.with_suffix("")) in toc


@pytest.mark.slow
@pytest.mark.parametrize("chapter", notebooks.chapters(), ids=lambda c: c.name)
def test_quick_mode_runs_in_budget(chapter):
    started = time.perf_counter()
    results = runner.run([chapter], {"mode": "quick"}, progress=False, log=lambda *_: None)
    seconds = time.perf_counter() - started
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert all(r.output.startswith("_build/runs/") for r in results)
    # The budget is 20 s on an idle 2-core machine; the tests run beside other workers.
    assert seconds <= 2 * QUICK_BUDGET_S, f"quick mode took {seconds:.0f} s"
