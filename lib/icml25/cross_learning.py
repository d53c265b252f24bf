r"""Cross-learning contextual bandits with adversarial losses (Huang & Huang, ICML 2025).

**Setting.** :math:`T` rounds, :math:`K` actions, :math:`C` contexts.  Contexts
:math:`c_t\sim\nu` are i.i.d.; an oblivious adversary fixes losses
:math:`\ell_t(c,a)\in[0,1]` in advance.  In round :math:`t` the learner sees :math:`c_t`, draws
:math:`A_t\sim\pi_t(\cdot\mid c_t)` and, under *cross-learning* feedback (Balseiro et al., 2019),
observes :math:`\ell_t(c, A_t)` **for every context** :math:`c` -- never the loss of an action it
did not play.  The regret is measured against the best fixed policy :math:`\pi:[C]\to[K]` in hindsight,

.. math:: R_T=\sum_{t=1}^T\ell_t(c_t,A_t)-\min_{\pi}\sum_{t=1}^T\ell_t(c_t,\pi(c_t))
          =\sum_{t}\ell_t(c_t,A_t)-\sum_{c}\min_a\sum_{t:\,c_t=c}\ell_t(c,a),

(the minimum over policies decomposes over contexts).

**Known** :math:`\nu` **(Balseiro et al., 2019).**  One exponential-weights distribution per
context, :math:`\pi_t(a\mid c)\propto\exp(-\eta\hat L_{t-1}(c,a))`, and one importance weight shared by all
contexts: the *marginal* probability of the played action

.. math:: f_t(a)=\mathbb E_{c\sim\nu}[\pi_t(a\mid c)],\qquad
          \hat\ell_t(c,a)=\frac{\ell_t(c,a)\,\mathbb 1[A_t=a]}{f_t(a)+\gamma}\quad\text{for all } c.

The variance term is :math:`\sum_a f_t(a)/f_t(a)=K` per round instead of :math:`CK`: regret
:math:`\tilde O(\sqrt{KT})`, independent of :math:`C`.

**Unknown** :math:`\nu` **(Schneider & Zimmert, NeurIPS 2023; analysed by Huang & Huang).**
:math:`f_t` is replaced by its plug-in estimate on contexts that the policy has not seen.  The
rounds are cut into epochs; the contexts stored during epoch :math:`e-1` form the empirical
distribution :math:`H_{e-1}` used throughout epoch :math:`e`,

.. math:: \hat f_t(a)=\sum_c H_{e-1}(c)\,\pi_t(a\mid c),

so that :math:`\hat f_t` is built from contexts independent of :math:`\pi_t`.  In the default
``paired`` form each exponential-weights step spans two rounds played with the same policy: a fair
coin picks one of them as the *learning* round (its feedback enters :math:`\hat L`) and the other
as the *estimation* round (only its context is stored).  The estimation contexts then never
influence the policy before they are used.  Huang & Huang prove that this algorithm has regret
:math:`\tilde O(\sqrt{KT\log(1/\delta)})` with probability :math:`1-\delta`.

**Provenance.**  The full text of Algorithm 1 of Schneider & Zimmert (arXiv 2401.01857) could not
be consulted for this module.  The epoch structure with the previous epoch's contexts, the
plug-in marginal and the pairing of rounds ("two steps per EXP3 step, one of them to estimate the
context distribution", as an ICLR 2025 review of Huang & Huang summarises it) follow secondary
descriptions; the fair coin, the uniform first epoch and all default constants (:math:`\eta`,
:math:`\gamma`, the epoch length) are this module's choices.  ``paired=False`` gives the simpler
reading in which every round learns and every context is stored.

**Implementation.**  Every array has the independent runs ("seeds") as its leading axis ``S``.
Only column :math:`A_t` of :math:`\hat L` changes in a round, so a cross-learning update costs
:math:`O(SC)`: weights are kept as ``(S, K, C)`` with running normalisers, and
:math:`f_t(A_t)` is a dot product of one gathered row with :math:`\nu` (or :math:`H_{e-1}`).

The environment produces a :class:`Round` per round; :func:`simulate` holds it and hands each
learner only ``Round.at_action(A_t)`` (cross-learning learners) or :math:`\ell_t(c_t,A_t)`
(bandit learners).  Learners never receive the environment, a :class:`Round` or any loss of an
unplayed action.
"""

