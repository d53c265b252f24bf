"""The claims ledger, generated from the declarations, the executed notebooks and the seed
records; never edited by hand.

Every claim's published verdict pools its seeds (:mod:`icml25.book.pooling`): the declaration
(``claims.toml``) says what is tested and with which fidelity, the published notebook holds seed
0's measurement, the seed record (``_robustness.json``) every seed's. Generated here:

* ``book/claims.md``: the headline (the papers' claims, counted apart from the claims of other
  fidelity classes and from the checks), the claims that do not hold, one section per chapter;
* ``book/_static/claims.json`` and ``claims.csv``: the same, for analysis
  (``python -m icml25.book claims --json`` prints the JSON);
* ``chapters/NN-*/_claims.md`` (the chapter's tables, included by its ``index.md``) and
  ``_glance.md`` (the "results at a glance" box of its reproduction page).
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

from icml25.book import declarations, headline, pooling
from icml25.book.claims import Claim, format_measured
from icml25.book.run import notebooks, robustness
from icml25.book.run.staleness import state
from icml25.book.site.generated import HEADER, badge, headline_strip
from icml25.book.site.printing import title
from icml25.common import paths

JSON_FILE = paths.BOOK / "_static" / "claims.json"
CSV_FILE = paths.BOOK / "_static" / "claims.csv"
HEADLINE_JSON = paths.BOOK / "_static" / "headline.json"
HEADLINE_CSV = paths.BOOK / "_static" / "headline.csv"
#: Classes other than the paper's own claims, in the order the ledger lists them.
OTHER_CLASSES = ("weaker", "stricter", "variant", "proxy", "exploratory")


@dataclass
class Row:
    """One claim of a chapter: its declaration, seed 0's record, its seeds, the pooled verdict."""

    chapter: str
    notebook: str
    id: str
    declaration: declarations.Declaration | None
    published: Claim
    seeds: dict[int, dict]
    pooled: pooling.Pooled | None
    trained_once: bool = False
    looks: tuple = ()

    @property
    def kind(self) -> str:
        return self.declaration.kind if self.declaration else self.published.kind

    @property
    def fidelity(self) -> str:
        return self.declaration.fidelity if self.declaration else "paper"

    @property
    def verdict(self) -> str:
        return self.pooled.verdict if self.pooled else self.published.verdict

    def seeds_line(self) -> str:
        """``5 independent seeds`` / ``deterministic: one run decides`` / ``one trained model``."""
        d, p = self.declaration, self.pooled
        if p is None:
            return "seed 0 only (no seed record)"
        if p.method == "one run":
            if d is not None and d.deterministic:
                return "deterministic: no seed changes it, one run decides"
            return f"identical in all {len(self.seeds)} seeds: one run decides"
        if p.method == "same sample":
            return (f"pooled over {p.n} seeds on the same sample, whose sampling error "
                    "stays in the interval")
        text = f"pooled over {p.n} independent seeds"
        if self.trained_once and d is not None and "training" not in d.varies:
            text += " (one trained model: the seeds do not vary the training)"
        return text + f"; {plan_text(self.looks)}"

    def pooled_text(self) -> str:
        return self.pooled.text() if self.pooled else self.published.ours()

    def disagreement(self) -> str:
        """Seed 0's value and verdict, when its verdict is not the pooled one."""
        if self.pooled is None or self.published.verdict == self.pooled.verdict:
            return ""
        return f"seed 0: {self.published.ours()}, {self.published.verdict}"

    def decide_text(self) -> str:
        if self.verdict != "inconclusive" or self.pooled is None:
            return ""
        if self.pooled.method == "one run":
            return "more samples in the run would decide it"
        wanted = self.pooled.seeds_to_decide
        if not wanted and self.pooled.method == "same sample":
            return "a larger sample would decide it: more seeds cannot, as they share it"
        if not wanted:
            return "the estimate sits on the threshold: no number of seeds decides it"
        if wanted > 1000:
            return ("the estimate sits almost on the threshold: over 1,000 seeds would "
                    "decide it")
        cap = self.declaration.max_seeds if self.declaration else wanted
        if wanted > cap:
            return (f"about {wanted} seeds would decide it at this effect, more than the "
                    f"{cap} this claim can run")
        return f"about {wanted} seeds would decide it at this effect"

    def fidelity_text(self) -> str:
        if self.fidelity == "paper" or self.declaration is None:
            return ""
        return f"{declarations.FIDELITY_LABELS[self.fidelity]}: {self.declaration.why}"

    def history_text(self) -> str:
        if self.declaration is None:
            return ""
        return "; ".join(f"{h['change']} ({h['reason']})" for h in self.declaration.history)

    def box_info(self) -> dict | None:
        """What :func:`icml25.book.site.boxes.render` needs to show the pooled verdict."""
        if self.pooled is None:
            return None
        seeds = self.seeds_line()
        seeds = seeds[0].upper() + seeds[1:]
        decide = self.decide_text()
        return {"verdict": self.pooled.verdict, "text": self.pooled_text(),
                "seeds": seeds + (f"; {decide}" if decide else ""),
                "fidelity": self.fidelity_text()}

    def as_dict(self) -> dict:
        d, c, p = self.declaration, self.published, self.pooled
        return {
            "chapter": self.chapter, "notebook": self.notebook, "id": self.id,
            "kind": self.kind, "fidelity": self.fidelity,
            "why": d.why if d else "", "statement": c.statement, "paper": c.paper,
            "op": c.op, "threshold": c.threshold, "timed": c.timed,
            "varies": list(d.varies) if d else None,
            "seeds": {str(k): v for k, v in sorted(self.seeds.items())},
            "pooled": p.estimate if p else None,
            "interval": list(p.interval) if p else None,
            "n": p.n if p else 1, "method": p.method if p else "seed 0 only",
            "verdict": self.verdict, "seed0_verdict": c.verdict,
            "seeds_to_decide": p.seeds_to_decide if p else None,
            "history": list(d.history) if d else [],
        }


