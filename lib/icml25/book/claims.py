"""Claims, as a run reports them: the measurement of a declared claim, and this run's verdict.

What a claim says is declared before it is measured, in the chapter's ``claims.toml``
(:mod:`icml25.book.declarations`): the statement, the paper's words, a fidelity class, the
comparison ``op`` and the threshold $t$ fixed from the paper's statement. A notebook reports the
measured value $v$ by id, with its interval where the run has one; this run's verdict is

* **holds** when $v \\;\\mathrm{op}\\; t$;
* **does not hold** otherwise;
* **inconclusive** when the run's interval $[\\ell, u]$ around $v$ straddles the threshold.

The verdict the book publishes is not this one: it pools every seed of the chapter's seed
record, when the pages are built (:mod:`icml25.book.pooling`).

The kernel side is a recorder: ``claim(...)`` displays the structured record of the
measurement (:data:`RECORDED`) under the MIME type :data:`MIME`, with one plain line beside it.
What a reader sees of a claim (its box, the declaration's words and labels, the pooled verdict)
is rendered from that record and the current declarations when the pages are built
(:mod:`icml25.book.site.boxes`), so editing a statement or a label re-executes nothing. The tests
compare the record, verdict exactly and value within the declared tolerance (a timed claim
only for its presence), never the text (see ``conftest.py``). :func:`icml25.book.finish` hands
the records to the runner, which stores them in the executed notebook's provenance.

A ``check`` (declared ``kind = "check"``) holds by construction or verifies a theorem's bound:
it can only fail through a bug, and the ledger lists it apart from the paper's claims.
"""

from __future__ import annotations

import math
import operator
import os
import textwrap
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from icml25.book.params import SOURCE_ENV

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

#: The chapter's seed record (see :mod:`icml25.book.run.robustness`); read when the pages are built.
SEEDS_FILE = "_robustness.json"



#: What a run records of a claim: its measurement and this run's verdict. The declaration's
#: words, labels and tolerances are read from ``claims.toml`` whenever they are needed.
RECORDED = ("id", "kind", "value", "op", "threshold", "verdict", "measured", "interval", "note",
            "seed", "shown")
#: The declared fields that the tests read to compare two runs of a claim.
TOLERANCE = ("rtol", "atol", "timed")


@dataclass(frozen=True)
class Claim:
    """One checked claim: a run's record (:data:`RECORDED`) and, where known, what its
    declaration says (statement, the paper's words, fidelity, tolerances)."""

    id: str
    value: float | bool
    op: str
    threshold: float | bool | tuple
    verdict: str
    measured: str
    kind: str = "claim"
    interval: tuple | None = None
    note: str = ""
    seed: int | None = None
    shown: str = ""  # the figures behind the value, labelled (``SOP 0.83 vs backbone 0.97``)
    # from the declaration, not recorded
    statement: str = ""
    paper: str = ""
    fidelity: str = "paper"
    rtol: float = DEFAULT_RTOL
    atol: float = 0.0
    timed: bool = False

    @classmethod
    def of(cls, record: dict, declaration=None) -> Claim:
        """The claim of a run's ``record`` with the words and tolerances of ``declaration``
        (a :class:`icml25.book.declarations.Declaration`, today's); a record written before
        runs recorded only measurements keeps its own words where there is no declaration."""
        fields = {k: record[k] for k in cls.__dataclass_fields__ if k in record}
        if isinstance(fields.get("interval"), list):
            fields["interval"] = tuple(fields["interval"])
        if isinstance(fields.get("threshold"), list):
            fields["threshold"] = tuple(fields["threshold"])
        if declaration is not None:
            fields.update(statement=declaration.statement, paper=declaration.paper,
                          fidelity=declaration.fidelity, rtol=declaration.rtol,
                          atol=declaration.atol, timed=declaration.timed)
        return cls(**fields)

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
        """The measured value with its interval, then the figures behind it:
        ``0.14 [0.11, 0.18] – SOP 0.83 vs backbone 0.97``."""
        text = self.measured
        if self.interval is not None:
            lo, hi = self.interval
            text += f" [{format_measured(lo)}, {format_measured(hi)}]"
        return f"{text} – {self.shown}" if self.shown else text

    def line(self) -> str:
        """One plain-text line (wrapped at 88 columns) for Jupyter, terminals and logs: this
        run's measurement, without the declaration's words (the book's page shows those, with
        the verdict pooled over the seeds)."""
        label = self.verdict.upper() if self.kind == "claim" else f"check {self.verdict}"
        text = f"[{self.id}] {label} in this run (seed {self.seed}): {self.ours()} " \
               f"({self.requirement()})"
        text += f" | {self.note}" if self.note else ""
        return textwrap.fill(text, 88, subsequent_indent="    ")

    def as_dict(self) -> dict:
        """The record a run keeps: :data:`RECORDED`."""
        return {k: v for k, v in asdict(self).items() if k in RECORDED}

    def bundle(self) -> dict:
        """The MIME bundle displayed by :func:`~icml25.book.claim`."""
        return {"text/plain": self.line(), MIME: self.as_dict()}


