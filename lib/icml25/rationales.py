r"""Segmentation that gives clinical reasons and points to evidence, at toy scale (chapter 19).

Ma et al. (ICML 2025) segment the gland, the zones and the lesions of multi-parametric prostate
MRI and, trained on image-mask-rationale triples, localise the rationale's clinical concepts
without pixel-level concept labels. Their losses are not public; this module implements a stated
reconstruction consistent with the paper's overview figure:

* :func:`make_phantoms`: seeded three-channel phantoms (T2W, DWI, ADC analogues) with the gland,
  its peripheral (PZ) and transition (TZ) zones, benign TZ nodules and 0-2 lesions whose
  appearance follows sampled concepts; a rationale text per image; hidden per-concept evidence
  maps, for evaluation only.
* :class:`SmallUNet` (image encoder :math:`f_\mathrm{img}` and mask decoder
  :math:`f_\mathrm{mask}`), :class:`RationaleModel` (plus a pixel-embedding head and a projection
  of frozen sentence embeddings of the concept phrases into the same space) and its losses
  :func:`align_loss` and :func:`disentangle_loss`.
* Baselines: the plain U-Net, a concept classifier on the same U-Net whose Grad-CAM maps
  (``captum.attr.LayerGradCam``) serve as concept maps, and random maps.
* Metrics: :func:`dice`, :func:`iou`, :func:`pointing_game`, :func:`iou_at_area`.

``python -m icml25.rationales data/rationales/concepts.npz`` embeds the concept phrases with
all-MiniLM-L6-v2 (:mod:`icml25.minilm`) once; the chapter loads that committed cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
from scipy import ndimage

from icml25.common import checkpoints
from icml25.common.checkpoints import map_seeds, train_command, train_in_worker
from icml25.common.stats import bootstrap_ci  # noqa: F401  (the chapter's intervals: R.bootstrap_ci)

# ----------------------------------------------------------------------------------------------
# Concepts
# ----------------------------------------------------------------------------------------------

#: The concept groups of the rationale, each with its mutually exclusive phrases.
GROUPS = {
    "location": ("lesion in the peripheral zone", "lesion in the transition zone"),
    "margin": ("circumscribed margin", "non-circumscribed margin"),
    "texture": ("homogeneous signal", "heterogeneous signal"),
    "intensity": ("moderately hypointense on T2W", "markedly hypointense on T2W"),
    "diffusion": ("restricted diffusion, bright on DWI and dark on ADC",),
}
#: Every concept phrase, group by group; ``NORMAL`` is the last text of :data:`TEXTS`.
CONCEPTS = tuple(p for phrases in GROUPS.values() for p in phrases)
NORMAL = "normal prostate tissue"
TEXTS = CONCEPTS + (NORMAL,)
#: Index of each group's first concept in :data:`CONCEPTS`.
GROUP_START = dict(zip(GROUPS, np.cumsum([0] + [len(v) for v in GROUPS.values()])[:-1]))
ZONE_NAMES = ("PZ", "TZ")
EMBEDDINGS = "rationales/concepts.npz"


def pirads(margin: int, texture: int, intensity: int) -> int:
    r"""The toy PI-RADS-like score of a lesion: :math:`2 + m + h + k \in \{2,3,4,5\}`.

    ``margin`` :math:`m` (1: non-circumscribed), ``texture`` :math:`h` (1: heterogeneous) and
    ``intensity`` :math:`k` (1: markedly hypointense) each add one point: the descriptors
    decide the score, as in the paper's rationale tree (descriptors, then score). An image
    without a lesion scores 1.
    """
    for name, v in (("margin", margin), ("texture", texture), ("intensity", intensity)):
        if v not in (0, 1):
            raise ValueError(f"{name} must be 0 or 1, got {v!r}")
    return 2 + margin + texture + intensity


# ----------------------------------------------------------------------------------------------
# Phantoms
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Scanner:
    r"""Acquisition of a phantom: :math:`x' = g_c\,(x\,(1 + b\,\ell))^{\gamma} + \sigma\,\epsilon`.

    ``gain`` :math:`g_c` per channel, ``gamma`` :math:`\gamma`, a linear bias field of amplitude
    ``bias`` :math:`b` along a random direction :math:`\ell\in[-1,1]`, Gaussian noise
    :math:`\sigma` = ``noise`` and a Gaussian blur of ``blur`` pixels before the noise.
    """

    gain: tuple = (1.0, 1.0, 1.0)
    gamma: float = 1.0
    bias: float = 0.0
    noise: float = 0.04
    blur: float = 0.6


#: The training scanner and a shifted one (other gains and contrast, bias field, more noise).
SCANNER_A = Scanner()
SCANNER_B = Scanner(gain=(0.7, 1.4, 0.8), gamma=1.5, bias=0.35, noise=0.07, blur=1.0)


@dataclass
class Phantoms:
    """A batch of phantoms; ``n`` images of ``size`` x ``size`` pixels.

    Attributes
    ----------
    images : (n, 3, size, size) float32, channels T2W, DWI, ADC.
    zones : (n, size, size) int8, 0 outside the gland, 1 PZ, 2 TZ.
    lesion : (n, size, size) bool, union of the lesions.
    lesion_masks : (n, 2, size, size) bool, lesion slot 0 in the PZ, slot 1 in the TZ.
    attributes : (n, 2, 4) int8, per slot: present, margin, texture, intensity (-1 if absent).
    labels : (n, K) bool, the concepts of each image's rationale.
    evidence : (n, K, size, size) bool, hidden evidence map of each concept (evaluation only).
    score : (n,) int, highest lesion score of the image (1 without lesion).
    rationales : list of str, the rationale text.
    """

    images: np.ndarray
    zones: np.ndarray
    lesion: np.ndarray
    lesion_masks: np.ndarray
    attributes: np.ndarray
    labels: np.ndarray
    evidence: np.ndarray
    score: np.ndarray
    rationales: list

    def __len__(self) -> int:
        return len(self.images)

    @property
    def n_lesions(self) -> np.ndarray:
        return (self.attributes[:, :, 0] > 0).sum(1)

    def subset(self, idx) -> "Phantoms":
        """The phantoms at ``idx`` (an index array or slice)."""
        idx = np.arange(len(self))[idx]
        return Phantoms(*(getattr(self, f)[idx] for f in
                          ("images", "zones", "lesion", "lesion_masks", "attributes", "labels",
                           "evidence", "score")), [self.rationales[i] for i in idx])


def _ellipse(yy, xx, cy, cx, ry, rx, angle=0.0):
    c, s = np.cos(angle), np.sin(angle)
    u, v = (xx - cx) * c + (yy - cy) * s, -(xx - cx) * s + (yy - cy) * c
    return (u / rx) ** 2 + (v / ry) ** 2


def _lesion_shape(yy, xx, cy, cx, r, irregular, rng):
    """A lesion of radius ``r``: a disc, or a spiculated outline r(θ) with random harmonics."""
    rho = np.hypot(yy - cy, xx - cx)
    theta = np.arctan2(yy - cy, xx - cx)
    if irregular:
        k = rng.integers(3, 6, size=2)
        ph = rng.uniform(0, 2 * np.pi, size=2)
        r = r * (1 + 0.3 * np.cos(k[0] * theta + ph[0]) + 0.2 * np.cos(k[1] * theta + ph[1]))
    return rho <= r


def _rationale(attrs) -> str:
    present = [z for z in range(2) if attrs[z, 0] > 0]
    if not present:
        return f"No lesion: {NORMAL}. PI-RADS 1."
    where = " and ".join(ZONE_NAMES[z] for z in present)
    parts = [f"Lesion is in {where}."]
    scores = []
    for z in present:
        _, m, h, k = attrs[z]
        primary = "DWI" if z == 0 else "T2W"
        s = pirads(int(m), int(h), int(k))
        scores.append(s)
        parts.append(f"For the {ZONE_NAMES[z]} lesion {primary} is primary: "
                     f"{GROUPS['margin'][m]}, {GROUPS['texture'][h]}, "
                     f"{GROUPS['intensity'][k]}, {GROUPS['diffusion'][0]}; score {s}.")
    parts.append(f"PI-RADS {max(scores)}.")
    return " ".join(parts)


def make_phantoms(n: int, size: int = 32, *, seed=0, scanner: Scanner = SCANNER_A,
                  p_lesions=(0.4, 0.4, 0.2), p_nodule: float = 0.4) -> Phantoms:
    r"""Draw ``n`` seeded prostate-MRI-like phantoms with masks, concepts and rationales.

    The gland is an ellipse; its transition zone (TZ) an anterior inner ellipse, the rest the
    peripheral zone (PZ). An image has no lesion, one lesion or two (one per zone) with
    probabilities ``p_lesions``; each lesion draws its margin (circumscribed or spiculated),
    texture (homogeneous or heterogeneous) and T2W intensity (moderately or markedly
    hypointense) independently, and always restricts diffusion (bright on DWI, dark on ADC). A
    benign TZ nodule (probability ``p_nodule``) is markedly T2W-hypointense but has no
    restricted diffusion: only DWI and ADC tell it from a lesion.

    The hidden evidence map of a concept is the union of the lesions that have it; for the two
    margin concepts it is the lesions' rim, :math:`\mathrm{dilate}(L)\setminus
    \mathrm{erode}(L)`. Evidence maps are for evaluation only; a model sees the images, the gland,
    zone and lesion masks and the rationales.

    Parameters
    ----------
    n : int
        Number of phantoms (positive).
    size : int
        Side in pixels (at least 16).
    seed : int or sequence of int
        Seed of ``numpy.random.default_rng``; the same seed gives the same phantoms.
    scanner : Scanner
        How the phantoms are acquired (:data:`SCANNER_A` trains; :data:`SCANNER_B` is shifted).
    p_lesions : three probabilities
        Of no lesion, one lesion and two lesions.
    p_nodule : float
        Probability of a benign TZ nodule.
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not isinstance(size, (int, np.integer)) or size < 16:
        raise ValueError(f"size must be an integer of at least 16 pixels, got {size!r}")
    p_lesions = np.asarray(p_lesions, float)
    if p_lesions.shape != (3,) or (p_lesions < 0).any() or not np.isclose(p_lesions.sum(), 1):
        raise ValueError(f"p_lesions must be three probabilities summing to 1, got {p_lesions}")
    if not 0 <= p_nodule <= 1:
        raise ValueError(f"p_nodule must lie in [0, 1], got {p_nodule!r}")
    if len(scanner.gain) != 3 or scanner.gamma <= 0 or scanner.noise < 0 or scanner.blur < 0:
        raise ValueError(f"scanner needs three gains, gamma > 0, noise >= 0, blur >= 0: {scanner}")
    rng = np.random.default_rng(seed)
    K = len(CONCEPTS)
    grid = (np.arange(size) + 0.5) / size * 2 - 1
    yy, xx = np.meshgrid(grid, grid, indexing="ij")
    images = np.empty((n, 3, size, size), np.float32)
    zones = np.zeros((n, size, size), np.int8)
    lesion_masks = np.zeros((n, 2, size, size), bool)
    attributes = np.full((n, 2, 4), -1, np.int8)
    attributes[:, :, 0] = 0
    labels = np.zeros((n, K), bool)
    evidence = np.zeros((n, K, size, size), bool)
    score = np.ones(n, int)
    rationales = []
    for i in range(n):
        cy, cx = rng.uniform(-0.08, 0.08, 2)
        ry, rx = rng.uniform(0.5, 0.62), rng.uniform(0.62, 0.78)
        angle = rng.uniform(-0.2, 0.2)
        gland = _ellipse(yy, xx, cy, cx, ry, rx, angle) <= 1
        tz = (_ellipse(yy, xx, cy - 0.2 * ry, cx, 0.6 * ry, 0.62 * rx, angle) <= 1) & gland
        pz = gland & ~tz
        zones[i][pz], zones[i][tz] = 1, 2
        # tissue: T2W bright PZ, darker TZ; DWI faint; ADC high in the gland
        t2 = np.where(pz, 0.8, np.where(tz, 0.5, 0.3))
        dwi = np.where(gland, 0.3, 0.12)
        adc = np.where(gland, 0.7, 0.45)
        texture = ndimage.gaussian_filter(rng.normal(size=(size, size)), 1.5)
        t2 = t2 + 0.25 * texture * gland
        n_les = rng.choice(3, p=p_lesions)
        slots = [] if n_les == 0 else ([int(rng.integers(2))] if n_les == 1 else [0, 1])
        if rng.random() < p_nodule:
            cand = np.flatnonzero(ndimage.binary_erosion(tz, iterations=2))
            if cand.size:
                c = rng.choice(cand)
                r = rng.uniform(0.08, 0.13)
                nod = _lesion_shape(yy, xx, yy.flat[c], xx.flat[c], r, False, rng) & tz
                t2 = np.where(nod, 0.22, t2)
        for z in slots:
            zone = pz if z == 0 else tz
            margin, tex, intensity = (int(v) for v in rng.integers(2, size=3))
            cand = np.flatnonzero(ndimage.binary_erosion(zone, iterations=2))
            if cand.size == 0:
                cand = np.flatnonzero(zone)
            mask = np.zeros_like(zone)
            for _ in range(10):  # lesions of different zones must not touch
                c = rng.choice(cand)
                r = rng.uniform(0.15, 0.24)
                mask = _lesion_shape(yy, xx, yy.flat[c], xx.flat[c], r, margin == 1, rng)
                mask &= zone
                other = lesion_masks[i, 1 - z]
                if mask.sum() >= 3 and not (ndimage.binary_dilation(other) & mask).any():
                    break
            if mask.sum() < 3 or (ndimage.binary_dilation(lesion_masks[i, 1 - z]) & mask).any():
                continue
            lesion_masks[i, z] = mask
            attributes[i, z] = (1, margin, tex, intensity)
            speckle = 1 + (0.5 if tex else 0.04) * rng.normal(size=(size, size))
            level = 0.45 if intensity else 0.7
            t2 = np.where(mask, t2 * level * speckle if z == 0 else 0.5 * level * speckle, t2)
            dwi = np.where(mask, 0.75 * speckle, dwi)
            adc = np.where(mask, 0.3 * speckle, adc)
            rim = ndimage.binary_dilation(mask) & ~ndimage.binary_erosion(mask)
            for g, value in (("location", z), ("margin", margin), ("texture", tex),
                             ("intensity", intensity), ("diffusion", 0)):
                k = GROUP_START[g] + value
                labels[i, k] = True
                evidence[i, k] |= rim if g == "margin" else mask
        present = attributes[i, :, 0] > 0
        if present.any():
            score[i] = max(pirads(*(int(v) for v in attributes[i, z, 1:]))
                           for z in range(2) if present[z])
        rationales.append(_rationale(attributes[i]))
        x = np.stack([t2, dwi, adc]).clip(0.01, None)
        direction = rng.uniform(0, 2 * np.pi)  # drawn always: the scanner leaves masks alone
        if scanner.bias:
            field = np.cos(direction) * xx + np.sin(direction) * yy
            x = x * (1 + scanner.bias * field)
        x = np.asarray(scanner.gain)[:, None, None] * x.clip(0.01, None) ** scanner.gamma
        if scanner.blur:
            x = ndimage.gaussian_filter(x, (0, scanner.blur, scanner.blur))
        x = x + scanner.noise * rng.normal(size=x.shape)
        images[i] = x
    return Phantoms(images, zones, lesion_masks.any(1), lesion_masks, attributes, labels,
                    evidence, score, rationales)


def standardise(images: np.ndarray) -> np.ndarray:
    r"""Per image and channel: :math:`(x - \mu)/\sigma` (the usual MRI intensity normalisation)."""
    images = np.asarray(images, np.float32)
    if images.ndim != 4:
        raise ValueError(f"images must be (n, channels, height, width), got shape {images.shape}")
    mu = images.mean((2, 3), keepdims=True)
    sd = images.std((2, 3), keepdims=True) + 1e-6
    return (images - mu) / sd


# ----------------------------------------------------------------------------------------------
# Metrics
# ----------------------------------------------------------------------------------------------

def _binary_pair(pred, target, name):
    pred, target = np.asarray(pred), np.asarray(target)
    if pred.shape != target.shape:
        raise ValueError(f"{name}: prediction {pred.shape} and target {target.shape} differ")
    for a, what in ((pred, "prediction"), (target, "target")):
        if a.dtype != bool and not np.isin(a, (0, 1)).all():
            raise ValueError(f"{name}: the {what} must be binary (bool or 0/1)")
    return pred.astype(bool), target.astype(bool)


def dice(pred, target, *, empty: float = 1.0) -> np.ndarray:
    r"""Dice score per image: :math:`2|P\cap T| / (|P|+|T|)`, ``empty`` when both are empty.

    ``pred`` and ``target`` are binary arrays of the same shape ``(..., H, W)``; returns the
    score of each leading index (a float for a single image).
    """
    p, t = _binary_pair(pred, target, "dice")
    if p.ndim < 2:
        raise ValueError("dice: masks need at least two dimensions (height, width)")
    inter = (p & t).sum((-2, -1))
    total = p.sum((-2, -1)) + t.sum((-2, -1))
    return np.where(total > 0, 2 * inter / np.maximum(total, 1), empty)


def iou(pred, target, *, empty: float = 1.0) -> np.ndarray:
    r"""Intersection over union per image, :math:`|P\cap T|/|P\cup T|` (``empty`` if both empty)."""
    p, t = _binary_pair(pred, target, "iou")
    if p.ndim < 2:
        raise ValueError("iou: masks need at least two dimensions (height, width)")
    inter = (p & t).sum((-2, -1))
    union = (p | t).sum((-2, -1))
    return np.where(union > 0, inter / np.maximum(union, 1), empty)


def _maps_and_evidence(heat, evidence, name):
    heat = np.asarray(heat, float)
    evidence = np.asarray(evidence)
    if heat.shape != evidence.shape or heat.ndim < 2:
        raise ValueError(f"{name}: heat maps {heat.shape} and evidence {evidence.shape} must "
                         "have the same shape (..., H, W)")
    if evidence.dtype != bool and not np.isin(evidence, (0, 1)).all():
        raise ValueError(f"{name}: evidence maps must be binary")
    if not np.isfinite(heat).all():
        raise ValueError(f"{name}: heat maps contain NaN or infinite values")
    evidence = evidence.astype(bool)
    if not evidence.any((-2, -1)).all():
        raise ValueError(f"{name}: every evidence map must contain at least one pixel")
    return heat, evidence


def pointing_game(heat, evidence, *, tolerance: int = 0) -> np.ndarray:
    r"""Pointing game: does the maximum of each heat map fall on its evidence?

    A hit when :math:`\arg\max_x H(x) \in \mathrm{dilate}_r(E)`, the evidence dilated by
    ``tolerance`` :math:`r` pixels (ties: the first maximum in row-major order). ``heat`` and
    ``evidence`` have the same shape ``(..., H, W)``; returns a bool per map.
    """
    heat, evidence = _maps_and_evidence(heat, evidence, "pointing_game")
    if tolerance < 0:
        raise ValueError(f"tolerance must be non-negative, got {tolerance}")
    shape = heat.shape
    flat_h = heat.reshape(-1, shape[-2] * shape[-1])
    ev = evidence.reshape(-1, shape[-2], shape[-1])
    if tolerance:
        st = ndimage.generate_binary_structure(2, 2)
        ev = np.stack([ndimage.binary_dilation(e, st, iterations=tolerance) for e in ev])
    top = flat_h.argmax(1)
    hits = ev.reshape(len(ev), -1)[np.arange(len(ev)), top]
    return hits.reshape(shape[:-2])


def iou_at_area(heat, evidence) -> np.ndarray:
    r"""IoU of the evidence :math:`E` with the :math:`|E|` highest pixels of the heat map.

    Ranking only (no threshold to calibrate): a map that ranks the evidence's pixels first
    scores 1; a random map scores about :math:`a/(2-a)` for an evidence of area share
    :math:`a`. Ties are broken by position (stable sort).
    """
    heat, evidence = _maps_and_evidence(heat, evidence, "iou_at_area")
    shape = heat.shape
    h = heat.reshape(-1, shape[-2] * shape[-1])
    e = evidence.reshape(len(h), -1)
    area = e.sum(1)
    order = np.argsort(-h, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(h.shape[1])[None].repeat(len(h), 0), 1)
    top = ranks < area[:, None]
    return iou(top.reshape(-1, *shape[-2:]), e.reshape(-1, *shape[-2:])).reshape(shape[:-2])


def random_maps(shape, *, seed=0) -> np.ndarray:
    """Uniform random heat maps of ``shape`` (the chance level of every localisation metric)."""
    return np.random.default_rng(seed).random(shape)


# ----------------------------------------------------------------------------------------------
# Models
# ----------------------------------------------------------------------------------------------

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
    ``text`` holds :math:`s_c` for :data:`TEXTS` (the concepts, then :data:`NORMAL`).
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
        """:math:`t_c` for every entry of :data:`TEXTS`, shape ``(K + 1, d)``."""
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


def _tensors(data: Phantoms):
    torch = _torch()
    return dict(x=torch.as_tensor(standardise(data.images)),
                zones=torch.as_tensor(data.zones.astype(np.int64)),
                lesion=torch.as_tensor(data.lesion.astype(np.float32)),
                lesion_masks=torch.as_tensor(data.lesion_masks),
                attributes=torch.as_tensor(data.attributes.astype(np.int64)),
                labels=torch.as_tensor(data.labels.astype(np.float32)))


def train(model, data: Phantoms, *, epochs: int = 10, batch_size: int = 32, lr: float = 3e-3,
          align: float = 1.0, disentangle: float = 1.0, concept: float = 1.0, seed=0,
          tau: float = 0.1) -> list:
    r"""Train ``model`` on ``data`` with Adam; returns the mean loss of every epoch.

    * :class:`SmallUNet`: :func:`segmentation_loss`.
    * :class:`RationaleModel`: :math:`\mathcal L_\mathrm{seg} + \lambda_a\mathcal L_\mathrm{align}
      + \lambda_d\mathcal L_\mathrm{disen}` (``align``, ``disentangle``).
    * :class:`ConceptClassifier`: :math:`\mathcal L_\mathrm{seg} + \lambda_c\,\mathrm{BCE}`
      of the concept logits against the image's concepts (``concept``).
    """
    torch = _torch()
    if epochs < 1 or batch_size < 1 or lr <= 0:
        raise ValueError("epochs, batch_size and lr must be positive, got "
                         f"{epochs}, {batch_size}, {lr}")
    if not isinstance(model, (SmallUNet, RationaleModel, ConceptClassifier)):
        raise ValueError(f"cannot train a {type(model).__name__}")
    torch.manual_seed(int(np.random.default_rng(seed).integers(2**31)))
    tensors = _tensors(data)
    order_rng = np.random.default_rng(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=lr, total_steps=epochs * int(np.ceil(len(data) / batch_size)))
    history = []
    model.train()
    for _ in range(epochs):
        total, count = 0.0, 0
        for idx in np.array_split(order_rng.permutation(len(data)),
                                  int(np.ceil(len(data) / batch_size))):
            b = {k: v[idx] for k, v in tensors.items()}
            if isinstance(model, SmallUNet):
                zone, les, _ = model(b["x"])
                loss = segmentation_loss(zone, les, b["zones"], b["lesion"])
            elif isinstance(model, RationaleModel):
                zone, les, e = model(b["x"])
                loss = segmentation_loss(zone, les, b["zones"], b["lesion"])
                t = model.concept_vectors()
                if align:
                    loss = loss + align * align_loss(e, t, b["lesion_masks"], b["attributes"],
                                                     tau)
                if disentangle:
                    loss = loss + disentangle * disentangle_loss(t)
            else:
                zone, les, logits = model(b["x"])
                loss = (segmentation_loss(zone, les, b["zones"], b["lesion"])
                        + concept * torch.nn.functional.binary_cross_entropy_with_logits(
                            logits, b["labels"]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
            count += len(idx)
        history.append(total / count)
    model.eval()
    return history


def unet_of(model):
    """The :class:`SmallUNet` inside any of the three models."""
    return model if isinstance(model, SmallUNet) else model.unet


def segment(model, data: Phantoms, batch_size: int = 256) -> dict:
    """Predicted masks: ``zones`` (n, H, W) in {0, 1, 2}, ``lesion`` (bool) and ``lesion_prob``."""
    torch = _torch()
    x = torch.as_tensor(standardise(data.images))
    unet = unet_of(model).eval()
    zones, probs = [], []
    with torch.no_grad():
        for s in range(0, len(x), batch_size):
            z, les, _ = unet(x[s:s + batch_size])
            zones.append(z.argmax(1).numpy())
            probs.append(les.sigmoid().numpy())
    prob = np.concatenate(probs)
    return dict(zones=np.concatenate(zones).astype(np.int8), lesion=prob > 0.5, lesion_prob=prob)


def segmentation_scores(pred: dict, data: Phantoms) -> dict:
    """Per-image Dice of the gland, the zones (mean of PZ and TZ) and the lesion (on images with
    a lesion); each an array."""
    gland = dice(pred["zones"] > 0, data.zones > 0)
    zone = (dice(pred["zones"] == 1, data.zones == 1)
            + dice(pred["zones"] == 2, data.zones == 2)) / 2
    has = data.lesion.any((1, 2))
    return dict(gland=gland, zone=zone, lesion=dice(pred["lesion"][has], data.lesion[has]))


def rationale_maps(model: RationaleModel, data: Phantoms, batch_size: int = 256):
    """Heat maps :math:`H_c` ``(n, K + 1, H, W)`` and pixel embeddings ``(n, d, H, W)``."""
    torch = _torch()
    x = torch.as_tensor(standardise(data.images))
    maps, embs = [], []
    with torch.no_grad():
        for s in range(0, len(x), batch_size):
            _, _, e = model(x[s:s + batch_size])
            maps.append(model.heat_maps(e).numpy())
            embs.append(e.numpy())
    return np.concatenate(maps), np.concatenate(embs)


def gradcam_maps(model: ConceptClassifier, data: Phantoms, layer: str = "dec1") -> np.ndarray:
    r"""Grad-CAM concept maps of the concept classifier (``captum.attr.LayerGradCam``).

    :math:`H_c = \mathrm{ReLU}(\sum_k \alpha^c_k A_k)` with :math:`\alpha^c_k` the spatial mean
    of :math:`\partial y_c/\partial A_k` over the feature maps :math:`A` of ``layer`` (``"dec1"``,
    full resolution, or ``"bottleneck"``, a quarter, upsampled bilinearly). Returns
    ``(n, K, H, W)``.
    """
    import warnings

    torch = _torch()
    with warnings.catch_warnings():  # captum imports tqdm.auto, which warns in Jupyter
        warnings.simplefilter("ignore")
        from captum.attr import LayerAttribution, LayerGradCam

    if layer not in ("dec1", "bottleneck"):
        raise ValueError(f"layer must be 'dec1' or 'bottleneck', got {layer!r}")
    x = torch.as_tensor(standardise(data.images))
    model.eval()
    cam = LayerGradCam(lambda inp: model(inp)[2], getattr(model.unet, layer))
    out = np.empty((len(x), len(CONCEPTS)) + x.shape[2:], np.float32)
    for c in range(len(CONCEPTS)):
        a = cam.attribute(x, target=c, relu_attributions=True)
        if a.shape[-1] != x.shape[-1]:
            a = LayerAttribution.interpolate(a, tuple(x.shape[2:]), "bilinear")
        out[:, c] = a[:, 0].detach().numpy()
    return out


def concept_probabilities(model: ConceptClassifier, data: Phantoms) -> np.ndarray:
    """The concept classifier's probabilities ``(n, K)``."""
    torch = _torch()
    with torch.no_grad():
        return model(torch.as_tensor(standardise(data.images)))[2].sigmoid().numpy()


def answer_questions(maps_or_embeddings, t, pred: dict, data: Phantoms, *,
                     min_pixels: int = 3) -> dict:
    r"""Answer three questions per image from the model, by text retrieval.

    * **lesion present?** the segmentation's lesion mask has at least ``min_pixels`` pixels;
    * **location** (images with one lesion): the embedding pooled over the predicted lesion
      mask, :math:`z = \mathrm{norm}(\sum_{x\in\hat M} e(x))`, retrieves
      :math:`\arg\max_{c\in\{\mathrm{PZ},\mathrm{TZ}\}} z^\top t_c`;
    * **score** (images with one lesion): :math:`z` retrieves the margin, texture and intensity
      concepts, and :func:`pirads` turns them into the score, the rationale tree's last step.

    If the predicted mask is empty, :math:`\hat M` is the 5 pixels of highest lesion
    probability. ``maps_or_embeddings``: pixel embeddings ``(n, d, H, W)``; ``t``: ``(K+1, d)``.
    Returns the answers and the true values as arrays (``truth_*``), location and score on the
    single-lesion images only.
    """
    e = np.asarray(maps_or_embeddings, float)
    t = np.asarray(t, float)
    if e.ndim != 4 or e.shape[1] != t.shape[1] or len(e) != len(data):
        raise ValueError(f"embeddings {e.shape} must be (n, d, H, W) with d = {t.shape[1]} and "
                         f"n = {len(data)}")
    present = pred["lesion"].sum((1, 2)) >= min_pixels
    single = np.flatnonzero(data.n_lesions == 1)
    loc, score = [], []
    for i in single:
        m = pred["lesion"][i]
        if m.sum() == 0:
            top = np.argsort(-pred["lesion_prob"][i].ravel())[:5]
            m = np.zeros(m.size, bool)
            m[top] = True
            m = m.reshape(pred["lesion"][i].shape)
        z = e[i][:, m].sum(1)
        z /= np.linalg.norm(z) + 1e-12
        sims = t @ z
        pick = {g: int(np.argmax(sims[GROUP_START[g]:GROUP_START[g] + len(p)]))
                for g, p in GROUPS.items()}
        loc.append(pick["location"])
        score.append(pirads(pick["margin"], pick["texture"], pick["intensity"]))
    z_true = data.attributes[single][:, :, 0].argmax(1)
    return dict(present=present, truth_present=data.n_lesions > 0,
                location=np.array(loc, int), truth_location=z_true,
                score=np.array(score, int), truth_score=data.score[single])


def embed_concepts(path) -> None:
    """Embed :data:`TEXTS` with all-MiniLM-L6-v2 and save ``embeddings`` and ``texts``."""
    from . import minilm

    emb = minilm.sentence_embeddings(list(TEXTS))
    np.savez_compressed(path, embeddings=emb.astype(np.float32), texts=np.array(TEXTS),
                        digest=np.array(minilm.texts_digest(TEXTS)))


def load_concept_embeddings() -> np.ndarray:
    """The committed MiniLM embeddings of :data:`TEXTS` (checked against the phrases)."""
    from icml25.common import data as book_data

    from . import minilm

    with np.load(book_data.path(EMBEDDINGS)) as z:
        if str(z["digest"]) != minilm.texts_digest(TEXTS):
            raise ValueError("data/rationales/concepts.npz was made for other phrases; "
                             "regenerate it with python -m icml25.rationales")
        return z["embeddings"]


#: How the committed models were trained (``python -m icml25.rationales train``).
TRAINING = dict(size=32, n_train=600, n_low=150, epochs=30, batch_size=32, lr=3e-3, width=8,
                dim=16, tau=0.1, align=1.0, disentangle=1.0, concept=1.0)
#: The models of one seed: name, class, training set, loss weights.
MODELS = {
    "rationale": ("RationaleModel", "full", {}),
    "unet": ("SmallUNet", "full", {}),
    "classifier": ("ConceptClassifier", "full", {}),
    "rationale_low": ("RationaleModel", "low", {}),
    "unet_low": ("SmallUNet", "low", {}),
    "align_only": ("RationaleModel", "full", {"disentangle": 0.0}),
}
#: The committed models (:func:`load_models`): training seeds 0-4, made by
#: :data:`TRAIN_COMMAND` (``--seeds N`` trains seeds 0..N-1).
CHECKPOINT = "rationales/models.pt"
TRAIN_COMMAND = "python -m icml25.rationales train data/rationales/models.pt"
#: What training the committed file cost on one core, measured when it was trained (about
#: 275 CPU-seconds per seed, five seeds).
#: The file itself holds no timing, so that retraining gives its sha256 again.
TRAINING_CPU_MINUTES = 23


def build(kind: str, text, config: dict):
    """A fresh model of ``kind`` (a name in :data:`MODELS`'s first column)."""
    if kind == "RationaleModel":
        return RationaleModel(text, config["width"], config["dim"])
    if kind == "SmallUNet":
        return SmallUNet(config["width"])
    if kind == "ConceptClassifier":
        return ConceptClassifier(config["width"])
    raise ValueError(f"unknown model kind {kind!r}")


def train_models(seed: int, config: dict = TRAINING, text=None, names=None) -> dict:
    """Train the models of :data:`MODELS` for one seed on ``make_phantoms(n_train, size,
    seed=[seed, 1])`` (the low-data models on its first ``n_low`` images, for the same number
    of optimisation steps). Returns ``{name: (model, record)}``, the record holding the loss of
    every epoch (``history``), ``n_train`` and ``epochs``."""
    torch = _torch()
    text = load_concept_embeddings() if text is None else text
    full = make_phantoms(config["n_train"], config["size"], seed=[seed, 1])
    sets = {"full": full, "low": full.subset(slice(0, config["n_low"]))}
    out = {}
    for j, name in enumerate(names or MODELS):
        kind, which, weights = MODELS[name]
        data = sets[which]
        epochs = config["epochs"] * (config["n_train"] // len(data))
        torch.manual_seed(int(np.random.default_rng([seed, 10, j]).integers(2**31)))
        model = build(kind, text, config)
        kw = {k: config[k] for k in ("align", "disentangle", "concept", "tau")} | weights
        history = train(model, data, epochs=epochs, batch_size=config["batch_size"],
                        lr=config["lr"], seed=[seed, 11, j], **kw)
        out[name] = (model, dict(history=history, n_train=len(data), epochs=epochs))
    return out


def save_checkpoint(path, seeds=range(5), config: dict = TRAINING, jobs: int = 1) -> str:
    """Train every model for every seed and save the state dicts (float32) and training
    records (:func:`icml25.common.checkpoints.save`). Returns the file's sha256."""
    results = map_seeds(partial(train_in_worker, train_models),
                        [(int(s), config) for s in seeds], jobs)
    return checkpoints.save(
        path, config=dict(config),
        seeds={s: {n: w for n, (w, _) in r.items()} for s, r in results},
        records={s: {n: rec for n, (_, rec) in r.items()} for s, r in results})


def load_models(seed: int, text=None) -> tuple[dict, dict]:
    """The committed models of training seed ``seed`` (``{name: (model, record)}``) and the
    training config. The committed file holds seeds 0-4 (a chapter loads its run's seed);
    another seed is an error naming :data:`TRAIN_COMMAND`."""
    from icml25.common import data as book_data

    ckpt = checkpoints.load(book_data.path(CHECKPOINT))
    state = checkpoints.seed_state(ckpt, seed, TRAIN_COMMAND)
    text = load_concept_embeddings() if text is None else text
    config = ckpt.config
    out = {}
    for name, weights in state.items():
        model = build(MODELS[name][0], text, config)
        model.load_state_dict(weights)
        out[name] = (model.eval(), ckpt.records[seed][name])
    return out, config


#: The training of the chapters' paper mode (they call :func:`train_models` with it):
#: larger phantoms, five times the images, trained live.
PAPER_TRAINING = dict(TRAINING, size=48, n_train=3000, n_low=750, epochs=40)


def main(argv=None) -> None:  # pragma: no cover
    """``python -m icml25.rationales embed data/rationales/concepts.npz`` and
    ``python -m icml25.rationales train data/rationales/models.pt [--jobs 2]``."""
    train_command("python -m icml25.rationales", save_checkpoint, seeds=5, argv=argv,
                  extra={"embed": embed_concepts})


if __name__ == "__main__":  # pragma: no cover
    main()
