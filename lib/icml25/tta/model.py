"""The source models of :mod:`icml25.tta` (:class:`SmallCNN`, :class:`SmallMLP`,
:func:`train_source`) and RoTTA's robust BatchNorm (:class:`EMABatchNorm2d`,
:func:`ema_statistics`)."""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from icml25.common.optim import Adam
from icml25.common.streams import as_generator
from icml25.common.streams import stream as seed_stream

from .data import N_CLASSES


class SmallCNN(nn.Module):
    """Three conv(3x3)+BatchNorm+ReLU blocks, 2x2 max-pooling after the first two, global average
    pooling and a linear head. With ``widths=(16, 32, 32)``: 14,458 parameters, of which 160 are
    BatchNorm affine parameters (what TTA adapts)."""

    def __init__(self, widths: Sequence[int] = (16, 32, 32), n_classes: int = N_CLASSES):
        super().__init__()
        layers, c_in = [], 1
        for i, c in enumerate(widths):
            # No conv bias: the BatchNorm shift that follows makes it redundant.
            layers += [nn.Conv2d(c_in, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
            if i < len(widths) - 1:
                layers.append(nn.MaxPool2d(2))
            c_in = c
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(c_in, n_classes)
        # Channels-last convolutions: on a batch of 32 16x16 images, oneDNN's forward and
        # backward in this layout take about a quarter less time than in NCHW (the kernels
        # are deterministic either way); every adaptation step pays for them.
        self.to(memory_format=torch.channels_last)

    def forward(self, x):
        x = x.contiguous(memory_format=torch.channels_last)
        return self.head(self.features(x).mean(dim=(2, 3)))


class SmallMLP(nn.Module):
    """A second architecture: the image flattened, then one Linear+BatchNorm1d+ReLU block per
    entry of ``widths`` and a linear head; no convolution, no pooling. With ``n_pixels=400``
    (20x20 images) and ``widths=(128, 64)``: 60,426 parameters, of which 384 are BatchNorm
    affine parameters (what TTA adapts).

    Parameters
    ----------
    n_pixels : int
        Pixels per image (``H * W``), the width of the first layer's input.
    widths : sequence of int
        Units of the hidden blocks, at least one.
    n_classes : int
        Outputs of the head.
    """

    def __init__(self, n_pixels: int, widths: Sequence[int] = (128, 64),
                 n_classes: int = N_CLASSES):
        super().__init__()
        widths = tuple(widths)
        sizes = (n_pixels, *widths, n_classes)
        if not widths or any(isinstance(w, bool) or int(w) != w or w < 1 for w in sizes):
            raise ValueError("n_pixels, n_classes and at least one width must be positive "
                             f"integers, got n_pixels={n_pixels!r}, widths={widths!r}, "
                             f"n_classes={n_classes!r}")
        layers, c_in = [nn.Flatten()], int(n_pixels)
        for c in widths:
            # No bias before BatchNorm, as in SmallCNN: the BatchNorm shift makes it redundant.
            layers += [nn.Linear(c_in, int(c), bias=False), nn.BatchNorm1d(int(c)), nn.ReLU()]
            c_in = int(c)
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(c_in, int(n_classes))

    def forward(self, x):
        return self.head(self.features(x))


#: The architectures :func:`train_source` builds, by name.
ARCHITECTURES = ("cnn", "mlp")


def as_batch(x) -> torch.Tensor:
    """Images as a ``float32`` tensor ``(n, 1, H, W)``; accepts ``(n, H, W)`` or ``(n, 1, H, W)``
    arrays or tensors."""
    t = torch.as_tensor(x)
    if t.ndim == 3:
        t = t.unsqueeze(1)
    if t.ndim != 4 or t.shape[1] != 1 or min(t.shape[2:]) < 4 or t.shape[0] < 1:
        raise ValueError(f"images must have shape (n, H, W) or (n, 1, H, W), got {tuple(t.shape)}")
    if not torch.is_floating_point(t):
        raise ValueError(f"images must be floating point, got {t.dtype}")
    return t.float()


def train_source(x, y, *, epochs: int = 15, batch_size: int = 64, lr: float = 3e-3,
                 widths: Sequence[int] = (16, 32, 32), seed: int = 0,
                 architecture: str = "cnn") -> nn.Module:
    """Train :class:`SmallCNN` (or :class:`SmallMLP`) on clean images with Adam and
    cross-entropy.

    Deterministic given ``seed``: initialisation happens under a forked torch RNG and the batch
    order comes from a numpy generator, so the caller's global RNG state is left untouched.
    (Bit-identical results also assume the same torch build and thread count.)

    Parameters
    ----------
    x, y : images (n, H, W) or (n, 1, H, W) in [0, 1] and integer labels (n,)
    epochs, batch_size, lr : Adam training schedule (defaults: 15 epochs of 64, lr 3e-3)
    widths : channels of the conv blocks (``"cnn"``) or units of the hidden blocks (``"mlp"``)
    seed : initialisation and batch order
    architecture : ``"cnn"`` (:class:`SmallCNN`) or ``"mlp"`` (:class:`SmallMLP`, its input
        the flattened image); both are trained the same way

    Returns
    -------
    SmallCNN or SmallMLP in eval mode.
    """
    xb, yb = as_batch(x), torch.as_tensor(np.asarray(y), dtype=torch.long)
    if len(xb) != len(yb):
        raise ValueError(f"x and y differ in length: {len(xb)} vs {len(yb)}")
    if not lr > 0:
        raise ValueError(f"lr must be positive, got {lr!r}")
    if int(epochs) != epochs or epochs < 1 or int(batch_size) != batch_size or batch_size < 2:
        raise ValueError(f"epochs must be >= 1 and batch_size >= 2, got {epochs!r}, {batch_size!r}")
    if architecture not in ARCHITECTURES:
        raise ValueError(f"architecture must be one of {ARCHITECTURES}, got {architecture!r}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = (SmallCNN(widths) if architecture == "cnn"
                 else SmallMLP(xb.shape[2] * xb.shape[3], widths))
    rng = as_generator(seed_stream(int(seed), "batch order"))
    opt = Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(int(epochs)):
        order = torch.as_tensor(rng.permutation(len(xb)))
        for idx in order.split(int(batch_size)):
            if len(idx) < 2:  # BatchNorm needs two samples for a batch variance
                continue
            loss = F.cross_entropy(model(xb[idx]), yb[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model.eval()


@torch.no_grad()
def accuracy(model: nn.Module, x, y) -> float:
    """Share of correct argmax predictions of ``model`` (used as is: set its mode first)."""
    pred = model(as_batch(x)).argmax(1)
    return float((pred == torch.as_tensor(np.asarray(y))).float().mean())


def _bn_layers(model: nn.Module):
    return [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]


class EMABatchNorm2d(nn.BatchNorm2d):
    r"""BatchNorm that normalises with an exponential moving average of the test batches'
    statistics, started from the source statistics (RoTTA's robust BatchNorm, Yuan et al., 2023):

    .. math::
        \mu \leftarrow (1-m)\,\mu + m\,\mu_\text{batch},\qquad
        \sigma^2 \leftarrow (1-m)\,\sigma^2 + m\,\sigma^2_\text{batch},\qquad
        \hat z = \gamma\,(z-\mu)/\sqrt{\sigma^2+\epsilon} + b,

    updated on every forward pass, in train and eval mode alike, with no gradient through the
    statistics. A batch drawn from one or two classes then moves the statistics by a share
    :math:`m` only, where plain test-batch normalisation would take them whole. Build it with
    :func:`ema_statistics`; the TTA methods keep its statistics and adapt :math:`\gamma, b`.
    """

    ema_momentum: float = 0.05

    def forward(self, x):
        with torch.no_grad():
            m = self.ema_momentum
            # The batch's mean and biased variance in one fused pass (ten times faster than
            # x.mean / x.var over channels-last tensors); no running buffers given, none touched.
            mean, var = torch.batch_norm_update_stats(x, None, None, 0.0)
            self.running_mean.mul_(1 - m).add_(mean, alpha=m)
            self.running_var.mul_(1 - m).add_(var, alpha=m)
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            False, 0.0, self.eps)


def ema_statistics(model: nn.Module, momentum: float = 0.05) -> nn.Module:
    """A deep copy of ``model`` whose BatchNorm2d layers are :class:`EMABatchNorm2d` with
    momentum ``momentum`` (0 < m <= 1; 0.05 as RoTTA), started from the source statistics."""
    if not 0.0 < momentum <= 1.0:
        raise ValueError(f"momentum must lie in (0, 1], got {momentum!r}")
    model = copy.deepcopy(model)
    layers = [m for m in model.modules() if type(m) is nn.BatchNorm2d]
    if not layers:
        raise ValueError("the model has no BatchNorm2d layer to convert")
    for layer in layers:
        if layer.running_mean is None:
            raise ValueError("the model's BatchNorm layers keep no running statistics")
        layer.__class__ = EMABatchNorm2d
        layer.ema_momentum = float(momentum)
    return model.eval()