def format_shown(shown, digits: int = 3) -> str:
    """The figures behind a claim's value, for a reader: a mapping ``{"SOP": 0.83,
    "backbone": 0.97}`` reads ``SOP 0.83 vs backbone 0.97`` (two compared), ``a 1, b 2, c 3``
    (more), ``n = 200: 0.08, n = 1000: 0.03`` (labels that hold a value); a sequence reads
    ``0.83, 0.97``."""
    if isinstance(shown, dict):
        # "n = 200: 0.083" where the label holds a value of its own, "SOP 0.83" otherwise
        parts = [f"{label}{': ' if '=' in str(label) else ' '}{format_measured(v, digits)}"
                 for label, v in shown.items()]
        compared = len(parts) == 2 and not any("=" in str(label) for label in shown)
        return " vs ".join(parts) if compared else ", ".join(parts)
    return format_measured(shown, digits)


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


def evaluate(id: str, value, *, seed: int | None, interval: tuple | None = None, shown=None,
             note: str = "", threshold=None, digits: int = 3) -> tuple[Claim, dict[str, str]]:
    """The record of one declared claim's measurement, with this run's verdict, and the
    declarations it read (provenance key → digest); :func:`icml25.book.claim` keeps both in the
    run and displays the box.

    What the claim says (statement, comparison, threshold, tolerance, fidelity, ...) is declared
    in the chapter's ``claims.toml`` (:mod:`icml25.book.declarations`); the notebook reports only
    what it measured. This run's verdict is computed here (see :func:`verdict`); the published
    verdict pools every seed and is computed when the pages are built
    (:mod:`icml25.book.pooling`). Returns nothing, so that a claim as the last line of a cell adds
    no second output.

    Parameters
    ----------
    id : str
        The claim's id in ``claims.toml``.
    value : float, int or bool
        The measured value $v$ that the declared threshold applies to. A compound statement
        (``a and b``) reports a bool against a declared ``op = "=="``, ``threshold = true``.
    interval : (float, float), optional
        This run's uncertainty $[\\ell, u]$ of $v$ (a confidence interval over the run's
        samples): the within-seed error of the pooled interval; it makes this run's verdict
        *inconclusive* when it straddles the threshold.
    shown : dict or sequence, optional
        The figures behind ``value``, printed after it: ``{"SOP": sop, "backbone": base}``
        when the value is their difference reads ``0.14 [0.11, 0.18] – SOP 0.83 vs backbone
        0.97``. Label them: a reader cannot tell what bare numbers are.
    note : str
        A caveat on this run's measurement.
    threshold : optional
        Only for a claim whose declared threshold is ``"computed"`` (a bound at the run's size,
        a chance level): the value the run derived, as its ``threshold_from`` says.
    digits : int
        Significant digits printed.
    """
    from icml25.book import declared as run_declared

    declared, read = _declaration(id)
    if declared["threshold"] == run_declared.COMPUTED:
        if threshold is None:
            raise ValueError(f"claim {id!r} declares a computed threshold (its "
                             f"threshold_from in {run_declared.FILE} says how); pass threshold=")
    elif threshold is not None:
        raise ValueError(f"claim {id!r}: its threshold is declared in {run_declared.FILE} "
                         f"({declared['threshold']!r}); do not pass one")
    else:
        threshold = declared["threshold"]
    op = declared["op"]
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
        if len(interval) != 2 or not interval[0] <= interval[1]:
            raise ValueError(f"claim {id!r}: interval must be (low, high); got {interval!r}")
        interval = (float(interval[0]), float(interval[1]))
    # the record of the measurement; the declaration's words, labels and tolerances are read
    # when the pages are built (Claim.of)
    record = Claim(
        id=id,
        value=value,
        op=op,
        threshold=threshold,
        verdict=verdict(value, op, threshold, interval),
        measured=format_measured(value, digits),
        shown="" if shown is None else format_shown(shown, digits),
        kind=declared["kind"],
        interval=interval,
        note=note,
        seed=seed,
    )
    return record, read


def _chapter() -> tuple[Path, str | None]:
    """The chapter folder and notebook stem of this run: from the runner, else the cwd."""
    source = os.environ.get(SOURCE_ENV)  # set by the runner
    if source:
        from icml25.common import paths

        py = paths.ROOT / source
        return py.parent, py.stem
    return Path.cwd(), None


