"""The backbone, a small FOMM-style keypoint animator, and its training.

Unsupervised keypoints by soft-argmax, a dense motion from keypoint translations mixed by soft
masks with an occlusion map, a feature-warping generator; trained on same-video pairs with a
pyramid L1, FOMM's equivariance loss, a keypoint separation loss and, optionally, the
reconstructed bidirectional constraints of the paper. Also the evaluation's pose detector.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from icml25.common.optim import Adam, cosine

from .data import N_JOINTS, SIZE, _rng, joints


def grid(h: int, w: int):
    """Pixel-centre coordinates ``(h, w, 2)`` in $[-1,1]$ (x, y), as ``grid_sample`` reads them."""
    ys = (torch.arange(h, dtype=torch.float32) + 0.5) / h * 2 - 1
    xs = (torch.arange(w, dtype=torch.float32) + 0.5) / w * 2 - 1
    return torch.stack(torch.meshgrid(xs, ys, indexing="xy"), -1)


def soft_argmax(logits, temperature: float = 0.1):
    r"""Keypoints ``(B, K, 2)`` from heatmap logits ``(B, K, H, W)``: the expectation of the
    pixel coordinates under $\mathrm{softmax}(h/\tau)$ over each map (FOMM's detector)."""
    if logits.dim() != 4:
        raise ValueError(f"logits must be (B, K, H, W), got {tuple(logits.shape)}")
    b, k, h, w = logits.shape
    p = torch.softmax(logits.reshape(b, k, -1) / temperature, -1)
    return p @ grid(h, w).reshape(-1, 2)


def gaussian_maps(kp, h: int, w: int, variance: float = 0.01):
    r"""$\exp(-\lVert z-k\rVert^2/2\sigma^2)$ for every keypoint: ``(B, K, h, w)``."""
    d = grid(h, w)[None, None] - kp[:, :, None, None]
    return (-0.5 * (d ** 2).sum(-1) / variance).exp()


def _conv(nn, c_in, c_out, stride=1):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride, 1), nn.GroupNorm(4, c_out),
                         nn.LeakyReLU(0.2))




class Hourglass(nn.Module):
    """32x32 -> features at 16x16 through an 8x8 bottleneck."""

    def __init__(self, c_in, width):
        super().__init__()
        self.d1 = _conv(nn, c_in, width, 2)          # 16
        self.d2 = _conv(nn, width, 2 * width, 2)     # 8
        self.mid = _conv(nn, 2 * width, 2 * width)
        self.u1 = _conv(nn, 3 * width, width)        # back at 16, with the skip

    def forward(self, x):
        a = self.d1(x)
        b = self.mid(self.d2(a))
        b = F.interpolate(b, scale_factor=2, mode="bilinear", align_corners=False)
        return self.u1(torch.cat([b, a], 1))


class KeypointDetector(nn.Module):
    """Unsupervised keypoints: hourglass features, K heatmaps at 16x16, soft-argmax."""

    def __init__(self, n_kp=6, width=16, temperature=0.1, c_in=3):
        super().__init__()
        self.net = Hourglass(c_in, width)
        self.head = nn.Conv2d(width, n_kp, 3, padding=1)
        self.temperature = temperature

    def forward(self, x):
        return soft_argmax(self.head(self.net(x)), self.temperature)


