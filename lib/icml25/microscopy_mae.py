r"""Masked autoencoders for cell microscopy, curated, trimmed and benchmarked at toy
scale.

Kenyon-Dean et al. (ICML 2025), *ViTally Consistent*: a recipe in three steps,

1. **curate** the pre-training set: keep a perturbation only when its replicate wells
   agree more than random control wells do (a permutation test,
   :func:`consistency_pvalues`, $p < 0.01$);
2. **train** a ViT masked autoencoder (:class:`MAE`; mask ratio 0.75, loss =
   masked-patch MSE $+\,0.01\times$ Fourier-magnitude loss, :func:`mae_loss`);
3. **probe** every block with a linear classifier and trim the encoder after the best
   one (:func:`block_embeddings`, :func:`probe_blocks`);

then the EFAAR evaluation of a whole-genome map: **E**mbed wells, **A**lign by typical
variation normalisation on controls (:func:`tvn`), **A**ggregate per gene
(:func:`aggregate`), **R**elate by cosine similarity, scored by relationship recall at
the 5th/95th percentiles (:func:`relationship_recall`) and replicate consistency
(:func:`replicate_consistency`, KS and Cramér-von Mises statistics).

The data are synthetic "cell painting" crops (:func:`make_screen`): one cell per crop in
four channels (nucleus, cytoplasm, membrane, organelles), each gene a morphological
effect vector, genes of one planted pathway sharing a direction, null genes none, plates
carrying batch effects (channel gains and offsets, an illumination gradient, a shift of
the cells' state) and control wells on every plate, so every benchmark has a known
answer.

``python -m icml25.microscopy_mae train data/microscopy_mae/models.pt`` trains the
models the chapter loads (:func:`load_models`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from icml25.common.stats import resample_indices
from icml25.common.streams import stream, stream_int
from icml25.common import checkpoints
from icml25.common.checkpoints import map_seeds, train_command

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
    rng = np.random.default_rng(rng)
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
    rng = np.random.default_rng(seed)
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
    well_gene = np.tile(np.r_[np.arange(n_genes), -np.ones(controls_per_plate, int)],
                        n_plates)
    well_plate = np.repeat(np.arange(n_plates), n_genes + controls_per_plate)
    n_wells = len(well_gene)
    plate_beta = plate_shift * rng.normal(size=(n_plates, N_TRAITS))
    well_gamma = 0.15 * rng.normal(size=(n_wells, N_TRAITS))
    crop_well = np.repeat(np.arange(n_wells), crops_per_well)
    eff = np.where(well_gene[:, None] >= 0, gene_effect[np.maximum(well_gene, 0)], 0.0)
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
    config = dict(n_pathways=n_pathways, pathway_size=pathway_size, n_null=n_null,
                  n_plates=n_plates, controls_per_plate=controls_per_plate,
                  crops_per_well=crops_per_well, size=size, effect=effect)
    return Screen(images.astype(np.float32), crop_well, well_gene, well_plate,
                  gene_pathway, gene_effect, config)


def normalise_crops(images):
    r"""Per-crop, per-channel standardisation $x \mapsto (x - \mu_{n,c}) / (\sigma_{n,c}
    + 10^{-6})$: the paper's per-image channel normaliser (an instance norm without
    affine)."""
    mu = images.mean(axis=(-2, -1), keepdims=True)
    sd = images.std(axis=(-2, -1), keepdims=True)
    return (images - mu) / (sd + 1e-6)


# --------------------------------------------------------------------------------------
# The model: a small ViT masked autoencoder
# --------------------------------------------------------------------------------------


def sincos_positions(grid: int, dim: int) -> np.ndarray:
    r"""Fixed 2-D sine-cosine position embeddings, shape (grid², dim): half the
    dimensions encode the row, half the column, each with frequencies
    $10000^{-2i/(d/2)}$."""
    if dim % 4:
        raise ValueError(f"dim must be a multiple of 4 for 2-D sin-cos positions; "
                         f"got {dim}")
    omega = 1.0 / 10000 ** (np.arange(dim // 4) / (dim / 4))
    rows, cols = np.meshgrid(np.arange(grid), np.arange(grid), indexing="ij")

    def embed(pos):
        angle = pos.reshape(-1, 1) * omega[None]
        return np.concatenate([np.sin(angle), np.cos(angle)], 1)

    return np.concatenate([embed(rows), embed(cols)], 1).astype(np.float32)


def _torch():
    import torch

    return torch


def _modules():
    torch = _torch()
    nn = torch.nn
    F = torch.nn.functional

    class Block(nn.Module):
        r"""Pre-norm transformer block with LayerScale: $h \leftarrow h + \lambda_1
        \odot \mathrm{Attn}(\mathrm{LN}(h))$, $h \leftarrow h + \lambda_2 \odot
        \mathrm{MLP}(\mathrm{LN}(h))$; attention without qkv bias and with normalised
        queries and keys, as in the paper's ViTs."""

        def __init__(self, width, heads, layerscale):
            super().__init__()
            self.heads = heads
            self.norm1 = nn.LayerNorm(width)
            self.qkv = nn.Linear(width, 3 * width, bias=False)
            self.q_norm = nn.LayerNorm(width // heads)
            self.k_norm = nn.LayerNorm(width // heads)
            self.proj = nn.Linear(width, width)
            self.norm2 = nn.LayerNorm(width)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                     nn.Linear(4 * width, width))
            self.ls1 = nn.Parameter(layerscale * torch.ones(width))
            self.ls2 = nn.Parameter(layerscale * torch.ones(width))

        def forward(self, h):
            n, t, d = h.shape
            qkv = self.qkv(self.norm1(h)).reshape(n, t, 3, self.heads, d // self.heads)
            q, k, v = qkv.permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(self.q_norm(q), self.k_norm(k), v)
            h = h + self.ls1 * self.proj(a.transpose(1, 2).reshape(n, t, d))
            return h + self.ls2 * self.mlp(self.norm2(h))

    class MAE(nn.Module):
        r"""A ViT masked autoencoder (He et al., 2022) in the paper's family.

        The crop (normalised per channel) is cut into $p \times p$ patches; a random
        ``mask_ratio`` of them is dropped; the encoder (``depth`` blocks of ``width``)
        sees the rest; a light decoder fills in mask tokens and predicts every patch's
        pixels.
        """

        def __init__(self, channels=4, size=24, patch=4, width=64, depth=6, heads=4,
                     dec_width=48, dec_depth=2, mask_ratio=0.75, layerscale=0.1):
            super().__init__()
            if size % patch:
                raise ValueError(f"size {size} must be a multiple of patch {patch}")
            self.config = dict(channels=channels, size=size, patch=patch, width=width,
                               depth=depth, heads=heads, dec_width=dec_width,
                               dec_depth=dec_depth, mask_ratio=mask_ratio,
                               layerscale=layerscale)
            self.patch, self.grid = patch, size // patch
            self.mask_ratio = mask_ratio
            dim = channels * patch * patch
            self.embed = nn.Linear(dim, width)
            self.register_buffer("pos", torch.from_numpy(sincos_positions(self.grid,
                                                                          width)))
            self.blocks = nn.ModuleList(Block(width, heads, layerscale)
                                        for _ in range(depth))
            self.norm = nn.LayerNorm(width)
            self.dec_embed = nn.Linear(width, dec_width)
            self.mask_token = nn.Parameter(torch.zeros(dec_width))
            self.register_buffer("dec_pos", torch.from_numpy(
                sincos_positions(self.grid, dec_width)))
            self.dec_blocks = nn.ModuleList(Block(dec_width, 4, layerscale)
                                            for _ in range(dec_depth))
            self.dec_norm = nn.LayerNorm(dec_width)
            self.head = nn.Linear(dec_width, dim)

        def patchify(self, x):
            n, c, _, _ = x.shape
            p, g = self.patch, self.grid
            x = x.reshape(n, c, g, p, g, p).permute(0, 2, 4, 3, 5, 1)
            return x.reshape(n, g * g, p * p * c)

        def unpatchify(self, patches, channels):
            n = patches.shape[0]
            p, g = self.patch, self.grid
            x = patches.reshape(n, g, g, p, p, channels).permute(0, 5, 1, 3, 2, 4)
            return x.reshape(n, channels, g * p, g * p)

        def tokens(self, x):
            return self.embed(self.patchify(x)) + self.pos

        def forward(self, x, generator=None):
            """Returns (predicted patches of every position, target patches, mask)."""
            target = self.patchify(x)
            h = self.embed(target) + self.pos
            n, t, d = h.shape
            keep = max(1, int(round(t * (1 - self.mask_ratio))))
            noise = torch.rand(n, t, generator=generator)
            order = noise.argsort(1)
            visible = order[:, :keep]
            h = torch.gather(h, 1, visible[..., None].expand(-1, -1, d))
            for block in self.blocks:
                h = block(h)
            h = self.dec_embed(self.norm(h))
            full = self.mask_token.expand(n, t, -1).clone()
            full.scatter_(1, visible[..., None].expand(-1, -1, h.shape[-1]), h)
            full = full + self.dec_pos
            for block in self.dec_blocks:
                full = block(full)
            pred = self.head(self.dec_norm(full))
            mask = torch.ones(n, t)
            mask.scatter_(1, visible, 0.0)
            return pred, target, mask

    return Block, MAE


def build_mae(seed: int = 0, **config):
    """A freshly initialised :class:`MAE` (seeded): also the random-init baseline."""
    torch = _torch()
    _, MAE = _modules()
    torch.manual_seed(seed)
    return MAE(**config)


def fourier_loss(pred_img, target_img):
    r"""Mean absolute difference of the 2-D Fourier magnitudes, per channel: $\frac{1}{N
    C H W}\sum \big|\,|\mathcal F(\hat x)| - |\mathcal F(x)|\,\big|$ (the paper's
    ``FourierLoss``, L1 form)."""
    torch = _torch()
    if pred_img.shape != target_img.shape or pred_img.ndim != 4:
        raise ValueError("fourier_loss needs two (N, C, H, W) tensors of the same "
                         "shape; "
                         f"got {tuple(pred_img.shape)} and {tuple(target_img.shape)}")
    fp = torch.fft.fft2(pred_img, norm="ortho").abs()
    ft = torch.fft.fft2(target_img, norm="ortho").abs()
    return (fp - ft).abs().mean()


def mae_loss(pred, target, mask, model, alpha: float = 0.01):
    r"""The paper's objective: $\mathcal L = \frac{\sum_i m_i \lVert \hat x_i - x_i
    \rVert^2 / D}{\sum_i m_i} + \alpha\, \mathcal L_{\mathrm{Fourier}}(\hat x, x)$, with
    $m_i = 1$ on masked patches, $D$ pixels per patch and $\alpha = 0.01$. The Fourier
    term compares the reconstructed crop (every patch predicted) with the crop.

    Returns
    -------
    (total, mse, fourier) tensors.
    """
    if alpha < 0:
        raise ValueError(f"alpha must be non-negative; got {alpha}")
    mse = (((pred - target) ** 2).mean(-1) * mask).sum() / mask.sum()
    c = model.config["channels"]
    four = fourier_loss(model.unpatchify(pred, c), model.unpatchify(target, c))
    return mse + alpha * four, mse, four


class Lion:
    r"""The Lion optimiser (Chen et al., 2023), which the paper trains with: $u =
    \mathrm{sign}(\beta_1 m + (1-\beta_1) g)$, $\theta \leftarrow \theta - \eta\,(u +
    \lambda\theta)$, $m \leftarrow \beta_2 m + (1-\beta_2) g$."""

    def __init__(self, params, lr=1e-4, betas=(0.9, 0.95), weight_decay=0.05):
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.betas, self.wd = lr, betas, weight_decay
        self.m = [p.detach().clone().zero_() for p in self.params]

    def step(self):
        torch = _torch()
        b1, b2 = self.betas
        with torch.no_grad():
            for p, m in zip(self.params, self.m):
                if p.grad is None:
                    continue
                u = (b1 * m + (1 - b1) * p.grad).sign()
                p.mul_(1 - self.lr * self.wd).add_(u, alpha=-self.lr)
                m.mul_(b2).add_(p.grad, alpha=1 - b2)

    def zero_grad(self):
        for p in self.params:
            p.grad = None


def one_cycle(step: int, total: int, peak: float, warmup: float = 0.1) -> float:
    """Learning rate of a one-cycle schedule: linear warm-up over ``warmup`` of the
    steps to ``peak``, then cosine decay to zero."""
    if total < 1 or not 0 <= step < total:
        raise ValueError(f"need 0 <= step < total; got step={step}, total={total}")
    w = max(1, int(warmup * total))
    if step < w:
        return peak * (step + 1) / w
    return peak * 0.5 * (1 + math.cos(math.pi * (step - w) / max(1, total - w)))


def train_mae(images, *, steps: int, batch: int = 128, lr: float = 3e-4, seed: int = 0,
              alpha: float = 0.01, record_every: int = 25, **config):
    """Train a :class:`MAE` on ``images`` (raw crops; normalised here) with Lion and a
    one-cycle schedule. Returns the model and its training record ``{"step", "loss",
    "mse", "fourier"}`` (means over each ``record_every`` steps)."""
    torch = _torch()
    images = np.asarray(images, np.float32)
    if images.ndim != 4 or len(images) < batch:
        raise ValueError(f"images must be (N, C, H, W) with N >= batch={batch}; "
                         f"got {images.shape}")
    x_all = torch.from_numpy(normalise_crops(images))
    model = build_mae(seed, channels=images.shape[1], size=images.shape[-1], **config)
    opt = Lion(model.parameters(), lr=lr)
    # batches and masks: a stream of its own, apart from the initialisation (``seed``)
    gen = torch.Generator().manual_seed(stream_int(seed, "batches and masks"))
    record = {"step": [], "loss": [], "mse": [], "fourier": []}
    acc = np.zeros(3)
    model.train()
    for step in range(steps):
        opt.lr = one_cycle(step, steps, lr)
        idx = torch.randint(0, len(x_all), (batch,), generator=gen)
        pred, target, mask = model(x_all[idx], generator=gen)
        loss, mse, four = mae_loss(pred, target, mask, model, alpha)
        opt.zero_grad()
        loss.backward()
        opt.step()
        acc += [loss.item(), mse.item(), four.item()]
        if (step + 1) % record_every == 0:
            record["step"].append(step + 1)
            for key, value in zip(("loss", "mse", "fourier"), acc / record_every):
                record[key].append(float(value))
            acc[:] = 0
    model.eval()
    return model, record


def block_embeddings(model, images, *, batch: int = 512) -> np.ndarray:
    r"""Mean-pooled tokens after every encoder block, all patches visible: $Z_b =
    \frac1T \sum_t h^{(b)}_t$ for $b = 1, \dots, \text{depth}$ (before the final norm).
    Returns (depth, N, width) float32."""
    torch = _torch()
    images = np.asarray(images, np.float32)
    if images.ndim != 4:
        raise ValueError(f"images must be (N, C, H, W); got {images.shape}")
    out = []
    with torch.no_grad():
        for start in range(0, len(images), batch):
            chunk = normalise_crops(images[start:start + batch])
            h = model.tokens(torch.from_numpy(chunk))
            per = []
            for block in model.blocks:
                h = block(h)
                per.append(h.mean(1))
            out.append(torch.stack(per).numpy())
    return np.concatenate(out, 1)


# --------------------------------------------------------------------------------------
# Step 1: curation by replicate consistency
# --------------------------------------------------------------------------------------


def _unit(x):
    return x / (np.linalg.norm(x, axis=-1, keepdims=True) + 1e-12)


def well_means(crop_embeddings, crop_well, n_wells: int) -> np.ndarray:
    """Mean of the crop embeddings of each well: (W, d)."""
    crop_embeddings = np.asarray(crop_embeddings, float)
    if len(crop_embeddings) != len(crop_well):
        raise ValueError("crop_embeddings and crop_well must have the same length")
    sums = np.zeros((n_wells, crop_embeddings.shape[1]))
    np.add.at(sums, crop_well, crop_embeddings)
    counts = np.bincount(crop_well, minlength=n_wells)
    if (counts == 0).any():
        raise ValueError("every well needs at least one crop")
    return sums / counts[:, None]


def consistency_pvalues(well_emb, well_gene, well_plate=None, *, n_null: int = 1000,
                        seed=0) -> np.ndarray:
    r"""Replicate-consistency permutation test of every perturbation.

    For gene $g$ with replicate wells $w_1, \dots, w_k$ the statistic is the mean
    pairwise cosine $s_g = \binom k2^{-1} \sum_{i<j} \cos(x_{w_i}, x_{w_j})$; its null
    is the same statistic over ``n_null`` random sets of $k$ control wells (``well_gene
    == -1``), and $p_g = (1 + \#\{s^{\mathrm{null}} \ge s_g\}) / (1 +
    n_{\mathrm{null}})$. The paper keeps a perturbation when $p < 0.01$.

    With ``well_plate`` the null mirrors the replicates' layout: one random control of
    each plate that holds a replicate. Without it, any $k$ controls; after a per-plate
    alignment that null is biased, because controls of one plate are centred on their
    own mean and so anti-correlated.

    Returns
    -------
    (G,) array of p-values, G = ``well_gene.max() + 1``.
    """
    x = _unit(np.asarray(well_emb, float))
    well_gene = np.asarray(well_gene)
    if len(x) != len(well_gene):
        raise ValueError("well_emb and well_gene must have the same length")
    plate = (np.zeros(len(x), int) if well_plate is None
             else np.asarray(well_plate))
    if len(plate) != len(x):
        raise ValueError("well_plate must have one entry per well")
    ctrl = np.flatnonzero(well_gene < 0)
    rng = np.random.default_rng(seed)
    n_genes = int(well_gene.max()) + 1
    p = np.ones(n_genes)

    def mean_pair_cos(sets):  # sets: (m, k) well indices
        v = x[sets]
        k = sets.shape[1]
        total = np.einsum("mkd,mld->m", v, v)
        return (total - k) / (k * (k - 1))

    def null_sets(plates):
        if well_plate is None:
            if len(plates) > len(ctrl):
                raise ValueError(f"{len(plates)} replicates but only {len(ctrl)} "
                                 "controls")
            return ctrl[np.argsort(rng.random((n_null, len(ctrl))), 1)[:, :len(plates)]]
        cols = []
        for k in plates:
            pool = ctrl[plate[ctrl] == k]
            if len(pool) == 0:
                raise ValueError(f"plate {k} has no control well for the null")
            cols.append(rng.choice(pool, n_null))
        return np.stack(cols, 1)

    null_cache = {}
    for g in range(n_genes):
        wells = np.flatnonzero(well_gene == g)
        if len(wells) < 2:
            continue
        key = (len(wells) if well_plate is None
               else tuple(sorted(plate[wells].tolist())))
        if key not in null_cache:
            null_cache[key] = mean_pair_cos(null_sets(sorted(plate[wells].tolist())))
        s = mean_pair_cos(wells[None])[0]
        p[g] = (1 + (null_cache[key] >= s).sum()) / (1 + n_null)
    return p


def curate(screen: Screen, pvalues, *, alpha: float = 0.01,
           control_fraction: float = 0.3,
           seed=0) -> np.ndarray:
    """Indices of the crops kept for training: every crop of the genes with $p <$
    ``alpha`` and a random ``control_fraction`` of the control wells (the paper keeps
    30% of the negative controls)."""
    if not 0 < alpha < 1 or not 0 <= control_fraction <= 1:
        raise ValueError(f"alpha in (0, 1) and control_fraction in [0, 1]; got "
                         f"{alpha}, "
                         f"{control_fraction}")
    rng = np.random.default_rng(seed)
    keep_gene = np.flatnonzero(np.asarray(pvalues) < alpha)
    ctrl = np.flatnonzero(screen.is_control)
    n_keep = int(round(control_fraction * len(ctrl)))
    keep_ctrl = rng.choice(ctrl, n_keep, replace=False)
    keep_well = np.isin(screen.well_gene, keep_gene)
    keep_well[keep_ctrl] = True
    return np.flatnonzero(keep_well[screen.crop_well])


# --------------------------------------------------------------------------------------
# Step 3: linear probes over blocks
# --------------------------------------------------------------------------------------


def probe_blocks(block_emb, labels, train, test, *, C: float = 1.0):
    r"""A logistic-regression probe per block: standardise on the training crops, fit
    $\mathrm{softmax}(W z + b)$, predict the test crops.

    Parameters
    ----------
    block_emb : (B, N, d) array, :func:`block_embeddings` (or one block with B = 1).
    labels : (N,) int array, the probe's target.
    train, test : index arrays into N (split by plate, so the probe must cross batches).

    Returns
    -------
    (B, len(test)) int array of predictions.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    block_emb = np.asarray(block_emb)
    if block_emb.ndim != 3 or block_emb.shape[1] != len(labels):
        raise ValueError(f"block_emb must be (B, N, d) with N = len(labels); got "
                         f"{block_emb.shape} and {len(labels)} labels")
    if np.intersect1d(train, test).size:
        raise ValueError("train and test crops must not overlap")
    preds = []
    for z in block_emb:
        sc = StandardScaler().fit(z[train])
        clf = LogisticRegression(C=C, max_iter=300)
        clf.fit(sc.transform(z[train]), labels[train])
        preds.append(clf.predict(sc.transform(z[test])))
    return np.array(preds)


def balanced_accuracy(pred, truth, classes=None) -> np.ndarray:
    r"""Mean over classes of the recall $\frac{1}{K}\sum_k P(\hat y = k \mid y = k)$,
    along the last axis (so a (B, n) array of predictions gives B scores)."""
    pred, truth = np.asarray(pred), np.asarray(truth)
    if pred.shape[-1] != truth.shape[-1]:
        raise ValueError("pred and truth must have the same length")
    classes = np.unique(truth) if classes is None else classes
    recalls = [((pred == k) & (truth == k)).sum(-1) / max(1, (truth == k).sum())
               for k in classes]
    return np.mean(recalls, axis=0)


def bootstrap_balanced_accuracy(pred, truth, *, n_boot: int = 1000,
                                seed=0) -> np.ndarray:
    """Balanced accuracies of (B, n) predictions on ``n_boot`` resamples of the test
    crops (the same resample for every block, so differences between blocks are paired):
    (n_boot, B)."""
    pred, truth = np.atleast_2d(pred), np.asarray(truth)
    classes = np.unique(truth)
    idx = resample_indices(len(truth), n_boot=n_boot, seed=np.random.default_rng(seed))
    t = truth[idx]  # (n_boot, n)
    hit = pred[:, idx] == t[None]  # (B, n_boot, n)
    recalls = []
    for k in classes:  # a class missing from a resample does not count
        in_k = t == k
        n_k = np.where(in_k.sum(-1) > 0, in_k.sum(-1), np.nan)
        recalls.append((hit & in_k[None]).sum(-1) / n_k[None])
    return np.nanmean(recalls, axis=0).T


# --------------------------------------------------------------------------------------
# EFAAR: align, aggregate, relate
# --------------------------------------------------------------------------------------


def centre_scale(x, ref) -> np.ndarray:
    """Standardise ``x`` with the mean and standard deviation of the rows ``ref`` (a
    bool or index array), e.g. the control wells."""
    x = np.asarray(x, float)
    mu, sd = x[ref].mean(0), x[ref].std(0)
    return (x - mu) / np.where(sd > 1e-12, sd, 1.0)


def _inv_sqrt(cov):
    w, v = np.linalg.eigh(cov)
    return (v / np.sqrt(np.maximum(w, 1e-12))) @ v.T


def tvn(x, is_control, batch, *, reg: float = 0.5) -> np.ndarray:
    r"""Typical variation normalisation on controls (Ando et al., 2017), as in EFAAR.

    1. centre-scale on all controls; 2. PCA fitted on the controls, all components;
    3. centre-scale on the controls again; 4. per batch $k$, centre on the batch's
       controls
    and whiten: $x \leftarrow (x - \mu_k)\,(\Sigma_k + r I)^{-1/2}$, with $\Sigma_k$ the
    covariance of batch $k$'s controls and $r$ = ``reg`` (0.5 in EFAAR).

    Parameters
    ----------
    x : (W, d) well embeddings. is_control : (W,) bool. batch : (W,) batch labels.
    """
    x = np.asarray(x, float)
    is_control, batch = np.asarray(is_control, bool), np.asarray(batch)
    if not (len(x) == len(is_control) == len(batch)):
        raise ValueError("x, is_control and batch must have the same length")
    if reg < 0:
        raise ValueError(f"reg must be non-negative; got {reg}")
    for b in np.unique(batch):
        if (is_control & (batch == b)).sum() < 2:
            raise ValueError(f"batch {b} needs at least two control wells for TVN")
    x = centre_scale(x, is_control)
    c = x[is_control]
    _, _, vt = np.linalg.svd(c - c.mean(0), full_matrices=False)
    x = (x - c.mean(0)) @ vt.T
    x = centre_scale(x, is_control)
    out = np.empty_like(x)
    for b in np.unique(batch):
        rows = batch == b
        ctrl = x[rows & is_control]
        cov = np.atleast_2d(np.cov(ctrl, rowvar=False)) + reg * np.eye(x.shape[1])
        out[rows] = (x[rows] - ctrl.mean(0)) @ _inv_sqrt(cov)
    return out


def aggregate(x, labels, n_labels: int) -> np.ndarray:
    """Mean of the rows of ``x`` per label ``0..n_labels-1`` (negative labels, the
    controls, are left out): one vector per gene."""
    labels = np.asarray(labels)
    keep = labels >= 0
    sums = np.zeros((n_labels, x.shape[1]))
    np.add.at(sums, labels[keep], x[keep])
    counts = np.bincount(labels[keep], minlength=n_labels)
    if (counts == 0).any():
        raise ValueError("every label needs at least one row")
    return sums / counts[:, None]


def relationship_recall(gene_emb, gene_pathway, *, lower: float = 0.05,
                        upper: float = 0.95):
    r"""Recall of the planted relationships at the tails of the cosine-similarity null.

    The null is the cosine similarity of all gene pairs; a known pair (two genes of the
    same pathway) is *recalled* when its cosine is below the ``lower`` or above the
    ``upper`` quantile of the null (EFAAR's 5/95 percentiles).

    Returns
    -------
    recall : float, the share of known pairs recalled.
    hits : (P,) bool, per known pair. pair_pathway : (P,) its pathway.
    """
    gene_pathway = np.asarray(gene_pathway)
    if len(gene_emb) != len(gene_pathway):
        raise ValueError("gene_emb and gene_pathway must have the same length")
    if not 0 <= lower < upper <= 1:
        raise ValueError(f"need 0 <= lower < upper <= 1; got {lower}, {upper}")
    u = _unit(np.asarray(gene_emb, float))
    cos = u @ u.T
    i, j = np.triu_indices(len(u), 1)
    null = cos[i, j]
    lo, hi = np.quantile(null, [lower, upper])
    known = (gene_pathway[i] == gene_pathway[j]) & (gene_pathway[i] >= 0)
    if not known.any():
        raise ValueError("no known relationships: no pathway has two genes")
    sims = null[known]
    hits = (sims <= lo) | (sims >= hi)
    return float(hits.mean()), hits, gene_pathway[i][known]


def cluster_bootstrap(hits, clusters, *, n_boot: int = 2000, seed=0) -> np.ndarray:
    """Means of ``hits`` over ``n_boot`` resamples of whole clusters (pathways), the
    unit that makes pairs dependent. ``hits`` may be (n,) or (m, n) (paired rows, the
    same resample for each). Returns (n_boot,) or (n_boot, m)."""
    hits = np.atleast_2d(np.asarray(hits, float))
    clusters = np.asarray(clusters)
    ids = np.unique(clusters)
    onehot = (clusters[None] == ids[:, None]).astype(float)  # (K, n)
    sums, counts = hits @ onehot.T, onehot.sum(1)  # (m, K), (K,)
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(ids), (n_boot, len(ids)))
    w = np.stack([np.bincount(p, minlength=len(ids)) for p in pick])  # (n_boot, K)
    out = (w @ sums.T) / (w @ counts)[:, None]
    return out[:, 0] if out.shape[1] == 1 else out


def replicate_consistency(well_emb, well_gene, *, n_random: int = 5000, seed=0):
    r"""Replicate consistency: do a gene's replicate wells agree more than random wells?

    Cosines between replicate wells of the same gene (on different plates) against
    cosines between random pairs of wells of different genes; the two-sample
    Kolmogorov-Smirnov statistic $\sup_s |F_{\mathrm{rep}}(s) - F_{\mathrm{rand}}(s)|$
    and the Cramér-von Mises statistic (scipy) measure how far apart they are. Controls
    are left out.

    Returns
    -------
    dict with ``ks``, ``cvm``, ``replicate`` and ``random`` cosines, ``rep_gene``.
    """
    from scipy.stats import cramervonmises_2samp, ks_2samp

    well_gene = np.asarray(well_gene)
    x = _unit(np.asarray(well_emb, float))
    i, j = np.triu_indices(len(x), 1)
    rep = (well_gene[i] == well_gene[j]) & (well_gene[i] >= 0)
    if not rep.any():
        raise ValueError("no gene has two replicate wells")
    rng = np.random.default_rng(seed)
    genes = np.flatnonzero(well_gene >= 0)
    a, b = rng.choice(genes, n_random), rng.choice(genes, n_random)
    ok = well_gene[a] != well_gene[b]
    a, b = a[ok], b[ok]
    rep_cos = np.einsum("nd,nd->n", x[i[rep]], x[j[rep]])
    rand_cos = np.einsum("nd,nd->n", x[a], x[b])
    return {"ks": float(ks_2samp(rep_cos, rand_cos).statistic),
            "cvm": float(cramervonmises_2samp(rep_cos, rand_cos).statistic),
            "replicate": rep_cos, "random": rand_cos, "rep_gene": well_gene[i[rep]]}


def ks_statistic(a, b) -> float:
    r"""Two-sample Kolmogorov-Smirnov statistic $\sup_s |F_a(s) - F_b(s)|$, with both
    empirical distribution functions evaluated at every point of the two samples (what
    ``scipy.stats.ks_2samp`` computes; used here inside bootstrap loops)."""
    a, b = np.sort(np.asarray(a, float)), np.sort(np.asarray(b, float))
    if a.size == 0 or b.size == 0:
        raise ValueError("ks_statistic needs two non-empty samples")
    both = np.concatenate([a, b])
    fa = np.searchsorted(a, both, side="right") / a.size
    fb = np.searchsorted(b, both, side="right") / b.size
    return float(np.abs(fa - fb).max())


def ks_bootstrap(results, *, n_boot: int = 1000, seed=0) -> np.ndarray:
    """KS statistics of :func:`replicate_consistency` results on ``n_boot`` resamples of
    the genes (the same resample for every result, so differences are paired); the
    random pairs stay fixed. Returns (n_boot, len(results))."""
    if isinstance(results, dict):
        results = [results]
    genes = np.unique(results[0]["rep_gene"])
    for r in results[1:]:
        if not np.array_equal(np.unique(r["rep_gene"]), genes):
            raise ValueError("paired results must cover the same genes")
    rng = np.random.default_rng(seed)
    by_gene = [[r["replicate"][r["rep_gene"] == g] for g in genes] for r in results]
    out = np.empty((n_boot, len(results)))
    for b in range(n_boot):
        pick = rng.integers(0, len(genes), len(genes))
        for m, (r, parts) in enumerate(zip(results, by_gene)):
            rep = np.concatenate([parts[g] for g in pick])
            out[b, m] = ks_statistic(rep, r["random"])
    return out


def evaluate_blocks(block_emb, screen: Screen, *, test_plate: int = -1,
                    n_random: int = 5000, seed=0, align: str = "tvn") -> dict:
    r"""The block search and the map benchmarks for every block of one model.

    Per block $b$: a pathway probe trained on the crops of the other plates and scored
    on ``test_plate`` by balanced accuracy (pathway genes only: the probe's target is
    the gene's functional group); then well means, alignment (``"tvn"``, or
    ``"centre"``: centre-scale on all controls, no per-batch step), gene means,
    relationship recall at 5/95 and replicate consistency.

    Returns
    -------
    dict with ``pred`` (B, n_test), ``truth``, ``acc`` (B,), ``recall`` (B,), ``hits``
    (B, P), ``pair_pathway``, ``ks``, ``cvm`` (B,), ``consistency`` (list of B results).
    """
    block_emb = np.asarray(block_emb)
    if block_emb.ndim != 3 or block_emb.shape[1] != len(screen.crop_well):
        raise ValueError("block_emb must be (B, N, d) over the screen's crops")
    if align not in ("tvn", "centre"):
        raise ValueError(f"align must be 'tvn' or 'centre'; got {align!r}")
    plates = np.unique(screen.well_plate)
    test_plate = plates[test_plate]
    gene = screen.crop_gene
    label = screen.gene_pathway[np.maximum(gene, 0)]
    usable = np.flatnonzero((gene >= 0) & (label >= 0))
    test = usable[screen.crop_plate[usable] == test_plate]
    train = usable[screen.crop_plate[usable] != test_plate]
    out = {"pred": probe_blocks(block_emb, label, train, test), "truth": label[test]}
    out["acc"] = balanced_accuracy(out["pred"], out["truth"])
    n_wells, n_genes = len(screen.well_gene), len(screen.gene_pathway)
    recall, hits, ks, cvm, cons = [], [], [], [], []
    for z in block_emb:
        wells = well_means(z, screen.crop_well, n_wells)
        if align == "tvn":
            wells = tvn(wells, screen.is_control, screen.well_plate)
        else:
            wells = centre_scale(wells, screen.is_control)
        r, h, pw = relationship_recall(aggregate(wells, screen.well_gene, n_genes),
                                       screen.gene_pathway)
        c = replicate_consistency(wells, screen.well_gene, n_random=n_random, seed=seed)
        recall.append(r)
        hits.append(h)
        ks.append(c["ks"])
        cvm.append(c["cvm"])
        cons.append(c)
    out.update(recall=np.array(recall), hits=np.array(hits), pair_pathway=pw,
               ks=np.array(ks), cvm=np.array(cvm), consistency=cons)
    return out


def pixel_pca(fit_images, images, n_components: int) -> np.ndarray:
    """The pixel-PCA baseline: PCA (scikit-learn) of the normalised, flattened crops
    fitted on ``fit_images``; the scores of ``images``."""
    from sklearn.decomposition import PCA

    def flat(a):
        return normalise_crops(np.asarray(a, np.float32)).reshape(len(a), -1)

    pca = PCA(n_components, random_state=0).fit(flat(fit_images))
    return pca.transform(flat(images))


# --------------------------------------------------------------------------------------
# The committed models
# --------------------------------------------------------------------------------------

#: The pre-training screen (a different draw of genes and plates than any evaluation
#: screen).
TRAIN_SCREEN = dict(n_pathways=16, pathway_size=4, n_null=64, n_plates=6,
                    controls_per_plate=12, crops_per_well=12)
#: Training of each model: equal steps for curated and uncurated data.
TRAINING = dict(steps=500, batch=128, lr=3e-4, depth=6, heads=4, patch=4)
#: Widths: the main model and the scaling series.
MAIN_WIDTH = 64
WIDTHS = (32, 64)


def train_seed(seed: int, training: dict = TRAINING, screen_config: dict = TRAIN_SCREEN,
               widths=WIDTHS, log=print) -> dict:
    """Everything one training seed makes: the uncurated model (which also curates, like
    the paper's earlier MAE), the curation p-values and the curated models at every
    width.
    Returns ``{"uncurated": (state, record), "curated_<w>": ..., "pvalues": ...}``."""
    screen = make_screen(**screen_config, seed=stream(seed, "pre-training screen"))
    cfg = {k: v for k, v in training.items() if k not in ("steps", "batch", "lr")}
    kw = dict(steps=training["steps"], batch=training["batch"], lr=training["lr"])
    out = {}
    t0 = time.perf_counter()
    model, rec = train_mae(screen.images, seed=seed, width=MAIN_WIDTH, **kw, **cfg)
    out["uncurated"] = (model.state_dict(), rec)
    log(f"seed {seed}: uncurated trained ({time.perf_counter() - t0:.0f} s)")
    emb = block_embeddings(model, screen.images)[-1]
    wells = well_means(emb, screen.crop_well, len(screen.well_gene))
    # centre-scaled on the controls: per-plate whitening with a dozen controls per plate
    # in 64 dimensions is degenerate (the controls, fitted in sample, would look less
    # alike than any other wells, and null genes would pass the test)
    wells = centre_scale(wells, screen.is_control)
    p = consistency_pvalues(wells, screen.well_gene, screen.well_plate,
                            seed=stream(seed, "curation null"))
    keep = curate(screen, p, seed=stream(seed, "curation controls"))
    out["pvalues"] = p
    out["gene_pathway"] = screen.gene_pathway
    out["kept_crops"] = int(len(keep))
    out["n_crops"] = int(len(screen.images))
    for w in widths:
        model, rec = train_mae(screen.images[keep], seed=seed, width=w, **kw, **cfg)
        out[f"curated_{w}"] = (model.state_dict(), rec)
        log(f"seed {seed}: curated width {w} trained "
            f"({time.perf_counter() - t0:.0f} s)")
    return out


#: The committed models (:func:`load_models`): training seed 0 only (three models), made
#: by :data:`TRAIN_COMMAND` (``--seeds N`` trains seeds 0..N-1).
CHECKPOINT = "microscopy_mae/models.pt"
TRAIN_COMMAND = "python -m icml25.microscopy_mae train data/microscopy_mae/models.pt"


def save_checkpoint(path, seeds=range(5), jobs: int = 1) -> str:
    """Train every seed (in ``jobs`` processes) and save the models in float16 with
    their training records and curation outcome (:func:`icml25.common.checkpoints.save`;
    per seed, ``records[seed]`` holds each model's record and ``"curation"``: the
    p-values, ``gene_pathway``, ``kept_crops``, ``n_crops``). Returns the file's sha256."""
    torch = _torch()
    seeds = [int(s) for s in seeds]
    results = map_seeds(_train_one_thread, seeds, jobs)
    weights, records = {}, {}
    for s, res in zip(seeds, results):
        weights[s] = {n: checkpoints.half(v[0]) for n, v in res.items()
                      if isinstance(v, tuple)}
        records[s] = {n: v[1] for n, v in res.items() if isinstance(v, tuple)}
        records[s]["curation"] = {
            n: torch.from_numpy(np.array(v)) if isinstance(v, np.ndarray) else v
            for n, v in res.items() if not isinstance(v, tuple)}
    config = {"training": dict(TRAINING), "screen": dict(TRAIN_SCREEN),
              "widths": tuple(WIDTHS), "main_width": MAIN_WIDTH}
    return checkpoints.save(path, config=config, seeds=weights, records=records)


def _train_one_thread(seed):
    torch = _torch()
    torch.set_num_threads(1)
    return train_seed(seed)


def load_models(seed: int, name: str = "models.pt"):
    """The committed models of training seed ``seed``: ``(models, info)`` with
    ``models[name] = (MAE, record)`` for ``uncurated`` and ``curated_<width>``, and
    ``info`` holding the curation p-values and the training config. The committed file
    holds seed 0 only (the chapter loads it whatever its run's seed); another seed is an
    error naming :data:`TRAIN_COMMAND`."""
    from icml25.common import data

    ckpt = checkpoints.load(data.path(f"microscopy_mae/{name}"))
    state = checkpoints.seed_state(ckpt, seed, TRAIN_COMMAND)
    blob, records = ckpt.config, ckpt.records[seed]
    info = {k: v.numpy() if hasattr(v, "numpy") else v
            for k, v in records["curation"].items()}
    cfg = {k: v for k, v in blob["training"].items()
           if k not in ("steps", "batch", "lr")}
    models = {}
    for key, weights in state.items():
        width = blob["main_width"] if key == "uncurated" else int(key.split("_")[1])
        model = build_mae(0, width=width, **cfg)
        model.load_state_dict({k: v.float() for k, v in weights.items()})
        model.eval()
        models[key] = (model, records[key])
    info.update(training=blob["training"], screen=blob["screen"], widths=blob["widths"],
                main_width=blob["main_width"], model_seed=seed)
    return models, info


def main(argv=None) -> None:  # pragma: no cover
    """``python -m icml25.microscopy_mae train data/microscopy_mae/models.pt``."""
    train_command("python -m icml25.microscopy_mae", save_checkpoint, seeds=1, argv=argv)


if __name__ == "__main__":  # pragma: no cover
    main()