def _declaration(claim_id: str) -> tuple[dict, dict]:
    """The run fields of ``claim_id`` (:data:`icml25.book.declared.RUN_FIELDS`) and the
    digest of what this notebook's run reads of ``claims.toml`` (provenance key -> digest)."""
    from icml25.book import declared as run_declared

    folder, notebook = _chapter()
    found = run_declared.run_fields(folder)
    if not found:
        raise run_declared.DeclarationError(
            f"no {run_declared.FILE} in {folder}: declare claim {claim_id!r} there first")
    if claim_id not in found:
        raise run_declared.DeclarationError(
            f"claim {claim_id!r} is not declared in {folder.name}/{run_declared.FILE} "
            f"(declared: {', '.join(found)})")
    fields = found[claim_id]
    read = {}
    if notebook is not None:
        if fields["notebook"] != notebook:
            raise run_declared.DeclarationError(
                f"claim {claim_id!r} is declared for {fields['notebook']}, reported by "
                f"{notebook}")
        read[run_declared.input_key(folder, notebook)] = run_declared.run_digest(
            folder, notebook)
    if fields["op"] not in OPS:
        raise run_declared.DeclarationError(
            f"claim {claim_id!r}: op must be one of {', '.join(OPS)}; got {fields['op']!r}")
    return fields, read


def display(record: Claim) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython comes with the notebook stack
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        display(record.bundle(), raw=True)
    else:
        print(record.line())


def borderline(record: dict, tolerance: dict | None = None) -> bool:
    """Whether a run's interval ends within the claim's tolerance of its threshold.

    Such a run sits on the edge of its verdict: the last bits of a kernel can move the end of
    the interval across the threshold, turning *holds* into *inconclusive* or back. The
    tolerance is the one the claim declares for its value, $\\mathrm{atol} +
    \\mathrm{rtol}\\,|t|$ at the threshold $t$. A compound threshold (an interval, a yes/no) and
    a run without an interval are never borderline.
    """
    tol = {**record, **(tolerance or {})}
    interval, threshold = record.get("interval"), record.get("threshold")
    if interval is None or isinstance(threshold, (bool, list, tuple, str)) or threshold is None:
        return False
    allowed = tol.get("atol", 0.0) + tol.get("rtol", DEFAULT_RTOL) * abs(threshold)
    return min(abs(end - threshold) for end in interval) <= allowed


def same_result(published: dict, rerun: dict, tolerance: dict | None = None) -> str | None:
    """Compare two records of one claim; ``None`` when they agree, else what differs.

    ``tolerance`` holds the claim's declared :data:`TOLERANCE` fields (``rtol``, ``atol``,
    ``timed``); a record of an older run that carries its own is read where it is absent.
    The verdict must be identical and the value may move by the declared tolerance, $|v - v_0| \\le \\mathrm{atol} + \\mathrm{rtol}\\,|v_0|$. One exception: when
    either run is :func:`borderline`, *inconclusive* against a decided verdict is accepted
    (the interval's end moved across the threshold by less than the tolerance); *holds*
    against *does not hold* never is. A ``timed`` claim measures the machine as much as the
    code, so only its presence is compared: its value and verdict on a busy or another machine
    are not the published ones, and need not be.
    """
    tol = {**{k: published[k] for k in TOLERANCE if k in published}, **(tolerance or {})}
    if tol.get("timed"):
        return None
    v0, v = published.get("value"), rerun.get("value")
    if isinstance(v0, bool) or isinstance(v, bool):
        close = v0 == v
    else:
        allowed = tol.get("atol", 0.0) + tol.get("rtol", DEFAULT_RTOL) * abs(v0)
        close = abs(v - v0) <= allowed
    verdicts = {published.get("verdict"), rerun.get("verdict")}
    edge = ("inconclusive" in verdicts and len(verdicts) == 2
            and (borderline(published, tol) or borderline({**published, **rerun}, tol)))
    if len(verdicts) == 2 and not edge:
        return (f"claim {published.get('id')!r}: verdict {rerun.get('verdict')!r}, "
                f"published {published.get('verdict')!r}")
    if isinstance(v0, bool) or isinstance(v, bool):
        return None if close else f"claim {published.get('id')!r}: {v} against {v0}"
    if not close:
        return (f"claim {published.get('id')!r}: value {v!r} differs from the published {v0!r} "
                f"by {abs(v - v0):.3g} > tolerance {allowed:.3g}")
    return None


def split_outputs(outputs: list) -> tuple[list[dict], list]:
    """A cell's outputs split into claim records (by :data:`MIME`) and the other outputs."""
    found, rest = [], []
    for output in outputs:
        data = output.get("data", {})
        (found if MIME in data else rest).append(output)
    return [dict(o["data"][MIME]) for o in found], rest


def compare_outputs(rerun_outputs: list, published_outputs: list,
                    tolerances: dict[str, dict] | None = None) -> list[str]:
    """What differs between the claims of a re-executed cell and those of the published one;
    ``tolerances`` maps a claim's id to its declared :data:`TOLERANCE` fields
    (:func:`icml25.book.declarations.tolerances`)."""
    rerun, published = split_outputs(rerun_outputs)[0], split_outputs(published_outputs)[0]
    ids, published_ids = [c.get("id") for c in rerun], [c.get("id") for c in published]
    if ids != published_ids:
        return [f"claims {ids} made, {published_ids} published"]
    tolerances = tolerances or {}
    return [p for old, new in zip(published, rerun)
            if (p := same_result(old, new, tolerances.get(old.get("id"))))]

