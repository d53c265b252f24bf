"""The published book: a warning-free Jupyter Book build, then every page in a real browser.

Chromium (Debian's, driven by Playwright; no browser download) opens every page from a loopback
HTTP server with all other network traffic blocked, and checks that figures load, math is
rendered by MathJax, nothing external is requested and the console has no errors.
"""

import itertools
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

from icml25.common import paths

pytestmark = pytest.mark.slow
CHROMIUM = "/usr/bin/chromium"
HTML = paths.BUILD / "html"


@pytest.fixture(scope="module")
def build():
    """Build the book the way the tests demand: nitpicky, warnings as errors, keep going."""
    shutil.rmtree(paths.BUILD / ".doctrees", ignore_errors=True)
    jb = Path(sys.executable).with_name("jupyter-book")
    done = subprocess.run(
        [str(jb), "build", str(paths.ROOT), "-n", "-W", "--keep-going", "--builder", "html"],
        capture_output=True, text=True, timeout=900,
    )
    return done


def test_book_builds_without_warnings(build):
    log = build.stdout + build.stderr
    warnings = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
    assert build.returncode == 0 and not warnings, "\n".join(warnings) or log[-3000:]


def test_every_chapter_page_is_built(build):
    for nb in paths.CHAPTERS.glob("*/*.ipynb"):
        page = HTML / nb.relative_to(paths.ROOT).with_suffix(".html")
        assert page.exists(), f"{page} was not built"
    assert (HTML / "book" / "claims.html").exists()


def test_no_repository_button_without_a_repository_and_the_py_source_is_offered(build):
    page = (HTML / "chapters" / "11-sotdd" / "method.html").read_text()
    assert "repository-button" not in page and "edit-button" not in page
    assert "_sources/chapters/11-sotdd/method.py" in page
    assert (HTML / "_sources" / "chapters" / "11-sotdd" / "method.py").exists()
    # the student edition is offered beside it, without the solutions
    assert "download-student-button" in page
    edition = (HTML / "_student" / "chapters" / "11-sotdd" / "method.ipynb").read_text()
    assert "{solution" not in edition and '"student"' in edition


@pytest.fixture(scope="module")
def server(build):
    from icml25.book.site.printing import serve

    assert build.returncode == 0, "the book did not build"
    with serve(HTML) as url:
        yield url


PAGES = ["index.html", "book/intro.html", "book/reexecute.html", "book/teaching.html",
         "book/syllabus.html", "book/primer.html",
         "book/claims.html", "book/performance.html", "book/authors.html", "book/glossary.html",
         "book/references.html"]


