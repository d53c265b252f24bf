"""Sphinx glue for the book.

* The repository and "edit this page" buttons follow ``repository.url`` in ``_config.yml``: shown
  when it is set, absent when it is empty (the default); a button to a repository that does not
  exist is worse than none.
* "edit this page" opens a notebook's py:percent source.
* The ``.py`` source of every chapter notebook is published beside its page and offered in the
  download menu, next to the executed ``.ipynb``, with the notebook's student edition (its
  solutions replaced by empty cells, :mod:`icml25.book.site.student`) and the chapter's PDF
  (:mod:`icml25.book.site.printing`).
* A chapter page's verdict boxes are rendered here, when the page is read (:mod:`.boxes`), from
  the run's record of its measurement, today's declaration and the verdict pooled over the seeds
  (:mod:`.ledger`), not the verdict of the one run (seed 0) that the executed notebook holds: the
  seed record is never an input of the notebook it came from, and the words are never stale.
* Every chapter's page shows its verdicts at a glance under its title (one coloured badge per
  verdict), and every reproduction page opens with its "Results at a glance" box (the chapter's generated
  ``_glance.md``), inserted here when the page is read: the notebooks carry no copy of it.
* Figures, tables, exercises and theorems are numbered per chapter ("Fig. 15.2", "Exercise
  15.3"), not across the book: the number says where a thing is.
* Every page loads what it uses (:mod:`.weight`): Font Awesome cut to the book's icons (1.5 MB
  -> about 90 kB), the search index only on the search page, the cards' thumbnails as they
  scroll into view.
* Pages load only the scripts they use: no MathJax (1.2 MB) on a page without math, no Thebe
  (switched off in ``_config.yml``) anywhere.

The published page of a chapter notebook is rendered from the executed ``.ipynb``, but the file
people edit and review is the paired ``.py``.  The theme builds its edit link from the page's
source suffix when the template renders; this wraps that function to point at the ``.py``.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path


@cache
def _chapters() -> list:
    from icml25.book.run import notebooks

    return notebooks.chapters()


@cache
def _chapter_rows(chapter: str) -> dict:
    from icml25.book.run import notebooks
    from icml25.book.site import ledger

    found = [c for c in notebooks.chapters() if c.name == chapter]
    return {row.id: row for row in ledger.rows(found[0])} if found else {}


def _lazy_thumbnails(app, pagename, templatename, context, doctree):
    """The landing page's card thumbnails load as they scroll into view (1.2 MB in all)."""
    if "body" in context and "sd-card-img-top" in context["body"]:
        context["body"] = context["body"].replace('class="sd-card-img-top"',
                                                  'class="sd-card-img-top" loading="lazy"')


def _point_edit_link_at_source(app, pagename, templatename, context, doctree):
    original = context.get("get_edit_provider_and_url")
    source = Path(app.srcdir) / f"{pagename}.py"
    if original is None or context.get("page_source_suffix") != ".ipynb" or not source.exists():
        return

    def edit_provider_and_url():
        provider, url = original()
        return provider, url[: -len(".ipynb")] + ".py" if url.endswith(".ipynb") else url

    context["get_edit_provider_and_url"] = edit_provider_and_url


