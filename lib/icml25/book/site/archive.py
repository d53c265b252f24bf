"""The book's own source as one archive, published with the site: what a reader downloads to
run a chapter (``_build/html/_downloads/icml25-book.zip``, written by ``make html``).

A downloaded notebook does ``import icml25``; the archive holds everything that makes that
work: ``lib/``, the chapters with their executed notebooks and seed records, ``data/`` with
its MANIFEST, the Makefile and the pinned requirements. Unpacked, ``make run CHAPTER=NN`` or
``make lab CHAPTER=NN`` runs a chapter as on the author's machine. The files are those that
git tracks (the committed book, not the build or a virtual environment); outside a git checkout
(an unpacked archive) the tree minus what ``.gitignore``'s plain names exclude.
Where ``repository.url`` is set in ``_config.yml`` the pages point to the repository instead.

Each chapter also has an archive of its own (``icml25-NN.zip``): the same tree with that chapter
alone and only the data files that its runs loaded (their provenance lists them), a few MB
instead of the whole book's data.
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


def chapter_archive(number: str) -> str:
    """``icml25-NN.zip``: the archive of chapter ``NN`` alone."""
    return f"icml25-{number}.zip"


def chapter_files(chapter: str, root: Path | None = None) -> list[Path]:
    """The files of :func:`files` that running chapter ``chapter`` (its folder name) needs: the
    library, the build files, that chapter, and of ``data/`` the MANIFEST and the files its
    notebooks and its seed record loaded (their provenance lists them); no other chapter, no
    tests, no book pages."""
    import json

    root = root or paths.ROOT
    folder = root / "chapters" / chapter
    used = set()
    for notebook in folder.glob("*.ipynb"):
        record = json.loads(notebook.read_text()).get("metadata", {}).get("icml25", {})
        used |= set(record.get("inputs", {}))
    seeds = folder / "_robustness.json"
    if seeds.exists():
        used |= set(json.loads(seeds.read_text()).get("inputs", {}))

    def needed(rel: Path) -> bool:
        top = rel.parts[0]
        if top in ("tests", "book", ".ci"):
            return False
        if top == "chapters":
            return len(rel.parts) == 2 or rel.parts[1] == chapter
        if top == "data":
            return rel.name == "MANIFEST" or rel.as_posix() in used
        return True

    return [rel for rel in files(root) if needed(rel)]


def _zip(out: Path, top: str, root: Path, rels: list[Path], log) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for rel in rels:
            z.write(root / rel, f"{top}/{rel.as_posix()}")
    partial.replace(out)  # atomic: a failed write never leaves half an archive
    log(f"written: {paths.relative(out)} ({out.stat().st_size / 1e6:.1f} MB)")
    return out


def write(html: Path | None = None, root: Path | None = None, log=print,
          chapters: bool = True) -> Path:
    """Write the book's archive and (``chapters``) one per chapter; return the book's."""
    root = root or paths.ROOT
    out = _zip(target(html), TOP, root, files(root), log)
    if chapters:
        for folder in sorted((root / "chapters").glob("[0-9][0-9]-*")):
            number = folder.name[:2]
            _zip(out.with_name(chapter_archive(number)), f"icml25-{number}", root,
                 chapter_files(folder.name, root), log)
    return out


def how_to_run(chapter_name: str, repository_url: str = "") -> str:
    """The box on a chapter's front page that says how to run it on one's own machine."""
    number = chapter_name[:2]
    if repository_url:
        get = (f'Clone <a href="{repository_url}">the book\'s repository</a> '
               "(`git clone`), and in its folder")
    else:
        own = chapter_archive(number)
        get = (f'Download <a href="../../{FOLDER}/{own}">this chapter\'s source</a> '
               f"({own}: the library, this chapter and its data; or "
               f'<a href="../../{FOLDER}/{NAME}">the whole book\'s</a>), unpack it, and in its '
               f"folder")
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