def plan_text(looks) -> str:
    """The seed plan in words: ``a fixed 10 seeds`` or ``looks at 5, 10, 20 seeds, each at
    98.3%``."""
    looks = list(looks)
    if len(looks) == 1:
        return f"plan: a fixed {looks[0]} seeds, 95% interval"
    level = pooling.design_level(looks)
    return (f"plan: looks at {', '.join(map(str, looks))} seeds, each at {100 * level:.1f}% "
            "(sequential)")


def looks_of(chapter: notebooks.Chapter) -> tuple:
    """The chapter's declared seed plan (``[chapter] looks``); without one, a fixed plan at
    the record's number of seeds."""
    declared = declarations.chapter_notes(chapter.path).get("looks")
    if declared:
        return tuple(declared)
    record = robustness.read(chapter)
    return (len(record["seeds"]) if record else 1,)


def rows(chapter: notebooks.Chapter) -> list[Row]:
    """Every claim and check of the chapter, in the notebooks' order, with its pooled verdict
    (its interval at the level of the chapter's seed plan, :func:`pooling.design_level`)."""
    declared = declarations.load(chapter.path)
    trained_once = declarations.chapter_notes(chapter.path).get("trained_once", False)
    looks = looks_of(chapter)
    level = pooling.design_level(looks)
    record = robustness.read(chapter)
    fresh = record is not None and not robustness.problems(chapter)
    by_key = {(c["notebook"], c["id"]): c for c in record["claims"]} if fresh else {}
    found = []
    for py in chapter.notebooks:
        for raw in state(py).claims:
            d = declared.get(raw["id"])
            c = Claim.of(raw, d)  # the record, with today's words
            seeds = {0: {"value": c.value, "interval": c.interval, "verdict": c.verdict}}
            entry = by_key.get((py.name, c.id))
            if entry:
                seeds |= {int(k): v for k, v in entry["seeds"].items() if v is not None}
                seeds[0] = {"value": c.value, "interval": c.interval, "verdict": c.verdict}
            pooled = None
            if entry and len(seeds) > 1:
                ordered = [seeds[k] for k in sorted(seeds)]
                pooled = pooling.pool([s["value"] for s in ordered],
                                      [s.get("interval") for s in ordered], c.op, c.threshold,
                                      deterministic=bool(d and d.deterministic),
                                      same_sample=bool(d and d.same_sample), level=level)
            found.append(Row(chapter.name, py.stem, c.id, d, c, seeds, pooled, trained_once,
                             looks))
    return found


