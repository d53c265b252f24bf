r"""The models (U-Net, rationale model, concept classifier) and their losses."""

from __future__ import annotations

import numpy as np

from .concepts import CONCEPTS, GROUP_START, GROUPS, TEXTS


def _torch():
    import torch

    return torch


def _block(nn, c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU(),
                         nn.Conv2d(c_out, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU())


def _module_base():
    import torch.nn as nn

    return nn


class SmallUNet(_module_base().Module):
    r"""A two-level U-Net :math:`f_\mathrm{mask}\circ f_\mathrm{img}` with zone and lesion heads.

    Encoder blocks of ``width``, 2 ``width`` and 4 ``width`` channels (two 3x3 convolutions with
    batch norm), max-pooling between them, a decoder with skip connections back to full
    resolution. Heads: zone logits (background, PZ, TZ; the gland is PZ ∪ TZ) and a lesion logit.
    ``forward`` returns ``(zone_logits, lesion_logit, features)``, ``features`` the last decoder
    block's output (``width`` channels at full resolution).
    """

    def __init__(self, width: int = 8, in_channels: int = 3):
        import torch.nn as nn

        super().__init__()
        if width < 1 or in_channels < 1:
            raise ValueError(f"width and in_channels must be positive, got {width}, {in_channels}")
        w = width
        self.enc1, self.enc2 = _block(nn, in_channels, w), _block(nn, w, 2 * w)
        self.bottleneck = _block(nn, 2 * w, 4 * w)
        self.up2 = nn.ConvTranspose2d(4 * w, 2 * w, 2, stride=2)
        self.dec2 = _block(nn, 4 * w, 2 * w)
        self.up1 = nn.ConvTranspose2d(2 * w, w, 2, stride=2)
        self.dec1 = _block(nn, 2 * w, w)
        self.zone_head = nn.Conv2d(w, 3, 1)
        self.lesion_head = nn.Conv2d(w, 1, 1)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        torch = _torch()
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        b = self.bottleneck(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.zone_head(d1), self.lesion_head(d1)[:, 0], d1


class RationaleModel(_module_base().Module):
    r"""The U-Net plus a shared image-text space (the paper's overview, at toy size).

    A 1x1 convolution maps the decoder features to pixel embeddings
    :math:`e(x)\in\mathbb R^d`, normalised; a linear map :math:`P` projects the frozen sentence
    embeddings :math:`s_c\in\mathbb R^{384}` of the concept phrases to
    :math:`t_c = P s_c/\lVert P s_c\rVert`. The concept heat map is the cosine similarity
    :math:`H_c(x) = e(x)^\top t_c`: no concept mask is ever used to train it.
    ``text`` holds :math:`s_c` for :data:`~icml25.rationales.concepts.TEXTS` (the concepts, then
    :data:`~icml25.rationales.concepts.NORMAL`).
    """

    def __init__(self, text, width: int = 8, dim: int = 16):
        torch = _torch()
        import torch.nn as nn

        super().__init__()
        text = torch.as_tensor(np.asarray(text, np.float32))
        if text.ndim != 2 or len(text) != len(TEXTS):
            raise ValueError(f"text must be ({len(TEXTS)}, features): one row per TEXTS entry, "
                             f"got {tuple(text.shape)}")
        self.unet = SmallUNet(width)
        self.embed = nn.Sequential(nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(),
                                   nn.Conv2d(2 * width, dim, 1))
        self.project = nn.Linear(text.shape[1], dim, bias=False)
        self.register_buffer("text", text)

    def concept_vectors(self):
        """:math:`t_c` for every entry of :data:`~icml25.rationales.concepts.TEXTS`, shape
        ``(K + 1, d)``."""
        t = self.project(self.text)
        return t / t.norm(dim=1, keepdim=True)

    def forward(self, x):
        zone, lesion, feats = self.unet(x)
        e = self.embed(feats)
        return zone, lesion, e / e.norm(dim=1, keepdim=True).clamp_min(1e-6)

    def heat_maps(self, e):
        """:math:`H_c(x) = e(x)^\\top t_c` for every text: ``(n, K + 1, H, W)``."""
        return _torch().einsum("ndhw,kd->nkhw", e, self.concept_vectors())


class ConceptClassifier(_module_base().Module):
    """The U-Net plus a concept classifier: average-pooled decoder features, a linear layer to
    one logit per concept (image-level labels from the rationales). Its Grad-CAM maps are the
    baseline concept maps; ``forward`` returns ``(zone, lesion, concept_logits)``."""

    def __init__(self, width: int = 8):
        import torch.nn as nn

        super().__init__()
        self.unet = SmallUNet(width)
        self.classify = nn.Linear(width, len(CONCEPTS))

    def forward(self, x):
        zone, lesion, feats = self.unet(x)
        return zone, lesion, self.classify(feats.mean((2, 3)))


def segmentation_loss(zone_logits, lesion_logit, zones, lesion):
    r"""Cross-entropy plus soft Dice, for the zones (3 classes) and the lesion (binary).

    :math:`\mathcal L_\mathrm{seg} = \mathrm{CE}(z, y_\mathrm{zone}) + 1 - \overline{D}(z, y) +
    \mathrm{BCE}(l, y_\mathrm{les}) + 1 - D(\sigma(l), y_\mathrm{les})` with the soft Dice
    :math:`D(p,y) = (2\sum py + 1)/(\sum p + \sum y + 1)` over the batch.
    """
    torch = _torch()
    F = torch.nn.functional
    ce = F.cross_entropy(zone_logits, zones)
    p = zone_logits.softmax(1)[:, 1:]
    y = F.one_hot(zones, 3).permute(0, 3, 1, 2)[:, 1:].float()
    d_zone = ((2 * (p * y).sum((0, 2, 3)) + 1) / (p.sum((0, 2, 3)) + y.sum((0, 2, 3)) + 1)).mean()
    bce = F.binary_cross_entropy_with_logits(lesion_logit, lesion)
    q = lesion_logit.sigmoid()
    d_les = (2 * (q * lesion).sum() + 1) / (q.sum() + lesion.sum() + 1)
    return ce + 1 - d_zone + bce + 1 - d_les


def align_loss(e, t, lesion_masks, attributes, tau: float = 0.1):
    r"""Align: pooled image features of each lesion retrieve the lesion's concepts.

    For lesion :math:`\ell` with mask :math:`M_\ell` (its lesion mask; the rationale names the
    zone of each lesion), :math:`z_\ell = \mathrm{norm}(\sum_x M_\ell(x) e(x))`. For each concept
    group :math:`g` the lesion's concept :math:`c_g(\ell)` competes with the group's other
    phrases and the normal-tissue phrase:

    .. math:: \mathcal L_\mathrm{align} = -\frac{1}{|\mathcal L||G|}\sum_{\ell,g}\log
        \frac{\exp(z_\ell^\top t_{c_g(\ell)}/\tau)}{\sum_{c\in g\cup\{\mathrm{normal}\}}
        \exp(z_\ell^\top t_c/\tau)}
        \;-\;\frac{1}{|\bar M|}\sum_{x\in\bar M} \log\operatorname{softmax}_c
        (e(x)^\top t_c/\tau)_{\mathrm{normal}},

    the second term asking every lesion-free pixel :math:`x\in\bar M` to retrieve the
    normal-tissue phrase among all phrases (an InfoNCE over concept phrases). The lesion's
    pixels are only pooled: which of them shows which concept is never said.

    ``e``: ``(n, d, H, W)`` unit pixel embeddings; ``t``: ``(K + 1, d)``; ``lesion_masks``:
    ``(n, 2, H, W)``; ``attributes``: ``(n, 2, 4)`` as in :class:`Phantoms`.
    """
    torch = _torch()
    F = torch.nn.functional
    normal = len(CONCEPTS)
    losses = []
    present = attributes[:, :, 0] > 0
    if present.any():
        masks = lesion_masks[present].float()                  # (L, H, W)
        img = present.nonzero()[:, 0]
        z = torch.einsum("ldhw,lhw->ld", e[img], masks)
        z = z / z.norm(dim=1, keepdim=True).clamp_min(1e-6)
        attr = attributes[present]                              # (L, 4)
        values = {"location": present.nonzero()[:, 1], "margin": attr[:, 1],
                  "texture": attr[:, 2], "intensity": attr[:, 3],
                  "diffusion": torch.zeros_like(attr[:, 0])}
        for g, phrases in GROUPS.items():
            idx = list(range(GROUP_START[g], GROUP_START[g] + len(phrases))) + [normal]
            logits = z @ t[idx].T / tau
            losses.append(F.cross_entropy(logits, values[g].long()))
    healthy = ~lesion_masks.any(1)
    logits = torch.einsum("ndhw,kd->nhwk", e, t)[healthy] / tau      # (pixels, K + 1)
    target = torch.full((len(logits),), normal, dtype=torch.long)
    losses.append(F.cross_entropy(logits, target))
    return sum(losses) / len(losses)


def disentangle_loss(t):
    r"""Disen: push the concept vectors apart, :math:`\frac{1}{K(K+1)}\sum_{a\ne b}
    (t_a^\top t_b)^2` (squared cosines off the diagonal of the Gram matrix of
    :math:`t`). Phrases that the sentence encoder places close ("circumscribed margin",
    "non-circumscribed margin") start nearly parallel; this term separates them."""
    gram = t @ t.T
    k = len(t)
    off = gram - _torch().diag(_torch().diagonal(gram))
    return (off ** 2).sum() / (k * (k - 1))
