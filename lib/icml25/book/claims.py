"""The claims helper: a paper's statement, checked against what the chapter measured.

A claim is structured: the measured value $v$, a comparison ``op`` and a threshold $t$ fixed
from the paper's statement before the run. The helper computes the verdict, so no chapter
decides it by hand:

* **holds** when $v \\;\\mathrm{op}\\; t$;
* **does not hold** otherwise;
* **inconclusive** when the claim carries the uncertainty of a Monte-Carlo estimate, an interval
  $[\\ell, u]$ around $v$, and the threshold lies strictly inside it: the run cannot tell.

``claim(...)`` displays a verdict box (HTML for the book and Jupyter, one plain line elsewhere)
and attaches the structured record under the MIME type :data:`MIME`; the tests compare that
record, verdict exactly and value within the tolerance the claim declares, instead of the
rendered text (see ``conftest.py``). :func:`icml25.book.finish` hands the records to the runner,
which stores them in the executed notebook, from which the claims ledger is generated.

``kind="check"`` marks a statement that holds by construction or verifies a theorem's bound (it
can only fail through a bug): it is checked the same way, but the ledger lists it apart from the
paper's empirical claims.
"""

from __future__ import annotations

import html
import json
import math
import operator
import os
import textwrap
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

#: MIME type of the structured claim record inside a claim cell's output.
MIME = "application/vnd.icml25.claim+json"

#: The comparisons a claim may state, with the symbol printed for each.
OPS = {
    ">=": (operator.ge, "≥"),
    ">": (operator.gt, ">"),
    "<=": (operator.le, "≤"),
    "<": (operator.lt, "<"),
    "==": (operator.eq, "="),
    "in": (None, "∈"),
}
VERDICTS = ("holds", "does not hold", "inconclusive")
KINDS = ("claim", "check")

#: Default tolerance on the value when the tests re-execute a notebook: numpy/scipy kernels move
#: the last digits between CPUs, never the fourth significant one. Chapters whose figures come
#: from trained models declare wider tolerances and say why.
DEFAULT_RTOL = 1e-4

#: Set by the runner for the kernel: the notebook source being executed, relative to the root.
SOURCE_ENV = "ICML25_SOURCE"
#: The chapter's seed-robustness record (see :mod:`icml25.book.robustness`).
SEEDS_FILE = "_robustness.json"

_RECORDED: dict[str, "Claim"] = {}
#: The seed of the run in progress (set by ``book.setup``).
CURRENT_SEED: int | None = None
_SEED_FILES: dict[str, str] = {}  # relative path → sha256 of seed records read by this run


