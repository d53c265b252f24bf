"""The claims a chapter tests, declared before they are measured: ``chapters/NN-*/claims.toml``.

One reviewable file per chapter says, for every claim and check, what is tested and against what
the paper said; the notebooks only report the measurement by id (:func:`icml25.book.claim`).
Each entry is a TOML table in the array ``claims``::

    [[claims]]
    id = "agreement"                # unique in the chapter
    notebook = "reproduction"       # the notebook that reports it
    kind = "claim"                  # or "check": holds by construction or verifies a bound
    fidelity = "paper"              # paper | weaker | stricter | variant | proxy | exploratory
    why = ""                        # one sentence, required unless fidelity is "paper"
    statement = "Spearman(s-OTDD, OTDD) >= 0.9 over 20 pairs"
    paper = "Fig. 2: rho = 0.98 on *NIST pairs"   # the paper's words or figure, and where
    source = "not checked"          # only when the paper's words could not be read in its text
    op = ">="                       # >=, >, <=, <, ==, in
    threshold = 0.9                 # a number, true/false, [low, high]; or "computed"
    threshold_from = ""             # for "computed": how the run derives it (a bound, chance)
    rtol = 1e-4                     # how far a re-execution's value may move (with atol)
    atol = 0.0
    timed = false                   # the value is a CPU-time measurement
    varies = ["data"]               # what a seed changes: data, training, evaluation ([] none)
    same_sample = false             # every seed measures the same sample (see below)
    max_seeds = 20                  # more seeds may be added while the claim is undecided
    [[claims.history]]              # every change after a published result, with its reason
    date = "2026-11-30"
    change = "threshold 4 -> 16"
    reason = "..."

``same_sample = true`` says that every seed measures the same sample of items (fixed questions,
say, with only the evaluation draws changing), while the within-seed interval is over those
items: their sampling error is common to all seeds and does not shrink as seeds are added, so
the pooled interval keeps it (:func:`icml25.book.pooling.pool`).

Thresholds come from the paper's statement, never from a result. A change of ``op``,
``threshold`` or ``statement`` after a published result is recorded under ``history``; the tests
compare the declarations with the published notebooks and fail on a change not recorded there.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from icml25.book.declared import (
    COMPUTED,
    FILE,
    KEY,
    RUN_FIELDS,
    DeclarationError,
    digest_of_key,
    input_key,
    run_digest,
)
from icml25.common import paths

__all__ = ["COMPUTED", "FILE", "KEY", "RUN_FIELDS", "DeclarationError", "Declaration",
           "chapter_notes", "digest_of_key", "for_notebook", "input_key", "load", "parse",
           "path_of", "run_digest", "tolerances"]
FIDELITY = ("paper", "weaker", "stricter", "variant", "proxy", "exploratory")
#: What the fidelity classes mean, for the ledger and the chapters' tables.
FIDELITY_LABELS = {
    "paper": "the paper's claim",
    "weaker": "weaker than the paper",
    "stricter": "stricter than the paper",
    "variant": "about our variant",
    "proxy": "a proxy or an oracle",
    "exploratory": "exploratory (not claimed by the paper)",
}
KINDS = ("claim", "check")
OPS = (">=", ">", "<=", "<", "==", "in")
VARIES = ("data", "training", "evaluation")
DEFAULT_MAX_SEEDS = 20


@dataclass(frozen=True)
class Declaration:
    """One declared claim or check."""

    id: str
    notebook: str
    kind: str
    fidelity: str
    statement: str
    paper: str
    op: str
    threshold: object
    why: str = ""
    #: where the ``paper`` words were read: "" (the abstract or the paper's text as cited),
    #: or "not checked" when they come from our notes only (the ledger marks them)
    source: str = ""
    threshold_from: str = ""
    rtol: float = 1e-4
    atol: float = 0.0
    timed: bool = False
    varies: tuple = ("data",)
    same_sample: bool = False
    max_seeds: int = DEFAULT_MAX_SEEDS
    history: tuple = field(default=())

    @property
    def computed(self) -> bool:
        """The threshold is derived by the run (a bound at the run's size, a chance level)."""
        return self.threshold == COMPUTED

    @property
    def deterministic(self) -> bool:
        """No seed changes the measurement: one run decides."""
        return not self.varies

    @property
    def counted(self) -> bool:
        """Counted in the headline: the paper's claim, as the paper states it."""
        return self.kind == "claim" and self.fidelity == "paper"

    def run_fields(self) -> dict:
        return {k: getattr(self, k) for k in RUN_FIELDS}


def _threshold(value, op: str, where: str):
    if value == COMPUTED:
        return COMPUTED
    if op == "in":
        if not (isinstance(value, list) and len(value) == 2
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
                and value[0] <= value[1]):
            raise DeclarationError(f"{where}: op 'in' needs threshold = [low, high]; got {value!r}")
        return tuple(float(v) for v in value)
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and math.isfinite(value):
        return value
    raise DeclarationError(f"{where}: threshold must be a number, true/false, [low, high] or "
                           f"\"computed\"; got {value!r}")


def parse(text: str, where: str = FILE) -> dict[str, Declaration]:
    """The declarations of one ``claims.toml`` text, by id; raise :class:`DeclarationError`."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DeclarationError(f"{where}: not valid TOML: {exc}") from None
    # ``headline``: the paper's headline claims and the tests that speak to each, read only
    # when the pages are built (icml25.book.headline), never by a run
    unknown = set(data) - {"claims", "chapter", "headline"}
    if unknown:
        raise DeclarationError(f"{where}: unknown top-level keys {sorted(unknown)}")
    found: dict[str, Declaration] = {}
    allowed = set(Declaration.__dataclass_fields__)
    default_max = data.get("chapter", {}).get("max_seeds", DEFAULT_MAX_SEEDS)
    for number, entry in enumerate(data.get("claims", []), 1):
        at = f"{where}, claim {number} ({entry.get('id', '?')})"
        missing = [k for k in ("id", "notebook", "kind", "fidelity", "statement", "paper", "op",
                               "threshold") if k not in entry]
        if missing:
            raise DeclarationError(f"{at}: missing {', '.join(missing)}")
        extra = set(entry) - allowed
        if extra:
            raise DeclarationError(f"{at}: unknown fields {sorted(extra)}; known: "
                                   f"{', '.join(sorted(allowed))}")
        if entry["id"] in found:
            raise DeclarationError(f"{at}: id {entry['id']!r} declared twice")
        if entry["kind"] not in KINDS:
            raise DeclarationError(f"{at}: kind must be one of {KINDS}; got {entry['kind']!r}")
        if entry["fidelity"] not in FIDELITY:
            raise DeclarationError(f"{at}: fidelity must be one of {FIDELITY}; "
                                   f"got {entry['fidelity']!r}")
        if entry["fidelity"] != "paper" and not entry.get("why", "").strip():
            raise DeclarationError(f"{at}: fidelity {entry['fidelity']!r} needs a 'why'")
        if entry["op"] not in OPS:
            raise DeclarationError(f"{at}: op must be one of {OPS}; got {entry['op']!r}")
        threshold = _threshold(entry["threshold"], entry["op"], at)
        if threshold == COMPUTED and not entry.get("threshold_from", "").strip():
            raise DeclarationError(f"{at}: a computed threshold needs 'threshold_from'")
        varies = tuple(entry.get("varies", ("data",)))
        if any(v not in VARIES for v in varies):
            raise DeclarationError(f"{at}: varies must list some of {VARIES}; got {varies!r}")
        if entry.get("timed") and not varies:
            raise DeclarationError(f"{at}: a timed claim moves with every measurement; declare "
                                   "varies = [\"evaluation\"] (at least)")
        if not isinstance(entry.get("same_sample", False), bool):
            raise DeclarationError(f"{at}: same_sample must be true or false")
        if entry.get("same_sample") and ("data" in varies or not varies):
            raise DeclarationError(f"{at}: same_sample says the seeds share their data: it "
                                   "needs varies without \"data\" (and not empty)")
        max_seeds = entry.setdefault("max_seeds", default_max)
        if not isinstance(max_seeds, int) or max_seeds < 5:
            raise DeclarationError(f"{at}: max_seeds must be an integer >= 5; got {max_seeds!r}")
        for key in ("rtol", "atol"):
            if key in entry and not (isinstance(entry[key], (int, float)) and entry[key] >= 0):
                raise DeclarationError(f"{at}: {key} must be a non-negative number")
        history = tuple(entry.get("history", ()))
        for change in history:
            if not {"date", "change", "reason"} <= set(change):
                raise DeclarationError(f"{at}: each history entry needs date, change, reason")
        found[entry["id"]] = Declaration(**{
            **entry, "threshold": threshold, "varies": varies, "history": history,
            "rtol": float(entry.get("rtol", 1e-4)), "atol": float(entry.get("atol", 0.0))})
    return found


#: The optional ``[chapter]`` table: what a seed varies in the chapter, in words; whether its
#: models were trained once (then the ledger says "one trained model" beside a claim whose seeds
#: do not vary the training); the default ``max_seeds`` of its claims (e.g. the number of seeds
#: with committed models); ``looks``, the seed plan: the numbers of seeds at which its verdicts
#: may be read (``[10]``: a fixed ten; ``[5, 10, 20]``: a sequential design, more seeds only
#: while a claim is undecided), declared before measuring (icml25.book.pooling.design).
CHAPTER_FIELDS = {"models": str, "trained_once": bool, "max_seeds": int, "looks": list}


def chapter_notes(chapter_dir: Path) -> dict:
    """The chapter's ``[chapter]`` table (``models``, ``trained_once``), validated."""
    file = path_of(chapter_dir)
    if not file.exists():
        return {}
    notes = tomllib.loads(file.read_text()).get("chapter", {})
    for key, value in notes.items():
        if key not in CHAPTER_FIELDS or not isinstance(value, CHAPTER_FIELDS[key]):
            raise DeclarationError(f"{paths.relative(file)}: [chapter] takes "
                                   f"{', '.join(CHAPTER_FIELDS)}; got {key} = {value!r}")
    looks = notes.get("looks")
    if looks is not None and not (looks and all(isinstance(n, int) and n >= 2 for n in looks)
                                  and list(looks) == sorted(set(looks))):
        raise DeclarationError(f"{paths.relative(file)}: looks must be increasing seed counts "
                               f"of at least 2, e.g. [5, 10, 20]; got {looks!r}")
    return notes


def path_of(chapter_dir: Path) -> Path:
    return Path(chapter_dir) / FILE


def load(chapter_dir: Path) -> dict[str, Declaration]:
    """The chapter's declarations by id (empty when it has no ``claims.toml``)."""
    file = path_of(chapter_dir)
    if not file.exists():
        return {}
    return parse(file.read_text(), paths.relative(file))


def for_notebook(chapter_dir: Path, notebook: str) -> dict[str, Declaration]:
    """The declarations that ``notebook`` (its stem, e.g. ``"reproduction"``) reports."""
    return {k: d for k, d in load(chapter_dir).items() if d.notebook == notebook}


def tolerances(chapter_dir: Path) -> dict[str, dict]:
    """Each claim's declared tolerance, by id: ``{"rtol", "atol", "timed"}``, what the tests
    read to compare two runs of it (:func:`icml25.book.claims.same_result`)."""
    return {i: {"rtol": d.rtol, "atol": d.atol, "timed": d.timed}
            for i, d in load(chapter_dir).items()}
