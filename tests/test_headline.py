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
