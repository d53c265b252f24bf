r"""Baselines without cross-learning: EXP3-IX per context, EXP3-IX blind to the context, and a
fixed policy (a reference point and a test device)."""

from __future__ import annotations

import numpy as np

from ._common import _optional_rate
from .learners import Learner, _default_eta


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