from __future__ import annotations

import math
import time
import zlib
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from icml25.common.validation import check_int

__all__ = [
    "Problem",
    "Round",
    "Environment",
    "FirstPriceAuction",
    "SleepingBandit",
    "TableEnvironment",
    "rare_context_adversary",
    "estimation_round_adversary",
    "Learner",
    "SchneiderZimmert",
    "BalseiroOracle",
    "PerContextExp3",
    "ContextBlindExp3",
    "FixedPolicy",
    "SimulationResult",
    "simulate",
    "hindsight_optimum",
    "gaussian_bump",
    "FEEDBACK_DTYPE",
]

FEEDBACK_DTYPE = np.float32  # losses revealed to learners: single precision halves the traffic
_BLOCK = 512  # rounds of random numbers drawn at once (contexts, adversary, action uniforms)
_RENORMALISE_EVERY = 32  # exact normaliser recomputation for the incremental weights


# --------------------------------------------------------------------------- validation


def _probability_vector(p, size: int, name: str) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    if p.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"{name} must be finite and non-negative")
    if abs(p.sum() - 1.0) > 1e-8:
        raise ValueError(f"{name} must sum to 1, sums to {p.sum():.6g}")
    return p / p.sum()


def _optional_rate(value, name: str, *, allow_zero: bool) -> float | None:
    if value is None:
        return None
    value = float(value)
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    return value


def gaussian_bump(n: int, center: float = 0.6, width: float = 0.15) -> np.ndarray:
    r""":math:`\nu(c)\propto\exp(-\tfrac12((v_c-\text{center})/\text{width})^2)` on the grid
    :math:`v_c=(c+1)/n`, the value distribution of the auction example."""
    n = check_int(n, "n", minimum=1)
    if not width > 0:
        raise ValueError(f"width must be > 0, got {width!r}")
    v = np.arange(1, n + 1) / n
    p = np.exp(-0.5 * ((v - center) / width) ** 2)
    return p / p.sum()


