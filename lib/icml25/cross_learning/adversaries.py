r"""Adversaries built to stress the epoch estimator: losses that matter only on rare contexts,
and losses placed where a fixed schedule of learning and estimation rounds never looks."""

from __future__ import annotations

import numpy as np

from icml25.common.streams import as_generator
from icml25.common.validation import check_int

from .environments import TableEnvironment, _phase_index


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
    rng = as_generator(seed)
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