def pages():
    found = list(PAGES)
    for chapter in sorted(paths.CHAPTERS.glob("[0-9][0-9]-*")):
        rel = chapter.relative_to(paths.ROOT).as_posix()
        found.append(f"{rel}/index.html")
        found += [f"{rel}/{nb.stem}.html" for nb in sorted(chapter.glob("*.ipynb"))]
    return found


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is installed by .ci/run")
def test_every_page_renders_offline(server):
    from playwright.sync_api import sync_playwright

    problems = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"],
        )
        for page_path in pages():
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            external, errors = [], []

            def route(request_route, external=external):
                host = urlparse(request_route.request.url).hostname
                if host in ("127.0.0.1", None) or request_route.request.url.startswith("data:"):
                    request_route.continue_()
                else:
                    external.append(request_route.request.url)
                    request_route.abort()

            page.route("**/*", route)
            page.on("console", lambda m, errors=errors: m.type == "error" and errors.append(m.text))
            page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            response = page.goto(f"{server}/{page_path}", wait_until="load")
            if response is None or response.status != 200:
                problems.append(f"{page_path}: HTTP {response and response.status}")
                page.close()
                continue
            if page.locator(".math").count():
                try:
                    page.wait_for_function(  # every math element typeset by MathJax
                        "Array.from(document.querySelectorAll('.math'))"
                        ".every(e => e.querySelector('mjx-container'))", timeout=30_000)
                except Exception:
                    problems.append(f"{page_path}: math present but not rendered by MathJax")
            page.wait_for_load_state("networkidle")
            if page.evaluate("document.querySelectorAll('img[loading=lazy]').length"):
                page.evaluate("document.querySelectorAll('img[loading=lazy]')"
                              ".forEach(i => { i.loading = 'eager'; })")  # load them all
                page.wait_for_load_state("networkidle")
                page.wait_for_function("Array.from(document.images).every(i => i.complete)")
            broken = page.evaluate(
                "Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0)"
                ".map(i => i.src)"
            )
            problems += [f"{page_path}: image did not load: {src}" for src in broken]
            wide = page.evaluate(  # code wider than its column: the reader must scroll sideways
                "Array.from(document.querySelectorAll('main pre'))"
                ".filter(e => e.innerText.trim() && e.scrollWidth > e.clientWidth + 2)"
                ".map(e => e.innerText.split('\\n').find(l => l.length > 88) || e.innerText.slice(0, 80))"
            )
            problems += [f"{page_path}: code wider than its column: {line[:100]!r}"
                         for line in wide]
            kept = page.evaluate(  # the bookkeeping of a code cell is not shown
                "Array.from(document.querySelectorAll('main pre'))"
                ".map(e => e.innerText).filter(t => /book\\.(glue|claim)\\(/.test(t))"
                ".map(t => t.slice(0, 80))")
            problems += [f"{page_path}: bookkeeping shown: {t!r}" for t in kept]
            bare = page.evaluate(  # every figure numbered, captioned and described (a front-page
                # card's thumbnail is described; its numbered figure is in the chapter)
                "Array.from(document.querySelectorAll('main img'))"
                ".filter(i => (!i.classList.contains('sd-card-img-top')"
                " && !i.closest('figure')?.querySelector('figcaption .caption-number'))"
                " || !(i.getAttribute('alt') || '').trim()"
                " || /^(_images|\\.\\.)\\//.test(i.getAttribute('alt')))"
                ".map(i => i.getAttribute('src'))"
            )
            problems += [f"{page_path}: image without a numbered caption or alt text: {src}"
                         for src in bare]
            text = page.inner_text("main")
            if re.search(r"\b[0-9a-f]{64}\b", text):
                problems.append(f"{page_path}: a sha256 digest is shown (provenance dump)")
            # on a phone nothing widens the page: wide tables, equations and outputs scroll
            # within the column, long paths break
            page.set_viewport_size({"width": 390, "height": 844})
            width = page.evaluate("document.documentElement.scrollWidth")
            if width > 392:
                problems.append(f"{page_path}: {width} px wide on a 390 px screen")
            problems += [f"{page_path}: external request: {url}" for url in external]
            problems += [f"{page_path}: console error: {text}" for text in errors]
            page.close()
        browser.close()
    assert not problems, "\n".join(problems)


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is installed by .ci/run")
def test_chapter_pages_show_figures_and_numbers(server):
    from playwright.sync_api import sync_playwright

    from icml25.book.run import notebooks

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        page.route("**/*", lambda r: r.continue_() if "127.0.0.1" in r.request.url else r.abort())
        page.goto(f"{server}/chapters/11-sotdd/reproduction.html", wait_until="load")
        assert page.locator("img").count() >= 4
        text = page.inner_text("main")
        assert page.locator(".icml25-claim").count() >= 4 and "{glue" not in text
        assert "DOES NOT HOLD" not in text and "HOLDS:" not in text  # boxes, not log lines
        # The boxes show the verdict pooled over the seeds, with the run on the page beside it.
        assert text.count("Ours, over the seeds") == page.locator(".icml25-claim").count()
        assert "This run (seed 0)" in text
        for data in ("claims.json", "claims.csv", "headline.json", "headline.csv"):
            response = page.request.get(f"{server}/_static/{data}")
            assert response.ok and "verdict" in response.text()
        page.goto(f"{server}/book/intro.html", wait_until="load")  # one card per chapter
        cards = page.locator(".sd-card")
        assert cards.count() == len(list(paths.CHAPTERS.glob("[0-9][0-9]-*/index.md")))
        assert cards.locator("img.sd-card-img-top").count() == cards.count()
        landing = page.inner_text("main")  # the headline counts the papers' headline claims
        assert "headline claims of the 19 papers hold as stated" in landing
        # Each card says its verdicts in colour: one badge per verdict that occurs.
        assert all(cards.nth(i).locator(".sd-badge").count() >= 1 for i in range(cards.count()))
        assert cards.locator(".sd-bg-danger, .sd-bg-warning").count() >= 1
        for chapter in notebooks.chapters():  # and under every chapter's title
            page.goto(f"{server}/chapters/{chapter.name}/index.html", wait_until="load")
            strip = page.locator("main h1 + p, main section > h1 ~ p").first
            assert strip.locator(".sd-badge").count() >= 1, f"{chapter.name}: no verdict strip"
            # Figures and exercises carry the chapter's number; "Next" follows the chapters'
            # numbers, as the landing page's cards do.
            for name in ("method", "reproduction"):
                page.goto(f"{server}/chapters/{chapter.name}/{name}.html", wait_until="load")
                captions = page.locator("main .caption-number")
                numbers = captions.all_text_contents()  # hidden ones (a closed solution) too
                ours = re.compile(rf"\b{int(chapter.name[:2])}\.\d+\b")
                stray = [n for n in numbers if not ours.search(n)]
                assert not stray, f"{chapter.name}/{name}: numbered outside the chapter: {stray}"
        chapters = notebooks.chapters()
        for before, after in itertools.pairwise(chapters):
            page.goto(f"{server}/chapters/{before.name}/reproduction.html", wait_until="load")
            href = page.locator("a.right-next").get_attribute("href")
            assert href.endswith(f"{after.name}/index.html"), f"{before.name} -> {href}"
        page.goto(f"{server}/chapters/11-sotdd/index.html", wait_until="load")
        assert page.locator("details.ledger-test").count() >= 1  # its tests, one line each
        # Math in a verdict box is typeset, not left as \\( ... \\)
        page.goto(f"{server}/chapters/12-equal-share/reproduction.html", wait_until="load")
        page.wait_for_load_state("networkidle")
        page.wait_for_function("document.querySelectorAll('.icml25-claim mjx-container')"
                               ".length > 0", timeout=30_000)
        boxes = " ".join(page.locator(".icml25-claim").all_inner_texts())
        assert "\\(" not in boxes and "$" not in boxes, "math left raw in a verdict box"
        # The Performance page: every kernel beside its peers, the authors' code labelled
        page.goto(f"{server}/book/performance.html", wait_until="load")
        text = page.inner_text("main")
        assert page.locator("main table tr").count() >= 6 and "recorded elsewhere" in text
        assert all(k in text for k in ("s-OTDD", "MFC", "SKS"))
        # Against the authors' code: a row per chapter, and a section for each recorded one
        page.goto(f"{server}/book/authors.html", wait_until="load")
        chapters = sorted(p.name for p in paths.CHAPTERS.glob("[0-9][0-9]-*"))
        assert page.locator("main table tbody tr").count() == len(chapters)
        from icml25.book.site import authors

        for record in authors.records():
            assert page.locator(f"#{authors.anchor(record['chapter'])}").count() == 1
        for path in pages():  # a page that makes claims shows them as verdict boxes, up front
            nb = paths.ROOT / path.replace(".html", ".ipynb")
            if not nb.exists() or "book.claim(" not in nb.read_text():
                continue
            page.goto(f"{server}/{path}", wait_until="load")
            assert page.locator(".icml25-claim").count() >= 1, f"{path}: no verdict box"
            if path.endswith("reproduction.html"):
                glance = page.locator(".admonition", has_text="Results at a glance")
                assert glance.count() == 1, f"{path}: no results-at-a-glance box"
                assert glance.locator(".sd-badge").count() >= 1, f"{path}: empty glance box"
        # Page weight: a page without math loads at most 1.5 MB, and every icon still renders
        # from the cut Font Awesome (an icon it lacks would stay an empty <i> element).
        loaded = []
        page.on("response", lambda r: loaded.append(len(r.body()) if r.ok else 0))
        for path in ("book/reexecute.html", "chapters/11-sotdd/index.html"):
            loaded.clear()
            page.goto(f"{server}/{path}", wait_until="load")
            page.wait_for_load_state("networkidle")
            if not page.locator(".math").count():
                assert sum(loaded) <= 1.5e6, f"{path}: {sum(loaded) / 1e6:.2f} MB"
            assert page.locator("svg.svg-inline--fa").count() >= 3
            assert page.locator("i[class*='fa-']").count() == 0, f"{path}: an icon is missing"
        # On a phone (390 px) every figure keeps its aspect ratio, and its text stays
        # readable: drawn at 100 dpi, the book's smallest style font (9 pt, ticks and legends)
        # is 12.5 px at the figure's drawn width; on the page it must stay at least 10 px, the
        # figure scrolling sideways within its column, not the page.
        from icml25.book import plotting

        smallest = min(plotting.STYLE[k] for k in ("xtick.labelsize", "ytick.labelsize",
                                                   "legend.fontsize", "axes.labelsize"))
        px_at_drawn_size = smallest * plotting.STYLE["savefig.dpi"] / 72
        page.set_viewport_size({"width": 390, "height": 844})
        for path in ("chapters/11-sotdd/reproduction.html", "chapters/16-sum-of-parts/method.html",
                     "chapters/04-dct-gmm/reproduction.html"):
            page.goto(f"{server}/{path}", wait_until="load")
            page.wait_for_load_state("networkidle")
            page.evaluate("document.querySelectorAll('img[loading=lazy]')"
                          ".forEach(i => { i.loading = 'eager'; })")
            page.wait_for_function("Array.from(document.images).every(i => i.complete)")
            shapes = page.evaluate(  # myst-nb writes the drawn size into the style
                "Array.from(document.querySelectorAll('main img:not(.sd-card-img-top)'))"
                ".filter(i => i.naturalWidth && parseFloat(i.style.width))"
                ".map(i => [i.getAttribute('src'), i.clientWidth, i.clientHeight,"
                " i.naturalWidth / i.naturalHeight, parseFloat(i.style.width)])")
            assert shapes, path  # (16's method page has two figures)
            squashed = [src for src, w, h, ratio, _ in shapes if abs(w / h / ratio - 1) > 0.02]
            assert not squashed, f"{path}: figures squashed at 390 px: {squashed}"
            small = [(src, round(px_at_drawn_size * w / drawn, 1))
                     for src, w, _, _, drawn in shapes if px_at_drawn_size * w / drawn < 10]
            assert not small, f"{path}: figure text under 10 px at 390 px: {small}"
            assert page.evaluate("document.documentElement.scrollWidth") <= 392, path
        browser.close()


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is installed by .ci/run")
def test_a_chapter_prints_into_one_pdf_linked_from_its_pages(build):
    from pypdf import PdfReader

    from icml25.book.run import notebooks
    from icml25.book.site import printing

    [chapter] = notebooks.select(["11"])
    [pdf] = printing.write([chapter], html=HTML, log=lambda *_: None)
    reader = PdfReader(pdf)
    assert len(reader.pages) >= 10  # front page, method and reproduction
    first = reader.pages[0].extract_text()
    assert "s-OTDD" in first and "Contents" not in first  # the text, not the navigation
    assert first.lstrip().startswith("11. s-OTDD")  # the page's title prints first
    assert reader.metadata.title == printing.title(chapter)  # what a PDF viewer shows
    outline = [item for item in reader.outline if not isinstance(item, list)]
    assert len(outline) >= 3 and any("reproduction" in o.title.lower() for o in outline)
    text = "".join(p.extract_text() for p in reader.pages)
    assert "Show code cell source" not in text  # a hidden cell prints nothing
    book = PdfReader(printing.write_book([chapter], html=HTML, log=lambda *_: None))
    assert [o.title for o in book.outline if not isinstance(o, list)] == [printing.title(chapter)]
    page = (HTML / "chapters" / "11-sotdd" / "reproduction.html").read_text()
    assert "../../_pdf/11-sotdd.pdf" in page and "../../_pdf/icml25-book.pdf" in page
    assert "download-pdf-button" not in page  # one entry per PDF: not the theme's as well
    front = (HTML / "chapters" / "11-sotdd" / "index.html").read_text()
    assert "Run this chapter" in front and "CHAPTER=11" in front  # code splits at spaces
    assert "../../_downloads/icml25-book.zip" in front
    assert "../../_downloads/icml25-11.zip" in front  # the chapter's own archive
    listing = text.count("Listing 11.")  # every listing prints, folded or not
    assert listing >= 3, f"{listing} listings printed"


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is installed by .ci/run")
def test_the_ledger_fits_its_page_and_filters(server):
    """The claims ledger at a desktop's and a phone's width: nothing wider than its column or
    the screen, no revision history in its text, the chapters' tests folded, the filter
    showing only what it is asked for."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for width in (1400, 390):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.route("**/*", lambda r: r.continue_() if "127.0.0.1" in r.request.url
                       else r.abort())
            page.goto(f"{server}/book/claims.html", wait_until="load")
            wide = page.evaluate(
                "Array.from(document.querySelectorAll('main table, main details, main p, "
                "main li')).filter(e => e.scrollWidth > e.clientWidth + 2"
                " && e.innerText.trim() && e.getBoundingClientRect().width > 0)"
                ".map(e => e.innerText.slice(0, 60))")
            assert not wide, (width, wide[:5])
            assert page.evaluate("document.documentElement.scrollWidth") <= width + 2, width
            text = page.inner_text("main")
            assert "->" not in text and "replaces" not in text, width
            chapters = page.locator("details.ledger-chapter")
            assert chapters.count() == 19
            assert page.locator("details.ledger-chapter[open]").count() == 0  # folded
            page.select_option("select[data-filter=verdict]", "does-not-hold")
            shown = page.evaluate("Array.from(document.querySelectorAll('.ledger-test'))"
                                  ".filter(e => !e.hidden).map(e => e.className)")
            assert shown and all("verdict-does-not-hold" in c for c in shown)
            page.close()
        browser.close()
