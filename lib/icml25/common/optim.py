r"""Adam and AdamW with ``torch.optim``'s arithmetic and a square root that every x86 CPU rounds
alike, and the learning-rate schedules the chapters use.

**Why not ``torch.optim``.** On float32 CPU tensors, ``Tensor.sqrt`` calls MKL's vector square
root (``vmsSqrt``, high-accuracy mode), which is not correctly rounded and rounds differently on
an Intel and an AMD CPU even under ``MKL_CBWR=COMPATIBLE``: on a vector of 10,000 draws the two
vendors give different bits (``data/reference/numerics``), and on an AMD EPYC 17% of the results
are one unit in the last place off the correctly rounded root. Adam divides by
:math:`\sqrt{v_t}` at every step, so a model trained with ``torch.optim.Adam`` ends in other
bits on the other vendor's CPU, and a model that lands in another basin moves a claim. The
optimisers here take the root through float64 (:func:`sqrt`), which is correctly rounded on
both; otherwise they perform, operation for operation, the update of ``torch.optim.Adam`` and
``AdamW`` on CPU tensors (a test replaces ``Tensor.sqrt`` by :func:`sqrt` in torch's optimiser
and compares the weights bit for bit).

They also skip ``torch.optim``'s start-up cost: every ``torch.optim`` optimiser imports
``torch._dynamo`` (about a second) the first time it adds a parameter group.

The schedules (:func:`one_cycle`, :func:`cosine`) are the formulas of torch's ``OneCycleLR``
and ``CosineAnnealingLR``, as functions of the step; the training loop sets ``opt.lr`` (and,
for the one-cycle policy, ``opt.beta1``) before each step.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from icml25.common.validation import check_int, check_scalar


def sqrt(x: torch.Tensor) -> torch.Tensor:
    r"""The correctly rounded square root of a float32 (or float64) tensor, on any CPU.

    A float32 input is widened to float64, rooted, and rounded back. This is the correctly
    rounded float32 root whenever the float64 root is within two units in its last place: for a
    float32 :math:`x` with a 24-bit significand, :math:`\sqrt x` is never within
    :math:`2^{-50}` (relative) of a midpoint between two float32 numbers unless it is one, and
    none is (its square would need 50 bits), while two float64 units are :math:`2^{-51}`.
    MKL's float64 root is within one unit on every CPU. A float64 input is rooted as is.

    Outside autograd a float32 tensor takes numpy's float32 root instead, the CPU's correctly
    rounded instruction: the same bits without the widening (a test compares the two).
    """
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(f"sqrt needs a floating-point tensor; got {type(x).__name__}"
                        f"{'' if not isinstance(x, torch.Tensor) else ' of ' + str(x.dtype)}")
    if x.dtype == torch.float64:
        return torch.sqrt(x)
    if x.dtype == torch.float32 and not (x.requires_grad and torch.is_grad_enabled()):
        # the same bits, about three times sooner: numpy's float32 root is the CPU's root
        # instruction (or the C library's sqrtf), which IEEE 754 requires to be correctly rounded
        a = x.detach().numpy()
        return torch.from_numpy(np.sqrt(a, out=np.empty_like(a)))
    return torch.sqrt(x.double()).to(x.dtype)  # differentiable, for a tensor that needs a grad


class Adam:
    r"""Adam (Kingma and Ba, 2015) for CPU tensors, step for step ``torch.optim.Adam``.

    For a parameter :math:`\theta` with gradient :math:`g_t` at its :math:`t`-th update,

    .. math::

        m_t = \beta_1 m_{t-1} + (1 - \beta_1) g_t, \qquad
        v_t = \beta_2 v_{t-1} + (1 - \beta_2) g_t^2,

        \theta_t = (1 - \eta\lambda)\,\theta_{t-1} - \frac{\eta}{1 - \beta_1^t}\,
                   \frac{m_t}{\sqrt{v_t} / \sqrt{1 - \beta_2^t} + \epsilon},

    with :math:`m_0 = v_0 = 0` and the decoupled weight decay :math:`\lambda` of AdamW
    (Loshchilov and Hutter, 2019; :math:`\lambda = 0` for Adam). :math:`\eta` and
    :math:`\beta_1` are read at each step, so that a schedule may set them (``opt.lr``,
    ``opt.beta1``). A parameter whose gradient is ``None`` is skipped and its :math:`t` does
    not advance, as in torch.

    Parameters
    ----------
    params : iterable of torch.nn.Parameter
        The parameters to update in place.
    lr : float
        The learning rate :math:`\eta > 0`.
    betas : tuple of float
        :math:`(\beta_1, \beta_2)`, each in :math:`[0, 1)`.
    eps : float
        :math:`\epsilon \ge 0`, added to the denominator.
    weight_decay : float
        :math:`\lambda \ge 0`, decoupled (AdamW's); 0 for Adam.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0) -> None:
        self.params = list(params)
        if not self.params:
            raise ValueError(f"{type(self).__name__} needs at least one parameter; got an "
                             "empty iterable")
        for p in self.params:
            if not isinstance(p, torch.Tensor) or p.device.type != "cpu" or p.is_complex():
                raise ValueError(f"{type(self).__name__} updates real CPU tensors only; got "
                                 f"{type(p).__name__} on {getattr(p, 'device', '?')}")
        self.lr = check_scalar(lr, "lr", minimum=0.0, open_minimum=True)
        beta1, beta2 = betas
        self.beta1 = check_scalar(beta1, "betas[0]", minimum=0.0, maximum=1.0, open_maximum=True)
        self.beta2 = check_scalar(beta2, "betas[1]", minimum=0.0, maximum=1.0, open_maximum=True)
        self.eps = check_scalar(eps, "eps", minimum=0.0)
        self.weight_decay = check_scalar(weight_decay, "weight_decay", minimum=0.0)
        self.state: dict[int, tuple[int, torch.Tensor, torch.Tensor]] = {}

    def zero_grad(self) -> None:
        """Forget the gradients (set them to ``None``, torch's default)."""
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        """One update of every parameter that has a gradient."""
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            t, m, v = self.state.get(i) or (0, torch.zeros_like(p), torch.zeros_like(p))
            t += 1
            self.state[i] = (t, m, v)
            g = p.grad
            # the same operations, in the same order, as torch's single-tensor Adam(W) on CPU
            if self.weight_decay:
                p.mul_(1 - self.lr * self.weight_decay)
            m.lerp_(g, 1 - self.beta1)
            v.mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
            step_size = self.lr / (1 - self.beta1 ** float(t))
            denom = (sqrt(v) / (1 - self.beta2 ** float(t)) ** 0.5).add_(self.eps)
            p.addcdiv_(m, denom, value=-step_size)


class AdamW(Adam):
    r"""Adam with decoupled weight decay, ``torch.optim.AdamW``'s defaults
    (:math:`\lambda` = 0.01); see :class:`Adam`."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)


def _cos_between(start: float, end: float, share: float) -> float:
    return end + (start - end) / 2.0 * (math.cos(math.pi * share) + 1)


def one_cycle(step: int, total_steps: int, max_lr: float, *, pct_start: float = 0.3,
              div_factor: float = 25.0, final_div_factor: float = 1e4,
              momenta: tuple[float, float] = (0.85, 0.95)) -> tuple[float, float]:
    r"""The learning rate and :math:`\beta_1` of the one-cycle policy (Smith and Topin, 2019)
    at update ``step`` (0-based), as torch's ``OneCycleLR`` with cosine annealing sets them.

    The rate rises from :math:`\eta_0 = \eta_\max/d` to :math:`\eta_\max` over the first
    ``pct_start`` of the steps, then falls to :math:`\eta_0/f`; each phase follows
    :math:`e + (s - e)(1 + \cos\pi u)/2` for the share :math:`u` of the phase done.
    :math:`\beta_1` moves the other way, from the larger of ``momenta`` to the smaller and back.
    """
    total_steps = check_int(total_steps, "total_steps", minimum=2)
    step = check_int(step, "step", minimum=0)
    if step >= total_steps:
        raise ValueError(f"step must be below total_steps={total_steps}; got {step}")
    max_lr = check_scalar(max_lr, "max_lr", minimum=0.0, open_minimum=True)
    pct_start = check_scalar(pct_start, "pct_start", minimum=0.0, maximum=1.0,
                             open_minimum=True, open_maximum=True)
    low, high = momenta
    initial = max_lr / check_scalar(div_factor, "div_factor", minimum=0.0, open_minimum=True)
    final = initial / check_scalar(final_div_factor, "final_div_factor", minimum=0.0,
                                   open_minimum=True)
    peak = float(pct_start * total_steps) - 1
    phases = ((peak, initial, max_lr, high, low), (total_steps - 1, max_lr, final, low, high))
    begin = 0.0
    for i, (end, lr_from, lr_to, beta_from, beta_to) in enumerate(phases):
        if step <= end or i == len(phases) - 1:
            share = (step - begin) / (end - begin)
            return (_cos_between(lr_from, lr_to, share),
                    _cos_between(beta_from, beta_to, share))
        begin = end
    raise AssertionError("unreachable")


def cosine(step: int, total_steps: int, lr: float, eta_min: float = 0.0) -> float:
    r"""The learning rate of cosine annealing (Loshchilov and Hutter, 2017) at update ``step``
    (0-based): :math:`\eta_\min + (\eta - \eta_\min)(1 + \cos(\pi t / T))/2`, the closed form
    of torch's ``CosineAnnealingLR`` with ``T_max`` = ``total_steps``."""
    total_steps = check_int(total_steps, "total_steps", minimum=1)
    step = check_int(step, "step", minimum=0)
    lr = check_scalar(lr, "lr", minimum=0.0, open_minimum=True)
    eta_min = check_scalar(eta_min, "eta_min", minimum=0.0)
    return _cos_between(lr, eta_min, step / total_steps)
