"""The claims helper: a paper's statement, checked against what the chapter measured.

``claim(...)`` prints one stable, rounded line (tag its cell ``nbval-check-output``) and records
the claim; :func:`icml25.book.finish` hands the records to the runner, which stores them in the
executed notebook, from which ``book/claims.md`` (the claims ledger) is generated.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

_RECORDED: dict[str, "Claim"] = {}


@dataclass(frozen=True)
class Claim:
    """One checked claim, as it appears in the ledger."""

    id: str
    statement: str
    paper: str
    measured: str
    holds: bool
    note: str = ""

    def line(self) -> str:
        verdict = "HOLDS" if self.holds else "DOES NOT HOLD"
        text = f"[{self.id}] {verdict}: {self.statement} | ours: {self.measured} | paper: {self.paper}"
        return text + (f" | {self.note}" if self.note else "")

    def as_dict(self) -> dict:
        return asdict(self)


def format_measured(value, digits: int = 3) -> str:
    """Round a measured figure for printing: ``digits`` significant digits, stable across runs."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if not math.isfinite(value):
            return str(value)
        return f"{value:.{digits}g}"
    if isinstance(value, str):
        return value
    if isinstance(value, (tuple, list)):
        return ", ".join(format_measured(v, digits) for v in value)
    raise TypeError(f"measured must be a number, a string or a sequence of them, got {type(value)}")


def claim(
    id: str,
    statement: str,
    measured,
    *,
    paper: str,
    holds: bool,
    note: str = "",
    digits: int = 3,
) -> None:
    """Check and record one claim of the paper.

    Prints the claim's line and records it (see :func:`recorded`); returns nothing, so that a
    claim as the last line of a cell adds no second output.

    Parameters
    ----------
    id : str
        Short stable identifier, unique in the chapter (``"spearman"``).
    statement : str
        The claim as checked here, including its threshold, fixed before the run
        (``"Spearman(s-OTDD, OTDD) >= 0.9 over 20 pairs"``).
    measured : float, int, str or sequence
        What this run measured; printed with ``digits`` significant digits.
    paper : str
        The paper's figure or statement, for comparison.
    holds : bool
        Whether the measurement satisfies the statement.
    note : str
        Why it does not hold at this scale, or a caveat.
    """
    if not isinstance(id, str) or not id.strip():
        raise ValueError("claim id must be a non-empty string")
    if not isinstance(holds, (bool, np.bool_)):
        raise TypeError(f"holds must be a bool (the verdict of the check), got {holds!r}")
    record = Claim(
        id=id,
        statement=statement,
        paper=paper,
        measured=format_measured(measured, digits),
        holds=bool(holds),
        note=note,
    )
    _RECORDED[id] = record
    print(record.line())


def recorded() -> list[Claim]:
    """Claims recorded so far in this process, in the order they were first made."""
    return list(_RECORDED.values())


def reset() -> None:
    _RECORDED.clear()
