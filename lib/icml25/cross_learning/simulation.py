r"""The simulator: many independent runs at once, common random numbers across learners, the
regret against the best policy in hindsight and against the fixed policy :math:`\pi^\star`."""

from __future__ import annotations

import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from icml25.common.streams import as_generator
from icml25.common.validation import check_int

from ._common import _BLOCK
from .environments import Environment
from .learners import Learner


def hindsight_optimum(cumulative_losses, allowed=None):
    r"""Best fixed policy in hindsight from per-context cumulative losses.

    .. math:: \min_\pi\sum_t\ell_t(c_t,\pi(c_t))=\sum_c\min_a G(c,a),\qquad
              G(c,a)=\sum_{t:\,c_t=c}\ell_t(c,a).

    Parameters
    ----------
    cumulative_losses : array (..., C, K)
        :math:`G`.
    allowed : array (C, K) of bool, optional
        Actions a policy may choose.

    Returns
    -------
    value : array (...)
        The optimal cumulative loss.
    policy : array (..., C) of int
        A minimising action per context.
    """
    G = np.asarray(cumulative_losses, dtype=float)
    if G.ndim < 2:
        raise ValueError("cumulative_losses must have shape (..., C, K)")
    if allowed is not None:
        allowed = np.asarray(allowed, dtype=bool)
        if allowed.shape != G.shape[-2:]:
            raise ValueError(f"allowed must have shape {G.shape[-2:]}, got {allowed.shape}")
        G = np.where(allowed, G, np.inf)
    return G.min(axis=-1).sum(axis=-1), G.argmin(axis=-1)


@dataclass(frozen=True)
class SimulationResult:
    r"""Per-run regret curves of one or more learners on the same contexts and losses.

    Attributes
    ----------
    rounds : array (M,)
        The checkpoints :math:`\tau` (number of rounds played).
    regret : dict name -> array (S, M)
        Realised regret :math:`\sum_{t\le\tau}\ell_t(c_t,A_t)-\min_\pi\sum_{t\le\tau}
        \ell_t(c_t,\pi(c_t))` (the comparator re-optimised at every checkpoint).
    pseudo_regret : dict name -> array (S, M)
        The same with :math:`\ell_t(c_t,A_t)` replaced by its expectation
        :math:`\langle\pi_t(\cdot\mid c_t),\ell_t(c_t,\cdot)\rangle` over the learner's draw.
    learner_loss : dict name -> array (S, M)
    best_loss : array (S, M)
        :math:`\min_\pi\sum_{t\le\tau}\ell_t(c_t,\pi(c_t))`.
    best_policy : array (S, C)
        The hindsight-optimal policy at the horizon.
    fixed_regret : dict name -> array (S, M)
        Realised regret against one *fixed* policy,
        :math:`\sum_{t\le\tau}[\ell_t(c_t,A_t)-\ell_t(c_t,\pi^\star(c_t))]` with
        :math:`\pi^\star(c)=\arg\min_a\sum_{t\le T}\ell_t(c,a)`, the best policy for the
        :math:`\nu`-averaged losses, chosen before the contexts are drawn.  High-probability
        bounds "for any fixed policy" concern this quantity; the hindsight comparator of
        ``regret`` also fits the noise of the realised contexts, which grows with :math:`C`.
    fixed_policy : array (S, C)
        :math:`\pi^\star`.
    fixed_loss : array (S, M)
        :math:`\sum_{t\le\tau}\ell_t(c_t,\pi^\star(c_t))`.
    seconds : dict name -> float
        Time spent in each learner's calls.
    """

    rounds: np.ndarray
    regret: dict
    pseudo_regret: dict
    learner_loss: dict
    best_loss: np.ndarray
    best_policy: np.ndarray
    fixed_regret: dict = field(default_factory=dict)
    fixed_policy: np.ndarray | None = None
    fixed_loss: np.ndarray | None = None
    seconds: dict = field(default_factory=dict)

    def final_regret(self, name: str) -> np.ndarray:
        return self.regret[name][:, -1]


def _fixed_comparator(env: Environment, n_seeds: int, horizon: int,
                      loss_seed: np.random.SeedSequence) -> np.ndarray:
    r""":math:`\pi^\star(c)=\arg\min_a\sum_{t\le T}\ell_t(c,a)`, shape ``(S, C)``: the best policy
    for the :math:`\nu`-averaged losses of the whole horizon, computed from a replay of the same
    oblivious loss sequence before any context is drawn."""
    total = None
    for rnd in env.rounds(n_seeds, horizon, as_generator(loss_seed)):
        summary = rnd.summary()
        total = np.array(summary, dtype=float) if total is None else total.__iadd__(summary)
    summed = env.summed_table(total, horizon)
    summed = np.broadcast_to(summed, (n_seeds, env.n_contexts, env.n_actions))
    return hindsight_optimum(summed, env.allowed)[1]


def _child_seed(root: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, *key))


