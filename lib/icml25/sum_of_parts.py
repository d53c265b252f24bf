r"""Sum-of-Parts: self-attributing networks with learned feature groups.

You, Qu, Gatti, Jain & Wong, ICML 2025. A *self-attributing* network (SANN) writes its
output as a sum of attributions of feature groups $m_g\in\{0,1\}^P$ over $P$ patches,

.. math:: f_c(x)=\sum_g w_{c,g}(x)\,h_c(x\odot m_g),

with *per-feature* SANNs using singleton groups and *group-based* ones larger groups.
:class:`SumOfParts` turns a frozen differentiable backbone $h$ into a group-based SANN,
as the authors' MIT-licensed library ``exlib`` (``modules/sop.py``) builds it:

1. a trainable patch projection $E=\mathrm{proj}(x)\in\mathbb R^{P\times D}$ (we add a
   learned position embedding);
2. candidate groups from attention, $A=\mathrm{softmax}_p\big(\mathrm{blur}(s_{gg}\,
   Q E_{1:M}(K E)^\top)\big)\in\mathbb R^{M\times P}$, one per query patch;
3. each row cut to a hard mask of its top $k$ fraction of patches, with the one
   differentiable scalar
   $c_g=\sum_{\text{top-}k}A_{g,p}-\sum_{\text{rest}}A_{g,p}\in[-1,1]$;
4. $G$ of the $M$ candidates kept at evenly spaced indices;
5. the frozen backbone on every masked input: logits $\ell_g$ and embedding $z_g$;
6. a sparsemax selector with the classifier weights $W$ as queries and
   identity-initialised projections,
   $\alpha_{c,\cdot}=\mathrm{sparsemax}_g(s_{gs}\,(W_c\,W_q)(W_k z_g))$;
7. the output $y_c=\sum_g \alpha_{c,g}\,c_g\,\ell_{g,c}$, whose terms are the group
   attributions: they sum to the logit by construction.

Baselines: :class:`PerFeatureAdditive` (a neural additive model, one shape function per
input feature), fixed-patch groups (``SumOfParts(..., fixed_groups=...)``), and post-hoc
attributions of the backbone from ``captum`` (:func:`posthoc_patch_scores`). Data:
:func:`two_motif_xor` (planted interacting motifs), :func:`load_digits_images`,
:func:`binomial_target` (the paper's lower-bound example). Metrics: accuracy,
:func:`insertion_deletion`, :func:`purity`, :func:`bootstrap_ci`.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import product
from typing import Callable

import numpy as np
import torch
from torch import nn

from icml25.common.stats import bootstrap_ci  # noqa: F401  (the chapter's intervals)
from icml25.common.validation import check_int

__all__ = [
    "MLPBackbone",
    "MotifData",
    "PerFeatureAdditive",
    "SOPOutput",
    "SumOfParts",
    "additive_fit_mse",
    "binomial_target",
    "bootstrap_ci",
    "evenly_spaced",
    "insertion_deletion",
    "load_digits_images",
    "patch_grid",
    "posthoc_patch_scores",
    "predict",
    "purity",
    "random_patch_mask",
    "sop_patch_scores",
    "topk_mask",
    "train",
    "two_motif_xor",
]


# -------------------- data
@dataclass(frozen=True)
class MotifData:
    """Images ``X`` (n, 1, H, W), labels ``y`` (n,), motif presence ``a``, ``b`` (n,),
    and ``motif_patches`` (P,) bool: the patches the planted motifs occupy."""

    X: np.ndarray
    y: np.ndarray
    a: np.ndarray
    b: np.ndarray
    motif_patches: np.ndarray


@contextmanager
def _seeded(seed):
    """Initialise parameters from ``seed`` without touching torch's global generator."""
    with torch.random.fork_rng():
        torch.manual_seed(int(np.random.default_rng(seed).integers(2**31)))
        yield


def two_motif_xor(n: int, *, seed, noise: float = 0.3) -> MotifData:
    r"""Two-motif XOR on 8x8 images: the label needs both motifs at once.

    Background pixels are $U(0,\text{noise})$. Motif $A$ (a 2x4 bar, top left) and
    motif $B$ (a 4x2 bar, right edge) are each present with probability 1/2, their
    pixels then $U(0.7,1)$; the label is $y=A\oplus B$. Each motif covers two of the 16
    patches of 2x2 pixels. Any model additive in the pixels has a log-loss optimum that
    is constant in $(A,B)$ by symmetry, so it predicts at chance; a group holding both
    motifs decides.
    """
    check_int(n, "n", minimum=1)
    if not 0 <= noise < 0.7:
        raise ValueError(f"noise must lie in [0, 0.7); got {noise}")
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, noise, (n, 1, 8, 8))
    a, b = rng.random(n) < 0.5, rng.random(n) < 0.5
    X[a, 0, 0:2, 0:4] = rng.uniform(0.7, 1.0, (a.sum(), 2, 4))
    X[b, 0, 4:8, 6:8] = rng.uniform(0.7, 1.0, (b.sum(), 4, 2))
    motif = np.zeros((8, 8), bool)
    motif[0:2, 0:4] = motif[4:8, 6:8] = True
    patches = patch_grid((8, 8), 2).reshape(16, 64) @ motif.ravel() > 0
    return MotifData(X.astype(np.float32), (a ^ b).astype(np.int64), a, b, patches)


