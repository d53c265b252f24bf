"""Verdicts that mean what they say: declarations, independent streams, pooling over seeds."""

import re
from pathlib import Path

import numpy as np
import pytest
from icml25.book import declarations, pooling
from icml25.book.site import boxes, ledger
from icml25.book.run import notebooks, robustness
from icml25.common import paths
from icml25.book.claims import verdict as point_verdict
from icml25.common.streams import stream, stream_int
from icml25.book.run.staleness import state

CHAPTERS = notebooks.chapters()


# -- pooling ---------------------------------------------------------------------------------

def _coverage(n_seeds, tau, within, sims=2000, seed=20261204):
    """Share of simulated claims whose pooled interval covers the true mean (0.3)."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(sims):
        se = within * rng.uniform(0.5, 1.5, n_seeds) if within else np.zeros(n_seeds)
        y = 0.3 + rng.normal(0, tau, n_seeds) + rng.normal(0, 1, n_seeds) * se
        intervals = [(v - 1.96 * s, v + 1.96 * s) for v, s in zip(y, se)] if within else \
            [None] * n_seeds
        p = pooling.pool(y, intervals, ">", 0.0)
        hits += p.interval[0] <= 0.3 <= p.interval[1]
    return hits / sims


def test_random_effects_reproduces_a_published_worked_example():
    """The BCG vaccine trials (Colditz et al. 1994), the worked example of metafor's ``rma``:
    log risk ratios of 13 trials, DerSimonian-Laird and the Knapp-Hartung interval. metafor
    prints estimate -0.7141, tau^2 0.3088 and 95% interval [-1.1078, -0.3204]; statsmodels'
    ``combine_effects`` (its "random effect wls" row, with t) is an independent second reading."""
    from icml25.common.stats import random_effects
    from statsmodels.stats.meta_analysis import combine_effects

    # treated with TB, treated without, control with TB, control without
    a, b, c, d = np.array([
        [4, 119, 11, 128], [6, 300, 29, 274], [3, 228, 11, 209], [62, 13536, 248, 12619],
        [33, 5036, 47, 5761], [180, 1361, 372, 1079], [8, 2537, 10, 619],
        [505, 87886, 499, 87892], [29, 7470, 45, 7232], [17, 1699, 65, 1600],
        [186, 50448, 141, 27197], [5, 2493, 3, 2338], [27, 16886, 29, 17825]], float).T
    y = np.log(a / (a + b)) - np.log(c / (c + d))
    v = 1 / a - 1 / (a + b) + 1 / c - 1 / (c + d)
    mu, half, tau2 = random_effects(y, np.sqrt(v))
    assert (round(mu, 4), round(tau2, 4)) == (-0.7141, 0.3088)
    assert (round(mu - half, 4), round(mu + half, 4)) == (-1.1078, -0.3204)
    frame = combine_effects(y, v, method_re="dl", use_t=True).summary_frame()
    row = frame.loc["random effect wls"]
    np.testing.assert_allclose([mu, mu - half, mu + half],
                               [row["eff"], row["ci_low"], row["ci_upp"]], rtol=1e-12)


@pytest.mark.parametrize("n_seeds, tau, within", [
    (5, 0.1, 0.0),     # no within-seed interval: the t interval over seeds
    (5, 0.1, 0.05),    # between-seed variance dominates (a model's training luck)
    (5, 0.0, 0.05),    # only the within-seed sampling error
    (10, 0.05, 0.05),  # both
])
def test_the_pooled_interval_covers_the_truth_95_percent_of_the_time(n_seeds, tau, within):
    assert 0.93 <= _coverage(n_seeds, tau, within) <= 0.97


def _shared_coverage(same_sample, n_seeds=10, shared=0.05, own=0.02, sims=2000,
                     seed=20261205):
    """Coverage when every seed measures the same sample: its error c is common to the
    seeds, and each seed's interval (over that sample) has the width of c and d_i together."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(sims):
        y = 0.3 + rng.normal(0, shared) + rng.normal(0, own, n_seeds)
        se = np.hypot(shared, own) * rng.uniform(0.9, 1.1, n_seeds)
        intervals = [(v - 1.96 * s, v + 1.96 * s) for v, s in zip(y, se)]
        p = pooling.pool(y, intervals, ">", 0.0, same_sample=same_sample)
        hits += p.interval[0] <= 0.3 <= p.interval[1]
    return hits / sims


