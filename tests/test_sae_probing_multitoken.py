"""Multi-token probes (icml25.sae_probing.multitoken) and MiniLM's token states."""

import numpy as np
import pytest
from icml25 import minilm
from icml25.sae_probing import multitoken as mt
from icml25.sae_probing import train_sae
from sklearn.metrics import roc_auc_score


def ragged(lengths, width=8, seed=0):
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    return rng.normal(size=(offsets[-1], width)).astype(np.float32), offsets


def planted(n=160, width=16, seed=0):
    """Texts of 6 to 12 noise tokens; in class 1, one random token carries a fixed direction.

    A mean over tokens dilutes the signal by the text's length; attention can find the token.
    """
    rng = np.random.default_rng(seed)
    lengths = rng.integers(6, 13, size=n)
    states, offsets = ragged(lengths, width, seed)
    y = np.arange(n) % 2
    marker = np.zeros(width, np.float32)
    marker[0] = 4.0
    for i in np.flatnonzero(y):
        states[offsets[i] + rng.integers(1, lengths[i])] += marker
    return states, offsets, y


def test_fired_any_is_the_max_over_tokens_after_the_first():
    states, offsets = ragged([3, 4, 2], width=8)
    sae, _ = train_sae(states, n_latents=16, k=2, epochs=1, seed=0)
    fired = sae.codes(states) > 0
    out = mt.fired_any(sae, states, offsets)
    assert out.shape == (3, 16)
    for i in range(3):
        expect = fired[offsets[i] + 1:offsets[i + 1]].any(0)
        np.testing.assert_array_equal(out[i], expect.astype(np.float32))


def test_padded_lays_out_the_tokens_without_the_first():
    states, offsets = ragged([3, 5], width=4)
    out = mt.padded(states, offsets)
    assert out.shape == (2, 4, 4)
    np.testing.assert_array_equal(out[0, :2], states[1:3])
    assert not out[0, 2:].any()
    np.testing.assert_array_equal(out[1], states[4:8])
    assert mt.padded(states, offsets, skip_first=False).shape == (2, 5, 4)


def test_ragged_inputs_are_checked():
    states, offsets = ragged([3, 4])
    with pytest.raises(ValueError, match="offsets"):
        mt.padded(states, offsets[:-1])
    with pytest.raises(ValueError, match="at least 2"):
        mt.padded(states, np.array([0, 1, 7]))
    with pytest.raises(ValueError, match="tokens, width"):
        mt.padded(states.ravel(), offsets)


def test_top_latents_keeps_the_largest_class_mean_differences():
    X = np.array([[1, 0, 1, 0], [1, 0, 0, 0], [0, 1, 1, 0], [0, 1, 0, 1]], float)
    y = np.array([1, 1, 0, 0])
    sel = mt.TopLatents(k=2).fit(X, y)
    assert sorted(sel.columns_.tolist()) == [0, 1]
    np.testing.assert_array_equal(sel.transform(X), X[:, sel.columns_])
    with pytest.raises(ValueError, match="k must lie"):
        mt.TopLatents(k=5).fit(X, y)
    with pytest.raises(ValueError, match="both classes"):
        mt.TopLatents(k=1).fit(X, np.ones(4, int))


def test_attention_finds_the_planted_token_that_a_mean_dilutes():
    states, offsets, y = planted(n=300)
    X = mt.padded(states, offsets).reshape(len(y), -1)
    train, test = np.arange(len(y)) < 200, np.arange(len(y)) >= 200
    probe = mt.AttentionProbe(width=16, steps=300, lr=0.05, seed=0).fit(X[train], y[train])
    auc_attention = roc_auc_score(y[test], probe.predict_proba(X[test])[:, 1])
    # at q = 0 the probe is a mean-pooled linear probe: train it with the query frozen at 0
    mean = np.add.reduceat(states, offsets[:-1] + 1, axis=0) / (np.diff(offsets) - 1)[:, None]
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(max_iter=1000).fit(mean[train], y[train])
    auc_mean = roc_auc_score(y[test], lr.predict_proba(mean[test])[:, 1])
    assert auc_attention > 0.9 and auc_attention > auc_mean + 0.1
    weights = np.abs(probe.q_.numpy())
    assert weights.argmax() == 0  # the query looks along the planted direction


def test_attention_probe_is_deterministic_and_checks_its_input():
    states, offsets, y = planted(n=40)
    X = mt.padded(states, offsets).reshape(len(y), -1)
    a = mt.AttentionProbe(width=16, steps=20, seed=3).fit(X, y).predict_proba(X)
    b = mt.AttentionProbe(width=16, steps=20, seed=3).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a.sum(1), 1.0)
    with pytest.raises(ValueError, match="T \\* 16"):
        mt.AttentionProbe(width=16).fit(X[:, :-1], y)
    with pytest.raises(ValueError, match="both classes"):
        mt.AttentionProbe(width=16).fit(X, np.zeros(len(y), int))
    empty = X.copy()
    empty[0] = 0
    with pytest.raises(ValueError, match="at least one token"):
        mt.AttentionProbe(width=16).fit(empty, y)


def test_train_split_is_balanced_and_seeded():
    y = np.arange(100) % 2
    a = mt.train_split(y, 40, seed=1)
    assert len(a) == 40 and y[a].sum() == 20
    np.testing.assert_array_equal(a, mt.train_split(y, 40, seed=1))
    assert not np.array_equal(a, mt.train_split(y, 40, seed=2))
    with pytest.raises(ValueError, match="even"):
        mt.train_split(y, 41)


def test_multitoken_results_reports_every_probe_on_every_data_set():
    states, offsets, y = planted(n=120, width=16)
    dataset = np.repeat(["a", "b"], 60)
    res = mt.multitoken_results(states, offsets, dataset, y, seed=0,
                                sae_sizes={"n_latents": 256, "k": 4, "epochs": 1}, n_train=40)
    assert len(res) == 2 * len(mt.PROBES)
    assert set(res.probe) == set(mt.PROBES) and set(res.dataset) == {"a", "b"}
    assert res.test_auc.between(0, 1).all()
    # the planted token is found by attention, diluted by the mean
    auc = res.set_index(["dataset", "probe"]).test_auc
    assert min(auc["a", "attention"], auc["b", "attention"]) > 0.8
    with pytest.raises(ValueError, match="one entry per text"):
        mt.multitoken_results(states, offsets, dataset[:-1], y, seed=0)


def test_committed_measurements_cover_the_plan():
    res = mt.load_results()
    assert sorted(set(res.seed)) == list(mt.SEEDS)
    assert set(res.probe) == set(mt.PROBES)
    assert res.dataset.nunique() == 20
    assert res.test_auc.between(0, 1).all()
    assert res.attrs["layer"] == mt.LAYER and res.attrs["n_train"] == mt.N_TRAIN


def test_token_states_are_the_tokens_of_each_text():
    texts = ["a short text", "a somewhat longer text with more words in it", "x"]
    states, offsets = minilm.token_states(texts, layer=3, max_tokens=8)
    lengths = np.diff(offsets)
    assert lengths.tolist()[2] == 3 and lengths[1] == 8 and lengths[0] == 5
    assert states.shape == (offsets[-1], minilm.WIDTH)
    # the mean of a text's token states is its mean-pooled hidden state
    pooled = minilm.hidden_states(texts, (3,), max_tokens=8)[0]
    for i in range(3):
        np.testing.assert_allclose(states[offsets[i]:offsets[i + 1]].mean(0), pooled[i],
                                   atol=1e-5)
    with pytest.raises(ValueError, match="0..6"):
        minilm.token_states(texts, layer=7)
