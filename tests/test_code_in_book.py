"""The method's code is shown in the book, rendered from the module itself.

A chapter's ``method.py`` shows the core of its method with MyST ``literalinclude`` directives
on ``lib/icml25`` (``:pyobject:`` names a function, a class or ``Class.method``), so the page
can never drift from the code that runs. These checks are fast and run without a book build:
every directive points at a file that exists and at an object defined in it, and every chapter
of :data:`MUST_SHOW` shows at least one object.
"""

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from icml25.common import paths

#: Chapters whose method notebook must show the code of its method (by chapter number).
MUST_SHOW = {"01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "13",
             "14", "15", "16", "17", "18", "19"}

_OPEN = re.compile(r"^#\s*(`{3,})\{literalinclude\}\s+(\S+)\s*$")
_OPTION = re.compile(r"^#\s*:([\w-]+):\s*(.*?)\s*$")
_KNOWN = {"pyobject", "caption", "language", "dedent", "name", "emphasize-lines",
          "linenos", "lineno-match", "class"}


@dataclass(frozen=True)
class Include:
    chapter: str  # "01"
    source: Path  # the method.py holding the directive
    line: int  # 1-based line of the directive in it
    path: str  # as written, "/lib/icml25/..."
    options: dict

    @property
    def target(self) -> Path:
        return paths.ROOT / self.path.lstrip("/")

    def __str__(self) -> str:
        return f"{self.chapter}:{self.path}:{self.options.get('pyobject', '?')}"


def includes_in(method: Path) -> list[Include]:
    """Every ``literalinclude`` directive of a py:percent notebook, with its options."""
    found, lines = [], method.read_text().splitlines()
    chapter = method.parent.name[:2]
    for i, line in enumerate(lines):
        opened = _OPEN.match(line)
        if not opened:
            continue
        options = {}
        for option in lines[i + 1:]:
            matched = _OPTION.match(option)
            if not matched:
                break
            options[matched.group(1)] = matched.group(2)
        found.append(Include(chapter, method, i + 1, opened.group(2), options))
    return found


METHODS = sorted(paths.CHAPTERS.glob("[0-9][0-9]-*/method.py"))
INCLUDES = [inc for method in METHODS for inc in includes_in(method)]


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def find_object(tree: ast.Module, name: str):
    """The top-level function or class ``name``, or the method ``Class.method``; else None."""
    *classes, last = name.split(".")
    scope = tree.body
    for part in classes:
        cls = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == part), None)
        if cls is None:
            return None
        scope = cls.body
    return next((n for n in scope if isinstance(n, _DEFINITIONS) and n.name == last), None)


def object_lines(inc: Include) -> list[str]:
    """The lines of the included object, its decorators included, before any dedent."""
    text = inc.target.read_text()
    node = find_object(ast.parse(text), inc.options["pyobject"])
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return text.splitlines()[first - 1:node.end_lineno]


def dedent_of(inc: Include) -> int:
    return int(inc.options.get("dedent") or 0)


def test_the_chapters_are_found():
    assert len(METHODS) >= len(MUST_SHOW)
    assert {m.parent.name[:2] for m in METHODS} >= MUST_SHOW


@pytest.mark.parametrize("inc", INCLUDES, ids=str)
def test_every_included_object_exists(inc):
    where = f"{inc.source.relative_to(paths.ROOT)}:{inc.line}"
    assert inc.path.startswith("/lib/icml25/"), (
        f"{where}: give the path from the book's root, /lib/icml25/..., not {inc.path!r}")
    assert inc.target.is_file(), f"{where}: {inc.path} does not exist"
    unknown = set(inc.options) - _KNOWN
    assert not unknown, f"{where}: unknown options {sorted(unknown)}"
    name = inc.options.get("pyobject")
    assert name, f"{where}: show an object (:pyobject:), not line numbers that can drift"
    node = find_object(ast.parse(inc.target.read_text()), name)
    assert node is not None, f"{where}: {inc.path} defines no {name!r}"
    dedent = dedent_of(inc)
    cut = [line for line in object_lines(inc) if line[:dedent].strip()]
    assert not cut, f"{where}: :dedent: {dedent} would cut code: {cut[0]!r}"


@pytest.mark.parametrize("chapter", sorted(MUST_SHOW))
def test_the_method_notebook_shows_its_code(chapter):
    shown = [inc for inc in INCLUDES if inc.chapter == chapter and "pyobject" in inc.options]
    assert shown, f"chapter {chapter}: its method.py shows no object of lib/icml25"