def test_seeds_on_the_same_sample_keep_its_error():
    """Pooled as independent replications, seeds that share their sample under-cover; the
    same-sample interval keeps the shared error and covers about 95% of the time."""
    assert _shared_coverage(False) < 0.75
    assert 0.93 <= _shared_coverage(True) <= 0.985
    # the shared part bounds what seeds can do: a larger sample would decide it
    y, iv = [0.01, 0.012, 0.008, 0.011, 0.009], [(-0.03, 0.05)] * 5
    p = pooling.pool(y, iv, ">", 0, same_sample=True)
    assert p.method == "same sample" and p.verdict == "inconclusive"
    assert p.seeds_to_decide is None and p.interval[0] < -0.02
    assert pooling.pool(y, iv, ">", 0).verdict == "holds"  # what independence would say
    with pytest.raises(ValueError, match="within-seed interval"):
        pooling.pool(y, [None] * 5, ">", 0, same_sample=True)


def _false_holds(looks, level, tau=0.1, within=0.05, sims=3000, seed=20261207):
    """The share of runs of a seed plan that declare "holds" although the true value sits on
    the threshold: seeds are drawn, the verdict read at each look, more seeds added only while
    it is undecided (what ``robustness --until-decided`` does)."""
    rng = np.random.default_rng(seed)
    false = 0
    for _ in range(sims):
        n = max(looks)
        se = within * rng.uniform(0.5, 1.5, n)
        y = rng.normal(0, tau, n) + rng.normal(0, 1, n) * se
        intervals = [(v - 1.96 * s, v + 1.96 * s) for v, s in zip(y, se)]
        for k in looks:
            verdict = pooling.pool(y[:k], intervals[:k], ">", 0.0, level=level).verdict
            if verdict != "inconclusive":
                false += verdict == "holds"
                break
    return false / sims


def test_a_sequential_seed_plan_keeps_false_holds_at_2_5_percent():
    """Looking at 5, 10 and 20 seeds and adding seeds while undecided, with the 95% interval
    at every look, declares a false "holds" more often than 2.5%; the plan's level
    (:func:`pooling.design_level`, alpha split over the looks) keeps it below 3%."""
    looks = [5, 10, 20]
    naive = _false_holds(looks, 0.95)
    planned = _false_holds(looks, pooling.design_level(looks))
    assert naive > 0.035, naive
    assert planned <= 0.03, planned
    assert 0.015 <= _false_holds([10], pooling.design_level([10])) <= 0.035  # one look: 2.5%
    with pytest.raises(ValueError, match="at least one look"):
        pooling.design_level([])


def test_an_interval_that_leaves_out_the_seed_variance_would_not_cover():
    """What the pooling fixes: seed-0's own interval, when training luck dominates."""
    rng = np.random.default_rng(1)
    y = 0.3 + rng.normal(0, 0.1, 2000)
    covered = np.mean(np.abs(y - 0.3) <= 1.96 * 0.01)
    assert covered < 0.3


def test_pooled_verdicts_follow_from_their_interval():
    p = pooling.pool([0.2, 0.25, 0.3, 0.22, 0.28], [None] * 5, ">", 0)
    assert p.verdict == "holds" and p.interval[0] > 0 and p.method == "t over seeds"
    p = pooling.pool([0.05, -0.1, 0.2, -0.05, 0.1], [None] * 5, ">", 0)
    assert p.verdict == "inconclusive" and p.seeds_to_decide > 5
    p = pooling.pool([0.91, 0.93, 0.95, 0.92, 0.94], [(0.8, 1.0)] * 5, "in", (0.9, 0.99))
    assert p.verdict == "holds" and p.method == "random effects"  # the seeds agree closely
    p = pooling.pool([0.86, 0.93, 0.99, 0.9, 0.97], [(0.8, 1.0)] * 5, "in", (0.9, 0.99))
    assert p.verdict == "inconclusive"
    # A seed whose interval has no width: the t interval over the seeds.
    p = pooling.pool([1.0, 0.9, 0.95, 1.0, 0.97], [(1.0, 1.0), *[(0.8, 1.0)] * 4], ">", 0.5)
    assert p.method == "t over seeds" and p.verdict == "holds" and np.isfinite(p.estimate)
    # A value no seed changes: one run decides, with its own interval.
    p = pooling.pool([0.5] * 5, [(0.4, 0.6)] * 5, ">=", 0.45)
    assert p.method == "one run" and p.verdict == "inconclusive" and p.n == 1
    assert pooling.pool([0.5, 0.6], [None] * 2, ">=", 0.45, deterministic=True).n == 1