def _ours(row: Row) -> str:
    text = f"{row.pooled_text()} ({row.published.requirement()})"
    extra = [x for x in (row.disagreement(), row.decide_text()) if x]
    return text + ("; " + "; ".join(extra) if extra else "")


def _paper_words(row: Row) -> str:
    """The paper's words of a test, marked † when they come from our notes only."""
    unchecked = row.declaration is not None and row.declaration.source == "not checked"
    return row.published.paper + (" (†)" if unchecked else "")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _one_line(text: str) -> str:
    """A statement fit for a dropdown's title: one line, no fence-breaking colons first."""
    return " ".join(str(text).split())


def _test_item(r: Row, chapter: str) -> list[str]:
    """One test as one line (verdict, fidelity, statement, ours) with its paper's words, seeds
    and notes folded beneath (a sphinx-design dropdown whose classes the ledger's filter
    reads)."""
    label = "" if r.kind == "check" or r.fidelity == "paper" else \
        f" {{bdg-secondary-line}}`{r.fidelity}`"
    kind = " {bdg-light}`check`" if r.kind == "check" else ""
    classes = (f"ledger-test verdict-{_slug(r.verdict)} fidelity-"
               f"{'check' if r.kind == 'check' else r.fidelity} chapter-{chapter[:2]}")
    details = [f"**Ours:** {_ours(r)}", "", f"**The paper:** {_paper_words(r)}", "",
               f"**Seeds:** {r.seeds_line()}"]
    if r.fidelity_text():
        details += ["", f"**Reading:** {r.fidelity_text()}"]
    if r.published.note:
        details += ["", f"**Note:** {r.published.note}"]
    return [f":::{{dropdown}} {badge(r.verdict)}{kind}{label} "
            f"{_one_line(r.published.statement)}: **{r.pooled_text()}**",
            f":class-container: {classes}", "", *details, ":::", ""]


def _test_list(chapter_rows: list[Row], chapter: str) -> list[str]:
    claims = [r for r in chapter_rows if r.kind == "claim"]
    checks = [r for r in chapter_rows if r.kind == "check"]
    out = []
    for r in claims:
        out += _test_item(r, chapter)
    if not claims:
        out += ["No executed claims yet.", ""]
    if checks:
        out += ["Checks: statements that hold by construction or verify a theorem's bound; "
                "they can only fail through a bug, so they are not counted among the paper's "
                "claims.", ""]
        for r in checks:
            out += _test_item(r, chapter)
    return out


def changes(chapter_rows: list[Row]) -> list[str]:
    """The declarations' history, for the chapter's "Changes" section: what changed in a
    test after it was first declared, when and why (the reader's text elsewhere says only
    what a number is)."""
    lines = []
    for r in chapter_rows:
        for h in (r.declaration.history if r.declaration else ()):
            lines.append(f"- `{r.id}` ({h.get('date', 'undated')}): {h['change']}. "
                         f"*Why:* {h['reason']}.")
    return lines


def _seeds_note(chapter: notebooks.Chapter) -> list[str]:
    text = declarations.chapter_notes(chapter.path).get("models")
    return [f"*Seeds.* {text}", ""] if text else []


def chapter_table(chapter: notebooks.Chapter, chapter_rows: list[Row] | None = None) -> str:
    """The chapter's own list of tests, included by its ``index.md``, with its "Changes"."""
    chapter_rows = rows(chapter) if chapter_rows is None else chapter_rows
    history = changes(chapter_rows)
    folded = ([f"::::{{dropdown}} Changes to the declarations ({len(history)})", "",
               "What was changed in a test after it was first declared, when and why.", "",
               *history, "::::"] if history else [])
    body = "\n".join([*_seeds_note(chapter), *_test_list(chapter_rows, chapter.name),
                      *folded]).rstrip("\n")
    if any("(†)" in _paper_words(r) for r in chapter_rows):
        body += ("\n\n†: the paper's words as our notes give them; they could not be read in "
                 "the paper's own text here.")
    return f"{HEADER}\n\n{body}\n"


