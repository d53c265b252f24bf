"""Benchmarks of the chapters' kernels (`make bench`; never part of `make test`).

One representative call per method at the book's scale, timed by pytest-benchmark, so that a change
that slows a kernel shows up as a number before it shows up as a chapter over its time budget.
"""

import numpy as np
import pytest

from icml25 import htmp, rate, sae_probing, tta
from icml25.dct_gmm import ci_test, simulate
from icml25.kernel_pde import nonlinear_elliptic, solve_collocation, solve_daks
from icml25.metric_mst import exact_mst, forest_completion_mst, gaussian_mixture
from icml25.book.site.performance import sotdd_floor
from icml25.sotdd import draw_projections, otdd_exact, sotdd

pytest.importorskip("pytest_benchmark")


@pytest.fixture(scope="module")
def labelled_pair():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4000, 64))
    y = rng.integers(0, 10, 4000)
    return X[:2000], y[:2000], X[2000:], y[2000:]


@pytest.fixture(scope="module")
def labelled_pair_4000():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((8000, 64))
    y = rng.integers(0, 10, 8000)
    return X[:4000], y[:4000], X[4000:], y[4000:]


def test_sotdd_n2000_L1000(benchmark, labelled_pair):
    benchmark(lambda: sotdd(*labelled_pair, n_projections=1000, seed=0))


def test_sotdd_n4000_L1000(benchmark, labelled_pair_4000):
    benchmark(lambda: sotdd(*labelled_pair_4000, n_projections=1000, seed=0))


def test_sotdd_floor_n4000_L1000(benchmark, labelled_pair_4000):
    """The product and the sort alone (see icml25.book.site.performance.sotdd_floor)."""
    X1, _, X2, _ = labelled_pair_4000
    theta = draw_projections(64, 1000, 5, np.random.default_rng(0)).theta
    benchmark(lambda: sotdd_floor(X1, X2, theta))


def test_otdd_exact_n2000(benchmark, labelled_pair):
    benchmark.pedantic(lambda: otdd_exact(*labelled_pair), rounds=2, iterations=1)


@pytest.fixture(scope="module")
def blobs():
    return gaussian_mixture(8000, 32, 20, np.random.default_rng(0))


def test_forest_completion_n8000(benchmark, blobs):
    benchmark(lambda: forest_completion_mst(blobs, seed=0))


def test_exact_prim_n8000(benchmark, blobs):
    benchmark.pedantic(lambda: exact_mst(blobs, method="prim"), rounds=2, iterations=1)


def test_dct_gmm_ci_test_n1000_p5(benchmark):
    W = np.zeros((5, 5))
    W[1, 0] = W[2, 1] = W[3, 2] = W[4, 3] = 0.5
    observed, _ = simulate(W, 1000, 4, 0)
    benchmark(lambda: ci_test(observed, 0, 4, [1, 2, 3]))


def test_newton_kronecker_elliptic_64(benchmark):
    benchmark(lambda: solve_collocation(nonlinear_elliptic(), 64))


def test_daks_elliptic_24(benchmark):
    benchmark.pedantic(lambda: solve_daks(nonlinear_elliptic(), 24), rounds=2, iterations=1)


def test_rate_effects_n2000(benchmark):
    pool = rate.make_pool(300, 0)
    table = rate.lexicon_reward(pool.texts)
    rng = np.random.default_rng(0)
    reviews, codes = rate.sample(pool.size, 2000, rate.design("sentiment", 0.5), rng)
    rewriter = rate.RuleRewriter("sentiment")
    benchmark(lambda: rate.effects_from_table(table, reviews, codes, rewriter, rng))


def test_htmp_sample_and_fit_n2000(benchmark):
    rng = np.random.default_rng(0)
    benchmark(lambda: htmp.fit_kappa(htmp.sample_htmp(2000, 2.0, 1.0, rng), 2.0, (0.01, 30.0)))


def test_tta_ssa_one_round(benchmark):
    x_train, y_train, x_test, y_test = tta.load_digits16(0)
    model = tta.train_source(x_train, y_train, seed=0)
    stream = tta.make_stream(x_test, y_test, seed=0)
    benchmark.pedantic(lambda: tta.run_stream(lambda: tta.SSA(model), stream), rounds=3,
                       iterations=1)


def test_sae_probing_scarcity_one_dataset(benchmark):
    data = sae_probing.load()
    sae, _ = sae_probing.train_sae(data.rows(3), n_latents=1024, epochs=2, seed=0)
    probes = sae_probing.baseline_probes("small") + sae_probing.sae_probes(sae)
    name = data.names[0]
    benchmark.pedantic(lambda: sae_probing.run_regime(data, 3, "scarcity", (16, 256), probes,
                                                      datasets=[name]), rounds=3, iterations=1)
