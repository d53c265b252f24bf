"""Printable chapters: each chapter's built pages printed by Chromium into one PDF.

``python -m icml25.book pdf`` (run by ``make html`` when Chromium is installed) serves the built
site from a loopback HTTP server, prints every chapter's front page, method and reproduction with
the machine's Chromium (driven by Playwright, network blocked, as in the browser test), merges
them with pypdf into ``_build/html/_pdf/NN-name.pdf``, and each chapter page links it from its
download menu (:mod:`.sphinx_ext`). Folded solutions stay folded on paper.
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


def pdf_path(chapter_name: str, html: Path | None = None) -> Path:
    return (html or paths.BUILD / "html") / FOLDER / f"{chapter_name}.pdf"


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
                pdf = page.pdf(format="A4", print_background=True,
                               margin={"top": "15mm", "bottom": "15mm", "left": "12mm",
                                       "right": "12mm"})
                merged.append(io.BytesIO(pdf))
            target = pdf_path(chapter.name, html)
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f".{target.name}.partial")
            with open(partial, "wb") as out:
                merged.write(out)
            partial.replace(target)
            written.append(target)
            log(f"written: {paths.relative(target)} ({target.stat().st_size / 1e6:.1f} MB)")
        browser.close()
    return written