def glance(chapter_rows: list[Row]) -> str:
    """The "results at a glance" box: one line a claim, pooled verdict first; checks apart."""
    lines = []
    for r in chapter_rows:
        if r.kind != "claim":
            continue
        label = "" if r.fidelity == "paper" else f" {{bdg-secondary-line}}`{r.fidelity}`"
        statement = r.published.statement.replace("`", "'")
        extra = f" ({r.disagreement()})" if r.disagreement() else ""
        lines.append(f"- {badge(r.verdict)}{label} {statement}: **{r.pooled_text()}** "
                     f"({r.published.requirement()}; {r.seeds_line()}){extra}")
    checks = [r for r in chapter_rows if r.kind == "check"]
    if checks:
        lines.append("\nChecks (hold by construction or verify a bound): " + "; ".join(
            f"{badge(r.verdict)} {r.published.statement.replace('`', chr(39))}"
            for r in checks) + ".")
    return "\n".join(lines).strip() or "No claims are checked in this chapter."


def counts(chapter: notebooks.Chapter, chapter_rows: list[Row] | None = None) -> dict:
    """The chapter's verdicts counted: the paper's claims by verdict, the others, the checks."""
    chapter_rows = rows(chapter) if chapter_rows is None else chapter_rows
    paper = [r for r in chapter_rows if r.kind == "claim" and r.fidelity == "paper"]
    other = [r for r in chapter_rows if r.kind == "claim" and r.fidelity != "paper"]
    checks = [r for r in chapter_rows if r.kind == "check"]
    verdicts = [r.verdict for r in paper]
    judged = headline.judge(chapter.path, chapter_rows)
    return {
        "claims": len(paper),
        "holds": verdicts.count("holds"),
        "fails": verdicts.count("does not hold"),
        "inconclusive": verdicts.count("inconclusive"),
        "other": len(other),
        "other_holds": sum(r.verdict == "holds" for r in other),
        "checks": len(checks),
        "checks_pass": sum(r.verdict == "holds" for r in checks),
        "min_seeds": min((r.pooled.n for r in paper + other if r.pooled
                          and r.pooled.method != "one run"), default=0),
        "runtime": sum(state(py).duration or 0 for py in chapter.notebooks),
        "verdicts": {r.id: r.verdict for r in chapter_rows},
        "headline": headline.count(judged),
        "lead": headline.lead(judged),
    }


FAILING = "claims-that-do-not-hold"
TOTAL_KEYS = ("claims", "holds", "fails", "inconclusive", "other", "other_holds", "checks",
              "checks_pass")


def _totals(counts: dict[str, dict]) -> dict:
    total = {k: sum(c[k] for c in counts.values()) for k in TOTAL_KEYS}
    seeded = [c["min_seeds"] for c in counts.values() if c["min_seeds"]]
    total["min_seeds"] = min(seeded, default=0)
    return total


def _headline(total: dict) -> str:
    """The tests behind the headline claims, counted (a paper's claim may have several)."""
    if not total["claims"]:
        return "No chapter has been executed yet."
    return (f"The tests behind them: {total['holds']} of the {total['claims']} tests of a "
            f"paper's claim as stated hold, {total['fails']} do not, {total['inconclusive']} "
            f"are undecided, each decided by its chapter's seed plan; {total['other']} tests "
            f"ask something else (weaker or stricter than the paper, our variant, a proxy, or "
            f"exploratory; {total['other_holds']} hold), and {total['checks_pass']} of "
            f"{total['checks']} checks pass.")


def _failing(all_rows: dict[str, list[Row]]) -> list[str]:
    items = [f"- [{name[:2]}](#{name}) {r.published.statement}: **{r.pooled_text()}**"
             + (f". {r.published.note}" if r.published.note else "")
             for name, chapter_rows in all_rows.items() for r in chapter_rows
             if r.kind == "claim" and r.fidelity == "paper" and r.verdict == "does not hold"]
    if not items:
        return []
    return [f"({FAILING})=", "## The papers' claims that do not hold", "",
            "Gathered from the chapters below: what we measured over the seeds.", "",
            *items, ""]


