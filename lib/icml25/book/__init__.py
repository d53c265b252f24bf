"""What a notebook imports: the book's kernel side.

A chapter notebook uses it like this::

    # %% tags=["parameters"]
    mode = "book"  # choices: quick, book, paper
    seed = 0

    # %%
    from icml25 import book
    SIZES = {"quick": dict(n=200), "book": dict(n=500), "paper": dict(n=5000)}
    run = book.setup(mode=mode, seed=seed, sizes=SIZES)
    run.size.n                               # this mode's sizes, passed to methods as numbers
    rng = run.rng("bootstrap")               # a named, independent random stream
    ...
    book.claim("id", measured, interval=(lo, hi))   # declared in the chapter's claims.toml
    book.glue(n=run.size.n, rho=rho)         # values for {glue:text} in the prose
    book.show_figure(fig, "fig_name")         # a figure for a captioned {glue:figure}
    book.finish()                            # last cell: hands provenance to the runner

The run in progress (:func:`current`) holds everything a kernel keeps about it: its mode, seed,
sizes, clock, the claims reported and the declarations they read; :func:`setup` starts a new
one. The parts: :mod:`.params` (modes and the parameters cell), :mod:`.claims` and
:mod:`.declarations` (a claim's measurement against its declaration), :mod:`.pooling` (the
verdict over seeds), :mod:`.measure` (timing and growth rates), :mod:`.plotting`,
:mod:`.tables`, :mod:`.provenance` (what a run loaded, on which CPU and settings).

Beside it, never loaded by a notebook: :mod:`icml25.book.run` (the runner and the seed
records) and :mod:`icml25.book.site` (the generated pages); beneath it, :mod:`icml25.common`.
Editing the run or site machinery does not make an executed chapter stale.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from icml25.book import claims as _claims
from icml25.book import measure
from icml25.book.claims import Claim
from icml25.book.params import MODES, RECORD_ENV, ParameterError, check_mode, check_seed
from icml25.book.plotting import PALETTE, figure, use_style
from icml25.book.provenance import collect
from icml25.common import data
from icml25.common.streams import as_generator, seed_everything, stream, stream_int

__all__ = [
    "MODES",
    "PALETTE",
    "RECORD_ENV",
    "ParameterError",
    "Run",
    "claim",
    "current",
    "data",
    "figure",
    "finish",
    "glue",
    "measure",
    "seed_everything",
    "setup",
    "show_figure",
    "use_style",
]

@dataclass(frozen=True)
class Run:
    """What :func:`setup` returns: the mode, the seed, this mode's sizes, and its random streams.

    Every random draw of a run comes from a named stream of the run seed
    (:mod:`icml25.common.streams`):
    ``run.rng("bootstrap")`` is a numpy generator, ``run.seed_of("screen")`` an integer seed for a
    kernel that takes one (or seeds torch). Two names, or two run seeds, never share a stream;
    Offsets added to the run seed, which make run 1's stream 0 run 0's stream 1, are never used.
    """

    mode: str
    seed: int
    size: SimpleNamespace
    started: float
    #: The claims reported so far, by id, in the order first reported (:func:`claim`).
    claims: dict[str, Claim] = field(default_factory=dict)
    #: The declarations the claims read: provenance key → digest of the fields a run uses.
    declared: dict[str, str] = field(default_factory=dict)

    def rng(self, name: str) -> np.random.Generator:
        """The generator of the stream ``name`` of this run (the same on every call)."""
        return as_generator(stream(self.seed, name))

    def seed_of(self, name: str) -> int:
        """An integer seed for the stream ``name`` (for kernels that take ``seed=``)."""
        return stream_int(self.seed, name)


#: The run in progress: the one place where a kernel keeps run state (:func:`setup` resets it).
_CURRENT: Run | None = None


def current() -> Run:
    """The run in progress; :func:`setup` starts one."""
    if _CURRENT is None:
        raise RuntimeError("call book.setup(mode=..., seed=..., sizes=...) first")
    return _CURRENT


def setup(*, mode: str, seed: int, sizes: dict[str, dict], threads: int = 1) -> Run:
    """Validate the parameters, seed everything, apply the plotting style, start the clock.

    Parameters
    ----------
    mode : {"quick", "book", "paper"}
        Execution mode (see the book's introduction).
    seed : int
        The run's one seed (non-negative).
    sizes : dict
        ``{mode: {name: value}}`` for all three modes, with the same names in each: the one
        place where a chapter's sizes live.
    threads : int
        Threads for BLAS and torch (fixed for reproducible digits).
    """
    global _CURRENT
    mode, seed = check_mode(mode), check_seed(seed)
    missing = [m for m in MODES if m not in sizes]
    if missing:
        raise ValueError(f"sizes must define every mode; missing: {', '.join(missing)}")
    names = {m: set(sizes[m]) for m in MODES}
    if len({frozenset(v) for v in names.values()}) != 1:
        raise ValueError(f"sizes must use the same names in every mode; got {names}")
    data.forget()  # the inputs a run loaded are this run's
    seed_everything(seed, threads)
    use_style()
    _CURRENT = Run(mode, seed, SimpleNamespace(**sizes[mode]), time.perf_counter())
    return _CURRENT


def claim(id: str, value, *, interval: tuple | None = None, shown=None, note: str = "",
          threshold=None, digits: int = 3) -> None:
    """Report the measurement of one claim declared in the chapter's ``claims.toml``; display
    this run's verdict box. Returns nothing, so that a claim as the last line of a cell adds no
    second output. The arguments are :func:`icml25.book.claims.evaluate`'s."""
    run = current()
    record, read = _claims.evaluate(id, value, seed=run.seed, interval=interval, shown=shown,
                                    note=note, threshold=threshold, digits=digits)
    run.claims[id] = record
    run.declared.update(read)
    _claims.display(record)


def glue(*name_value, markdown: bool = False, **values) -> None:
    """Store computed values for the prose: ``{glue:text}`name:.3f``` in a Markdown cell.

    ``glue(n=size.n, rho=rho)`` glues each value under its keyword; ``glue("name", value)``
    glues one under a name that is not an identifier. This is myst-nb's ``glue`` without
    display; numpy scalars become Python numbers first, so that the format spec in the Markdown
    applies (``np.float64(0.9)`` would not format). With ``markdown=True`` strings are glued as
    MyST Markdown, for the ``{glue:md}`` directive. A matplotlib figure is closed once glued, so
    that it appears only where a ``{glue:figure}`` places it (e.g. inside a solution's
    dropdown); :func:`show_figure` also shows it under its cell.
    """
    if name_value:
        if len(name_value) != 2 or not isinstance(name_value[0], str):
            raise TypeError("glue takes (name, value) or name=value keywords")
        values = {name_value[0]: name_value[1], **values}
    if not values:
        raise TypeError("glue needs at least one value")
    for name, value in values.items():
        _glue_one(name, value, markdown)


def _glue_one(name: str, value, markdown: bool) -> None:
    from myst_nb import glue as myst_glue

    if isinstance(value, np.generic):
        value = value.item()
    if markdown:
        from IPython.display import Markdown

        value = Markdown(value)
    myst_glue(name, value, display=False)
    if type(value).__module__.startswith("matplotlib.figure"):
        import matplotlib.pyplot as plt

        plt.close(value)  # or the inline backend would draw it under the cell as well


def show_figure(fig, name: str) -> None:
    """Show a finished figure and glue it under ``name`` for its captioned place in the book.

    In Jupyter the figure appears under its cell. In the book the cell is tagged
    ``remove-output`` and a Markdown cell places the figure with a numbered caption (a one-
    sentence takeaway first) and alt text::

        ```{glue:figure} fig_tails
        :alt: Log-log densities of ... for five values of kappa.
        :name: fig-tails

        **Tails steepen as kappa grows.** Empirical densities ...
        ```
    """
    import matplotlib.pyplot as plt
    from myst_nb import glue as myst_glue

    if not name.isidentifier():
        raise ValueError(f"figure name must be an identifier (letters, digits, _); got {name!r}")
    myst_glue(name, fig, display=True)
    plt.close(fig)  # or the inline backend would draw it a second time


def finish() -> None:
    """Close the run: print one summary line and hand the provenance record to the runner.

    When the runner executes the notebook it sets ``$ICML25_RECORD`` to a file path, and the
    record (inputs loaded by sha256, versions, platform, duration, claims) is written there; the
    runner stores it in the executed notebook's metadata, never in its visible output.
    """
    run = current()
    record = collect(
        mode=run.mode,
        seed=run.seed,
        parameters={"mode": run.mode, "seed": run.seed},
        duration_s=time.perf_counter() - run.started,
        claims=list(run.claims.values()),
        declared=run.declared,
    )
    target = os.environ.get(RECORD_ENV)
    if target:
        with open(target, "w") as handle:
            json.dump(record, handle, indent=1)
    print(summary_line(record))


def summary_line(record: dict) -> str:
    """Two short lines: the run and how long it took; how many claims hold (and checks pass)
    in this run (the book's verdicts pool every seed)."""
    claims = [c for c in record["claims"] if c.get("kind", "claim") == "claim"]
    checks = [c for c in record["claims"] if c.get("kind") == "check"]
    parts = []
    if claims:
        parts.append(f"{sum(c['verdict'] == 'holds' for c in claims)} of {len(claims)} claims "
                     "hold")
    if checks:
        parts.append(f"{sum(c['verdict'] == 'holds' for c in checks)} of {len(checks)} checks "
                     "pass")
    what = ", ".join(parts) if parts else "no claims checked"
    return (f"Done ({record['mode']} mode, seed {record['seed']}, "
            f"{record['compute_s']:.0f} s of computation).\nIn this run {what}.")
