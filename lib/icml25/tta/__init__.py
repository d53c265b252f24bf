r"""Steady-state adaptation (SSA) for online test-time adaptation (Lee, ICML 2025), at toy scale.

**Setting.** A classifier :math:`f_\theta` trained on clean data meets an unlabelled stream of
batches :math:`x_1, x_2, \dots` whose distribution shifts (here: a continual sequence of image
corruptions). At every step the method first *predicts* on :math:`x_t` and then *updates* a small
set of weights :math:`\theta` (the affine parameters of the BatchNorm layers) from :math:`x_t`
alone: online TTA. Noisy unsupervised gradients make :math:`\theta_t` drift ("weight
degradation"); the paper's *Bayesian weight enhancement* reads weight ensembling, teacher
averaging and restore-to-source as filters over a latent weight state, and SSA adds a
covariance-aware step-size rule derived from the steady state of an SDE model of the TTA process.

**Methods** (all share ``_TTAMethod.adapt``, predict-then-update):

============  ================================================================================
``Source``    no adaptation, BatchNorm in eval mode (source statistics)
``BNStats``   BatchNorm normalises with the statistics of the test batch; no gradient
``Tent``      entropy minimisation of the BN affine parameters with SGD (Wang et al., 2021)
``ROID``      certainty/diversity-weighted soft-likelihood-ratio loss, then weight ensembling
              :math:`\theta\leftarrow(1-\kappa_s)\,\theta + \kappa_s\,\theta_\text{src}`
              (Marsden et al., 2024)
``CMF``       ROID loss, then the dual filter of continual momentum filtering (Lee & Chang, 2024)
``SSA``       CMF plus the steady-state, covariance-aware rescaling of each SGD update
============  ================================================================================

**The SSA step** (read from the author's code, ``classification/methods/ssa.py`` of
``j-pong/test-time-adaptation``; the paper's equations were not checked, see ``notes-tta.md``).
After the SGD step :math:`\theta_{t-1}\to\theta^\text{sgd}_t` with learning rate :math:`\eta`,

.. math::
    g_t &= \operatorname{mean}_i\,\frac{\theta_{t-1,i} - \theta^\text{sgd}_{t,i}}{\eta}
        \quad\text{(one scalar: the parameter-mean of the update)}\\
    \sigma^2_t &= \operatorname{Var}\big(b_{t-N},\dots,b_{t-1},\,g_t\big)
        \quad\text{(population variance over the buffer and } g_t)\\
    s_t &= \begin{cases} \sqrt{S / (\eta^2\sigma_t^2)} & \text{steady}\\
                        1 & \text{otherwise}\end{cases},
        \qquad \text{steady} \Leftarrow \text{buffer full and }
        \sqrt{S/(\eta^2\sigma_t^2)} < \sqrt 2
        \ \text{(sticky)}\\
    \tilde\theta_t &= (1 - s_t)\,\theta_{t-1} + s_t\,\theta^\text{sgd}_t\\
    h_t &= \beta\,\big(\alpha\,h_{t-1} + (1-\alpha)\,\theta_\text{src}\big)
           + (1-\beta)\,\tilde\theta_t\\
    \theta_t &= (1-\kappa)\,\tilde\theta_t + \kappa\,h_t,
        \qquad b_t = s_t\, g_t \ \text{ is appended to the buffer of length } N.

Once steady, the rule holds :math:`\eta\, s_t\, \sigma_t = \sqrt S` by construction. Because the
buffer stores the *rescaled* :math:`b = s\,g`, a slowly varying step settles at
:math:`s \approx (S/\eta^2\sigma_g^2)^{1/4}`, so :math:`\eta\, s^2 \operatorname{std}(g) \approx
\sqrt S` and the applied displacement :math:`\eta\, s\, \operatorname{std}(g)` grows like the square
root of the gradient noise instead of staying fixed; the author's ``ssa_theory.py`` buffers
:math:`g` itself (``scale_buffer=False``), which holds :math:`\eta\, s\, \operatorname{std}(g) =
\sqrt S` exactly. CMF is the same filter with :math:`s_t\equiv 1`.

Left out (documented differences): the ROID augmentation-consistency term and prior correction,
mixed precision, and the original CMF's Kalman-gain :math:`\beta_t` (we use SSA's fixed
:math:`\beta`). The data are scikit-learn's digits and a 5,000-image MNIST subset, not
ImageNet-C. For class-correlated streams, :func:`ema_statistics` swaps in RoTTA's robust
BatchNorm and :func:`run_stream` orders each visit by :func:`dirichlet_order`.

**The parts.** Everything public is re-exported here (``from icml25 import tta``; ``tta.SSA``).

* :mod:`.data`: :func:`load_digits16`, :func:`load_mnist` and the corruptions (:func:`corrupt`).
* :mod:`.model`: :class:`SmallCNN`, :class:`SmallMLP` (a second architecture),
  :func:`train_source`, :func:`accuracy`, and robust
  BatchNorm (:class:`EMABatchNorm2d`, :func:`ema_statistics`).
* :mod:`.methods`: ``Source``, ``BNStats``, ``Tent`` (which holds the adapted parameters as one
  flat vector and takes the SGD step itself), ``ROID``, ``CMF``.
* :mod:`.ssa`: :class:`SteadyStateRule` and :class:`SSA`.
* :mod:`.stream`: :func:`make_stream`, :func:`dirichlet_order`, :func:`run_stream`,
  :func:`run_streams`.
"""

from __future__ import annotations

from .data import (
    CORRUPTIONS,
    DEFAULT_DOMAINS,
    IMAGE_SIZE,
    N_CLASSES,
    corrupt,
    load_digits16,
    load_mnist,
)
from .methods import CMF, ROID, BNStats, Source, Tent
from .methods import _TTAMethod as _TTAMethod
from .model import (
    ARCHITECTURES,
    EMABatchNorm2d,
    SmallCNN,
    SmallMLP,
    accuracy,
    as_batch,
    ema_statistics,
    train_source,
)
from .model import (
    _bn_layers as _bn_layers,
)
from .ssa import SSA, SteadyStateRule
from .stream import Domain, StreamResult, dirichlet_order, make_stream, run_stream, run_streams

METHODS = {cls.name: cls for cls in (Source, BNStats, Tent, ROID, CMF, SSA)}
"""Display name -> class."""

__all__ = [
    "ARCHITECTURES",
    "CMF",
    "CORRUPTIONS",
    "DEFAULT_DOMAINS",
    "IMAGE_SIZE",
    "METHODS",
    "N_CLASSES",
    "ROID",
    "SSA",
    "BNStats",
    "Domain",
    "EMABatchNorm2d",
    "SmallCNN",
    "SmallMLP",
    "Source",
    "SteadyStateRule",
    "StreamResult",
    "Tent",
    "accuracy",
    "as_batch",
    "corrupt",
    "dirichlet_order",
    "ema_statistics",
    "load_digits16",
    "load_mnist",
    "make_stream",
    "run_stream",
    "run_streams",
    "train_source",
]
