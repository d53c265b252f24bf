"""Optimistic optimisation with learned partitions: kernels, budgets, test functions, errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from icml25 import optimistic as oo

BOX2 = np.array([[-1.0, 1.0], [-2.0, 3.0]])


def quadratic(x):
    return float(((np.asarray(x) - np.array([0.3, 0.4])) ** 2).sum())


# ----------------------------------------------------------------------------- budgets


@settings(max_examples=30, deadline=None)
@given(budget=st.integers(1, 400), name=st.sampled_from(oo.FUNCTIONS),
       d=st.integers(2, 8), seed=st.integers(0, 1000))
def test_no_method_exceeds_its_budget(budget, name, d, seed):
    """Counted by a wrapper that refuses the call; learning samples included."""
    problem = oo.make_problem(name, d, seed=seed)
    calls = []

    def f(x):
        calls.append(1)
        return problem.f(x)

    results = [oo.sequool(f, problem.bounds, budget),
               oo.random_search(f, problem.bounds, budget, seed=seed)]
    if budget >= 50:
        results.append(oo.learned_partition(f, problem.bounds, budget, active_dim=2,
                                            seed=seed))
    for res in results:
        assert 1 <= res.n_evals <= budget
        assert res.trace.size == res.n_evals
        assert np.all(np.diff(res.trace) <= 0)
        assert res.fun == res.trace[-1] == pytest.approx(problem.f(res.x))
    assert len(calls) == sum(r.n_evals for r in results)


@pytest.mark.parametrize("method", [oo.direct, oo.cma_es])
def test_peers_respect_the_budget(method):
    problem = oo.make_problem("sharp_ridge", 6, seed=3)
    calls = []

    def f(x):
        calls.append(1)
        return problem.f(x)

    res = method(f, problem.bounds, 137)
    assert len(calls) == res.n_evals <= 137
    assert res.n_evals >= 100


def test_counted_function_refuses_beyond_budget():
    fc = oo.CountedFunction(quadratic, 3)
    fc(np.zeros(2))
    fc(np.ones((2, 2)))
    with pytest.raises(oo.BudgetExhausted):
        fc(np.zeros(2))
    assert fc.count == 3
    assert fc.result().trace.tolist() == [0.25, 0.25, 0.25]


# ----------------------------------------------------------------------------- SequOOL


def test_sequool_schedule_and_first_evaluations():
    h_max, caps = oo.sequool_schedule(1000)
    assert h_max == int(1000 // sum(1 / i for i in range(1, 1001))) == 133
    assert caps[0] == 1 and caps[1] == 133 and caps[133] == 1
    seen = []

    def f(x):
        seen.append(np.array(x))
        return quadratic(x)

    oo.sequool(f, BOX2, 5)
    # root centre, then the two outer thirds along axis 0, then along axis 1 of the best
    assert np.allclose(seen[0], [0.0, 0.5])
    assert np.allclose(seen[1], [-2 / 3, 0.5]) and np.allclose(seen[2], [2 / 3, 0.5])
    assert np.allclose(seen[3], [0.0, 0.5 - 5 / 3]) and np.allclose(seen[4], [0.0, 0.5 + 5 / 3])


def test_sequool_converges_on_a_smooth_function():
    res = oo.sequool(quadratic, BOX2, 2000)
    assert res.fun < 1e-6
    assert oo.sequool(quadratic, BOX2, 2000).fun == res.fun  # deterministic


def test_vectorized_and_pointwise_agree():
    problem = oo.make_problem("rastrigin", 5, seed=1)
    a = oo.sequool(problem.f, problem.bounds, 300, vectorized=True)
    b = oo.sequool(lambda x: problem.f(x), problem.bounds, 300)
    np.testing.assert_allclose(a.trace, b.trace, rtol=1e-9, atol=1e-12)
    c = oo.learned_partition(problem.f, problem.bounds, 300, active_dim=2, seed=4,
                             vectorized=True)
    e = oo.learned_partition(problem.f, problem.bounds, 300, active_dim=2, seed=4)
    np.testing.assert_allclose(c.trace, e.trace, rtol=1e-6, atol=1e-9)


# ----------------------------------------------------------------------------- learning


@pytest.mark.parametrize("d,k", [(5, 3), (10, 4), (20, 8)])
def test_basis_pursuit_matches_linear_programming(d, k):
    rng = np.random.default_rng(d)
    phi = rng.choice([-1.0, 1.0], size=(k, d)) / np.sqrt(k)
    while np.linalg.matrix_rank(phi) < k:
        phi = rng.choice([-1.0, 1.0], size=(k, d)) / np.sqrt(k)
    Y = phi @ rng.standard_normal((d, 5))
    X = oo.basis_pursuit(phi, Y)
    np.testing.assert_allclose(phi @ X, Y, atol=1e-9)
    for j in range(5):
        lp = linprog(np.ones(2 * d), A_eq=np.c_[phi, -phi], b_eq=Y[:, j], bounds=(0, None))
        assert np.abs(X[:, j]).sum() == pytest.approx(lp.fun, rel=2e-4)


def test_basis_pursuit_recovers_a_sparse_vector():
    rng = np.random.default_rng(0)
    d, k = 40, 20
    phi = rng.choice([-1.0, 1.0], size=(k, d)) / np.sqrt(k)
    g = np.zeros(d)
    g[[3, 17]] = [2.0, -1.0]
    np.testing.assert_allclose(oo.basis_pursuit(phi, phi @ g, iterations=2000), g, atol=1e-3)


@pytest.mark.parametrize("name", ["sphere", "sharp_ridge", "branin"])
def test_full_differences_find_the_subspace(name):
    problem = oo.make_problem(name, 12, seed=7)
    fc = oo.CountedFunction(problem.f, 10_000, vectorized=True)
    V = oo.learn_subspace(fc, np.zeros(12), 2, 6, directions=12, rng=1)
    assert fc.count == 6 * 13
    assert np.degrees(oo.principal_angle(V, problem.A.T)) < 1.0
    np.testing.assert_allclose(V.T @ V, np.eye(2), atol=1e-12)


def test_oracle_subspace_solves_a_multi_index_sphere():
    problem = oo.make_problem("sphere", 20, seed=2)
    res = oo.learned_partition(problem.f, problem.bounds, 500, active_dim=2,
                               subspace=problem.A.T, vectorized=True)
    assert res.n_learn == 0 and res.fun < 1e-8


def test_learned_is_deterministic_given_seed():
    problem = oo.make_problem("sharp_ridge", 8, seed=0)
    runs = [oo.learned_partition(problem.f, problem.bounds, 400, active_dim=2, seed=s,
                                 vectorized=True).fun for s in (1, 1, 2)]
    assert runs[0] == runs[1]


@pytest.mark.parametrize("name,d", [("sphere", 10), ("sharp_ridge", 10), ("sphere", 20)])
def test_neural_surrogate_recovers_a_planted_subspace(name, d):
    """f(x) = g(Ax): the first layer's top singular directions span the rows of A."""
    problem = oo.make_problem(name, d, seed=11)
    fc = oo.CountedFunction(problem.f, 10_000, vectorized=True)
    V = oo.neural_subspace(fc, problem.bounds, 2, 400, rng=5)
    assert fc.count == 400
    np.testing.assert_allclose(V.T @ V, np.eye(2), atol=1e-12)
    angle = np.degrees(oo.principal_angle(V, problem.A.T))
    # a random plane in d >= 10 is almost surely > 60 degrees off; the surrogate is close
    assert angle < 15.0
    random_plane = np.linalg.qr(np.random.default_rng(0).standard_normal((d, 2)))[0]
    assert np.degrees(oo.principal_angle(random_plane, problem.A.T)) > 3 * angle


