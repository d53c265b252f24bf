r"""The network and the two diffusions: :class:`UnifiedNet`, the schedules, the objective.

The image is denoised by DDPM (cosine schedule, $T=200$, $\varepsilon$-MSE), the sequence
by OA-ARDM (masked cross-entropy averaged over masked positions); :func:`unified_loss`
switches between them per sample, as the official code does.
"""

from __future__ import annotations

import numpy as np

from .cells import AMINO, MASK, Cells

__all__ = ["T_TRAIN", "UnifiedNet", "add_noise", "denoise_step", "oaardm_mask", "scheduler",
           "unified_loss"]

T_TRAIN = 200


def _torch():
    import torch

    return torch


def _nn():
    return _torch().nn


class _Block(_nn().Module):
    """A DiT block: attention and MLP, each modulated by the timestep (adaLN-zero)."""

    def __init__(self, d: int, heads: int):
        nn = _nn()
        super().__init__()
        self.norm1 = nn.LayerNorm(d, elementwise_affine=False)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(d, elementwise_affine=False)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.ada = nn.Linear(d, 6 * d)
        nn.init.zeros_(self.ada.weight)
        nn.init.zeros_(self.ada.bias)

    def forward(self, h, c):
        s1, b1, g1, s2, b2, g2 = self.ada(c).unsqueeze(1).chunk(6, -1)
        x = self.norm1(h) * (1 + s1) + b1
        h = h + g1 * self.attn(x, x, x, need_weights=False)[0]
        return h + g2 * self.mlp(self.norm2(h) * (1 + s2) + b2)