class DenseMotion(nn.Module):
    r"""Soft masks over K+1 candidate motions (K keypoint translations and the identity
    for the background) and an occlusion map, from the heatmap differences and the
    source warped by each candidate (FOMM's dense motion network, zeroth order)."""

    def __init__(self, n_kp=6, width=16):
        super().__init__()
        c_in = (n_kp + 1) * 4
        self.net = Hourglass(c_in, width)
        self.mask = nn.Conv2d(width, n_kp + 1, 3, padding=1)
        self.occlusion = nn.Conv2d(width, 1, 3, padding=1)

    def forward(self, source, kp_s, kp_d):
        # the motion is estimated at half resolution (FOMM: a quarter) and upsampled
        b, _, H, W = source.shape
        small = F.avg_pool2d(source, 2)
        h, w = small.shape[-2:]
        z = grid(h, w)[None, None]                                  # (1,1,h,w,2)
        # candidate backward flows T_k(z) = z - k_D + k_S; index 0 is the identity
        shift = torch.cat([torch.zeros_like(kp_s[:, :1]), kp_s - kp_d], 1)
        cand = z + shift[:, :, None, None]                          # (B,K+1,h,w,2)
        heat = gaussian_maps(kp_d, h, w) - gaussian_maps(kp_s, h, w)
        heat = torch.cat([torch.zeros_like(heat[:, :1]), heat], 1)[:, :, None]
        k1 = cand.shape[1]
        warped = F.grid_sample(small.repeat_interleave(k1, 0),
                               cand.reshape(b * k1, h, w, 2), align_corners=False,
                               padding_mode="border").reshape(b, k1, 3, h, w)
        feat = self.net(torch.cat([heat, warped], 2).reshape(b, -1, h, w))
        feat = F.interpolate(feat, size=(h, w), mode="bilinear", align_corners=False)
        mask = torch.softmax(self.mask(feat), 1)                    # (B,K+1,h,w)
        # upsample the displacement, not the sampling grid, so that no motion stays exact
        move = (mask[..., None] * (cand - z)).sum(1).permute(0, 3, 1, 2)
        move = F.interpolate(move, size=(H, W), mode="bilinear", align_corners=False)
        flow = grid(H, W)[None] + move.permute(0, 2, 3, 1)
        occlusion = F.interpolate(torch.sigmoid(self.occlusion(feat)), size=(H, W),
                                  mode="bilinear", align_corners=False)
        return flow, occlusion, mask


class Generator(nn.Module):
    r"""Encode the source, warp its features with the dense flow, weight them by the
    occlusion map, decode: $\hat D=o\,(S\circ\mathcal T)+(1-o)\,\mathrm{dec}(\cdot)$, the
    warped source where it is visible and the decoder's inpainting where it is not."""

    def __init__(self, width=16):
        super().__init__()
        self.enc = nn.Sequential(_conv(nn, 3, width), _conv(nn, width, 2 * width, 2))
        self.res = nn.Sequential(_conv(nn, 2 * width, 2 * width),
                                 _conv(nn, 2 * width, 2 * width))
        self.dec = _conv(nn, 2 * width + 4, width)
        self.out = nn.Conv2d(width, 3, 3, padding=1)

    def forward(self, source, flow, occlusion):
        feat = self.enc(source)
        small = F.interpolate(flow.permute(0, 3, 1, 2), size=feat.shape[-2:],
                              mode="bilinear", align_corners=False).permute(0, 2, 3, 1)
        occ_small = F.interpolate(occlusion, size=feat.shape[-2:], mode="bilinear",
                                  align_corners=False)
        feat = self.res(F.grid_sample(feat, small, align_corners=False,
                                      padding_mode="border") * occ_small)
        feat = F.interpolate(feat, size=source.shape[-2:], mode="bilinear",
                             align_corners=False)
        warped = F.grid_sample(source, flow, align_corners=False, padding_mode="border")
        x = self.dec(torch.cat([feat, warped * occlusion, occlusion], 1))
        # where the source is visible the warped pixels pass through, keeping them sharp;
        # the decoder fills in what the occlusion map marks as not visible
        return occlusion * warped + (1 - occlusion) * torch.sigmoid(self.out(x))


class Animator(nn.Module):
    """Keypoint detector + dense motion + generator: ``animate(S, k_S, k_D)``."""

    def __init__(self, n_kp=6, width=16):
        super().__init__()
        self.detector = KeypointDetector(n_kp, width)
        self.motion = DenseMotion(n_kp, width)
        self.generator = Generator(width)

    def animate(self, source, kp_s, kp_d):
        flow, occlusion, _ = self.motion(source, kp_s, kp_d)
        return self.generator(source, flow, occlusion)

    def forward(self, source, driving):
        return self.animate(source, self.detector(source), self.detector(driving))


class PoseDetector(nn.Module):
    """The evaluation's external keypoint detector, trained with the ground-truth joints
    (as FOMM's AKD uses a pretrained landmark or pose detector)."""

    def __init__(self, width=16):
        super().__init__()
        self.detector = KeypointDetector(N_JOINTS, width, temperature=0.05)

    def forward(self, x):
        return self.detector(x)


