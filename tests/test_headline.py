"""The papers' headline claims: declarations, the verdict rule, the counts."""

import pytest

from icml25.book import headline
from icml25.book.declarations import DeclarationError

H = headline.Headline


def _h(**kw):
    return H(**{"chapter": "00-x", "id": "a", "words": "w", "source": "abstract",
                "where": "abstract", **kw})


@pytest.mark.parametrize("tests, expected", [
    ([], "untested"),
    ([("t1", "paper", "holds"), ("t2", "paper", "holds")], "holds"),
    ([("t1", "paper", "does not hold")], "does not hold"),
    ([("t1", "paper", "holds"), ("t2", "paper", "does not hold")], "mixed"),
    ([("t1", "paper", "holds"), ("t2", "paper", "inconclusive")], "undecided"),
    ([("t1", "paper", "does not hold"), ("t2", "paper", "inconclusive")], "undecided"),
    ([("t1", "weaker", "holds")], "weaker reading only"),
    # a weaker test never decides the claim as stated, whatever its verdict
    ([("t1", "paper", "does not hold"), ("t2", "weaker", "holds")], "does not hold"),
])
def test_the_verdict_rule(tests, expected):
    assert headline.verdict(_h(), tests) == expected


def test_untestable_here_is_never_a_failure():
    assert headline.verdict(_h(untestable="the benchmark is not offline"), []) == \
        "untestable here"
    # a tie at the ceiling: the tests are shown, the claim is not counted as failing
    tied = [("det-ap", "paper", "does not hold")]
    assert headline.verdict(_h(untestable="both models are perfect here"), tied) == \
        "untestable here"


@pytest.mark.parametrize("entry, message", [
    ('id = "a"\nwords = "w"\nsource = "abstract"\n', "missing where"),
    ('id = "a"\nwords = "w"\nsource = "abstract"\nwhere = "x"\ntests = ["nope"]\n',
     "not declared"),
    ('id = "a"\nwords = "w"\nsource = "a blog"\nwhere = "x"\n', "source must start"),
    ('id = "a"\nwords = "w"\nsource = "abstract"\nwhere = "x"\nverdict = "holds"\n',
     "unknown field"),
    ('id = "a"\nwords = "w"\nsource = "abstract"\nwhere = "x"\ntests = "t1"\n',
     "tests must be a list"),
])
def test_malformed_headlines_are_refused(entry, message):
    with pytest.raises(DeclarationError, match=message):
        headline.parse("[[headline]]\n" + entry, "00-x", "claims.toml", {"t1"})


def test_counts_and_sentence():
    judged = [headline.Judged(_h(id="a"), [("t", "paper", "holds")]),
              headline.Judged(_h(id="b", source="not checked"), []),
              headline.Judged(_h(id="c", untestable="compute"), [])]
    counts = headline.count(judged)
    assert counts["holds"] == 1 and counts["untested"] == 1
    assert counts["untestable here"] == 1 and counts["total"] == 3 and counts["checked"] == 2
    text = headline.sentence(counts, papers=1)
    assert text.startswith("**1 of the 3 headline claims of the 1 papers hold as stated")


def test_every_chapter_declares_valid_headlines():
    from icml25.book.run import notebooks

    for chapter in notebooks.chapters():
        for h in headline.load(chapter.path):  # raises on a malformed entry
            assert h.words.strip() and h.where.strip()


def test_the_lead_names_failures_first_and_quotes_them():
    judged = [headline.Judged(_h(id="a", words="We win [...] everywhere"),
                              [("t", "paper", "holds")]),
              headline.Judged(_h(id="b", words="[...] nearly optimal trees for a wide range "
                                                "of metrics and data"),
                              [("u", "paper", "does not hold")]),
              headline.Judged(_h(id="c", untestable="compute"), [])]
    text = headline.lead(judged)
    assert text == ("Of the paper's 3 headline claims, 1 does not hold (“nearly optimal trees "
                    "for a wide range of metrics…”), 1 holds and 1 cannot be tested at "
                    "this scale.")
    assert headline.lead([]).startswith("The chapter declares no headline claim")


def test_no_chapter_opens_what_we_found_with_a_success_over_a_failure():
    """Each chapter's "What we found", on its page and on its card, opens with its headline
    verdicts, worst first: a chapter with a headline claim that does not hold (or holds only
    in part, or is undecided) cannot lead with one that holds."""
    from icml25.book.run import notebooks
    from icml25.book.site import landing, ledger
    from icml25.book.site.sphinx_ext import with_lead

    for chapter in notebooks.chapters():
        counts = ledger.counts(chapter)
        lead = counts["lead"]
        verdicts = [j.verdict for j in headline.judge(chapter.path, ledger.rows(chapter))]
        first = next(v for v in headline.LEAD_ORDER if v in verdicts)
        one, many = headline._LEAD_WORDS[first]
        n = verdicts.count(first)
        assert lead.startswith(f"Of the paper's {len(verdicts)} headline claim"), chapter.name
        assert lead.split(", ", 1)[1].startswith(f"{n} {one if n == 1 else many}"), \
            (chapter.name, lead)
        index = (chapter.path / "index.md").read_text()
        assert "**What we found.**" in index, chapter.name
        assert f"**What we found.** {lead}" in with_lead(index, lead)
        card, _ = landing.card(chapter, counts)
        assert f"**What we found.** {lead}" in card, chapter.name


def test_effects_put_ours_beside_the_papers_figure():
    entry = ('[[headline]]\nid = "a"\nwords = "w"\nsource = "abstract"\nwhere = "x"\n'
             'tests = ["t1"]\neffects = [{test = "t1", paper = 0.04, what = "gain", '
             'gain = true}]\n')
    h = headline.parse(entry, "00-x", "claims.toml", {"t1"})[0]
    j = headline.Judged(h, [("t1", "paper", "holds")], {"t1": (0.002, (0.001, 0.003))})
    assert j.effect_lines() == ["gain: ours 0.002 [0.001, 0.003], the paper's 0.04 "
                                "(0.05 of the paper's gain)"]
    j.values["t1"] = (-0.01, (-0.02, 0.0))
    assert j.effect_lines()[0].endswith("(no gain in the paper's direction)")
    assert j.as_dict()["effects"][0]["ours"] == -0.01
    for bad, message in [('{test = "t2", paper = 1, what = "g"}', "not one of"),
                         ('{test = "t1", paper = "big", what = "g"}', "a number"),
                         ('{test = "t1", what = "g"}', "a table of")]:
        with pytest.raises(DeclarationError, match=message):
            headline.parse(entry.replace(entry[entry.index("effects"):],
                                         f"effects = [{bad}]\n"), "00-x", "claims.toml",
                           {"t1", "t2"})
