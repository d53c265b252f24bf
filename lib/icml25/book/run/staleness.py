"""Is a committed notebook what its inputs produce today?  Compare provenance with the tree."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from icml25.book import declarations
from icml25.book.run.spec import publishes
from icml25.common import paths
from icml25.common.hashing import code_digest, sha256_file


@dataclass
class State:
    """Freshness of one notebook pair, and what its last book-mode execution recorded."""

    source: Path
    stale: bool
    reasons: list[str] = field(default_factory=list)
    record: dict | None = None

    @property
    def executed(self) -> Path:
        return self.source.with_suffix(".ipynb")

    @property
    def duration(self) -> float | None:
        return self.record.get("duration_s") if self.record else None

    @property
    def claims(self) -> list[dict]:
        """The recorded claims; a record from before verdicts were computed reads its ``holds``."""
        found = self.record.get("claims", []) if self.record else []
        return [c if "verdict" in c else
                {**c, "verdict": "holds" if c.get("holds") else "does not hold"} for c in found]


def read_record(ipynb: Path) -> dict | None:
    nb = nbformat.read(ipynb, as_version=4)
    return nb.metadata.get("icml25")


def input_digest(rel: str) -> str | None:
    """The current digest of a provenance input: a module's code digest (comments and
    docstrings left out), a data file's sha256, or for a key into ``claims.toml`` the digest of
    the fields a run uses; ``None`` when it is gone."""
    if declarations.KEY in rel:
        return declarations.digest_of_key(rel)
    path = paths.ROOT / rel
    if not path.exists():
        return None
    return code_digest(path) if path.suffix == ".py" else sha256_file(path)


def state(py: Path) -> State:
    """Stale when never executed, executed outside book mode, or an input's sha256 changed."""
    ipynb = py.with_suffix(".ipynb")
    if not ipynb.exists():
        return State(py, True, ["never executed"])
    record = read_record(ipynb)
    if not record:
        return State(py, True, ["no provenance record"])
    reasons = []
    if not publishes(record.get("mode"), record.get("overrides") or {}):
        reasons.append(f"executed in {record.get('mode')} mode with {record.get('overrides')}")
    if record.get("source_sha256") != sha256_file(py):
        reasons.append(f"source changed: {py.name}")
    for rel, digest in record.get("inputs", {}).items():
        now = input_digest(rel)
        if now is None:
            reasons.append(f"input removed: {rel}")
        elif now != digest:
            reasons.append(f"input changed: {rel}")
    key = declarations.input_key(py.parent, py.stem)
    if record.get("claims") is not None and key not in record.get("inputs", {}) and \
            declarations.for_notebook(py.parent, py.stem):
        reasons.append(f"claims declared since: {declarations.FILE}")
    return State(py, bool(reasons), reasons, record)
