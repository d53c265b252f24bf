"""Sum-of-Parts on tokens: the committed features, masking, the text models, "-F" over
tokens, and the image model unchanged by the shared code."""

import numpy as np
import pytest
import torch
from icml25 import sum_of_parts as sp
from icml25.sum_of_parts import text

torch.set_num_threads(1)
T, D = 6, 4  # tokens, features before the presence feature


@pytest.fixture(scope="module")
def inputs():
    rng = np.random.default_rng(0)
    present = np.arange(T)[None] < rng.integers(1, T + 1, size=(24, 1))
    return sp.token_inputs(rng.normal(size=(24, T, D)).astype(np.float32), present)


@pytest.fixture(scope="module")
def backbone():
    return sp.TokenBackbone(D + 1, 2, hidden=8, width=8, seed=0)


# -------------------- data
def test_token_inputs_append_presence_and_zero_absent_tokens(inputs):
    assert inputs.shape == (24, T, D + 1) and inputs.dtype == np.float32
    present = inputs[..., -1]
    assert set(np.unique(present)) <= {0.0, 1.0}
    assert np.all(inputs[present == 0] == 0)
    assert np.all(np.abs(inputs[present == 1, :-1]).sum(-1) > 0)
    with pytest.raises(ValueError, match="features must be"):
        sp.token_inputs(np.zeros((2, 3, 4)), np.ones((2, 4), bool))


def test_embedding_axes_are_orthonormal_principal_axes():
    rng = np.random.default_rng(1)
    W = rng.normal(size=(200, 5)) * np.array([5.0, 3.0, 1.0, 0.5, 0.1])
    mean, axes = text.embedding_axes(W, 3)
    assert np.allclose(axes @ axes.T, np.eye(3), atol=1e-10)
    assert np.allclose(mean, W.mean(0))
    # the top axis is the direction of largest variance: here the first coordinate
    assert abs(axes[0, 0]) > 0.99
    # signs fixed by the data: the largest entry of each axis is positive
    assert np.all(axes[np.arange(3), np.abs(axes).argmax(1)] > 0)
    _, flipped = text.embedding_axes(-W, 3)
    assert np.allclose(flipped, axes)
    with pytest.raises(ValueError):
        text.embedding_axes(W, 6)


def test_committed_tokens_match_the_declared_layout():
    data = sp.load_tokens()
    n = len(data.y)
    assert data.X.shape == (n, text.N_TOKENS, text.N_AXES + 1) and n == 5000
    assert set(np.unique(data.y)) == {0, 1} and abs(data.y.mean() - 0.5) < 0.01
    present = data.X[..., -1] == 1
    assert present[:, 0].all()  # every text has a first token
    assert np.all((data.ids != 0) == present)
    # padding comes last: present tokens form a prefix
    assert np.all(np.diff(present.astype(int), axis=1) <= 0)
    words = data.words(0)
    assert len(words) == present[0].sum() and all(isinstance(w, str) for w in words)
    bracketed = data.words(0, keep=np.zeros(text.N_TOKENS, bool))
    assert all(w.startswith("[") for w in bracketed)


# -------------------- models
def test_backbone_ignores_absent_tokens_and_padding(inputs, backbone):
    x = torch.as_tensor(inputs[:1])
    n_present = int(x[0, :, -1].sum())
    # the same tokens, padded to twice the length, give the same output
    longer = torch.cat([x, torch.zeros(1, T, D + 1)], 1)
    assert torch.allclose(backbone(x), backbone(longer), atol=1e-6)
    # the mean pooling does not depend on how many tokens are repeated
    if n_present >= 1:
        one = x[:, :1]
        twice = torch.cat([one, one], 1)
        assert torch.allclose(backbone(one), backbone(twice), atol=1e-6)
    with pytest.raises(ValueError, match="token inputs"):
        backbone(torch.zeros(2, T * (D + 1)))


def test_backbone_is_not_additive_over_tokens(backbone):
    """f(a, b) - f(a) - f(b) + f() != 0 for some pair: tokens interact."""
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(2, 50, D)).astype(np.float32)
    one = np.ones((50, 1), np.float32)
    zero = np.zeros((50, 1, D + 1), np.float32)
    ta = np.concatenate([a, one], -1)[:, None]
    tb = np.concatenate([b, one], -1)[:, None]
    f = lambda x: backbone(torch.as_tensor(x)).detach()[:, 1]
    both = f(np.concatenate([ta, tb], 1))
    single = f(np.concatenate([ta, zero], 1)) + f(np.concatenate([zero, tb], 1))
    interaction = both - single + f(np.concatenate([zero, zero], 1))
    assert interaction.abs().max() > 1e-3


def test_per_token_additive_sums_token_terms(inputs):
    model = sp.PerTokenAdditive(D + 1, 3, hidden=5, seed=1)
    x = torch.as_tensor(inputs)
    terms = model.attributions(x)
    assert terms.shape == (24, 3, T)
    assert torch.allclose(terms.sum(-1) + model.bias, model(x))
    absent = x[..., -1] == 0
    assert torch.all(terms.transpose(1, 2)[absent] == 0)
    # additive: a token's term does not depend on the other tokens
    y = x.clone()
    y[:, 1:] = 0
    assert torch.equal(model.attributions(y)[..., 0], terms[..., 0])