def _drop_duplicate_scripts(app, pagename, templatename, context, doctree):
    """Keep the first of identical script tags (sphinx-thebe's settings are added twice, which
    declares a ``const`` twice and raises a console error in the browser)."""
    seen, unique = set(), []
    for script in context.get("script_files", []):
        attributes = getattr(script, "attributes", {})
        key = (getattr(script, "filename", None) or "", tuple(sorted(attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    if "script_files" in context:
        context["script_files"][:] = unique


MATH_MARKERS = ('class="math', "\\(", "\\[", "$$", "\\begin{")


def _drop_unused_scripts(app, pagename, templatename, context, doctree):
    body = context.get("body", "")
    has_math = any(marker in body for marker in MATH_MARKERS)

    def unused(script):
        name = (getattr(script, "filename", None) or "").lower()
        inline = str(getattr(script, "attributes", {}).get("body", "")).lower()
        if "thebe" in name or "thebe" in inline:
            return True
        return not has_math and ("mathjax" in name or "mathjax" in inline)

    if "script_files" in context:
        context["script_files"][:] = [s for s in context["script_files"] if not unused(s)]


def _buttons_follow_the_repository(app, config):
    options = dict(config.html_theme_options or {})
    has_repository = bool(options.get("repository_url"))
    options["use_repository_button"] = has_repository
    options["use_edit_page_button"] = has_repository
    options["use_issues_button"] = False
    options["use_source_button"] = False
    config.html_theme_options = options


def _offer_prints_and_source(app, pagename, templatename, context, doctree):
    """One PDF entry per kind in the download menu: the chapter's printed PDF on a chapter's
    pages (instead of the theme's "print this page"), the whole book's, and the book's source
    archive (or its repository, where ``repository.url`` is set)."""
    from icml25.book.site import archive, printing

    offered = []
    # the PDFs are printed after the build by Chromium (`make html`): without it there are none,
    # and a menu entry would be a dead link
    prints = Path(printing.CHROMIUM).exists()
    if prints and pagename.startswith("chapters/"):
        chapter = pagename.split("/")[1]
        offered.append({
            "type": "link", "url": context["pathto"](f"_pdf/{chapter}.pdf", 1),
            "text": "chapter PDF", "icon": "fas fa-print",
            "tooltip": "The whole chapter, printed (make html writes it)",
            "label": "download-chapter-pdf-button"})
    if prints:
        offered.append({
            "type": "link",
            "url": context["pathto"](f"{printing.FOLDER}/{printing.BOOK_PDF}", 1),
            "text": "book PDF", "icon": "fas fa-book",
            "tooltip": "Every chapter in one PDF, with an outline",
            "label": "download-book-pdf-button"})
    repository = _repository_url(app)
    offered.append({
        "type": "link",
        "url": repository or context["pathto"](f"{archive.FOLDER}/{archive.NAME}", 1),
        "text": "book source" if not repository else "repository", "icon": "fas fa-file-archive",
        "tooltip": "Everything needed to run the chapters: unpack, then make run CHAPTER=NN",
        "label": "download-book-source-button"})
    for button in context.get("header_buttons", []):
        if button.get("type") == "group" and "download" in str(button.get("icon", "")):
            kept = [b for b in button["buttons"] if b.get("label") != "download-pdf-button"]
            button["buttons"] = kept + offered


def _offer_py_source(app, pagename, templatename, context, doctree):
    """Add the page's ``.py`` source to the download menu (after the theme builds it, at 501)."""
    source = Path(app.srcdir) / f"{pagename}.py"
    if context.get("page_source_suffix") != ".ipynb" or not source.exists():
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.py"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())
    url = context["pathto"](f"_sources/{pagename}.py", 1)
    offered = [{"type": "link", "url": url, "text": ".py", "tooltip": "The notebook's source",
                "icon": "fas fa-code", "label": "download-py-button"}]
    if pagename.startswith("chapters/"):
        import nbformat

        from icml25.book.site.student import edition

        student = Path(app.outdir) / "_student" / f"{pagename}.ipynb"
        student.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(edition(source), student)
        offered.append({
            "type": "link", "url": context["pathto"](f"_student/{pagename}.ipynb", 1),
            "text": "student edition", "icon": "fas fa-user-graduate",
            "tooltip": "The notebook without its solutions, with a cell for each of yours",
            "label": "download-student-button"})
    for button in context.get("header_buttons", []):
        if button.get("type") == "group" and "download" in str(button.get("icon", "")):
            button["buttons"] += offered


GLANCE = """:::{admonition} Results at a glance
:class: tip
```{include} _glance.md
```
:::"""


def with_glance(notebook_json: str) -> str:
    """A reproduction notebook (nbformat JSON) with the glance box as a Markdown cell after its
    first (title) cell; unchanged when the box is there already."""
    import json

    nb = json.loads(notebook_json)
    if any(GLANCE in "".join(c.get("source", "")) for c in nb["cells"]):
        return notebook_json
    cell = {"cell_type": "markdown", "metadata": {}, "source": GLANCE}
    if nb.get("nbformat_minor", 0) >= 5:  # cells carry ids since nbformat 4.5
        cell["id"] = "icml25-results-at-a-glance"
    nb["cells"].insert(1, cell)
    return json.dumps(nb)


def with_strip(markdown: str, strip_md: str) -> str:
    """A chapter's ``index.md`` with its verdict strip as a paragraph under its title."""
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("# "):
            return "\n".join([*lines[: i + 1], "", strip_md, *lines[i + 1:]])
    return markdown


def with_lead(markdown: str, lead: str) -> str:
    """A chapter's ``index.md`` whose "**What we found.**" opens with ``lead``, the headline
    verdicts worst first (:func:`icml25.book.headline.lead`); unchanged without that label."""
    label = "**What we found.**"
    return markdown.replace(label, f"{label} {lead}", 1)


def before_first_section(markdown: str, box: str) -> str:
    """``markdown`` with ``box`` before its first ``"## "`` heading (at its end if it has none)."""
    lines = markdown.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("## ")), len(lines))
    return "\n".join([*lines[:at], box, "", *lines[at:]])


def _repository_url(app) -> str:
    return str((app.config.html_theme_options or {}).get("repository_url") or "")


def _insert_generated(app, docname, source):
    """``source-read``: the verdict strip under a chapter's title and the box that says how to
    run the chapter; in an executed notebook, every claim's verdict box
    (:func:`icml25.book.site.boxes.with_boxes`), and the glance box of the reproduction pages
    of chapters whose ledger wrote ``_glance.md``."""
    parts = docname.split("/")
    if len(parts) == 3 and parts[0] == "chapters" and parts[2] == "index":
        from icml25.book.site import archive, ledger
        from icml25.book.site.generated import claim_badges, headline_strip, strip

        rows = list(_chapter_rows(parts[1]).values())
        found = [c for c in _chapters() if c.name == parts[1]]
        if rows and found:
            counted = ledger.counts(found[0], rows)
            source[0] = with_strip(source[0], f"{headline_strip(counted['headline'])}; "
                                              f"{strip(counted)}")
            source[0] = with_lead(source[0], counted["lead"])
        source[0] = claim_badges(source[0], {r.id: r.verdict for r in rows})
        source[0] = before_first_section(
            source[0], archive.how_to_run(parts[1], _repository_url(app)))
    if len(parts) == 3 and parts[0] == "chapters" and source[0].lstrip().startswith("{"):
        from icml25.book import declarations
        from icml25.book.site.boxes import with_boxes

        declared = declarations.load(Path(app.srcdir) / parts[0] / parts[1])
        source[0] = with_boxes(source[0], _chapter_rows(parts[1]), declared)
        if (parts[2] == "reproduction"
                and (Path(app.srcdir) / parts[0] / parts[1] / "_glance.md").exists()):
            source[0] = with_glance(source[0])


_CHAPTER_DOC = re.compile(r"chapters/(\d+)-")
_READING_ORDER = {"index": 0, "method": 1, "reproduction": 2}


def per_chapter_numbers(fignumbers: dict) -> dict:
    """Sphinx's numbers (``docname -> figtype -> id -> (n,)``, counted across the book)
    renumbered as ``(chapter, k)``: the k-th thing of its type in its chapter, in reading order
    (the chapter's front page, its method, its reproduction; within a page, Sphinx's order).
    Pages outside the chapters keep their numbers."""
    found = []
    for docname, types in fignumbers.items():
        match = _CHAPTER_DOC.match(docname)
        if match:
            for figtype, ids in types.items():
                page = docname.rsplit("/", 1)[-1]
                rank = _READING_ORDER.get(page, len(_READING_ORDER)), page
                found += [(int(match.group(1)), figtype, rank, number, docname, ident)
                          for ident, number in ids.items()]
    renumbered = {docname: {figtype: dict(ids) for figtype, ids in types.items()}
                  for docname, types in fignumbers.items()}
    counts: dict[tuple, int] = {}
    for chapter, figtype, _, _, docname, ident in sorted(found):
        counts[chapter, figtype] = counts.get((chapter, figtype), 0) + 1
        renumbered[docname][figtype][ident] = (chapter, counts[chapter, figtype])
    return renumbered


def _number_per_chapter(app, env):
    # after Sphinx's own collector (priority 500) has numbered everything across the book
    env.toc_fignumbers = per_chapter_numbers(env.toc_fignumbers)
    return []


def chapter_title(docname: str, title: str) -> str:
    """A chapter notebook's title as search results and the browser's tab show it:
    ``"Reproduction: ..."`` names its chapter, ``"11 · Reproduction: ..."``; other pages, and
    a title that names its chapter already, keep theirs."""
    match = _CHAPTER_DOC.match(docname)
    if not match or docname.endswith("/index") or title.startswith(match.group(1)):
        return title
    return f"{match.group(1)} · {title}"


def _titles_name_their_chapter(app, env):
    from docutils import nodes

    for docname, node in list(env.longtitles.items()):
        text = chapter_title(docname, node.astext())
        if text != node.astext():
            env.longtitles[docname] = nodes.title(text, text)
    return []


def _cut_icons(app, exception):
    if exception is None and app.builder.format == "html":
        from icml25.book.site import weight

        as_you_type = (app.config.html_theme_options or {}).get("search_as_you_type", False)
        weight.write(Path(app.outdir), bool(as_you_type), log=lambda message: None)



#: Calls that keep the book's books (values for the prose, claims for the ledger): the page
#: shows the computation, not its bookkeeping; the notebook keeps both.
BOOKKEEPING = ("glue", "claim")


def _is_bookkeeping(statement) -> bool:
    import ast

    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        return (isinstance(func, ast.Attribute) and func.attr in BOOKKEEPING
                and isinstance(func.value, ast.Name) and func.value.id == "book")
    if isinstance(statement, (ast.For, ast.If, ast.With)) and not getattr(statement,
                                                                           "orelse", []):
        return all(_is_bookkeeping(s) for s in statement.body)
    return False


def without_bookkeeping(code: str) -> str:
    """A code cell as the page shows it: its ``book.glue(...)`` and ``book.claim(...)``
    statements left out, at any depth (a loop or branch of nothing else goes with them, and so
    do the comment lines just above a top-level one); the code unchanged if it does not
    parse."""
    import ast

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    lines = code.splitlines()
    drop = set()

    def visit(body, top):
        for statement in body:
            if _is_bookkeeping(statement):
                first = statement.lineno - 1
                while top and first > 0 and lines[first - 1].lstrip().startswith("#"):
                    first -= 1  # the comment that introduces it goes with it
                drop.update(range(first, statement.end_lineno))
                continue
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    visit(inner, False)
            for handler in getattr(statement, "handlers", []):
                visit(handler.body, False)

    visit(tree.body, True)
    kept = [line for i, line in enumerate(lines) if i not in drop]
    text = "\n".join(kept)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def _hide_bookkeeping(app, doctree):
    """``doctree-read``: the code cells of a notebook page without their bookkeeping; a cell
    of nothing else shows only its output (a claim's box)."""
    from docutils import nodes

    for source in list(doctree.findall(nodes.container)):
        if source.get("nb_element") != "cell_code_source":
            continue
        for block in source.findall(nodes.literal_block):
            shown = without_bookkeeping(block.astext())
            if shown == block.astext():
                continue
            if not shown.strip() or all(line.lstrip().startswith("#")
                                        for line in shown.splitlines() if line.strip()):
                source.parent.remove(source)
                break
            block.children = [nodes.Text(shown)]
            block.rawsource = shown

def setup(app):
    app.connect("source-read", _insert_generated)
    app.connect("doctree-read", _hide_bookkeeping)
    app.connect("env-get-updated", _number_per_chapter, priority=900)
    app.connect("env-get-updated", _titles_name_their_chapter)
    app.connect("build-finished", _cut_icons)
    app.connect("config-inited", _buttons_follow_the_repository)
    app.connect("html-page-context", _offer_py_source, priority=502)
    app.connect("html-page-context", _offer_prints_and_source, priority=503)
    # Between pydata-sphinx-theme's handler (priority 500), which puts the edit-link function in
    # the context, and sphinx-book-theme's header buttons (501), which call it.
    app.connect("html-page-context", _point_edit_link_at_source, priority=500.5)
    app.connect("html-page-context", _lazy_thumbnails)
    app.connect("html-page-context", _drop_duplicate_scripts, priority=900)
    app.connect("html-page-context", _drop_unused_scripts, priority=901)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