@dataclass(frozen=True)
class Claim:
    """One checked claim, as it appears in the ledger and in the claim cell's output."""

    id: str
    statement: str
    paper: str
    value: float | bool
    op: str
    threshold: float | bool | tuple
    verdict: str
    measured: str
    kind: str = "claim"
    interval: tuple | None = None
    rtol: float = DEFAULT_RTOL
    atol: float = 0.0
    timed: bool = False
    note: str = ""
    seeds: dict | None = None

    @property
    def holds(self) -> bool:
        return self.verdict == "holds"

    def criterion(self) -> str:
        """``≥ 0.9``, ``∈ [0.91, 0.99]``, ``= True``: the threshold as a reader reads it."""
        symbol = OPS[self.op][1]
        if self.op == "in":
            lo, hi = self.threshold
            return f"{symbol} [{format_measured(lo)}, {format_measured(hi)}]"
        return f"{symbol} {format_measured(self.threshold)}"

    def requirement(self) -> str:
        """``threshold ≥ 0.9``, or ``required: yes`` for a compound (yes/no) statement."""
        if isinstance(self.threshold, bool):
            return f"required: {format_measured(self.threshold)}"
        return f"threshold {self.criterion()}"

    def ours(self) -> str:
        """The measured figure, with its interval where there is one."""
        text = self.measured
        if self.interval is not None:
            lo, hi = self.interval
            text += f" [{format_measured(lo)}, {format_measured(hi)}]"
        return text

    def line(self) -> str:
        """One plain-text line (wrapped at 88 columns) for terminals and logs."""
        label = self.verdict.upper() if self.kind == "claim" else f"check {self.verdict}"
        text = (f"[{self.id}] {label}: {self.statement} | ours: {self.ours()} "
                f"({self.requirement()}) | paper: {self.paper}")
        text += f" | {self.note}" if self.note else ""
        text += f" | seeds: {self.seeds_text()}" if self.seeds else ""
        return textwrap.fill(text, 88, subsequent_indent="    ")

    def seeds_text(self) -> str:
        """``holds in 3 of 5 seeds (fragile: ...)`` from the chapter's seed record."""
        if not self.seeds:
            return ""
        text = f"holds in {self.seeds['holds']} of {self.seeds['n']} seeds"
        if self.seeds["fragile"]:
            text += "; fragile: the verdict depends on the seed"
        return text

    def box(self) -> str:
        """The verdict box: claim, threshold, ours, the paper's figure, the note."""
        colours = {"holds": ("#1b5e20", "#e8f5e9", "✔"),
                   "does not hold": ("#b71c1c", "#ffebee", "✘"),
                   "inconclusive": ("#8a5a00", "#fff8e1", "?")}
        ink, paper_bg, mark = colours[self.verdict]
        kind = "Claim" if self.kind == "claim" else "Check"
        esc = html.escape
        note = (f'<div style="margin-top:.25em"><em>{esc(self.note)}</em></div>'
                if self.note else "")
        if self.seeds:
            weight = "font-weight:bold;" if self.seeds["fragile"] else ""
            note += (f'<div style="margin-top:.25em;{weight}">Seeds 0-{self.seeds["n"] - 1}: '
                     f"{esc(self.seeds_text())}</div>")
        return (
            f'<div class="icml25-claim icml25-{self.verdict.replace(" ", "-")}" role="note" '
            f'style="border-left:.3em solid {ink};background:{paper_bg};color:#212121;'
            f'padding:.45em .8em;margin:.3em 0;border-radius:.2em;line-height:1.45;'
            f'overflow-wrap:anywhere">'
            f'<div><strong style="color:{ink}">{mark} {kind} {esc(self.verdict)}</strong> '
            f'<code style="background:none;color:#555">{esc(self.id)}</code></div>'
            f"<div>{esc(self.statement)}</div>"
            f'<div style="margin-top:.25em"><strong>Ours:</strong> {esc(self.ours())} '
            f"({esc(self.requirement())}) · <strong>Paper:</strong> {esc(self.paper)}"
            f"</div>{note}</div>"
        )

    def as_dict(self) -> dict:
        record = asdict(self)
        record["holds"] = self.holds  # kept for readers of older records
        return record

    def bundle(self) -> dict:
        """The MIME bundle displayed by :func:`claim`."""
        return {"text/html": self.box(), "text/plain": self.line(), MIME: self.as_dict()}