def test_token_sop_sums_to_logits_and_masks_whole_tokens(inputs, backbone):
    model = sp.TokenSumOfParts(backbone, T, D + 1, n_groups=4, k=0.5, seed=2)
    x = torch.as_tensor(inputs)
    out = model(x)
    assert torch.allclose(out.attributions.sum(-1), out.logits)
    assert out.masks.shape == (24, 4, T)
    assert torch.all(out.masks.sum(-1) == round(0.5 * T))
    masked = model._masked(x, out.masks)
    kept = out.masks.bool()
    assert torch.all(masked[~kept] == 0)
    assert torch.equal(masked[kept], x[:, None].expand(-1, 4, -1, -1)[kept])
    # the group logits are the backbone's on the masked texts
    expected = backbone(masked.flatten(0, 1)).reshape(24, 4, 2)
    assert torch.allclose(out.group_logits, expected, atol=1e-6)
    with pytest.raises(ValueError, match="token"):
        model(torch.zeros(2, T + 1, D + 1))


def test_token_sop_blur_smooths_along_the_text(inputs, backbone):
    model = sp.TokenSumOfParts(backbone, T, D + 1, n_groups=2, blur=True, seed=3)
    logits = torch.zeros(1, 1, T)
    logits[0, 0, 2] = 4.0
    blurred = model._blur(logits)
    assert torch.allclose(blurred[0, 0, 1:4], torch.tensor([1.0, 2.0, 1.0]))
    assert torch.allclose(blurred.sum(), logits.sum())


def test_fixed_contiguous_groups(inputs, backbone):
    groups = sp.contiguous_groups(T, 3)
    assert groups.tolist() == [[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]]
    with pytest.raises(ValueError, match="divide"):
        sp.contiguous_groups(T, 4)
    model = sp.TokenSumOfParts(backbone, T, D + 1, fixed_groups=groups, n_groups=2)
    out = model(torch.as_tensor(inputs))
    assert torch.equal(out.masks[0], torch.as_tensor(groups, dtype=torch.float32))
    assert torch.all(out.scale == 1)


def test_training_reduces_the_loss_and_token_masking_is_seeded(inputs):
    rng = np.random.default_rng(4)
    y = (inputs[:, :, 0] * inputs[:, :, -1]).sum(1) > 0
    y = y.astype(np.int64)
    runs = []
    for _ in range(2):
        model = sp.TokenBackbone(D + 1, 2, hidden=8, width=8, seed=5)
        runs.append(sp.train(model, inputs, y, steps=60, seed=6, batch_size=16,
                             mask_tokens=True, lr=1e-2))
    assert runs[0] == runs[1]
    assert np.mean(runs[0][-10:]) < np.mean(runs[0][:10])
    with pytest.raises(ValueError, match="mask_tokens"):
        sp.train(sp.MLPBackbone(64, 2), rng.random((4, 1, 8, 8), np.float32),
                 np.zeros(4, np.int64), steps=1, seed=0, mask_tokens=True)


# -------------------- "-F" over tokens
def test_posthoc_token_scores_sum_to_the_output_difference(inputs, backbone):
    x = torch.as_tensor(inputs[:8])
    target = backbone(x).argmax(1)
    for method in ("ablation", "shap"):
        scores = sp.posthoc_token_scores(backbone, x, target, method, n_samples=8,
                                         seed=0)
        assert scores.shape == (8, T)
        # absent tokens change nothing when removed
        assert np.allclose(scores[inputs[:8, :, -1] == 0], 0, atol=1e-6)
    # Shapley values and IG are complete: they sum to f(x) - f(0)
    full = backbone(x)[torch.arange(8), target]
    empty = backbone(torch.zeros_like(x))[torch.arange(8), target]
    shap = sp.posthoc_token_scores(backbone, x, target, "shap", n_samples=8, seed=0)
    assert np.allclose(shap.sum(1), (full - empty).detach().numpy(), atol=1e-4)
    ig = sp.posthoc_token_scores(backbone, x, target, "ig")
    assert np.allclose(ig.sum(1), (full - empty).detach().numpy(), atol=5e-2)
    with pytest.raises(ValueError, match="target"):
        sp.posthoc_token_scores(backbone, x, target[:3])
    with pytest.raises(ValueError, match="method"):
        sp.posthoc_token_scores(backbone, x, target, "lime")


def test_mask_tokens_keeps_exactly_the_chosen_tokens(inputs):
    keep = sp.top_patches(np.arange(T)[None].repeat(len(inputs), 0), 2)
    masked = sp.mask_tokens(inputs, keep)
    assert np.array_equal(masked[:, -2:], inputs[:, -2:])
    assert np.all(masked[:, :-2] == 0)
    with pytest.raises(ValueError, match="keep"):
        sp.mask_tokens(inputs, keep[:, :3])
