"""The data registry: committed inputs under ``data/``, each listed in ``data/MANIFEST``.

``data/MANIFEST`` has one line per file, tab-separated::

    relative/path.npz<TAB>sha256<TAB>command that regenerates it

:func:`path` is how a chapter opens a committed file: it checks the sha256 against the manifest
(a changed or unlisted file is refused) and records the load for the notebook's provenance.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from icml25.common import paths
from icml25.common.hashing import sha256_file

#: The files opened through :func:`path` (relative path → sha256). A method module loads data
#: without knowing the run, so the log is the registry's; each run starts a fresh one.
_LOADED: dict[str, str] = {}


@dataclass(frozen=True)
class Entry:
    path: str
    sha256: str
    command: str


def read_manifest(manifest: Path | None = None) -> dict[str, Entry]:
    """Entries of ``data/MANIFEST`` by relative path (comments and blank lines skipped)."""
    manifest = manifest or paths.DATA / "MANIFEST"
    entries: dict[str, Entry] = {}
    if not manifest.exists():
        return entries
    for number, line in enumerate(manifest.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 3 or len(fields[1]) != 64:
            raise ValueError(f"{manifest}:{number}: expected PATH<TAB>SHA256<TAB>COMMAND, got {line!r}")
        entries[fields[0]] = Entry(*fields)
    return entries


def path(name: str, *, root: Path | None = None) -> Path:
    """Absolute path of the committed data file ``data/<name>``, verified against the manifest.

    Raises
    ------
    FileNotFoundError
        The file is not there (the manifest says how to regenerate it).
    ValueError
        The file is not listed, or its sha256 differs from the manifest's.
    """
    root = root or paths.DATA
    entries = read_manifest(root / "MANIFEST")
    if name not in entries:
        raise ValueError(f"data/{name} is not listed in data/MANIFEST; add it with its sha256")
    entry = entries[name]
    file = root / name
    if not file.exists():
        raise FileNotFoundError(f"data/{name} is missing; regenerate it with: {entry.command}")
    digest = sha256_file(file)
    if digest != entry.sha256:
        raise ValueError(
            f"data/{name} has sha256 {digest[:12]}… but data/MANIFEST lists {entry.sha256[:12]}…; "
            f"regenerate it with: {entry.command}"
        )
    _LOADED[paths.relative(file)] = digest
    return file


def check(root: Path | None = None) -> list[str]:
    """Problems with the committed data: missing files and sha256 mismatches."""
    root = root or paths.DATA
    problems = []
    for name, entry in read_manifest(root / "MANIFEST").items():
        file = root / name
        if not file.exists():
            problems.append(f"data/{name}: missing (regenerate: {entry.command})")
        elif sha256_file(file) != entry.sha256:
            problems.append(f"data/{name}: sha256 differs from data/MANIFEST")
    return problems


def loaded() -> dict[str, str]:
    """Data files opened through :func:`path` since :func:`forget`, with their sha256: the
    inputs of the run's provenance."""
    return dict(_LOADED)


def forget() -> None:
    """Start a new log of loads (``book.setup`` does, at the start of every run)."""
    _LOADED.clear()
