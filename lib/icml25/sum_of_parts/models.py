"""The models: the MLP backbone, the per-feature additive model (a neural additive model)
and :class:`SumOfParts`, the group-based self-attributing network."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from icml25.common.validation import check_int
from icml25.sum_of_parts.data import (
    _seeded,
    _upsample,
    evenly_spaced,
    patch_grid,
    topk_mask,
)


# -------------------- models
class MLPBackbone(nn.Module):
    """A small MLP classifier, ``body`` (flatten, hidden layers) then a linear
    ``classifier``: the selector reads ``body``'s embedding and ``classifier``'s
    weights."""

    def __init__(self, n_inputs: int, n_classes: int, hidden=(128, 64), *, seed=0):
        super().__init__()
        check_int(n_inputs, "n_inputs", minimum=1)
        check_int(n_classes, "n_classes", minimum=1)
        layers, width = [nn.Flatten()], n_inputs
        with _seeded(seed):
            for h in hidden:
                layers += [nn.Linear(width, h), nn.ReLU()]
                width = h
            self.body = nn.Sequential(*layers)
            self.classifier = nn.Linear(width, n_classes)

    def forward(self, x):
        return self.classifier(self.body(x))


class PerFeatureAdditive(nn.Module):
    r"""Per-feature SANN (a neural additive model): $f_c(x)=b_c+\sum_i h_{i,c}(x_i)$,
    each $h_i$ a one-hidden-layer network of its own feature; ``attributions``
    returns the terms $h_{i,c}(x_i)$, which sum with $b_c$ to the logit."""

    def __init__(self, n_features: int, n_classes: int, hidden: int = 8, *, seed=0):
        super().__init__()
        check_int(n_features, "n_features", minimum=1)
        check_int(n_classes, "n_classes", minimum=1)
        check_int(hidden, "hidden", minimum=1)
        with _seeded(seed):
            self.w1 = nn.Parameter(torch.randn(n_features, hidden))
            self.b1 = nn.Parameter(torch.randn(n_features, hidden) * 0.5)
            w2 = torch.randn(n_features, hidden, n_classes) / hidden**0.5
            self.w2 = nn.Parameter(w2)
        self.bias = nn.Parameter(torch.zeros(n_classes))

    def attributions(self, x):
        x = x.flatten(1)
        hidden = torch.relu(x[..., None] * self.w1 + self.b1)
        return torch.einsum("bfh,fhc->bcf", hidden, self.w2)

    def forward(self, x):
        return self.attributions(x).sum(-1) + self.bias


@dataclass
class SOPOutput:
    """``logits`` (B, C) $=\\sum_g$ ``attributions`` (B, C, G); ``weights`` $\\alpha$
    (B, C, G); ``scale`` $c$ (B, G); ``masks`` (B, G, P) hard patch masks;
    ``group_logits`` (B, G, C)."""

    logits: torch.Tensor
    attributions: torch.Tensor
    weights: torch.Tensor
    scale: torch.Tensor
    masks: torch.Tensor
    group_logits: torch.Tensor


class SumOfParts(nn.Module):
    r"""SOP around a frozen backbone with ``body`` (embedding), ``classifier`` (linear).

    Parameters
    ----------
    backbone : nn.Module
        Frozen here; ``backbone.classifier.weight`` ($W$, C x D) initialises queries.
    image_shape : (int, int)
        Height and width; ``patch`` divides both; $P$ patches in all.
    patch : int
        Side of a square patch, the unit of the groups.
    dim : int
        Width $D_e$ of the patch projection.
    n_candidates : int, optional
        $M$ candidate groups (queries: the first $M$ patches); all $P$ by default.
    n_groups : int
        $G$ groups kept, at evenly spaced candidate indices.
    k : float
        Fraction of the patches in each group.
    gen_scale, sel_scale : float
        $s_{gg}$ (times $1/\sqrt{D_e}$) and $s_{gs}$.
    blur : bool
        Blur the attention logits over the patch grid with the authors' 3x3 Gaussian kernel;
        its border repeats the edge value, where theirs reflects (on the chapter's 4x4 grid
        this changes 31% of the groups).
    straight_through : bool
        Not the authors': let the loss reach the choice of patches through
        $m+A-\mathrm{sg}(A)$ (forward value: the hard mask $m$).
    fixed_groups : array (G, P) of bool, optional
        Fixed groups (the fixed-patch baseline): no generator, $c_g=1$.
    seed : int
        Seeds the initialisation.
    """

    def __init__(self, backbone, image_shape, patch: int, *, in_channels: int = 1,
                 dim: int = 16, n_candidates: int | None = None, n_groups: int = 8,
                 k: float = 0.25, gen_scale: float = 1.0, sel_scale: float = 1.0,
                 blur: bool = True, straight_through: bool = False, fixed_groups=None,
                 seed: int = 0):
        super().__init__()
        self.grid = patch_grid(image_shape, patch)
        self.shape, self.patch = tuple(image_shape), patch
        self._build(backbone, len(self.grid),
                    lambda: nn.Conv2d(in_channels, dim, patch, stride=patch), dim=dim,
                    n_candidates=n_candidates, n_groups=n_groups, k=k,
                    gen_scale=gen_scale, sel_scale=sel_scale, blur=blur,
                    straight_through=straight_through, fixed_groups=fixed_groups,
                    seed=seed)
        gauss = torch.tensor([1.0, 2.0, 1.0])
        self.register_buffer("kernel", (gauss[:, None] * gauss[None] / 16)[None, None])

    def _build(self, backbone, P: int, projection, *, dim, n_candidates, n_groups, k,
               gen_scale, sel_scale, blur, straight_through, fixed_groups, seed):
        """What every input kind shares: ``P`` patches, ``projection()`` the trainable
        patch projection (built first from ``seed``), the generator and the selector."""
        check_int(dim, "dim", minimum=1)
        self.n_patches = P
        M = P if n_candidates is None else n_candidates
        if not 0 < k <= 1:
            raise ValueError(f"k is a fraction of the patches in (0, 1]; got {k}")
        if not hasattr(backbone, "classifier") or not hasattr(backbone, "body"):
            raise ValueError("backbone needs a `body` (embedding) and a `classifier`")
        if M > P:
            raise ValueError(f"n_candidates={M} exceeds the {P} patches")
        self.keep = torch.as_tensor(evenly_spaced(M, n_groups))
        self.k, self.straight_through, self.blur = k, straight_through, blur
        self.gen_scale, self.sel_scale = gen_scale / dim**0.5, sel_scale
        self.backbone = backbone.requires_grad_(False).eval()
        with _seeded(seed):
            self.proj = projection()
            self.position = nn.Parameter(torch.randn(P, dim) * 0.5)
            self.query, self.key = nn.Linear(dim, dim), nn.Linear(dim, dim)
            for layer in (self.query, self.key):
                nn.init.xavier_uniform_(layer.weight)
        W = backbone.classifier.weight.detach().clone()
        self.class_queries = nn.Parameter(W)
        self.sel_q, self.sel_k = nn.Linear(W.shape[1], W.shape[1]), nn.Linear(
            W.shape[1], W.shape[1])
        for layer in (self.sel_q, self.sel_k):
            nn.init.eye_(layer.weight)
            nn.init.zeros_(layer.bias)
        self.fixed = None
        if fixed_groups is not None:
            fixed = torch.as_tensor(np.asarray(fixed_groups), dtype=torch.float32)
            if fixed.ndim != 2 or fixed.shape[1] != P:
                raise ValueError(f"fixed_groups must be (G, {P}); "
                                 f"got {tuple(fixed.shape)}")
            self.fixed = fixed

    def _embed(self, x):
        """Patch embeddings (B, P, $D_e$) before the position embedding."""
        return self.proj(x).flatten(2).transpose(1, 2)

    def _blur(self, logits):
        """The attention logits (B, M, P) blurred over the patch grid."""
        gh, gw = self.shape[0] // self.patch, self.shape[1] // self.patch
        img = logits.reshape(-1, 1, gh, gw)
        img = nn.functional.pad(img, (1,) * 4, mode="replicate")
        img = nn.functional.conv2d(img, self.kernel)
        return img.reshape(logits.shape)

    def _check_input(self, x):
        if x.ndim != 4 or tuple(x.shape[-2:]) != self.shape:
            raise ValueError(f"x must be (B, C, {self.shape[0]}, {self.shape[1]}); "
                             f"got {tuple(x.shape)}")

    def _masked(self, x, masks):
        """Inputs (B, G, ...) with only each group's patches left, the rest zero."""
        return x[:, None] * _upsample(masks, self.shape, self.patch)

    def candidates(self, x):
        """Attention rows $A$ (B, M, P) over patches, one candidate group per query."""
        E = self._embed(x) + self.position
        M = self.keep.max().item() + 1
        logits = self.gen_scale * self.query(E[:, :M]) @ self.key(E).transpose(1, 2)
        if self.blur:
            logits = self._blur(logits)
        return logits.softmax(-1)

    def groups(self, x):
        """Masks (B, G, P) for the forward pass and scalars $c$ (B, G)."""
        if self.fixed is not None:
            masks = self.fixed.expand(len(x), -1, -1)
            return masks, torch.ones(masks.shape[:2])
        attention = self.candidates(x)[:, self.keep]
        hard, scale = topk_mask(attention, self.k)
        if self.straight_through:
            hard = hard + attention - attention.detach()
        return hard, scale

    def forward(self, x) -> SOPOutput:
        self._check_input(x)
        from entmax import sparsemax

        masks, scale = self.groups(x)
        B, G = masks.shape[:2]
        masked = self._masked(x, masks)
        z = self.backbone.body(masked.flatten(0, 1))
        group_logits = self.backbone.classifier(z).reshape(B, G, -1)
        keys = self.sel_k(z).reshape(B, G, -1)
        scores = self.sel_scale * torch.einsum(
            "cd,bgd->bcg", self.sel_q(self.class_queries), keys)
        weights = sparsemax(scores, dim=-1)
        attributions = weights * scale[:, None, :] * group_logits.transpose(1, 2)
        return SOPOutput(attributions.sum(-1), attributions, weights, scale,
                         masks.detach(), group_logits)


