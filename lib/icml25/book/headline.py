"""The papers' headline claims: what each abstract claims, and what the book's tests say of it.

A chapter's tests (``[[claims]]`` in its ``claims.toml``) are the book's questions; the unit a
reader counts is the paper's **headline claim**, a claim its abstract makes. Each is declared in
the same file, read only when the pages are built::

    [[headline]]
    id = "ssa-improves"
    words = "SSA consistently improves [...]"   # the paper's words, verbatim
    source = "abstract"          # where the words were checked: abstract | introduction |
                                 # repository <owner/name> <path> | not checked
    where = "abstract; Table 2"  # where the paper's evidence lies, as far as it can be read
    tests = ["ssa-improves-cmf"] # the chapter's claim ids that speak to it
    untestable = ""              # the reason, when it cannot be tested at the book's scale
    note = ""                    # what a reader must know, in one sentence
    # where the paper reports a figure on the scale of one of the tests' values:
    effects = [{test = "seg-lesion", paper = 0.048, what = "lesion Dice over the U-Net",
                gain = true}]    # gain: show ours as a share of the paper's

Its verdict follows one rule (:func:`verdict`), written once here:

* **untestable here** when ``untestable`` gives a reason (data, scale or compute; never a
  failure). Tests may still be listed, for what they show: a tie at a ceiling (both models
  perfect on data too easy to tell them apart) cannot show a gain, and does not count against
  the claim;
* **untested** when no test speaks to it;
* when some test is the paper's claim as stated (fidelity ``paper``), from those tests'
  pooled verdicts: **holds** when all hold, **does not hold** when none holds and none is
  undecided, **mixed** when some hold and some do not, else **undecided**;
* otherwise **weaker reading only** (the tests are weaker, stricter, our variant, a proxy,
  exploratory, or checks that hold by construction): their verdicts are shown, and the claim
  as stated is not decided.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from icml25.book import declarations
from icml25.book.declarations import DeclarationError
from icml25.common import paths

#: Where a headline claim's words were checked.
SOURCES = ("abstract", "introduction", "repository", "not checked")
#: The verdicts of a headline claim, in the order the ledger counts them.
VERDICTS = ("holds", "does not hold", "mixed", "undecided", "weaker reading only",
            "untestable here", "untested")
FIELDS = {"id": str, "words": str, "source": str, "where": str, "tests": list,
          "untestable": str, "note": str, "effects": list}
#: The fields of one of a headline's ``effects``.
EFFECT_FIELDS = {"test": str, "paper": (int, float), "what": str, "gain": bool}
REQUIRED = ("id", "words", "source", "where")


@dataclass(frozen=True)
class Headline:
    """One headline claim of a paper, as its chapter declares it."""

    chapter: str
    id: str
    words: str
    source: str
    where: str
    tests: tuple = ()
    untestable: str = ""
    note: str = ""
    effects: tuple = ()  # ({test, paper, what, gain}, ...)

    @property
    def checked(self) -> bool:
        """The words were read in the paper's own text (its abstract, introduction or
        repository), not only in our notes."""
        return self.source != "not checked"


@dataclass
class Judged:
    """A headline claim with the verdicts of its tests and its own verdict."""

    headline: Headline
    tests: list = field(default_factory=list)  # (id, fidelity, pooled verdict)
    values: dict = field(default_factory=dict)  # test id -> (pooled value, (low, high))

    def effect_lines(self) -> list[str]:
        """Ours beside the paper's figure, for each declared effect whose test has a value:
        "lesion Dice over the U-Net: ours 0.012 [-0.01, 0.03], the paper's 0.048 (0.25 of
        the paper's gain)"."""
        out = []
        for e in self.headline.effects:
            if e["test"] not in self.values:
                continue
            value, (lo, hi) = self.values[e["test"]]
            text = (f"{e['what']}: ours {value:.3g} [{lo:.3g}, {hi:.3g}], "
                    f"the paper's {e['paper']:.3g}")
            if e.get("gain") and e["paper"]:
                ratio = value / e["paper"]
                text += (" (no gain in the paper's direction)" if ratio <= 0 else
                         f" ({ratio:.2g} of the paper's gain)" if ratio < 1 else
                         f" ({ratio:.2g} times the paper's gain)")
            out.append(text)
        return out

    @property
    def stated(self) -> list:
        return [t for t in self.tests if t[1] == "paper"]

    @property
    def verdict(self) -> str:
        return verdict(self.headline, self.tests)

    @property
    def reading(self) -> str:
        """The closest reading the tests give: ``as stated``, or the others' fidelities."""
        if self.stated:
            return "as stated"
        return ", ".join(sorted({t[1] for t in self.tests})) or "-"

    def as_dict(self) -> dict:
        h = self.headline
        return {"chapter": h.chapter, "id": h.id, "words": h.words, "source": h.source,
                "where": h.where, "untestable": h.untestable, "note": h.note,
                "reading": self.reading, "verdict": self.verdict,
                "tests": [{"id": i, "fidelity": f, "verdict": v} for i, f, v in self.tests],
                "effects": [{**e, "ours": self.values[e["test"]][0],
                             "ours_interval": list(self.values[e["test"]][1])}
                            for e in h.effects if e["test"] in self.values]}


