"""s-OTDD and exact OTDD: exactness of the kernels, the distance's properties, bad input."""

import math

import numpy as np
import ot
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import factorial
from threadpoolctl import threadpool_limits

from icml25.sotdd import (
    Projections,
    _check_dataset,
    draw_projections,
    otdd_exact,
    project_dataset,
    sotdd,
    wasserstein_1d_pp,
)


def blobs(n, d=3, classes=3, seed=0, shift=0.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    X = rng.standard_normal((n, d)) * 0.5 + y[:, None] + shift
    return X, y


datasets = st.tuples(
    st.integers(4, 40), st.integers(4, 40), st.integers(1, 4), st.integers(0, 10_000)
)


# ----------------------------------------------------------------------------- kernels


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(1, 30), st.integers(1, 4), st.integers(0, 999),
       st.sampled_from([1.0, 2.0, 3.0]))
def test_wasserstein_1d_matches_pot(na, nb, m, seed, p):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((na, m)), rng.standard_normal((nb, m)) + 0.3
    ours = wasserstein_1d_pp(a, b, p)
    theirs = [ot.wasserstein_1d(a[:, j], b[:, j], p=p) for j in range(m)]
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_project_dataset_matches_the_definition():
    """z = psi_0 theta^T x + sum_j psi_j mean_{class}((theta^T x')^lambda_j) / lambda_j!"""
    X, y = blobs(30, d=4, classes=3, seed=1)
    proj = draw_projections(4, 7, 5, np.random.default_rng(2))
    z = project_dataset(X, y, proj)
    for l in range(7):
        t, lam, psi = proj.theta[l], proj.moments[l], proj.psi[l]
        for i in range(len(X)):
            same = X[y == y[i]] @ t
            mtp = [np.mean(same ** lam[j]) / factorial(lam[j]) for j in range(5)]
            assert z[i, l] == pytest.approx(psi[0] * X[i] @ t + np.dot(psi[1:], mtp), rel=1e-10)


def test_projection_draws():
    rng = np.random.default_rng(0)
    proj = draw_projections(10, 20_000, 5, rng)
    np.testing.assert_allclose(np.linalg.norm(proj.theta, axis=1), 1.0)
    np.testing.assert_allclose(np.linalg.norm(proj.psi, axis=1), 1.0)
    assert proj.moments.min() >= 1
    # zero-truncated Poisson(j) has mean j / (1 - e^{-j}); 20,000 draws give ~1% precision
    expected = np.array([j / (1 - math.exp(-j)) for j in range(1, 6)])
    np.testing.assert_allclose(proj.moments.mean(0), expected, rtol=0.03)


# ----------------------------------------------------------------------------- s-OTDD


@settings(max_examples=25, deadline=None)
@given(datasets)
def test_identity_and_symmetry_are_exact(spec):
    n1, n2, classes, seed = spec
    X1, y1 = blobs(n1, classes=classes, seed=seed)
    X2, y2 = blobs(n2, classes=classes, seed=seed + 1, shift=0.5)
    assert sotdd(X1, y1, X1, y1, n_projections=50, seed=seed) == 0.0
    assert sotdd(X1, y1, X2, y2, n_projections=50, seed=seed) == sotdd(
        X2, y2, X1, y1, n_projections=50, seed=seed
    )


@settings(max_examples=20, deadline=None)
@given(datasets)
def test_label_names_do_not_matter(spec):
    n1, n2, classes, seed = spec
    X1, y1 = blobs(n1, classes=classes, seed=seed)
    X2, y2 = blobs(n2, classes=classes, seed=seed + 1)
    renamed = np.array(["cat", "dog", "emu", "fox"])[::-1][y2]  # strings, other order
    assert sotdd(X1, y1, X2, renamed, n_projections=40, seed=3) == pytest.approx(
        sotdd(X1, y1, X2, y2, n_projections=40, seed=3), rel=1e-12
    )


def test_unequal_sizes_disjoint_labels_and_class_counts():
    X1, y1 = blobs(50, classes=2, seed=0)
    X2, y2 = blobs(37, classes=5, seed=1)
    value = sotdd(X1, y1, X2, y2 + 100, n_projections=100, seed=0)
    assert np.isfinite(value) and value > 0


def test_label_noise_increases_the_distance_while_features_stay():
    X, y = blobs(300, classes=3, seed=0)
    rng = np.random.default_rng(1)
    values = []
    for f in (0.0, 0.3, 0.7):
        noisy = np.where(rng.random(300) < f, rng.integers(0, 3, 300), y)
        values.append(sotdd(X, y, X, noisy, n_projections=500, seed=0))
    assert values[0] == 0 and values[0] < values[1] < values[2]


