"""What every page loads, cut to what the pages use (after a build: Sphinx's
``build-finished``, :mod:`.sphinx_ext`).

* **Icons.** The theme's ``fontawesome.js`` defines about 2,000 icons (1.5 MB, loaded by every
  page) and the book shows a few dozen. Every ``fa-NAME`` class in the built pages and the
  theme's scripts is collected, and the script is rewritten with only the icon definitions whose
  name or alias is among them (about 90 kB). An icon definition in the script is
  ``"name":[width,height,[aliases],"unicode",path]`` (or ``name:[...]``, unquoted), with ``path``
  a string or a list of strings (duotone); everything else in the script (the engine, its CSS) is
  kept as it is. The browser test checks that every icon on the pages still renders.
* **Search.** The theme's layout loads the search index (0.3 MB) and Sphinx's search scripts on
  every page, for searching as one types; that is off in this book (the search box opens the
  search page, which loads them itself), so the other pages do without them.
"""

from __future__ import annotations

import re
from pathlib import Path

SCRIPT = Path("_static") / "scripts" / "fontawesome.js"
MARK = "/* icml25: cut to the icons the pages use */\n"
_ENTRY = re.compile(
    r'(?:"(?P<quoted>[a-z0-9-]+)"|\b(?P<bare>[a-z][a-z0-9]*)):'
    r'\[\d+,\d+,\[(?P<aliases>[^\]]*)\],"[0-9a-f]*",(?:"[^"]*"|\["[^"]*"(?:,"[^"]*")*\])\],?')
_USED = re.compile(r"\bfa-([a-z0-9]+(?:-[a-z0-9]+)*)")


def used(outdir: Path) -> set[str]:
    """The icon names (``fa-`` stripped) that the built pages and scripts mention."""
    names: set[str] = set()
    for path in [*outdir.rglob("*.html"), *(outdir / "_static").rglob("*.js")]:
        if path.name != SCRIPT.name:
            names |= set(_USED.findall(path.read_text(errors="ignore")))
    return names


def cut(script: str, keep: set[str]) -> tuple[str, int, int]:
    """``script`` without the icon definitions whose name and aliases are all outside ``keep``;
    also the number of icons kept and of icons defined."""
    counts = [0, 0]

    def entry(match: re.Match) -> str:
        counts[1] += 1
        names = {match["quoted"] or match["bare"], *re.findall(r'"([a-z0-9-]+)"',
                                                             match["aliases"])}
        if names & keep:
            counts[0] += 1
            return match.group(0)
        return ""

    return _ENTRY.sub(entry, script), counts[0], counts[1]


_SEARCH_SCRIPTS = re.compile(
    r'[ \t]*<script src="[^"]*(?:searchtools\.js|language_data\.js|searchindex\.js)"></script>\n?')


def without_search(page: str) -> str:
    """A built page without the search scripts that only searching as one types needs."""
    return _SEARCH_SCRIPTS.sub("", page)


def write(outdir: Path, search_as_you_type: bool = False, log=print) -> Path | None:
    """Cut the built site's ``fontawesome.js`` (once: a cut script is left alone) and, unless
    searching as one types is on, drop the search scripts from every page but the search page."""
    if not search_as_you_type:
        for page in Path(outdir).rglob("*.html"):
            if page.name != "search.html":
                text = page.read_text()
                cut_page = without_search(text)
                if cut_page != text:
                    page.write_text(cut_page)
    path = Path(outdir) / SCRIPT
    if not path.exists():
        return None
    script = path.read_text()
    if MARK in script:
        return path
    text, kept, defined = cut(script, used(Path(outdir)))
    if defined == 0:  # not the script this expects: leave it whole rather than break it
        log(f"{path}: no icon definitions recognised; left as it is")
        return path
    path.write_text(MARK + text)
    log(f"fontawesome.js: {kept} of {defined} icons kept "
        f"({len(script) / 1e6:.2f} MB -> {path.stat().st_size / 1e6:.2f} MB)")
    return path
