"""Printable chapters: each chapter's built pages printed by Chromium into one PDF.

``python -m icml25.book pdf`` (run by ``make html`` when Chromium is installed) serves the built
site from a loopback HTTP server, prints every chapter's front page, method and reproduction with
the machine's Chromium (driven by Playwright, network blocked, as in the browser test), merges
them with pypdf into ``_build/html/_pdf/NN-name.pdf``, and each chapter page links it from its
download menu (:mod:`.sphinx_ext`). Each PDF carries the chapter's title (its document title,
what a reader's PDF viewer shows) and an outline: one bookmark per section, from the pages'
headings. The whole book, every chapter in order under a bookmark of its title, is
``_pdf/icml25-book.pdf``. On paper, folded solutions stay folded and a hidden code cell prints
nothing (no "Show code cell source" line; ``book/_static/icml25.css``).
"""

from __future__ import annotations

import functools
import http.server
import io
import threading
from contextlib import contextmanager
from pathlib import Path

from icml25.book.run import notebooks
from icml25.common import paths

CHROMIUM = "/usr/bin/chromium"
FOLDER = "_pdf"
BOOK_PDF = "icml25-book.pdf"
BOOK_TITLE = "ICML 2025, Executable"


def pdf_path(chapter_name: str, html: Path | None = None) -> Path:
    return (html or paths.BUILD / "html") / FOLDER / f"{chapter_name}.pdf"


def title(chapter: notebooks.Chapter) -> str:
    """The chapter's title, as its front page's first heading says it."""
    index = chapter.path / "index.md"
    text = index.read_text() if index.exists() else ""
    return next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")),
                chapter.name)


def _write_pdf(writer, target: Path) -> None:
    """Write atomically: a failed print never leaves half a PDF where a good one was."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    with open(partial, "wb") as out:
        writer.write(out)
    partial.replace(target)


def _clean(heading: str) -> str:
    """A heading as a bookmark: no permalink sign, one space, and not doubled (Chromium reads
    a heading's visible text and its accessible copy)."""
    text = " ".join(heading.replace("#", " ").replace("\u00b6", " ").split())
    half = len(text) // 2
    return text[:half] if len(text) % 2 == 0 and text[:half] == text[half:] else text


def _append_with_outline(writer, pdf: bytes, heading: str, sections=()) -> None:
    """Append one printed page (``pdf``) under a bookmark ``heading``, its sections nested.
    A section's bookmark takes its heading's text from ``sections`` (the page's headings) where
    they match: Chromium's outline drops the spaces at a heading's line breaks."""
    from pypdf import PdfReader

    spelled = {"".join(_clean(t).split()): _clean(t) for t in sections}

    reader = PdfReader(io.BytesIO(pdf))
    start = len(writer.pages)
    writer.append(reader, import_outline=False)
    parent = writer.add_outline_item(title=heading, page_number=start)

    def nest(items, under):
        last = under
        for item in items:
            if isinstance(item, list):
                nest(item, last)
            else:
                at = reader.get_destination_page_number(item)
                name = _clean(item.title)
                name = spelled.get("".join(name.split()), name)
                last = writer.add_outline_item(title=name, page_number=start + at, parent=under)

    nest(reader.outline, parent)


def pages(chapter: notebooks.Chapter) -> list[str]:
    """The chapter's built pages in reading order (front page, then its notebooks)."""
    rel = paths.relative(chapter.path)
    order = sorted(chapter.notebooks, key=lambda py: (py.stem != "method", py.stem))
    return [f"{rel}/index.html"] + [f"{rel}/{py.stem}.html" for py in order]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def serve(html: Path):
    """Serve ``html`` on a loopback port for the duration of the block; yield its root URL."""
    handler = functools.partial(_Quiet, directory=str(html))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()


def write(chapters: list[notebooks.Chapter] | None = None, *, html: Path | None = None,
          chromium: str = CHROMIUM, log=print) -> list[Path]:
    """Print the chapters' built pages into one PDF each; return the PDFs written.

    Raises
    ------
    ValueError
        When the site is not built or Chromium is missing.
    """
    from playwright.sync_api import sync_playwright
    from pypdf import PdfWriter

    html = html or paths.BUILD / "html"
    chapters = chapters if chapters is not None else notebooks.chapters()
    if not (html / "index.html").exists():
        raise ValueError(f"build the book first (`make html`): no {paths.relative(html)}")
    if not Path(chromium).exists():
        raise ValueError(f"printing needs Chromium at {chromium} (apt-get install chromium)")
    written = []
    with serve(html) as root, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        page.route("**/*", lambda r: r.continue_() if "127.0.0.1" in r.request.url else r.abort())
        for chapter in chapters:
            merged = PdfWriter()
            for rel in pages(chapter):
                if not (html / rel).exists():
                    raise ValueError(f"{rel} is not built")
                page.goto(f"{root}/{rel}", wait_until="load")
                page.wait_for_load_state("networkidle")
                # every folded block prints open, as book/_static/print.js opens them
                page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
                heading = page.locator("main h1").first.text_content() or rel
                sections = page.locator("main h2, main h3, main h4").all_text_contents()
                # Chromium's outline holds the page's sections (h2 and below)
                pdf = page.pdf(format="A4", print_background=True, outline=True, tagged=True,
                               margin={"top": "15mm", "bottom": "15mm", "left": "12mm",
                                       "right": "12mm"})
                _append_with_outline(merged, pdf, _clean(heading), sections)
            merged.add_metadata({"/Title": title(chapter), "/Subject": BOOK_TITLE})
            target = pdf_path(chapter.name, html)
            _write_pdf(merged, target)
            written.append(target)
            log(f"written: {paths.relative(target)} ({target.stat().st_size / 1e6:.1f} MB)")
        browser.close()
    if [c.name for c in chapters] == [c.name for c in notebooks.chapters()]:  # all of them
        written.append(write_book(chapters, html=html, log=log))
    return written


def write_book(chapters: list[notebooks.Chapter], *, html: Path | None = None,
               log=print) -> Path:
    """The whole book in one PDF (``_pdf/icml25-book.pdf``): the chapters' PDFs in order, each
    under a bookmark of its title that holds the chapter's own outline."""
    from pypdf import PdfWriter

    html = html or paths.BUILD / "html"
    book = PdfWriter()
    for chapter in chapters:
        book.append(str(pdf_path(chapter.name, html)), outline_item=title(chapter),
                    import_outline=True)
    book.add_metadata({"/Title": BOOK_TITLE})
    target = html / FOLDER / BOOK_PDF
    _write_pdf(book, target)
    log(f"written: {paths.relative(target)} ({target.stat().st_size / 1e6:.1f} MB)")
    return target
