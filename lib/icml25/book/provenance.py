"""Provenance of one execution: what the run loaded (by sha256), versions, duration, claims.

The kernel side collects the record at the end of a notebook (:func:`collect`); the runner adds
the sha256 of the ``.py`` source and stores everything in the executed notebook's metadata under
``icml25``.  :mod:`icml25.book.run.staleness` compares that record with the working tree.
"""

from __future__ import annotations

import platform
import sys
from importlib import metadata
from pathlib import Path

from icml25.common import data, numerics, paths
from icml25.common.hashing import code_digest

#: Distributions whose versions are recorded when the run imported them (module → distribution).
TRACKED = {
    "numpy": "numpy",
    "scipy": "scipy",
    "pandas": "pandas",
    "sklearn": "scikit-learn",
    "ot": "POT",
    "torch": "torch",
    "matplotlib": "matplotlib",
    "seaborn": "seaborn",
}

LIB = Path(__file__).resolve().parents[1]  # lib/icml25


def loaded_modules() -> dict[str, str]:
    """Project source files imported by this process, relative path → digest of their code
    (:func:`~icml25.common.hashing.code_digest`: comments and docstrings left out, so editing
    them re-executes nothing): the ``icml25`` modules, and the chapter's own ``_chapter.py``
    (a module in the notebook's folder, the working directory of its kernel)."""
    here = Path.cwd().resolve()
    found = {}
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not file or not Path(file).is_absolute():  # torch.ops names a bare "_ops.py"
            continue
        file = Path(file).resolve()
        ours = (getattr(module, "__name__", "").startswith("icml25") and LIB in file.parents)
        local = file.parent == here and paths.CHAPTERS in file.parents
        if file.suffix == ".py" and (ours or local):
            found[paths.relative(file)] = code_digest(file)
    return dict(sorted(found.items()))


def versions() -> dict[str, str]:
    """Python and the tracked libraries that this process imported."""
    found = {"python": platform.python_version()}
    for module, dist in TRACKED.items():
        if module in sys.modules:
            try:
                found[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:  # pragma: no cover
                pass
    return found


def collect(*, mode: str, seed: int, parameters: dict, duration_s: float,
            claims: list, declared: dict[str, str]) -> dict:
    """The record of this run (everything but the source hash, which the runner adds): the
    modules and data it loaded, the declarations its ``claims`` read (``declared``)."""
    inputs = loaded_modules()
    inputs.update(data.loaded())
    inputs.update(declared)
    return {
        "mode": mode,
        "seed": seed,
        "parameters": parameters,
        "compute_s": round(duration_s, 2),
        "versions": versions(),
        "platform": numerics.describe(),
        "inputs": dict(sorted(inputs.items())),
        "claims": [c.as_dict() for c in claims],
    }
