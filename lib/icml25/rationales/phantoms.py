r"""Seeded prostate-MRI-like phantoms with masks, concepts, rationales and hidden evidence."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from icml25.common.streams import as_generator

from .concepts import CONCEPTS, GROUP_START, GROUPS, NORMAL, ZONE_NAMES, pirads


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
#: The shifted scanner.
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
    attributes : (n, 2, 4) int8, per slot: present, margin, texture, intensity (-1 if absent)
    labels : (n, K) bool, the concepts of each image's rationale.
    evidence : (n, K, size, size) bool, hidden evidence map of each concept (evaluation only)
    score : (n,) int, highest lesion score of the image (1 without lesion)
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
    rng = as_generator(seed)
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
