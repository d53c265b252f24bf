"""Student editions: every chapter notebook without its solutions, with a cell for the student's.

``python -m icml25.book student`` (``make student``) writes ``_build/student/NN-name/*.ipynb``;
the built book offers each page's edition in its download menu (:mod:`.sphinx_ext`).

An edition is the notebook's source with, for every exercise,

* its solution removed: a gated solution (``{solution-start} label`` ... ``{solution-end}``, the
  code cells between them included) or a one-piece ``{solution} label`` directive;
* in its place a Markdown cell naming the exercise and an empty code cell tagged ``student``.

Everything else (prose, code, parameters, tags) is kept as it is, so the edition runs like the
chapter up to its first exercise. Outputs are left out: a student runs the notebook.

An edition reads in plain Jupyter or VS Code, without the book's renderer
(:func:`plain_markdown`): glued values are written as the text of the book's published run,
included code is written out, directives become headings and paragraphs, citations author and
year. The chapter's front page opens it, and its cells have stable ids.

Beside the editions go the files a chapter's notebooks need from their own folder
(:data:`BESIDE`: the chapter's shared module ``_chapter.py`` and its ``claims.toml``, which
``book.claim`` reads), so an edition runs from the folder it is written to.
"""

from __future__ import annotations

import functools
import re
import shutil
from pathlib import Path

import nbformat

from icml25.book.run import notebooks
from icml25.common import paths

OUT = paths.BUILD / "student"
TAG = "student"
#: Files of a chapter's folder that its notebooks read from where they run.
BESIDE = ("_chapter.py", "claims.toml")
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
    values = glued_values(py.with_suffix(".ipynb"))
    figures = figure_names("\n".join(c.source for c in cells if c.cell_type == "markdown"))
    for cell in cells:
        if cell.cell_type == "markdown":
            cell.source = plain_markdown(cell.source, values, figures)
    index = py.parent / "index.md"
    front = plain_markdown(index.read_text(), {}, figures) if index.exists() else ""
    nb.cells = [nbformat.v4.new_markdown_cell(front + "\n\n" + NOTE)] + cells
    for i, cell in enumerate(nb.cells):  # stable ids: the same edition, the same cells
        cell["id"] = f"{py.stem}-{i:03d}"
    nb.nbformat, nb.nbformat_minor = 4, max(nb.get("nbformat_minor", 5), 5)
    nb.metadata["icml25_student_edition"] = {"source": paths.relative(py)}
    return nb


#: What opens every edition, under the chapter's front page.
NOTE = ("*Student edition.* The solutions are left out: each exercise has a cell for yours. "
        "The numbers in the text are those of the book's published run (book mode, seed 0). "
        "Set `mode = \"quick\"` in the parameters cell for a run of seconds: its numbers "
        "and verdicts are not the book's, which pool several seeds at full size.")


def write(chapters: list[notebooks.Chapter] | None = None, out: Path = OUT) -> list[Path]:
    """Write the editions of ``chapters`` (default: all) under ``out``; return their paths."""
    written = []
    for chapter in chapters if chapters is not None else notebooks.chapters():
        folder = out / chapter.name
        folder.mkdir(parents=True, exist_ok=True)
        for name in BESIDE:
            if (chapter.path / name).exists():
                shutil.copy2(chapter.path / name, folder / name)
        for py in chapter.notebooks:
            target = folder / f"{py.stem}.ipynb"
            nbformat.write(edition(py), target)
            written.append(target)
    return written


# --- editions that read in plain Jupyter --------------------------------------------------

_ROLE = re.compile(r"\{(glue:text|glue|cite|cite:p|cite:t|numref|doc|ref|term|eq|math|claim)\}"
                   r"`([^`]*)`")
_FENCE_OPEN = re.compile(r"^(`{3,}|:{3,})\{([\w:-]+)\}\s*(.*)$")
_TITLES = {"prf:definition": "Definition", "prf:algorithm": "Algorithm",
           "prf:theorem": "Theorem", "prf:lemma": "Lemma", "important": "Important",
           "note": "Note", "warning": "Warning", "tip": "Tip", "admonition": ""}


def glued_values(executed: Path) -> dict[str, str]:
    """The values a published notebook glued, by name, as their plain text (``text/plain``,
    or Markdown for ``glue(..., markdown=True)``)."""
    if not executed.exists():
        return {}
    values = {}
    for cell in nbformat.read(executed, as_version=4).cells:
        for out in cell.get("outputs", []):
            meta = out.get("metadata", {}).get("scrapbook")
            if not meta:
                continue
            data = out.get("data", {})
            prefix = meta.get("mime_prefix", "")
            text = data.get(prefix + "text/markdown") or data.get(prefix + "text/plain")
            if text is not None:
                values[meta["name"]] = text
    return values


