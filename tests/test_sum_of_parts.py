"""Sum-of-Parts: completeness, selector, masks, determinism, errors, the bound."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml25 import sum_of_parts as sp
from icml25.common.stats import bootstrap_ci

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def motif():
    return sp.two_motif_xor(64, seed=0)


@pytest.fixture(scope="module")
def backbone():
    return sp.MLPBackbone(64, 2, hidden=(16,), seed=0)


def sop_model(backbone, **kw):
    return sp.SumOfParts(backbone, (8, 8), 2, n_groups=kw.pop("n_groups", 8), **kw)


# -------------------- the model
@pytest.mark.parametrize("straight_through", [False, True])
def test_attributions_sum_to_the_logits(motif, backbone, straight_through):
    model = sop_model(backbone, straight_through=straight_through, seed=1)
    out = model(torch.as_tensor(motif.X))
    assert torch.equal(out.attributions.sum(-1), out.logits)
    terms = out.weights * out.scale[:, None] * out.group_logits.transpose(1, 2)
    expected = terms.sum(-1)
    assert torch.allclose(out.logits, expected, atol=1e-6)


def test_sparsemax_weights_are_a_sparse_distribution(motif, backbone):
    model = sop_model(backbone, sel_scale=20.0, seed=2)
    w = model(torch.as_tensor(motif.X)).weights.detach()
    assert torch.all(w >= 0)
    assert torch.allclose(w.sum(-1), torch.ones(w.shape[:2]), atol=1e-5)
    assert (w == 0).float().mean() > 0.2  # sparsemax, not softmax: exact zeros


@settings(max_examples=25, deadline=None)
@given(k=st.floats(0.05, 1.0), P=st.sampled_from([4, 16, 64]), seed=st.integers(0, 99))
def test_topk_masks_have_the_right_fraction(k, P, seed):
    g = torch.Generator().manual_seed(seed)
    attention = torch.rand(3, 5, P, generator=g).softmax(-1)
    hard, c = sp.topk_mask(attention, k)
    assert torch.all(hard.sum(-1) == max(1, round(k * P)))
    assert torch.all((c >= -1) & (c <= 1))
    kept = (attention * hard).sum(-1)
    assert torch.allclose(c, 2 * kept - 1)
    # the kept patches are the largest ones
    assert torch.all((attention * hard).amax(-1) == attention.amax(-1))


def test_model_masks_cover_k_of_the_patches(motif, backbone):
    out = sop_model(backbone, k=0.25, seed=3)(torch.as_tensor(motif.X))
    assert torch.all(out.masks.sum(-1) == 4)


def test_evenly_spaced_groups():
    assert sp.evenly_spaced(16, 8).tolist() == [0, 2, 4, 6, 9, 11, 13, 15]
    assert sp.evenly_spaced(5, 5).tolist() == [0, 1, 2, 3, 4]


def test_fixed_groups_and_frozen_backbone(motif, backbone):
    quadrants = np.zeros((4, 16), bool)
    for i in range(4):
        quadrants[i, [j for j in range(16) if (j // 8) * 2 + (j % 4) // 2 == i]] = True
    model = sop_model(backbone, fixed_groups=quadrants, n_groups=4)
    out = model(torch.as_tensor(motif.X))
    assert torch.equal(out.masks[0], torch.as_tensor(quadrants).float())
    assert torch.all(out.scale == 1)
    assert not any(p.requires_grad for p in model.backbone.parameters())


def test_additive_model_attributions_sum(motif):
    nam = sp.PerFeatureAdditive(64, 2, seed=0)
    x = torch.as_tensor(motif.X)
    assert torch.allclose(nam.attributions(x).sum(-1) + nam.bias, nam(x))


def test_determinism_given_seed():
    a, b = sp.two_motif_xor(50, seed=7), sp.two_motif_xor(50, seed=7)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
    losses = []
    for _ in range(2):
        bb = sp.MLPBackbone(64, 2, hidden=(8,), seed=4)
        losses.append(sp.train(bb, a.X, a.y, steps=5, seed=5, mask_patch=2))
    assert losses[0] == losses[1]
    models = [sop_model(sp.MLPBackbone(64, 2, hidden=(8,), seed=4), seed=6)
              for _ in "ab"]
    outs = [m(torch.as_tensor(a.X)).logits for m in models]
    assert torch.equal(outs[0], outs[1])


def test_train_many_in_two_processes_gives_the_weights_of_training_one_by_one(motif):
    bb = sp.MLPBackbone(64, 2, hidden=(8,), seed=4)
    sp.train(bb, motif.X, motif.y, steps=5, seed=5, mask_patch=2)
    runs = [(sop_model(bb, seed=s), motif.X, motif.y, dict(steps=20, seed=s, lr=1e-2))
            for s in range(3)]
    serial = [(m, sp.train(m, X, y, **kw)) for m, X, y, kw in
              [(sop_model(bb, seed=s), X, y, kw) for s, (_, X, y, kw) in enumerate(runs)]]
    parallel = sp.train_many(runs, n_jobs=2)
    for (m1, l1), (m2, l2) in zip(serial, parallel):
        assert l1 == l2
        assert all(torch.equal(p, q) for p, q in zip(m1.parameters(), m2.parameters()))


def test_training_sop_moves_only_its_own_parameters(motif, backbone):
    model = sop_model(backbone, seed=0)
    before = [p.clone() for p in backbone.parameters()]
    sp.train(model, motif.X, motif.y, steps=3, seed=0)
    assert all(torch.equal(p, q) for p, q in zip(before, backbone.parameters()))


# -------------------- data, metrics
def test_two_motif_xor_labels_and_motifs():
    d = sp.two_motif_xor(400, seed=1)
    assert np.array_equal(d.y, (d.a ^ d.b).astype(int))
    assert d.motif_patches.sum() == 4
    assert np.all(d.X[d.a, 0, 0:2, 0:4] >= 0.7) and np.all(d.X[~d.a, 0, 0:2, 0:4] < 0.3)
    assert 0.4 < d.y.mean() < 0.6


def test_purity_and_bootstrap():
    truth = np.array([1, 1, 0, 0], bool)
    assert sp.purity(np.array([[1, 1, 0, 0], [1, 0, 1, 1]], bool), truth).tolist() == [
        1.0, 1 / 3]
    mean, (lo, hi) = bootstrap_ci(np.arange(100.0), n_boot=2000, seed=0)
    assert mean == 49.5 and lo < 49.5 < hi and hi - lo < 25


def test_insertion_deletion_on_an_oracle():
    X = np.zeros((2, 1, 4, 4), np.float32)
    X[:, 0, :2, :2] = 1.0

    def proba(images):  # probability grows with the light in the top-left patch
        p = images[:, 0, :2, :2].mean((1, 2))
        return np.stack([1 - p, p], 1)

    good = np.array([[1.0, 0, 0, 0]] * 2)
    ins, dele = sp.insertion_deletion(proba, X, good, np.array([1, 1]), 2, steps=4)
    assert np.allclose(ins, 1) and np.allclose(dele, 0)
    ins_bad, _ = sp.insertion_deletion(proba, X, -good, np.array([1, 1]), 2, steps=4)
    assert ins_bad.mean() < ins.mean()


def test_posthoc_scores_shape(motif, backbone):
    for method in ("ig", "saliency", "ablation", "shap"):
        s = sp.posthoc_patch_scores(backbone, motif.X[:4], motif.y[:4], 2, method)
        assert s.shape == (4, 16) and np.isfinite(s).all()


def test_shapley_and_ig_patch_scores_are_exact_on_a_linear_model(motif):
    # for a linear model with a zero baseline every patch's Shapley value (whatever the
    # sampled orders) and its Integrated Gradients sum are its own term w_c . x_patch
    torch.manual_seed(0)
    linear = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 2))
    X, target = motif.X[:6], motif.y[:6]
    w = linear[1].weight.detach().numpy()[target]                          # (6, 64)
    grid = sp.patch_grid((8, 8), 2).reshape(16, 64)
    expected = np.einsum("nd,pd->np", w * X.reshape(6, 64), grid)
    shap = sp.posthoc_patch_scores(linear, X, target, 2, "shap", n_samples=3, seed=1)
    ig = sp.posthoc_patch_scores(linear, X, target, 2, "ig")
    assert np.allclose(shap / 4, expected, atol=1e-5)  # 4 pixels share each patch value
    assert np.allclose(ig, expected, atol=1e-4)
    again = sp.posthoc_patch_scores(linear, X, target, 2, "shap", n_samples=3, seed=1)
    assert np.array_equal(shap, again)


def test_top_patches_and_mask_patches_against_a_loop():
    rng = np.random.default_rng(0)
    X = rng.random((3, 1, 4, 4)).astype(np.float32)
    scores = rng.random((3, 4))
    keep = sp.top_patches(scores, 2)
    masked = sp.mask_patches(X, keep, 2)
    for i in range(3):
        best = set(np.argsort(scores[i])[-2:])
        assert set(np.flatnonzero(keep[i])) == best
        for p in range(4):
            r, c = divmod(p, 2)
            block = masked[i, 0, 2 * r:2 * r + 2, 2 * c:2 * c + 2]
            want = X[i, 0, 2 * r:2 * r + 2, 2 * c:2 * c + 2] if p in best else 0
            assert np.array_equal(block, np.zeros((2, 2)) + want)


def test_bootstrap_over_inits_and_images_matches_the_paired_bootstrap():
    rng = np.random.default_rng(1)
    a, b = rng.random(200), rng.random(200)
    # one initialisation each: the same draws as the image bootstrap of the differences
    est = sp.bootstrap_inits_images({"a": a[None], "b": b},
                                    {"d": lambda m: m["a"] - m["b"]},
                                    n_boot=2000, seed=3)["d"]
    ref = bootstrap_ci(a - b, n_boot=2000, seed=3)
    assert est.value == pytest.approx(ref.value)
    assert np.allclose(est.interval, ref.interval, atol=1e-10)


def test_bootstrap_over_inits_widens_with_the_spread_between_initialisations():
    rng = np.random.default_rng(2)
    images = rng.random(300) < 0.9
    same = np.stack([images] * 5).astype(float)
    spread = np.stack([images & (rng.random(300) < q) for q in (1, 1, 0.7, 1, 0.95)])
    narrow = sp.bootstrap_inits_images({"m": same}, n_boot=2000, seed=0)["m"]
    wide = sp.bootstrap_inits_images({"m": spread}, n_boot=2000, seed=0)["m"]
    assert narrow.value == pytest.approx(images.mean())
    width = {e: e.interval[1] - e.interval[0] for e in (narrow, wide)}
    assert width[wide] > 2 * width[narrow]
    assert spread.mean(1).min() <= wide.interval[0] <= wide.value <= wide.interval[1]


def test_sop_patch_scores_sum_to_the_logit(motif, backbone):
    out = sop_model(backbone, seed=0)(torch.as_tensor(motif.X[:5]))
    scores = sp.sop_patch_scores(out, motif.y[:5])
    logit = out.logits[np.arange(5), motif.y[:5]].detach().numpy()
    assert np.allclose(scores.sum(1), logit, atol=1e-5)


# -------------------- the bound
def test_per_feature_models_have_an_error_floor_that_groups_reach():
    X, y = sp.binomial_target(10)
    per_feature = sp.additive_fit_mse(X, y, [[i] for i in range(10)])
    groups = sp.additive_fit_mse(X, y, [[0, 1, 2, 3, 4], [3, 4, 5, 6, 7]])
    assert per_feature > 0.05 and groups < 1e-20
    # XOR of two bits: no additive model beats predicting the mean
    Xx = np.array(list(np.ndindex(2, 2)), float)
    yx = np.logical_xor(Xx[:, 0], Xx[:, 1]).astype(float)
    assert sp.additive_fit_mse(Xx, yx, [[0], [1]]) == pytest.approx(yx.var())
    assert sp.additive_fit_mse(Xx, yx, [[0, 1]]) < 1e-20


# -------------------- errors
@pytest.mark.parametrize("call, match", [
    (lambda: sp.two_motif_xor(0, seed=0), "n must be positive"),
    (lambda: sp.two_motif_xor(10, seed=0, noise=0.9), "noise"),
    (lambda: sp.patch_grid((8, 8), 3), "divide"),
    (lambda: sp.topk_mask(torch.ones(2, 4) / 4, 0.0), "fraction"),
    (lambda: sp.evenly_spaced(4, 6), "cannot keep"),
    (lambda: sp.purity(np.zeros((1, 4), bool), np.ones(4, bool)), "empty"),
    (lambda: sp.purity(np.ones((1, 3), bool), np.ones(4, bool)), "patches"),
    (lambda: bootstrap_ci([]), "non-empty"),
    (lambda: sp.additive_fit_mse(np.ones((3, 2)), np.ones(3), [[5]]), "outside"),
    (lambda: sp.additive_fit_mse(np.full((3, 2), 2.0), np.ones(3), [[0]]), "0/1"),
    (lambda: sp.binomial_target(4), "inside range"),
    (lambda: sp.top_patches(np.ones((2, 4)), 5), "n_keep"),
    (lambda: sp.mask_patches(np.ones((2, 1, 4, 4)), np.ones((2, 3)), 2), "keep must"),
    (lambda: sp.bootstrap_inits_images({}), "non-empty"),
    (lambda: sp.bootstrap_inits_images({"a": np.ones((2, 3)), "b": np.ones(4)}),
     "same n"),
    (lambda: sp.bootstrap_inits_images({"a": [np.nan]}), "finite"),
])
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_model_input_errors(backbone):
    with pytest.raises(ValueError, match="n_candidates"):
        sp.SumOfParts(backbone, (8, 8), 2, n_candidates=20)
    with pytest.raises(ValueError, match="body"):
        sp.SumOfParts(torch.nn.Linear(64, 2), (8, 8), 2)
    with pytest.raises(ValueError, match="fixed_groups"):
        sp.SumOfParts(backbone, (8, 8), 2, fixed_groups=np.ones((3, 5), bool))
    model = sop_model(backbone)
    with pytest.raises(ValueError, match="x must be"):
        model(torch.zeros(2, 1, 6, 6))
    with pytest.raises(ValueError, match="method must"):
        sp.posthoc_patch_scores(backbone, np.zeros((1, 1, 8, 8), np.float32), [0], 2,
                                "x")
    with pytest.raises(ValueError, match="equal length"):
        sp.train(backbone, np.zeros((3, 1, 8, 8), np.float32), np.zeros(2, int),
                 steps=1, seed=0)
