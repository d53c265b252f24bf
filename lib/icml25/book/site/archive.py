"""The book's own source as one archive, published with the site: what a reader downloads to
run a chapter (``_build/html/_downloads/icml25-book.zip``, written by ``make html``).

A downloaded notebook does ``import icml25``; the archive holds everything that makes that
work: ``lib/``, the chapters with their executed notebooks and seed records, ``data/`` with
its MANIFEST, the Makefile and the pinned requirements. Unpacked, ``make run CHAPTER=NN`` or
``make lab CHAPTER=NN`` runs a chapter as on the author's machine. The files are those that
git tracks (the committed book, not the build or a virtual environment); outside a git checkout
(an unpacked archive) the tree minus what ``.gitignore``'s plain names exclude.
Where ``repository.url`` is set in ``_config.yml`` the pages point to the repository instead.
"""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

from icml25.common import paths

FOLDER = "_downloads"
NAME = "icml25-book.zip"
TOP = "icml25-book"  # the folder the archive unpacks into


def target(html: Path | None = None) -> Path:
    return (html or paths.BUILD / "html") / FOLDER / NAME


def files(root: Path | None = None) -> list[Path]:
    """The book's source files, relative to ``root``, sorted."""
    root = root or paths.ROOT
    if (root / ".git").exists():
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True,
                                check=True).stdout.decode().split("\0")
        return sorted(Path(p) for p in listed if p and (root / p).is_file())
    ignore = {".git", "_build", "__pycache__", ".ipynb_checkpoints", ".venv", ".venv-lab"}
    gitignore = root / ".gitignore"
    if gitignore.exists():
        ignore |= {line.strip().strip("/") for line in gitignore.read_text().splitlines()
                   if line.strip() and not line.startswith("#") and "*" not in line}
    return sorted(p.relative_to(root) for p in root.rglob("*")
                  if p.is_file() and not ignore & set(p.relative_to(root).parts))


def write(html: Path | None = None, root: Path | None = None, log=print) -> Path:
    """Write the archive (atomically: a failed write never leaves half an archive)."""
    root = root or paths.ROOT
    out = target(html)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for rel in files(root):
            z.write(root / rel, f"{TOP}/{rel.as_posix()}")
    partial.replace(out)
    log(f"written: {paths.relative(out)} ({out.stat().st_size / 1e6:.1f} MB)")
    return out


def how_to_run(chapter_name: str, repository_url: str = "") -> str:
    """The box on a chapter's front page that says how to run it on one's own machine."""
    number = chapter_name[:2]
    if repository_url:
        get = (f'Clone <a href="{repository_url}">the book\'s repository</a> '
               "(`git clone`), and in its folder")
    else:
        get = (f'Download <a href="../../{FOLDER}/{NAME}">the book\'s source</a> '
               f"({NAME}: the library, every chapter, the data), unpack it, and in its folder "
               f"`{TOP}/`")
    return "\n".join([
        ":::{admonition} Run this chapter on your machine",
        ":class: note",
        f"{get} run `make run CHAPTER={number}` (the published run, in book mode), "
        f"`make quick CHAPTER={number}` (seconds), or `make lab CHAPTER={number}` to open its "
        "notebooks in JupyterLab. The first command installs the pinned packages into `.venv` "
        "(Python 3.11, CPU only, no GPU and no download at run time; where pip would take "
        "torch's CUDA build, run `make setup TORCH_INDEX=...` first with PyTorch's CPU-only "
        "wheel index); a notebook downloaded from this page runs inside that folder.",
        ":::",
    ])
