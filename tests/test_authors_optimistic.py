"""Chapter 14 beside the authors' released code (raja-sunkara/Learned-Partitions-SequOOL, run
outside the project).

``data/reference/optimistic/authors_sequool.npz`` holds what their code computed, unmodified
(their driver, ``make_reference.py``, is stored in the file as ``scripts``):

* ``fn_<name>_d<d>_*``: their test functions (``src/utils/coco_functions.py``, built as their
  ``scripts/main.py`` builds them: ``default_rng(123)``, $[-5,5]^d$, $m=2$): the rotation
  ``R``, ``xopt``, ``fopt`` and their values ``F`` at 200 uniform points ``X``;
* ``hmax_theirs``: their $h_{\\max}=\\lfloor n/\\overline{\\log}(n)\\rfloor$ for $n=1..3000$;
* ``seq_<name>_d<d>_n<n>_*``: their SequOOL (``src/sequool.py``): every evaluated point ``X``
  and value ``F``, the regret list, and ``status`` (printed count, depth, opened index) of
  each evaluation but the root;
* ``lrn_<name>_d5_n300_s<seed>_*``: their learned-subspace SequOOL
  (``src/dimension_reduction.py``, compressed sensing with $m_\\phi=4$, $m_x=100$, the
  defaults of ``configs/run.yaml``): points, values, regret list, learned ``directions``,
  ``NUM_SAMPLES``, and the $\\ell_1$ optimum ``l1`` and minimiser ``ghat`` of each of their
  100 cvxpy solves (Clarabel).

Their functions are maximised as $-f$ and report the regret $f-f_{\\rm opt}$; ours minimise
$f$ with $\\min f=0$. Our problems are built from their ``R`` and ``xopt``: the same functions
(first test), so both optimisers run on the same function.
"""

from __future__ import annotations

import numpy as np
import pytest
from icml25.common import data
from icml25.optimistic import (
    _ST_ARGMIN,
    Problem,
    basis_pursuit,
    learned_partition,
    principal_angle,
    sequool,
    sequool_schedule,
)
from icml25.optimistic.problems import _BRANIN_MIN, _t_osz
from scipy.spatial.distance import cdist

REFERENCE = "reference/optimistic/authors_sequool.npz"
SAME_FUNCTIONS = ["sphere", "sharp_ridge", "rastrigin", "branin", "styblinski_tang"]
SEQ_RUNS = [("sharp_ridge", 5, 100), ("sharp_ridge", 5, 500), ("sharp_ridge", 5, 1500),
            ("rastrigin", 5, 100), ("rastrigin", 5, 500), ("sharp_ridge", 10, 500)]
LRN_RUNS = [(name, seed) for name in ("sharp_ridge", "rastrigin") for seed in (0, 1, 2)]
M_PHI, M_X, EPS, LRN_N = 4, 100, 1e-3, 300   # their configs/run.yaml and the driver's n
_CACHE: dict = {}


def _ref():
    if "ref" not in _CACHE:
        with np.load(data.path(REFERENCE)) as file:
            _CACHE["ref"] = {key: file[key] for key in file.files}
    return _CACHE["ref"]


def _problem(name: str, d: int) -> tuple[Problem, float]:
    """Our problem on their function's rotation and optimum, and their f_opt."""
    ref, key = _ref(), f"fn_{name}_d{d}"
    A = ref[key + "_R"][:2].copy()
    if name == "branin":            # theirs: branin(R[:2] x); ours: minimiser z = 0 at (pi, 2.275)
        x_star = A.T @ np.array(_BRANIN_MIN)
    elif name == "styblinski_tang":  # theirs: sum ST(R[:2] x); ours shifted to the exact argmin
        x_star = A.T @ np.full(2, _ST_ARGMIN)
    else:
        x_star = ref[key + "_xopt"][0].copy()
    return Problem(name, A, x_star, np.tile([-5.0, 5.0], (d, 1))), float(ref[key + "_fopt"])


def _matched(ours: np.ndarray, theirs: np.ndarray, tol: float) -> bool:
    """Whether the two point sets are the same up to ``tol``: with ``tol`` <= 1e-12 a
    one-to-one nearest match; with a larger ``tol`` (cells so narrow that siblings are closer
    than ``tol``) as many points and a Hausdorff distance <= ``tol``."""
    if ours.shape != theirs.shape:
        return False
    dist = cdist(ours, theirs)
    close = bool(np.all(dist.min(axis=1) <= tol) and np.all(dist.min(axis=0) <= tol))
    if tol > 1e-12:
        return close
    return close and np.array_equal(np.sort(dist.argmin(axis=1)), np.arange(len(theirs)))