def test_yes_no_claims_pool_as_the_share_of_seeds():
    assert pooling.pool([True] * 5, [None] * 5, "==", True).verdict == "inconclusive"
    six = pooling.pool([True] * 6, [None] * 6, "==", True)
    assert six.verdict == "holds" and six.text().startswith("true in 6 of 6 seeds")
    assert pooling.pool([False] * 6, [None] * 6, "==", True).verdict == "does not hold"
    assert pooling.pool([True] * 5, [None] * 5, "==", True).seeds_to_decide == 6


def test_seeds_to_decide_grows_as_the_inverse_square_of_the_effect():
    assert pooling.seeds_to_decide(5, 0.1, 0.2, ">", 0) == 20
    assert pooling.seeds_to_decide(5, 0.0, 0.2, ">", 0) is None


def test_pooling_refuses_bad_input():
    with pytest.raises(ValueError, match="one interval"):
        pooling.pool([1.0, 2.0], [None], ">", 0)
    with pytest.raises(ValueError, match="at least 2 seeds"):
        pooling.random_effects([1.0], [0.1])


# -- independent streams ---------------------------------------------------------------------

NAMES = ["bootstrap", "screen", "init-0", "init-1", "world-0", "world-1", "global state"]


def test_two_run_seeds_share_no_stream():
    """No stream of run a is a stream of run b: the first draws of every (seed, name) differ,
    and run 1's stream is not run 0's next one (what ``seed + i`` offsets did)."""
    draws = {}
    for seed in range(20):
        for name in NAMES:
            first = tuple(np.random.default_rng(stream(seed, name)).integers(0, 2**63, 4))
            assert first not in draws, f"{(seed, name)} repeats {draws.get(first)}"
            draws[first] = (seed, name)
    ints = {stream_int(seed, name) for seed in range(20) for name in NAMES}
    assert len(ints) == 20 * len(NAMES)


def test_streams_are_deterministic_and_refuse_bad_input():
    assert stream_int(3, "a") == stream_int(3, "a") < 2**63
    with pytest.raises(ValueError, match="non-negative"):
        stream(-1, "a")
    with pytest.raises(ValueError, match="non-empty"):
        stream(0, "")


OFFSET = re.compile(r"\bseed\s*\+\s*\w|\brange\(\s*seed\b|\bseed\s*\*\s*\d")
TAG = re.compile(r"\[\s*seed\s*,")


def _code_lines(path: Path):
    """``(line number, line)`` of a Python file with its strings and comments blanked."""
    import io
    import tokenize

    lines = path.read_text().splitlines()
    blank = [list(line) for line in lines]
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if tok.type in (tokenize.STRING, tokenize.COMMENT):
            (r0, c0), (r1, c1) = tok.start, tok.end
            for r in range(r0, r1 + 1):
                lo = c0 if r == r0 else 0
                hi = c1 if r == r1 else len(blank[r - 1])
                blank[r - 1][lo:hi] = " " * (hi - lo)
    return [(n, "".join(chars)) for n, chars in enumerate(blank, 1)]


def test_no_seed_offsets_or_overlapping_seed_ranges():
    """``seed + i`` makes run 1's stream i-1 run 0's stream i, and ``range(seed, seed + n)``
    makes runs share replications: never, anywhere. Chapters draw from named streams only
    (``[seed, 3]`` is a stream numbered by hand). The library keeps ``SeedSequence([seed, k])``
    tags only in the commands that regenerate committed data and models (``train``, the review
    pool, the probing texts): they are independent streams, and renaming them would change what
    the commands reproduce bit for bit."""
    found = []
    for path in [*paths.CHAPTERS.glob("*/*.py"), *(paths.ROOT / "lib").rglob("*.py")]:
        in_chapter = paths.CHAPTERS in path.parents
        for number, code in _code_lines(path):
            if OFFSET.search(code) or (in_chapter and TAG.search(code)):
                found.append(f"{paths.relative(path)}:{number}: {code.strip()}")
    assert not found, "seed offsets or hand-numbered streams:\n" + "\n".join(found)


