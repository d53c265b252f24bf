"""Features are fate beyond the linear model: tasks on the digits, batched MLP training, the
ridge read-out, and the whole experiment (shapes, determinism, overlap 0 against 1)."""

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from icml25 import transfer_theory as tt


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """Tiny batched networks gain nothing from threads, and on a loaded machine torch's
    thread pool makes them many times slower; the notebooks fix one thread the same way."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# ----------------------------------------------------------------------------- tasks


def test_images_are_the_bundled_digits_standardised():
    X, labels = tt.load_digit_images()
    assert X.shape == (1797, 64) and labels.shape == (1797,)
    assert set(np.unique(labels)) == set(range(10))
    np.testing.assert_allclose(X.mean(0), 0, atol=1e-12)
    assert X.std() == pytest.approx(1.0)


def test_task_classes_share_exactly_q_k_in_place_and_are_nested():
    overlaps = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    target, sources = tt.digit_task_classes(np.random.default_rng(3), 4, overlaps)
    assert target.shape == (4,) and sources.shape == (5, 4)
    assert len(set(target)) == 4
    for q, row in zip(overlaps, sources):
        assert len(set(row)) == 4
        assert (row == target).sum() == round(4 * q)          # same output position
        assert len(set(row) & set(target)) == round(4 * q)    # and no other class shared
    np.testing.assert_array_equal(sources[-1], target)
    assert not set(sources[0]) & set(target)
    # nested: a larger overlap only swaps a replacement for the target's class
    assert all(((sources[i] != sources[i + 1]).sum() == 1) for i in range(4))


def test_detection_labels_give_cosine_q_on_the_images():
    """<f_s, f_t> = q ||f_t||^2 and ||f_s|| = ||f_t|| on any set of images, since class
    indicators of different classes never fire together: overlap 0 orthogonal, 1 equal."""
    _, labels = tt.load_digit_images()
    overlaps = np.array([0.0, 0.5, 1.0])
    target, sources = tt.digit_task_classes(np.random.default_rng(0), 4, overlaps)
    Yt = tt.detection_labels(labels, target)
    Ys = tt.detection_labels(labels[None], sources)
    assert Yt.shape == (1797, 4) and Ys.shape == (3, 1797, 4)
    assert set(np.unique(Yt)) == {0.0, 1.0}
    np.testing.assert_array_equal(Yt.sum(1), np.isin(labels, target))
    inner = (Ys * Yt).sum((-1, -2))
    np.testing.assert_array_equal(inner[[0, 2]], [0.0, (Yt**2).sum()])
    cosine = inner / np.sqrt((Ys**2).sum((-1, -2)) * (Yt**2).sum())
    np.testing.assert_allclose(cosine, overlaps, atol=0.05)  # classes nearly balanced


# ----------------------------------------------------------------------------- learners


def test_ridge_readout_equals_sklearn_ridge_with_intercept():
    rng = np.random.default_rng(1)
    F = np.maximum(rng.standard_normal((2, 30, 6)), 0)
    Y = rng.standard_normal((2, 30, 3))
    W2, b2 = tt.ridge_readout(F, Y, 0.1)
    assert W2.shape == (2, 3, 6) and b2.shape == (2, 3)
    for b in range(2):
        Fc = F[b] - F[b].mean(0)
        alpha = 30 * 0.1 * np.trace(Fc.T @ Fc) / (30 * 6)
        ref = Ridge(alpha=alpha).fit(F[b], Y[b])
        np.testing.assert_allclose(W2[b], ref.coef_, atol=1e-10)
        np.testing.assert_allclose(b2[b], ref.intercept_, atol=1e-10)


def test_batched_training_is_independent_per_network_and_learns():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((3, 40, 5))
    Y = np.tanh(X[..., :2])
    start = tt.init_mlp(rng, 3, 5, 8, 2, 0.5)
    assert [p.shape for p in start] == [(3, 8, 5), (3, 8), (3, 2, 8), (3, 2)]
    together = tt.train_mlp(start, X, Y, steps=60, lr=0.02)
    alone = tt.train_mlp(tuple(p[1:2] for p in start), X[1:2], Y[1:2], steps=60, lr=0.02)
    for a, b in zip(together, alone):
        np.testing.assert_allclose(a[1:2], b, atol=1e-5)
    loss = [((tt.mlp_forward(p, X) - Y) ** 2).sum(-1).mean(-1) for p in (start, together)]
    assert np.all(loss[1] < 0.5 * loss[0])
    assert tt.mlp_features(together, X).shape == (3, 40, 8)
    assert np.all(tt.mlp_features(together, X) >= 0)
    # zero steps return the start
    for a, b in zip(tt.train_mlp(start, X, Y, steps=0, lr=0.02), start):
        np.testing.assert_allclose(a, b, atol=1e-6)


# ----------------------------------------------------------------------------- experiment

SMALL = dict(repetitions=2, hidden=16, pretrain_steps=150, steps=40, n_source=600,
             n_test=300)


@pytest.fixture(scope="module")
def small_run():
    return tt.simulate_digits_transfer([0.0, 1.0], [10, 40], seed=5, **SMALL)


def test_experiment_shapes_and_determinism(small_run):
    sim = small_run
    for name in tt.LEARNERS:
        assert sim.risk[name].shape == (2, 2, 2)
        assert np.all(np.isfinite(sim.risk[name])) and np.all(sim.risk[name] >= 0)
    # scratch does not depend on the overlap: one training per (n, repetition)
    np.testing.assert_array_equal(sim.risk["scratch"][0], sim.risk["scratch"][1])
    assert sim.gain("linear").shape == (2, 2, 2)
    for field in (sim.feature_floor, sim.source_distance, sim.pretrain_risk):
        assert field.shape == (2, 2)
    again = tt.simulate_digits_transfer([0.0, 1.0], [10, 40], seed=5, **SMALL)
    for name in tt.LEARNERS:
        np.testing.assert_array_equal(again.risk[name], sim.risk[name])
    other = tt.simulate_digits_transfer([0.0, 1.0], [10, 40], seed=6, **SMALL)
    assert not np.allclose(other.risk["scratch"], sim.risk["scratch"])


def test_overlap_one_against_zero(small_run):
    """At q = 1 the source is the target's own task: the pretrained network starts near it
    (||f_t - f_s||^2 well below 1, and its features hold the target); at q = 0 the source's
    function is orthogonal to the target's, about 2 away (2 (1 - q) with q = 0), and the
    features leave more of the target out. Fine-tuning then wins with 10 images at q = 1 and
    loses at q = 0."""
    sim = small_run
    assert np.all(sim.source_distance[1] < 0.6)
    assert np.all(sim.source_distance[0] > 1.5)
    assert np.all(sim.feature_floor[1] < sim.feature_floor[0])
    assert np.all(sim.pretrain_risk < 0.6)
    assert np.all(sim.gain("finetune")[1, 0] > 0)
    assert np.all(sim.gain("finetune")[0, 0] < 0)


def test_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="multiple of 1/k"):
        tt.digit_task_classes(rng, 4, [0.3])
    with pytest.raises(ValueError, match="k"):
        tt.digit_task_classes(rng, 6, [0.0])
    with pytest.raises(ValueError, match="overlaps"):
        tt.digit_task_classes(rng, 4, [1.25])
    with pytest.raises(ValueError, match="pool"):
        tt.simulate_digits_transfer([0.0], [1000], n_source=800, n_test=400)
    with pytest.raises(ValueError, match="ns"):
        tt.simulate_digits_transfer([0.0], [1])
    with pytest.raises(ValueError, match="lam"):
        tt.ridge_readout(np.ones((1, 4, 2)), np.ones((1, 4, 1)), 0.0)
    with pytest.raises(ValueError, match="scale"):
        tt.init_mlp(rng, 1, 3, 4, 2, 0.0)
    start = tt.init_mlp(rng, 2, 3, 4, 2, 0.1)
    with pytest.raises(ValueError, match="X and Y"):
        tt.train_mlp(start, np.ones((2, 5, 3)), np.ones((2, 4, 2)), steps=1, lr=0.1)
    with pytest.raises(ValueError, match="params"):
        tt.train_mlp(start, np.ones((2, 5, 4)), np.ones((2, 5, 2)), steps=1, lr=0.1)
    with pytest.raises(ValueError, match="learner"):
        tt.DigitsSimulation(np.zeros(1), np.ones(1), {}, None, None, None).gain("ridge")
