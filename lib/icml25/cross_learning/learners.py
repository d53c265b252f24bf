r"""Cross-learning learners: exponential weights with the true context distribution
(:class:`BalseiroOracle`) and with the epoch estimator (:class:`SchneiderZimmert`, a
reconstruction), on weights stored per run, action and context (:class:`_ContextWeights`)."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from icml25.common.validation import check_int

from ._common import _optional_rate, _probability_vector
from .environments import Problem


class Learner(ABC):
    """A learner for ``S`` independent runs at once.

    The simulator calls ``reset`` once, then in every round :meth:`policy` with the contexts
    :math:`c_t` (shape ``(S,)``), draws :math:`A_t\\sim` the returned rows itself, and calls
    ``update`` with the actions and the feedback: ``(S, C)`` losses of the played action in
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
    (:func:`~icml25.cross_learning.adversaries.estimation_round_adversary`).  ``frozen=True``
    plays, during epoch :math:`e`, the policy :math:`\pi_e` fixed at the epoch's start, and uses
    it in :math:`\hat f`; the updates of the epoch accumulate in :math:`\hat L` and take effect
    at the next epoch.

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
                raise TypeError(f"{name} must be True or False, got {flag!r}")
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
