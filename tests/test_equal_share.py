"""Equal share: games, payoffs, worst opponents, self-play strategies, learners, bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml25 import equal_share as es

simplex3 = st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3).filter(
    lambda v: sum(v) > 1e-3).map(lambda v: np.array(v) / sum(v))


# ----------------------------------------------------------------------------- games


def test_majority_vote_payoffs():
    vote = es.majority_vote(3)
    assert es.payoff(vote, [1, 0], [1, 0]) == pytest.approx(1 / 3)
    assert es.payoff(vote, [1, 0], [0, 1]) == 0.0
    assert es.payoff(vote, [0.5, 0.5], [0, 1]) == pytest.approx(1 / 6)
    assert es.payoff_against(vote, [1, 0], [[1, 0], [0, 1]]) == pytest.approx(0.5)
    minority = es.minority_vote(3)
    assert es.payoff_against(minority, [1, 0], [[1, 0], [0, 1]]) == 0.0
    assert es.payoff_against(minority, [0, 1], [[1, 0], [0, 1]]) == 0.0


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 5), st.integers(2, 4), st.integers(0, 10_000), st.data())
def test_equal_share_on_the_diagonal(n, A, seed, data):
    """U(sigma; sigma) = C/n for every sigma: symmetry plus constant sum."""
    game = es.random_game(n, A, seed=seed, total=2.0)
    raw = np.array(data.draw(st.lists(st.floats(0.01, 1.0), min_size=A, max_size=A)))
    sigma = raw / raw.sum()
    assert es.payoff(game, sigma, sigma) == pytest.approx(2.0 / n, abs=1e-10)
    assert game.payoff_vectors(sigma).max() >= 2.0 / n - 1e-10
    assert es.exploitability(game, sigma) >= -1e-10


@settings(max_examples=20, deadline=None)
@given(st.integers(3, 4), st.integers(2, 3), st.integers(0, 1000))
def test_dense_round_trip_and_profiles(n, A, seed):
    game = es.random_game(n, A, seed=seed)
    again = es.game_from_tensor(game.dense())
    np.testing.assert_allclose(again.values, game.values, atol=1e-12)
    assert again.total == pytest.approx(1.0)
    u = game.dense()
    rng = np.random.default_rng(seed)
    x, s = rng.dirichlet(np.ones(A)), rng.dirichlet(np.ones(A))
    dense = u
    for _ in range(n - 1):
        dense = dense @ s
    assert es.payoff(game, x, s) == pytest.approx(float(x @ dense), abs=1e-12)
    opponents = rng.dirichlet(np.ones(A), size=n - 1)
    dense = u
    for o in opponents[::-1]:
        dense = dense @ o
    assert es.payoff_against(game, x, opponents) == pytest.approx(float(x @ dense), abs=1e-12)


def test_many_players_count_form():
    for make in (es.majority_vote, es.switch_dominance):
        game = make(31)
        s = np.array([0.3, 0.7])
        assert es.payoff(game, s, s) == pytest.approx(1 / 31, abs=1e-12)
        assert np.all(np.isfinite(game.payoff_vectors(s)))


def test_jacobian_matches_finite_differences():
    game = es.random_game(4, 3, seed=2)
    s = np.array([0.2, 0.3, 0.5])
    h = 1e-6
    num = np.stack([(game.payoff_vectors(s + h * e) - game.payoff_vectors(s - h * e)) / (2 * h)
                    for e in np.eye(3)], 1)
    np.testing.assert_allclose(game.payoff_jacobian(s), num, atol=1e-8)


def test_two_player_maximin_secures_half():
    for i in range(5):
        game = es.random_game(2, 4, seed=i)
        x, value = es.two_player_maximin(game)
        assert value == pytest.approx(0.5, abs=1e-9)
        assert min(es.payoff(game, x, e) for e in np.eye(4)) >= 0.5 - 1e-9


# ----------------------------------------------------------------------------- bad input


def test_bad_games_raise():
    with pytest.raises(ValueError, match="equal length"):
        es.game_from_tensor(np.zeros((2, 3)))
    u = es.random_game(3, 2, seed=0).dense().copy()
    u[0, 0, 1] += 0.1
    with pytest.raises(ValueError, match="not symmetric"):
        es.game_from_tensor(u)
    v = np.zeros((2, 2))
    v[0, 1] = 1.0
    with pytest.raises(ValueError, match="not constant-sum"):
        es.game_from_tensor(v)
    with pytest.raises(ValueError, match="SymmetricGame or a payoff tensor"):
        es.payoff("vote", [1, 0], [1, 0])
    with pytest.raises(ValueError, match="n_players"):
        es.random_game(1, 2, seed=0)
    with pytest.raises(ValueError, match="threshold"):
        es.switch_dominance(5, threshold=5)
    with pytest.raises(ValueError, match="not constant-sum"):
        es.SymmetricGame(3, np.arange(6.0).reshape(2, 3), 1.0)


def test_bad_strategies_raise():
    vote = es.majority_vote(3)
    with pytest.raises(ValueError, match="sum to 1"):
        es.payoff(vote, [0.5, 0.6], [1, 0])
    with pytest.raises(ValueError, match="2 entries"):
        es.payoff(vote, [1, 0, 0], [1, 0])
    with pytest.raises(ValueError, match="non-negative"):
        es.payoff(vote, [1.5, -0.5], [1, 0])
    with pytest.raises(ValueError, match="opponents must have shape"):
        es.payoff_against(vote, [1, 0], [[1, 0]])
    with pytest.raises(ValueError, match="2-player"):
        es.two_player_maximin(vote)


def test_bad_learner_input_raises():
    vote = es.majority_vote(3)
    with pytest.raises(ValueError, match="horizon is required"):
        es.hedge(vote, [1, 0])
    with pytest.raises(ValueError, match="learner must be one of"):
        es.simulate(vote, "ftrl", [1, 0], 10)
    with pytest.raises(ValueError, match="observe"):
        es.hedge(vote, [1, 0], 10, observe="bandit")
    with pytest.raises(ValueError, match="horizon"):
        es.Hedge(2, 0)
    with pytest.raises(ValueError, match="meta"):
        es.StronglyAdaptive(2, 10, meta="exp3")
    with pytest.raises(ValueError, match="rate"):
        es.ResponsiveOpponents(vote, 0.0)
    with pytest.raises(ValueError, match="period"):
        es.switching([[1, 0]], 0, 10)
    with pytest.raises(ValueError, match="opponents must be"):
        es.hedge(vote, np.tile([1.0, 0.0], (5, 1)), 10)
    with pytest.raises(ValueError, match="payoff_range"):
        es.hedge_epsilon(2, 100, 0.0)
    with pytest.raises(ValueError, match="n_actions"):
        es.hedge_rate(1, 100)
    with pytest.raises(ValueError, match="sum to 1"):
        es.switching([[0.5, 0.6]], 2, 10)
    with pytest.raises(ValueError, match="same length"):
        es.drifting([1, 0], [0, 0, 1], 4, 10)
    with pytest.raises(ValueError, match="cloning needs"):
        es.play_gains("clone", np.ones((1, 2)), 5)
    with pytest.raises(ValueError, match="3 actions, not 2"):
        es.simulate(vote, "hedge", es.ResponsiveOpponents(es.random_game(3, 3, seed=0), 0.5),
                    10)
    with pytest.raises(ValueError, match="3-player"):
        es.quadratic_form(es.majority_vote(5), [1, 0])


# ----------------------------------------------------------------------------- worst opponents


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), simplex3)
def test_exact_worst_opponent_beats_grid(seed, x):
    """The support enumeration is a global minimum: no simplex grid point is lower."""
    game = es.random_game(3, 3, seed=seed)
    sigma, value = es.worst_identical_opponent(game, x)
    assert es.payoff(game, x, sigma) == pytest.approx(value, abs=1e-10)
    grid = es.simplex_grid(3, 30)
    assert value <= (game.payoff_vectors(grid) @ x).min() + 1e-10


def test_worst_opponent_two_actions_and_peer():
    vote = es.majority_vote(5)
    sigma, value = es.worst_identical_opponent(vote, [0.5, 0.5])
    assert value == pytest.approx(0.1, abs=1e-9)  # opponents unanimous: C/(2n)
    game = es.random_game(3, 4, seed=3)
    x = np.full(4, 0.25)
    _, exact = es.worst_identical_opponent(game, x)
    _, nm = es.worst_identical_opponent_scipy(game, x, starts=5, seed=0)
    assert nm >= exact - 1e-9
    _, local = es.worst_identical_opponent(es.random_game(4, 3, seed=3), np.full(3, 1 / 3))
    assert np.isfinite(local)


def test_self_play_outputs():
    vote = es.majority_vote(3)
    assert es.exploitability(vote, es.symmetric_equilibrium(vote)) <= 1e-9
    for seed in range(3):
        game = es.random_game(3, 4, seed=seed)
        eq = es.symmetric_equilibrium(game, seed=seed)
        assert es.exploitability(game, eq) <= 1e-5
        for out in (es.fictitious_self_play(game, 200, seed=seed),
                    es.hedge_self_play(game, 200, seed=seed)):
            assert out.sum() == pytest.approx(1.0) and np.all(out >= 0)


# ----------------------------------------------------------------------------- learners


@pytest.mark.parametrize("seed", range(4))
def test_hedge_meets_its_bound(seed):
    game = es.random_game(3, 4, seed=seed)
    sigma = np.random.default_rng(seed).dirichlet(np.ones(4))
    T = 2000
    pay = es.hedge(game, sigma, T)
    best = game.payoff_vectors(sigma).max()
    assert pay.mean() >= best - es.hedge_epsilon(4, T, game.payoff_range) - 1e-12
    assert pay.mean() >= game.equal_share - es.hedge_epsilon(4, T, game.payoff_range)


def test_hedge_matches_closed_form():
    vote = es.majority_vote(3)
    T = 500
    pay = es.hedge(vote, [0, 1], T)
    eta = es.hedge_rate(2, T, vote.payoff_range)
    t = np.arange(T)
    p1 = 1 / (1 + np.exp(-eta * t / 3))  # action 1 gains 1/3 per round over action 0
    np.testing.assert_allclose(pay, p1 / 3, atol=1e-12)


def test_learners_track_switching_and_fail_fast():
    vote = es.majority_vote(3)
    slow = es.switching([[1, 0], [0, 1]], 500, 4000)
    assert es.behaviour_cloning(vote, slow).mean() > 0.33
    assert es.strongly_adaptive(vote, slow).mean() > es.hedge(vote, slow).mean() + 0.08
    fast = es.switching([[1, 0], [0, 1]], 1, 2000)
    assert es.behaviour_cloning(vote, fast).mean() < 0.01


def test_saol_intervals_and_weights():
    saol = es.StronglyAdaptive(2, 64)
    for t in range(1, 20):
        awake = saol.awake[0]
        assert awake.sum() == int(np.floor(np.log2(t))) + 1  # levels with 2^k <= t
        q = saol.weights()
        assert q.sum() == pytest.approx(1.0) and np.all(q[0][~awake] == 0)
        saol.strategy()
        saol.update(np.array([[0.0, 1.0]]), None)


def test_batched_equals_single_and_sampled_is_seeded():
    vote = es.majority_vote(3)
    seqs = np.stack([es.switching([[1, 0], [0, 1]], P, 300) for P in (1, 50)], 1)
    batched = es.simulate(vote, "saol", seqs)
    for j in range(2):
        np.testing.assert_allclose(batched[:, j], es.strongly_adaptive(vote, seqs[:, j]),
                                   atol=1e-12)
    game = es.random_game(3, 3, seed=1)
    sigma = np.array([0.2, 0.3, 0.5])
    a = es.hedge(game, sigma, 300, observe="sampled", seed=4)
    b = es.hedge(game, sigma, 300, observe="sampled", seed=4)
    np.testing.assert_array_equal(a, b)


def test_instantly_adapting_opponents_hold_learners_to_maximin():
    vote = es.majority_vote(3)
    for learner in ("hedge", "saol", "clone"):
        opp = es.ResponsiveOpponents(vote, 1.0, lag=0)
        assert es.simulate(vote, learner, opp, 300).mean() <= 1 / 6 + 1e-9


@pytest.mark.parametrize("period", [64, 256, 1024])
def test_saol_regret_is_small_on_every_block(period):
    """Strong adaptivity: on each block where the opponents stay put, SAOL's regret against
    the block's best action is O(sqrt(|I| log T)) (constant 1 here; measured about 0.35)."""
    vote, T = es.majority_vote(3), 4096
    seq = es.switching([[1, 0], [0, 1]], period, T)
    pay = es.strongly_adaptive(vote, seq)
    g = vote.payoff_vectors(seq)
    for s in range(0, T, period):
        regret = g[s:s + period].sum(0).max() - pay[s:s + period].sum()
        assert regret <= np.sqrt(period * np.log(T))