def to_pixels(kp, size: int = SIZE) -> np.ndarray:
    """Keypoints from $[-1,1]$ to pixel coordinates (x, y in $[0, \\text{size}]$)."""
    return (np.asarray(kp, float) + 1) / 2 * size


def to_unit(kp, size: int = SIZE) -> np.ndarray:
    """Keypoints from pixel coordinates to $[-1,1]$."""
    return np.asarray(kp, float) / size * 2 - 1


def random_affine(b: int, generator, sigma: float = 0.1):
    r"""Random affine maps $A z + a$ ``(b, 2, 3)`` near the identity (FOMM's equivariance
    transform, without its thin-plate part): $A=I+\epsilon$, $\epsilon,a\sim N(0,\sigma^2)$."""
    theta = torch.randn(b, 2, 3, generator=generator) * sigma
    theta[:, :, :2] += torch.eye(2)
    return theta


def equivariance_loss(detector, x, generator, sigma: float = 0.1):
    r"""FOMM's equivariance: with $T$ a random affine map applied as a backward warp,
    $y(z)=x(Tz)$, the keypoints must satisfy $T\,k(y)=k(x)$; $L_1$ mean of the mismatch."""
    import torch.nn.functional as F

    theta = random_affine(len(x), generator, sigma)
    g = F.affine_grid(theta, list(x.shape), align_corners=False)
    y = F.grid_sample(x, g, align_corners=False, padding_mode="border")
    kx, ky = detector(x), detector(y)
    mapped = ky @ theta[:, :, :2].transpose(1, 2) + theta[:, None, :, 2]
    return (mapped - kx).abs().mean()


def separation_loss(kp, sigma: float = 0.15):
    r"""Keeps keypoints apart: $\operatorname{mean}_{k\ne l}\exp(-\lVert k_k-k_l\rVert^2/
    2\sigma^2)$ (Zhang et al., 2018). Without it every keypoint can sit on the sprite's
    centroid, which is equivariant and explains the global translation, but nothing else."""
    d2 = ((kp[:, :, None] - kp[:, None]) ** 2).sum(-1)
    k = kp.shape[1]
    off = ~torch.eye(k, dtype=torch.bool)
    return (-d2 / (2 * sigma ** 2)).exp()[:, off].mean()


def pyramid_l1(a, b, scales=(1, 2)):
    """Mean absolute error at full resolution and at half resolution (average pooled), the
    cheap stand-in for a perceptual pyramid."""
    import torch.nn.functional as F

    return sum((F.avg_pool2d(a, s) - F.avg_pool2d(b, s)).abs().mean() if s > 1
               else (a - b).abs().mean() for s in scales)


def bidirectional_loss(model, source, driving, t):
    r"""The reconstructed bidirectional constraints on the interpolated images.

    With $k_t=(1-t)k_S+tk_D$: forward $I_t=G(S,k_S\to k_t)$, backward
    $I'_t=G(D,k_D\to k_t)$ (the same pose reached from the other end). No real $I_t$
    exists, so the constraints are (i) both chains reconstruct their far end,
    $G(I_t, k(I_t)\to k_D)\approx D$ and $G(I'_t, k(I'_t)\to k_S)\approx S$; (ii) the two
    interpolations agree, $I_t\approx I'_t$; (iii) the interpolation lands on its keypoints,
    $k(I_t)\approx k_t\approx k(I'_t)$. Returns the four terms (pyramid $L_1$ for images,
    $L_1$ for keypoints); the paper's ViT-feature losses are replaced by the pyramid $L_1$.
    """
    kp_s, kp_d = model.detector(source), model.detector(driving)
    tt = t.reshape(-1, 1, 1)
    kp_t = (1 - tt) * kp_s + tt * kp_d
    fwd = model.animate(source, kp_s, kp_t)
    bwd = model.animate(driving, kp_d, kp_t)
    k_fwd, k_bwd = model.detector(fwd), model.detector(bwd)
    chain = pyramid_l1(model.animate(fwd, k_fwd, kp_d), driving) + pyramid_l1(
        model.animate(bwd, k_bwd, kp_s), source)
    agree = pyramid_l1(fwd, bwd)
    kp = (k_fwd - kp_t).abs().mean() + (k_bwd - kp_t).abs().mean()
    return dict(chain=chain, agree=agree, keypoints=kp)


