"""HTMP: the density against mpmath, an exact CDF and Marchenko-Pastur; the sampler against the
density; kappa recovery; the Hill estimator; bad input; seeds."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml25.htmp import (
    fit_kappa,
    haar_layer,
    hill_alpha,
    htmp_cdf,
    htmp_density,
    htmp_logpdf,
    ks_distance,
    mp_cdf,
    mp_density,
    powerlaw_alpha,
    sample_htmp,
    sample_htmp_many,
)
from icml25.htmp.density import _logpdf_mpmath_scalar, _parameters
from icml25.htmp.sampling import _bidiagonal_gram_eigenvalues
from scipy import integrate, stats


def reference_logpdf(x, gamma, kappa):
    """log f straight from mpmath.hyperu at the negative argument (module docstring)."""
    b, c, a, scale = _parameters(gamma, kappa)
    return _logpdf_mpmath_scalar(scale * x, b, c, a)


# --------------------------------------------------------------------------- the density


@settings(max_examples=40, deadline=None)
@given(
    gamma=st.floats(1.05, 20.0),
    kappa=st.floats(0.05, 60.0),
    quantile=st.floats(-12.0, 1.5),
)
def test_logpdf_matches_mpmath(gamma, kappa, quantile):
    """The vectorised SciPy path (and its mpmath fallback) agree with mpmath.hyperu."""
    x = gamma * 10.0**quantile
    assert htmp_logpdf(x, gamma, kappa) == pytest.approx(reference_logpdf(x, gamma, kappa),
                                                         abs=1e-8)


@settings(max_examples=40, deadline=None)
@given(
    gamma=st.floats(1.05, 20.0),
    m=st.integers(0, 8),
    on_a=st.booleans(),
    offset=st.floats(-0.05, 0.05),
    quantile=st.floats(-12.0, 1.5),
)
def test_logpdf_matches_mpmath_near_removable_singularities(gamma, m, on_a, offset, quantile):
    """kappa near a = -m or c = m + 2: SciPy's formulas cancel; kappa-interpolation takes over."""
    kappa = (2 * gamma * (1 + m) if on_a else 2 * (m + 1) / (1 - 1 / gamma)) + offset
    if not 0.05 < kappa <= 60:
        return
    x = gamma * 10.0**quantile
    assert htmp_logpdf(x, gamma, kappa) == pytest.approx(reference_logpdf(x, gamma, kappa),
                                                         abs=1e-8)


@pytest.mark.parametrize(
    "gamma, kappa", [(2.0, 4.0), (2.0, 16.0), (1.5, 6.0), (4.0, 8.0), (3.0, 9.0), (2.0, 4.003)])
def test_removable_singularity_when_kappa_over_two_gamma_is_an_integer(gamma, kappa):
    """a = 1 - kappa/(2 gamma) a non-positive integer (and c an integer too): the connection
    formula is 0 * inf there and log f is interpolated in kappa from six neighbours."""
    x = np.array([1e-200, 0.05, 0.7, 2.5, 9.0, 40.0])
    expected = [reference_logpdf(v, gamma, kappa) for v in x]
    np.testing.assert_allclose(htmp_logpdf(x, gamma, kappa), expected, atol=1e-9)
    # and the density is continuous in kappa through the singular value
    bulk = x[1:-1]
    near = htmp_density(bulk, gamma, kappa * (1 + 1e-7))
    np.testing.assert_allclose(near, htmp_density(bulk, gamma, kappa), rtol=1e-5)


GRID = [(1.5, 0.1), (1.5, 1.7), (2.0, 0.25), (2.0, 6.5), (4.0, 0.1), (4.0, 20.3), (10.0, 3.3)]


@pytest.mark.parametrize("gamma, kappa", GRID)
def test_density_is_nonnegative_integrates_to_one_and_has_mean_gamma(gamma, kappa):
    """Independent quadrature in u = log x (mass spreads over hundreds of decades for small
    kappa), plus the power-law head x f(x) / (c - 1) below 1e-300."""
    c = _parameters(gamma, kappa)[1]
    u_lo, u_hi = math.log(1e-300), math.log(gamma * (60 / kappa + 10))

    def g(u, power):
        return math.exp(float(htmp_logpdf(math.exp(u), gamma, kappa)) + (1 + power) * u)

    breaks = np.linspace(u_lo, u_hi, 40)
    mass = sum(integrate.quad(g, lo, hi, args=(0,), epsabs=0, epsrel=1e-11)[0]
               for lo, hi in zip(breaks[:-1], breaks[1:]))
    mass += 1e-300 * float(htmp_density(1e-300, gamma, kappa)) / (c - 1)
    mean = sum(integrate.quad(g, lo, hi, args=(1,), epsabs=0, epsrel=1e-11)[0]
               for lo, hi in zip(breaks[:-1], breaks[1:]))
    assert mass == pytest.approx(1.0, abs=1e-8)
    assert mean == pytest.approx(gamma, rel=1e-7)
    x = np.geomspace(1e-8, 100 * gamma, 200)
    assert np.all(htmp_density(x, gamma, kappa) >= 0)


