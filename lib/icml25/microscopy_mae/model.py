r"""The model: a small ViT masked autoencoder, its loss, the Lion optimiser, training and
block-by-block embeddings."""

from __future__ import annotations

import math

import numpy as np

from icml25.common.streams import stream_int

from .screen import normalise_crops

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
    r"""Mean absolute difference of the 2-D Fourier magnitudes, per channel: :math:`\frac{1}{N
    C H W}\sum \big|\,|\mathcal F(\hat x)| - |\mathcal F(x)|\,\big|` (the paper's
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
