r"""Problems, rounds and environments: the oblivious adversaries and i.i.d. contexts.

The environment produces a :class:`Round` per round and per batch of ``S`` runs; only the
simulator holds it (:func:`icml25.cross_learning.simulate`), and a learner sees only
:meth:`Round.at_action` of its own action or, without cross-learning, one loss.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from icml25.common.validation import check_int

from ._common import _BLOCK, FEEDBACK_DTYPE, _probability_vector, gaussian_bump


@dataclass(frozen=True)
class Problem:
    """What every learner may know: the sizes and which actions exist in which context.

    ``allowed[c, a]`` is False when action ``a`` cannot be played in context ``c`` (a sleeping
    arm).  The context distribution is *not* part of it.
    """

    n_contexts: int
    n_actions: int
    allowed: np.ndarray


class Round(ABC):
    r"""The loss function :math:`\ell_t` of one round, for ``S`` runs; held by the simulator only."""

    @abstractmethod
    def at_action(self, actions: np.ndarray) -> np.ndarray:
        r""":math:`\ell_t(c, A_t^{(s)})` for every context: shape ``(S, C)``, dtype
        :obj:`~icml25.cross_learning._common.FEEDBACK_DTYPE`.  The cross-learning feedback."""

    @abstractmethod
    def at_context(self, contexts: np.ndarray) -> np.ndarray:
        r""":math:`\ell_t(c_t^{(s)}, a)` for every action: shape ``(S, K)``.  Used for the regret
        bookkeeping, never shown to a learner."""

    @abstractmethod
    def table(self) -> np.ndarray:
        r"""The whole table :math:`\ell_t(c,a)`, shape ``(S, C, K)`` (tests, small problems)."""

    def summary(self) -> np.ndarray:
        r"""A statistic whose sum over rounds determines :math:`\sum_t\ell_t` through
        :meth:`Environment.summed_table`; the full table unless a subclass knows better."""
        return self.table()


class Environment(ABC):
    """Adversarial losses and i.i.d. contexts.

    Subclasses set ``n_contexts``, ``n_actions``, ``context_probs`` (shape ``(C,)``) and
    ``allowed`` (shape ``(C, K)``) and implement :meth:`rounds`.
    """

    n_contexts: int
    n_actions: int
    context_probs: np.ndarray
    allowed: np.ndarray

    @property
    def problem(self) -> Problem:
        return Problem(self.n_contexts, self.n_actions, self.allowed)

    @abstractmethod
    def rounds(self, n_seeds: int, horizon: int, rng: np.random.Generator) -> Iterator[Round]:
        """Yield the ``horizon`` loss functions in order.  The generator takes no input from the
        learners: the adversary is oblivious by construction."""

    def summed_table(self, summary_total: np.ndarray, n_rounds: int) -> np.ndarray:
        r""":math:`\sum_t\ell_t(c,a)`, shape ``(S, C, K)``, from the sum of ``n_rounds``
        :meth:`Round.summary` values."""
        return summary_total

    def _check_allowed(self) -> None:
        allowed = np.asarray(self.allowed, dtype=bool)
        if allowed.shape != (self.n_contexts, self.n_actions):
            raise ValueError(f"allowed must have shape ({self.n_contexts}, {self.n_actions})")
        if not allowed.any(axis=1).all():
            raise ValueError("every context must allow at least one action")
        self.allowed = allowed


def _phase_index(horizon: int, n_phases: int) -> np.ndarray:
    """Phase of each round when ``horizon`` is cut into ``n_phases`` equal parts."""
    return np.minimum((np.arange(horizon) * n_phases) // horizon, n_phases - 1)


def _doubling_phase_index(horizon: int, first: int) -> np.ndarray:
    """Phase of each round when phase ``j`` lasts ``first * 2**j`` rounds."""
    t = np.arange(horizon)
    return np.floor(np.log2(t / first + 1)).astype(int)


class _AuctionRound(Round):
    __slots__ = ("competing", "env")

    def __init__(self, env: FirstPriceAuction, competing: np.ndarray):
        self.env, self.competing = env, competing

    def at_action(self, actions):
        env = self.env
        half_win = np.where(env.bids[actions] >= self.competing, np.float32(0.5), np.float32(0))
        out = env._surplus32[actions]  # (S, C): v_c - b_{A_t}
        out *= half_win[:, None]
        return np.subtract(np.float32(0.5), out, out=out)

    def at_context(self, contexts):
        env = self.env
        win = env.bids[None, :] >= self.competing[:, None]
        return 0.5 - 0.5 * win * env._surplus.T[contexts]

    def table(self):
        win = self.env.bids[None, None, :] >= self.competing[:, None, None]
        return 0.5 - 0.5 * win * self.env._surplus.T[None]

    def summary(self):
        return (self.env.bids[None, :] >= self.competing[:, None]).astype(float)  # won, (S, K)


class FirstPriceAuction(Environment):
    r"""Learning to bid in repeated first-price auctions.

    Context :math:`c` is the private value :math:`v_c=(c+1)/C`, action :math:`a` the bid
    :math:`b_a=a/K`; the bidder wins when :math:`b\ge m_t`, the highest competing bid, and pays its
    bid:

    .. math:: \ell_t(v,b)=\tfrac12\bigl(1-(v-b)\,\mathbb 1[b\ge m_t]\bigr)\in[0,1].

    Whether a bid wins does not depend on the value, so playing :math:`b` reveals
    :math:`\ell_t(v,b)` for every :math:`v`: cross-learning is exact (Balseiro et al., 2019).

    Parameters
    ----------
    n_values : int
        :math:`C`, the number of values (contexts).
    n_bids : int
        :math:`K`, the number of bids (actions).
    value_probs : array (C,), optional
        :math:`\nu`; defaults to :func:`gaussian_bump` centred at 0.6.
    adversary : {"stationary", "phases", "switching"}
        How the oblivious adversary draws :math:`m_t`:

        * ``"stationary"``: :math:`m_t\sim U[0,1]` i.i.d. (best bid :math:`v/2` in expectation);
        * ``"phases"``: the horizon is cut into ``n_phases`` equal phases; in each,
          :math:`m_t\sim U[l, l+0.3]` with :math:`l\sim U[0,0.6]` drawn per phase and run;
        * ``"switching"``: :math:`m_t` alternates between a low regime :math:`U[0,0.2]` and a
          high regime :math:`U[0.45,0.65]` in phases whose lengths double
          (``first_phase * 2**j`` rounds), so the best response keeps changing and the last,
          longest phase dominates the hindsight optimum.
    n_phases : int
        Number of phases of ``"phases"``.
    first_phase : int, optional
        Length of the first phase of ``"switching"``; defaults to ``max(1, horizon // 64)``.
    """

    ADVERSARIES = ("stationary", "phases", "switching")

    def __init__(self, n_values: int, n_bids: int, value_probs=None, *, adversary="phases",
                 n_phases: int = 4, first_phase: int | None = None):
        self.n_contexts = check_int(n_values, "n_values", minimum=1)
        self.n_actions = check_int(n_bids, "n_bids", minimum=1)
        if value_probs is None:
            value_probs = gaussian_bump(self.n_contexts)
        self.context_probs = _probability_vector(value_probs, self.n_contexts, "value_probs")
        if adversary not in self.ADVERSARIES:
            raise ValueError(f"adversary must be one of {self.ADVERSARIES}, got {adversary!r}")
        self.adversary = adversary
        self.n_phases = check_int(n_phases, "n_phases", minimum=1)
        if first_phase is not None:
            first_phase = check_int(first_phase, "first_phase", minimum=1)
        self.first_phase = first_phase
        self.values = np.arange(1, self.n_contexts + 1) / self.n_contexts
        self.bids = np.arange(self.n_actions) / self.n_actions
        self.allowed = np.ones((self.n_contexts, self.n_actions), dtype=bool)
        self._surplus = self.values[None, :] - self.bids[:, None]  # (K, C): v_c - b_a
        self._surplus32 = self._surplus.astype(np.float32)

    def summed_table(self, summary_total, n_rounds):
        return 0.5 * n_rounds - 0.5 * summary_total[:, None, :] * self._surplus.T[None]

    def rounds(self, n_seeds, horizon, rng):
        n_seeds = check_int(n_seeds, "n_seeds", minimum=1)
        horizon = check_int(horizon, "horizon", minimum=1)
        if self.adversary == "phases":
            phase = _phase_index(horizon, self.n_phases)
            low = rng.uniform(0.0, 0.6, size=(self.n_phases, n_seeds))
            width = np.full_like(low, 0.3)
        elif self.adversary == "switching":
            first = self.first_phase or max(1, horizon // 64)
            phase = _doubling_phase_index(horizon, first) % 2
            low = np.array([[0.0], [0.45]]) * np.ones((2, n_seeds))
            width = np.full_like(low, 0.2)
        else:
            phase = np.zeros(horizon, dtype=int)
            low, width = np.zeros((1, n_seeds)), np.ones((1, n_seeds))
        for start in range(0, horizon, _BLOCK):
            stop = min(start + _BLOCK, horizon)
            p = phase[start:stop]
            competing = low[p] + width[p] * rng.random((stop - start, n_seeds))
            for row in competing:
                yield _AuctionRound(self, row)


class _SleepingRound(Round):
    __slots__ = ("arm_losses", "env")

    def __init__(self, env: SleepingBandit, arm_losses: np.ndarray):
        self.env, self.arm_losses = env, arm_losses

    def at_action(self, actions):
        played = self.arm_losses[np.arange(len(actions)), actions].astype(np.float32)
        return np.where(self.env._allowed_t[actions], played[:, None], np.float32(1.0))

    def at_context(self, contexts):
        return np.where(self.env.allowed[contexts], self.arm_losses, 1.0)

    def table(self):
        return np.where(self.env.allowed[None], self.arm_losses[:, None, :], 1.0)

    def summary(self):
        return self.arm_losses


class SleepingBandit(Environment):
    r"""Sleeping bandits with stochastic availability as a cross-learning problem.

    Each arm :math:`a` is awake independently with probability :math:`p_a`; the context is the
    awake set (all :math:`C=2^K-1` non-empty subsets, conditioned on at least one awake arm) and
    only awake arms may be played.  The adversary fixes arm losses :math:`x_t(a)\in\{0,1\}` and
    :math:`\ell_t(c,a)=x_t(a)` for :math:`a\in c` (1 otherwise, never played): pulling :math:`a`
    reveals :math:`x_t(a)`, hence :math:`\ell_t(c,a)` in every context (Schneider & Zimmert, 2023,
    application to sleeping bandits).

    Parameters
    ----------
    n_arms : int
        :math:`K` (at most 12, so :math:`C\le4095`).
    availability : float or array (K,)
        :math:`p_a\in(0,1]`.
    n_phases : int
        The horizon is cut into ``n_phases`` equal phases; in each phase the arm means are a fresh
        random permutation of :math:`\{0.1,\dots,0.9\}` (per run), and :math:`x_t(a)` is
        Bernoulli with that mean.
    """

    MAX_ARMS = 12

    def __init__(self, n_arms: int, availability=0.5, *, n_phases: int = 4):
        self.n_actions = check_int(n_arms, "n_arms", minimum=1)
        if self.n_actions > self.MAX_ARMS:
            raise ValueError(f"n_arms must be at most {self.MAX_ARMS} (2^K - 1 contexts)")
        p = np.broadcast_to(np.asarray(availability, dtype=float), (self.n_actions,)).copy()
        if not np.all((p > 0) & (p <= 1)):
            raise ValueError("availability must be in (0, 1] for every arm")
        self.availability = p
        self.n_phases = check_int(n_phases, "n_phases", minimum=1)
        self.n_contexts = 2**self.n_actions - 1
        subsets = np.arange(1, self.n_contexts + 1)
        self.allowed = ((subsets[:, None] >> np.arange(self.n_actions)) & 1).astype(bool)
        likelihood = np.prod(np.where(self.allowed, p, 1.0 - p), axis=1)
        self.context_probs = likelihood / likelihood.sum()
        self._allowed_t = np.ascontiguousarray(self.allowed.T)  # (K, C)

    def summed_table(self, summary_total, n_rounds):
        return np.where(self.allowed[None], summary_total[:, None, :], float(n_rounds))

    def rounds(self, n_seeds, horizon, rng):
        n_seeds = check_int(n_seeds, "n_seeds", minimum=1)
        horizon = check_int(horizon, "horizon", minimum=1)
        phase = _phase_index(horizon, self.n_phases)
        levels = np.linspace(0.1, 0.9, self.n_actions)
        means = np.stack([rng.permuted(np.tile(levels, (n_seeds, 1)), axis=1)
                          for _ in range(self.n_phases)])  # (phases, S, K)
        for start in range(0, horizon, _BLOCK):
            stop = min(start + _BLOCK, horizon)
            draws = rng.random((stop - start, n_seeds, self.n_actions))
            losses = (draws < means[phase[start:stop]]).astype(float)
            for row in losses:
                yield _SleepingRound(self, row)


class _TableRound(Round):
    __slots__ = ("losses", "losses32", "n_seeds")

    def __init__(self, losses: np.ndarray, losses32: np.ndarray, n_seeds: int):
        self.losses, self.losses32, self.n_seeds = losses, losses32, n_seeds  # shared by all runs

    def at_action(self, actions):
        return self.losses32[actions]

    def at_context(self, contexts):
        return self.losses[contexts]

    def table(self):
        return np.broadcast_to(self.losses, (self.n_seeds, *self.losses.shape)).copy()

    def summary(self):
        return self.losses  # the same for every run: broadcast by the simulator


class TableEnvironment(Environment):
    r"""Losses given explicitly: ``losses[t, c, a]`` :math:`=\ell_t(c,a)`, the same for every run.

    For tests and small worked examples (the regret of a known policy can be computed by hand).
    """

    def __init__(self, losses, context_probs, allowed=None):
        losses = np.asarray(losses, dtype=float)
        if losses.ndim != 3:
            raise ValueError(f"losses must have shape (T, C, K), got {losses.shape}")
        if not np.all(np.isfinite(losses)) or losses.min() < 0 or losses.max() > 1:
            raise ValueError("losses must lie in [0, 1]")
        self.losses = losses
        self.n_contexts, self.n_actions = losses.shape[1:]
        self.context_probs = _probability_vector(context_probs, self.n_contexts, "context_probs")
        self.allowed = np.ones(losses.shape[1:], bool) if allowed is None else allowed
        self._check_allowed()

    def rounds(self, n_seeds, horizon, rng):
        n_seeds = check_int(n_seeds, "n_seeds", minimum=1)
        horizon = check_int(horizon, "horizon", minimum=1)
        if horizon > len(self.losses):
            raise ValueError(f"horizon {horizon} exceeds the {len(self.losses)} rounds of losses")
        losses32 = np.ascontiguousarray(self.losses.transpose(0, 2, 1), dtype=FEEDBACK_DTYPE)
        for t in range(horizon):
            yield _TableRound(self.losses[t], losses32[t], n_seeds)