def _format_glued(text: str, spec: str) -> str:
    import ast

    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    if not spec:
        return str(value)
    try:
        return format(value, spec)
    except (TypeError, ValueError):
        return str(value)


@functools.lru_cache(maxsize=1)
def _bibliography() -> dict[str, str]:
    """``key -> "Author et al., year"`` from the book's ``references.bib``."""
    bib = paths.BOOK / "references.bib"
    found = {}
    text = bib.read_text() if bib.exists() else ""
    for key, body in re.findall(r"@\w+\{([^,\s]+),(.*?)\n\}", text, re.S):
        authors = re.search(r"author\s*=\s*\{(.*?)\}\s*,?\s*\n", body, re.S)
        year = re.search(r"year\s*=\s*\{?(\d{4})", body)
        names = [a.strip() for a in (authors.group(1) if authors else "").split(" and ")]
        first = names[0].split(",")[0].strip("{} ") if names and names[0] else key
        first = re.sub(r"[{}\\`'\"]", "", first)
        who = first + (" et al." if len(names) > 2 else
                       f" and {re.sub(r'[{}]', '', names[1].split(',')[0]).strip()}"
                       if len(names) == 2 else "")
        found[key] = f"{who}, {year.group(1) if year else 'n.d.'}"
    return found


def _roles(text: str, values: dict, figures: dict) -> str:
    def one(m: re.Match) -> str:
        role, body = m.groups()
        if role in ("glue:text", "glue"):
            name, _, spec = body.partition(":")
            if name not in values:
                return f"`{name}`"
            return _format_glued(values[name], spec)
        if role.startswith("cite"):
            bib = _bibliography()
            cited = "; ".join(bib.get(k.strip(), k.strip()) for k in body.split(","))
            inside = m.start() > 0 and m.string[m.start() - 1] == "("  # "({cite}`x`)"
            return cited if inside else f"({cited})"
        if role == "numref":
            label = re.sub(r".*<(.*)>", r"\1", body)
            return _roles(figures.get(label, f"the figure “{label}”"), values, {})
        if role in ("doc", "ref"):
            shown = re.match(r"(.*?)\s*<.*>$", body)
            return shown.group(1) if shown else f"the {body.strip('/').split('/')[-1]} notebook"
        if role == "math":
            return f"${body}$"
        return f"`{body}`" if role == "claim" else body

    return _ROLE.sub(one, text)


def _literal(path: str, options: dict) -> str:
    """The code a ``{literalinclude}`` shows: the file, or one of its objects."""
    import ast

    file = paths.ROOT / path.lstrip("/")
    source = file.read_text()
    obj = options.get("pyobject")
    if obj:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and node.name == obj.split(".")[-1]:
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                source = "\n".join(source.splitlines()[start - 1:node.end_lineno])
                break
    return f"```{options.get('language', 'python')}\n{source.rstrip()}\n```"


def plain_markdown(text: str, values: dict, figures: dict | None = None) -> str:
    """A Markdown cell of the book (MyST) as plain Markdown, for Jupyter or VS Code: glued
    values written as text (the book's published run), included code written out,
    directives as headings and paragraphs, citations as author and year."""
    figures = figures or {}
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i].strip())
        if not m:
            out.append(_roles(lines[i], values, figures))
            i += 1
            continue
        fence, name, arg = m.groups()
        i += 1
        options, body, depth = {}, [], 0
        while i < len(lines) and lines[i].strip().startswith(":") and \
                re.match(r"^:[\w-]+:", lines[i].strip()):
            key, _, value = lines[i].strip()[1:].partition(":")
            options[key] = value.strip()
            i += 1
        while i < len(lines):
            stripped = lines[i].strip()
            if stripped == fence and depth == 0:
                i += 1
                break
            inner = _FENCE_OPEN.match(stripped)
            if inner and inner.group(1) == fence:
                depth += 1
            elif stripped == fence:
                depth -= 1
            body.append(lines[i])
            i += 1
        inner_text = plain_markdown("\n".join(body), values, figures).strip()
        arg = _roles(arg, values, figures)
        if name == "literalinclude":
            block = _literal(arg, options)
            caption = options.get("caption")
            out += ([f"*{_roles(caption, values, figures)}*", ""] if caption else []) + [block]
        elif name == "glue:figure":
            out.append(f"*Figure (drawn by the code above).* {inner_text}".strip())
        elif name == "glue:md":
            out.append(values.get(arg, f"`{arg}`"))
        elif name == "exercise":
            out += [f"#### Exercise: {arg}".rstrip(": "), "", inner_text]
        elif name == "dropdown":
            out += [f"**{arg}**" if arg else "", "", inner_text]
        elif name in _TITLES:
            title = _TITLES[name] + (f" ({arg})" if arg and _TITLES[name] else arg)
            out += [f"**{title}.** " + inner_text if title else inner_text]
        elif name in ("math",):
            out.append(f"$$\n{inner_text}\n$$")
        elif name in ("include",):
            continue
        else:  # any other directive: its text, unadorned
            out += [f"**{arg}**" if arg else "", inner_text]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")


