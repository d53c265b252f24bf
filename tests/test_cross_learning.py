"""Cross-learning bandits: environments, feedback discipline, valid policies, regret, seeds."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml25.cross_learning import (
    FEEDBACK_DTYPE,
    BalseiroOracle,
    ContextBlindExp3,
    FirstPriceAuction,
    FixedPolicy,
    Learner,
    PerContextExp3,
    Problem,
    SchneiderZimmert,
    SleepingBandit,
    TableEnvironment,
    estimation_round_adversary,
    gaussian_bump,
    hindsight_optimum,
    rare_context_adversary,
    simulate,
)


def all_learners(env, horizon=None):
    return {
        "sz": SchneiderZimmert(epoch_length=8 if horizon else None),
        "sz_unpaired": SchneiderZimmert(epoch_length=5 if horizon else None, paired=False),
        "oracle": BalseiroOracle(env.context_probs),
        "per_context": PerContextExp3(),
        "blind": ContextBlindExp3(),
    }


def random_table(rng, T, C, K):
    return rng.random((T, C, K))


class Recorder(Learner):
    """Wraps a learner; records what it is shown and checks every policy it returns."""

    def __init__(self, inner, allowed=None):
        self.inner, self.allowed = inner, allowed
        self.cross_learning = inner.cross_learning
        self.contexts, self.actions, self.feedback, self.policies = [], [], [], []

    def reset(self, problem, n_seeds, horizon, rng):
        self.inner.reset(problem, n_seeds, horizon, rng)
        self.allowed = problem.allowed

    def policy(self, contexts):
        p = self.inner.policy(contexts)
        self.contexts.append(contexts.copy())
        self.policies.append(p.copy())
        return p

    def update(self, actions, feedback):
        self.actions.append(actions.copy())
        self.feedback.append(np.array(feedback, copy=True))
        self.inner.update(actions, feedback)


# --------------------------------------------------------------------------- environments


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 30), st.integers(1, 8),
       st.sampled_from(FirstPriceAuction.ADVERSARIES), st.integers(0, 2**31 - 1))
def test_auction_losses_in_range_and_views_agree(n_values, n_bids, adversary, seed):
    env = FirstPriceAuction(n_values, n_bids, adversary=adversary)
    rng = np.random.default_rng(seed)
    for rnd in itertools.islice(env.rounds(5, 40, rng), 0, 40, 7):
        table = rnd.table()
        assert table.shape == (5, n_values, n_bids)
        assert table.min() >= 0 and table.max() <= 1
        actions = rng.integers(0, n_bids, 5)
        contexts = rng.integers(0, n_values, 5)
        col = rnd.at_action(actions)
        assert col.dtype == FEEDBACK_DTYPE and col.shape == (5, n_values)
        np.testing.assert_allclose(col, table[np.arange(5), :, actions], atol=1e-7)
        np.testing.assert_array_equal(rnd.at_context(contexts), table[np.arange(5), contexts])


def test_auction_loss_formula_and_exact_cross_learning():
    """l(v, b) = (1 - (v - b) 1[b >= m]) / 2, and winning does not depend on the value."""
    env = FirstPriceAuction(4, 4, adversary="stationary")
    rnd = next(env.rounds(3, 10, np.random.default_rng(0)))
    m = rnd.competing
    v, b = env.values[None, :, None], env.bids[None, None, :]
    expected = (1 - (v - b) * (b >= m[:, None, None])) / 2
    np.testing.assert_allclose(rnd.table(), expected)
    # one bid's column is determined by the single bit "won", whatever the value
    surplus = np.broadcast_to(v - b, expected.shape)
    safe = np.where(np.abs(surplus) > 1e-9, surplus, np.nan)
    won = (0.5 - rnd.table()) / safe
    np.testing.assert_allclose(np.nanmax(won, axis=1), np.nanmin(won, axis=1), atol=1e-12)


def test_adversaries_differ_and_switching_has_doubling_phases():
    env = FirstPriceAuction(5, 5, adversary="switching", first_phase=10)
    m = np.array([r.competing for r in env.rounds(2, 150, np.random.default_rng(1))])
    high = m[:, 0] >= 0.45
    assert not high[:10].any() and high[10:30].all()
    assert not high[30:70].any() and high[70:150].all()
    phases = FirstPriceAuction(5, 5, adversary="phases", n_phases=3)
    m = np.array([r.competing for r in phases.rounds(1, 90, np.random.default_rng(2))])[:, 0]
    for part in np.split(m, 3):
        assert part.max() - part.min() <= 0.3 + 1e-12


def test_sleeping_bandit_contexts_and_losses():
    env = SleepingBandit(3, availability=[0.5, 0.9, 0.2])
    assert env.n_contexts == 7 and env.allowed.any(axis=1).all()
    assert abs(env.context_probs.sum() - 1) < 1e-12
    # context {arm 1} alone: probability proportional to 0.5 * 0.9 * 0.8
    single = np.flatnonzero((env.allowed == [False, True, False]).all(axis=1))[0]
    z = 1 - 0.5 * 0.1 * 0.8
    assert env.context_probs[single] == pytest.approx(0.5 * 0.9 * 0.8 / z)
    rng = np.random.default_rng(3)
    for rnd in itertools.islice(env.rounds(4, 20, rng), 5):
        table = rnd.table()
        assert set(np.unique(table)) <= {0.0, 1.0}
        assert np.all(table[:, ~env.allowed] == 1)
        actions = np.array([0, 1, 2, 1])
        np.testing.assert_array_equal(rnd.at_action(actions), table[np.arange(4), :, actions])
        # an awake arm has the same loss in every context where it is awake
        for a in range(3):
            awake = table[:, env.allowed[:, a], a]
            assert np.all(awake == awake[:, :1])


# --------------------------------------------------------------------------- feedback


def test_feedback_is_exactly_the_played_actions_losses():
    rng = np.random.default_rng(0)
    T, C, K, S = 40, 4, 3, 3
    losses = random_table(rng, T, C, K)
    env = TableEnvironment(losses, np.full(C, 1 / C))
    spies = {n: Recorder(learner) for n, learner in all_learners(env, T).items()}
    simulate(env, spies, T, n_seeds=S, seed=5)
    for name, spy in spies.items():
        for t in range(T):
            a, c, fb = spy.actions[t], spy.contexts[t], spy.feedback[t]
            if spy.cross_learning:
                assert fb.shape == (S, C) and fb.dtype == FEEDBACK_DTYPE, name
                np.testing.assert_allclose(fb, losses[t].T[a], atol=1e-7)
            else:
                assert fb.shape == (S,), name
                np.testing.assert_array_equal(fb, losses[t, c, a])


@pytest.mark.parametrize("name", ["sz", "sz_unpaired", "oracle", "per_context", "blind"])
def test_no_peeking_unplayed_losses_do_not_matter(name):
    """Changing every loss of every action the learner did not play leaves its run unchanged."""
    rng = np.random.default_rng(1)
    T, C, K = 60, 5, 4
    losses = random_table(rng, T, C, K)
    env = TableEnvironment(losses, gaussian_bump(C))
    first = Recorder(all_learners(env, T)[name])
    simulate(env, {name: first}, T, n_seeds=1, seed=9)
    played = np.zeros((T, C, K), dtype=bool)
    played[np.arange(T), :, np.concatenate(first.actions)] = True
    altered = np.where(played, losses, rng.random((T, C, K)))
    second = Recorder(all_learners(env, T)[name])
    simulate(TableEnvironment(altered, gaussian_bump(C)), {name: second}, T, n_seeds=1, seed=9)
    np.testing.assert_array_equal(np.concatenate(first.actions), np.concatenate(second.actions))
    np.testing.assert_array_equal(np.stack(first.policies), np.stack(second.policies))


def test_learners_never_hold_the_environment():
    env = FirstPriceAuction(6, 4)
    learners = all_learners(env)
    simulate(env, learners, 30, n_seeds=2, seed=0)
    for learner in learners.values():
        for value in vars(learner).values():
            assert not isinstance(value, FirstPriceAuction)
            assert "Round" not in type(value).__name__


# --------------------------------------------------------------------------- probabilities


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 6), st.integers(1, 5), st.integers(0, 2**31 - 1))
def test_policies_are_valid_distributions(C, K, seed):
    rng = np.random.default_rng(seed)
    allowed = rng.random((C, K)) < 0.7
    allowed[np.arange(C), rng.integers(0, K, C)] = True
    probs = rng.dirichlet(np.ones(C))
    env = TableEnvironment(random_table(rng, 50, C, K), probs, allowed)
    spies = {n: Recorder(learner) for n, learner in all_learners(env, 50).items()}
    result = simulate(env, spies, 50, n_seeds=3, seed=seed)
    for name, spy in spies.items():
        P = np.stack(spy.policies)  # (T, S, K)
        assert np.all(np.isfinite(P)) and P.min() >= 0, name
        np.testing.assert_allclose(P.sum(axis=-1), 1, atol=1e-6)
        ctx = np.stack(spy.contexts)
        assert np.all(P[~allowed[ctx]] == 0), name
        assert np.all(allowed[ctx, np.stack(spy.actions)]), name
        assert np.all(np.isfinite(result.regret[name]))


def test_marginals_match_their_definitions():
    """f(a) = sum_c nu(c) pi(a|c) for the oracle; the plug-in uses the previous epoch's contexts."""
    C, K, S = 6, 3, 4
    problem = Problem(C, K, np.ones((C, K), bool))
    nu = gaussian_bump(C)
    oracle, sz = BalseiroOracle(nu), SchneiderZimmert(epoch_length=6, paired=False)
    rng = np.random.default_rng(0)
    oracle.reset(problem, S, 100, rng)
    sz.reset(problem, S, 100, rng)
    epoch_contexts = []
    for t in range(20):
        contexts = rng.integers(0, C, S)
        epoch_contexts.append(contexts)
        actions = rng.integers(0, K, S)
        feedback = rng.random((S, C)).astype(np.float32)
        for learner in (oracle, sz):
            learner.policy(contexts)
        full = np.stack([oracle.policy(np.full(S, c)) for c in range(C)], axis=1)  # (S, C, K)
        f, _ = oracle.marginal(actions)
        np.testing.assert_allclose(f, full[np.arange(S), :, actions] @ nu, rtol=1e-5)
        f_hat, _ = sz.marginal_estimate(actions)
        if t < 6:
            assert f_hat is None  # first epoch: no sample yet
        else:
            start = (t // 6 - 1) * 6
            previous = np.stack(epoch_contexts[start:start + 6])  # (6, S)
            H = np.stack([np.bincount(previous[:, s], minlength=C) / 6 for s in range(S)])
            pi = np.stack([sz.policy(np.full(S, c)) for c in range(C)], axis=1)
            expected = np.einsum("sc,sc->s", H, pi[np.arange(S), :, actions])
            np.testing.assert_allclose(f_hat, expected, rtol=1e-5)
            sz.policy(contexts)
        oracle.update(actions, feedback)
        sz.update(actions, feedback)


def test_paired_rounds_split_learning_from_estimation():
    """In each pair, the context stored for estimation is the one whose feedback was not used."""
    C, K, S, L = 40, 2, 64, 4
    problem = Problem(C, K, np.ones((C, K), bool))
    sz = SchneiderZimmert(epoch_length=L)
    sz.reset(problem, S, 1000, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    ones = np.ones((S, C), np.float32)
    for pair in range(2 * L):  # two epochs of pairs: the second one updates
        c1, c2 = rng.integers(0, C // 2, S), rng.integers(C // 2, C, S)  # disjoint halves
        sz.policy(c1)
        sz.update(np.zeros(S, int), ones)  # round 1 plays action 0
        counts_before = sz.sample_counts.copy()
        w_before = sz.weights.w.copy()
        sz.policy(c2)
        sz.update(np.ones(S, int), ones)  # round 2 plays action 1
        if sz.round_in_epoch == 0:
            continue  # the epoch just closed and the counts moved to the sample
        stored_second = (sz.sample_counts - counts_before)[np.arange(S), c2] == 1
        stored_first = (sz.sample_counts - counts_before)[np.arange(S), c1] == 1
        assert np.all(stored_first ^ stored_second)
        if sz.previous_sample is not None:
            changed = np.abs(sz.weights.w - w_before).sum(axis=2) > 0  # (S, K)
            learned_first = changed[:, 0] & ~changed[:, 1]
            learned_second = changed[:, 1] & ~changed[:, 0]
            assert np.all(learned_first == stored_second) and np.all(learned_second == stored_first)
            assert 0.2 < learned_first.mean() < 0.8  # a fair coin


def test_first_epoch_is_uniform_play():
    env = FirstPriceAuction(5, 4)
    spy = Recorder(SchneiderZimmert(epoch_length=20))
    simulate(env, {"sz": spy}, 60, n_seeds=3, seed=0)
    P = np.stack(spy.policies)
    np.testing.assert_allclose(P[:20], 0.25)
    assert np.abs(P[-1] - 0.25).max() > 1e-4


# --------------------------------------------------------------------------- regret


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_hindsight_optimum_matches_brute_force(C, K, seed):
    rng = np.random.default_rng(seed)
    T = 12
    losses = rng.random((T, C, K))
    contexts = rng.integers(0, C, T)
    allowed = rng.random((C, K)) < 0.7
    allowed[:, 0] = True
    G = np.zeros((C, K))
    np.add.at(G, contexts, losses[np.arange(T), contexts])
    value, policy = hindsight_optimum(G, allowed)
    brute = min(
        sum(losses[t, contexts[t], pi[contexts[t]]] for t in range(T))
        for pi in itertools.product(range(K), repeat=C)
        if all(allowed[c, pi[c]] for c in range(C))
    )
    assert value == pytest.approx(brute)
    assert all(allowed[c, policy[c]] for c in range(C))


def test_regret_of_known_policies_on_a_known_instance():
    """Context c has action c % K at loss 0, all others at loss 1: the optimum is 0."""
    C, K, T = 4, 3, 90
    losses = np.ones((T, C, K))
    optimal = np.arange(C) % K
    losses[:, np.arange(C), optimal] = 0.0
    only_context_2 = np.eye(C)[2]
    env = TableEnvironment(losses, only_context_2)
    wrong = optimal.copy()
    wrong[2] = (wrong[2] + 1) % K
    result = simulate(env, {"opt": FixedPolicy(optimal), "wrong": FixedPolicy(wrong)}, T,
                      n_seeds=2, seed=0, n_checkpoints=9)
    np.testing.assert_array_equal(result.rounds, np.arange(10, 91, 10))
    assert np.all(result.best_loss == 0) and np.all(result.regret["opt"] == 0)
    np.testing.assert_array_equal(result.regret["wrong"], np.tile(result.rounds, (2, 1)))
    np.testing.assert_array_equal(result.fixed_regret["wrong"], result.regret["wrong"])
    assert np.all(result.best_policy[:, 2] == optimal[2])


def test_comparator_is_reoptimised_at_every_checkpoint():
    """One context; action 0 is best in the first half, action 1 in the second."""
    T = 100
    losses = np.zeros((T, 1, 2))
    losses[:50, 0, 1] = 1.0
    losses[50:, 0, 0] = 1.0
    env = TableEnvironment(losses, [1.0])
    half = np.full((1, 2), 0.5)
    result = simulate(env, {"zero": FixedPolicy(np.array([0])), "one": FixedPolicy(np.array([1])),
                            "mix": FixedPolicy(half)}, T, n_seeds=3, seed=0, n_checkpoints=4)
    np.testing.assert_array_equal(result.rounds, [25, 50, 75, 100])
    np.testing.assert_array_equal(result.best_loss[0], [0, 0, 25, 50])
    np.testing.assert_array_equal(result.regret["zero"][0], [0, 0, 0, 0])
    np.testing.assert_array_equal(result.regret["one"][0], [25, 50, 25, 0])
    np.testing.assert_allclose(result.pseudo_regret["mix"][0], [12.5, 25, 12.5, 0])


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(["auction", "sleeping"]), st.integers(0, 2**31 - 1))
def test_summed_table_matches_the_sum_of_tables(kind, seed):
    env = FirstPriceAuction(7, 5, adversary="switching") if kind == "auction" else SleepingBandit(3)
    rounds = list(env.rounds(3, 30, np.random.default_rng(seed)))
    total = sum(r.summary() for r in rounds)
    np.testing.assert_allclose(env.summed_table(total, 30), sum(r.table() for r in rounds))


def test_fixed_comparator_is_the_best_policy_for_the_averaged_losses():
    rng = np.random.default_rng(4)
    T, C, K = 200, 5, 3
    losses = random_table(rng, T, C, K)
    env = TableEnvironment(losses, gaussian_bump(C))
    result = simulate(env, {"oracle": BalseiroOracle(env.context_probs)}, T, n_seeds=6, seed=2,
                      n_checkpoints=20)
    np.testing.assert_array_equal(result.fixed_policy, np.tile(losses.sum(0).argmin(1), (6, 1)))
    # the hindsight comparator is never worse than the fixed one
    assert np.all(result.regret["oracle"] >= result.fixed_regret["oracle"] - 1e-9)
    assert np.all(result.fixed_loss >= result.best_loss - 1e-9)


def test_cross_learning_beats_per_context_exp3_with_many_contexts():
    env = FirstPriceAuction(50, 8, adversary="stationary")
    result = simulate(env, all_learners(env), 3000, n_seeds=20, seed=3, n_checkpoints=5)
    per_context = result.final_regret("per_context").mean()
    for name in ("sz", "sz_unpaired", "oracle"):
        assert result.final_regret(name).mean() < 0.8 * per_context, name
    # the hindsight comparator is at least as good as any learner's realised loss on average
    assert result.regret["oracle"][:, -1].mean() > 0


# --------------------------------------------------------------------------- seeds


def test_seeds_reproduce_and_learners_do_not_interfere():
    env = SleepingBandit(4)
    a = simulate(env, all_learners(env), 200, n_seeds=4, seed=11, n_checkpoints=10)
    b = simulate(env, all_learners(env), 200, n_seeds=4, seed=11, n_checkpoints=10)
    c = simulate(env, all_learners(env), 200, n_seeds=4, seed=12, n_checkpoints=10)
    alone = simulate(env, {"oracle": BalseiroOracle(env.context_probs)}, 200, n_seeds=4,
                     seed=11, n_checkpoints=10)
    for name in a.regret:
        np.testing.assert_array_equal(a.regret[name], b.regret[name])
        assert not np.array_equal(a.regret[name], c.regret[name])
    np.testing.assert_array_equal(a.regret["oracle"], alone.regret["oracle"])
    np.testing.assert_array_equal(a.best_loss, alone.best_loss)


# --------------------------------------------------------------------------- bad input


AUCTION = FirstPriceAuction(4, 3)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: FirstPriceAuction(0, 3), "n_values must be positive"),
        (lambda: FirstPriceAuction(4, 2.5), "n_bids must be an integer"),
        (lambda: FirstPriceAuction(3, 3, [0.5, 0.5]), r"value_probs must have shape \(3,\)"),
        (lambda: FirstPriceAuction(2, 3, [0.7, 0.7]), "must sum to 1"),
        (lambda: FirstPriceAuction(2, 3, [1.5, -0.5]), "non-negative"),
        (lambda: FirstPriceAuction(4, 3, adversary="greedy"), "adversary must be one of"),
        (lambda: SleepingBandit(13), "at most 12"),
        (lambda: SleepingBandit(3, availability=0.0), r"availability must be in \(0, 1\]"),
        (lambda: TableEnvironment(np.ones((3, 2)), [1.0]), r"shape \(T, C, K\)"),
        (lambda: TableEnvironment(np.full((3, 1, 2), 2.0), [1.0]), r"lie in \[0, 1\]"),
        (lambda: TableEnvironment(np.ones((3, 2, 2)), [0.5, 0.5], np.zeros((2, 2), bool)),
         "at least one action"),
        (lambda: simulate(TableEnvironment(np.ones((3, 1, 2)), [1.0]), FixedPolicy(np.array([0])),
                          5), "exceeds the 3 rounds"),
        (lambda: simulate(AUCTION, {}, 10), "non-empty mapping"),
        (lambda: simulate(AUCTION, {"x": object()}, 10), "is not a Learner"),
        (lambda: simulate(AUCTION, ContextBlindExp3(), 0), "horizon must be positive"),
        (lambda: simulate(AUCTION, ContextBlindExp3(), 10, n_seeds=-1), "n_seeds must be"),
        (lambda: simulate("env", ContextBlindExp3(), 10), "env must be an Environment"),
        (lambda: simulate(AUCTION, BalseiroOracle([0.5, 0.5]), 10), r"shape \(4,\)"),
        (lambda: simulate(AUCTION, FixedPolicy(np.array([0, 1, 5, 0])), 10), "actions must be in"),
        (lambda: SchneiderZimmert(eta=0), "eta must be a finite number > 0"),
        (lambda: SchneiderZimmert(gamma=-1), "gamma must be a finite number >= 0"),
        (lambda: SchneiderZimmert(epoch_length=7), "must be even when paired"),
        (lambda: SchneiderZimmert(epoch_length=0), "epoch_length must be positive"),
        (lambda: PerContextExp3(eta=float("nan")), "eta must be a finite number"),
        (lambda: hindsight_optimum(np.ones(3)), r"shape \(\.\.\., C, K\)"),
        (lambda: SchneiderZimmert(paired=False, coin=False), "coin=False needs paired"),
        (lambda: SchneiderZimmert(frozen="yes"), "frozen must be True or False"),
        (lambda: rare_context_adversary(3, 4, 10, n_rare=3), "n_rare must be smaller"),
        (lambda: rare_context_adversary(5, 4, 10, rare_share=1.0), r"rare_share must be in"),
        (lambda: rare_context_adversary(5, 1, 10), "at least 2 actions"),
        (lambda: estimation_round_adversary(5, 1, 10), "at least 2 actions"),
        (lambda: estimation_round_adversary(5, 3, 0), "horizon must be positive"),
        (lambda: gaussian_bump(5, width=0), "width must be > 0"),
    ],
)
def test_bad_input_raises_clear_errors(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_same_learner_object_twice_is_rejected():
    learner = ContextBlindExp3()
    with pytest.raises(ValueError, match="only once"):
        simulate(AUCTION, {"a": learner, "b": learner}, 10)


# --------------------------------------------------------------------------- other readings


def test_without_the_coin_the_first_round_of_each_pair_learns():
    C, K, S, L = 40, 2, 16, 4
    problem = Problem(C, K, np.ones((C, K), bool))
    sz = SchneiderZimmert(epoch_length=L, coin=False)
    sz.reset(problem, S, 1000, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    ones = np.ones((S, C), np.float32)
    for _ in range(3 * L):
        c1, c2 = rng.integers(0, C // 2, S), rng.integers(C // 2, C, S)
        sz.policy(c1)
        sz.update(np.zeros(S, int), ones)
        counts_before, w_before = sz.sample_counts.copy(), sz.weights.w.copy()
        sz.policy(c2)
        sz.update(np.ones(S, int), ones)
        if sz.round_in_epoch == 0:
            continue
        assert np.all((sz.sample_counts - counts_before)[np.arange(S), c2] == 1)
        if sz.previous_sample is not None:
            changed = np.abs(sz.weights.w - w_before).sum(axis=2) > 0
            assert np.all(changed[:, 0]) and not np.any(changed[:, 1])


def test_frozen_policy_is_constant_within_each_epoch():
    env = FirstPriceAuction(6, 4, adversary="stationary")
    L = 10
    spy = Recorder(SchneiderZimmert(epoch_length=L, paired=False, frozen=True))
    simulate(env, {"frozen": spy}, 60, n_seeds=3, seed=2)
    P, ctx = np.stack(spy.policies), np.stack(spy.contexts)
    for epoch in range(6):
        rows = slice(epoch * L, (epoch + 1) * L)
        for s in range(3):
            for c in np.unique(ctx[rows, s]):
                same = P[rows, s][ctx[rows, s] == c]
                np.testing.assert_array_equal(same, np.broadcast_to(same[0], same.shape))
    assert np.abs(P[-1] - 0.25).max() > 1e-4  # it does learn, between epochs


def test_rare_context_adversary_structure():
    T, C, K = 80, 6, 5
    env = rare_context_adversary(C, K, T, rare_share=0.1, n_rare=2, n_phases=4, seed=3)
    assert env.context_probs[-2:].sum() == pytest.approx(0.1)
    assert env.context_probs[:-2] == pytest.approx(np.full(4, 0.9 / 4))
    losses = env.losses
    assert set(np.unique(losses)) <= {0.0, 1.0}
    for phase in np.split(np.arange(T), 4):
        rare = losses[phase][:, -2:]
        good = rare.min(axis=(0, 1)) == 0
        assert good.sum() == 1 and np.all(rare[:, :, good] == 0)
        assert np.all(rare[:, :, ~good] == 1)
        common_best = losses[phase][:, :-2].mean(axis=(0, 1)).argmin()
        assert common_best != np.flatnonzero(good)[0]
    again = rare_context_adversary(C, K, T, rare_share=0.1, n_rare=2, n_phases=4, seed=3)
    np.testing.assert_array_equal(again.losses, losses)


def test_estimation_round_adversary_defeats_the_fixed_schedule_only():
    T = 1200
    env = estimation_round_adversary(3, 3, T)
    pair_sums = env.losses[0::2] + env.losses[1::2]
    assert np.all(pair_sums[:, :, 1] == 0.5) and np.all(pair_sums[:, :, 0] == 1.0)
    result = simulate(env, {"coin": SchneiderZimmert(), "no coin": SchneiderZimmert(coin=False)},
                      T, n_seeds=8, seed=0, n_checkpoints=1)
    no_coin = result.fixed_regret["no coin"][:, -1].mean() / T
    coin = result.fixed_regret["coin"][:, -1].mean() / T
    assert no_coin > 0.15 and coin < no_coin / 2


# --------------------------------------------------------------------------- the package


def test_package_reexports_its_public_names_from_its_parts():
    import icml25.cross_learning as cl

    for name in cl.__all__:
        assert hasattr(cl, name), name
    # the method notebook shows these classes from this file (literalinclude)
    assert BalseiroOracle.__module__ == "icml25.cross_learning.learners"
    assert SchneiderZimmert.__module__ == "icml25.cross_learning.learners"
    assert simulate.__module__ == "icml25.cross_learning.simulation"
