"""Student editions: every chapter notebook without its solutions, with a cell for the student's.

``python -m icml25.book student`` (``make student``) writes ``_build/student/NN-name/*.ipynb``;
the built book offers each page's edition in its download menu (:mod:`.sphinx_ext`).

An edition is the notebook's source with, for every exercise,

* its solution removed: a gated solution (``{solution-start} label`` ... ``{solution-end}``, the
  code cells between them included) or a one-piece ``{solution} label`` directive;
* in its place a Markdown cell naming the exercise and an empty code cell tagged ``student``.

Everything else (prose, code, parameters, tags) is kept as it is, so the edition runs like the
chapter up to its first exercise. Outputs are left out: a student runs the notebook.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from icml25.book.run import notebooks
from icml25.common import paths

OUT = paths.BUILD / "student"
TAG = "student"
_OPEN = re.compile(r"^(`{3,}|:{3,})\{(solution|solution-start)\}\s*(\S*)")
_END = re.compile(r"^(`{3,}|:{3,})\{solution-end\}")


def _placeholder(label: str) -> list:
    what = f"exercise `{label}`" if label else "the exercise above"
    return [
        nbformat.v4.new_markdown_cell(f"**Your solution** to {what}: write it in the cell "
                                      "below (add cells as you need)."),
        nbformat.v4.new_code_cell("# Your solution here.\n",
                                  metadata={"tags": [TAG]}),
    ]


def _strip_markdown(source: str, state: dict) -> tuple[str, list[str]]:
    """Drop solution text from one Markdown cell; return what is left and the labels of the
    solutions that started in it. ``state["gated"]`` carries an open gated solution across
    cells; a one-piece ``{solution}`` directive must close within its cell."""
    kept, started = [], []
    lines = source.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if state["gated"]:
            end = _END.match(line)
            if end:
                state["gated"] = False
                i += 1
                # the end directive's own closing fence
                if i < len(lines) and lines[i].strip() == end.group(1):
                    i += 1
                continue
            i += 1
            continue
        start = _OPEN.match(line)
        if not start:
            kept.append(line)
            i += 1
            continue
        fence, kind, label = start.groups()
        started.append(label)
        i += 1
        if kind == "solution-start":
            # options up to the directive's closing fence; what follows is the solution
            while i < len(lines) and lines[i].strip() != fence:
                i += 1
            i += 1
            state["gated"] = True
            continue
        # A one-piece directive ends at the first line that is its fence alone (MyST nests
        # fenced blocks only inside a longer fence).
        while i < len(lines) and lines[i].strip() != fence:
            i += 1
        i += 1
    text = "\n".join(kept).strip("\n")
    return re.sub(r"\n{3,}", "\n\n", text), started


def edition(py: Path) -> nbformat.NotebookNode:
    """The student edition of a chapter notebook source (see the module docstring).

    Raises
    ------
    ValueError
        When a gated solution is never closed by ``{solution-end}``.
    """
    nb = notebooks.read_source(py)
    state, cells = {"gated": False}, []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            if not state["gated"]:
                cells.append(cell)
            continue
        text, started = _strip_markdown(cell.source, state)
        if text.strip():
            cell.source = text
            cells.append(cell)
        for label in started:
            cells += _placeholder(label)
    if state["gated"]:
        raise ValueError(f"{paths.relative(py)}: a {{solution-start}} has no {{solution-end}}")
    nb.cells = cells
    nb.metadata["icml25_student_edition"] = {"source": paths.relative(py)}
    return nb


def write(chapters: list[notebooks.Chapter] | None = None, out: Path = OUT) -> list[Path]:
    """Write the editions of ``chapters`` (default: all) under ``out``; return their paths."""
    written = []
    for chapter in chapters if chapters is not None else notebooks.chapters():
        for py in chapter.notebooks:
            target = out / chapter.name / f"{py.stem}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(edition(py), target)
            written.append(target)
    return written
