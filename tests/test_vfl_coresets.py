"""VFL coresets: scores against their definitions, the protocol, objectives and bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml25 import vfl_coresets as vc

lams = st.floats(1e-3, 1e3)
seeds = st.integers(0, 2**31 - 1)


def random_matrix(seed, n=60, d=4, scales=None):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, d))
    return A * (scales if scales is not None else 1.0)


# ----------------------------------------------------------------------------- ridge leverage


@settings(max_examples=40, deadline=None)
@given(seeds, lams)
def test_ridge_leverage_matches_qr_of_the_augmented_matrix(seed, lam):
    A = random_matrix(seed, scales=[1, 1, 0.1, 3])
    q, _ = np.linalg.qr(np.vstack([A, np.sqrt(lam) * np.eye(4)]))
    np.testing.assert_allclose(vc.ridge_leverage_scores(A, lam), (q[:60] ** 2).sum(1),
                               rtol=1e-8, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(seeds, lams)
def test_ridge_leverages_sum_to_the_statistical_dimension(seed, lam):
    A = random_matrix(seed)
    tau = vc.ridge_leverage_scores(A, lam)
    assert tau.sum() == pytest.approx(vc.statistical_dimension(A, lam), rel=1e-9)
    assert np.all(tau >= 0) and np.all(tau < 1)
    assert vc.statistical_dimension(A, 10 * lam) < vc.statistical_dimension(A, lam)


def test_plain_leverage_on_a_rank_deficient_block_sums_to_the_rank():
    A = random_matrix(1, d=3)
    A = np.column_stack([A, A[:, 0] + A[:, 1]])  # rank 3
    tau = vc.ridge_leverage_scores(A, 0.0)
    assert tau.sum() == pytest.approx(3.0, rel=1e-9)
    assert vc.party_scores(A, "leverage") == pytest.approx(tau)


def test_unpenalised_label_column_and_the_sup_characterisation():
    A = random_matrix(2, d=3)
    y = A @ [1.0, -2.0, 0.5] + 0.1 * random_matrix(3, d=1)[:, 0]
    lam = 2.0
    aug = np.column_stack([A, y])
    tau = vc.ridge_leverage_scores(aug, lam, penalised=[1, 1, 1, 0])
    gram = aug.T @ aug + lam * np.diag([1, 1, 1, 0])
    expected = np.einsum("ij,jk,ik->i", aug, np.linalg.inv(gram), aug)
    np.testing.assert_allclose(tau, expected, rtol=1e-9)
    # tau_i = sup_beta (a_i beta)^2 / (|A beta|^2 + lam beta' D beta), attained at G^-1 a_i
    i = int(np.argmax(tau))
    beta = np.linalg.solve(gram, aug[i])
    ratio = (aug[i] @ beta) ** 2 / (np.sum((aug @ beta) ** 2)
                                    + lam * beta[:3] @ beta[:3])
    assert ratio == pytest.approx(tau[i], rel=1e-9)
    scores = vc.party_scores(A, "ridge", lam, labels=y)
    np.testing.assert_allclose(scores, np.sqrt(tau), rtol=1e-9)


# ----------------------------------------------------------------------------- Lewis weights


@settings(max_examples=30, deadline=None)
@given(seeds)
def test_l1_lewis_weights_solve_their_fixed_point_and_sum_to_d(seed):
    A = random_matrix(seed, n=80, d=3, scales=[1, 5, 0.2])
    w = vc.lewis_weights(A, tol=1e-12, iterations=200)
    fixed = np.sqrt(np.einsum("ij,jk,ik->i", A, np.linalg.inv(A.T @ (A / w[:, None])), A))
    np.testing.assert_allclose(fixed, w, rtol=1e-8)
    assert w.sum() == pytest.approx(3.0, rel=1e-8)
    signs = np.where(np.random.default_rng(seed).random(80) < 0.5, -1.0, 1.0)
    np.testing.assert_allclose(vc.lewis_weights(A * signs[:, None], tol=1e-12,
                                                iterations=200), w, rtol=1e-8)


def test_l2_lewis_weights_are_leverage_scores():
    A = random_matrix(4)
    np.testing.assert_allclose(vc.lewis_weights(A, p=2), vc.ridge_leverage_scores(A, 0.0),
                               rtol=1e-10)


def test_augmented_lewis_weights_lose_mass_as_lambda_grows():
    A = random_matrix(5, n=200, d=3)
    mass = [vc.augmented_lewis_weights(A, lam).sum() for lam in (0.01, 1, 10, 100, 1e4)]
    assert mass[0] == pytest.approx(3.0, rel=1e-3)
    assert np.all(np.diff(mass) < 0)
    assert mass[-1] < 0.1


# ----------------------------------------------------------------------------- protocol


def test_sampling_probabilities_add_the_uniform_term():
    p = vc.sampling_probabilities([np.array([1.0, 0, 0, 0]), np.array([0, 1.0, 0, 0])])
    np.testing.assert_allclose(p, np.array([1.25, 1.25, 0.25, 0.25]) / 3)


def test_coreset_weights_and_bill():
    blocks, y, _, _ = vc.rare_rows_data(2000, widths=(3, 2), seed=0)
    core = vc.coreset(blocks, y, 100, method="ridge", lam=10.0, seed=7)
    idx, w = core
    assert np.all(np.diff(idx) > 0)
    again = vc.coreset(blocks, y, 100, method="ridge", lam=10.0, seed=7)
    assert np.array_equal(again.indices, idx) and np.array_equal(again.weights, w)
    cdf = np.cumsum(core.probabilities)
    draws = np.searchsorted(cdf / cdf[-1], np.random.default_rng(7).random(100), "right")
    counts = np.bincount(draws, minlength=2000)[idx]
    np.testing.assert_allclose(w, counts / (100 * core.probabilities[idx]))
    # each party: n scores + its columns of the drawn rows (the label holder: + labels)
    assert core.floats_sent.tolist() == [2000 + 3 * idx.size, 2000 + 3 * idx.size]
    assert core.floats_full == 2000 * 6
    uniform = vc.coreset(blocks, y, 100, method="uniform", lam=10.0, seed=7)
    assert uniform.floats_total == 6 * uniform.indices.size
    np.testing.assert_allclose(uniform.probabilities, 1 / 2000)


def test_draws_follow_the_probabilities():
    p = np.r_[0.5, 0.0, 0.25, 0.25, np.zeros(3996)]  # m may not exceed n = 4000
    core = vc.sample_coreset(p, 4000, widths=[1], seed=0)
    assert core.indices.tolist() == [0, 2, 3]
    shares = core.weights * p[core.indices]  # = count / m
    assert shares.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(shares, p[core.indices], atol=0.03)


def test_weighted_sums_are_unbiased_over_many_coresets():
    blocks, y, _, _ = vc.rare_rows_data(500, widths=(2, 2), seed=1)
    X = np.hstack(blocks)
    f = (X @ np.ones(4) - y) ** 2
    p = vc.sampling_probabilities([vc.party_scores(b, "leverage") for b in blocks])
    est = [np.sum(c.weights * f[c.indices])
           for c in (vc.sample_coreset(p, 30, widths=[2, 3], seed=[3, r])
                     for r in range(3000))]
    est = np.array(est) / f.sum()
    assert abs(est.mean() - 1) < 4 * est.std(ddof=1) / np.sqrt(est.size)


def test_inclusion_probabilities_cap_at_one_and_sum_to_m():
    p = np.r_[0.5, 0.2, 0.1, np.full(8, 0.025)]
    pi = vc.inclusion_probabilities(p, 4)
    assert pi.sum() == pytest.approx(4.0)
    # c = 3 / 0.5 would give row 1 a pi of 1.2: rows 0 and 1 are certain, and the rest
    # share the other 2 in proportion to p (c = 2 / 0.3)
    np.testing.assert_allclose(pi, np.r_[1.0, 1.0, 2 / 0.3 * p[2:]])
    np.testing.assert_allclose(vc.inclusion_probabilities(p, 11), 1.0)
    with pytest.raises(ValueError, match="at least 3 rows with p_i > 0"):
        vc.inclusion_probabilities(np.r_[0.5, 0.5, 0.0, 0.0], 3)


def test_sampling_without_replacement_keeps_m_distinct_rows_with_their_pi():
    rng = np.random.default_rng(4)
    p = rng.exponential(size=40) ** 3
    p /= p.sum()
    pi = vc.inclusion_probabilities(p, 10)
    assert np.any(pi == 1) and np.any(pi < 0.1)  # both regimes are exercised
    hits = np.zeros(40)
    draws = 6000
    for r in range(draws):
        core = vc.sample_coreset(p, 10, widths=[1], seed=[5, r], replace=False)
        assert core.indices.size == 10 and not core.replace
        np.testing.assert_allclose(core.weights, 1 / pi[core.indices])
        hits[core.indices] += 1
    # each row is kept with probability pi_i: binomial counts within 4.5 standard errors
    se = np.sqrt(draws * pi * (1 - pi)) + 1e-9
    assert np.all(np.abs(hits - draws * pi) <= 4.5 * se + 1e-9)
    assert np.all(hits[pi == 1] == draws)


def test_horvitz_thompson_sums_are_unbiased_and_1_over_mp_is_not():
    blocks, y, _, _ = vc.rare_rows_data(300, widths=(2, 2), seed=1)
    X = np.hstack(blocks)
    f = (X @ np.ones(4) - y) ** 2
    p = vc.sampling_probabilities([vc.party_scores(b, "leverage") for b in blocks])
    m = 60
    assert np.max(m * p) > 1  # some rows would be drawn more than once with replacement
    ht, naive = [], []
    for r in range(3000):
        c = vc.sample_coreset(p, m, widths=[2, 3], seed=[6, r], replace=False)
        ht.append(np.sum(c.weights * f[c.indices]))
        naive.append(np.sum(f[c.indices] / (m * p[c.indices])))
    ht, naive = np.array(ht) / f.sum(), np.array(naive) / f.sum()
    assert abs(ht.mean() - 1) < 4 * ht.std(ddof=1) / np.sqrt(ht.size)
    # the with-replacement weight 1/(m p_i) on distinct rows is biased: E = sum pi f/(m p)
    # (capped rows count less than their share, the others c/m > 1 times more)
    exact = np.sum(vc.inclusion_probabilities(p, m) * f / (m * p)) / f.sum()
    assert abs(exact - 1) > 0.05
    assert abs(naive.mean() - exact) < 4 * naive.std(ddof=1) / np.sqrt(naive.size)


def test_coreset_without_replacement_and_gap_study_distinct_rows():
    blocks, y, _, _ = vc.rare_rows_data(400, widths=(2, 2), seed=2)
    core = vc.coreset(blocks, y, 150, method="ridge", lam=5.0, seed=3, replace=False)
    assert core.indices.size == 150 and core.floats_sent.tolist() == [400 + 2 * 150,
                                                                      400 + 3 * 150]
    kw = {"task": "ridge", "methods": ("uniform", "ridge"), "sizes": (150,), "lam": 5.0,
          "reps": 4}
    with_r = vc.gap_study(blocks, y, **kw, seed=1)
    without = vc.gap_study(blocks, y, **kw, seed=1, replace=False)
    assert np.all(without["distinct"] == 150)
    assert np.all(with_r["distinct"] < 150)
    assert np.all(without["gaps"] >= -1e-10)
    with pytest.raises(TypeError, match="replace must be True or False"):
        vc.coreset(blocks, y, 10, method="ridge", lam=1.0, replace="no")


@settings(max_examples=25, deadline=None)
@given(seeds, st.floats(0.01, 100.0))
def test_party_scores_times_kappa_bound_the_true_ridge_leverage(seed, lam):
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((40, 2))
    blocks = [base, -base + 0.1 * rng.standard_normal((40, 2)), rng.standard_normal((40, 1))]
    kappa = vc.sensitivity_inflation(blocks, lam)
    true = vc.ridge_leverage_scores(np.hstack(blocks), lam)
    party = sum(vc.ridge_leverage_scores(b, lam) for b in blocks)
    assert np.all(true <= kappa * party * (1 + 1e-8))
    assert 1 - 1e-9 <= kappa <= 1 + max(np.linalg.norm(b, 2) ** 2 for b in blocks) / lam


# ----------------------------------------------------------------------------- objectives


def test_fits_minimise_the_stated_objectives():
    blocks, y, _, _ = vc.rare_rows_data(400, widths=(3, 3), seed=2)
    X = np.hstack(blocks)
    w = np.random.default_rng(0).uniform(0.5, 2, 400)
    lam = 3.0
    beta = vc.fit_ridge(X, y, lam, w)
    closed = np.linalg.solve(X.T @ (w[:, None] * X) + lam * np.eye(6), X.T @ (w * y))
    np.testing.assert_allclose(beta, closed, rtol=1e-8)
    _, yl, _, _ = vc.rare_rows_data(400, widths=(3, 3), task="logistic", seed=2)
    beta = vc.fit_logistic(X, yl, lam, w)
    margin = yl * (X @ beta)
    grad = -X.T @ (w * yl / (1 + np.exp(margin))) + 2 * lam * beta
    assert np.abs(grad).max() < 1e-5
    base = vc.logistic_objective(X, yl, beta, lam, w)
    for step in np.eye(6) * 1e-3:
        assert vc.logistic_objective(X, yl, beta + step, lam, w) > base


def test_batched_fits_match_scikit_learn_coreset_by_coreset():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((300, 5)) * [1, 2, 0.5, 1, 3]
    y = X @ rng.standard_normal(5) + rng.standard_normal(300)
    yl = np.where(rng.random(300) < 1 / (1 + np.exp(-X @ np.ones(5))), 1.0, -1.0)
    idx = rng.integers(0, 300, size=(4, 40))  # repeated rows count twice
    w = rng.exponential(size=(4, 40)) * 5
    many_r = vc.fit_ridge_many(X, y, 2.0, idx, w)
    many_l = vc.fit_logistic_many(X, yl, 0.5, idx, w)
    for k in range(4):
        rows, inverse = np.unique(idx[k], return_inverse=True)
        wk = np.bincount(inverse, weights=w[k])
        np.testing.assert_allclose(many_r[k], vc.fit_ridge(X[rows], y[rows], 2.0, wk),
                                   rtol=1e-9, atol=1e-10)
        ref = vc.fit_logistic(X[rows], yl[rows], 0.5, wk, tol=1e-12)
        np.testing.assert_allclose(many_l[k], ref, rtol=1e-6, atol=1e-7)
        # ours is at least as good a minimiser as scikit-learn's
        assert (vc.logistic_objective(X[idx[k]], yl[idx[k]], many_l[k], 0.5, w[k])
                <= vc.logistic_objective(X[idx[k]], yl[idx[k]], ref, 0.5, w[k]) + 1e-10)
    with pytest.raises(ValueError, match="same shape"):
        vc.fit_ridge_many(X, y, 1.0, idx, w[:, :3])
    with pytest.raises(ValueError, match="indices must lie"):
        vc.fit_ridge_many(X, y, 1.0, idx + 300, w)


def test_gap_study_gaps_are_non_negative_and_shaped():
    blocks, y, _, _ = vc.rare_rows_data(1000, widths=(2, 2), seed=3)
    out = vc.gap_study(blocks, y, task="ridge", methods=("uniform", "ridge"),
                       sizes=(50, 200), lam=5.0, reps=3)
    assert out["gaps"].shape == (2, 2, 3)
    assert np.all(out["gaps"] >= -1e-10)
    assert out["probabilities"].shape == (2, 1000)
    assert out["floats_full"] == 1000 * 5
    # the gaps are the relative gaps of the fits, whatever shortcut computes them
    X = np.hstack(blocks)
    for task, yy in (("ridge", y), ("logistic", np.where(y > 0, 1.0, -1.0))):
        out = vc.gap_study(blocks, yy, task=task, methods=("uniform", "lewis-aug"),
                           sizes=(50, 200), lam=5.0, reps=3)
        objective = vc.ridge_objective if task == "ridge" else vc.logistic_objective
        direct = [vc.relative_gap(objective, X, yy, beta, out["beta_star"], 5.0)
                  for beta in out["betas"].reshape(-1, 4)]
        np.testing.assert_allclose(out["gaps"].ravel(), direct, rtol=1e-7, atol=1e-12)


def test_median_ratio_interval_brackets_the_ratio():
    rng = np.random.default_rng(0)
    a, b = rng.exponential(2.0, 50), rng.exponential(1.0, 50)
    value, (lo, hi) = vc.median_ratio(a, b, seed=1)
    assert lo < value < hi
    assert value == pytest.approx(np.median(a) / np.median(b))
    assert vc.bootstrap_medians(a, b, boot=100).shape == (100, 2)


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kwargs, message", [
    (dict(method="magic"), "method must be one of"),
    (dict(m=0), r"m must be in \[1, 100\]"),
    (dict(m=101), r"m must be in \[1, 100\]"),
    (dict(m=2.5), "m must be an integer"),
    (dict(lam=-1.0), "lam must be non-negative"),
    (dict(method="ridge", lam=0.0), "lam must be positive"),
    (dict(lam=float("nan")), "lam must be"),
])
def test_coreset_rejects_bad_arguments(kwargs, message):
    blocks, y, _, _ = vc.rare_rows_data(100, widths=(2, 2), seed=0)
    args = dict(m=10, method="leverage", lam=1.0) | kwargs
    m = args.pop("m")
    with pytest.raises(ValueError, match=message):
        vc.coreset(blocks, y, m, **args)


def test_coreset_rejects_bad_data():
    blocks, y, _, _ = vc.rare_rows_data(100, widths=(2, 2), seed=0)
    with pytest.raises(ValueError, match="same rows"):
        vc.coreset([blocks[0], blocks[1][:50]], y, 10, method="uniform", lam=1.0)
    bad = blocks[0].copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        vc.coreset([bad, blocks[1]], y, 10, method="leverage", lam=1.0)
    with pytest.raises(ValueError, match="length 100"):
        vc.coreset(blocks, y[:99], 10, method="leverage", lam=1.0)
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        vc.coreset(blocks, y, 10, method="lewis", lam=1.0)
    with pytest.raises(ValueError, match="non-empty list"):
        vc.coreset([], y, 10, method="uniform", lam=1.0)
    with pytest.raises(ValueError, match="2-D"):
        vc.coreset([blocks[0][:, 0], blocks[1]], y, 10, method="uniform", lam=1.0)


def test_kernels_reject_bad_input():
    A = random_matrix(0)
    with pytest.raises(ValueError, match="p must be in"):
        vc.lewis_weights(A, p=5)
    with pytest.raises(ValueError, match="penalised"):
        vc.ridge_leverage_scores(A, 1.0, penalised=[1, 1])
    with pytest.raises(ValueError, match="non-negative vector summing to 1"):
        vc.sample_coreset(np.full(10, 0.2), 3, widths=[1])
    with pytest.raises(ValueError, match="scores must be finite"):
        vc.sampling_probabilities([np.array([1.0, -1.0])])
    with pytest.raises(ValueError, match="task must be"):
        vc.rare_rows_data(100, task="poisson")
    with pytest.raises(ValueError, match="n must be >= 2"):
        vc.gaussian_data(1)
    with pytest.raises(ValueError, match="positive"):
        vc.augmented_lewis_weights(A, 0.0)
    with pytest.raises(ValueError, match="at least two"):
        vc.median_ratio([1.0], [1.0, 2.0])