def _pairs(frames, rng, batch):
    v = rng.integers(0, frames.shape[0], batch)
    a, b = rng.integers(0, frames.shape[1], (2, batch))
    return frames[v, a], frames[v, b]


def train_animator(model, frames, *, steps: int, batch_size: int = 16, lr: float = 2e-3,
                   equivariance: float = 10.0, separation: float = 1.0,
                   bidirectional: float = 0.0, seed=0,
                   log_every: int = 10) -> dict:
    r"""Train on random frame pairs of the same video (FOMM's self-supervision).

    Loss per step: pyramid $L_1(G(S,k_S\to k_D),D)$ + ``equivariance`` $\times$ the
    keypoint equivariance of both frames + ``separation`` $\times$ their keypoint
    separation (:func:`separation_loss`) + ``bidirectional`` $\times$ the sum of the terms
    of :func:`bidirectional_loss` at $t\sim U(0.2,0.8)$. Adam; the learning rate falls by
    cosine to a tenth. Returns ``{"step", "loss", "recon"}`` recorded every ``log_every``.
    """
    if steps < 1 or batch_size < 1:
        raise ValueError(f"steps and batch_size must be positive; got {steps}, {batch_size}")
    rng = _rng(seed)
    gen = torch.Generator().manual_seed(int(rng.integers(2**31)))
    opt = Adam(model.parameters(), lr=lr)
    frames = torch.as_tensor(frames)
    hist = dict(step=[], loss=[], recon=[])
    run_loss = run_rec = 0.0
    model.train()
    for step in range(1, steps + 1):
        s, d = _pairs(frames, rng, batch_size)
        kp_s, kp_d = model.detector(s), model.detector(d)
        recon = pyramid_l1(model.animate(s, kp_s, kp_d), d)
        loss = recon + equivariance * (equivariance_loss(model.detector, s, gen)
                                       + equivariance_loss(model.detector, d, gen)) / 2
        if separation > 0:
            loss = loss + separation * (separation_loss(kp_s) + separation_loss(kp_d)) / 2
        if bidirectional > 0:
            t = torch.rand(batch_size, generator=gen) * 0.6 + 0.2
            loss = loss + bidirectional * sum(bidirectional_loss(model, s, d, t).values())
        opt.zero_grad()
        loss.backward()
        opt.lr = cosine(step - 1, steps, lr, eta_min=lr / 10)  # torch's CosineAnnealingLR
        opt.step()
        run_loss += loss.item()
        run_rec += recon.item()
        if step % log_every == 0:
            hist["step"].append(step)
            hist["loss"].append(run_loss / log_every)
            hist["recon"].append(run_rec / log_every)
            run_loss = run_rec = 0.0
    model.eval()
    return hist


def train_pose_detector(model, frames, poses, identity, *, steps: int, batch_size: int = 32,
                        lr: float = 3e-3, seed=0, log_every: int = 10) -> dict:
    """Supervised training of the evaluation detector on ground-truth joints ($L_1$ in
    $[-1,1]$ coordinates)."""
    rng = _rng(seed)
    x = torch.as_tensor(frames.reshape(-1, 3, SIZE, SIZE))
    length = np.repeat(identity["length"], frames.shape[1], 0)
    y = torch.as_tensor(to_unit(joints(poses.reshape(-1, 6), length)), dtype=torch.float32)
    opt = Adam(model.parameters(), lr=lr)
    hist = dict(step=[], loss=[])
    run = 0.0
    model.train()
    for step in range(1, steps + 1):
        i = torch.as_tensor(rng.integers(0, len(x), batch_size))
        loss = (model(x[i]) - y[i]).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.lr = cosine(step - 1, steps, lr, eta_min=lr / 10)  # torch's CosineAnnealingLR
        opt.step()
        run += loss.item()
        if step % log_every == 0:
            hist["step"].append(step)
            hist["loss"].append(run / log_every)
            run = 0.0
    model.eval()
    return hist
