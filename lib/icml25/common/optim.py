"""Adam with ``torch.optim.Adam``'s arithmetic, without its start-up cost.

Every ``torch.optim`` optimiser imports ``torch._dynamo`` (the compiler's front end, about a
second on these machines) the first time it adds a parameter group and at every step, so that
compiled code can break its graph there. No chapter compiles, and a chapter that trains a small
model in quick mode spends as long on that import as on the training. :class:`Adam` performs,
operation for operation, the update that ``torch.optim.Adam`` performs on CPU tensors with its
defaults (no weight decay, no AMSGrad): the trained weights are bit-for-bit the same (a test
compares them).
"""

from __future__ import annotations

import torch

from icml25.common.validation import check_scalar


class Adam:
    r"""Adam (Kingma and Ba, 2015) for CPU tensors, step for step ``torch.optim.Adam``.

    For a parameter :math:`\theta` with gradient :math:`g_t` at its :math:`t`-th update,

    .. math::

        m_t = \beta_1 m_{t-1} + (1 - \beta_1) g_t, \qquad
        v_t = \beta_2 v_{t-1} + (1 - \beta_2) g_t^2,

        \theta_t = \theta_{t-1} - \frac{\eta}{1 - \beta_1^t}\,
                   \frac{m_t}{\sqrt{v_t} / \sqrt{1 - \beta_2^t} + \epsilon},

    with :math:`m_0 = v_0 = 0`. A parameter whose gradient is ``None`` is skipped and its
    :math:`t` does not advance, as in torch.

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
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8) -> None:
        self.params = list(params)
        if not self.params:
            raise ValueError("Adam needs at least one parameter; got an empty iterable")
        for p in self.params:
            if not isinstance(p, torch.Tensor) or p.device.type != "cpu" or p.is_complex():
                raise ValueError("Adam updates real CPU tensors only; got "
                                 f"{type(p).__name__} on {getattr(p, 'device', '?')}")
        self.lr = check_scalar(lr, "lr", minimum=0.0, open_minimum=True)
        beta1, beta2 = betas
        self.beta1 = check_scalar(beta1, "betas[0]", minimum=0.0, maximum=1.0, open_maximum=True)
        self.beta2 = check_scalar(beta2, "betas[1]", minimum=0.0, maximum=1.0, open_maximum=True)
        self.eps = check_scalar(eps, "eps", minimum=0.0)
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
            # the same operations, in the same order, as torch's single-tensor Adam on CPU
            m.lerp_(g, 1 - self.beta1)
            v.mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
            step_size = self.lr / (1 - self.beta1 ** float(t))
            denom = (v.sqrt() / (1 - self.beta2 ** float(t)) ** 0.5).add_(self.eps)
            p.addcdiv_(m, denom, value=-step_size)