# --------------------------------------------------------------------------- problems


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
        :data:`FEEDBACK_DTYPE`.  The cross-learning feedback."""

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
    __slots__ = ("env", "competing")

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
    __slots__ = ("env", "arm_losses")

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


def rare_context_adversary(n_contexts: int, n_actions: int, horizon: int, *,
                           rare_share: float = 0.05, n_rare: int = 2, n_phases: int = 4,
                           seed=0) -> TableEnvironment:
    r"""An oblivious adversary that puts the decisive losses on rare contexts.

    The last :math:`r` = ``n_rare`` contexts are *rare* (total probability :math:`\rho` =
    ``rare_share``, split evenly), the others common.  In each of ``n_phases`` equal phases the
    adversary draws two distinct actions, :math:`a_{\rm com}` and :math:`a_{\rm rare}`, and

    .. math:: \ell_t(c,a)\sim\begin{cases}
              \mathrm{Bernoulli}(0.25) & c \text{ common},\ a=a_{\rm com},\\
              \mathrm{Bernoulli}(0.75) & c \text{ common},\ a\ne a_{\rm com},\\
              0 & c \text{ rare},\ a=a_{\rm rare},\\
              1 & c \text{ rare},\ a\ne a_{\rm rare}.\end{cases}

    A good policy plays :math:`a_{\rm rare}` in the rare contexts only, so the marginal
    :math:`f_t(a_{\rm rare})\approx\rho` is small and its plug-in estimate from a short epoch
    (a handful of rare contexts, sometimes none) is noisy: the importance weight
    :math:`1/(\hat f+\gamma)` is stressed where the losses matter.  The Bernoulli draws use
    ``seed`` and are the same in every run.
    """
    C = check_int(n_contexts, "n_contexts", minimum=1)
    K = check_int(n_actions, "n_actions", minimum=1)
    T = check_int(horizon, "horizon", minimum=1)
    n_rare = check_int(n_rare, "n_rare", minimum=1)
    n_phases = check_int(n_phases, "n_phases", minimum=1)
    if n_rare >= C:
        raise ValueError(f"n_rare must be smaller than n_contexts ({C}), got {n_rare}")
    if K < 2:
        raise ValueError("rare_context_adversary needs at least 2 actions")
    rare_share = float(rare_share)
    if not 0 < rare_share < 1:
        raise ValueError(f"rare_share must be in (0, 1), got {rare_share!r}")
    rng = np.random.default_rng(seed)
    probs = np.r_[np.full(C - n_rare, (1 - rare_share) / (C - n_rare)),
                  np.full(n_rare, rare_share / n_rare)]
    phase = _phase_index(T, n_phases)
    pairs = np.array([rng.choice(K, 2, replace=False) for _ in range(n_phases)])
    common_action, rare_action = pairs[phase, 0], pairs[phase, 1]
    means = np.full((T, K), 0.75)
    means[np.arange(T), common_action] = 0.25
    losses = np.empty((T, C, K))
    losses[:, : C - n_rare] = (rng.random((T, C - n_rare, K)) < means[:, None]).astype(float)
    rare = losses[:, C - n_rare:]  # a view
    rare[...] = 1.0
    rare[np.arange(T), :, rare_action] = 0.0
    return TableEnvironment(losses, probs)


def estimation_round_adversary(n_contexts: int, n_actions: int, horizon: int,
                               context_probs=None) -> TableEnvironment:
    r"""An oblivious adversary aimed at the pairing of :class:`SchneiderZimmert`.

    Rounds come in pairs :math:`(2s-1, 2s)`, as the learner pairs them.  In every context,

    .. math:: \ell_{2s-1}(c,\cdot)=(0,\tfrac12,1,\dots,1),\qquad
              \ell_{2s}(c,\cdot)=(1,0,1,\dots,1).

    Over a pair action 1 loses :math:`\tfrac12` and action 0 loses 1, so the best policy plays
    action 1 everywhere.  A learner that always learns from the first round of a pair sees
    action 0 win and plays it: regret :math:`\approx T/4`, linear.  With a fair coin the
    learning round is an unbiased sample of the pair.
    """
    C = check_int(n_contexts, "n_contexts", minimum=1)
    K = check_int(n_actions, "n_actions", minimum=1)
    T = check_int(horizon, "horizon", minimum=1)
    if K < 2:
        raise ValueError("estimation_round_adversary needs at least 2 actions")
    probs = np.full(C, 1.0 / C) if context_probs is None else context_probs
    losses = np.ones((T, C, K))
    losses[0::2, :, 0] = 0.0
    losses[0::2, :, 1] = 0.5
    losses[1::2, :, 1] = 0.0
    return TableEnvironment(losses, probs)


# --------------------------------------------------------------------------- learners


class Learner(ABC):
    """A learner for ``S`` independent runs at once.

    The simulator calls :meth:`reset` once, then in every round :meth:`policy` with the contexts
    :math:`c_t` (shape ``(S,)``), draws :math:`A_t\\sim` the returned rows itself, and calls
    :meth:`update` with the actions and the feedback: ``(S, C)`` losses of the played action in
    every context when ``cross_learning`` is True, else the ``(S,)`` losses
    :math:`\\ell_t(c_t,A_t)`.
    """

    cross_learning: ClassVar[bool] = True

    @abstractmethod
    def reset(self, problem: Problem, n_seeds: int, horizon: int,
              rng: np.random.Generator) -> None: ...

    @abstractmethod
    def policy(self, contexts: np.ndarray) -> np.ndarray:
        r""":math:`\pi_t(\cdot\mid c_t)` for every run, shape ``(S, K)``, rows summing to 1."""

    @abstractmethod
    def update(self, actions: np.ndarray, feedback: np.ndarray) -> None: ...


class _ContextWeights:
    r"""Exponential weights :math:`w(a\mid c)\propto\exp(-\eta\hat L(c,a))` for ``S`` runs.

    Stored ``(S, K, C)`` in single precision with running normalisers
    :math:`Z(c)=\sum_a w(a\mid c)`, so that a cross-learning update of the played action's column
    costs :math:`O(SC)`.  Every update multiplies a column by
    :math:`e^{x}`, :math:`x\in[-X,0]`, with :math:`x` clipped at :math:`-40` (binding only when
    :math:`\gamma<\eta/20`); the weights are rescaled by their per-context maximum (and
    :math:`Z` recomputed exactly) at least every 256 updates, as soon as the shrinkage accumulated
    since the last rescaling could exceed :math:`e^{-40}`, and immediately after any update with
    :math:`X>4` (never with :math:`\gamma\ge\eta/2`).  Weights are floored at :math:`10^{-30}`
    of the maximum at each rescaling: an action can fall at most :math:`\eta\Delta\hat L\approx69`
    behind, far beyond any probability that matters.
    """

    FLOOR = 1e-30

    def __init__(self, allowed: np.ndarray, n_seeds: int):
        mask = np.ascontiguousarray(allowed.T, dtype=np.float32)  # (K, C)
        self.w = np.repeat(mask[None], n_seeds, axis=0)
        self.z = self.w.sum(axis=1)
        self.floor = mask * np.float32(self.FLOOR)
        self.rows = np.arange(n_seeds)
        self._since, self._shrink = 0, 0.0

    def at_contexts(self, contexts: np.ndarray) -> np.ndarray:
        w = self.w[self.rows, :, contexts].astype(float)
        return w / w.sum(axis=1, keepdims=True)

    def column(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r"""Weights of the played actions in every context, and :math:`\pi(A_t\mid c)`."""
        w = self.w[self.rows, actions]
        return w, w / self.z

    def shrink_column(self, actions, old, exponent_scale, feedback) -> None:
        """``w[s, A_s, c] *= exp(exponent_scale[s] * feedback[s, c])`` with ``exponent_scale <= 0``
        and ``feedback`` in [0, 1]."""
        worst = float(-exponent_scale.min()) - 1e-9
        x = np.multiply(feedback, exponent_scale.astype(np.float32)[:, None], dtype=np.float32)
        if worst > 40.0:
            np.maximum(x, np.float32(-40.0), out=x)
        np.exp(x, out=x)
        np.multiply(x, old, out=x)  # the new column
        self.w[self.rows, actions] = x
        x -= old
        self.z += x
        self._since += 1
        self._shrink += worst
        if worst > 4.0 or self._shrink > 40.0 or self._since >= 256:
            self.rescale()

    def rescale(self) -> None:
        self.w /= self.w.max(axis=1, keepdims=True)
        np.maximum(self.w, self.floor, out=self.w)
        self.z = self.w.sum(axis=1)
        self._since, self._shrink = 0, 0.0


def _default_eta(eta, scale: float, horizon: int, n_actions: int) -> float:
    if eta is not None:
        return eta
    return math.sqrt(2.0 * scale * math.log(max(n_actions, 2)) / (n_actions * horizon))


class BalseiroOracle(Learner):
    r"""Cross-learning exponential weights with the **true** context distribution (Balseiro et
    al., 2019): :math:`\hat\ell_t(c,a)=\ell_t(c,a)\mathbb 1[A_t=a]/(f_t(a)+\gamma)` with
    :math:`f_t(a)=\sum_c\nu(c)\pi_t(a\mid c)`, for every context.

    Parameters
    ----------
    context_probs : array (C,)
        :math:`\nu`, the distribution the oracle is given.
    eta : float, optional
        :math:`\eta`; default :math:`\sqrt{2\ln K/(KT)}`.
    gamma : float, optional
        Implicit exploration :math:`\gamma` (Neu, 2015); default :math:`\eta/2`.  0 gives the
        unbiased estimator.
    """

    def __init__(self, context_probs, *, eta=None, gamma=None):
        self.context_probs = np.asarray(context_probs, dtype=float)
        self.eta = _optional_rate(eta, "eta", allow_zero=False)
        self.gamma = _optional_rate(gamma, "gamma", allow_zero=True)

    def reset(self, problem, n_seeds, horizon, rng):
        self.nu = _probability_vector(self.context_probs, problem.n_contexts, "context_probs")
        self._nu32 = self.nu.astype(np.float32)
        self.eta_ = _default_eta(self.eta, 1.0, horizon, problem.n_actions)
        self.gamma_ = self.eta_ / 2 if self.gamma is None else self.gamma
        self.weights = _ContextWeights(problem.allowed, n_seeds)

    def policy(self, contexts):
        return self.weights.at_contexts(contexts)

    def marginal(self, actions):
        r""":math:`f_t(A_t)=\sum_c\nu(c)\pi_t(A_t\mid c)` (shape ``(S,)``) and the gathered
        weights."""
        w, prob = self.weights.column(actions)
        return prob @ self._nu32, w

    def update(self, actions, feedback):
        f, w = self.marginal(actions)
        self.weights.shrink_column(actions, w, -self.eta_ / (f + self.gamma_), feedback)


class SchneiderZimmert(Learner):
    r"""Cross-learning with an **unknown** context distribution (Schneider & Zimmert, 2023; the
    algorithm whose high-probability regret Huang & Huang, 2025, bound).

    The marginal :math:`f_t(a)` of :class:`BalseiroOracle` is replaced by the plug-in
    :math:`\hat f_t(a)=\sum_c H_{e-1}(c)\pi_t(a\mid c)` over the contexts stored during the
    previous epoch, and

    .. math:: \hat\ell_t(c,a)=\frac{\ell_t(c,a)\mathbb 1[A_t=a]}{\hat f_t(a)+\gamma}
              \quad\text{for every } c.

    With ``paired=True`` (default) an exponential-weights step spans two rounds played with the
    same :math:`\pi`; a fair coin makes one of them the learning round (its feedback, counted
    twice since the step covers two rounds, updates :math:`\hat L`) and the other the estimation
    round (its context joins the current epoch's sample).  The estimation contexts of epoch
    :math:`e-1` thus cannot have influenced :math:`\pi_t` for :math:`t` in epoch :math:`e`.
    During the first epoch there is no sample yet: the learner plays uniformly and only collects
    contexts (our choice).  With ``paired=False`` every round learns and every round's context is
    stored.  See the module docstring for what is and is not verified against Algorithm 1.

    Two further readings are options.  ``coin=False`` keeps the pairs but always lets the first
    round of a pair learn and the second estimate: an oblivious adversary that knows the
    schedule can then put its losses where the learner never looks
    (:func:`estimation_round_adversary`).  ``frozen=True`` plays, during epoch :math:`e`, the
    policy :math:`\pi_e` fixed at the epoch's start, and uses it in :math:`\hat f`; the
    updates of the epoch accumulate in :math:`\hat L` and take effect at the next epoch.

    Parameters
    ----------
    eta, gamma : float, optional
        As in :class:`BalseiroOracle`.
    epoch_length : int, optional
        Rounds per epoch :math:`L` (even when ``paired``); default :math:`2\lceil\sqrt T\,\rceil`.
    paired : bool
        Pair rounds into (learning, estimation) steps.
    coin : bool
        With ``paired``, draw the learning round of each pair by a fair coin (default) or
        always take the first.
    frozen : bool
        Freeze the played policy within each epoch.
    """

    def __init__(self, *, eta=None, gamma=None, epoch_length=None, paired: bool = True,
                 coin: bool = True, frozen: bool = False):
        self.eta = _optional_rate(eta, "eta", allow_zero=False)
        self.gamma = _optional_rate(gamma, "gamma", allow_zero=True)
        if epoch_length is not None:
            epoch_length = check_int(epoch_length, "epoch_length", minimum=1)
            if paired and epoch_length % 2:
                raise ValueError(f"epoch_length must be even when paired, got {epoch_length}")
        for flag, name in ((paired, "paired"), (coin, "coin"), (frozen, "frozen")):
            if not isinstance(flag, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {flag!r}")
        if not paired and not coin:
            raise ValueError("coin=False needs paired=True (the coin chooses within a pair)")
        self.epoch_length = epoch_length
        self.paired = bool(paired)
        self.coin = bool(coin)
        self.frozen = bool(frozen)

    def reset(self, problem, n_seeds, horizon, rng):
        self.eta_ = _default_eta(self.eta, 1.0, horizon, problem.n_actions)
        self.gamma_ = self.eta_ / 2 if self.gamma is None else self.gamma
        self.epoch_length_ = self.epoch_length or 2 * math.ceil(math.sqrt(horizon))
        self.weights = _ContextWeights(problem.allowed, n_seeds)
        self.rng = rng
        self.rows = np.arange(n_seeds)
        self.sample_counts = np.zeros((n_seeds, problem.n_contexts))  # current epoch
        self.previous_sample: np.ndarray | None = None  # H_{e-1}, rows sum to 1
        self.round_in_epoch = 0
        self.epoch = 0
        self._first: tuple | None = None  # (contexts, actions, feedback) of the pair's first round
        self._freeze()

    def _freeze(self):
        """Snapshot of the weights played during the coming epoch (``frozen`` only)."""
        if self.frozen:
            self._frozen_w = self.weights.w.copy()
            self._frozen_z = self.weights.w.sum(axis=1)

    def policy(self, contexts):
        self._contexts = contexts
        if self.frozen:
            w = self._frozen_w[self.rows, :, contexts].astype(float)
            return w / w.sum(axis=1, keepdims=True)
        return self.weights.at_contexts(contexts)

    def marginal_estimate(self, actions):
        r""":math:`\hat f_t(A_t)=\sum_c H_{e-1}(c)\pi_t(A_t\mid c)`, shape ``(S,)``, and the
        gathered weights (``None`` during the first epoch).  With ``frozen``, :math:`\pi_t` is
        the epoch's frozen policy, while the returned weights are the live ones."""
        w, prob = self.weights.column(actions)
        if self.frozen:
            prob = self._frozen_w[self.rows, actions] / self._frozen_z
        if self.previous_sample is None:
            return None, w
        return np.einsum("sc,sc->s", prob, self.previous_sample), w

    def update(self, actions, feedback):
        contexts = self._contexts
        if self.paired:
            if self._first is None:
                self._first = (contexts, actions, feedback)
                self._advance()
                return
            c1, a1, l1 = self._first
            self._first = None
            draw = self.rng.random(len(actions))
            second_learns = draw < 0.5 if self.coin else np.zeros(len(actions), dtype=bool)
            actions = np.where(second_learns, actions, a1)
            feedback = np.where(second_learns[:, None], feedback, l1)
            stored = np.where(second_learns, c1, contexts)
            repeat = 2.0
        else:
            stored, repeat = contexts, 1.0
        self.sample_counts[self.rows, stored] += 1
        f_hat, w = self.marginal_estimate(actions)
        if f_hat is not None:
            self.weights.shrink_column(actions, w, -repeat * self.eta_ / (f_hat + self.gamma_),
                                       feedback)
        self._advance()

    def _advance(self):
        self.round_in_epoch += 1
        if self.round_in_epoch == self.epoch_length_:
            counts = self.sample_counts
            self.previous_sample = (counts / counts.sum(axis=1, keepdims=True)).astype(np.float32)
            self.sample_counts = np.zeros_like(counts)
            self.round_in_epoch = 0
            self.epoch += 1
            self._freeze()


class PerContextExp3(Learner):
    r"""EXP3 (with implicit exploration) run separately in every context: no cross-learning.

    Only :math:`\ell_t(c_t,A_t)` is used: :math:`\hat\ell_t(c_t,a)=\ell_t(c_t,a)\mathbb 1[A_t=a]
    /(\pi_t(a\mid c_t)+\gamma)`.  Its regret grows like :math:`\sqrt{CKT}`; the default
    :math:`\eta=\sqrt{2C\ln K/(KT)}` balances :math:`C` copies of EXP3 on :math:`T/C` rounds each.
    """

    cross_learning = False

    def __init__(self, *, eta=None, gamma=None):
        self.eta = _optional_rate(eta, "eta", allow_zero=False)
        self.gamma = _optional_rate(gamma, "gamma", allow_zero=True)

    def reset(self, problem, n_seeds, horizon, rng):
        self.eta_ = _default_eta(self.eta, problem.n_contexts, horizon, problem.n_actions)
        self.gamma_ = self.eta_ / 2 if self.gamma is None else self.gamma
        allowed = problem.allowed.astype(float)
        self.probs = np.repeat((allowed / allowed.sum(axis=1, keepdims=True))[None], n_seeds, 0)
        self.rows = np.arange(n_seeds)

    def policy(self, contexts):
        self._contexts = contexts
        return self.probs[self.rows, contexts]

    def update(self, actions, feedback):
        p = self.probs[self.rows, self._contexts]  # (S, K)
        played = p[self.rows, actions]
        p[self.rows, actions] = played * np.exp(-self.eta_ * feedback / (played + self.gamma_))
        self.probs[self.rows, self._contexts] = p / p.sum(axis=1, keepdims=True)


class ContextBlindExp3(Learner):
    r"""EXP3 (with implicit exploration) that ignores the context: one distribution over actions,
    renormalised over the actions allowed in :math:`c_t` (sleeping arms).  It competes with the
    best single action, not the best policy, so its regret against policies grows linearly when
    the best action depends on the context."""

    cross_learning = False

    def __init__(self, *, eta=None, gamma=None):
        self.eta = _optional_rate(eta, "eta", allow_zero=False)
        self.gamma = _optional_rate(gamma, "gamma", allow_zero=True)

    def reset(self, problem, n_seeds, horizon, rng):
        self.eta_ = _default_eta(self.eta, 1.0, horizon, problem.n_actions)
        self.gamma_ = self.eta_ / 2 if self.gamma is None else self.gamma
        self.allowed = problem.allowed
        self.weights = np.full((n_seeds, problem.n_actions), 1.0 / problem.n_actions)
        self.rows = np.arange(n_seeds)

    def policy(self, contexts):
        w = self.weights * self.allowed[contexts]
        self._current = w / w.sum(axis=1, keepdims=True)
        return self._current

    def update(self, actions, feedback):
        played = self._current[self.rows, actions]
        self.weights[self.rows, actions] *= np.exp(-self.eta_ * feedback / (played + self.gamma_))
        self.weights /= self.weights.sum(axis=1, keepdims=True)


class FixedPolicy(Learner):
    """Plays a given policy: ``policy[c]`` is an action, or a row of probabilities.  A reference
    point (e.g. the optimal policy, with zero regret) and a test device."""

    cross_learning = False

    def __init__(self, policy):
        self.given = np.asarray(policy)

    def reset(self, problem, n_seeds, horizon, rng):
        C, K = problem.n_contexts, problem.n_actions
        if self.given.ndim == 1:
            if self.given.shape != (C,) or not np.issubdtype(self.given.dtype, np.integer):
                raise ValueError(f"an action policy must be {C} integers")
            if self.given.min() < 0 or self.given.max() >= K:
                raise ValueError(f"actions must be in 0..{K - 1}")
            table = np.eye(K)[self.given]
        else:
            table = np.asarray(self.given, dtype=float)
            if table.shape != (C, K) or np.any(table < 0) or not np.allclose(table.sum(1), 1):
                raise ValueError(f"a randomised policy must be ({C}, {K}) rows of probabilities")
        if np.any((table > 0) & ~problem.allowed):
            raise ValueError("the policy plays actions that are not allowed")
        self.table = table

    def policy(self, contexts):
        return self.table[contexts]

    def update(self, actions, feedback):
        pass


# --------------------------------------------------------------------------- simulation


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
    for rnd in env.rounds(n_seeds, horizon, np.random.default_rng(loss_seed)):
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
            raise ValueError(f"learners[{name!r}] is not a Learner")
    if len({id(learner) for learner in learners.values()}) != len(learners):
        raise ValueError("each learner object may appear only once")
    if not isinstance(env, Environment):
        raise ValueError("env must be an Environment")

    problem = env.problem
    C = problem.n_contexts
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    context_rng = np.random.default_rng(_child_seed(root, 0))
    fixed_policy = _fixed_comparator(env, n_seeds, horizon, _child_seed(root, 1))
    names = list(learners)
    action_rngs = {}
    seconds = dict.fromkeys(names, 0.0)
    for name in names:
        # streams keyed by the learner's name: adding a learner changes nobody else's run
        key = 2 + zlib.crc32(str(name).encode())
        tic = time.perf_counter()
        learners[name].reset(problem, n_seeds, horizon,
                             np.random.default_rng(_child_seed(root, key, 0)))
        seconds[name] += time.perf_counter() - tic
        action_rngs[name] = np.random.default_rng(_child_seed(root, key, 1))

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
    rounds = env.rounds(n_seeds, horizon, np.random.default_rng(_child_seed(root, 1)))
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