def test_tail_exponents():
    """f ~ x^{kappa/2 (1 - 1/gamma) - 1} at 0, y^{kappa/2 (1 + 1/gamma) - 1} e^{-y} at infinity."""
    gamma, kappa = 2.0, 1.3
    scale = _parameters(gamma, kappa)[3]
    lower = (htmp_logpdf(1e-90, gamma, kappa) - htmp_logpdf(1e-100, gamma, kappa)) / math.log(1e10)
    assert lower == pytest.approx(kappa / 2 * (1 - 1 / gamma) - 1, abs=1e-9)
    y = np.array([2000.0, 4000.0])
    log_f = htmp_logpdf(y / scale, gamma, kappa) + y
    upper = (log_f[1] - log_f[0]) / math.log(2)
    assert upper == pytest.approx(kappa / 2 * (1 + 1 / gamma) - 1, abs=2e-3)


def test_shapes_scalars_and_the_support():
    assert isinstance(htmp_density(1.0, 2.0, 1.0), float)
    assert htmp_density(np.ones((3, 2)), 2.0, 1.0).shape == (3, 2)
    assert htmp_density(-1.0, 2.0, 1.0) == 0.0 and htmp_logpdf(0.0, 2.0, 1.0) == -np.inf
    assert htmp_cdf(-1.0, 2.0, 1.0) == 0.0 and htmp_cdf(np.inf, 2.0, 1.0) == pytest.approx(1.0)
    for gamma, kappa in [(2.0, 0.02), (1.2, 0.05), (3.0, 30.0)]:  # the full mass, to 1e-12
        assert htmp_cdf(1e9, gamma, kappa) == pytest.approx(1.0, abs=1e-12)
    x = np.linspace(0.01, 8, 50)
    np.testing.assert_allclose(htmp_density(x, 2.0, np.inf), mp_density(x, 2.0), rtol=1e-14)
    np.testing.assert_array_equal(htmp_cdf(x, 2.0, np.inf), mp_cdf(x, 2.0))


# --------------------------------------------------------------------------- distribution functions


@pytest.mark.parametrize("gamma, kappa", [(2.0, 1.0), (4.0, 2.5), (1.5, 0.3), (2.0, 0.02)])
def test_cdf_matches_the_exact_phase_formula(gamma, kappa):
    """F(x) = (2 gamma / (pi kappa)) |arg U(b, c, -y) - pi (1 - c)|: the density is the derivative
    of U's phase (a Wronskian identity; the total turn is pi kappa / (2 gamma), less than pi here,
    so no unwrapping).  An exact, integration-free check of htmp_cdf and of the normalisation;
    at kappa = 0.02 a tenth of the mass lies below 1e-300."""
    b, c, _, scale = _parameters(gamma, kappa)
    x = np.geomspace(1e-250, 30 * gamma / min(kappa, 1), 16)
    turn = [float(mpmath.arg(mpmath.hyperu(b, c, -scale * v))) - math.pi * (1 - c) for v in x]
    turn = np.abs(np.angle(np.exp(1j * np.array(turn))))  # to (-pi, pi]
    np.testing.assert_allclose(htmp_cdf(x, gamma, kappa), 2 * gamma * turn / (math.pi * kappa),
                               atol=1e-10)


@pytest.mark.parametrize("gamma", [1.3, 2.0, 6.0])
def test_mp_cdf_is_the_integral_of_mp_density(gamma):
    lo, hi = (math.sqrt(gamma) - 1) ** 2, (math.sqrt(gamma) + 1) ** 2
    x = np.linspace(lo, hi, 7)[1:-1]
    expected = [integrate.quad(mp_density, lo, v, args=(gamma,))[0] for v in x]
    np.testing.assert_allclose(mp_cdf(x, gamma), expected, atol=1e-9)
    assert mp_cdf(lo, gamma) == 0.0 and mp_cdf(hi, gamma) == pytest.approx(1.0, abs=1e-12)