def _others(all_rows: dict[str, list[Row]]) -> list[str]:
    items = [f"- [{name[:2]}](#{name}) {badge(r.verdict)} {{bdg-secondary-line}}`{r.fidelity}` "
             f"{r.published.statement}" + (f". *Why:* {r.declaration.why}"
                                            if r.declaration and r.declaration.why else "")
             for name, chapter_rows in all_rows.items() for r in chapter_rows
             if r.kind == "claim" and r.fidelity != "paper"]
    if not items:
        return []
    return ["## Claims that are not the paper's as stated", "",
            "Not counted in the headline: each tests something weaker or stricter than the "
            "paper's words, our variant of the method, a proxy or an oracle, or a question the "
            "paper does not claim.", "", *items, ""]


def landing_headline(counts: dict[str, dict]) -> str:
    """The ledger's headline for the front page, with links to the ledger."""
    total = _totals(counts)
    heads = {k: sum(c["headline"][k] for c in counts.values())
             for k in next(iter(counts.values()))["headline"]} if counts else {"total": 0}
    text = headline.sentence(heads, len(counts)) + " " + _headline(total)
    if total["fails"]:
        text += (f" See {{ref}}`the claims that do not hold <{FAILING}>` and "
                 "[the whole ledger](claims.md).")
    return text


def headline_table(judged: list) -> list[str]:
    """A chapter's headline claims, one line each (verdict, the paper's words, the tests
    behind it), the note and our effect beside the paper's beneath."""
    if not judged:
        return []
    from icml25.book.site import authors

    links = authors.claim_links()
    out = ["**The paper's headline claims**", ""]
    for j in judged:
        h = j.headline
        tests = ", ".join(f"`{i}` ({f}: {v})" for i, f, v in j.tests) or "none"
        words = f"“{h.words}”" + ("" if h.checked else " (†)")
        why = " ".join(x for x in [h.untestable or h.note, *(f"{e}." for e in j.effect_lines())]
                       if x)
        # the authors' released code bears on it when its record names the claim or a test
        label = next((links[(h.chapter, i)] for i in (h.id, *(t[0] for t in j.tests))
                      if (h.chapter, i) in links), None)
        beside = f" {{ref}}`Beside the authors' code <{label}>`." if label else ""
        out.append(f"- {badge(j.verdict)} {words} *Tests:* {tests}."
                   + (f" {why}" if why else "") + beside)
    return out + [""]


def _filter(chapters: list[notebooks.Chapter]) -> str:
    """The ledger's filter (static: ``book/_static/ledger.js`` hides the tests that do not
    match and opens the chapters that hold one)."""
    def select(name, options):
        inner = "".join(f'<option value="{v}">{t}</option>' for v, t in options)
        return (f'<label>{name} <select data-filter="{name.lower()}">'
                f'<option value="">all</option>{inner}</select></label>')

    verdicts = [(_slug(v), v) for v in ("holds", "does not hold", "inconclusive")]
    fidelities = [(f, f) for f in declarations.FIDELITY_LABELS] + [("check", "check")]
    numbers = [(ch.name[:2], ch.name[:2]) for ch in chapters]
    return ('<div class="ledger-filter" role="group" aria-label="Filter the tests">'
            + select("Verdict", verdicts) + select("Fidelity", fidelities)
            + select("Chapter", numbers) + "</div>")


