"""A claim's verdict box on the chapter's page, rendered when the pages are built.

A run records only its measurement (:data:`icml25.book.claims.RECORDED`, under the MIME type
:data:`icml25.book.claims.MIME`). When Sphinx reads an executed notebook (``source-read``),
:func:`with_boxes` gives every such output an HTML box made from three sources, each read as it
is today: the record (this run's value and verdict), the declaration (the statement, the
paper's words, the fidelity label) and the seed record (the verdict pooled over the seeds,
:mod:`icml25.book.pooling`). Editing a statement or a label therefore changes the page at the
next build and re-executes nothing.
"""

from __future__ import annotations

import html
import json

from icml25.book.claims import MIME, Claim

#: Ink, background and mark of each verdict.
COLOURS = {"holds": ("#1b5e20", "#e8f5e9", "✔"),
           "does not hold": ("#b71c1c", "#ffebee", "✘"),
           "inconclusive": ("#8a5a00", "#fff8e1", "?")}


def _html_with_math(text: str) -> str:
    """Text for the verdict box's HTML: escaped, with ``$...$`` as MathJax's inline math."""
    parts = html.escape(str(text)).split("$")
    if len(parts) % 2 == 0:  # an odd number of dollars: not math
        return html.escape(str(text))
    return "".join(p if i % 2 == 0 else f"\\({p}\\)" for i, p in enumerate(parts))


def render(claim: Claim, pooled: dict | None = None) -> str:
    """The verdict box: claim, threshold, ours, the paper's words, the note.

    Without ``pooled`` it shows the run (one seed). With the verdict pooled over the seeds
    (:meth:`icml25.book.site.ledger.Row.box_info`: ``verdict``, ``text`` of the estimate and
    its interval, ``seeds`` line, ``fidelity`` label) it leads with that verdict and shows the
    run's value beside it.
    """
    shown = pooled["verdict"] if pooled else claim.verdict
    ink, paper_bg, mark = COLOURS[shown]
    kind = "Claim" if claim.kind == "claim" else "Check"
    esc = _html_with_math
    if pooled:
        head = f"{mark} {kind} {esc(shown)}"
        ours = (f"<strong>Ours, over the seeds:</strong> {esc(pooled['text'])} "
                f"({esc(claim.requirement())}) · <strong>Paper:</strong> {esc(claim.paper)}")
        extra = (f'<div style="margin-top:.25em">{esc(pooled["seeds"])}. This run '
                 f"(seed {claim.seed}): {esc(claim.ours())}, {esc(claim.verdict)}.</div>")
        if pooled.get("fidelity"):
            extra += (f'<div style="margin-top:.25em"><strong>Not the paper\'s claim as '
                      f"stated:</strong> {esc(pooled['fidelity'])}</div>")
    else:
        head = f"{mark} {kind} {esc(shown)} in this run (seed {claim.seed})"
        ours = (f"<strong>Ours:</strong> {esc(claim.ours())} ({esc(claim.requirement())}) · "
                f"<strong>Paper:</strong> {esc(claim.paper)}")
        extra = ""
    note = (f'<div style="margin-top:.25em"><em>{esc(claim.note)}</em></div>'
            if claim.note else "")
    # mathjax_process: MathJax typesets only the classes Sphinx names (the page is ignored)
    return (
        f'<div class="mathjax_process icml25-claim icml25-{shown.replace(" ", "-")}" '
        f'data-claim="{esc(claim.id)}" role="note" '
        f'style="border-left:.3em solid {ink};background:{paper_bg};color:#212121;'
        f'padding:.45em .8em;margin:.3em 0;border-radius:.2em;line-height:1.45;'
        f'overflow-wrap:anywhere">'
        f'<div><strong style="color:{ink}">{head}</strong></div>'
        f"<div>{esc(claim.statement)}</div>"
        f'<div style="margin-top:.25em">{ours}</div>{extra}{note}</div>'
    )


def with_boxes(notebook_json: str, rows: dict, declared: dict) -> str:
    """An executed notebook (nbformat JSON) whose claim outputs show their boxes.

    ``rows`` maps a claim's id to its ledger row (:class:`icml25.book.site.ledger.Row`: the
    record with today's words, the pooled verdict); ``declared`` maps an id to its declaration,
    for a claim the ledger has no row of. The record stays in the output beside the HTML; the
    plain line goes, so that the page shows the box.
    """
    nb = json.loads(notebook_json)
    changed = False
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            record = output.get("data", {}).get(MIME)
            if record is None:
                continue
            row = rows.get(record.get("id"))
            if row is not None:
                box = render(row.published, row.box_info())
            else:
                box = render(Claim.of(record, declared.get(record.get("id"))))
            output["data"] = {"text/html": box, MIME: record}
            changed = True
    return json.dumps(nb) if changed else notebook_json