def test_neural_surrogate_is_equivariant_under_box_scaling():
    """On a box with half-widths w the learned directions are diag(1/w) times those learned
    for the same function on [-1, 1]^d, from the same samples (gradients scale by 1/w)."""
    problem = oo.make_problem("sharp_ridge", 6, seed=8)
    bounds = np.c_[-np.arange(1.0, 7.0), np.arange(1.0, 7.0)] + 0.5     # centre 0.5
    centre, half = bounds.mean(1), (bounds[:, 1] - bounds[:, 0]) / 2
    cube = np.tile([-1.0, 1.0], (6, 1))

    def on_cube(u):
        return problem.f(centre + np.atleast_2d(u) * half)

    V = oo.neural_subspace(oo.CountedFunction(problem.f, 500, vectorized=True), bounds,
                           2, 200, rng=2)
    U = oo.neural_subspace(oo.CountedFunction(on_cube, 500, vectorized=True), cube, 2,
                           200, rng=2)
    assert np.degrees(oo.principal_angle(V, U / half[:, None])) < 1e-6


def test_neural_surrogate_is_deterministic_given_seed():
    problem = oo.make_problem("branin", 8, seed=4)
    runs = [oo.learned_partition(problem.f, problem.bounds, 300, active_dim=2, seed=s,
                                 learner="neural", vectorized=True) for s in (3, 3, 4)]
    np.testing.assert_array_equal(runs[0].subspace, runs[1].subspace)
    assert runs[0].fun == runs[1].fun
    assert not np.array_equal(runs[0].subspace, runs[2].subspace)
    assert runs[0].n_learn == 60 and runs[0].n_evals <= 300