class UnifiedNet(_nn().Module):
    r"""One bidirectional transformer over [image patch tokens ; residue tokens].

    Image tokens: 4x4 patches of [noisy protein $x_t$, nucleus, cell]; residue tokens: an
    embedding of 21 symbols (20 amino acids, mask); learned positions and a token-type
    embedding; the timestep $t$ enters every block by adaLN-zero. Heads: image tokens to
    $\varepsilon_\theta$ (or, for the regression baseline, the image itself), residue
    tokens to 20 amino-acid logits. ``use_sequence=False`` drops the residue tokens.
    """

    def __init__(self, size: int = 16, seq_len: int = 24, d: int = 64, depth: int = 4,
                 heads: int = 4, patch: int = 4, use_sequence: bool = True):
        nn, torch = _nn(), _torch()
        super().__init__()
        if size % patch:
            raise ValueError(f"size {size} is not a multiple of the patch {patch}")
        self.size, self.patch, self.d, self.seq_len = size, patch, d, seq_len
        self.use_sequence = use_sequence
        n_img = (size // patch) ** 2
        self.embed_img = nn.Conv2d(3, d, patch, stride=patch)
        self.pos_img = nn.Parameter(0.02 * torch.randn(1, n_img, d))
        self.embed_seq = nn.Embedding(MASK + 1, d)
        self.pos_seq = nn.Parameter(0.02 * torch.randn(1, seq_len, d))
        # a small convolutional residue encoder gives each token its neighbourhood (the
        # k-mers a motif is made of); it stands in for the frozen protein language model
        self.seq_conv = nn.Sequential(nn.Conv1d(d, d, 5, padding=2), nn.GELU(),
                                      nn.Conv1d(d, d, 5, padding=2))
        self.token_type = nn.Embedding(2, d)
        self.time = nn.Sequential(nn.Linear(d, d), nn.SiLU(), nn.Linear(d, d))
        self.blocks = nn.ModuleList(_Block(d, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(d, elementwise_affine=False)
        self.ada = nn.Linear(d, 2 * d)
        nn.init.zeros_(self.ada.weight)
        nn.init.zeros_(self.ada.bias)
        # patch features back to pixels, then a small convolution that sees the input
        # pixels too (cheap at 16x16, and it unblocks the 4x4 patch grid)
        self.out_img = nn.Linear(d, patch * patch * 8)
        self.refine = nn.Sequential(nn.Conv2d(11, 32, 3, padding=1), nn.SiLU(),
                                    nn.Conv2d(32, 1, 3, padding=1))
        self.out_seq = nn.Linear(d, len(AMINO))

    def _time_embedding(self, t):
        torch = _torch()
        half = self.d // 2
        freq = torch.exp(-np.log(1000.0) * torch.arange(half) / half)
        arg = t.float()[:, None] * freq[None]
        return self.time(torch.cat([arg.sin(), arg.cos()], 1))

    def forward(self, x_t, morphology, sequence, t):
        """``x_t`` (B,1,H,W), ``morphology`` (B,2,H,W), ``sequence`` (B,L) tokens, ``t`` (B,)
        -> (image output (B,1,H,W), residue logits (B,L,20) or None)."""
        torch = _torch()
        b = x_t.shape[0]
        h = self.embed_img(torch.cat([x_t, morphology], 1)).flatten(2).transpose(1, 2)
        parts = [h + self.pos_img + self.token_type.weight[0]]
        if self.use_sequence:
            e = self.embed_seq(sequence)
            e = e + self.seq_conv(e.transpose(1, 2)).transpose(1, 2)
            parts.append(e + self.pos_seq + self.token_type.weight[1])
        h = torch.cat(parts, 1)
        c = self._time_embedding(t)
        for block in self.blocks:
            h = block(h, c)
        shift, scale = self.ada(c).unsqueeze(1).chunk(2, -1)
        h = self.norm(h) * (1 + scale) + shift
        n_img = self.pos_img.shape[1]
        g, p = self.size // self.patch, self.patch
        img = self.out_img(h[:, :n_img]).reshape(b, g, g, p, p, 8)
        img = img.permute(0, 5, 1, 3, 2, 4).reshape(b, 8, self.size, self.size)
        img = self.refine(torch.cat([img, x_t, morphology], 1))
        logits = self.out_seq(h[:, n_img:]) if self.use_sequence else None
        return img, logits


def scheduler(kind: str = "ddpm"):
    """``diffusers``' DDPM or DDIM scheduler with the paper's settings: 200 training steps,
    the cosine (``squaredcos_cap_v2``) schedule, epsilon prediction."""
    import warnings

    with warnings.catch_warnings():  # diffusers imports tqdm.auto, which warns in Jupyter
        warnings.filterwarnings("ignore", message="IProgress not found")
        from diffusers import DDIMScheduler, DDPMScheduler

    cls = {"ddpm": DDPMScheduler, "ddim": DDIMScheduler}.get(kind)
    if cls is None:
        raise ValueError(f"kind must be 'ddpm' or 'ddim'; got {kind!r}")
    return cls(num_train_timesteps=T_TRAIN, beta_schedule="squaredcos_cap_v2",
               prediction_type="epsilon", clip_sample=True)


def _root(v):
    # diffusers takes these roots as float32 ``** 0.5``, which is MKL's vector root: not
    # correctly rounded, and rounded differently on Intel and AMD CPUs under every MKL branch
    # (the numerics probe). The book's root is correctly rounded on any CPU.
    from icml25.common.optim import sqrt

    return sqrt(v)


def add_noise(sched, x0, noise, t):
    r"""The forward process in one draw, $x_t = \sqrt{\bar\alpha_t}\,x_0
    + \sqrt{1-\bar\alpha_t}\,\varepsilon$, with $\bar\alpha_t$ from the scheduler ``sched``:
    ``sched.add_noise`` operation for operation, but with correctly rounded roots."""
    abar = sched.alphas_cumprod[t].to(x0.dtype)
    shape = (-1,) + (1,) * (x0.dim() - 1)
    return _root(abar).view(shape) * x0 + _root(1 - abar).view(shape) * noise


def denoise_step(sched, eps, t: int, x, generator=None):
    r"""One reverse step from $x_t$ to $x_{t'}$ given the predicted noise
    $\hat\varepsilon$, as ``sched.step`` computes it for ``diffusers``' DDIM ($\eta = 0$) or
    DDPM scheduler (clipped $\hat x_0$, the "fixed small" variance), with correctly rounded roots.

    With $\hat x_0 = \mathrm{clip}\big((x_t - \sqrt{1-\bar\alpha_t}\,\hat\varepsilon) /
    \sqrt{\bar\alpha_t}, -1, 1\big)$: DDIM moves deterministically,
    $x_{t'} = \sqrt{\bar\alpha_{t'}}\,\hat x_0 + \sqrt{1-\bar\alpha_{t'}}\,\hat\varepsilon$;
    DDPM ($t' = t - 1$) draws from the posterior,
    $x_{t-1} = \frac{\sqrt{\bar\alpha_{t-1}}\beta_t}{1-\bar\alpha_t}\hat x_0
    + \frac{\sqrt{\alpha_t}(1-\bar\alpha_{t-1})}{1-\bar\alpha_t}x_t + \sigma_t z$,
    $\sigma_t^2 = \frac{1-\bar\alpha_{t-1}}{1-\bar\alpha_t}\beta_t$, $z$ drawn from
    ``generator`` for $t > 0$ ($\bar\alpha_{t'} = 1$ before the first step)."""
    torch = _torch()
    from diffusers import DDIMScheduler

    t = int(t)
    ddim = isinstance(sched, DDIMScheduler)
    prev = t - sched.config.num_train_timesteps // sched.num_inference_steps
    abar = sched.alphas_cumprod
    a_t = abar[t]
    a_prev = abar[prev] if prev >= 0 else (sched.final_alpha_cumprod if ddim else sched.one)
    b_t = 1 - a_t
    x0 = ((x - _root(b_t) * eps) / _root(a_t)).clamp(-1, 1)
    if ddim:
        return _root(a_prev) * x0 + _root(1 - a_prev) * eps
    b_prev = 1 - a_prev
    alpha = a_t / a_prev
    beta = 1 - alpha
    out = (_root(a_prev) * beta) / b_t * x0 + _root(alpha) * b_prev / b_t * x
    if t > 0:
        z = torch.randn(eps.shape, generator=generator, dtype=eps.dtype)
        out = out + _root(torch.clamp(b_prev / b_t * beta, min=1e-20)) * z
    return out


def oaardm_mask(batch: int, length: int, generator) -> object:
    r"""OA-ARDM masking: per row draw $t\sim U\{1..D\}$ and a random order $\sigma$; mask
    the $D-t+1$ positions with $\sigma\ge t$. Returns a (batch, length) bool tensor with
    1 to ``length`` masked positions per row."""
    torch = _torch()
    if batch < 1 or length < 1:
        raise ValueError(f"batch and length must be positive; got {batch}, {length}")
    t = torch.randint(1, length + 1, (batch, 1), generator=generator)
    order = torch.rand(batch, length, generator=generator).argsort(1).argsort(1)
    return order >= t - 1  # sigma in 0..D-1: positions of rank >= t-1 are masked


def _to_model(cells: Cells):
    torch = _torch()
    x0 = torch.from_numpy(2 * cells.protein[:, None] - 1)
    morph = torch.from_numpy(2 * cells.morphology - 1)
    return x0, morph, torch.from_numpy(cells.sequences)


def unified_loss(model, x0, morph, seq, generator, sched, p_image: float = 0.5):
    r"""The paper's alternating objective on one batch: each sample is an image sample
    with probability ``p_image`` ($t\sim U\{0..199\}$, sequence visible, $\varepsilon$-MSE)
    or a sequence sample ($t=0$, OA-ARDM masking, cross-entropy averaged over the masked
    positions). Returns (total, image loss, sequence loss); total = image + sequence."""
    torch = _torch()
    b = x0.shape[0]
    is_img = torch.rand(b, generator=generator) < p_image
    t = torch.randint(0, T_TRAIN, (b,), generator=generator)
    t = torch.where(is_img, t, torch.zeros_like(t))
    noise = torch.randn(x0.shape, generator=generator)
    x_t = add_noise(sched, x0, noise, t)
    masked = oaardm_mask(b, seq.shape[1], generator) & ~is_img[:, None]
    seq_in = torch.where(masked, torch.full_like(seq, MASK), seq)
    eps, logits = model(x_t, morph, seq_in, t)
    zero = x0.new_zeros(())
    img_loss = ((eps - noise) ** 2).mean((1, 2, 3))[is_img].mean() if is_img.any() else zero
    if logits is None or not (~is_img).any():
        return img_loss, img_loss, zero
    ce = torch.nn.functional.cross_entropy(logits.transpose(1, 2), seq, reduction="none")
    per_seq = (ce * masked).sum(1) / masked.sum(1).clamp(min=1)
    seq_loss = per_seq[~is_img].mean()
    return img_loss + seq_loss, img_loss, seq_loss