def ledger_page(chapters: list[notebooks.Chapter], all_rows: dict[str, list[Row]]) -> str:
    """The whole book's ledger: the headline, the summary table, one section per chapter."""
    counted = {ch.name: counts(ch, all_rows[ch.name]) for ch in chapters}
    total = _totals(counted)
    judged = {ch.name: headline.judge(ch.path, all_rows[ch.name]) for ch in chapters}
    head_counts = headline.count([j for js in judged.values() for j in js])
    summary = [f"- [{title(ch)}](#{ch.name}): "
               f"{headline_strip(headline.count(judged[ch.name]))}"
               f" · {counted[ch.name]['runtime']:.0f} s" for ch in chapters]
    sections = []
    for chapter in chapters:
        c = counted[chapter.name]
        tests = all_rows[chapter.name]
        sections += [
            f"({chapter.name})=",
            f"## {title(chapter)}",
            "",
            f"[Read the chapter](../chapters/{chapter.name}/index.md) · book-mode runtime "
            f"{c['runtime']:.0f} s · {headline.count(judged[chapter.name])['holds']} of "
            f"{len(judged[chapter.name])} headline claims hold as stated",
            "",
            *_seeds_note(chapter),
            *headline_table(judged[chapter.name]),
            f"::::{{dropdown}} The tests ({len(tests)}): verdict, statement, ours",
            f":class-container: ledger-chapter chapter-{chapter.name[:2]}",
            "",
            *_test_list(tests, chapter.name),
            "::::",
            "",
        ]
    lead = headline.sentence(head_counts, len(chapters)) + " " + _headline(total)
    unseeded = [ch.name[:2] for ch in chapters if robustness.read(ch) is None]
    if unseeded and total["claims"]:
        lead += f" No seed record yet for chapter(s) {', '.join(unseeded)}."
    parts = [
        HEADER,
        "",
        "# The claims ledger",
        "",
        "The unit of this ledger is a paper's **headline claim**: a claim its abstract makes, "
        "in its own words, with where it was read (†: in our notes only, not in the paper's "
        "own text). Each chapter declares them in its `claims.toml`, with the tests that speak "
        "to each. A test is declared before it is measured: its statement, the threshold taken "
        "from the paper's words, and a *fidelity*: the paper's claim as stated, or weaker, "
        "stricter, about our variant of the method, a proxy, or exploratory. Every chapter is "
        "executed under independent seeds, by a seed plan declared with it: a fixed number, or "
        "looks at 5, 10 and 20 seeds with more seeds only while a test is undecided, each look "
        "at a wider interval, so that the chance of a false verdict stays at 2.5%. A test's "
        "verdict pools its seeds (a random-effects combination of the seeds' own intervals, "
        "which includes how much the result varies from seed to seed): it **holds** or **does "
        "not hold** when the whole interval lies on one side of the threshold, and is "
        "**inconclusive** when the threshold lies inside. A headline claim **holds** when all "
        "its tests as stated hold, **does not hold** when none does, is **mixed** when some "
        "do and some do not, and **undecided** otherwise; tests of another fidelity and checks "
        "never decide it. The same ledger, for analysis: "
        "[claims.json](_static/claims.json), [claims.csv](_static/claims.csv) (the tests), "
        "[headline.json](_static/headline.json), [headline.csv](_static/headline.csv) (the "
        "headline claims).",
        "",
        lead,
        "",
        *summary,
        "",
        _filter(chapters),
        "",
        *_failing(all_rows),
        *_others(all_rows),
        *sections,
    ]
    return "\n".join(parts).rstrip("\n") + "\n"


def as_records(all_rows: dict[str, list[Row]]) -> list[dict]:
    return [r.as_dict() for chapter_rows in all_rows.values() for r in chapter_rows]


def as_json(all_rows: dict[str, list[Row]]) -> str:
    return json.dumps(as_records(all_rows), indent=1, default=list) + "\n"


def headlines(chapters: list[notebooks.Chapter], all_rows: dict[str, list[Row]]) -> list:
    """Every chapter's headline claims, judged by their tests' pooled verdicts."""
    return [j for ch in chapters for j in headline.judge(ch.path, all_rows[ch.name])]


def headline_json(judged: list) -> str:
    return json.dumps([j.as_dict() for j in judged], indent=1) + "\n"


HEADLINE_COLUMNS = ("chapter", "id", "verdict", "reading", "words", "source", "where", "tests",
                    "untestable", "note")