def test_learning_on_top_and_unclipped_points():
    """The released code's accounting: learn_evals on top, points outside not clipped."""
    problem = oo.make_problem("branin", 10, seed=6)
    calls = []

    def f(x):
        calls.append(np.atleast_2d(x).shape[0])
        return problem.f(x)

    res = oo.learned_partition(f, problem.bounds, 700, active_dim=2, seed=1,
                               learn_evals=200, clip=False, vectorized=True, history=True)
    assert res.n_learn == 200 and sum(calls) == res.n_evals <= 700
    pts, vals = res.info["points"], res.info["values"]
    np.testing.assert_allclose(vals, problem.f(pts))
    inside = np.all(np.abs(pts) <= 5.0, axis=1)
    assert res.info["outside_share"] == pytest.approx(np.mean(~inside[200:]))
    assert res.info["best_inside"] == pytest.approx(vals[inside].min())
    assert res.info["best_outside"] == (not inside[np.argmin(vals)])
    clipped = oo.learned_partition(problem.f, problem.bounds, 700, active_dim=2, seed=1,
                                   learn_evals=200, vectorized=True, history=True)
    assert np.all(np.abs(clipped.info["points"]) <= 5.0)
    np.testing.assert_array_equal(clipped.subspace, res.subspace)


# ----------------------------------------------------------------------------- problems


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(oo.FUNCTIONS), d=st.integers(2, 30), seed=st.integers(0, 10**6))
def test_problems_have_minimum_zero_in_the_box(name, d, seed):
    problem = oo.make_problem(name, d, seed=seed)
    A = problem.A
    np.testing.assert_allclose(A @ A.T, np.eye(2), atol=1e-12)
    # the projection of x* on the active subspace is a minimiser inside the box
    x_min = A.T @ (A @ problem.x_star) + (problem.x_star - A.T @ (A @ problem.x_star)) * 0
    assert np.all(np.abs(x_min) <= 5 + 1e-12)
    assert abs(problem.f(problem.x_star)) < 1e-9
    assert abs(problem.f(x_min)) < 1e-9
    rng = np.random.default_rng(seed)
    X = rng.uniform(-5, 5, (200, d))
    assert np.all(problem.f(X) >= -1e-9)
    # constant along the inactive directions
    null = rng.standard_normal(d)
    null -= A.T @ (A @ null)
    assert problem.f(X[0]) == pytest.approx(problem.f(X[0] + 0.1 * null), abs=1e-9)


