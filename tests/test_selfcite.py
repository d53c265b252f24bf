"""Tests of icml25.selfcite: the context-ablation reward, best-of-N, SimPO, the data."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml25 import selfcite as sc
from icml25.common import data


def test_reward_signs_on_constructed_cases():
    # a necessary and sufficient citation: the statement is likelier with it alone than
    # without it, so drop, hold and their sum are all positive
    full, only, without = -0.5, -0.4, -1.5
    assert sc.reward(only, without, full, "drop") == pytest.approx(1.0)
    assert sc.reward(only, without, full, "hold") == pytest.approx(0.1)
    assert sc.reward(only, without, full) == pytest.approx(1.1)
    # an irrelevant sentence: removing it changes nothing, alone it loses the fact
    assert sc.reward(-2.0, -0.5, -0.5, "drop") == 0
    assert sc.reward(-2.0, -0.5, -0.5) < 0
    assert sc.reward(-2.0, -0.5, kind="log_prob") == -2.0


@given(st.floats(-20, 0), st.floats(-20, 0), st.floats(-20, 0))
@settings(max_examples=50, deadline=None)
def test_drop_plus_hold_is_the_combined_reward(only, without, full):
    drop = sc.reward(only, without, full, "drop")
    total = drop + sc.reward(only, without, full, "hold")
    assert total == pytest.approx(sc.reward(only, without), abs=1e-9)


def test_length_guard_needs_both_length_and_several_sentences():
    r = np.array([0.3, 0.5, 0.7, 0.9])
    tokens = np.array([10, 40, 40, 25])
    n_cited = np.array([1, 1, 3, 2])
    guarded = sc.length_guard(r, tokens, n_cited, limit=32)
    assert guarded.tolist() == [0.3, 0.5, sc.GUARD_PENALTY, 0.9]
    assert sc.length_guard(r, tokens, n_cited, None).tolist() == r.tolist()


@given(st.lists(st.floats(-5, 5), min_size=1, max_size=12))
@settings(max_examples=50, deadline=None)
def test_best_of_n_picks_the_first_maximum(scores):
    j = sc.best_of_n(scores)
    assert scores[j] == max(scores) and all(s < scores[j] for s in scores[:j])


def test_simpo_loss_against_a_hand_computation():
    chosen, rejected, beta, gamma = -0.8, -1.0, 10.0, 3.0
    margin = beta * (chosen - rejected) - gamma  # 10 * 0.2 - 3 = -1
    expected = -math.log(1 / (1 + math.exp(-margin)))
    assert sc.simpo_loss(chosen, rejected, beta, gamma) == pytest.approx(expected)
    assert sc.simpo_loss(-0.1, -5.0) < sc.simpo_loss(-5.0, -0.1)


def test_length_balance_matches_the_counts_without_touching_the_original():
    out = sc.length_balance([1], [0, 2, 4], 5, rng=0)
    assert len(out) == 3 and 1 in out and len(set(out)) == 3
    assert sc.length_balance([0, 1, 2], [3], 5, rng=0) == [0, 1, 2]


def test_citation_prf_is_exact():
    assert sc.citation_prf([1, 2], [2]) == (0.5, 1.0, pytest.approx(2 / 3))
    assert sc.citation_prf([3], [1, 2]) == (0.0, 0.0, 0.0)
    assert sc.citation_prf([1, 2], [1, 2]) == (1.0, 1.0, 1.0)


def test_generator_is_deterministic_and_well_formed():
    items = sc.make_items(30, seed=5)
    assert sc.item_texts(items) == sc.item_texts(sc.make_items(30, seed=5))
    assert sc.texts_digest(items) != sc.texts_digest(sc.make_items(30, seed=6))
    for it in items:
        assert len(it.sentences) == sc.N_SENTENCES
        assert [it.kinds[g] for g in it.gold] == ["gold"] * len(it.gold)
        assert set(sc.DISTRACTOR_KINDS) <= set(it.kinds)
        near = it.sentences[it.kinds.index("near_duplicate")]
        assert near not in it.sentences[:it.kinds.index("near_duplicate")]


def test_pronoun_style_rewords_the_statements_only():
    named, pronoun = sc.make_items(20, seed=5), sc.make_items(20, 5, style="pronoun")
    for a, b in zip(named, pronoun):
        assert (a.sentences, a.kinds, a.question, a.gold) == (b.sentences, b.kinds,
                                                              b.question, b.gold)
        assert b.statement != a.statement and b.statement.startswith(("It ", "Its "))
        # the entity's name is in the question, not the statement, so the gold sentence and
        # its near-duplicate (the name changed by one letter) share the same words with it
        name = b.question.rstrip("?").split()[-2]
        assert name in b.question and name not in b.statement
        if len(b.gold) == 1:
            lex = sc.lexical_scores(b)
            assert lex[b.gold[0]] == lex[b.kinds.index("near_duplicate")]


def test_prompt_keeps_the_original_sentence_numbers():
    it = sc.make_items(1, seed=0)[0]
    text = sc.prompt(it, [1, 3])
    assert f"[2] {it.sentences[1]}" in text and f"[4] {it.sentences[3]}" in text
    assert "[1]" not in text and it.question in text
    assert sc.mask_of(sc.subset_index([1, 3])).tolist() == [False, True, False, True,
                                                            False]


def test_candidates_are_deduplicated_and_non_empty():
    it = sc.make_items(1, seed=1)[0]
    cands = sc.propose_candidates(it, 10, rng=3)
    assert len(cands) == len(set(cands)) <= 10 and all(cands)


def test_surrogate_recovers_a_sparse_linear_model():
    rng = np.random.default_rng(0)
    masks = rng.random((64, 5)) < 0.5
    w = np.array([0.0, 1.0, 0.0, 0.5, 0.0])
    coef, b = sc.fit_surrogate(masks, masks @ w - 2.0, alpha=1e-4)
    assert np.allclose(coef, w, atol=1e-2) and b == pytest.approx(-2.0, abs=1e-2)


def test_bad_input_raises_clear_errors():
    with pytest.raises(ValueError, match="kind must be one of"):
        sc.reward(0, 0, kind="f1")
    with pytest.raises(ValueError, match="needs full"):
        sc.reward(0, 0, kind="drop")
    with pytest.raises(ValueError, match="positive number of tokens"):
        sc.length_guard([1.0], [5], [2], limit=0)
    with pytest.raises(ValueError, match="non-empty"):
        sc.best_of_n([])
    with pytest.raises(ValueError, match="NaN"):
        sc.best_of_n([0.1, float("nan")])
    with pytest.raises(ValueError, match="beta"):
        sc.simpo_loss(0, 0, beta=0)
    with pytest.raises(ValueError, match="gold citation set is empty"):
        sc.citation_prf([1], [])
    with pytest.raises(ValueError, match="n must be positive"):
        sc.make_items(0, 0)
    with pytest.raises(ValueError, match="style must be one of"):
        sc.make_items(3, 0, style="passive")
    with pytest.raises(ValueError, match="style must be one of"):
        sc.load_cache(style="passive")
    with pytest.raises(ValueError, match="indices must lie"):
        sc.prompt(sc.make_items(1, 0)[0], [7])
    with pytest.raises(ValueError, match="citations must lie"):
        sc.length_balance([9], [0], 5, rng=0)
    with pytest.raises(ValueError, match="masks must be"):
        sc.fit_surrogate(np.zeros((4, 2)), np.zeros(3))


@pytest.mark.parametrize("style", sc.STYLES)
def test_cache_belongs_to_the_generated_items(style):
    cache = sc.load_cache(style=style)
    n_items = sc.CACHES[style][1]
    items = sc.make_items(n_items, sc.CACHE_SEED, style)
    assert cache["style"] == style and str(cache["digest"]) == sc.texts_digest(items)
    assert cache["logp"].shape == (n_items, 2 ** sc.N_SENTENCES)
    assert np.isfinite(cache["logp"]).all() and (cache["logp"] < 0).all()


@pytest.mark.slow  # loads SmolLM2-135M (most of a minute on two cores)
def test_caches_are_the_models_output():
    model, tokenizer = sc.load_model()
    for style in sc.STYLES:
        cache = sc.load_cache(style=style)
        items = cache["items"]
        picks = [(0, 31), (0, sc.subset_index(items[0].gold)), (len(items) - 1, 0)]
        fresh = sc.score_subsets([items[k] for k, _ in picks], model, tokenizer,
                                 subsets=[np.flatnonzero(sc.mask_of(c)) for _, c in picks])
        cached = np.array([cache["logp"][k, c] for k, c in picks])
        assert np.abs(fresh - cached).max() < 1e-4, style
        assert data.path(sc.CACHES[style][0]).exists()
