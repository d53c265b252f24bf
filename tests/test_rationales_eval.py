"""Clinical rationales: detection scores, predicted lesions and the answers to questions."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml25 import rationales as R
from sklearn.metrics import average_precision_score, roc_auc_score

torch.set_num_threads(1)


# -------------------- detection: AP and AUROC against scikit-learn
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 40), st.booleans())
def test_ap_and_auroc_agree_with_sklearn(seed, n, ties):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.5
    y[0], y[1] = True, False
    s = rng.integers(0, 4, n) / 3 if ties else rng.random(n)
    assert R.auroc(s, y) == pytest.approx(roc_auc_score(y, s))
    assert R.average_precision(s, y) == pytest.approx(average_precision_score(y, s))


def test_ap_and_auroc_rows_are_resamples():
    rng = np.random.default_rng(1)
    s, y = rng.random((7, 30)), rng.random((7, 30)) < 0.4
    y[:, 0], y[:, 1] = True, False
    assert np.allclose(R.auroc(s, y), [roc_auc_score(b, a) for a, b in zip(s, y)])
    assert np.allclose(R.average_precision(s, y),
                       [average_precision_score(b, a) for a, b in zip(s, y)])


def test_perfect_and_reversed_rankings():
    y = np.array([1, 1, 0, 0, 0], bool)
    s = np.array([0.9, 0.8, 0.3, 0.2, 0.1])
    assert R.auroc(s, y) == 1.0 and R.average_precision(s, y) == 1.0
    assert R.auroc(-s, y) == 0.0
    assert R.average_precision(-s, y) == pytest.approx((1 / 4 + 2 / 5) / 2)
    assert R.auroc(np.zeros(5), y) == 0.5 and R.average_precision(np.zeros(5), y) == 0.4


def test_paired_gap_is_zero_for_the_same_scores_and_covers_a_clear_gain():
    rng = np.random.default_rng(2)
    y = rng.random(300) < 0.5
    good = y + rng.normal(0, 0.5, 300)
    poor = y + rng.normal(0, 2.0, 300)
    same = R.paired_gap(R.auroc, good, good, y, n_boot=300, seed=3)
    assert same.value == 0 and same.interval == (0.0, 0.0)
    gap = R.paired_gap(R.average_precision, good, poor, y, n_boot=500, seed=3)
    assert gap.interval[0] > 0 and gap.interval[0] < gap.value < gap.interval[1]


@pytest.mark.parametrize("call", [
    lambda: R.auroc([0.1, 0.2], [1, 1]),
    lambda: R.auroc([0.1, 0.2, 0.3], [1, 0]),
    lambda: R.average_precision([0.1, np.nan], [1, 0]),
    lambda: R.average_precision([0.1, 0.2], [2, 0]),
    lambda: R.paired_gap(R.auroc, np.ones((2, 3)), np.ones((2, 3)), np.eye(2, 3, dtype=bool)),
    lambda: R.presence_scores({"lesion_prob": np.ones((3, 3))}),
    lambda: R.lesion_components(np.ones((2, 3, 3))),
])
def test_bad_detection_input_raises(call):
    with pytest.raises(ValueError):
        call()


# -------------------- predicted lesions and answers
def test_lesion_components_separate_and_drop_small_pieces():
    m = np.zeros((8, 8), bool)
    m[0:3, 0:3] = True        # 9 pixels
    m[5:7, 5:7] = True        # 4 pixels
    m[0, 7] = True            # 1 pixel: dropped
    parts = R.lesion_components(m, min_pixels=3)
    assert [int(p.sum()) for p in parts] == [9, 4]
    assert R.lesion_components(np.zeros((8, 8), bool)) == []


def _oracle(data):
    """The true masks as predictions, and embeddings that name each lesion's concepts."""
    n, _, h, w = data.lesion_masks.shape
    e = np.zeros((n, len(R.TEXTS), h, w))
    e[:, len(R.CONCEPTS)] = 1.0
    for i, z in zip(*np.nonzero(data.attributes[:, :, 0] == 1)):
        a = data.attributes[i, z]
        vec = np.zeros(len(R.TEXTS))
        for g, v in (("location", z), ("margin", a[1]), ("texture", a[2]),
                     ("intensity", a[3]), ("diffusion", 0)):
            vec[R.GROUP_START[g] + v] = 1
        e[i][:, data.lesion_masks[i, z]] = (vec / np.linalg.norm(vec))[:, None]
    pred = {"lesion": data.lesion, "lesion_prob": data.lesion.astype(float)}
    return e, np.eye(len(R.TEXTS)), pred


def test_answers_of_an_oracle_are_right_and_a_blind_model_is_wrong():
    data = R.make_phantoms(40, 24, seed=7)
    e, t, pred = _oracle(data)
    ans = R.answer_questions(e, t, pred, data)
    has = data.n_lesions > 0
    assert len(ans["location"]) == has.sum() and len(ans["score"]) == len(data)
    for q in ("present", "location", "score"):
        assert (ans[q] == ans[f"truth_{q}"]).all(), q
    assert set(ans["truth_location"]) == {0, 1, 2}   # PZ, TZ and both occur
    blind = {"lesion": np.zeros_like(data.lesion),
             "lesion_prob": np.zeros(data.lesion.shape)}
    ans = R.answer_questions(e, t, blind, data)
    assert not ans["present"].any() and (ans["score"] == 1).all()
    # presence scores rank the images that hold a lesion first
    assert R.auroc(R.presence_scores(pred), has) == 1.0
    with pytest.raises(ValueError):
        R.answer_questions(e[:3], t, pred, data)


def test_every_committed_seed_loads():
    text = R.load_concept_embeddings()
    x = torch.as_tensor(R.standardise(R.make_phantoms(2, 32, seed=1).images))
    for seed in range(5):
        models, _ = R.load_models(seed, text)
        for model, _ in models.values():
            with torch.no_grad():
                out = model(x)
            assert all(torch.isfinite(o).all() for o in out)