def test_known_minima():
    # Branin's three minimisers all give 0; Styblinski-Tang's stationary point
    z = np.array([[0.0, 0.0], [-2 * np.pi, 10.0], [3 * np.pi - np.pi, 2.475 - 2.275]])
    np.testing.assert_allclose(oo._g("branin", z), 0.0, atol=1e-5)
    t = oo._ST_ARGMIN
    assert 4 * t**3 - 32 * t + 5 == pytest.approx(0.0, abs=1e-9)
    assert oo._g("sharp_ridge", np.array([[1.0, 3.0, 4.0]]))[0] == pytest.approx(51.0)


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize("bounds,match", [
    (np.empty((0, 2)), "non-empty"),
    (np.array([[1.0, 0.0]]), "inverted"),
    (np.array([[0.0, 0.0]]), "inverted"),
    (np.array([0.0, 1.0]), r"\(d, 2\)"),
    (np.array([[0.0, np.inf]]), "finite"),
])
def test_bad_bounds(bounds, match):
    for method in (oo.sequool, oo.random_search, oo.direct, oo.cma_es):
        with pytest.raises(ValueError, match=match):
            method(quadratic, bounds, 10)
    with pytest.raises(ValueError, match=match):
        oo.learned_partition(quadratic, bounds, 100, active_dim=1)


@pytest.mark.parametrize("budget", [0, -3, 2.5, True])
def test_bad_budget(budget):
    with pytest.raises(ValueError, match="budget"):
        oo.sequool(quadratic, BOX2, budget)
    with pytest.raises(ValueError, match="budget"):
        oo.learned_partition(quadratic, BOX2, budget, active_dim=1)


def test_other_errors():
    with pytest.raises(ValueError, match="active_dim"):
        oo.learned_partition(quadratic, BOX2, 100, active_dim=3)
    with pytest.raises(ValueError, match="too small"):
        oo.learned_partition(quadratic, BOX2, 5, active_dim=2)
    with pytest.raises(ValueError, match="learn_fraction"):
        oo.learned_partition(quadratic, BOX2, 100, active_dim=1, learn_fraction=1.5)
    with pytest.raises(ValueError, match="subspace"):
        oo.learned_partition(quadratic, BOX2, 100, active_dim=1, subspace=np.eye(2))
    with pytest.raises(TypeError, match="callable"):
        oo.sequool("f", BOX2, 10)
    with pytest.raises(ValueError, match="unknown learner"):
        oo.learned_partition(quadratic, BOX2, 100, active_dim=1, learner="pca")
    with pytest.raises(ValueError, match="learn_evals"):
        oo.learned_partition(quadratic, BOX2, 100, active_dim=1, learn_evals=100)
    with pytest.raises(ValueError, match="samples"):
        oo.neural_subspace(oo.CountedFunction(quadratic, 10), BOX2, 1, 1)
    with pytest.raises(ValueError, match="unknown function"):
        oo.make_problem("himmelblau", 5)
    with pytest.raises(ValueError, match="branin"):
        oo.make_problem("branin", 5, active_dim=3)
    with pytest.raises(ValueError, match="full row rank"):
        oo.basis_pursuit(np.ones((2, 4)), np.ones(2))
    with pytest.raises(ValueError, match="rows"):
        oo.basis_pursuit(np.eye(2, 4), np.ones(3))
    with pytest.raises(ValueError, match="n must"):
        oo.Result(None, 0.0, 1, np.zeros(1)).best_at(0)
    with pytest.raises(ValueError, match="unknown method"):
        oo.benchmark(["sphere"], [5], [0], [100], methods=["nelder_mead"])
    with pytest.raises(ValueError, match="NaN"):
        oo.sequool(lambda x: np.nan, BOX2, 3)