def test_monte_carlo_estimate_is_unbiased_for_the_squared_distance():
    """Mean of many small-L estimates of s-OTDD^2 ≈ a large-L value, within 4 standard errors."""
    X1, y1 = blobs(60, seed=0)
    X2, y2 = blobs(60, seed=1, shift=0.3)
    small = np.array([sotdd(X1, y1, X2, y2, n_projections=20, seed=s) ** 2 for s in range(200)])
    _, per = sotdd(X1, y1, X2, y2, n_projections=40_000, seed=10_000, return_per_projection=True)
    stderr = math.sqrt(small.var(ddof=1) / len(small) + per.var() / len(per))
    assert abs(small.mean() - per.mean()) < 4 * stderr


def test_chunking_bounds_memory_not_the_result_distribution():
    X1, y1 = blobs(80, seed=0)
    X2, y2 = blobs(80, seed=1, shift=0.3)
    a = sotdd(X1, y1, X2, y2, n_projections=4000, chunk_size=4000, seed=0)
    b = sotdd(X1, y1, X2, y2, n_projections=4000, chunk_size=7, seed=0)
    assert a == pytest.approx(b, rel=0.05)


def test_deterministic_given_seed():
    X1, y1 = blobs(40, seed=0)
    X2, y2 = blobs(40, seed=1)
    assert sotdd(X1, y1, X2, y2, seed=5) == sotdd(X1, y1, X2, y2, seed=5)
    assert sotdd(X1, y1, X2, y2, seed=5) != sotdd(X1, y1, X2, y2, seed=6)


def test_psi_on_the_feature_axis_is_label_blind():
    X, y = blobs(40, seed=0)
    proj = draw_projections(3, 5, 4, np.random.default_rng(0))
    blind = Projections(proj.theta, proj.moments, np.eye(5)[[0] * 5])
    np.testing.assert_allclose(project_dataset(X, y, blind), X @ proj.theta.T)


# ----------------------------------------------------------------------------- the fused kernel


def sotdd_by_definition(X1, y1, X2, y2, *, n_projections, n_moments=5, p=2.0, seed,
                        chunk_size=250):
    """s-OTDD as the definition reads (the implementation before the fused kernel): the same
    draws, each dataset through `project_dataset`, then `wasserstein_1d_pp` per chunk."""
    c1, c2 = (np.unique(y, return_inverse=True)[1] for y in (y1, y2))
    rng = np.random.default_rng(seed)
    per = []
    for start in range(0, n_projections, chunk_size):
        proj = draw_projections(X1.shape[1], min(chunk_size, n_projections - start), n_moments,
                                rng)
        per.append(wasserstein_1d_pp(project_dataset(X1, c1, proj), project_dataset(X2, c2, proj),
                                     p))
    per = np.concatenate(per)
    return float(np.mean(per) ** (1 / p)), per


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 120), st.integers(2, 120), st.integers(1, 8), st.integers(1, 6),
       st.integers(1, 400), st.integers(1, 300), st.sampled_from([1.0, 1.5, 2.0, 3.0]),
       st.booleans(), st.integers(0, 10_000))
def test_fused_kernel_gives_the_definitions_values(n1, n2, classes, k, L, chunk, p, same, seed):
    rng = np.random.default_rng(seed)
    n2 = n1 if same else n2
    X1 = rng.standard_normal((n1, 5)) * 1.5
    X2 = rng.standard_normal((n2, 5)) + 0.4
    y1, y2 = rng.integers(0, classes, n1), rng.integers(0, classes, n2) + 50
    ours, w = sotdd(X1, y1, X2, y2, n_projections=L, n_moments=k, p=p, seed=seed,
                    chunk_size=chunk, return_per_projection=True)
    ref, w_ref = sotdd_by_definition(X1, y1, X2, y2, n_projections=L, n_moments=k, p=p,
                                     seed=seed, chunk_size=chunk)
    np.testing.assert_allclose(w, w_ref, rtol=1e-11, atol=1e-15)
    assert ours == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("block_bytes", [1, 8 * 200 * 3, 1 << 30])
def test_block_size_changes_nothing(monkeypatch, block_bytes):
    """One row per block, a few rows, the whole chunk: the same values."""
    import icml25.sotdd as module

    X1, y1 = blobs(200, d=6, classes=4, seed=0)
    X2, y2 = blobs(150, d=6, classes=3, seed=1, shift=0.3)
    monkeypatch.setattr(module, "_BLOCK_BYTES", block_bytes)
    _, w = sotdd(X1, y1, X2, y2, n_projections=300, seed=2, return_per_projection=True)
    _, w_ref = sotdd_by_definition(X1, y1, X2, y2, n_projections=300, seed=2)
    np.testing.assert_allclose(w, w_ref, rtol=1e-11)