def format_measured(value, digits: int = 3) -> str:
    """Round a measured figure for printing: ``digits`` significant digits, stable across runs."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if not math.isfinite(value):
            return str(value)
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.{digits}g}"
    if isinstance(value, str):
        return value
    if isinstance(value, (tuple, list)):
        return ", ".join(format_measured(v, digits) for v in value)
    raise TypeError(f"measured must be a number, a string or a sequence of them, got {type(value)}")


def _number(value, what: str):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value) if isinstance(value, (float, np.floating)) else int(value)
    raise TypeError(f"{what} must be a number or a bool, got {value!r} ({type(value).__name__})")


def verdict(value, op: str, threshold, interval: tuple | None = None) -> str:
    """The verdict of ``value op threshold``, *inconclusive* when ``interval`` straddles it.

    Parameters
    ----------
    value : float or bool
        The measured value $v$.
    op : {">=", ">", "<=", "<", "==", "in"}
        The comparison; ``"in"`` takes a closed range ``(lo, hi)`` as threshold.
    threshold : float, bool or (float, float)
        The threshold $t$ (or range) fixed before the run.
    interval : (float, float), optional
        Uncertainty $[\\ell, u]$ of $v$ (a confidence interval or $\\pm$ two standard errors).
        The verdict is inconclusive when a threshold lies strictly inside it.
    """
    if op not in OPS:
        raise ValueError(f"op must be one of {', '.join(OPS)}; got {op!r}")
    if op == "in":
        lo, hi = threshold
        ok = lo <= value <= hi
        edges = (lo, hi)
    else:
        ok = bool(OPS[op][0](value, threshold))
        edges = (threshold,)
    if interval is not None and not isinstance(value, bool):
        low, high = interval
        if any(low < edge < high for edge in edges):
            return "inconclusive"
    return "holds" if ok else "does not hold"


def claim(
    id: str,
    statement: str,
    value,
    op: str,
    threshold,
    *,
    paper: str,
    note: str = "",
    kind: str = "claim",
    interval: tuple | None = None,
    rtol: float = DEFAULT_RTOL,
    atol: float = 0.0,
    timed: bool = False,
    shown=None,
    digits: int = 3,
) -> None:
    """Check and record one claim of the paper; display its verdict box.

    The verdict is computed here (see :func:`verdict`); returns nothing, so that a claim as the
    last line of a cell adds no second output.

    Parameters
    ----------
    id : str
        Short stable identifier, unique in the chapter (``"spearman"``).
    statement : str
        The claim as checked here, in words, including its threshold
        (``"Spearman(s-OTDD, OTDD) >= 0.9 over 20 pairs"``).
    value : float, int or bool
        The measured value $v$ that the threshold applies to. A compound statement (``a and b``)
        passes a bool with ``op="=="`` and ``threshold=True``.
    op, threshold
        The comparison and the threshold $t$, fixed from the paper before the run.
    paper : str
        The paper's figure or statement, for comparison.
    note : str
        Why it does not hold at this scale, or a caveat.
    kind : {"claim", "check"}
        ``"check"`` for what holds by construction or verifies a theorem's bound.
    interval : (float, float), optional
        The estimate's uncertainty; makes the verdict *inconclusive* when it straddles $t$.
    rtol, atol : float
        How far the value may move when the notebook is re-executed on another machine
        (relative, absolute) and still count as the same result: $|v - v_0| \\le
        \\mathrm{atol} + \\mathrm{rtol}\\,|v_0|$. The verdict must always match exactly.
    timed : bool
        The value comes from wall-clock times (a slope, a speed-up). Times depend on the machine
        and its load, so a re-execution may land on the other side of a threshold that the
        value sits close to: for a timed claim the tests accept a verdict that differs when the
        value is within the tolerance. The seed-robustness record shows how settled it is.
    shown : optional
        What to print as "ours" when it is not ``value`` itself (e.g. a pair of figures).
    """
    if not isinstance(id, str) or not id.strip():
        raise ValueError("claim id must be a non-empty string")
    if kind not in KINDS:
        raise ValueError(f"claim kind must be one of {', '.join(KINDS)}; got {kind!r}")
    if op not in OPS:
        raise ValueError(f"claim op must be one of {', '.join(OPS)}; got {op!r}")
    value = _number(value, "claim value")
    if op == "in":
        if not (isinstance(threshold, (tuple, list)) and len(threshold) == 2):
            raise ValueError(f"op 'in' needs a (low, high) threshold; got {threshold!r}")
        threshold = tuple(_number(t, "threshold") for t in threshold)
        if threshold[0] > threshold[1]:
            raise ValueError(f"threshold range must be (low, high); got {threshold!r}")
    else:
        threshold = _number(threshold, "threshold")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"claim {id!r}: the measured value is {value}")
    if interval is not None:
        if len(interval) != 2 or interval[0] > interval[1]:
            raise ValueError(f"interval must be (low, high); got {interval!r}")
        interval = (float(interval[0]), float(interval[1]))
    if rtol < 0 or atol < 0:
        raise ValueError(f"tolerances must be non-negative; got rtol={rtol}, atol={atol}")
    record = Claim(
        id=id,
        statement=statement,
        paper=paper,
        value=value,
        op=op,
        threshold=threshold,
        verdict=verdict(value, op, threshold, interval),
        measured=format_measured(value if shown is None else shown, digits),
        kind=kind,
        interval=interval,
        rtol=float(rtol),
        atol=float(atol),
        timed=bool(timed),
        note=note,
    )
    record = replace(record, seeds=_seed_summary(id, record.verdict))
    _RECORDED[id] = record
    _display(record)


def seed_summary(seeds: dict) -> dict:
    """``{"holds": k, "n": n, "fragile": bool, "verdicts": {...}}`` from ``{seed: {verdict}}``."""
    verdicts = [v["verdict"] for v in seeds.values() if v is not None]
    counts = {v: verdicts.count(v) for v in sorted(set(verdicts))}
    return {"holds": verdicts.count("holds"), "n": len(verdicts), "fragile": len(counts) > 1,
            "verdicts": counts}


def _seed_summary(claim_id: str, verdict_now: str) -> dict | None:
    """The claim's verdicts over seeds, from the chapter's committed record, when there is one.

    Read only when the runner says which notebook it executes (``$ICML25_SOURCE``); the record's
    sha256 joins the run's inputs, so a new record makes the notebook stale. This run's own seed
    counts with this run's verdict (a timed claim may differ from the recorded one).
    """
    source = os.environ.get(SOURCE_ENV)
    if not source:
        return None
    from . import paths
    from .hashing import sha256_file

    path = paths.ROOT / Path(source).parent / SEEDS_FILE
    if not path.exists():
        return None
    _SEED_FILES[paths.relative(path)] = sha256_file(path)
    for c in json.loads(path.read_text())["claims"]:
        if c["notebook"] == Path(source).name and c["id"] == claim_id:
            seeds = dict(c["seeds"])
            if str(CURRENT_SEED) in seeds:
                seeds[str(CURRENT_SEED)] = {**(seeds[str(CURRENT_SEED)] or {}),
                                            "verdict": verdict_now}
            return seed_summary(seeds)
    return None


def seed_files() -> dict[str, str]:
    """Seed records read by this run's claims, relative path → sha256 (for the provenance)."""
    return dict(_SEED_FILES)