# -- declarations ----------------------------------------------------------------------------

def test_declarations_refuse_what_they_cannot_mean():
    base = ('[[claims]]\nid = "a"\nnotebook = "method"\nkind = "claim"\nfidelity = "paper"\n'
            'statement = "s"\npaper = "p"\nop = ">="\nthreshold = 1\n')
    assert declarations.parse(base)["a"].counted
    for bad, message in [
        (base.replace('fidelity = "paper"', 'fidelity = "proxy"'), "needs a 'why'"),
        (base.replace('fidelity = "paper"', 'fidelity = "good"'), "fidelity must be one of"),
        (base.replace('op = ">="', 'op = "=>"'), "op must be one of"),
        (base.replace("threshold = 1", 'threshold = "computed"'), "threshold_from"),
        (base + base, "declared twice"),
        (base + 'varies = ["luck"]\n', "varies must list"),
        (base + "colour = 1\n", "unknown fields"),
        (base.replace('op = ">="', 'op = "in"'), "op 'in' needs"),
        (base + "same_sample = true\n", "same_sample says the seeds share"),
        (base + 'same_sample = "yes"\nvaries = ["evaluation"]\n', "true or false"),
        ("[[claims]]\nid = 'a'\n", "missing"),
    ]:
        with pytest.raises(declarations.DeclarationError, match=message):
            declarations.parse(bad)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_every_reported_claim_is_declared_and_every_declared_claim_reported(chapter):
    declared = declarations.load(chapter.path)
    assert declared, f"{chapter.name} has no {declarations.FILE}"
    for py in chapter.notebooks:
        reported = [c["id"] for c in state(py).claims]
        wanted = [k for k, d in declared.items() if d.notebook == py.stem]
        assert sorted(reported) == sorted(wanted), (
            f"{paths.relative(py)}: reported {sorted(set(reported) - set(wanted))} undeclared, "
            f"declared {sorted(set(wanted) - set(reported))} not reported")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_declarations_match_the_published_notebooks(chapter):
    """A comparison or threshold changed after a published result must be recorded under
    ``[[claims.history]]`` with its reason, and the notebook re-executed (the run records what
    it compared with). A statement is read when the pages are built, like the paper's words:
    an edit of it re-executes nothing, and one that changes what is tested is recorded under
    ``[[claims.history]]`` too, which the chapter's page shows under "Changes"."""
    declared = declarations.load(chapter.path)
    for py in chapter.notebooks:
        for c in state(py).claims:
            d = declared.get(c["id"])
            if d is None:
                continue
            published = {"op": c["op"], "kind": c["kind"]}
            now = {"op": d.op, "kind": d.kind}
            if not d.computed:
                threshold = c["threshold"]
                published["threshold"] = tuple(threshold) if isinstance(threshold, list) \
                    else threshold
                now["threshold"] = d.threshold
            assert published == now, (
                f"{chapter.name}/{declarations.FILE}: {c['id']} changed since it was published "
                f"({published} -> {now}); record the change and its reason under "
                "[[claims.history]] and re-execute")


# -- the ledger ------------------------------------------------------------------------------

@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_every_verdict_is_pooled_over_at_least_five_independent_seeds(chapter):
    assert not robustness.problems(chapter)
    for row in ledger.rows(chapter):
        p, d = row.pooled, row.declaration
        assert p is not None, f"{row.id}: no pooled verdict"
        assert len(row.seeds) >= 5, f"{row.id}: {len(row.seeds)} seeds"
        if d.deterministic:  # declared: no seed changes it; the record must agree
            values = {repr(s["value"]) for s in row.seeds.values()}
            assert len(values) == 1, f"{row.id} is declared varies = [] but moved: {values}"
        if p.method == "one run":
            continue
        assert p.n >= 5
        if p.method != "share of seeds":
            assert p.verdict == point_verdict(p.estimate, d.op, row.published.threshold,
                                              p.interval)