def test_classes_longer_than_one_run_of_the_kernel():
    """Classes of more points than the compiled kernel evaluates at once (``_RUN``)."""
    from icml25.sotdd import _RUN

    X1, y1 = blobs(3 * _RUN + 7, d=4, classes=2, seed=5)
    X2, y2 = blobs(2 * _RUN + 1, d=4, classes=3, seed=6, shift=0.2)
    for p in (1.0, 2.0):
        _, w = sotdd(X1, y1, X2, y2, n_projections=50, p=p, seed=1, return_per_projection=True)
        _, w_ref = sotdd_by_definition(X1, y1, X2, y2, n_projections=50, p=p, seed=1)
        np.testing.assert_allclose(w, w_ref, rtol=1e-11)


@pytest.mark.parametrize("n1, n2, p", [(300, 300, 2.0), (300, 211, 2.0), (257, 257, 1.0),
                                       (700, 700, 2.0)])
def test_float32_gives_the_float64_values_to_float32_rounding(n1, n2, p):
    """``dtype="float32"`` (the authors' precision): the same projections, each value within
    float32 rounding of the float64 one (relative 1e-4 per projection: products of 16 terms,
    squared differences of sorted values and the label moments in float32), so the distance
    agrees far inside its Monte-Carlo error, which the test measures beside it."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n1 + n2, n_features=16, n_informative=6,
                               n_classes=4, n_clusters_per_class=1, random_state=3)
    args = X[:n1], y[:n1], X[n1:], y[n1:]
    d64, w64 = sotdd(*args, n_projections=2000, p=p, seed=7, return_per_projection=True)
    d32, w32 = sotdd(*args, n_projections=2000, p=p, seed=7, return_per_projection=True,
                     dtype="float32")
    assert w32.dtype == np.float64 and w32.shape == w64.shape
    np.testing.assert_allclose(w32, w64, rtol=1e-4, atol=1e-9)
    assert not np.array_equal(w32, w64)  # it is another computation, not the float64 one
    mc_error = w64.std(ddof=1) / (p * w64.mean()) / math.sqrt(len(w64))  # relative, of d
    assert abs(d32 / d64 - 1) < 1e-5 < mc_error / 100
    assert sotdd(*args[:2], *args[:2], n_projections=50, dtype="float32") == 0.0


@pytest.mark.parametrize("n1, p, expected", [(800, 2, 0.4228121557071441),
                                             (700, 2, 0.4282204032132217),
                                             (800, 1, 0.14615853004576057)])
def test_values_of_the_implementation_before_the_fused_kernel(n1, p, expected):
    """Pinned values of the unfused implementation (the chapter's figures rest on them)."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=1400, n_features=16, n_informative=6, n_classes=4,
                               n_clusters_per_class=1, random_state=3)
    value = sotdd(X[:n1], y[:n1], X[n1:], y[n1:], n_projections=600, p=p, seed=11)
    assert value == pytest.approx(expected, rel=1e-12)


# ----------------------------------------------------------------------------- exact OTDD


def brute_force_otdd(X1, y1, X2, y2):
    c1, c2 = np.unique(y1), np.unique(y2)
    W = {}
    for a in c1:
        for b in c2:
            A, B = X1[y1 == a], X2[y2 == b]
            M = np.array([[np.sum((u - v) ** 2) for v in B] for u in A])
            W[a, b] = ot.emd2(np.full(len(A), 1 / len(A)), np.full(len(B), 1 / len(B)), M)
    C = np.array([[np.sum((X1[i] - X2[j]) ** 2) + W[y1[i], y2[j]] for j in range(len(X2))]
                  for i in range(len(X1))])
    return math.sqrt(ot.emd2(np.full(len(X1), 1 / len(X1)), np.full(len(X2), 1 / len(X2)), C))


def test_otdd_exact_matches_brute_force():
    X1, y1 = blobs(12, classes=3, seed=0)
    X2, y2 = blobs(9, classes=2, seed=1, shift=0.4)
    assert otdd_exact(X1, y1, X2, y2) == pytest.approx(brute_force_otdd(X1, y1, X2, y2), rel=1e-9)


def test_otdd_exact_identity_symmetry_and_single_class():
    X1, y1 = blobs(20, seed=0)
    X2, y2 = blobs(20, seed=1, shift=0.4)
    assert otdd_exact(X1, y1, X1, y1) == pytest.approx(0.0, abs=1e-7)
    assert otdd_exact(X1, y1, X2, y2) == pytest.approx(otdd_exact(X2, y2, X1, y1), rel=1e-9)
    # one class on each side: the label cost is the constant W_2^2(X1, X2), so OTDD^2 = 2 W_2^2
    w2 = ot.emd2(np.full(20, 0.05), np.full(20, 0.05), ot.dist(X1, X2))
    assert otdd_exact(X1, np.zeros(20), X2, np.ones(20)) ** 2 == pytest.approx(2 * w2, rel=1e-9)