def _display(record: Claim) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython comes with the notebook stack
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        display(record.bundle(), raw=True)
    else:
        print(record.line())


def same_result(published: dict, rerun: dict) -> str | None:
    """Compare two records of one claim; ``None`` when they agree, else what differs.

    The verdict must be identical (for a ``timed`` claim, unless the value is within tolerance);
    the value may move by the tolerance the published record declares,
    $|v - v_0| \\le \\mathrm{atol} + \\mathrm{rtol}\\,|v_0|$.
    """
    v0, v = published.get("value"), rerun.get("value")
    if isinstance(v0, bool) or isinstance(v, bool):
        close = v0 == v
    else:
        allowed = published.get("atol", 0.0) + published.get("rtol", DEFAULT_RTOL) * abs(v0)
        close = abs(v - v0) <= allowed
    if published.get("verdict") != rerun.get("verdict") and not (published.get("timed") and close):
        return (f"claim {published.get('id')!r}: verdict {rerun.get('verdict')!r}, "
                f"published {published.get('verdict')!r}")
    if isinstance(v0, bool) or isinstance(v, bool):
        return None if close else f"claim {published.get('id')!r}: {v} against {v0}"
    if not close:
        return (f"claim {published.get('id')!r}: value {v!r} differs from the published {v0!r} "
                f"by {abs(v - v0):.3g} > tolerance {allowed:.3g}")
    return None


def glance(records: list[Claim]) -> str:
    """MyST Markdown listing the verdicts, one line each: the "results at a glance" box."""
    roles = {"holds": "bdg-success", "does not hold": "bdg-danger", "inconclusive": "bdg-warning"}
    lines = []
    for kind, title in (("claim", "The paper's claims"), ("check", "Checks")):
        chosen = [c for c in records if c.kind == kind]
        if not chosen:
            continue
        if kind == "check":
            lines.append(f"\n{title} (hold by construction or verify a bound): " + ", ".join(
                f"{{{roles[c.verdict]}}}`{c.verdict}` {c.id}" for c in chosen) + ".")
            continue
        for c in chosen:
            statement = c.statement.replace("`", "'")
            fragile = (" {bdg-warning-line}`fragile: " + c.seeds_text().split(";")[0] + "`"
                       if c.seeds and c.seeds["fragile"] else "")
            lines.append(f"- {{{roles[c.verdict]}}}`{c.verdict}`{fragile} {statement}: "
                         f"**{c.ours()}** ({c.requirement()})")
    return "\n".join(lines).strip() or "No claims are checked on this page."


def split_outputs(outputs: list) -> tuple[list[dict], list]:
    """A cell's outputs split into claim records (by :data:`MIME`) and the other outputs."""
    found, rest = [], []
    for output in outputs:
        data = output.get("data", {})
        (found if MIME in data else rest).append(output)
    return [dict(o["data"][MIME]) for o in found], rest


def compare_outputs(rerun_outputs: list, published_outputs: list) -> list[str]:
    """What differs between the claims of a re-executed cell and those of the published one."""
    rerun, published = split_outputs(rerun_outputs)[0], split_outputs(published_outputs)[0]
    ids, published_ids = [c.get("id") for c in rerun], [c.get("id") for c in published]
    if ids != published_ids:
        return [f"claims {ids} made, {published_ids} published"]
    return [p for old, new in zip(published, rerun) if (p := same_result(old, new))]


def recorded() -> list[Claim]:
    """Claims recorded so far in this process, in the order they were first made."""
    return list(_RECORDED.values())


def reset() -> None:
    _RECORDED.clear()
    _SEED_FILES.clear()
