"""What a run reads of its chapter's ``claims.toml``: the fields that decide a verdict.

A notebook's kernel imports this module, not :mod:`icml25.book.declarations`. It reads, for each
claim its notebook reports, :data:`RUN_FIELDS` (the id, the notebook, the kind, the comparison
and the threshold) and nothing else. The full declarations (the statement, the paper's words,
fidelity, tolerances, history, the headline) are parsed and validated by
:mod:`icml25.book.declarations` when the pages are built and the tests run. A notebook records
the modules it imported as inputs of its run, so a new build-time field, or a change to the
validation of one, leaves every notebook fresh; a change to a threshold or to this reader does
not.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

from icml25.common import paths

FILE = "claims.toml"
#: The fields a run of the notebook uses to measure and to decide its verdict: a change to one
#: of them makes the notebook stale. The others (the statement, the paper's words, fidelity,
#: tolerances, history, ...) are read when the pages are built or the tests compare two runs.
RUN_FIELDS = ("id", "notebook", "kind", "op", "threshold")
#: The threshold of a claim whose run derives it (a bound at the run's size, a chance level).
COMPUTED = "computed"
#: Suffix of a provenance input key that covers one notebook's run fields of ``claims.toml``.
KEY = "#claims:"


class DeclarationError(ValueError):
    """A ``claims.toml`` that is malformed, or a claim reported that it does not declare."""


def _fields(entry: dict, where: str) -> dict:
    missing = [k for k in RUN_FIELDS if k not in entry]
    if missing:
        raise DeclarationError(f"{where}: missing {', '.join(missing)}")
    fields = {k: entry[k] for k in RUN_FIELDS}
    threshold = fields["threshold"]
    if fields["op"] == "in" and isinstance(threshold, list) and threshold != COMPUTED:
        # a range is compared in floats (as icml25.book.declarations normalises it)
        fields["threshold"] = tuple(float(v) for v in threshold)
    return fields


def run_fields(chapter_dir: Path, notebook: str | None = None) -> dict[str, dict]:
    """``{id: {field: value}}`` of :data:`RUN_FIELDS` for the claims of ``chapter_dir`` (those
    that ``notebook`` reports, if named), in the file's order; empty without a ``claims.toml``."""
    file = Path(chapter_dir) / FILE
    if not file.exists():
        return {}
    where = paths.relative(file)
    try:
        data = tomllib.loads(file.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise DeclarationError(f"{where}: not valid TOML: {exc}") from None
    found = {}
    for number, entry in enumerate(data.get("claims", []), 1):
        fields = _fields(entry, f"{where}, claim {number} ({entry.get('id', '?')})")
        if notebook is None or fields["notebook"] == notebook:
            found[fields["id"]] = fields
    return found


def run_digest(chapter_dir: Path, notebook: str) -> str:
    """sha256 of the fields a run of ``notebook`` uses (:data:`RUN_FIELDS`), in order.

    A notebook goes stale when a threshold or a comparison changes, not when a statement, a
    fidelity label, a quote or a tolerance is edited: those are read when the pages are built
    and the runs compared.
    """
    fields = list(run_fields(chapter_dir, notebook).values())
    text = json.dumps(fields, sort_keys=True, default=list)
    return hashlib.sha256(text.encode()).hexdigest()


def input_key(chapter_dir: Path, notebook: str) -> str:
    return paths.relative(Path(chapter_dir) / FILE) + KEY + notebook


def digest_of_key(key: str) -> str | None:
    """The current digest of a provenance key made by ``input_key`` (``None`` if gone)."""
    rel, _, notebook = key.partition(KEY)
    file = paths.ROOT / rel
    if not file.exists():
        return None
    return run_digest(file.parent, notebook)