def verdict(headline: Headline, tests: list) -> str:
    """The headline claim's verdict from its tests ``[(id, fidelity, pooled verdict)]``."""
    if headline.untestable.strip():
        return "untestable here"
    if not tests:
        return "untested"
    stated = [v for _, fidelity, v in tests if fidelity == "paper"]
    if not stated:
        return "weaker reading only"
    holds, fails = stated.count("holds"), stated.count("does not hold")
    undecided = len(stated) - holds - fails
    if holds and fails:
        return "mixed"
    if not undecided:
        return "holds" if holds else "does not hold"
    return "undecided"


def parse(text: str, chapter: str, where: str, claim_ids: set[str]) -> list[Headline]:
    """The ``[[headline]]`` tables of one ``claims.toml`` text; raise
    :class:`~icml25.book.declarations.DeclarationError` on a malformed entry or a test id that
    the chapter does not declare."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DeclarationError(f"{where}: not valid TOML: {exc}") from None
    found, seen = [], set()
    for number, entry in enumerate(data.get("headline", []), 1):
        at = f"{where}, headline {number} ({entry.get('id', '?')})"
        missing = [k for k in REQUIRED if not str(entry.get(k, "")).strip()]
        if missing:
            raise DeclarationError(f"{at}: missing {', '.join(missing)}")
        for key, value in entry.items():
            if key not in FIELDS:
                raise DeclarationError(f"{at}: unknown field {key!r}; known: "
                                       f"{', '.join(FIELDS)}")
            if not isinstance(value, FIELDS[key]):
                raise DeclarationError(f"{at}: {key} must be a {FIELDS[key].__name__}")
        if entry["id"] in seen:
            raise DeclarationError(f"{at}: id {entry['id']!r} declared twice")
        seen.add(entry["id"])
        if entry["source"].split()[0] not in SOURCES and entry["source"] != "not checked":
            raise DeclarationError(f"{at}: source must start with one of {SOURCES}; "
                                   f"got {entry['source']!r}")
        tests = tuple(entry.get("tests", ()))
        unknown = [t for t in tests if t not in claim_ids]
        if unknown:
            raise DeclarationError(f"{at}: tests {unknown} are not declared in {where}")
        for e in entry.get("effects", ()):
            if not isinstance(e, dict) or set(e) - set(EFFECT_FIELDS) or \
                    not {"test", "paper", "what"} <= set(e):
                raise DeclarationError(f"{at}: an effect is a table of test, paper, what and "
                                       f"optionally gain; got {e!r}")
            if not all(isinstance(e[k], EFFECT_FIELDS[k]) for k in e) or \
                    isinstance(e["paper"], bool):
                raise DeclarationError(f"{at}: effect {e!r}: test and what are strings, "
                                       f"paper a number, gain true or false")
            if e["test"] not in tests:
                raise DeclarationError(f"{at}: effect of {e['test']!r}, which is not one of "
                                       f"the headline's tests")
        found.append(Headline(chapter=chapter, **{**entry, "tests": tests,
                                                  "effects": tuple(entry.get("effects", ()))}))
    return found


def load(chapter_dir: Path) -> list[Headline]:
    """The chapter's headline claims (empty when it declares none)."""
    file = declarations.path_of(chapter_dir)
    if not file.exists():
        return []
    return parse(file.read_text(), Path(chapter_dir).name, paths.relative(file),
                 set(declarations.load(chapter_dir)))


