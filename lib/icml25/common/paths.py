"""Where things are: the repository root and the book's folders."""

from __future__ import annotations

import os
from pathlib import Path

#: Root of the repository (``lib/icml25/book/paths.py`` → three levels up), or ``$ICML25_ROOT``.
ROOT = Path(os.environ.get("ICML25_ROOT") or Path(__file__).resolve().parents[3]).resolve()
CHAPTERS = ROOT / "chapters"
DATA = ROOT / "data"
BOOK = ROOT / "book"
BUILD = ROOT / "_build"
RUNS = BUILD / "runs"


def relative(path: Path | str) -> str:
    """Path relative to the repository root, with forward slashes (stable across machines)."""
    path = Path(path).resolve()
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:
        return path.as_posix()