def test_htmp_tends_to_marchenko_pastur():
    """sup |F_kappa - F_MP| falls like 1/kappa (measured 0.13, 0.043, 0.012 at gamma = 2)."""
    gamma = 2.0
    x = np.linspace(0.05, 7.0, 300)
    distance = [np.max(np.abs(htmp_cdf(x, gamma, k) - mp_cdf(x, gamma))) for k in (4.3, 16.3, 64.3)]
    assert distance[0] > 2.5 * distance[1] > 2.5 * 2.5 * distance[2]
    assert distance[2] < 0.02


# --------------------------------------------------------------------------- sampling


@pytest.mark.parametrize("gamma, kappa", [(1.5, 0.25), (2.0, 1.0), (4.0, 2.5), (2.0, np.inf)])
def test_sampler_matches_the_density(gamma, kappa):
    """Four matrices of rank 1000 pooled: KS below the 1% critical value of 4000 independent draws,
    1.63 / sqrt(4000) = 0.026 (measured: 0.007-0.017 for single matrices of rank 4000, 0.004-0.008
    for 20,000 pooled eigenvalues, critical value 0.012).  Power: twice the kappa fails clearly."""
    rng = np.random.default_rng(0)
    pooled = np.concatenate([sample_htmp(1000, gamma, kappa, rng) for _ in range(4)])
    threshold = 1.63 / math.sqrt(pooled.size)
    assert ks_distance(pooled, gamma, kappa) < threshold
    if np.isfinite(kappa):
        assert ks_distance(pooled, gamma, 2 * kappa) > 2 * threshold


def test_small_eigenvalues_are_accurate_to_high_relative_precision():
    """det(B B^T) = prod d_i^2: the log-determinant checks the tiny eigenvalues (down to ~1e-100
    for kappa = 0.1) that LAPACK's tridiagonal solver would return as +-1e-16 noise."""
    rng = np.random.default_rng(3)
    n, p, beta = 400, 800.0, 0.1 / 800
    i = np.arange(1, n + 1)
    diag = np.sqrt(rng.chisquare(beta * (p - i + 1)))
    sub = np.sqrt(rng.chisquare(beta * (n - i[:-1])))
    eigenvalues = _bidiagonal_gram_eigenvalues(diag, sub)
    assert eigenvalues.min() < 1e-30 * eigenvalues.max()
    assert np.all(np.diff(eigenvalues) >= 0)
    assert np.sum(np.log(eigenvalues)) == pytest.approx(2 * np.sum(np.log(diag)), rel=1e-10)


def test_sampler_shape_scaling_and_seeds():
    x = sample_htmp(300, 2.0, 1.0, 5)
    assert x.shape == (300,) and np.all(x > 0) and np.all(np.diff(x) >= 0)
    np.testing.assert_array_equal(x, sample_htmp(300, 2.0, 1.0, 5))
    assert not np.array_equal(x, sample_htmp(300, 2.0, 1.0, 6))
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    np.testing.assert_array_equal(sample_htmp(50, 3.0, 2.0, rng_a),
                                  sample_htmp(50, 3.0, 2.0, rng_b))
    means = [sample_htmp(500, 3.0, 4.0, s).mean() for s in range(20)]  # E[x] = gamma exactly
    assert np.mean(means) == pytest.approx(3.0, rel=0.02)
    assert sample_htmp(7, 1.3, 0.5, 0).shape == (7,)  # p = gamma n need not be an integer


# --------------------------------------------------------------------------- fitting and tails


@pytest.mark.parametrize("kappa", [0.5, 2.0, 8.0])
def test_fit_kappa_recovers_kappa(kappa):
    """500 eigenvalues identify kappa within a factor 1.35 (measured spread about +-15% at 8)."""
    for seed in range(3):
        estimate = fit_kappa(sample_htmp(500, 2.0, kappa, seed), 2.0)
        assert abs(math.log(estimate / kappa)) < math.log(1.35)


def test_fit_kappa_is_scale_free_and_flags_marchenko_pastur():
    eigs = sample_htmp(400, 2.0, 2.0, 1)
    assert fit_kappa(37.0 * eigs, 2.0) == pytest.approx(fit_kappa(eigs, 2.0), rel=1e-9)
    wishart = sample_htmp(400, 2.0, np.inf, 2)
    assert fit_kappa(wishart, 2.0, bounds=(0.1, 30.0)) > 25.0  # runs into the upper bound


