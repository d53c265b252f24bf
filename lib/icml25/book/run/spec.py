"""One execution of one notebook, said once: :class:`RunSpec`.

A run is a notebook source, a mode and the parameter overrides (the seed among them). The spec
is built and validated once, where the run is asked for (the command line, the seed record, a
test), and everything downstream reads it: whether the run **publishes** (book mode, no other
override: its notebook replaces the committed one), where its notebook goes, the values papermill
injects. In the kernel, :func:`icml25.book.setup` checks ``mode`` and ``seed`` with the same
functions (:func:`icml25.book.params.check_mode`, :func:`~icml25.book.params.check_seed`), for a
reader who edits the parameters cell by hand.

The runner and the kernel are two processes; what one tells the other goes through the
environment variables of :mod:`icml25.book.params`, and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icml25.book.params import PUBLISHED_MODE, Parameter, check_mode, validate_overrides
from icml25.book.run.notebooks import parameters as parameters_of
from icml25.common import paths


@dataclass(frozen=True)
class RunSpec:
    """A validated request to execute one notebook.

    Parameters
    ----------
    source : str
        The ``.py`` source, relative to the repository root (a worker on another machine finds
        it in its own checkout of the same commit).
    overrides : mapping
        Parameter values other than the notebook's defaults (``mode``, ``seed``, ...), already
        checked against its ``parameters`` cell; build a spec with :meth:`of` to check them.
    """

    source: str
    overrides: dict = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "overrides", dict(self.overrides))  # its own copy
        check_mode(self.mode)

    @classmethod
    def of(cls, py: Path | str, overrides: dict[str, Any] | None = None,
           parameters: dict[str, Parameter] | None = None) -> RunSpec:
        """The spec of running ``py`` with ``overrides``, checked against its parameters cell
        (read from ``py`` unless ``parameters`` is given); raise :class:`ParameterError`."""
        py = Path(py) if Path(py).is_absolute() else paths.ROOT / py
        if parameters is None:
            parameters = parameters_of(py)
        checked = validate_overrides(dict(overrides or {}), parameters, paths.relative(py))
        return cls(paths.relative(py), checked)

    @property
    def path(self) -> Path:
        return paths.ROOT / self.source

    @property
    def mode(self) -> str:
        return self.overrides.get("mode", PUBLISHED_MODE)

    @property
    def extra(self) -> dict[str, Any]:
        """The overrides other than the mode (the seed among them)."""
        return {k: v for k, v in self.overrides.items() if k != "mode"}

    @property
    def publishes(self) -> bool:
        """Book mode with nothing else overridden: the run that replaces the committed notebook."""
        return publishes(self.mode, self.extra)

    @property
    def tag(self) -> str:
        """``book.seed=3``: how the run's notebook is named under ``_build/runs/``."""
        return ".".join([self.mode, *(f"{k}={v}" for k, v in sorted(self.extra.items()))])

    @property
    def target(self) -> Path:
        """Where the executed notebook goes: the committed ``.ipynb`` or ``_build/runs/``."""
        py = self.path
        if self.publishes:
            return py.with_suffix(".ipynb")
        return paths.RUNS / py.parent.name / f"{py.stem}.{self.tag}.ipynb"

    @property
    def failed_target(self) -> Path:
        """Where a failed run's partial notebook is kept."""
        return paths.RUNS / "failed" / self.path.parent.name / f"{self.path.stem}.{self.tag}.ipynb"

    @property
    def injected(self) -> dict[str, Any] | None:
        """What papermill injects: nothing for the publication run (its notebook is the source's
        code, unchanged), the checked overrides otherwise."""
        return None if self.publishes else dict(self.overrides)

    def __str__(self) -> str:
        extra = ", ".join(f"{k}={v}" for k, v in self.extra.items())
        return f"{self.source} ({self.mode} mode{', ' + extra if extra else ''})"


def publishes(mode: str, extra: dict) -> bool:
    """Whether a run in ``mode`` with the other overrides ``extra`` is the publication run: the
    one rule, read by the runner (where to write) and by staleness (what a record says)."""
    return mode == PUBLISHED_MODE and not extra