def load_digits_images() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 1,797 8x8 digits: ``X`` (n, 1, 8, 8) in [0, 1], labels ``y``."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return (d.images[:, None] / 16.0).astype(np.float32), d.target.astype(np.int64)


def binomial_target(d: int = 10, s1=(0, 1, 2), s2=(3, 4), s3=(5, 6, 7)):
    r"""All $x\in\{0,1\}^d$ and the multilinear binomial of the paper's lower bound,
    $p(x)=\prod_{i\in S_1\cup S_2}x_i+\prod_{j\in S_2\cup S_3}x_j$."""
    check_int(d, "d", minimum=1)
    used = set(s1) | set(s2) | set(s3)
    if d > 20 or not used <= set(range(d)):
        raise ValueError(f"need d <= 20 and S1, S2, S3 inside range(d); got d={d}")
    X = np.array(list(product((0, 1), repeat=d)), dtype=float)
    y = X[:, list(s1) + list(s2)].prod(1) + X[:, list(s2) + list(s3)].prod(1)
    return X, y


def additive_fit_mse(X, y, groups) -> float:
    r"""Least-squares MSE of the best model additive over ``groups`` of binary features.

    $\hat y(x)=b+\sum_{G}\phi_G(x_G)$ with $\phi_G$ an arbitrary function of the
    configuration of $x_G$ (a one-hot code of its $2^{|G|}$ values). Singleton groups
    give the per-feature (additive) model; groups equal to the interacting sets fit any
    target that is a sum of functions of those sets exactly.
    """
    X, y = np.asarray(X), np.asarray(y, float)
    if X.ndim != 2 or y.shape != (X.shape[0],) or not np.isin(X, (0, 1)).all():
        raise ValueError("X must be an (n, d) 0/1 array and y of length n")
    columns = [np.ones(len(y))]
    for g in groups:
        g = list(g)
        if not g or max(g) >= X.shape[1] or min(g) < 0:
            raise ValueError(f"group {g} is empty or outside the {X.shape[1]} features")
        code = X[:, g] @ (2 ** np.arange(len(g)))
        columns += [(code == v).astype(float) for v in range(2 ** len(g))]
    design = np.column_stack(columns)
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    return float(np.mean((design @ coef - y) ** 2))