@pytest.mark.parametrize("alpha", [2.5, 4.0])
def test_hill_alpha_on_pareto_samples(alpha):
    """Density x^{-alpha} on [1, inf): the estimator is the MLE, sd (alpha - 1) / sqrt(k)."""
    rng = np.random.default_rng(0)
    x = rng.uniform(size=100_000) ** (-1 / (alpha - 1))
    assert hill_alpha(x, frac=1.0) == pytest.approx(alpha, abs=4 * (alpha - 1) / math.sqrt(1e5))
    assert hill_alpha(x, frac=0.1) == pytest.approx(alpha, abs=4 * (alpha - 1) / math.sqrt(1e4))
    assert hill_alpha(5.0 * x, frac=0.1) == pytest.approx(hill_alpha(x, frac=0.1), rel=1e-12)


def test_tails_grow_heavier_as_kappa_falls():
    """The headline qualitative claim: smaller kappa, smaller (heavier) Hill exponent."""
    alphas = [np.median([hill_alpha(sample_htmp(1000, 2.0, k, s), 0.05) for s in range(3)])
              for k in (0.25, 1.0, 4.0, np.inf)]
    assert np.all(np.diff(alphas) > 0)


def test_haar_layer_has_the_given_spectrum():
    eigs = sample_htmp(60, 2.0, 1.0, 0)
    W = haar_layer(eigs, 120, 1)
    assert W.shape == (120, 60)
    np.testing.assert_allclose(np.linalg.eigvalsh(W.T @ W), eigs, atol=1e-12 * eigs.max())
    np.testing.assert_array_equal(W, haar_layer(eigs, 120, 1))
    # Haar: the first right singular vector is uniform on the sphere (squared entries average 1/n)
    first = [np.linalg.svd(haar_layer(eigs, 120, s))[2][0] ** 2 for s in range(30)]
    assert stats.ttest_1samp(np.ravel(first), 1 / 60).pvalue > 0.001


# --------------------------------------------------------------------------- bad input

EIGS = sample_htmp(50, 2.0, 1.0, 0)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: htmp_density(1.0, 1.0, 1.0), r"gamma .* must be a finite number > 1"),
        (lambda: htmp_density(1.0, 0.5, 1.0), r"gamma .* > 1, got 0.5"),
        (lambda: htmp_density(1.0, np.nan, 1.0), "gamma"),
        (lambda: htmp_density(1.0, np.inf, 1.0), "gamma"),
        (lambda: htmp_cdf(1.0, "wide", 1.0), "gamma must be a number"),
        (lambda: htmp_density(1.0, 2.0, 0.0), r"kappa must be > 0"),
        (lambda: htmp_logpdf(1.0, 2.0, -1.0), r"kappa must be > 0"),
        (lambda: htmp_cdf(1.0, 2.0, np.nan), r"kappa must be > 0"),
        (lambda: mp_density(1.0, 0.9), "gamma"),
        (lambda: htmp_density([1.0, np.nan], 2.0, 1.0), "x must not contain NaN"),
        (lambda: sample_htmp(0, 2.0, 1.0, 0), "n must be positive"),
        (lambda: sample_htmp(10.5, 2.0, 1.0, 0), "n must be an integer"),
        (lambda: sample_htmp(10, 2.0, -1.0, 0), "kappa"),
        (lambda: ks_distance([], 2.0, 1.0), "non-empty 1-D"),
        (lambda: ks_distance(np.ones((3, 3)), 2.0, 1.0), "non-empty 1-D"),
        (lambda: ks_distance([1.0, np.nan], 2.0, 1.0), "finite"),
        (lambda: fit_kappa(EIGS.reshape(5, 10), 2.0), "1-D array"),
        (lambda: fit_kappa(EIGS[:5], 2.0), "at least 10"),
        (lambda: fit_kappa(np.r_[EIGS, 0.0], 2.0), "must be positive"),
        (lambda: fit_kappa(np.r_[EIGS, np.inf], 2.0), "finite"),
        (lambda: fit_kappa(EIGS, 0.5), "gamma"),
        (lambda: fit_kappa(EIGS, 2.0, bounds=(0.0, 10.0)), "0 < low < high <= 1000"),
        (lambda: fit_kappa(EIGS, 2.0, bounds=(10.0, 1.0)), "0 < low < high <= 1000"),
        (lambda: fit_kappa(EIGS, 2.0, bounds=(1.0, np.inf)), "0 < low < high <= 1000"),
        (lambda: htmp_density(1.0, 2.0, 5e3), "pass kappa=np.inf"),
        (lambda: fit_kappa(EIGS, 2.0, bounds=5.0), "pair of numbers"),
        (lambda: hill_alpha(EIGS, frac=0.0), r"frac must be in \(0, 1\]"),
        (lambda: hill_alpha(EIGS, frac=1.5), r"frac must be in \(0, 1\]"),
        (lambda: hill_alpha(EIGS, frac=0.01), "at least 2 are needed"),
        (lambda: hill_alpha(np.ones(20), frac=0.5), "all equal"),
        (lambda: hill_alpha(-EIGS, frac=0.5), "must be positive"),
        (lambda: haar_layer(EIGS, 20, 0), "m must be at least len"),
        (lambda: haar_layer(-EIGS, 100, 0), "nonnegative"),
        (lambda: haar_layer(EIGS.reshape(5, 10), 100, 0), "1-D"),
    ],
)
def test_bad_input_raises_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --------------------------------------------------------------------------- batches and tail fits


