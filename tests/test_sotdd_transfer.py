"""The transfer experiment of chapter 11: the learner, the gain and the rank-correlation interval."""

import numpy as np
import pytest
from scipy import optimize, stats
from sklearn.linear_model import LogisticRegression

from icml25.sotdd_transfer import (accuracy, fit_softmax, load_mnist_8x8, spearman_bootstrap,
                                   transfer_gain)


def blobs(n, d=4, classes=3, seed=0, shift=0.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    X = rng.standard_normal((n, d)) + 1.5 * np.eye(d)[y % d] + shift
    return X, y


def centre(W):
    return W - W.mean(axis=1, keepdims=True)


def test_fit_softmax_from_zero_is_sklearns_logistic_regression():
    X, y = blobs(120, seed=1)
    ours = fit_softmax(X, y, 3, C=0.7)
    ref = LogisticRegression(C=0.7, tol=1e-12, max_iter=5000).fit(X, y)
    # softmax weights are defined up to a common shift per feature: compare centred columns
    np.testing.assert_allclose(centre(ours[:-1]), centre(ref.coef_.T), atol=1e-5)
    np.testing.assert_allclose(centre(ours[-1:]), centre(ref.intercept_[None]), atol=1e-5)


def test_fit_softmax_is_stationary_for_the_biased_objective():
    """At the optimum the gradient C X^T (P - Y) + (W - W0), intercepts unpenalised, is 0."""
    X, y = blobs(40, seed=2)
    W0 = np.random.default_rng(3).standard_normal((5, 3))
    W = fit_softmax(X, y, 3, start=W0, C=2.0)
    Xb = np.hstack([X, np.ones((len(X), 1))])
    Z = Xb @ W
    P = np.exp(Z - Z.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    grad = 2.0 * Xb.T @ (P - np.eye(3)[y])
    grad[:-1] += (W - W0)[:-1]
    assert np.abs(grad).max() < 1e-4


def test_weak_evidence_keeps_the_start():
    """As C -> 0 the data weigh nothing and the penalised weights stay at W0."""
    X, y = blobs(30, seed=4)
    W0 = np.random.default_rng(5).standard_normal((5, 3))
    W = fit_softmax(X, y, 3, start=W0, C=1e-8)
    np.testing.assert_allclose(W[:-1], W0[:-1], atol=1e-5)


def test_transfer_helps_from_the_same_domain_and_hurts_from_an_inverted_one():
    Xs, ys = blobs(600, d=6, classes=4, seed=6)
    source = fit_softmax(Xs, ys, 4)
    Xt, yt = blobs(400, d=6, classes=4, seed=7)
    few, rest = np.arange(12), np.arange(12, 400)
    gain_same, fine, scratch = transfer_gain(source, Xt[few], yt[few], Xt[rest], yt[rest])
    assert gain_same == pytest.approx(fine - scratch)
    gain_flip, _, _ = transfer_gain(source, -Xt[few], yt[few], -Xt[rest], yt[rest])
    assert gain_same > 0 > gain_flip


def test_accuracy_counts_argmax_hits():
    W = np.array([[1.0, -1.0], [0.0, 0.0]])  # score_0 = x, score_1 = -x
    assert accuracy(W, np.array([[1.0], [-2.0], [3.0]]), np.array([0, 1, 1])) == pytest.approx(2 / 3)


def test_spearman_bootstrap_value_and_interval():
    rng = np.random.default_rng(8)
    x = rng.standard_normal(40)
    y = -x + 0.5 * rng.standard_normal(40)
    est = spearman_bootstrap(x, y, n_boot=2000, seed=9)
    assert est.value == pytest.approx(stats.spearmanr(x, y).statistic)
    assert est.low <= est.value <= est.high < 0
    # monotone transformations leave ranks, and so the whole estimate, unchanged
    again = spearman_bootstrap(np.exp(x), y**3, n_boot=2000, seed=9)
    assert again.value == pytest.approx(est.value)
    assert again.interval == pytest.approx(est.interval)
    # the interval roughly covers the Fisher-z interval's width for this m
    fisher = np.tanh(np.arctanh(est.value) + np.array([-1, 1]) * 1.96 * np.sqrt(1.06 / 37))
    assert 0.4 < (est.high - est.low) / (fisher[1] - fisher[0]) < 2.5


def test_mnist_8x8_is_offline_and_on_the_digits_scale():
    images, labels = load_mnist_8x8()
    assert images.shape == (5000, 8, 8) and labels.shape == (5000,)
    assert np.bincount(labels).tolist() == [500] * 10
    assert images.min() >= 0 and images.max() <= 1 and images.max() > 0.9


@pytest.mark.parametrize("bad", [
    {"X": np.ones((3, 2)), "y": np.array([0, 1, 5]), "n_classes": 3},
    {"X": np.ones((3, 2)), "y": np.array([0, 1]), "n_classes": 3},
    {"X": np.ones(3), "y": np.array([0, 1, 2]), "n_classes": 3},
    {"X": np.array([[np.nan, 1.0]]), "y": np.array([0]), "n_classes": 2},
])
def test_bad_input_is_refused(bad):
    with pytest.raises(ValueError):
        fit_softmax(bad["X"], bad["y"], bad["n_classes"])


def test_bad_start_and_C_are_refused():
    X, y = blobs(10)
    with pytest.raises(ValueError):
        fit_softmax(X, y, 3, start=np.zeros((4, 3)))
    with pytest.raises(ValueError):
        fit_softmax(X, y, 3, C=0.0)
    with pytest.raises(ValueError):
        spearman_bootstrap([1.0, 2.0], [2.0, 1.0])


def test_scipy_check_grad_of_the_objective():
    """The analytic gradient matches finite differences (through a tiny problem)."""
    X, y = blobs(8, d=2, classes=2, seed=10)
    W0 = np.zeros((3, 2))

    def loss(w):
        W = w.reshape(3, 2)
        Xb = np.hstack([X, np.ones((8, 1))])
        Z = Xb @ W
        lse = np.log(np.exp(Z).sum(1))
        return np.sum(lse - Z[np.arange(8), y]) + 0.5 * np.sum((W - W0)[:-1] ** 2)

    W = fit_softmax(X, y, 2)
    grad = optimize.approx_fprime(W.ravel(), loss, 1e-7)
    assert np.abs(grad).max() < 1e-4


def test_jitter_keeps_intensities_and_moves_by_at_most_the_shift():
    from icml25.sotdd_transfer import jitter

    rng = np.random.default_rng(0)
    images = rng.uniform(0, 1, (50, 8, 8))
    out = jitter(images, 0.5, 0.5, np.random.default_rng(1))
    assert out.shape == images.shape and out.min() >= 0 and out.max() <= 1
    # no magnitude and no shift: the images as they were (up to rounding)
    np.testing.assert_allclose(jitter(images, 0.0, 0.0, rng, shift=0), images, atol=1e-15)
    # a shift only moves pixels: a single bright pixel lands within one pixel of its place
    one = np.zeros((20, 8, 8))
    one[:, 4, 4] = 1.0
    moved = jitter(one, 0.0, 0.0, np.random.default_rng(2), shift=1)
    rows, cols = np.nonzero(moved.sum(axis=0))
    assert set(rows) <= {3, 4, 5} and set(cols) <= {3, 4, 5}
    assert np.allclose(moved.sum(axis=(1, 2)), 1.0)
    # the same generator state, the same draw
    np.testing.assert_array_equal(jitter(images, 0.3, 0.7, np.random.default_rng(5)),
                                  jitter(images, 0.3, 0.7, np.random.default_rng(5)))


@pytest.mark.parametrize("args, message", [
    ((np.zeros((2, 8)), 0.5, 0.5), "shape"),
    ((np.full((2, 8, 8), 2.0), 0.5, 0.5), r"\[0, 1\]"),
    ((np.zeros((2, 8, 8)), 1.5, 0.5), "brightness"),
    ((np.zeros((2, 8, 8)), 0.5, -0.1), "contrast"),
])
def test_jitter_refuses_bad_input(args, message):
    from icml25.sotdd_transfer import jitter

    with pytest.raises(ValueError, match=message):
        jitter(*args, np.random.default_rng(0))
    with pytest.raises(TypeError, match="Generator"):
        jitter(np.zeros((2, 8, 8)), 0.1, 0.1, 0)


def test_pretrain_features_is_a_frozen_deterministic_map():
    from icml25.sotdd_transfer import pretrain_features

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 6))
    y = (X[:, 0] > 0).astype(int)
    phi = pretrain_features(X, y, hidden=8, seed=3, max_iter=50)
    F = phi(X)
    assert F.shape == (120, 8) and F.min() >= 0
    np.testing.assert_array_equal(F, pretrain_features(X, y, hidden=8, seed=3, max_iter=50)(X))
    with pytest.raises(ValueError, match="6 features"):
        phi(X[:, :3])
    with pytest.raises(ValueError, match="shape"):
        pretrain_features(X, y[:5])
    with pytest.raises(ValueError, match="finite"):
        pretrain_features(np.full((4, 2), np.nan), np.array([0, 1, 0, 1]))