def headline_csv(judged: list) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADLINE_COLUMNS)
    for j in judged:
        d = j.as_dict()
        d["tests"] = " ".join(f"{t['id']}:{t['fidelity']}:{t['verdict']}" for t in d["tests"])
        writer.writerow([d[k] for k in HEADLINE_COLUMNS])
    return out.getvalue()


CSV_COLUMNS = ("chapter", "notebook", "id", "kind", "fidelity", "statement", "op", "threshold",
               "timed", "n", "pooled", "interval_low", "interval_high", "verdict",
               "seed0_verdict", "seeds_to_decide", "seed_values")


def as_csv(all_rows: dict[str, list[Row]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in as_records(all_rows):
        interval = r["interval"] or [None, None]
        threshold = r["threshold"]
        writer.writerow([
            r["chapter"], r["notebook"], r["id"], r["kind"], r["fidelity"], r["statement"],
            r["op"], " ".join(map(str, threshold)) if isinstance(threshold, (list, tuple))
            else threshold, r["timed"], r["n"], r["pooled"], interval[0], interval[1],
            r["verdict"], r["seed0_verdict"], r["seeds_to_decide"],
            " ".join(f"{k}:{format_measured(v['value'], 6)}" for k, v in r["seeds"].items()),
        ])
    return out.getvalue()


def undecided(chapter: notebooks.Chapter) -> list[tuple[str, int]]:
    """The chapter's claims still inconclusive after pooling that the seed plan's next look may
    decide: ``[(id, seeds at that look)]``, within each claim's declared ``max_seeds``."""
    found = []
    for row in rows(chapter):
        p, d = row.pooled, row.declaration
        if p is None or d is None or p.verdict != "inconclusive" or d.deterministic:
            continue
        if p.method == "same sample" and not p.seeds_to_decide:
            continue  # the shared sample's error decides: more seeds cannot
        # only as far as the seed plan's next look: seeds added beyond the declared looks
        # would make a false verdict likelier than the plan allows
        nxt = next((k for k in row.looks if k > p.n), None)
        if nxt is not None and nxt <= d.max_seeds:
            found.append((row.id, nxt))
    return found


def all_rows(chapters: list[notebooks.Chapter] | None = None) -> dict[str, list[Row]]:
    chapters = chapters if chapters is not None else notebooks.chapters()
    return {chapter.name: rows(chapter) for chapter in chapters}


def outputs(chapters: list[notebooks.Chapter] | None = None) -> dict[Path, str | bytes]:
    """Every generated file and its content: the ledger and its data, the chapters' tables and
    glance boxes, the landing page's cards and their thumbnails (:mod:`.landing`)."""
    from icml25.book.site import landing

    chapters = chapters if chapters is not None else notebooks.chapters()
    found = all_rows(chapters)
    judged = headlines(chapters, found)
    files: dict[Path, str | bytes] = {paths.BOOK / "claims.md": ledger_page(chapters, found),
                                      JSON_FILE: as_json(found), CSV_FILE: as_csv(found),
                                      HEADLINE_JSON: headline_json(judged),
                                      HEADLINE_CSV: headline_csv(judged)}
    for chapter in chapters:
        files[chapter.path / "_claims.md"] = chapter_table(chapter, found[chapter.name])
        files[chapter.path / "_glance.md"] = glance(found[chapter.name]) + "\n"
    counted = {ch.name: counts(ch, found[ch.name]) for ch in chapters}
    files |= landing.page(chapters, counted, landing_headline(counted))
    from icml25.book.site import performance

    files |= performance.outputs()  # the Performance page, from its committed record
    from icml25.book.site import authors

    files |= authors.outputs()  # "Against the authors' code", from data/reference's records
    return files


def _differs(path: Path, content: str | bytes) -> bool:
    if not path.exists():
        return True
    return (path.read_bytes() if isinstance(content, bytes) else path.read_text()) != content


def write() -> list[Path]:
    """Regenerate the ledger files; return those whose content changed."""
    changed = []
    for path, content in outputs().items():
        if _differs(path, content):
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
            changed.append(path)
    return changed


def outdated() -> list[Path]:
    """Generated files that differ from what the executed notebooks say."""
    return [p for p, content in outputs().items() if _differs(p, content)]
