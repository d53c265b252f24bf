r"""Features are fate: transfer learning in high-dimensional regression (Tahir, Ganguli &
Rotskoff, ICML 2025).

**The model.** Inputs :math:`x\sim\mathcal N(0, I_d)`, labels :math:`y=\beta^\top x+\sigma\epsilon`.
Source and target weights are unit vectors at angle :math:`\theta`,
:math:`\beta_t=\cos\theta\,\beta_s+\sin\theta\,\beta_\perp`. A deep linear network
:math:`f(x)=x^\top W_1\cdots W_L` is pretrained on the source (population loss, small
initialisation), then adapted to :math:`n=\gamma d` target samples. The risk of an estimate
:math:`\hat\beta` is :math:`R=\|\hat\beta-\beta_t\|^2`; the transferability of a method is
:math:`\mathcal T=R_{\text{scratch}}-R_{\text{method}}` (positive: transfer helps).

**The parts.** Everything public is re-exported here (``from icml25 import transfer_theory as
tt``; ``tt.risk_scratch``, ...).

* :mod:`.closed_forms`: closed forms of the proportional limit :math:`n,d\to\infty`,
  :math:`n/d=\gamma`: :func:`risk_scratch` (eq. 8), :func:`risk_linear_transfer` (eqs. 10 and
  13), :func:`transfer_gain_linear` (eq. 11), :func:`transfer_gain_finetune` (eq. 15, with the
  balancedness scale :func:`finetune_scale` for label noise), :func:`break_even_angle`, and the
  exact finite-size means :func:`risk_scratch_finite`, :func:`risk_linear_transfer_finite`.
* :mod:`.linear`: deep linear networks on finite data. Endpoints of training for one data set
  (:func:`min_norm_interpolator`, :func:`finetune_endpoint`); weight-space gradient descent
  (:func:`init_deep_linear`, :func:`deep_linear_gd`) and, for whole phase diagrams, the
  end-to-end gradient flow of a balanced network (:func:`gradient_flow`,
  :func:`simulate_transfer`), batched over :math:`(\sigma,\theta,\text{seed})`; ridge read-out
  on frozen features, :func:`linear_transfer`.
* :mod:`.relu`: the nonlinear analogue, a mean-field two-layer ReLU student and a ReLU teacher
  whose source version lacks a fraction :math:`\mu` of its neurons
  (:func:`simulate_relu_transfer`).
* :mod:`.digits`: beyond the model, on real images: a small ReLU network on scikit-learn's
  digits, source and target tasks that detect digit classes with a shared fraction :math:`q`
  (the cosine of their angle), pretrained, then transferred or trained from scratch
  (:func:`simulate_digits_transfer`); torch is imported only when a network is trained.
* :mod:`._common`: argument validation shared by the parts, and the learner names.

Equation and theorem numbers follow arXiv 2410.08194v2 (not checked against the paper's full
text). The balance factor :math:`c` of fine-tuning with label noise is derived here from the
conserved quantity of gradient flow; at :math:`\sigma=0` it is 1 and eq. (15) is recovered.
"""

from __future__ import annotations

from ._common import LEARNERS as LEARNERS
from .closed_forms import (
    break_even_angle,
    finetune_scale,
    risk_linear_transfer,
    risk_linear_transfer_finite,
    risk_scratch,
    risk_scratch_finite,
    transfer_gain_finetune,
    transfer_gain_linear,
)
from .digits import (
    DigitsSimulation,
    detection_labels,
    digit_task_classes,
    init_mlp,
    load_digit_images,
    mlp_features,
    mlp_forward,
    ridge_readout,
    simulate_digits_transfer,
    train_mlp,
)
from .linear import (
    FlowResult as FlowResult,
)
from .linear import (
    Tasks as Tasks,
)
from .linear import (
    TransferSimulation,
    deep_linear_gd,
    end_to_end,
    finetune_endpoint,
    gradient_flow,
    init_deep_linear,
    linear_transfer,
    make_tasks,
    min_norm_interpolator,
    simulate_transfer,
)
from .relu import (
    ReluSimulation,
    relu_fit,
    relu_kernel,
    relu_linear_transfer,
    relu_out_of_span,
    relu_population_risk,
    relu_pretrain,
    simulate_relu_transfer,
)
from .relu import (
    _relu_population_grads as _relu_population_grads,  # imported by the tests
)

__all__ = [
    "risk_scratch",
    "risk_scratch_finite",
    "risk_linear_transfer",
    "risk_linear_transfer_finite",
    "transfer_gain_linear",
    "finetune_scale",
    "transfer_gain_finetune",
    "break_even_angle",
    "min_norm_interpolator",
    "finetune_endpoint",
    "init_deep_linear",
    "end_to_end",
    "deep_linear_gd",
    "gradient_flow",
    "linear_transfer",
    "make_tasks",
    "TransferSimulation",
    "simulate_transfer",
    "relu_kernel",
    "relu_population_risk",
    "relu_out_of_span",
    "relu_pretrain",
    "relu_fit",
    "relu_linear_transfer",
    "ReluSimulation",
    "simulate_relu_transfer",
    "load_digit_images",
    "digit_task_classes",
    "detection_labels",
    "init_mlp",
    "train_mlp",
    "mlp_forward",
    "mlp_features",
    "ridge_readout",
    "DigitsSimulation",
    "simulate_digits_transfer",
]
