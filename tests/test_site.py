"""icml25.book.site: what the build adds to the pages (the glance box) and the run spec's rules."""

import json

import pytest
from icml25.book.params import ParameterError
from icml25.book.run.spec import RunSpec
from icml25.book.site import sphinx_ext
from icml25.common import paths


def test_the_build_inserts_the_glance_box_once_under_the_title():
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# Title"},
                    {"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": [],
                     "execution_count": None}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    once = sphinx_ext.with_glance(json.dumps(nb))
    cells = json.loads(once)["cells"]
    assert [c["cell_type"] for c in cells] == ["markdown", "markdown", "code"]
    assert "{include} _glance.md" in cells[1]["source"]
    assert sphinx_ext.with_glance(once) == once


def test_a_run_spec_knows_whether_it_publishes_and_where_it_writes():
    source = paths.CHAPTERS / "12-equal-share" / "method.py"
    published = RunSpec.of(source)
    assert published.publishes and published.target == source.with_suffix(".ipynb")
    assert published.injected is None and published.mode == "book"
    seeded = RunSpec.of(source, {"seed": 3})
    assert not seeded.publishes and seeded.tag == "book.seed=3"
    assert seeded.target == paths.RUNS / "12-equal-share" / "method.book.seed=3.ipynb"
    assert seeded.injected == {"seed": 3}
    quick = RunSpec.of(source, {"mode": "quick"})
    assert not quick.publishes and quick.target.name == "method.quick.ipynb"


@pytest.mark.parametrize("overrides, message", [
    ({"mode": "fast"}, "must be one of quick, book, paper"),
    ({"seed": -1}, "non-negative integer"),
    ({"sed": 3}, "unknown parameter 'sed'"),
])
def test_a_run_spec_refuses_what_the_notebook_does_not_take(overrides, message):
    with pytest.raises(ParameterError, match=message):
        RunSpec.of(paths.CHAPTERS / "12-equal-share" / "method.py", overrides)


def test_figures_and_exercises_are_numbered_per_chapter_in_reading_order():
    from icml25.book.site.sphinx_ext import per_chapter_numbers

    across_book = {
        "book/intro": {"figure": {"a": (1,)}},
        "chapters/15-metric-mst/reproduction": {"figure": {"r1": (101,), "r2": (103,)}},
        "chapters/15-metric-mst/method": {"figure": {"m1": (99,), "m2": (100,)},
                                          "exercise": {"e1": (7,)}},
        "chapters/01-cross/method": {"figure": {"x": (5,)}, "exercise": {"e": (3,)}},
    }
    numbers = per_chapter_numbers(across_book)
    assert numbers["book/intro"] == {"figure": {"a": (1,)}}
    assert numbers["chapters/15-metric-mst/method"] == {"figure": {"m1": (15, 1), "m2": (15, 2)},
                                                        "exercise": {"e1": (15, 1)}}
    assert numbers["chapters/15-metric-mst/reproduction"]["figure"] == {"r1": (15, 3),
                                                                        "r2": (15, 4)}
    assert numbers["chapters/01-cross/method"] == {"figure": {"x": (1, 1)},
                                                   "exercise": {"e": (1, 1)}}
    assert across_book["chapters/01-cross/method"]["figure"]["x"] == (5,)  # not mutated


def test_toc_orders_the_chapters_by_number_as_the_landing_page_does():
    from icml25.book.run import notebooks

    toc = (paths.ROOT / "_toc.yml").read_text()
    listed = [line.split("chapters/")[1].split("/")[0] for line in toc.splitlines()
              if line.strip().startswith("- file: chapters/") and line.endswith("/index")]
    assert listed == [c.name for c in notebooks.chapters()]


def test_chapter_titles_carry_two_digit_numbers():
    from icml25.book.run import notebooks

    for chapter in notebooks.chapters():
        title = (chapter.path / "index.md").read_text().splitlines()[0]
        assert title.startswith(f"# {chapter.name[:2]}. "), title