def test_sampled_feedback_keeps_the_guarantee_on_average():
    """With sampled opponents' actions, Hedge's mean over seeds stays above the best
    action's payoff less epsilon_T (three standard errors of slack)."""
    game = es.random_game(3, 4, seed=1)
    sigma = np.array([0.1, 0.2, 0.3, 0.4])
    runs = np.array([es.hedge(game, sigma, 1000, observe="sampled", seed=s).mean()
                     for s in range(20)])
    bound = game.payoff_vectors(sigma).max() - es.hedge_epsilon(4, 1000, game.payoff_range)
    assert runs.mean() + 3 * runs.std(ddof=1) / np.sqrt(len(runs)) >= bound


# ----------------------------------------------------------------------------- rates


@pytest.mark.parametrize("seed", range(3))
def test_hedge_closed_form_matches_the_loop(seed):
    rng = np.random.default_rng(seed)
    gains = rng.uniform(size=(4, 3))
    R = rng.uniform(0.5, 2.0, size=4)
    for T in (1, 37, 500):
        loop = es.play_gains("hedge", gains / R[:, None], T).mean(0) * R
        np.testing.assert_allclose(es.hedge_fixed_average(gains, T, R), loop, atol=1e-12)


def test_saol_deficits_are_prefixes_of_one_run():
    """SAOL does not depend on T, so the prefix average equals a run of that length."""
    game = es.random_game(3, 3, seed=5)
    sigma = es.symmetric_equilibrium(game, seed=1)
    g = game.payoff_vectors(sigma)[None]
    horizons = np.array([16, 100, 256])
    d = es.equal_share_deficits("saol", g, game.equal_share, horizons, game.payoff_range)
    for T, dT in zip(horizons, d[:, 0]):
        pay = es.strongly_adaptive(game, sigma, int(T)).mean()
        assert dT == pytest.approx(game.equal_share - pay, abs=1e-12)