# -------------------- patches
def patch_grid(shape, patch: int) -> np.ndarray:
    """One boolean pixel mask per patch, shape (P, H, W), patches in row-major order."""
    H, W = shape
    check_int(patch, "patch", minimum=1)
    if H % patch or W % patch:
        raise ValueError(f"patch {patch} must divide the image size {H}x{W}")
    ids = (np.arange(H)[:, None] // patch) * (W // patch) + np.arange(W)[None] // patch
    return ids[None] == np.arange(ids.max() + 1)[:, None, None]


def _upsample(mask, shape, patch: int):
    """(..., P) patch masks to (..., 1, H, W) pixel masks."""
    gh, gw = shape[0] // patch, shape[1] // patch
    grid = mask.reshape(*mask.shape[:-1], 1, gh, gw)
    return grid.repeat_interleave(patch, -2).repeat_interleave(patch, -1)


def topk_mask(attention, k: float):
    r"""Hard top-$k$ masks and the scalar $c=\sum_{\text{top}}A-\sum_{\text{rest}}A$.

    ``attention`` (..., P), rows summing to one; keeps $\max(1,\mathrm{round}(kP))$
    entries.
    The mask carries no gradient; $c=2\sum_{\text{top}}A-1\in[-1,1]$ does.
    """
    if not 0 < k <= 1:
        raise ValueError(f"k is a fraction of the patches in (0, 1]; got {k}")
    n_keep = max(1, int(round(k * attention.shape[-1])))
    idx = attention.topk(n_keep, dim=-1).indices
    hard = torch.zeros_like(attention).scatter_(-1, idx, 1.0)
    return hard, 2 * (attention * hard).sum(-1) - 1


def evenly_spaced(m: int, g: int) -> np.ndarray:
    """``g`` of ``m`` candidate indices at even spacing (the authors' sampling)."""
    check_int(m, "m", minimum=1)
    check_int(g, "g", minimum=1)
    if g > m:
        raise ValueError(f"cannot keep {g} groups out of {m} candidates")
    return np.round(np.linspace(0, m - 1, g)).astype(int)


def random_patch_mask(n: int, n_patches: int, generator, p_full: float = 0.25):
    """Random patch masks for training a backbone on masked inputs: each row is all
    ones with probability ``p_full``, else keeps each patch with probability
    $q\\sim U(0.1,0.9)$."""
    keep = torch.rand(n, 1, generator=generator) * 0.8 + 0.1
    mask = (torch.rand(n, n_patches, generator=generator) < keep).float()
    full = torch.rand(n, 1, generator=generator) < p_full
    return torch.where(full, torch.ones_like(mask), mask)


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
    each $h_i$ a one-hidden-layer network of its own feature; :meth:`attributions`
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
        Blur the attention logits over the patch grid (3x3 Gaussian) as the authors do.
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
        P = self.n_patches = len(self.grid)
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
            self.proj = nn.Conv2d(in_channels, dim, patch, stride=patch)
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
        gauss = torch.tensor([1.0, 2.0, 1.0])
        self.register_buffer("kernel", (gauss[:, None] * gauss[None] / 16)[None, None])

    def candidates(self, x):
        """Attention rows $A$ (B, M, P) over patches, one candidate group per query."""
        E = self.proj(x).flatten(2).transpose(1, 2) + self.position
        M = self.keep.max().item() + 1
        logits = self.gen_scale * self.query(E[:, :M]) @ self.key(E).transpose(1, 2)
        if self.blur:
            gh, gw = self.shape[0] // self.patch, self.shape[1] // self.patch
            img = logits.reshape(-1, 1, gh, gw)
            img = nn.functional.pad(img, (1,) * 4, mode="replicate")
            img = nn.functional.conv2d(img, self.kernel)
            logits = img.reshape(logits.shape)
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
        if x.ndim != 4 or tuple(x.shape[-2:]) != self.shape:
            raise ValueError(f"x must be (B, C, {self.shape[0]}, {self.shape[1]}); "
                             f"got {tuple(x.shape)}")
        from entmax import sparsemax

        masks, scale = self.groups(x)
        B, G = masks.shape[:2]
        masked = x[:, None] * _upsample(masks, self.shape, self.patch)
        z = self.backbone.body(masked.flatten(0, 1))
        group_logits = self.backbone.classifier(z).reshape(B, G, -1)
        keys = self.sel_k(z).reshape(B, G, -1)
        scores = self.sel_scale * torch.einsum(
            "cd,bgd->bcg", self.sel_q(self.class_queries), keys)
        weights = sparsemax(scores, dim=-1)
        attributions = weights * scale[:, None, :] * group_logits.transpose(1, 2)
        return SOPOutput(attributions.sum(-1), attributions, weights, scale,
                         masks.detach(), group_logits)


# -------------------- training
def predict(model, X, batch_size: int = 512) -> np.ndarray:
    """Class probabilities (n, C) of ``model`` (a backbone, additive model or SOP)."""
    out = []
    with torch.no_grad():
        for i in range(0, len(X), batch_size):
            logits = model(torch.as_tensor(X[i:i + batch_size]))
            logits = logits.logits if isinstance(logits, SOPOutput) else logits
            out.append(logits.softmax(-1).numpy())
    return np.concatenate(out)


def train(model, X, y, *, steps: int, seed, batch_size: int = 128, lr: float = 3e-3,
          mask_patch: int | None = None, weight_decay: float = 1e-4) -> list[float]:
    r"""Minimise the cross-entropy of ``model`` on (X, y) with AdamW; return the losses.

    With ``mask_patch`` the inputs are multiplied by random patch masks
    (:func:`random_patch_mask`), so that a backbone sees masked inputs in training.
    """
    check_int(steps, "steps", minimum=1)
    check_int(batch_size, "batch_size", minimum=1)
    X, y = torch.as_tensor(X), torch.as_tensor(y)
    if len(X) != len(y) or len(X) == 0:
        raise ValueError("X and y must be non-empty and of equal length; "
                         f"got {len(X)}, {len(y)}")
    start = int(np.random.default_rng(seed).integers(2**31))
    generator = torch.Generator().manual_seed(start)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    grid = None if mask_patch is None else patch_grid(X.shape[-2:], mask_patch)
    losses = []
    model.train()
    for _ in range(steps):
        idx = torch.randint(len(X), (min(batch_size, len(X)),), generator=generator)
        xb = X[idx]
        if grid is not None:
            keep = random_patch_mask(len(idx), len(grid), generator)
            xb = xb * _upsample(keep, X.shape[-2:], mask_patch)
        out = model(xb)
        out = out.logits if isinstance(out, SOPOutput) else out
        loss = nn.functional.cross_entropy(out, y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    if isinstance(model, SumOfParts):
        model.backbone.eval()
    return losses


# -------------------- attributions
def sop_patch_scores(out: SOPOutput, target) -> np.ndarray:
    r"""Per-patch scores from group attributions: $\sum_g a_{t,g}\,m_{g,p}/|m_g|$."""
    target = torch.as_tensor(target)
    attr = out.attributions[torch.arange(len(target)), target]            # (B, G)
    masks = out.masks / out.masks.sum(-1, keepdim=True).clamp(min=1)
    return torch.einsum("bg,bgp->bp", attr, masks).detach().numpy()


def posthoc_patch_scores(backbone, X, target, patch: int,
                         method: str = "ig") -> np.ndarray:
    """Post-hoc attributions of the backbone from captum, summed per patch, (n, P).

    ``method``: ``"ig"`` (IntegratedGradients, zero baseline), ``"saliency"``
    (gradient x input) or ``"ablation"`` (FeatureAblation with one feature per patch).
    """
    with warnings.catch_warnings():  # captum imports tqdm.auto, which warns in Jupyter
        warnings.simplefilter("ignore")
        from captum.attr import FeatureAblation, InputXGradient, IntegratedGradients

    X, target = torch.as_tensor(X), torch.as_tensor(target)
    grid = torch.as_tensor(patch_grid(X.shape[-2:], patch)).float()
    if method == "ig":
        attr = IntegratedGradients(backbone).attribute(X, target=target, n_steps=32)
    elif method == "saliency":
        inputs = X.clone().requires_grad_()
        attr = InputXGradient(backbone).attribute(inputs, target=target)
    elif method == "ablation":
        ids = (grid.argmax(0)).long()[None, None].expand_as(X)
        attr = FeatureAblation(backbone).attribute(X, target=target, feature_mask=ids)
    else:
        raise ValueError(f"method must be ig, saliency or ablation; got {method!r}")
    return torch.einsum("bchw,phw->bp", attr.detach(), grid).numpy()


# -------------------- metrics
def insertion_deletion(predict_proba: Callable, X, scores, target, patch: int,
                       steps: int = 10) -> tuple[np.ndarray, np.ndarray]:
    r"""Insertion and deletion curves, (n, steps) each.

    Patches are ranked by ``scores``; at step $j=1..$``steps`` the top
    $\lceil jP/\text{steps}\rceil$ patches are revealed on a zero image (insertion) or
    set to zero (deletion), and the probability of ``target`` is recorded. The area
    (mean of the curve) is high for a faithful insertion ranking and low for deletion.
    """
    X = np.asarray(X)
    scores, target = np.asarray(scores), np.asarray(target)
    grid = patch_grid(X.shape[-2:], patch)
    if scores.shape != (len(X), len(grid)) or target.shape != (len(X),):
        raise ValueError(f"scores must be ({len(X)}, {len(grid)}), "
                         f"target ({len(X)},)")
    check_int(steps, "steps", minimum=1)
    order = np.argsort(-scores, axis=1, kind="stable")
    curves = np.empty((2, len(X), steps))
    rows = np.arange(len(X))
    for j in range(steps):
        top = np.zeros(scores.shape, bool)
        n_top = int(np.ceil((j + 1) * len(grid) / steps))
        np.put_along_axis(top, order[:, :n_top], True, axis=1)
        shown = np.einsum("np,phw->nhw", top.astype(np.float32), grid)[:, None]
        for i, keep in enumerate((shown, 1 - shown)):
            probs = predict_proba((X * keep).astype(np.float32))
            curves[i, :, j] = probs[rows, target]
    return curves[0], curves[1]


def purity(masks, truth) -> np.ndarray:
    r"""$|m\cap t|/|m|$ for each mask (..., P) against the planted ``truth`` (P,)."""
    masks, truth = np.asarray(masks, bool), np.asarray(truth, bool)
    if masks.shape[-1] != truth.shape[-1]:
        raise ValueError(f"masks have {masks.shape[-1]} patches, "
                         f"truth {truth.shape[-1]}")
    size = masks.sum(-1)
    if (size == 0).any():
        raise ValueError("purity of an empty mask is undefined")
    return (masks & truth).sum(-1) / size