# ----------------------------------------------------------------------------- bad input

X_OK, Y_OK = blobs(10)


@pytest.mark.parametrize("fn", [sotdd, otdd_exact])
@pytest.mark.parametrize(
    "args, message",
    [
        ((X_OK, Y_OK[:-1], X_OK, Y_OK), "10 rows but y has 9 labels"),
        ((X_OK[:, 0], Y_OK, X_OK, Y_OK), "must be a 2-D array"),
        ((np.where(X_OK > 1, np.nan, X_OK), Y_OK, X_OK, Y_OK), "NaN"),
        ((X_OK, Y_OK, X_OK[:, :2], Y_OK), "different feature dimensions"),
        ((X_OK[:0], Y_OK[:0], X_OK, Y_OK), "empty"),
        ((X_OK, Y_OK[:, None], X_OK, Y_OK), "1-D array of labels"),
        ((X_OK, Y_OK, X_OK.astype(str), Y_OK), "real numbers"),
    ],
)
def test_bad_input_raises_clear_errors(fn, args, message):
    with pytest.raises(ValueError, match=message):
        fn(*args)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(n_projections=0), "n_projections must be positive"),
        (dict(n_moments=2.5), "n_moments must be an integer"),
        (dict(p=0.5), "p must be a number >= 1"),
        (dict(chunk_size=-1), "chunk_size must be positive"),
        (dict(dtype="float16"), "dtype must be 'float64' or 'float32'"),
    ],
)
def test_bad_settings_raise_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        sotdd(X_OK, Y_OK, X_OK, Y_OK, **kwargs)


def test_labels_are_recoded_to_dense_codes():
    X, codes = _check_dataset(X_OK, np.array(list("abcab" * 2)), "d")
    assert codes.tolist() == [0, 1, 2, 0, 1] * 2


# ----------------------------------------------------------------------------- authors' code

AUTHORS = "reference/sotdd/authors_digits.npz"  # hainn2803/s-OTDD, run outside the project


@pytest.fixture(scope="module")
def authors():
    """Reference values of the authors' code and the 12 digit pairs they were computed on."""
    from sklearn.datasets import load_digits

    from icml25.common import data

    with np.load(data.path(AUTHORS)) as file:
        ref = {key: file[key] for key in file.files}
    X = load_digits().data / 16.0
    pairs = []
    for i in range(len(ref["distance"])):
        one, two = slice(*ref["off1"][i : i + 2]), slice(*ref["off2"][i : i + 2])
        pairs.append((X[ref["idx1"][one]], ref["y1"][one], X[ref["idx2"][two]], ref["y2"][two]))
    return ref, pairs


def test_authors_code_gives_the_same_value_per_projection(authors):
    ref, pairs = authors
    shared = Projections(ref["theta"], ref["moments"], ref["psi"])
    kinds = set()
    for (X1, y1, X2, y2), theirs in zip(pairs, ref["per_projection"]):
        kinds.add((len(y1) == len(y2), bool(np.intersect1d(y1, y2).size)))
        c1, c2 = (np.unique(y, return_inverse=True)[1] for y in (y1, y2))
        ours = wasserstein_1d_pp(project_dataset(X1, c1, shared), project_dataset(X2, c2, shared))
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=0)
    # the pairs cover both 1-D transport paths and disjoint label sets
    assert kinds == {(True, True), (False, True), (False, False)}


def test_authors_code_gives_the_same_distance_within_monte_carlo_error(authors):
    ref, pairs = authors
    L, L_theirs = 10_000, int(ref["n_projections"])
    z = []
    for i, ((X1, y1, X2, y2), theirs) in enumerate(zip(pairs, ref["distance"])):
        with threadpool_limits(1):  # small products: threads only contend on a busy machine
            ours, w = sotdd(X1, y1, X2, y2, n_projections=L, seed=i, return_per_projection=True)
        # delta method: sd of log sqrt(mean W^2) is sd(W^2) / (2 mean W^2) / sqrt(L)
        se = w.std(ddof=1) / (2 * w.mean()) * math.sqrt(1 / L + 1 / L_theirs)
        z.append(math.log(ours / theirs) / se)
    z = np.array(z)
    assert np.all(np.abs(z) <= 4), z  # each pair; 4 standard errors over 12 pairs
    assert abs(z.mean()) <= 4 / math.sqrt(len(z)), z  # and no shared bias
