"""Tests of icml25.rate: the review generator, the rewriter, the three estimators and the truth."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml25 import minilm, rate
from icml25.common import data

POOL = rate.make_pool(60, seed=7)
TABLE = rate.lexicon_reward(POOL.texts)


def words(text):
    return rate._WORD.findall(text)


@pytest.mark.parametrize("code", range(rate.N_VERSIONS))
def test_sentiment_counterfactual_changes_only_sentiment_words(code):
    sentiment = {w for pair in rate._SENTIMENT for w in pair}
    flipped = code ^ rate.bit("sentiment")
    for i in range(POOL.size):
        a, b = words(POOL.texts[i, code]), words(POOL.texts[i, flipped])
        assert len(a) == len(b)
        changed = [(x, y) for x, y in zip(a, b) if x != y]
        assert changed and all(x in sentiment and y in sentiment for x, y in changed)


def test_typos_only_garble_words_and_clean_versions_have_none():
    clean = rate.lexicon_reward  # noqa: F841 (the vocabulary is the reward's notion of a typo)
    for i in range(POOL.size):
        for code in range(rate.N_VERSIONS):
            ws = [w.lower() for w in words(POOL.texts[i, code])]
            bad = [w for w in ws if w not in rate.VOCABULARY]
            if rate.get(code, "typos"):
                assert bad, POOL.texts[i, code]
                assert len(ws) == len(words(POOL.texts[i, code & ~rate.bit("typos")]))
            else:
                assert not bad


def test_long_and_formal_versions_differ_as_documented():
    n_words = np.vectorize(lambda t: len(words(t)))(POOL.texts)
    long_ = rate.get(np.arange(16), "length")
    assert (n_words[:, long_].mean(axis=1) > 1.6 * n_words[:, ~long_].mean(axis=1)).all()
    casual, formal = POOL.texts[:, 0], POOL.texts[:, rate.bit("formality")]
    assert sum("'" in t for t in formal) == 0 and sum("'" in t for t in casual) == POOL.size


def test_pool_is_reproducible_from_its_seed():
    again = rate.make_pool(60, seed=7)
    assert (again.texts == POOL.texts).all()
    assert minilm.texts_digest(rate.make_pool(60, seed=8).texts) != minilm.texts_digest(POOL.texts)


def test_committed_embeddings_belong_to_the_generated_pool():
    file = data.path(rate.EMBEDDINGS)
    with np.load(file) as z:
        assert z["embeddings"].shape == (rate.POOL_SIZE, rate.N_VERSIONS, 384)
        assert str(z["digest"]) == minilm.texts_digest(rate.make_pool(rate.POOL_SIZE, rate.POOL_SEED).texts)


@given(st.floats(-1, 1), st.sampled_from(["sentiment", "length", "formality"]))
@settings(max_examples=30, deadline=None)
def test_design_has_the_requested_correlation(phi, target):
    p = rate.design(target, phi)
    codes = np.arange(16)
    w, c = rate.get(codes, target), rate.get(codes, "typos")
    assert p.sum() == pytest.approx(1)
    assert p[w].sum() == pytest.approx(0.5)
    cov = p[w & c].sum() - p[w].sum() * p[c].sum()
    assert cov / np.sqrt(p[w].sum() * (1 - p[w].sum()) * p[c].sum() * (1 - p[c].sum())) == pytest.approx(phi, abs=1e-9)


def test_rewriter_changes_only_what_it_says():
    rng = np.random.default_rng(0)
    reviews = rng.integers(POOL.size, size=500)
    codes = rng.integers(16, size=500)
    rw = rate.RuleRewriter("sentiment", fix_typos=0.5, push={"length": 1})
    for value in (0, 1):
        out = rw(reviews, codes, value, rng)
        assert (rate.get(out, "sentiment") == value).all()
        assert (rate.get(out, "formality") == rate.get(codes, "formality")).all()
        assert not (rate.get(out, "typos") & ~rate.get(codes, "typos")).any()  # never adds typos
        if value == 1:
            assert rate.get(out, "length").all()
        else:
            assert (rate.get(out, "length") == rate.get(codes, "length")).all()
    # consistent: the same reviews are fixed every time; about half of them here
    a, b = rw(reviews, codes, 0, rng), rw(reviews, codes, 0, np.random.default_rng(99))
    assert (a == b).all()
    typo = rate.get(codes, "typos")
    assert 0.35 < (~rate.get(a, "typos"))[typo].mean() < 0.65


def test_perfect_rewrites_recover_the_sample_effect_exactly():
    rng = np.random.default_rng(1)
    reviews, codes = rate.sample(POOL.size, 400, rate.design("sentiment", 0.8), rng)
    perfect = rate.RuleRewriter("sentiment", fix_typos=0.0)
    est = rate.effects_from_table(TABLE, reviews, codes, perfect, rng).estimate
    truth = rate.true_effects(TABLE, "sentiment", None, reviews, codes)
    for target in ("ATT", "ATU", "ATE"):
        assert est[("single rewrite", target)] == pytest.approx(truth[target], abs=1e-12)
        assert est[("RATE", target)] == pytest.approx(truth[target], abs=1e-12)
    assert abs(est[("naive", "ATE")] - truth["ATE"]) > 0.1  # confounded by typos


def test_rate_cancels_a_consistent_artefact_that_biases_the_single_rewrite():
    rng = np.random.default_rng(2)
    reviews, codes = rate.sample(POOL.size, 400, rate.design("sentiment", 0.8), rng)
    fixer = rate.RuleRewriter("sentiment", fix_typos=1.0)
    est = rate.effects_from_table(TABLE, reviews, codes, fixer, rng).estimate
    truth = rate.true_effects(TABLE, "sentiment", None, reviews, codes)
    assert est[("RATE", "ATE")] == pytest.approx(truth["ATE"], abs=1e-12)  # additive reward
    assert abs(est[("single rewrite", "ATT")] - truth["ATT"]) > 0.1


def test_ate_is_the_weighted_average_of_att_and_atu():
    rng = np.random.default_rng(3)
    w = rng.integers(2, size=101)
    r = rng.normal(size=(3, 101))
    df = rate.estimate(w, *r)
    for name in ("single rewrite", "RATE"):
        att, atu, ate = (df.estimate[(name, t)] for t in ("ATT", "ATU", "ATE"))
        assert ate == pytest.approx(w.mean() * att + (1 - w.mean()) * atu)
    assert (df.low < df.estimate).all() and (df.estimate < df.high).all()


def test_population_truth_matches_a_large_sample():
    rng = np.random.default_rng(4)
    p = rate.design("length", 0.5)
    reviews, codes = rate.sample(POOL.size, 200_000, p, rng)
    pop = rate.true_effects(TABLE, "length", p)
    smp = rate.true_effects(TABLE, "length", None, reviews, codes)
    for target in pop:
        assert smp[target] == pytest.approx(pop[target], abs=3e-3)


def test_reward_head_recovers_a_linear_utility():
    rng = np.random.default_rng(5)
    theta = rng.normal(size=8)
    ea, eb = rng.normal(size=(2, 4000, 8))
    label = (rng.random(4000) < 1 / (1 + np.exp(-(ea - eb) @ theta))).astype(int)
    fitted = rate.fit_reward_head(ea, eb, label, C=10.0)
    assert np.corrcoef(fitted, theta)[0, 1] > 0.98


@pytest.mark.parametrize("args, message", [
    ((np.array([0, 1, 1]), np.zeros(3), np.zeros(2), np.zeros(3)), "paired"),
    ((np.array([1, 1, 1]), np.zeros(3), np.zeros(3), np.zeros(3)), "at least two"),
    ((np.array([0, 2, 1, 0]), np.zeros(4), np.zeros(4), np.zeros(4)), "only 0 and 1"),
    ((np.array([0, 0, 1, 1]), np.array([0, np.nan, 0, 0]), np.zeros(4), np.zeros(4)), "finite"),
])
def test_estimate_refuses_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        rate.estimate(*args)


def test_bad_parameters_raise_clear_errors():
    with pytest.raises(ValueError, match="unknown attribute 'tone'"):
        rate.RuleRewriter("tone")
    with pytest.raises(ValueError, match="probability"):
        rate.RuleRewriter("sentiment", fix_typos=1.5)
    with pytest.raises(ValueError, match="push"):
        rate.RuleRewriter("sentiment", push={"sentiment": 1})
    with pytest.raises(ValueError, match="phi"):
        rate.design("sentiment", 1.5)
    with pytest.raises(ValueError, match="same attribute"):
        rate.design("typos", 0.2)
    with pytest.raises(ValueError, match="shape"):
        rate.effects_from_table(np.zeros((3, 4)), [0], [0], rate.RuleRewriter("sentiment"), None)
    with pytest.raises(ValueError, match="positive integer"):
        rate.make_pool(0, 1)


def test_committed_embeddings_are_the_models_output():
    pool = rate.make_pool(rate.POOL_SIZE, rate.POOL_SEED)
    rows = [0, rate.POOL_SIZE - 1]
    fresh = minilm.sentence_embeddings(pool.texts[rows]).reshape(len(rows), rate.N_VERSIONS, -1)
    with np.load(data.path(rate.EMBEDDINGS)) as z:
        cached = z["embeddings"][rows].astype(float)
    assert np.abs(fresh - cached).max() < 2e-3  # float16 rounding of unit-norm vectors
