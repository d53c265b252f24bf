"""Chapters and their notebooks: discovery, reading the py:percent sources, keeping them clean."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat
from jupytext.config import load_jupytext_config

from icml25.book.params import Parameter, parse_parameters_cell
from icml25.common import paths

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
#: Order of the notebooks inside a chapter; others follow alphabetically.
FIRST = ("method", "reproduction")
_CHAPTER_DIR = re.compile(r"^(\d{2})-([a-z0-9-]+)$")


@dataclass(frozen=True)
class Chapter:
    number: int
    slug: str
    path: Path

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def notebooks(self) -> list[Path]:
        """The chapter's py:percent sources (files starting with ``_`` are helpers, not notebooks)."""
        found = [p for p in self.path.glob("*.py") if not p.name.startswith("_")]
        rank = {stem: i for i, stem in enumerate(FIRST)}
        return sorted(found, key=lambda p: (rank.get(p.stem, len(FIRST)), p.stem))


def chapters(root: Path | None = None) -> list[Chapter]:
    """All chapters under ``chapters/``, by number."""
    root = root or paths.CHAPTERS
    found = []
    for path in sorted(root.iterdir()) if root.exists() else []:
        match = _CHAPTER_DIR.match(path.name)
        if path.is_dir() and match:
            found.append(Chapter(int(match.group(1)), match.group(2), path))
    return found


def select(specs: list[str] | None, root: Path | None = None) -> list[Chapter]:
    """Chapters named by number (``11``), folder (``11-sotdd``) or slug (``sotdd``); all if none."""
    every = chapters(root)
    if not specs or specs == ["all"]:
        return every
    chosen = []
    for spec in specs:
        spec = spec.strip().rstrip("/").split("/")[-1]
        hits = [
            c for c in every
            if spec in (c.name, c.slug) or (spec.isdigit() and int(spec) == c.number)
        ]
        if not hits:
            names = ", ".join(c.name for c in every) or "(none)"
            raise ValueError(f"no chapter {spec!r}; choices: {names}")
        chosen.extend(h for h in hits if h not in chosen)
    return chosen


def config(path: Path):
    return load_jupytext_config(str(path.parent))


def read_source(py: Path) -> nbformat.NotebookNode:
    """The notebook of a py:percent source, ready for execution (python3 kernel)."""
    nb = jupytext.read(py, fmt="py:percent")
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}}
    return nb


def parameters(py: Path) -> dict[str, Parameter]:
    """The parameters declared by the notebook's cell tagged ``parameters``."""
    cells = [c for c in read_source(py).cells if "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise ValueError(f"{paths.relative(py)} must have exactly one cell tagged 'parameters'")
    return parse_parameters_cell(cells[0].source)


def code_cells(nb) -> list[str]:
    return [c.source.strip() for c in nb.cells if c.cell_type == "code"]


def _cleaned(py: Path) -> tuple[str, str]:
    text = py.read_text()
    nb = jupytext.reads(text, fmt="py:percent")
    nb.cells = [c for c in nb.cells if "injected-parameters" not in c.metadata.get("tags", [])]
    for cell in nb.cells:
        tags = [t for t in cell.metadata.get("tags", []) if t != "injected-parameters"]
        cell.metadata = {"tags": tags} if tags else {}
    return text, jupytext.writes(nb, fmt="py:percent", config=config(py))


def clean_source_needed(py: Path) -> bool:
    """Whether :func:`clean_source` would change the file."""
    text, cleaned = _cleaned(py)
    return cleaned != text


def clean_source(py: Path) -> bool:
    """Rewrite a source without outputs, papermill metadata or injected cells; True if it changed."""
    text, cleaned = _cleaned(py)
    if cleaned != text:
        py.write_text(cleaned)
        return True
    return False
