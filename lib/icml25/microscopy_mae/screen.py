r"""The synthetic screen: cells drawn from trait vectors, genes with planted pathway
effects, plates with batch effects and control wells."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from icml25.common.streams import as_generator

#: The stained compartments, one image channel each.
CHANNELS = ("nucleus", "cytoplasm", "membrane", "organelles")
#: The morphological traits a gene can move (one coordinate of the effect vector each).
TRAITS = ("nucleus size", "cell size", "elongation", "nucleus offset", "membrane",
          "organelle texture", "texture scale", "chromatin")
N_TRAITS = len(TRAITS)


# --------------------------------------------------------------------------------------
# Data: a synthetic screen
# --------------------------------------------------------------------------------------


@dataclass
class Screen:
    """A synthetic screen: crops, their wells, and the wells' genes, plates and
    controls.

    Attributes
    ----------
    images : (N, C, H, W) float32 array, the crops.
    crop_well : (N,) int array, the well of each crop.
    well_gene : (W,) int array, the gene of each well, ``-1`` for a control well.
    well_plate : (W,) int array, the plate (batch) of each well.
    gene_pathway : (G,) int array, the planted pathway of each gene, ``-1`` for a null
    gene.
    gene_effect : (G, T) array, each gene's effect on the traits.
    """

    images: np.ndarray
    crop_well: np.ndarray
    well_gene: np.ndarray
    well_plate: np.ndarray
    gene_pathway: np.ndarray
    gene_effect: np.ndarray
    config: dict = field(default_factory=dict)

    @property
    def is_control(self) -> np.ndarray:
        """(W,) bool, the control wells."""
        return self.well_gene < 0

    @property
    def crop_gene(self) -> np.ndarray:
        return self.well_gene[self.crop_well]

    @property
    def crop_plate(self) -> np.ndarray:
        return self.well_plate[self.crop_well]


def _sigmoid(x):
    # clipped so that exp never overflows far from a cell
    return 1 / (1 + np.exp(-np.clip(x, -30, 30)))


def _grid(size: int) -> tuple[np.ndarray, np.ndarray]:
    c = np.arange(size, dtype=np.float32) - (size - 1) / 2
    return np.meshgrid(c, c, indexing="xy")


def render_cells(traits: np.ndarray, *, size: int = 24, rng=None) -> np.ndarray:
    r"""Draw one cell per crop from its trait vector.

    Each trait $z_t$ acts on one feature of the drawing: the nucleus radius
    $2.4\,e^{0.18 z_0}$, the cell radius $6\,e^{0.12 z_1}$, the aspect ratio $e^{0.3
    z_2}$, the nucleus' offset from the cell centre $1.2\,\mathrm{softplus}(z_3)$, the
    membrane brightness $e^{0.35 z_4}$, the contrast $\sigma(z_5)$ and spatial frequency
    $0.9\,e^{0.2 z_6}$ of the organelle texture, and the chromatin contrast
    $\sigma(z_7)$. Orientation, position and texture phases are random per cell.

    Parameters
    ----------
    traits : (N, T) array, trait vectors $z$ (T = 8, see :data:`TRAITS`).
    size : int, crop side in pixels.
    rng : numpy Generator for the per-cell randomness.

    Returns
    -------
    (N, 4, size, size) float32 array, channels as in :data:`CHANNELS`.
    """
    traits = np.asarray(traits, np.float32)
    if traits.ndim != 2 or traits.shape[1] != N_TRAITS:
        raise ValueError(f"traits must have shape (N, {N_TRAITS}); got {traits.shape}")
    if size < 12:
        raise ValueError(f"size must be at least 12 pixels; got {size}")
    rng = as_generator(rng)
    n = len(traits)
    x, y = _grid(size)
    x, y = x[None], y[None]
    col = lambda v: np.asarray(v, np.float32)[:, None, None]  # noqa: E731
    z = traits.T
    r_nuc = col(2.4 * np.exp(0.18 * z[0]))
    r_cell = col(6.0 * np.exp(0.12 * z[1]))
    aspect = col(np.exp(0.3 * z[2]))
    offset = col(1.2 * np.logaddexp(0.0, z[3]))
    membrane = col(np.exp(0.35 * z[4]))
    tex_amp = col(_sigmoid(z[5]))
    tex_freq = col(0.9 * np.exp(0.2 * z[6]))
    chromatin = col(_sigmoid(z[7]))
    theta = col(rng.uniform(0, np.pi, n))
    cx, cy = col(rng.uniform(-1.5, 1.5, n)), col(rng.uniform(-1.5, 1.5, n))
    cos, sin = np.cos(theta), np.sin(theta)
    u = (x - cx) * cos + (y - cy) * sin  # along the cell's major axis
    v = -(x - cx) * sin + (y - cy) * cos
    root = np.sqrt(aspect)
    d_cell = np.sqrt((u / (r_cell * root)) ** 2 + (v * root / r_cell) ** 2)
    cell = _sigmoid(6 * (1 - d_cell))
    d_nuc = np.sqrt((u - offset) ** 2 + v ** 2) / r_nuc
    nucleus = _sigmoid(6 * (1 - d_nuc))
    phase = col(rng.uniform(0, 2 * np.pi, n))
    phi = col(rng.uniform(0, np.pi, n))
    grain = 0.5 + 0.5 * np.cos(1.6 * (x * np.cos(phi) + y * np.sin(phi))
                               + phase) * np.cos(
        1.6 * (-x * np.sin(phi) + y * np.cos(phi)) + phase)
    wave = 0.5 + 0.5 * np.cos(tex_freq * (x * np.cos(phi) - y * np.sin(phi))
                              + 2 * phase)
    out = np.empty((n, 4, size, size), np.float32)
    out[:, 0] = nucleus * (1 - chromatin + chromatin * grain)
    out[:, 1] = cell * (1 - 0.7 * nucleus)
    ring = np.exp(-((d_cell - 1) * r_cell) ** 2 / (2 * 0.8 ** 2))
    out[:, 2] = membrane * ring + 0.15 * cell
    out[:, 3] = cell * (1 - nucleus) * (1 - tex_amp + tex_amp * wave ** 2)
    return out


def make_screen(*, n_pathways: int = 8, pathway_size: int = 4, n_null: int = 16,
                n_plates: int = 4, controls_per_plate: int = 8, crops_per_well: int = 8,
                size: int = 24, effect: float = 2.5, within_pathway: float = 0.35,
                cell_noise: float = 0.6, plate_shift: float = 0.4, seed=0) -> Screen:
    r"""A seeded screen with planted pathways, null genes, plates and controls.

    Each pathway $p$ has a unit direction $u_p$ in trait space; gene $g$ of pathway $p$
    has effect $e_g = a\,(u_p + \lambda\,\xi_g)/\lVert u_p + \lambda\,\xi_g \rVert$ with
    $\xi_g \sim N(0, I/T)$ (``within_pathway`` is $\lambda$, ``effect`` is $a$); a null
    gene has $e_g = 0$. Every gene has one well on every plate; every plate has
    ``controls_per_plate`` control wells ($e = 0$). A cell of well $w$ on plate $k$ has
    traits $z = e_{g(w)} + \beta_k + \gamma_w + \varepsilon$ with the plate's shift
    $\beta_k \sim N(0, s^2 I)$, a well's $\gamma_w \sim N(0, 0.15^2 I)$ and cell-to-cell
    variation $\varepsilon \sim N(0, \sigma^2 I)$. The drawn cell (:func:`render_cells`)
    is then seen through the plate's optics: per-channel gain $\sim \log N(0, 0.25^2)$,
    offset $\sim U(0, 0.2)$, an illumination gradient $1 + \langle q_k, (x, y) \rangle$
    with $\lVert q_k \rVert \le 0.3 / \text{half-width}$, and pixel noise.

    Returns
    -------
    :class:`Screen`
    """
    for name, value in (("n_pathways", n_pathways), ("pathway_size", pathway_size),
                        ("n_plates", n_plates),
                        ("controls_per_plate", controls_per_plate),
                        ("crops_per_well", crops_per_well)):
        if int(value) < 1:
            raise ValueError(f"{name} must be a positive integer; got {value}")
    if n_null < 0:
        raise ValueError(f"n_null must be non-negative; got {n_null}")
    if n_plates < 2:
        raise ValueError(f"n_plates must be at least 2 (replicates live on plates); "
                         f"got {n_plates}")
    rng = as_generator(seed)
    n_genes = n_pathways * pathway_size + n_null
    directions = rng.normal(size=(n_pathways, N_TRAITS))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    gene_pathway = np.r_[np.repeat(np.arange(n_pathways), pathway_size),
                         -np.ones(n_null, int)]
    gene_effect = np.zeros((n_genes, N_TRAITS))
    k = n_pathways * pathway_size
    raw = directions[gene_pathway[:k]] + within_pathway * rng.normal(
        size=(k, N_TRAITS)) / math.sqrt(N_TRAITS)
    gene_effect[:k] = effect * raw / np.linalg.norm(raw, axis=1, keepdims=True)
    images, crop_well, well_gene, well_plate = _plated(
        gene_effect, n_plates=n_plates, controls_per_plate=controls_per_plate,
        crops_per_well=crops_per_well, size=size, cell_noise=cell_noise,
        plate_shift=plate_shift, rng=rng)
    config = dict(n_pathways=n_pathways, pathway_size=pathway_size, n_null=n_null,
                  n_plates=n_plates, controls_per_plate=controls_per_plate,
                  crops_per_well=crops_per_well, size=size, effect=effect)
    return Screen(images, crop_well, well_gene, well_plate, gene_pathway, gene_effect,
                  config)

def make_compound_screen(genes: Screen, *, n_compounds: int = 32, active: float = 0.75,
                         potency: tuple[float, float] = (0.4, 1.0),
                         off_target: float = 0.35, n_plates: int = 2,
                         controls_per_plate: int = 8, crops_per_well: int = 8,
                         cell_noise: float = 0.6, plate_shift: float = 0.4,
                         seed=0) -> tuple[Screen, np.ndarray]:
    r"""Compound plates for the gene screen ``genes``, with planted compound-gene pairs.

    A share ``active`` of the compounds inhibits one gene $t(c)$ drawn from the pathway
    genes (distinct genes while there are enough): its effect is a partial copy of the
    knockout's, $e_c = \rho_c\,e_{t(c)} + \tau a\,\xi_c$ with potency $\rho_c \sim
    U(\rho_0, \rho_1)$, off-target effects $\xi_c \sim N(0, I/T)$ of relative size $\tau$
    = ``off_target`` and $a$ the gene screen's effect size. The other compounds have only
    off-target effects (no known target). Compounds sit on plates of their own, with their
    own controls and batch effects (as in RxRx3, where compounds and gene knockouts are
    imaged on different plates), drawn as in :func:`make_screen`.

    Returns
    -------
    compounds : :class:`Screen` whose "genes" are the compounds (``gene_pathway``: the
        target's pathway, ``-1`` for a compound without a target).
    target : (n_compounds,) int array, the gene each compound inhibits, ``-1`` if none.
    """
    if int(n_compounds) < 1:
        raise ValueError(f"n_compounds must be a positive integer; got {n_compounds}")
    if not 0 < active <= 1:
        raise ValueError(f"active must be in (0, 1]; got {active}")
    if not 0 <= potency[0] <= potency[1]:
        raise ValueError(f"potency must be an interval 0 <= low <= high; got {potency}")
    if n_plates < 2:
        raise ValueError(f"n_plates must be at least 2 (replicates live on plates); "
                         f"got {n_plates}")
    rng = as_generator(seed)
    candidates = np.flatnonzero(genes.gene_pathway >= 0)
    n_active = max(1, round(active * n_compounds))
    target = np.full(n_compounds, -1)
    target[:n_active] = rng.choice(candidates, n_active,
                                   replace=n_active > len(candidates))
    rho = rng.uniform(*potency, n_compounds) * (target >= 0)
    a = genes.config["effect"]
    noise = off_target * a * rng.normal(size=(n_compounds, N_TRAITS)) / math.sqrt(N_TRAITS)
    effects = rho[:, None] * genes.gene_effect[np.maximum(target, 0)] + noise
    size = genes.images.shape[-1]
    images, crop_well, well_gene, well_plate = _plated(
        effects, n_plates=n_plates, controls_per_plate=controls_per_plate,
        crops_per_well=crops_per_well, size=size, cell_noise=cell_noise,
        plate_shift=plate_shift, rng=rng)
    pathway = np.where(target >= 0, genes.gene_pathway[np.maximum(target, 0)], -1)
    config = dict(n_compounds=n_compounds, active=active, potency=tuple(potency),
                  off_target=off_target, n_plates=n_plates,
                  controls_per_plate=controls_per_plate, crops_per_well=crops_per_well,
                  size=size, effect=a)
    return (Screen(images, crop_well, well_gene, well_plate, pathway, effects, config),
            target)


def _plated(effects, *, n_plates, controls_per_plate, crops_per_well, size, cell_noise,
            plate_shift, rng):
    """Plates of wells for perturbations with trait effects ``effects`` (one well per
    perturbation and plate, then the plate's controls), their cells drawn and seen through
    each plate's optics (see :func:`make_screen`). Returns ``images`` (float32),
    ``crop_well``, ``well_gene``, ``well_plate``."""
    n_genes = len(effects)
    well_gene = np.tile(np.r_[np.arange(n_genes), -np.ones(controls_per_plate, int)],
                        n_plates)
    well_plate = np.repeat(np.arange(n_plates), n_genes + controls_per_plate)
    n_wells = len(well_gene)
    plate_beta = plate_shift * rng.normal(size=(n_plates, N_TRAITS))
    well_gamma = 0.15 * rng.normal(size=(n_wells, N_TRAITS))
    crop_well = np.repeat(np.arange(n_wells), crops_per_well)
    eff = np.where(well_gene[:, None] >= 0, effects[np.maximum(well_gene, 0)], 0.0)
    traits = (eff + plate_beta[well_plate] + well_gamma)[crop_well]
    traits = traits + cell_noise * rng.normal(size=traits.shape)
    images = render_cells(traits, size=size, rng=rng)
    # the plate's optics: gains, offsets, illumination gradient, noise
    gain = np.exp(0.25 * rng.normal(size=(n_plates, 4)))
    offset = rng.uniform(0, 0.2, size=(n_plates, 4))
    angle = rng.uniform(0, 2 * np.pi, n_plates)
    slope = rng.uniform(0, 0.3, n_plates) / (size / 2)
    x, y = _grid(size)
    illum = 1 + slope[:, None, None] * (np.cos(angle)[:, None, None] * x
                                        + np.sin(angle)[:, None, None] * y)
    plate = well_plate[crop_well]
    images = (images * gain[plate][:, :, None, None] * illum[plate][:, None]
              + offset[plate][:, :, None, None])
    images += 0.05 * rng.normal(size=images.shape).astype(np.float32)
    return images.astype(np.float32), crop_well, well_gene, well_plate


def normalise_crops(images):
    r"""Per-crop, per-channel standardisation $x \mapsto (x - \mu_{n,c}) / (\sigma_{n,c}
    + 10^{-6})$: the paper's per-image channel normaliser (an instance norm without
    affine)."""
    mu = images.mean(axis=(-2, -1), keepdims=True)
    sd = images.std(axis=(-2, -1), keepdims=True)
    return (images - mu) / (sd + 1e-6)