def _sample_actions(probs: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Inverse-CDF draw per row; never returns an action of probability 0."""
    cdf = np.cumsum(probs, axis=1)
    return (cdf > (uniforms * cdf[:, -1])[:, None]).argmax(axis=1)


def simulate(env: Environment, learners, horizon: int, *, n_seeds: int = 1, seed=0,
             n_checkpoints: int = 100) -> SimulationResult:
    r"""Run learners on ``n_seeds`` independent realisations of ``env`` for ``horizon`` rounds.

    Every learner faces the same contexts and losses in run ``s`` (common random numbers); each
    has its own random stream for its actions.  Cross-learning learners receive
    :math:`\ell_t(\cdot,A_t)` (shape ``(S, C)``), bandit learners :math:`\ell_t(c_t,A_t)`; the full
    table is only used here, for the regret.

    Parameters
    ----------
    env : Environment
    learners : Learner or mapping name -> Learner
    horizon : int
        :math:`T`.
    n_seeds : int
        :math:`S`, independent runs, vectorised.
    seed : int or SeedSequence
        Everything is reproducible from ``(seed, n_seeds)``.
    n_checkpoints : int
        Rounds at which the curves are recorded (evenly spaced, always including ``horizon``).
    """
    horizon = check_int(horizon, "horizon", minimum=1)
    n_seeds = check_int(n_seeds, "n_seeds", minimum=1)
    n_checkpoints = check_int(n_checkpoints, "n_checkpoints", minimum=1)
    if isinstance(learners, Learner):
        learners = {"learner": learners}
    if not isinstance(learners, Mapping) or not learners:
        raise ValueError("learners must be a Learner or a non-empty mapping name -> Learner")
    for name, learner in learners.items():
        if not isinstance(learner, Learner):
            raise TypeError(f"learners[{name!r}] is not a Learner")
    if len({id(learner) for learner in learners.values()}) != len(learners):
        raise ValueError("each learner object may appear only once")
    if not isinstance(env, Environment):
        raise TypeError("env must be an Environment")

    problem = env.problem
    C = problem.n_contexts
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    context_rng = as_generator(_child_seed(root, 0))
    fixed_policy = _fixed_comparator(env, n_seeds, horizon, _child_seed(root, 1))
    names = list(learners)
    action_rngs = {}
    seconds = dict.fromkeys(names, 0.0)
    for name in names:
        # streams keyed by the learner's name: adding a learner changes nobody else's run
        key = 2 + zlib.crc32(str(name).encode())
        tic = time.perf_counter()
        learners[name].reset(problem, n_seeds, horizon,
                             as_generator(_child_seed(root, key, 0)))
        seconds[name] += time.perf_counter() - tic
        action_rngs[name] = as_generator(_child_seed(root, key, 1))

    checkpoints = np.unique(np.linspace(horizon / n_checkpoints, horizon, n_checkpoints)
                            .round().astype(int).clip(1, horizon))
    M = len(checkpoints)
    rows = np.arange(n_seeds)
    cdf = np.cumsum(env.context_probs)
    cdf[-1] = 1.0
    G = np.where(problem.allowed, 0.0, np.inf)[None].repeat(n_seeds, axis=0)  # (S, C, K)
    G_min = np.zeros((n_seeds, C))  # min_a G[s, c, a], maintained where G changes
    loss = {n: np.zeros(n_seeds) for n in names}
    expected = {n: np.zeros(n_seeds) for n in names}
    out_loss = {n: np.empty((n_seeds, M)) for n in names}
    out_expected = {n: np.empty((n_seeds, M)) for n in names}
    best = np.empty((n_seeds, M))
    rounds = env.rounds(n_seeds, horizon, as_generator(_child_seed(root, 1)))
    fixed_loss, out_fixed = np.zeros(n_seeds), np.empty((n_seeds, M))

    k = 0
    for start in range(0, horizon, _BLOCK):
        stop = min(start + _BLOCK, horizon)
        contexts_block = np.searchsorted(cdf, context_rng.random((stop - start, n_seeds)),
                                         side="right").clip(0, C - 1)
        contexts_block.flags.writeable = False  # shared by all learners: nobody may edit them
        uniforms = {n: action_rngs[n].random((stop - start, n_seeds)) for n in names}
        for i, t in enumerate(range(start, stop)):
            rnd = next(rounds)
            contexts = contexts_block[i]
            row = rnd.at_context(contexts)  # (S, K): bookkeeping only
            G_here = G[rows, contexts] + row
            G[rows, contexts] = G_here
            G_min[rows, contexts] = G_here.min(axis=1)
            fixed_loss += row[rows, fixed_policy[rows, contexts]]
            for name in names:
                learner = learners[name]
                tic = time.perf_counter()
                probs = learner.policy(contexts)
                actions = _sample_actions(probs, uniforms[name][i])
                played = row[rows, actions]
                feedback = rnd.at_action(actions) if learner.cross_learning else played
                learner.update(actions, feedback)
                seconds[name] += time.perf_counter() - tic
                loss[name] += played
                expected[name] += np.einsum("sk,sk->s", probs, row)
            if t + 1 == checkpoints[k]:
                best[:, k] = G_min.sum(axis=1)
                out_fixed[:, k] = fixed_loss
                for name in names:
                    out_loss[name][:, k] = loss[name]
                    out_expected[name][:, k] = expected[name]
                k += 1
    return SimulationResult(
        rounds=checkpoints,
        regret={n: out_loss[n] - best for n in names},
        pseudo_regret={n: out_expected[n] - best for n in names},
        fixed_regret={n: out_loss[n] - out_fixed for n in names},
        learner_loss=out_loss,
        best_loss=best,
        best_policy=hindsight_optimum(G)[1],
        fixed_policy=fixed_policy,
        fixed_loss=out_fixed,
        seconds=seconds,
    )