def _tolerance(h: int, dims: int, width: float) -> float:
    """Point tolerance at depth h: 1e-12 while the cells of depth h+1 are wider than 1e-6
    (``width / 3**((h + 1) // dims)`` is their largest side), 1e-6 below."""
    side = width / 3.0 ** ((h + 1) // dims)
    return 1e-12 if side > 1e-6 else 1e-6


def _openings(n: int) -> list[int]:
    """Boxes our SequOOL opens at each depth with budget n (sequool's rule, replayed)."""
    h_max, caps = sequool_schedule(n)
    remaining, at_depth, opened = n - 1, 1, []
    for h in range(h_max + 1):
        k = min(int(caps[h]), at_depth, remaining // 2)
        if k < 1:
            break
        opened.append(k)
        remaining -= 2 * k
        at_depth = 3 * k
    return opened


def _their_openings(status: np.ndarray) -> list[int]:
    depths = status[:, 1]
    return [int(np.sum(depths == h)) // 2 for h in range(int(depths.max()) + 1)]


@pytest.mark.parametrize("name", SAME_FUNCTIONS)
@pytest.mark.parametrize("d", [5, 10])
def test_our_test_functions_are_theirs(name, d):
    """Sphere, sharp ridge, rotated Rastrigin, Branin and Styblinski-Tang: our
    ``Problem.f`` on their rotation and optimum equals their ``evaluate_full`` minus their
    ``f_opt`` at 200 uniform points. Tolerance 1e-12 relative to $1+|F|$: float rounding only
    (their values carry $f_{\\rm opt}=268.94$ or $-78.33$, whose subtraction costs a few ulps
    of $|F|\\approx 10^2$; their Styblinski-Tang $f_{\\rm opt}$ is taken at the rounded argmin
    $-2.903534$, which moves it by $O(10^{-15})$). Measured at most 6.7e-14."""
    ref, key = _ref(), f"fn_{name}_d{d}"
    problem, f_opt = _problem(name, d)
    ours = problem.f(ref[key + "_X"])
    theirs = ref[key + "_F"]
    gap = np.abs(ours - (theirs - f_opt)) / (1 + np.abs(theirs))
    assert gap.max() <= 1e-12, gap.max()
    assert np.ptp(ours) > 1.0        # not a flat probe


@pytest.mark.parametrize("d", [5, 10])
def test_our_ellipsoid_is_ten_thousand_times_worse_conditioned(d):
    """By design the book's ellipsoid is COCO's, $\\sum_i 10^{6(i-1)/(m-1)}T_{osz}(z)_i^2$
    (coefficients 1 and $10^6$ for $m=2$); the released ``EllipsoidRotated`` uses
    $100^{(i-1)/(m-1)}$ (1 and 100). Both are pinned against their formula at the same points
    (relative 1e-12, float rounding; measured 2.7e-15), and their difference is
    $(10^6-10^2)\\,T_{osz}(z)_2^2$, so the values differ by a factor near $10^4$."""
    ref, key = _ref(), f"fn_ellipsoid_d{d}"
    problem, f_opt = _problem("ellipsoid", d)
    X = ref[key + "_X"]
    t = _t_osz((X - problem.x_star) @ problem.A.T)
    theirs = ref[key + "_F"] - f_opt
    ours = problem.f(X)
    assert np.max(np.abs(theirs - (t[:, 0] ** 2 + 1e2 * t[:, 1] ** 2)) / (1 + theirs)) <= 1e-12
    assert np.max(np.abs(ours - (t[:, 0] ** 2 + 1e6 * t[:, 1] ** 2)) / (1 + ours)) <= 1e-12
    ratio = np.median(ours / theirs)
    assert 5e3 < ratio <= 1e4, ratio


def test_sequool_depth_budget_is_theirs_for_every_n():
    """$h_{\\max}=\\lfloor n/\\overline{\\log}(n)\\rfloor$: our ``sequool_schedule`` (NumPy sum)
    and their ``harmonic_number`` (Python sum) agree exactly for every $n\\le 3000$."""
    ref = _ref()
    ours = np.array([sequool_schedule(int(n))[0] for n in ref["hmax_n"]])
    assert np.array_equal(ours, ref["hmax_theirs"])


@pytest.mark.parametrize("name,d,n", SEQ_RUNS)
def test_sequool_evaluates_their_points_and_finds_their_regret(name, d, n):
    """Deterministic SequOOL, same function, same budget n. Exact equality of the schedule:
    boxes opened per depth, $\\min(\\lfloor h_{\\max}/h\\rfloor, N_h)$, and the number of
    evaluations (91, 465, 1447 for n = 100, 500, 1500: below n in both codes). The same
    evaluated points at every depth within 1e-12 (their child centre $(5a+b)/6$ and ours
    $a+(b-a)/6$ round differently; measured 1.4e-15) while the cells are wider than 1e-6.
    Deeper, boxes whose values tie to the last bits are broken differently by the two
    roundings, so there the points are compared within 1e-6 (Hausdorff): at n = 1500 the sets
    are identical at the first 144 of 191 depths and within 5e-13 below; the other runs are
    identical at every depth; at least 75% of the depths must match within 1e-12. The best
    value after each depth is the same within 1e-11 absolute (their regret is
    $F-f_{\\rm opt}$ with $F$ carrying $f_{\\rm opt}=268.94$: a few ulps of 370; measured
    3e-14). Within a depth the order differs (they evaluate the left and right child box by
    box, we all left ones, then all right ones), so the traces are compared at the depth
    boundaries only."""
    ref, key = _ref(), f"seq_{name}_d{d}_n{n}"
    problem, _ = _problem(name, d)
    X, regret, status = ref[key + "_X"], ref[key + "_regret"], ref[key + "_status"]
    res = sequool(problem.f, problem.bounds, n, vectorized=True, history=True)
    opened = _openings(n)
    assert _their_openings(status) == opened
    assert int(status[:, 1].max()) == sequool_schedule(n)[0] == len(opened) - 1
    assert res.n_evals == len(X) == len(regret) == 1 + 2 * sum(opened) <= n
    ours = res.info["points"]
    assert _matched(ours[:1], X[:1], 1e-12)
    start, exact = 1, []
    for h, k in enumerate(opened):
        stop = start + 2 * k
        assert _matched(ours[start:stop], X[start:stop], _tolerance(h, d, 10.0)), h
        exact.append(_matched(ours[start:stop], X[start:stop], 1e-12))
        assert abs(res.trace[stop - 1] - regret[stop - 1]) <= 1e-11, h
        start = stop
    assert abs(res.fun - regret[-1]) <= 1e-11
    assert np.mean(exact) >= 0.75


@pytest.mark.parametrize("name,seed", LRN_RUNS)
def test_learning_draws_are_theirs_but_they_evaluate_300_more(name, seed):
    """Same seed, same draws: the 100 sensing points on the unit sphere and the Rademacher
    matrix $\\Phi$ (our ``learn_subspace`` draws them as their ``dantzig_selector`` does), so
    our 500 learning points are their 500 distinct points bit for bit. Their accounting
    differs by design: ``dantzig_selector`` re-evaluates $f(X_j)$ for each of the 4
    directions, 800 evaluations, while ``NUM_SAMPLES`` records $m_\\phi m_x+m_x=500$, as we
    spend. Exact integer equalities."""
    ref, key = _ref(), f"lrn_{name}_d5_n{LRN_N}_s{seed}"
    problem, _ = _problem(name, 5)
    X = ref[key + "_X"]
    res = learned_partition(problem.f, problem.bounds, M_PHI * M_X + M_X + LRN_N, active_dim=2,
                            seed=seed, learn_evals=M_PHI * M_X + M_X, clip=False,
                            vectorized=True, history=True)
    ours = res.info["points"][:res.n_learn]
    theirs = X[:2 * M_PHI * M_X]
    assert res.n_learn == int(ref[key + "_num_samples"]) == M_PHI * M_X + M_X == 500
    assert np.array_equal(np.unique(ours, axis=0), np.unique(theirs, axis=0))
    assert len(np.unique(theirs, axis=0)) == 500 and len(theirs) == 800


def _sensing(problem, seed):
    """Our learning points, Phi and forward differences Y (m_x, m_phi) for one seed."""
    res = learned_partition(problem.f, problem.bounds, 600, active_dim=2, seed=seed,
                            learn_evals=M_PHI * M_X + M_X, vectorized=True, history=True)
    pts, vals = res.info["points"], res.info["values"]
    base, shifted = pts[:M_X], pts[M_X:M_X * (M_PHI + 1)].reshape(M_X, M_PHI, -1)
    phi = 0.5 * np.sign(shifted[0] - base[0])             # entries +-1/sqrt(m_phi)
    Y = (vals[M_X:M_X * (M_PHI + 1)].reshape(M_X, M_PHI) - vals[:M_X, None]) / EPS
    return res, phi, Y


@pytest.mark.parametrize("name,seed", LRN_RUNS)
def test_basis_pursuit_reaches_their_l1_optimum(name, seed):
    """Their cvxpy (Clarabel) and our ADMM solve $\\min\\|g\\|_1$ s.t. $\\Phi g=y$ on the same
    $\\Phi$ and $y$ (theirs $-y$: they sense $-f$). The optimal $\\ell_1$ values agree within
    1e-8 relative (Clarabel's default tolerances are 1e-8; measured at most 1.1e-11), and
    both minimisers are feasible within 1e-6 (measured 1e-9). For seeds 1 and 2 the
    minimiser is unique and the two are the same point within 1e-7 of $\\max|g|$ (measured
    4e-10 absolute). For seed 0 the $\\pm1$ matrix $\\Phi$ makes the $\\ell_1$ norm flat along
    its null vector: the minimiser is not unique, interior point and ADMM stop at different
    points of the flat face (apart by 0.73 on the sharp ridge, 4.2 on Rastrigin; pinned above
    0.1), and their difference lies in $\\Phi$'s null space (residual below 1e-6)."""
    ref, key = _ref(), f"lrn_{name}_d5_n{LRN_N}_s{seed}"
    problem, _ = _problem(name, 5)
    _, phi, Y = _sensing(problem, seed)
    ours = basis_pursuit(phi, Y.T).T                       # (m_x, d)
    theirs = -ref[key + "_ghat"]
    l1_ours, l1_theirs = np.abs(ours).sum(axis=1), ref[key + "_l1"]
    assert np.max(np.abs(l1_ours - l1_theirs) / l1_theirs) <= 1e-8
    assert np.max(np.abs(theirs @ phi.T - Y)) <= 1e-6
    assert np.max(np.abs(ours @ phi.T - Y)) <= 1e-6
    gap = np.max(np.abs(ours - theirs))
    if seed == 0:
        assert gap > 0.1, gap
        assert np.max(np.abs((ours - theirs) @ phi.T)) <= 1e-6
    else:
        assert gap <= 1e-7 * np.max(np.abs(theirs)), gap


def test_learned_planes_agree_where_the_l1_face_allows_and_both_miss_the_truth():
    """The learned plane (top-2 right singular vectors of the recovered gradients): ours and
    theirs coincide within 1e-6 degrees in the 4 runs of seeds 1 and 2 (measured 3e-11 to
    2e-10) and differ by 9.3 and 1.1 degrees in the two of seed 0 (sharp ridge, Rastrigin),
    where the different $\\ell_1$ minimisers tilt the plane; pinned as 4 runs below 1e-6 and
    2 in (0.3, 30) degrees.
    Against the true plane both are far off at these defaults ($d=5$, $m_\\phi=4$, 100 points):
    largest principal angle 27 to 66 degrees, median about 40 in both (theirs 41.1, ours 40.6);
    pinned as a median above 20 degrees in both. (Their ``angle`` output equals ours for their
    plane within 1e-6 degrees.)"""
    ref = _ref()
    between, ours_true, theirs_true = [], [], []
    for name, seed in LRN_RUNS:
        key = f"lrn_{name}_d5_n{LRN_N}_s{seed}"
        problem, _ = _problem(name, 5)
        res, _, _ = _sensing(problem, seed)
        W = ref[key + "_directions"]
        between.append(np.rad2deg(principal_angle(res.subspace, W)))
        ours_true.append(np.rad2deg(principal_angle(res.subspace, problem.A.T)))
        theirs_true.append(np.rad2deg(principal_angle(W, problem.A.T)))
        assert abs(theirs_true[-1] - ref[key + "_angle"].max()) <= 1e-6
    between = np.array(between)
    assert np.sum(between < 1e-6) == 4, between
    assert np.sum((between > 0.3) & (between < 30)) == 2, between
    assert np.median(ours_true) > 20 and np.median(theirs_true) > 20
    assert min(ours_true + theirs_true) > 10


@pytest.mark.parametrize("name,seed", LRN_RUNS)
def test_search_on_their_plane_is_theirs_and_counts_points_outside(name, seed):
    """Given their learned plane (``subspace=``) and ``clip=False``, our search on the box of
    coordinates evaluates their points: the same count (263 for n = 300, exact), the same
    points within 1e-12 at every depth (rounding of the coordinate box, measured below 1e-14)
    while the cells are wider than 1e-6, within 1e-6 (Hausdorff) below (near-ties broken by
    the last bits: Rastrigin seeds 0 and 2 part at depths 40 and 38 of 48, by at most 1.6e-8),
    the same share outside $[-5,5]^5$ (exact), and the same best value within 1e-11. Their
    reported regret counts the points outside the domain; computed from their own points,
    their in-domain best equals our ``best_inside`` within 1e-11. The first run (sharp ridge,
    seed 0) shows the difference this makes: its best point is outside, with regret 1.8e-4,
    while the best point inside has 3.5 (pinned: a factor above 1e3)."""
    ref, key = _ref(), f"lrn_{name}_d5_n{LRN_N}_s{seed}"
    problem, f_opt = _problem(name, 5)
    X, F, status = ref[key + "_X"], ref[key + "_F"], ref[key + "_status"]
    learn = 2 * M_PHI * M_X
    Xs, Fs = X[learn:], F[learn:] - f_opt
    res = learned_partition(problem.f, problem.bounds, LRN_N, active_dim=2,
                            subspace=ref[key + "_directions"], clip=False, vectorized=True,
                            history=True)
    opened = _openings(LRN_N)
    assert _their_openings(status) == opened
    assert res.n_evals == len(Xs) == 1 + 2 * sum(opened) == 263
    ours = res.info["points"]
    width = 2 * 5.0 * np.abs(ref[key + "_directions"]).sum(axis=0).max()
    assert _matched(ours[:1], Xs[:1], 1e-12)
    start, exact = 1, []
    for h, k in enumerate(opened):
        stop = start + 2 * k
        assert _matched(ours[start:stop], Xs[start:stop], _tolerance(h, 2, width)), h
        exact.append(_matched(ours[start:stop], Xs[start:stop], 1e-12))
        start = stop
    assert np.mean(exact) >= 0.75
    inside = np.all(np.abs(Xs) <= 5.0, axis=1)
    assert res.info["outside_share"] == float(np.mean(~inside))
    assert abs(res.fun - Fs.min()) <= 1e-11
    regret = ref[key + "_regret"]
    assert abs(regret[-1] - max(min(Fs.min(), F[:learn].min() - f_opt), 0.0)) <= 1e-11
    assert abs(res.info["best_inside"] - Fs[inside].min()) <= 1e-11
    if (name, seed) == ("sharp_ridge", 0):
        assert res.info["best_outside"] and not inside[np.argmin(Fs)]
        assert Fs[inside].min() > 1e3 * regret[-1] and regret[-1] < 1e-3


@pytest.mark.parametrize("name,seed", LRN_RUNS)
def test_their_regret_list_is_300_evaluations_short(name, seed):
    """Their learned method's regret list has one entry per *recorded* sample: 500 for the
    learning step (``NUM_SAMPLES``, all equal to the best learning value, not a running
    best) and one per search evaluation, 763 in all, against 1,063 evaluations of $f$ (800
    learning + 263 search, the learning on top of the search budget n = 300). Ours: with the
    learning counted in a budget of 800, 763 evaluations and a trace of 763 running bests.
    Exact integer equalities; the constant head within 1e-11 (float rounding)."""
    ref, key = _ref(), f"lrn_{name}_d5_n{LRN_N}_s{seed}"
    problem, f_opt = _problem(name, 5)
    F, regret = ref[key + "_F"], ref[key + "_regret"]
    learn, n_samples = 2 * M_PHI * M_X, int(ref[key + "_num_samples"])
    assert len(F) == learn + 263 == 1063
    assert len(regret) == n_samples + 263 == 763 == len(F) - 300
    assert np.all(np.abs(regret[:n_samples] - (F[:learn].min() - f_opt)) <= 1e-11)
    res = learned_partition(problem.f, problem.bounds, 800, active_dim=2, seed=seed,
                            learn_evals=500, clip=False, vectorized=True)
    assert res.n_evals == res.trace.size == 763
    assert res.n_evals <= 800
    assert np.all(np.diff(res.trace) <= 0)
