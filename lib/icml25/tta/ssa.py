"""SSA's covariance-aware step rule (:class:`SteadyStateRule`) and the method (:class:`SSA`):
CMF with each SGD update rescaled by the rule's step."""

from __future__ import annotations

import math

import numpy as np
from torch import nn

from .methods import CMF


class SteadyStateRule:
    r"""The covariance-aware step rule of SSA, on the scalar update statistic :math:`g_t`.

    :meth:`observe` takes :math:`g_t` and returns the step :math:`s_t`:

    .. math::
        \sigma_t^2 = \operatorname{Var}(b_{t-N},\dots,b_{t-1}, g_t),\qquad
        s_t = \sqrt{S/(\eta^2\sigma_t^2)}\ \text{once steady, else } 1,

    where the switch to steady is taken, for good, the first time the buffer is full and the
    proposal is below ``threshold`` (:math:`\sqrt 2`), and :math:`b_t = s_t g_t` is appended to the
    buffer (``scale_buffer=False`` appends :math:`g_t`, as the author's ``ssa_theory.py``).

    ``S`` (:math:`S`) is absolute when given; otherwise it is set relative to the first full
    buffer, :math:`S = S_\text{rel}\,\eta^2\sigma^2_{t_0}`, so that the first proposal is
    :math:`\sqrt{S_\text{rel}}` whatever the model's scale of gradient noise.

    Default: relative, :math:`S_\text{rel}=1`. The author's absolute ``EPS = 1e-12`` is tuned to
    a ResNet-50's BatchNorm parameters at lr 2.5e-4; on the toy CNN (lr 5e-3) it gives steps near
    1e-3, i.e. it freezes the weights at the switch. :math:`S_\text{rel}=1` is the one choice
    that needs no knowledge of the model: the step starts at 1 (SSA coincides with CMF up to the
    switch, which then happens at once), shrinks when the update noise grows above its level at
    :math:`t_0` and *grows above 1* when it falls below. If :math:`t_0` falls inside the large
    transient of the first domain, the later steps are mostly above 1; sweep
    :math:`S_\text{rel}` (e.g. 0.25, 1, 4) rather than trust one value. With
    :math:`S_\text{rel}\ge 2` the switch waits until the noise exceeds :math:`S_\text{rel}/2`
    times its level at :math:`t_0`, and may never come (then SSA is CMF).

    The buffer counts as full once it holds ``buffer_size`` values (the author's code waits one
    step more).
    """

    def __init__(self, lr: float, buffer_size: int = 96, S: float | None = None,
                 S_rel: float = 1.0, threshold: float = math.sqrt(2.0), scale_buffer: bool = True):
        if not lr > 0:
            raise ValueError(f"lr must be positive, got {lr!r}")
        if int(buffer_size) != buffer_size or buffer_size < 2:
            raise ValueError(f"buffer_size must be an integer >= 2, got {buffer_size!r}")
        if S is not None and not S > 0:
            raise ValueError(f"S must be positive, got {S!r}")
        if not S_rel > 0:
            raise ValueError(f"S_rel must be positive, got {S_rel!r}")
        if S is not None and S_rel != 1.0:
            raise ValueError("give S (absolute) or S_rel (relative to the first full buffer), "
                             "not both")
        if not threshold > 0:
            raise ValueError(f"threshold must be positive, got {threshold!r}")
        self.lr, self.buffer_size = float(lr), int(buffer_size)
        self.S, self.S_rel, self.threshold = S, float(S_rel), float(threshold)
        self.scale_buffer = bool(scale_buffer)
        self.buffer = np.empty(0)
        self.steady = False
        self.var = math.nan

    @property
    def full(self) -> bool:
        return len(self.buffer) >= self.buffer_size

    def observe(self, g: float) -> float:
        """Take :math:`g_t`, return :math:`s_t` and append the buffered value."""
        g = float(g)
        window = np.append(self.buffer, g)
        self.var = float(window.var()) if len(self.buffer) else math.nan
        step = 1.0
        # A zero variance (an exactly constant update) means no noise to balance: the update is
        # left as it is, and a relative S waits for the first noisy full buffer.
        if self.full and self.var > 0:
            if self.S is None:  # first full buffer: fix S relative to the noise level seen now
                self.S = self.S_rel * self.lr ** 2 * self.var
            proposal = math.sqrt(self.S / (self.lr ** 2 * self.var))
            self.steady = self.steady or proposal < self.threshold
            if self.steady:
                step = proposal
        value = step * g if self.scale_buffer else g
        self.buffer = np.append(self.buffer, value)[-self.buffer_size:]
        return step


class SSA(CMF):
    r"""Steady-state adaptation: CMF with each SGD update rescaled by the step of
    :class:`SteadyStateRule` before the dual filter,

    .. math::
        g_t = \operatorname{mean}_i (\theta_{t-1,i}-\theta^\text{sgd}_{t,i})/\eta,\quad
        \tilde\theta_t = (1-s_t)\,\theta_{t-1} + s_t\,\theta^\text{sgd}_t,\quad
        \theta_t = \mathrm{CMF}(\tilde\theta_t).

    ``history`` gains, per step: ``g`` (:math:`g_t`), ``var`` (:math:`\sigma^2_t`, NaN before the
    first buffered value), ``step`` (:math:`s_t`), ``steady`` (the switch) and, as every gradient
    method, ``drift`` (:math:`\lVert\theta_t-\theta_\text{src}\rVert_2`).

    Parameters
    ----------
    S, S_rel, buffer_size, threshold, scale_buffer
        see :class:`SteadyStateRule`. Default: relative, :math:`S_\text{rel}=1`, :math:`N=96`.
    other parameters
        as :class:`CMF` and :class:`ROID`.
    """

    name = "SSA"

    def __init__(self, model: nn.Module, lr: float = 5e-3, momentum: float = 0.9,
                 S: float | None = None, S_rel: float = 1.0, buffer_size: int = 96,
                 threshold: float = math.sqrt(2.0), scale_buffer: bool = True, **cmf):
        super().__init__(model, lr=lr, momentum=momentum, **cmf)
        self.rule = SteadyStateRule(lr, buffer_size=buffer_size, S=S, S_rel=S_rel,
                                    threshold=threshold, scale_buffer=scale_buffer)

    def _filter(self, theta_prev, theta_sgd):
        g = float(((theta_prev.double() - theta_sgd.double()) / self.lr).mean())
        step = self.rule.observe(g)
        self._record(g=g, var=self.rule.var, step=step, steady=self.rule.steady)
        theta_pred = theta_prev + step * (theta_sgd - theta_prev)
        return self._dual_filter(theta_pred)