# -- one convention per thing in a chapter's code ---------------------------------------------

#: Comparisons with a number that happens to equal a declared threshold of the chapter but is
#: not that threshold, each with what the number is (the test below flags every other one).
NOT_A_THRESHOLD = {
    ("07", "np.abs(g_line - 1) > 0.02"): "a gap around the pole at gamma = 1 of the plotted risk",
    ("07", "gain_mean['linear'] > 0.01"): "the margin of a clear win, not a claim's threshold",
    ("07", "theory_lt > 0.01"): "the same margin on the theory's side",
    ("10", "len(rate_grids) == 2"): "the number of grids an order of convergence needs",
    ("11", "timings[method][n] < 2.0"): "seconds: trace memory only where a run is cheap",
    ("13", "row == 3"): "a row of the figure",
}
#: Numbers too common to read as a threshold when they appear in a comparison (chance, a sign,
#: a probability mask), though some chapters declare them as one.
_COMMON = {0.0, 0.5, 1.0}
VERDICT_WORDS = {"holds", "does not hold", "inconclusive", "holds in part"}
CHAPTER_CODE = sorted(p for p in (paths.ROOT / "chapters").glob("[0-9][0-9]-*/*.py")
                      if p.stem in ("method", "reproduction"))


def _declared_thresholds(chapter_dir: Path) -> set[float]:
    import tomllib

    found = set()
    for entry in tomllib.loads((chapter_dir / "claims.toml").read_text()).get("claims", []):
        t = entry.get("threshold")
        if isinstance(t, (int, float)) and not isinstance(t, bool):
            found.add(float(t))
    return found - _COMMON


@pytest.mark.parametrize("source", CHAPTER_CODE, ids=lambda p: f"{p.parent.name[:2]}-{p.stem}")
def test_chapter_code_reads_sizes_and_thresholds_from_their_one_place(source):
    """A size comes from the chapter's ``SIZES`` (``run.size``), never from a branch on the
    mode; a declared threshold is read with ``icml25.book.thresholds.threshold(id)``, never
    typed again; a verdict is the recorded one, never written by hand; an interval comes from
    the bootstrap of ``icml25.common.stats``, not from a resampling loop of the chapter's own. The one branch on the mode allowed is
    ``mode == "paper"``: the paper mode trains the models that other modes load."""
    chapter = source.parent.name[:2]
    thresholds = _declared_thresholds(source.parent)
    tree = ast.parse(source.read_text())
    allowed_mode = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "book.setup":
            allowed_mode |= {id(kw.value) for kw in node.keywords if kw.arg == "mode"}
        if isinstance(node, ast.Compare) and ast.unparse(node) in ('mode == "paper"',
                                                                    "mode == 'paper'"):
            allowed_mode.add(id(node.left))
    found = []
    for node in ast.walk(tree):
        where = f"{source.relative_to(paths.ROOT)}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Name) and node.id == "mode" and isinstance(node.ctx, ast.Load) \
                and id(node) not in allowed_mode:
            found.append(f"{where}: reads the mode; put what differs by mode in SIZES")
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                if isinstance(side, ast.Constant) and not isinstance(side.value, bool) \
                        and isinstance(side.value, (int, float)) \
                        and float(side.value) in thresholds \
                        and (chapter, ast.unparse(node)) not in NOT_A_THRESHOLD:
                    found.append(f"{where}: {ast.unparse(node)!r} types a declared threshold; "
                                 "read it with icml25.book.thresholds.threshold(id)")
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                and node.value.value in VERDICT_WORDS:
            found.append(f"{where}: writes a verdict by hand; read the recorded one")
        if isinstance(node, ast.FunctionDef) and "bootstrap" in node.name and any(
                isinstance(n, ast.Attribute) and n.attr == "integers" for n in ast.walk(node)):
            found.append(f"{where}: {node.name} resamples by hand; use icml25.common.stats "
                         "(bootstrap_ci, paired_bootstrap_ci)")
    assert not found, "\n".join(found)


def test_the_exceptions_to_the_conventions_still_exist():
    """An allowance whose code is gone is removed, so the list says what is true today."""
    present = {(p.parent.name[:2], ast.unparse(n)) for p in CHAPTER_CODE
               for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, ast.Compare)}
    assert set(NOT_A_THRESHOLD) <= present, set(NOT_A_THRESHOLD) - present