def judge(chapter_dir: Path, rows: list) -> list[Judged]:
    """Each headline claim of the chapter with its tests' pooled verdicts (``rows``: the
    ledger's rows of the chapter, :func:`icml25.book.site.ledger.rows`)."""
    by_id = {r.id: r for r in rows}
    judged = []
    for h in load(chapter_dir):
        # a check holds by construction: it never decides a claim as stated
        tests = [(t, "check" if by_id[t].kind == "check" else by_id[t].fidelity,
                  by_id[t].verdict) for t in h.tests if t in by_id]
        values = {t: (by_id[t].pooled.estimate, tuple(by_id[t].pooled.interval))
                  for t in h.tests if t in by_id and by_id[t].pooled is not None}
        judged.append(Judged(h, tests, values))
    return judged


def count(judged: list[Judged]) -> dict[str, int]:
    """How many headline claims have each verdict (every verdict a key), and how many
    were checked against the paper's own text."""
    out = {v: 0 for v in VERDICTS}
    for j in judged:
        out[j.verdict] += 1
    out["total"] = len(judged)
    out["checked"] = sum(j.headline.checked for j in judged)
    return out


def sentence(counts: dict[str, int], papers: int) -> str:
    """The book's headline, counted in headline claims."""
    if not counts["total"]:
        return "No headline claim is declared yet."
    as_stated = sum(counts[v] for v in ("holds", "does not hold", "mixed", "undecided"))
    return (f"**{counts['holds']} of the {counts['total']} headline claims of the {papers} "
            f"papers hold as stated at the book's scale**; {counts['does not hold']} do not, "
            f"{counts['mixed']} hold in part, {counts['undecided']} are undecided "
            f"({as_stated} tested as stated). {counts['weaker reading only']} are tested only "
            f"in a weaker, stricter, variant or proxy reading, "
            f"{counts['untestable here']} cannot be tested at this scale (the reason is given "
            f"with each), and {counts['untested']} are not tested yet.")


#: The order in which a chapter's lead names its headline verdicts: failures first.
LEAD_ORDER = ("does not hold", "mixed", "undecided", "holds", "weaker reading only",
              "untestable here", "untested")
_LEAD_WORDS = {  # (one, many): the verb phrase after "1 ..." or "2 ..."
    "does not hold": ("does not hold", "do not hold"),
    "mixed": ("holds only in part", "hold only in part"),
    "undecided": ("is undecided", "are undecided"),
    "holds": ("holds", "hold"),
    "weaker reading only": ("is tested only in a weaker reading",
                            "are tested only in a weaker reading"),
    "untestable here": ("cannot be tested at this scale", "cannot be tested at this scale"),
    "untested": ("is not tested yet", "are not tested yet"),
}
#: Verdicts whose claims the lead quotes, so that no failure hides behind a count.
_QUOTED = ("does not hold", "mixed", "undecided")


def excerpt(words: str, n: int = 9) -> str:
    """The first ``n`` words of a claim's wording (ellipses of the quote dropped), quoted."""
    plain = " ".join(words.replace("[...]", " ").split())
    cut = plain.split(" ")
    return "“" + " ".join(cut[:n]).rstrip(",;:.") + ("…”" if len(cut) > n else "”")


def lead(judged: list[Judged]) -> str:
    r"""The sentence that opens a chapter's "What we found": its headline verdicts, worst first.

    "Of the paper's 4 headline claims, 1 does not hold (“In practice, we find nearly
    optimal spanning trees…”), 2 hold and 1 is tested only in a weaker reading." A claim that
    does not hold, holds only in part or is undecided is quoted; the others are counted. The
    order is :data:`LEAD_ORDER`, so a chapter with a failure never opens with a success.
    """
    if not judged:
        return "The chapter declares no headline claim of the paper."
    parts = []
    for v in LEAD_ORDER:
        these = [j for j in judged if j.verdict == v]
        if not these:
            continue
        one, many = _LEAD_WORDS[v]
        text = f"{len(these)} {one if len(these) == 1 else many}"
        if v in _QUOTED:
            text += " (" + "; ".join(excerpt(j.headline.words) for j in these) + ")"
        parts.append(text)
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    total = len(judged)
    return (f"Of the paper's {total} headline claim{'s' if total != 1 else ''}, {listed}.")