def test_deficit_at_equilibrium_is_regret_and_within_the_bound():
    vote = es.majority_vote(3)
    g = vote.payoff_vectors(np.array([0.0, 1.0]))[None]  # both opponents on action 1
    horizons = np.array([64, 256, 1024, 4096])
    d = es.equal_share_deficits("hedge", g, vote.equal_share, horizons, vote.payoff_range)
    eps = np.array([es.hedge_epsilon(2, int(T), vote.payoff_range) for T in horizons])
    assert np.all(d[:, 0] > 0) and np.all(d[:, 0] <= eps)
    # one gap of 1/3: the regret tends to ln 2 / eta, so the exponent tends to -1/2
    est = es.deficit_exponent(horizons, d, n_boot=50, seed=0)
    assert -0.52 < est.value < -0.45
    assert est.low == pytest.approx(est.value) and est.high == pytest.approx(est.value)


def test_deficit_exponent_recovers_a_power_law():
    rng = np.random.default_rng(0)
    T = np.array([100, 200, 400, 800, 1600])
    scale = rng.uniform(0.5, 2.0, size=30)
    d = np.outer(T ** -0.5, scale) * rng.uniform(0.95, 1.05, size=(5, 30))
    est = es.deficit_exponent(T, d, n_boot=500, seed=1)
    assert est.low <= -0.5 <= est.high and abs(est.value + 0.5) < 0.03


def test_bad_rate_input_raises():
    g = np.ones((2, 3))
    with pytest.raises(ValueError, match="learner"):
        es.equal_share_deficits("clone", g, 1 / 3, [10, 20])
    with pytest.raises(ValueError, match="increasing"):
        es.equal_share_deficits("hedge", g, 1 / 3, [20, 10])
    with pytest.raises(ValueError, match="integers"):
        es.equal_share_deficits("hedge", g, 1 / 3, [10.5, 20.0])
    with pytest.raises(ValueError, match="payoff_range"):
        es.hedge_fixed_average(g, 10, -1.0)
    with pytest.raises(ValueError, match="positive"):
        es.deficit_exponent([10, 20], np.zeros((2, 3)))
    with pytest.raises(ValueError, match="H = len"):
        es.deficit_exponent([10, 20, 40], np.ones((2, 3)))