def test_the_ledger_as_data_lists_every_claim():
    import json

    rows = json.loads(Path(ledger.JSON_FILE).read_text())
    declared = sum(len(declarations.load(c.path)) for c in CHAPTERS)
    assert len(rows) == declared
    assert {r["fidelity"] for r in rows} <= set(declarations.FIDELITY)
    assert all(r["n"] >= 5 or r["method"] == "one run" for r in rows)


def test_a_box_reads_the_value_then_its_labelled_figures_with_math_and_no_id():
    from icml25.book.claims import Claim, format_shown

    claim = Claim(id="sop-gap", statement=r"the gap to the backbone is below $\epsilon$",
                  paper="Table 2", value=0.14, op=">", threshold=0.0, verdict="holds",
                  measured="0.14", interval=(0.11, 0.18),
                  shown=format_shown({"SOP": 0.83, "backbone": 0.97}))
    assert claim.ours() == "0.14 [0.11, 0.18] – SOP 0.83 vs backbone 0.97"
    box = boxes.render(claim)
    assert r"\(\epsilon\)" in box and "$" not in box
    assert "<code" not in box and 'data-claim="sop-gap"' in box  # the id only as data
    assert format_shown({"a": 1, "b": 2.5, "c": True}) == "a 1, b 2.5, c yes"
    assert format_shown((0.5, 2)) == "0.5, 2"
    assert format_shown({"n = 200": 0.0833, "n = 1000": 1 / 30}) == "n = 200: 0.0833, n = 1000: 0.0333"
    old = Claim(id="x", statement="s", paper="p", value=1.0, op=">", threshold=0.0,
                verdict="holds", measured="0.83, 0.97")  # a record from before `shown`
    assert old.ours() == "0.83, 0.97"


def test_a_run_records_its_measurement_and_the_page_renders_todays_words():
    """The kernel keeps only the measurement; the box takes the statement, the paper's words
    and the label from the declaration as it is when the pages are built."""
    import json

    from icml25.book.claims import MIME, RECORDED, Claim
    from icml25.book.declarations import parse

    run = Claim(id="a", value=0.5, op=">", threshold=0.0, verdict="holds", measured="0.5",
                seed=0, statement="the old words", paper="old quote")
    bundle = run.bundle()
    assert set(bundle) == {"text/plain", MIME} and set(bundle[MIME]) == set(RECORDED)
    assert "old words" not in json.dumps(bundle)
    declared = parse('[[claims]]\nid = "a"\nnotebook = "nb"\nkind = "claim"\n'
                     'fidelity = "proxy"\nwhy = "w"\nstatement = "the new words"\n'
                     'paper = "new quote"\nop = ">"\nthreshold = 0\n')
    nb = {"cells": [{"cell_type": "code", "source": "", "metadata": {}, "outputs": [
        {"output_type": "display_data", "metadata": {}, "data": bundle}]}]}
    out = json.loads(boxes.with_boxes(json.dumps(nb), {}, declared))
    data = out["cells"][0]["outputs"][0]["data"]
    assert "the new words" in data["text/html"] and "new quote" in data["text/html"]
    assert data[MIME] == bundle[MIME] and "text/plain" not in data
    assert Claim.of(bundle[MIME], declared["a"]).fidelity == "proxy"


_ASCII_MATH = re.compile(r"(?<![\\$\w])(nu|eta|kappa|lambda|epsilon|sigma|theta|gamma|alpha|"
                         r"sqrt|mu|rho|phi|psi)(?!\w)|\|\||\+-|\^\d")


@pytest.mark.parametrize("chapter", notebooks.chapters(), ids=lambda c: c.name)
def test_boxes_write_math_as_math(chapter):
    """A verdict box renders ``$...$`` as math: its statement, the paper's words and its note
    hold no ASCII math (``nu``, ``eta/B``, ``||theta||``, ``+-``, ``2^7``) outside it."""
    found = []
    for row in ledger.rows(chapter):
        for field in ("statement", "paper", "note"):
            outside = re.sub(r"\$[^$]*\$", "", getattr(row.published, field) or "")
            if match := _ASCII_MATH.search(outside):
                found.append(f"{row.id}.{field}: {match.group(0)!r} in {outside[:80]!r}")
    assert not found, "\n".join(found)