def test_the_course_guide_names_every_chapter():
    """The themed table is written by hand (which course a chapter fits is a judgement); the
    list of what each chapter teaches is generated from the chapters' front pages."""
    from icml25.book.run import notebooks
    from icml25.book.site import landing

    table = (paths.BOOK / "teaching.md").read_text().split("## What each chapter teaches")[0]
    chapters = notebooks.chapters()
    missing = [c.name for c in chapters if f"/chapters/{c.name}/index" not in table]
    assert not missing, f"the teaching page's course table misses {missing}"
    listed = landing.teaching_list(chapters)
    assert listed.count("\n- **[") == len(chapters) - 1 and "(not yet written)" not in listed


@pytest.mark.slow
def test_the_source_archive_runs_a_chapter_as_its_page_says(tmp_path):
    """Unpacked, the archive is a book of its own: a chapter runs in it (quick mode, with the
    project's interpreter: the packages are those `make` would install)."""
    import os
    import subprocess
    import sys
    import zipfile

    from icml25.book.site import archive

    written = archive.write(html=tmp_path / "html", log=lambda *_: None)
    with zipfile.ZipFile(written) as z:
        names = set(z.namelist())
        z.extractall(tmp_path)
    top = tmp_path / archive.TOP
    for needed in ("Makefile", "requirements.txt", "pyproject.toml", "data/MANIFEST",
                   "lib/icml25/__init__.py", "chapters/01-cross-learning-bandits/method.py",
                   "chapters/01-cross-learning-bandits/method.ipynb", "_toc.yml"):
        assert f"{archive.TOP}/{needed}" in names, f"the archive lacks {needed}"
    assert not any("/_build/" in n or "/.venv" in n for n in names)
    assert "make run CHAPTER=01" in archive.how_to_run("01-cross-learning-bandits")
    assert archive.chapter_archive("01") in archive.how_to_run("01-cross-learning-bandits")
    # a chapter's own archive: that chapter, the data its runs loaded, no other chapter
    with zipfile.ZipFile(written.with_name(archive.chapter_archive("11"))) as z:
        mine = set(z.namelist())
    assert "icml25-11/chapters/11-sotdd/reproduction.ipynb" in mine
    assert "icml25-11/data/reference/sotdd/authors_digits.npz" in mine
    assert not any("/chapters/01-" in n or "/data/selfcite/" in n for n in mine)
    assert written.with_name(archive.chapter_archive("11")).stat().st_size < 0.2 * \
        written.stat().st_size
    # the reader's path: chapter 01's own archive, unpacked, runs chapter 01
    with zipfile.ZipFile(written.with_name(archive.chapter_archive("01"))) as z:
        z.extractall(tmp_path)
    top = tmp_path / "icml25-01"
    env = {**os.environ, "PYTHONPATH": str(top / "lib")}
    env.pop("ICML25_ROOT", None)
    done = subprocess.run([sys.executable, "-m", "icml25.book", "run", "01", "--mode", "quick"],
                          cwd=top, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert list((top / "_build" / "runs").rglob("*.ipynb")), "no executed notebook in the copy"


def test_font_awesome_is_cut_to_the_icons_used_and_search_scripts_leave_other_pages():
    from icml25.book.site import weight

    script = ('var p={"trash-can":[448,512,[61460,"trash-alt"],"f2ed","M1 2z"],'
              'mandalorian:[448,512,[],"f50f","M3 4z"],"duo":[1,2,[],"e001",["M5z","M6z"]],'
              '"book":[448,512,[128212],"f02d","M7z"]};function go(){return p}')
    cut, kept, defined = weight.cut(script, {"trash-alt", "duo"})
    assert (kept, defined) == (2, 4)
    assert '"trash-can"' in cut and '"duo"' in cut and "mandalorian" not in cut
    assert '"book"' not in cut and cut.endswith("function go(){return p}")
    page = ('<head>\n  <script src="../_static/searchtools.js"></script>\n'
            '  <script src="../searchindex.js"></script>\n<script src="x.js"></script>\n')
    assert weight.without_search(page) == '<head>\n<script src="x.js"></script>\n'


def test_a_summary_names_a_claim_by_its_verdict_badge():
    from icml25.book.site.generated import claim_badges

    text = "It grows near-linearly {claim}`near-linear`, and fast {claim}`faster`."
    shown = claim_badges(text, {"near-linear": "holds", "faster": "does not hold"})
    assert shown == ("It grows near-linearly {bdg-success}`holds`, and fast "
                     "{bdg-danger}`does not hold`.")
    with pytest.raises(KeyError, match="no such claim"):
        claim_badges("{claim}`nope`", {"near-linear": "holds"})


def test_the_syllabus_plans_every_session_from_the_chapters():
    from icml25.book.run import notebooks
    from icml25.book.site import landing, ledger

    chapters = notebooks.chapters()
    counts = {c.name: ledger.counts(c) for c in chapters}
    text = landing.syllabus(chapters, counts)
    for title, _, numbers in landing.MODULES:
        assert f"## {title}" in text
        block = text.split(f"## {title}")[1].split("\n## ")[0]
        assert block.count("**Session ") == len(numbers)
        for part in ("*Before (pre-reading", "*Live demo", "*In class", "*Discussion",
                     "*Homework:*", "*Outcomes:*"):
            assert block.count(part) == len(numbers), (title, part)
    assert "none declared" not in text, "a session without an exercise to set"
    assert (paths.BOOK / "_syllabus.md").read_text().strip().endswith(text.strip())
    assert "book/syllabus" in (paths.ROOT / "_toc.yml").read_text()


def test_pages_show_the_computation_without_its_bookkeeping():
    from icml25.book.site.sphinx_ext import without_bookkeeping

    code = ('x = f(1)\n# the claims\nbook.glue("a", x)\nbook.claim(\n    "id", x,\n)\n'
            'for k in (1, 2):\n    book.glue(f"k{k}", k)\nprint(x)\n')
    assert without_bookkeeping(code) == "x = f(1)\nprint(x)"
    assert without_bookkeeping("book.glue(a=1)\nbook.claim('x', 1)") == ""
    # a call whose value is used is computation, not bookkeeping; broken code is left alone
    assert without_bookkeeping("y = book.glue(a=1)") == "y = book.glue(a=1)"
    assert without_bookkeeping("def (") == "def ("
    nested = ("for r in rows:\n    v = f(r)\n    book.claim(r, v)\n"
              "def g(x):\n    book.glue(a=x)\n    return x\n")
    assert without_bookkeeping(nested) == "for r in rows:\n    v = f(r)\ndef g(x):\n    return x"


def test_every_chapter_has_an_easy_exercise_for_class():
    from icml25.book.run import notebooks
    from icml25.book.site import landing

    missing = [c.name for c in notebooks.chapters()
               if not any(e["level"] == "easy" for e in landing.exercises(c))]
    assert not missing, f"no easy (in-class) exercise in {missing}"


def test_a_chapter_notebook_title_names_its_chapter_in_search_and_tabs():
    from icml25.book.site.sphinx_ext import chapter_title

    assert chapter_title("chapters/11-sotdd/reproduction", "Reproduction: transfer") == \
        "11 · Reproduction: transfer"
    assert chapter_title("chapters/11-sotdd/index", "11. s-OTDD") == "11. s-OTDD"
    assert chapter_title("book/claims", "Claims") == "Claims"


@pytest.mark.parametrize("chromium", [True, False])
def test_the_download_menu_offers_a_pdf_only_where_chromium_prints_it(tmp_path, monkeypatch,
                                                                       chromium):
    from types import SimpleNamespace

    from icml25.book.site import printing, sphinx_ext

    browser = tmp_path / "chromium"
    if chromium:
        browser.write_text("")
    monkeypatch.setattr(printing, "CHROMIUM", str(browser))
    app = SimpleNamespace(config=SimpleNamespace(html_theme_options={}))
    menu = {"type": "group", "icon": "fas fa-download", "buttons": []}
    context = {"pathto": lambda path, _: path, "header_buttons": [menu]}
    sphinx_ext._offer_prints_and_source(app, "chapters/11-sotdd/method", "page.html", context,
                                        None)
    labels = {b["label"] for b in menu["buttons"]}
    pdfs = {"download-chapter-pdf-button", "download-book-pdf-button"}
    assert (pdfs <= labels) if chromium else not (pdfs & labels)
    assert "download-book-source-button" in labels
