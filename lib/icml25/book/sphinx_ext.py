"""Sphinx glue for the book: "edit this page" opens a notebook's py:percent source.

The published page of a chapter notebook is rendered from the executed ``.ipynb``, but the file
people edit and review is the paired ``.py``.  The theme builds its edit link from the page's
source suffix when the template renders; this wraps that function to point at the ``.py``.
"""

from __future__ import annotations

from pathlib import Path


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


def setup(app):
    # Between pydata-sphinx-theme's handler (priority 500), which puts the edit-link function in
    # the context, and sphinx-book-theme's header buttons (501), which call it.
    app.connect("html-page-context", _point_edit_link_at_source, priority=500.5)
    app.connect("html-page-context", _drop_duplicate_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