def test_sample_htmp_many_rows_are_independent_children():
    rows = sample_htmp_many(60, 2.0, 1.0, 4, np.random.SeedSequence(7))
    assert rows.shape == (4, 60)
    assert np.all(np.diff(rows, axis=1) >= 0)
    # row r is sample_htmp on the r-th spawned child; more rows leave the first ones alone
    children = np.random.default_rng(np.random.SeedSequence(7)).spawn(4)
    np.testing.assert_array_equal(rows[2], sample_htmp(60, 2.0, 1.0, children[2]))
    more = sample_htmp_many(60, 2.0, 1.0, 6, np.random.SeedSequence(7))
    np.testing.assert_array_equal(more[:4], rows)
    assert not np.allclose(rows[0], rows[1])
    with pytest.raises(ValueError):
        sample_htmp_many(60, 2.0, 1.0, 0, 1)


def brute_force_powerlaw(x, low, high):
    """The KS x_min scan written out candidate by candidate (the docstring's formulas)."""
    x = np.sort(x)
    best = None
    for i in range(len(x) - 1):
        tail = x[i:]
        m = len(tail)
        alpha = 1 + m / np.sum(np.log(tail / tail[0]))
        ok = low < alpha < high and (1.5 < alpha <= 3 or low + 0.01 <= alpha <= high - 0.01)
        d = np.max(np.abs(1 - (tail / tail[0]) ** (1 - alpha) - np.arange(m) / m))
        if ok and (best is None or d < best[2]):
            best = (alpha, tail[0], d)
    return best


@pytest.mark.parametrize("kappa", [0.25, 2.0, np.inf])
def test_powerlaw_alpha_matches_brute_force(kappa):
    x = sample_htmp(150, 2.0, kappa, np.random.default_rng(11))
    fit = powerlaw_alpha(x)
    alpha, xmin, d = brute_force_powerlaw(x, 1.0, 20.0)
    assert fit.valid and fit.xmin == xmin
    assert fit.alpha == pytest.approx(alpha, rel=1e-12)
    assert fit.ks == pytest.approx(d, rel=1e-9)
    assert fit.n_tail == np.sum(x >= xmin)


def test_powerlaw_alpha_matches_the_powerlaw_package():
    powerlaw = pytest.importorskip("powerlaw")
    import warnings

    rng = np.random.default_rng(5)
    for kappa in (0.1, 0.5, 2.0, np.inf):
        x = sample_htmp(300, 2.0, kappa, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            peer = powerlaw.Fit(x, verbose=False, parameter_ranges={"alpha": [1.0, 20.0]})
        ours = powerlaw_alpha(x, (1.0, 20.0))
        assert ours.xmin == peer.xmin
        assert ours.alpha == pytest.approx(peer.alpha, rel=1e-4)
        assert ours.ks == pytest.approx(peer.D, rel=1e-4)


def test_powerlaw_alpha_recovers_a_pareto_exponent():
    # an exact power law above 1: alpha = 2.5, the scan should settle near the bottom
    x = (1 - np.random.default_rng(3).random(4000)) ** (-1 / 1.5)
    fit = powerlaw_alpha(x)
    assert fit.alpha == pytest.approx(2.5, abs=0.15)


def test_powerlaw_alpha_rejects_bad_input():
    with pytest.raises(ValueError):
        powerlaw_alpha([1.0, 2.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        powerlaw_alpha([1.0, 2.0, 3.0], alpha_range=(3.0, 2.0))
    with pytest.raises(ValueError):
        powerlaw_alpha([1.0, -2.0, 3.0])