def figure_names(text: str) -> dict[str, str]:
    """``label -> 'the figure “title”'`` for the figures of a notebook's Markdown, the title
    being the caption's first bold sentence."""
    found = {}
    for m in re.finditer(r"\{glue:figure\}[^\n]*\n((?::[^\n]*\n)*)\s*\n?(.*?)(?:```|:::)",
                         text, re.S):
        name = re.search(r":name:\s*(\S+)", m.group(1))
        title = re.search(r"\*\*(.+?)\*\*", m.group(2), re.S)
        if name:
            found[name.group(1)] = (f"the figure “{' '.join(title.group(1).split())}”"
                                    if title else "the figure below")
    return found


# --- answers that can be checked ---------------------------------------------------------

def answers(py: Path) -> dict[str, list[str]]:
    """The named answers of a chapter notebook's exercises: ``{label: [glued names]}``, the
    values its solutions glue (figures, named ``fig_*``, are not answers)."""
    import ast

    found, label, inside = {}, None, False
    for cell in notebooks.read_source(py).cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                start = _OPEN.match(line)
                if start and start.group(2) == "solution-start":
                    label, inside = start.group(3), True
                elif _END.match(line):
                    inside = False
            continue
        if not inside:
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "glue":
                names = [k.arg for k in node.keywords if k.arg and k.arg != "markdown"]
                if node.args and isinstance(node.args[0], ast.Constant):
                    names.append(node.args[0].value)
                found.setdefault(label, []).extend(n for n in names
                                                   if not n.startswith("fig"))
    return {k: v for k, v in found.items() if v}


def _execute(nb_path: Path, cwd: Path, mode: str) -> dict[str, str]:
    """Run a notebook in ``mode`` from ``cwd`` (errors allowed: a student's cell may fail)
    and return what it glued."""
    import tempfile

    import papermill

    from icml25.common import numerics

    numerics.pin_process()
    with tempfile.TemporaryDirectory(prefix="icml25-grade-") as tmp:
        out = Path(tmp) / "out.ipynb"
        try:
            papermill.execute_notebook(str(nb_path), str(out), parameters={"mode": mode},
                                       kernel_name="python3", cwd=str(cwd), progress_bar=False,
                                       log_output=False, execution_timeout=900)
        except papermill.PapermillExecutionError:
            pass  # what ran before the failing cell still counts
        return glued_values(out) if out.exists() else {}


def _agree(expected: str, got: str | None, rtol: float, atol: float) -> bool:
    import ast
    import math

    if got is None:
        return False
    try:
        e, g = ast.literal_eval(expected), ast.literal_eval(got)
    except (ValueError, SyntaxError):
        return expected.strip() == got.strip()
    if isinstance(e, (int, float)) and isinstance(g, (int, float)) \
            and not isinstance(e, bool) and not isinstance(g, bool):
        return math.isclose(e, g, rel_tol=rtol, abs_tol=atol)
    return e == g


def grade(submitted: Path, *, mode: str = "quick", rtol: float = 0.01,
          atol: float = 1e-9) -> list[tuple[str, str, str, str | None, bool]]:
    """Grade a student's edition against the chapter's solutions, run the same way.

    Both the submitted notebook (from its own folder) and the chapter's notebook with its
    solutions are executed in ``mode`` with the same seed; each named answer the solutions
    glue is compared: numbers within ``rtol`` (relative) or ``atol``, anything else equal.

    Returns
    -------
    list of (exercise, name, expected, got, correct)
        ``got`` is ``None`` where the student's notebook glued no such value.
    """
    submitted = Path(submitted)
    if not submitted.exists():
        raise FileNotFoundError(f"no notebook at {submitted}")
    meta = nbformat.read(submitted, as_version=4).metadata.get("icml25_student_edition")
    if not meta:
        raise ValueError(f"{submitted} is not a student edition (no icml25_student_edition "
                         "in its metadata): grade the notebook that `make student` wrote")
    py = paths.ROOT / meta["source"]
    expected_nb = paths.BUILD / "grade" / py.parent.name / f"{py.stem}.solutions.ipynb"
    expected_nb.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebooks.read_source(py), expected_nb)
    expected = _execute(expected_nb, py.parent, mode)
    got = _execute(submitted, submitted.parent, mode)
    rows = []
    for label, names in answers(py).items():
        for name in names:
            if name not in expected:  # the solution did not reach it in this mode
                continue
            rows.append((label, name, expected[name], got.get(name),
                         _agree(expected[name], got.get(name), rtol, atol)))
    return rows
