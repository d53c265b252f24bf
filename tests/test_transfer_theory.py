"""Features are fate: closed forms, training end points, simulations against theory, bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from sklearn.linear_model import Ridge

from icml25 import transfer_theory as tt
from icml25.transfer_theory import _relu_population_grads

gammas = st.floats(0.01, 3.0).filter(lambda g: abs(g - 1) > 1e-3)
angles = st.floats(0.0, np.pi / 2)
noises = st.floats(0.0, 2.0)


# ----------------------------------------------------------------------------- closed forms


def test_values_quoted_for_the_paper():
    """Eq. (15) at gamma = 0.5 and eq. (13) at theta = pi/4, and the balance factor c."""
    gain = tt.transfer_gain_finetune(0.5, np.array([1, 2, 3]) * np.pi / 8)
    np.testing.assert_allclose(gain, [0.424, 0.207, -0.117], atol=5e-4)
    ridge = tt.risk_linear_transfer(np.pi / 4, np.array([0.0, 0.1, 0.3, 0.5]))
    np.testing.assert_allclose(ridge, [0.5, 0.5041, 0.5266, 0.5556], atol=5e-5)
    assert tt.finetune_scale(0.5, 1.0) == pytest.approx(np.sqrt(1.5), rel=1e-10)
    assert np.degrees(tt.break_even_angle(0.5, 1.0)) == pytest.approx(52.24, abs=0.01)
    assert tt.finetune_scale(0.25, 0.2) == pytest.approx(1.005, abs=5e-4)
    assert np.degrees(tt.break_even_angle(0.3, 0.0)) == pytest.approx(60.0)


def test_linear_transfer_negative_interval_with_noise():
    """At 45 degrees and sigma = 0.2, eq. (11) is negative exactly on (0.549, 0.911)."""
    def gain(g):
        return tt.transfer_gain_linear(g, np.pi / 4, 0.2)

    lo, hi = brentq(gain, 0.3, 0.7), brentq(gain, 0.7, 0.99)
    assert (lo, hi) == pytest.approx((0.549, 0.911), abs=1e-3)
    # the quadratic gamma^2 - (1 + cos^2 - s^2) gamma + cos^2 has the same roots
    p = 1 + 0.5 - 0.04
    assert np.roots([1, -p, 0.5]) == pytest.approx([hi, lo], abs=1e-9)


def test_scratch_risk_at_and_around_the_peak():
    assert tt.risk_scratch(1.0, 0.2) == np.inf
    assert tt.risk_scratch(1.0, 0.0) == 0.0
    assert tt.risk_scratch(1.5, 0.0) == 0.0
    assert tt.risk_scratch(0.25, 0.0) == pytest.approx(0.75)
    assert tt.risk_scratch(2.0, 0.5) == pytest.approx(0.25)
    assert tt.risk_scratch_finite(50, 50, 0.1) == np.inf
    assert tt.risk_scratch_finite(10, 40) == pytest.approx(0.75)


@settings(max_examples=60)
@given(gammas, noises)
def test_finite_size_scratch_risk_tends_to_eq_8(gamma, sigma):
    d = 2_000_000
    n = int(round(gamma * d))
    assert tt.risk_scratch_finite(n, d, sigma) == pytest.approx(
        tt.risk_scratch(n / d, sigma), rel=1e-3, abs=1e-6)


@settings(max_examples=80)
@given(st.floats(0.01, 0.99), noises, st.integers(2, 5))
def test_finetune_scale_solves_the_balance_equation(gamma, sigma, depth):
    c = tt.finetune_scale(gamma, sigma, depth)
    a, b = 1 - gamma, gamma + sigma**2 * gamma / (1 - gamma)
    s = c ** (1 / (depth - 1))
    assert s ** (2 * depth) == pytest.approx(a * s ** (2 * depth - 2) + b, rel=1e-9)
    assert c >= 1.0 - 1e-12
    assert tt.finetune_scale(gamma, 0.0, depth) == 1.0
    assert tt.finetune_scale(gamma, sigma + 0.1, depth) > c


@settings(max_examples=80)
@given(st.floats(0.01, 0.99), angles, noises)
def test_finetune_helps_exactly_below_the_break_even_angle(gamma, theta, sigma):
    gain = tt.transfer_gain_finetune(gamma, theta, sigma)
    star = tt.break_even_angle(gamma, sigma)
    if abs(theta - star) > 1e-9:
        assert (gain > 0) == (theta < star)
    paper = tt.transfer_gain_finetune(gamma, theta, sigma, balanced=False)
    assert paper == pytest.approx((gamma - 1) * (1 - 2 * np.cos(theta)), abs=1e-12)
    assert tt.transfer_gain_finetune(1 + gamma, theta, sigma) == 0.0


@settings(max_examples=60)
@given(angles, st.floats(0.0, 5.0), st.floats(0.0, 5.0))
def test_ridge_only_hurts_linear_transfer(theta, lam1, lam2):
    lo, hi = sorted((lam1, lam2))
    assert tt.risk_linear_transfer(theta, lo) <= tt.risk_linear_transfer(theta, hi) + 1e-12
    assert tt.risk_linear_transfer(theta, 0.0) == pytest.approx(np.sin(theta) ** 2, abs=1e-12)


def test_closed_forms_are_vectorised():
    g = np.array([0.2, 0.5, 1.5])[:, None]
    th = np.linspace(0, np.pi / 2, 5)[None, :]
    grid = tt.transfer_gain_finetune(g, th, 0.3)
    assert grid.shape == (3, 5)
    assert grid[1, 2] == tt.transfer_gain_finetune(0.5, th[0, 2], 0.3)
    assert tt.transfer_gain_linear(g, th).shape == (3, 5)
    assert isinstance(tt.risk_scratch(0.5), float)
    finite = tt.risk_linear_transfer_finite(th, np.array([5, 50])[:, None], 0.1)
    assert finite.shape == (2, 5)


@pytest.mark.parametrize("call, message", [
    (lambda: tt.risk_scratch(0.0), "gamma must be > 0"),
    (lambda: tt.risk_scratch(-1.0), "gamma must be > 0"),
    (lambda: tt.risk_scratch(np.nan), "gamma must be finite"),
    (lambda: tt.risk_scratch(0.5, -0.1), "sigma must be >= 0"),
    (lambda: tt.risk_scratch("half"), "gamma must be a real number"),
    (lambda: tt.risk_scratch_finite(2.5, 10), "n must be an integer"),
    (lambda: tt.risk_scratch_finite(0, 10), "n must be >= 1"),
    (lambda: tt.risk_linear_transfer(4.0), "theta must be <= 3.14159"),
    (lambda: tt.risk_linear_transfer(-0.1), "theta must be >= 0"),
    (lambda: tt.risk_linear_transfer(0.3, lam=-1), "lam must be >= 0"),
    (lambda: tt.risk_linear_transfer_finite(0.3, 2), "n must be >= 3"),
    (lambda: tt.transfer_gain_finetune(0.5, 0.3, depth=1), "depth must be >= 2"),
    (lambda: tt.finetune_scale(0.5, np.inf), "sigma must be finite"),
])
def test_closed_forms_reject_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ----------------------------------------------------------------------------- end points


def data(n, d, seeds=3, sigma=0.3, theta=0.7, seed=0):
    tasks = tt.make_tasks(d, seeds, seed)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((seeds, n, d))
    beta_t = tasks.target([theta])[0]
    y = np.einsum("snd,sd->sn", X, beta_t) + sigma * rng.standard_normal((seeds, n))
    return X, y, tasks.beta_s, beta_t


@pytest.mark.parametrize("n, d", [(5, 12), (12, 12), (20, 8)])
def test_min_norm_interpolator_is_lstsq(n, d):
    X, y, _, _ = data(n, d)
    ours = tt.min_norm_interpolator(X, y)
    for s in range(len(X)):
        np.testing.assert_allclose(ours[s], np.linalg.lstsq(X[s], y[s], rcond=None)[0],
                                   atol=1e-10)


@pytest.mark.parametrize("depth", [2, 3])
def test_finetune_endpoint_interpolates_and_keeps_the_balance(depth):
    X, y, beta_s, _ = data(6, 15)
    end = tt.finetune_endpoint(X, y, beta_s, depth)
    np.testing.assert_allclose(np.einsum("snd,sd->sn", X, end), y, atol=1e-10)
    null = beta_s - np.einsum("sdn,snk,sk->sd", np.linalg.pinv(X), X, beta_s)
    # the null-space part is c times beta_s's, with c = |beta|^((L-1)/L) (|beta_s| = 1)
    c = (end * null).sum(1) / (null * null).sum(1)
    np.testing.assert_allclose(c, np.linalg.norm(end, axis=1) ** ((depth - 1) / depth),
                               rtol=1e-8)


@pytest.mark.parametrize("depth", [2, 3])
@pytest.mark.parametrize("n, d", [(6, 15), (25, 10)])
def test_gradient_flow_reaches_the_end_points(depth, n, d):
    X, y, beta_s, _ = data(n, d)
    rng = np.random.default_rng(1)
    start = 1e-6 * rng.standard_normal(beta_s.shape)
    scratch = tt.gradient_flow(X, y, start, depth=depth, tol=1e-10, max_steps=200_000)
    assert scratch.converged.all()
    # what is left of the tiny start in the null space grows like |start|^(1/L)
    np.testing.assert_allclose(scratch.beta, tt.min_norm_interpolator(X, y),
                               atol=3 * 1e-6 ** (1 / depth))
    residual = np.einsum("snd,sd->sn", X, scratch.beta - tt.min_norm_interpolator(X, y))
    assert np.abs(residual).max() < 1e-6
    tuned = tt.gradient_flow(X, y, beta_s, depth=depth, tol=1e-10, max_steps=200_000)
    np.testing.assert_allclose(tuned.beta, tt.finetune_endpoint(X, y, beta_s, depth),
                               atol=1e-7)


def test_gradient_flow_broadcasts_designs_labels_and_starts():
    X, y, beta_s, _ = data(8, 12)
    starts = np.stack([beta_s, 2 * beta_s])                       # (2, S, d)
    flow = tt.gradient_flow(X, y, starts)
    assert flow.beta.shape == (2, 3, 12) and flow.steps.shape == (2, 3)
    single = tt.gradient_flow(X[1], y[1], 2 * beta_s[1])
    np.testing.assert_allclose(flow.beta[1, 1], single.beta, atol=1e-12)


def test_weight_space_descent_agrees_with_the_flow():
    """Pretraining sparsifies W1; small-step fine-tuning of the weights lands on the flow's
    end point (label noise 1, where the balancedness scale c matters)."""
    d = 20
    tasks = tt.make_tasks(d, 3, 4)
    weights = tt.init_deep_linear(d, 2, 1e-3, batch=3, rng=5)
    pre = tt.deep_linear_gd(weights, tasks.beta_s, lr=0.2, steps=400)
    sv = np.linalg.svd(pre[0], compute_uv=False)
    np.testing.assert_allclose(sv[:, 0], 1.0, atol=1e-4)
    assert sv[:, 1].max() < 5e-3
    beta_pre = tt.end_to_end(pre)
    np.testing.assert_allclose(beta_pre, tasks.beta_s, atol=1e-8)
    X, y, _, beta_t = data(10, d, sigma=1.0, theta=0.9, seed=4)
    cov = np.einsum("snd,sne->sde", X, X) / 10
    b = np.einsum("snd,sn->sd", X, y) / 10
    tuned = tt.end_to_end(tt.deep_linear_gd(pre, b, cov=cov, lr=0.01, steps=6000))
    flow = tt.gradient_flow(X, y, beta_pre, tol=1e-10)
    risk = lambda beta: ((beta - beta_t) ** 2).sum(1)  # noqa: E731
    np.testing.assert_allclose(risk(tuned), risk(flow.beta), atol=5e-3)
    assert np.abs(risk(flow.beta) - risk(tt.min_norm_interpolator(X, y))).max() > 0.05


@pytest.mark.parametrize("lam", [0.0, 1e-3, 0.3])
def test_linear_transfer_matches_scikit_learn_ridge(lam):
    X, y, beta_s, _ = data(9, 14)
    rng = np.random.default_rng(2)
    W = np.concatenate([beta_s[..., None], rng.standard_normal((3, 14, 2))], axis=-1)
    beta, coef = tt.linear_transfer(X, y, W, lam)
    for s in range(3):
        F = X[s] @ W[s]
        ref = Ridge(alpha=9 * lam, fit_intercept=False, solver="svd").fit(F, y[s]).coef_
        np.testing.assert_allclose(coef[s], ref, atol=1e-8)
        np.testing.assert_allclose(beta[s], W[s] @ ref, atol=1e-8)


@pytest.mark.parametrize("call, message", [
    (lambda X, y, b: tt.gradient_flow(X, y, 0 * b), "beta_init must be nonzero"),
    (lambda X, y, b: tt.gradient_flow(X, y[..., :3], b), "y must have shape"),
    (lambda X, y, b: tt.gradient_flow(X, y, b[..., :3]), "beta_init must have shape"),
    (lambda X, y, b: tt.gradient_flow(X[0, 0], y, b), "X must have shape"),
    (lambda X, y, b: tt.gradient_flow(X, y, b, step=2.5), "step must be <= 2"),
    (lambda X, y, b: tt.gradient_flow(X, y, b, depth=1), "depth must be >= 2"),
    (lambda X, y, b: tt.gradient_flow(X * np.nan, y, b), "X contains NaN"),
    (lambda X, y, b: tt.linear_transfer(X, y, b[..., None, :]), "features must have shape"),
    (lambda X, y, b: tt.min_norm_interpolator(X, y * np.inf), "y contains NaN"),
    (lambda X, y, b: tt.simulate_transfer(10, [0.5], [4.0]), "thetas must be <= 3.14159"),
    (lambda X, y, b: tt.simulate_transfer(10, [0.5], [0.3], seeds=0), "seeds must be"),
])
def test_training_rejects_bad_input(call, message):
    X, y, beta_s, _ = data(6, 10)
    with pytest.raises(ValueError, match=message):
        call(X, y, beta_s)


# ----------------------------------------------------------------------------- simulations


def test_simulated_risks_follow_the_closed_forms_at_moderate_size():
    sim = tt.simulate_transfer(120, [0.3, 0.6, 1.5], np.array([1, 2, 3]) * np.pi / 8,
                               [0.0, 0.2], seeds=8, seed=3)
    assert all(sim.converged[k].all() for k in sim.converged)
    g, th, s = sim.gammas[None, :, None], sim.thetas[None, None, :], sim.sigmas[:, None, None]
    expected = {
        "scratch": tt.risk_scratch_finite(sim.n[None, :, None], sim.d, s) + 0 * th,
        "linear": tt.risk_linear_transfer_finite(th, sim.n[None, :, None], s),
        "finetune": tt.risk_scratch_finite(sim.n[None, :, None], sim.d, s)
        - tt.transfer_gain_finetune(g, th, s),
    }
    for name, value in expected.items():
        mean = sim.risk[name].mean(-1)
        se = sim.risk[name].std(-1, ddof=1) / np.sqrt(sim.risk[name].shape[-1])
        # within 4 standard errors, plus 1/d for the finite-size terms eq. (15) leaves out
        assert np.all(np.abs(mean - value) <= 4 * se + 1.0 / sim.d), name


def test_linear_transfer_finite_n_formula_is_calibrated():
    """Eq. (10): over 4,000 repetitions at n = 8, the mean risk is within 3 standard errors."""
    d, n, reps, theta, sigma = 30, 8, 4000, 0.6, 0.5
    tasks = tt.make_tasks(d, reps, 9)
    rng = np.random.default_rng(9)
    X = rng.standard_normal((reps, n, d))
    beta_t = tasks.target([theta])[0]
    y = np.einsum("snd,sd->sn", X, beta_t) + sigma * rng.standard_normal((reps, n))
    beta, _ = tt.linear_transfer(X, y, tasks.beta_s[..., None])
    risk = ((beta - beta_t) ** 2).sum(1)
    expected = tt.risk_linear_transfer_finite(theta, n, sigma)
    assert abs(risk.mean() - expected) < 3 * risk.std() / np.sqrt(reps)
    assert expected - np.sin(theta) ** 2 > 5 * risk.std() / np.sqrt(reps)  # the term matters


# ----------------------------------------------------------------------------- ReLU networks


def test_relu_kernel_matches_monte_carlo():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((3, 5)), rng.standard_normal((4, 5))
    A[0] = 2 * B[0]  # parallel pair
    A[1] = -B[1]     # opposite pair
    x = rng.standard_normal((400_000, 5))
    prod = np.maximum(x @ A.T, 0)[:, :, None] * np.maximum(x @ B.T, 0)[:, None, :]
    se = prod.std(0) / np.sqrt(len(x))
    assert np.all(np.abs(prod.mean(0) - tt.relu_kernel(A, B)) < 4 * se + 1e-12)
    assert tt.relu_kernel(A[1:2], B[1:2])[0, 0] == pytest.approx(0.0, abs=1e-12)


def test_relu_population_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    W, c = rng.standard_normal((6, 4)), rng.standard_normal(6)
    V, a = rng.standard_normal((3, 4)), rng.standard_normal(3)
    grad_c, grad_W = _relu_population_grads(W, c, V, a)
    m, h = len(c), 1e-6

    def half_risk(W_, c_):
        return 0.5 * tt.relu_population_risk(W_, c_, V, a)

    for i, j in [(0, 0), (2, 3), (5, 1)]:
        Wp, Wm = W.copy(), W.copy()
        Wp[i, j] += h
        Wm[i, j] -= h
        fd = (half_risk(Wp, c) - half_risk(Wm, c)) / (2 * h)
        assert m * fd == pytest.approx(grad_W[i, j], rel=1e-5, abs=1e-8)
    cp, cm = c.copy(), c.copy()
    cp[2] += h
    cm[2] -= h
    assert m * (half_risk(W, cp) - half_risk(W, cm)) / (2 * h) == pytest.approx(
        grad_c[2], rel=1e-5)


def test_relu_out_of_span_properties():
    rng = np.random.default_rng(2)
    V = rng.standard_normal((6, 8))
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    a = np.full(6, 1 / 6)
    fractions = [tt.relu_out_of_span(V[: 6 - r], V, a) for r in range(6)]
    assert fractions[0] == pytest.approx(0.0, abs=1e-8)
    assert np.all(np.diff(fractions) > 0)
    assert tt.relu_out_of_span(V[:0], V, a) == 1.0
    with pytest.raises(ValueError, match="need features"):
        tt.relu_out_of_span(V[:, :3], V, a)


def test_relu_training_and_read_out():
    rng = np.random.default_rng(3)
    V = rng.standard_normal((2, 4, 6))
    a = np.full((2, 4), 0.25)
    X = rng.standard_normal((2, 40, 6))
    y = (np.maximum(X @ np.swapaxes(V, 1, 2), 0) @ a[..., None])[..., 0]
    W0, c0 = rng.standard_normal((2, 16, 6)) / np.sqrt(6), rng.standard_normal((2, 16))

    def train_loss(W, c):
        return ((np.maximum(X @ np.swapaxes(W, 1, 2), 0) @ c[..., None])[..., 0] / 16 - y) ** 2

    W1, c1 = tt.relu_fit(W0, c0, X, y, lr=0.5, steps=300)
    assert np.all(train_loss(W1, c1).mean(1) < 0.2 * train_loss(W0, c0).mean(1))
    Wp, cp = tt.relu_pretrain(W0, c0, V, a, lr=0.5, steps=300)
    assert np.all(tt.relu_population_risk(Wp, cp, V, a)
                  < 0.1 * tt.relu_population_risk(W0, c0, V, a))
    c_lt = tt.relu_linear_transfer(Wp, X, y, lam=1e-3)
    for s in range(2):
        Phi = np.maximum(X[s] @ Wp[s].T, 0)
        ref = Ridge(alpha=40 * 1e-3, fit_intercept=False, solver="svd").fit(Phi, y[s]).coef_
        np.testing.assert_allclose(c_lt[s], 16 * ref, rtol=1e-6, atol=1e-8)


def test_relu_simulation_shapes_and_sense():
    sim = tt.simulate_relu_transfer(6, 4, 16, [0.0, 0.5], [8, 32], seeds=2, pretrain_steps=200,
                                    steps=200)
    for name in ("scratch", "linear", "finetune"):
        assert sim.risk[name].shape == (2, 2, 2)
        assert np.all(np.isfinite(sim.risk[name]))
    np.testing.assert_array_equal(sim.risk["scratch"][0], sim.risk["scratch"][1])
    assert np.all(sim.out_of_span[0] < 1e-8) and np.all(sim.out_of_span[1] > 0.01)
    np.testing.assert_allclose(sim.source_distance[0], 0.0, atol=1e-12)
    assert np.all(sim.pretrain_risk < 0.05)
    with pytest.raises(ValueError, match="at least one source neuron"):
        tt.simulate_relu_transfer(6, 4, 16, [1.0], [8], seeds=1)
    with pytest.raises(ValueError, match="mus must be <= 1"):
        tt.simulate_relu_transfer(6, 4, 16, [1.5], [8], seeds=1)
