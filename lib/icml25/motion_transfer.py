r"""Large-displacement motion transfer by anytime interpolation (Wang & Li, ICML 2025), small.

Image animation moves the object of a source image $S$ into the pose of a driving frame $D$.
Keypoint methods (FOMM, TPSMM) detect keypoints $k_S$ and $k_D$ without supervision, turn the
pairs into a dense backward flow and warp $S$. When $k_S$ and $k_D$ are far apart the flow is
hard to estimate. The paper generates *anytime* interpolated images $I_t$ between $S$ and $D$
(keypoints $k_t=(1-t)k_S+tk_D$), picks the best one with a selector and transfers from $I_{t^*}$,
a smaller displacement; it trains with a bidirectional strategy because no real $I_t$ exists.

Only the abstract and lay summary are public; the interpolation, the selector and the
bidirectional losses here are reconstructions, and the backbone is a small FOMM-like model
(zeroth-order keypoint motions, soft masks, an occlusion map and a feature-warping generator).

Parts: a generator of articulated sprites with exact keypoints (:func:`make_videos`,
:func:`render`, :func:`test_pairs`); the backbone (:class:`KeypointDetector`,
:class:`DenseMotion`, :class:`Generator`, :class:`Animator`); the paper's inference
(:func:`transfer_direct`, :func:`transfer_anytime`) and training (:func:`train_animator`,
:func:`bidirectional_loss`); the evaluation (:func:`akd_mkr`, :class:`PoseDetector`); the
classical-flow peer (:func:`farneback_direct`, :func:`farneback_chain`); the committed models
(:func:`save_checkpoint`, :func:`load_models`; ``python -m icml25.motion_transfer train``).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

#: Image side in pixels and number of ground-truth keypoints of a sprite.
SIZE = 32
N_JOINTS = 5
#: Pose parameters: centre x, centre y (pixels), torso angle, three limb angles (radians).
POSE_NAMES = ("cx", "cy", "theta", "phi1", "phi2", "phi3")
BACKGROUND = np.array([0.08, 0.08, 0.1])


# ----------------------------------------------------------------------------------------------
# Sprites with exact keypoints
# ----------------------------------------------------------------------------------------------

def _rng(seed):
    return np.random.default_rng(seed)


def make_identities(n: int, *, seed=0) -> dict:
    r"""``n`` random sprite identities: colours and shapes, fixed along a video.

    A sprite is a torso capsule of length $L_0$ and radius $r_0$ with two arms at its upper end
    and one leg at its lower end (capsules of length $L_j$, radius $r_j$), each part in its own
    colour. Returns arrays ``length (n, 4)``, ``radius (n, 4)``, ``colour (n, 4, 3)``.
    """
    if n < 1:
        raise ValueError(f"n must be positive, got {n}")
    rng = _rng(seed)
    length = np.column_stack([rng.uniform(6, 8, n), rng.uniform(5, 7, (n, 3))])
    radius = np.column_stack([rng.uniform(2.0, 2.8, n), rng.uniform(1.1, 1.6, (n, 3))])
    colour = rng.uniform(0.25, 1.0, (n, 4, 3))
    return dict(length=length, radius=radius, colour=colour)


def joints(pose, length) -> np.ndarray:
    r"""Ground-truth keypoints ``(..., 5, 2)`` in pixels (x, y) of poses ``(..., 6)``.

    With $u(\alpha)=(\cos\alpha,\sin\alpha)$: lower torso end $p_0=c-\tfrac{L_0}{2}u(\theta)$,
    upper end $p_1=c+\tfrac{L_0}{2}u(\theta)$, arm tips $p_1+L_1u(\theta+\phi_1)$ and
    $p_1+L_2u(\theta+\phi_2)$, leg tip $p_0+L_3u(\theta+\phi_3)$.
    """
    pose = np.asarray(pose, float)
    length = np.asarray(length, float)
    if pose.shape[-1] != 6 or length.shape[-1] != 4:
        raise ValueError("pose must end in 6 parameters and length in 4")

    def u(a):
        return np.stack([np.cos(a), np.sin(a)], -1)

    c, th = pose[..., :2], pose[..., 2]
    half = (length[..., 0] / 2)[..., None]
    p0, p1 = c - half * u(th), c + half * u(th)
    tips = [p1 + length[..., 1, None] * u(th + pose[..., 3]),
            p1 + length[..., 2, None] * u(th + pose[..., 4]),
            p0 + length[..., 3, None] * u(th + pose[..., 5])]
    return np.stack([p0, p1, *tips], -2)


def render(pose, identity: dict, *, size: int = SIZE) -> np.ndarray:
    r"""Images ``(n, 3, size, size)`` in $[0,1]$ of sprites in poses ``(n, 6)``.

    Each part is a capsule (the points within $r$ of a segment), drawn with a one-pixel
    anti-aliased edge, $\alpha=\mathrm{clip}(r+\tfrac12-d,0,1)$ for the distance $d$ of a pixel
    centre to the segment; limbs first, torso on top, over a dark background.
    """
    pose = np.atleast_2d(np.asarray(pose, float))
    length, radius, colour = (np.asarray(identity[k], float)
                              for k in ("length", "radius", "colour"))
    if len(length) != len(pose):
        raise ValueError(f"{len(pose)} poses but {len(length)} identities")
    j = joints(pose, length)                                        # (n, 5, 2)
    # segments: arm 1, arm 2, leg, torso (drawn in this order)
    seg = [(j[:, 1], j[:, 2], 1), (j[:, 1], j[:, 3], 2), (j[:, 0], j[:, 4], 3),
           (j[:, 0], j[:, 1], 0)]
    yy, xx = np.mgrid[0:size, 0:size] + 0.5
    pix = np.stack([xx, yy], -1)[None]                              # (1, H, W, 2)
    img = np.broadcast_to(BACKGROUND[None, :, None, None], (len(pose), 3, size, size)).copy()
    for a, b, part in seg:
        ab = (b - a)[:, None, None]
        ap = pix - a[:, None, None]
        s = np.clip((ap * ab).sum(-1) / np.maximum((ab ** 2).sum(-1), 1e-9), 0, 1)
        d = np.linalg.norm(ap - s[..., None] * ab, axis=-1)        # (n, H, W)
        alpha = np.clip(radius[:, part, None, None] + 0.5 - d, 0, 1)[:, None]
        img = img * (1 - alpha) + alpha * colour[:, part, :, None, None]
    return img.astype(np.float32)


def random_poses(n: int, rng) -> np.ndarray:
    """``n`` random poses: centre in the middle of the image, any torso angle, arms raised
    to either side, the leg roughly along the torso (so every joint keeps its role)."""
    lo = SIZE / 2 - 3.5
    return np.column_stack([rng.uniform(lo, SIZE - lo, (n, 2)), rng.uniform(-np.pi, np.pi, n),
                            rng.uniform(0.3, 1.4, n), rng.uniform(-1.4, -0.3, n),
                            rng.uniform(np.pi - 0.6, np.pi + 0.6, n)])


def make_videos(n_videos: int, n_frames: int = 12, *, seed=0, max_motion: float = 1.0):
    r"""Videos of articulated sprites: ``(frames, poses, identity)``.

    A video keeps one identity and moves linearly in pose space from a random start pose to
    a random end pose: the centre by up to $6\,m$ pixels, the torso by up to $1.6\,m$ radians,
    each limb by up to $1\,m$ radians ($m$ = ``max_motion``). Frames ``(V, T, 3, H, W)``,
    poses ``(V, T, 6)``; frame pairs of one video have displacements from zero to large.
    """
    if n_videos < 1 or n_frames < 2:
        raise ValueError(f"need n_videos >= 1 and n_frames >= 2; got {n_videos}, {n_frames}")
    if max_motion <= 0:
        raise ValueError(f"max_motion must be positive, got {max_motion}")
    rng = _rng(seed)
    ident = make_identities(n_videos, seed=rng.integers(2**32))
    start = random_poses(n_videos, rng)
    delta = rng.uniform(-1, 1, (n_videos, 6)) * max_motion * np.array(
        [6, 6, 1.6, 1, 1, 1])
    end = start + delta
    end[:, :2] = np.clip(end[:, :2], SIZE / 2 - 5, SIZE / 2 + 5)
    end[:, 3] = np.clip(end[:, 3], 0.2, 1.6)
    end[:, 4] = np.clip(end[:, 4], -1.6, -0.2)
    t = np.linspace(0, 1, n_frames)[None, :, None]
    poses = start[:, None] + t * (end - start)[:, None]             # (V, T, 6)
    rep = {k: np.repeat(v, n_frames, 0) for k, v in ident.items()}
    frames = render(poses.reshape(-1, 6), rep).reshape(n_videos, n_frames, 3, SIZE, SIZE)
    return frames, poses, ident


def displacement(pose_a, pose_b, length) -> np.ndarray:
    """Mean distance in pixels between the ground-truth keypoints of two poses."""
    return np.linalg.norm(joints(pose_a, length) - joints(pose_b, length), axis=-1).mean(-1)


def test_pairs(n_videos: int, n_frames: int = 12, *, seed=0) -> dict:
    """Source frame 0 against every later frame of held-out videos (the FOMM protocol):
    ``source, driving (N, 3, H, W)``, ``video, frame`` indices, ``joints_s, joints_d`` and the
    ground-truth ``displacement`` (pixels), plus ``frames`` and ``poses`` of the videos."""
    frames, poses, ident = make_videos(n_videos, n_frames, seed=seed)
    v, f = np.meshgrid(np.arange(n_videos), np.arange(1, n_frames), indexing="ij")
    v, f = v.ravel(), f.ravel()
    length = ident["length"][v]
    return dict(source=frames[v, 0], driving=frames[v, f], video=v, frame=f,
                joints_s=joints(poses[v, 0], length), joints_d=joints(poses[v, f], length),
                displacement=displacement(poses[v, 0], poses[v, f], length),
                frames=frames, poses=poses, identity=ident)


def bin_displacement(d, edges=(3.0, 6.0)) -> np.ndarray:
    """0 (small), 1 (medium), 2 (large) by the displacement in pixels."""
    edges = np.asarray(edges, float)
    if edges.ndim != 1 or np.any(np.diff(edges) <= 0):
        raise ValueError(f"edges must be increasing, got {edges}")
    return np.searchsorted(edges, np.asarray(d, float), side="right")


# ----------------------------------------------------------------------------------------------
# The backbone: a small FOMM-style model
# ----------------------------------------------------------------------------------------------

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


# ----------------------------------------------------------------------------------------------
# Training: same-video reconstruction, equivariance, and the bidirectional strategy
# ----------------------------------------------------------------------------------------------

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
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps, eta_min=lr / 10)
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
        opt.step()
        sched.step()
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
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps, eta_min=lr / 10)
    hist = dict(step=[], loss=[])
    run = 0.0
    model.train()
    for step in range(1, steps + 1):
        i = torch.as_tensor(rng.integers(0, len(x), batch_size))
        loss = (model(x[i]) - y[i]).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        run += loss.item()
        if step % log_every == 0:
            hist["step"].append(step)
            hist["loss"].append(run / log_every)
            run = 0.0
    model.eval()
    return hist


# ----------------------------------------------------------------------------------------------
# Inference: direct transfer, and anytime interpolation with a selector
# ----------------------------------------------------------------------------------------------

def _batches(n, batch):
    return [slice(i, min(i + batch, n)) for i in range(0, n, batch)]


def transfer_direct(model, source, driving, *, batch: int = 256) -> np.ndarray:
    r"""$\hat D=G(S,k_S\to k_D)$ for arrays ``(N, 3, H, W)``."""
    source, driving = _check_images(source, driving)
    out = []
    with torch.no_grad():
        for sl in _batches(len(source), batch):
            out.append(model(torch.as_tensor(source[sl]), torch.as_tensor(driving[sl])))
    return torch.cat(out).numpy()


def _check_images(*arrays):
    out = []
    for a in arrays:
        a = np.asarray(a, np.float32)
        if a.ndim != 4 or a.shape[1] != 3:
            raise ValueError(f"images must be (N, 3, H, W), got shape {a.shape}")
        out.append(a)
    if len({a.shape for a in out}) != 1:
        raise ValueError(f"image arrays differ in shape: {[a.shape for a in out]}")
    return out


SELECTORS = ("keypoints", "midpoint")


def transfer_anytime(model, source, driving, *, ts=(0.25, 0.5, 0.75),
                     selector: str = "keypoints", batch: int = 256) -> dict:
    r"""Interpolate, select, then transfer the small remaining displacement.

    For each $t$ in ``ts``: $k_t=(1-t)k_S+tk_D$, $I_t=G(S,k_S\to k_t)$ and the final
    $Y_t=G(I_t,k(I_t)\to k_D)$. The **selector** (reconstructed; the paper's is not public)
    picks, per pair, the $t$ whose result best honours the driving motion as the model itself
    sees it, $t^*=\arg\min_t\lVert k(Y_t)-k_D\rVert_1$; it uses only $k_D$, never the pixels
    of $D$. ``selector="midpoint"`` is the ablation that always takes the middle of ``ts``.
    Returns ``output (N,3,H,W)``, the chosen ``t``, all ``candidates`` $Y_t$
    ``(len(ts),N,3,H,W)`` and intermediates $I_t$.
    """
    source, driving = _check_images(source, driving)
    ts = np.asarray(ts, float)
    if ts.ndim != 1 or ts.size == 0 or np.any((ts <= 0) | (ts >= 1)):
        raise ValueError(f"ts must be a non-empty list of fractions in (0, 1), got {ts}")
    if selector not in SELECTORS:
        raise ValueError(f"selector must be one of {SELECTORS}, got {selector!r}")
    finals, inters, scores = [], [], []
    with torch.no_grad():
        for sl in _batches(len(source), batch):
            s, d = torch.as_tensor(source[sl]), torch.as_tensor(driving[sl])
            kp_s, kp_d = model.detector(s), model.detector(d)
            f_, i_, sc = [], [], []
            for t in ts:
                inter = model.animate(s, kp_s, (1 - t) * kp_s + t * kp_d)
                y = model.animate(inter, model.detector(inter), kp_d)
                sc.append((model.detector(y) - kp_d).abs().mean((1, 2)))
                f_.append(y)
                i_.append(inter)
            finals.append(torch.stack(f_))
            inters.append(torch.stack(i_))
            scores.append(torch.stack(sc))
    finals = torch.cat(finals, 1).numpy()
    inters = torch.cat(inters, 1).numpy()
    scores = torch.cat(scores, 1).numpy()
    if selector == "keypoints":
        pick = scores.argmin(0)
    else:
        pick = np.full(len(source), len(ts) // 2)
    out = finals[pick, np.arange(len(source))]
    return dict(output=out, t=ts[pick], candidates=finals, intermediates=inters,
                scores=scores)


# ----------------------------------------------------------------------------------------------
# Evaluation
# ----------------------------------------------------------------------------------------------

def detect(pose_detector, images, *, batch: int = 512) -> np.ndarray:
    """Keypoints in pixels ``(N, 5, 2)`` found by the evaluation detector."""
    (images,) = _check_images(images)
    with torch.no_grad():
        out = [pose_detector(torch.as_tensor(images[sl])) for sl in _batches(len(images), batch)]
    return to_pixels(torch.cat(out).numpy(), images.shape[-1])


def akd_mkr(kp_generated, kp_real, *, radius: float = 2.0):
    r"""Per-pair AKD and MKR between keypoints ``(N, J, 2)`` detected on generated frames and
    on the real driving frames: $\mathrm{AKD}=\frac1J\sum_j\lVert\hat k_j-k_j\rVert$ (pixels);
    MKR = share of joints further than ``radius`` pixels apart (the detector finds every joint,
    so a joint counts as missing when it lands far from where it is in the real frame)."""
    a, b = np.asarray(kp_generated, float), np.asarray(kp_real, float)
    if a.shape != b.shape or a.ndim != 3 or a.shape[-1] != 2:
        raise ValueError(f"keypoints must be two (N, J, 2) arrays; got {a.shape}, {b.shape}")
    if radius <= 0:
        raise ValueError(f"radius must be positive, got {radius}")
    d = np.linalg.norm(a - b, axis=-1)
    return d.mean(-1), (d > radius).mean(-1)


def l1(generated, real) -> np.ndarray:
    """Per-pair mean absolute pixel error (images in $[0,1]$)."""
    a, b = _check_images(generated, real)
    return np.abs(a - b).mean((1, 2, 3))


def scores(pose_detector, generated, pairs) -> dict:
    """``{"akd", "mkr", "l1"}`` per test pair; keypoints of the real frames re-detected."""
    real = detect(pose_detector, pairs["driving"])
    akd, mkr = akd_mkr(detect(pose_detector, generated), real)
    return dict(akd=akd, mkr=mkr, l1=l1(generated, pairs["driving"]))


def gain_by_bin(baseline, method, bins, *, n_boot: int = 2000, level: float = 0.95,
                seed=0) -> dict:
    r"""Paired gains $g_i=b_i-m_i$ (baseline error minus method error, per test pair) by
    displacement bin, with percentile-bootstrap intervals.

    Pairs are resampled within each bin (a stratified bootstrap), so the same resamples give
    the interval of every bin's mean gain $\bar g_j$ and of the contrast
    $\bar g_{\text{large}}-\bar g_{\text{small}}$ (last bin minus first). Returns
    ``{"mean": (J,), "low": (J,), "high": (J,), "contrast": (value, (low, high))}``.
    """
    b, m = np.asarray(baseline, float), np.asarray(method, float)
    bins = np.asarray(bins)
    if b.shape != m.shape or b.shape != bins.shape or b.ndim != 1:
        raise ValueError("baseline, method and bins must be 1-d arrays of one length")
    if n_boot < 1 or not 0 < level < 1:
        raise ValueError(f"n_boot must be positive and level in (0, 1): {n_boot}, {level}")
    g = b - m
    levels = np.unique(bins)
    rng = _rng(seed)
    boot = np.empty((n_boot, len(levels)))
    for j, lev in enumerate(levels):
        gj = g[bins == lev]
        boot[:, j] = gj[rng.integers(0, len(gj), (n_boot, len(gj)))].mean(1)
    a = (1 - level) / 2
    mean = np.array([g[bins == lev].mean() for lev in levels])
    lo, hi = np.quantile(boot, [a, 1 - a], axis=0)
    c = boot[:, -1] - boot[:, 0]
    contrast = (float(mean[-1] - mean[0]),
                (float(np.quantile(c, a)), float(np.quantile(c, 1 - a))))
    return dict(levels=levels, mean=mean, low=lo, high=hi, contrast=contrast)


# ----------------------------------------------------------------------------------------------
# The classical-flow peer: OpenCV's Farnebäck flow, direct or chained through real frames
# ----------------------------------------------------------------------------------------------

FARNEBACK = dict(pyr_scale=0.5, levels=3, winsize=9, iterations=5, poly_n=5,
                 poly_sigma=1.1, flags=0)


def _grey(img):
    return (np.clip(img.mean(0), 0, 1) * 255).astype(np.uint8)


def farneback_flow(target, source) -> np.ndarray:
    """Backward flow ``(H, W, 2)``: pixel $z$ of ``target`` is at $z+f(z)$ in ``source``."""
    import cv2

    return cv2.calcOpticalFlowFarneback(_grey(target), _grey(source), None,
                                        **FARNEBACK)


def _remap(img, flow):
    import cv2

    h, w = flow.shape[:2]
    xx, yy = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    mx, my = xx + flow[..., 0], yy + flow[..., 1]
    chans = np.moveaxis(np.asarray(img, np.float32), 0, -1)
    out = cv2.remap(chans, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.moveaxis(out.reshape(h, w, -1), -1, 0)


def farneback_direct(source, driving) -> np.ndarray:
    """Warp each source by the Farnebäck flow from its driving frame: ``(N, 3, H, W)``."""
    source, driving = _check_images(source, driving)
    return np.stack([_remap(s, farneback_flow(d, s)) for s, d in zip(source, driving)])


def farneback_chain(frames) -> np.ndarray:
    r"""Warp frame 0 to the last frame through the frames between: ``frames (N, m+1, 3, H, W)``.

    Flows $f_j$ from frame $j+1$ to frame $j$ are composed backwards,
    $\phi(z)=z+f_{m-1}(z)$, then $\phi\leftarrow\phi+f_{j}(\phi)$ for $j=m-2,\dots,0$, so
    each flow spans one small step; the source is sampled once at $\phi$.
    """
    frames = np.asarray(frames, np.float32)
    if frames.ndim != 5 or frames.shape[1] < 2:
        raise ValueError(f"frames must be (N, m+1, 3, H, W) with m >= 1, got {frames.shape}")
    out = []
    for seq in frames:
        m = len(seq) - 1
        total = farneback_flow(seq[m], seq[m - 1])
        for j in range(m - 2, -1, -1):
            f = farneback_flow(seq[j + 1], seq[j])
            total = total + _remap(np.moveaxis(f, -1, 0), total).transpose(1, 2, 0)
        out.append(_remap(seq[0], total))
    return np.stack(out)


# ----------------------------------------------------------------------------------------------
# The committed models
# ----------------------------------------------------------------------------------------------

#: How the committed models were trained (``python -m icml25.motion_transfer train``).
TRAINING = dict(n_videos=400, n_frames=12, n_kp=6, width=16, batch_size=16, steps=450,
                finetune=120, lr=2e-3, equivariance=10.0, separation=1.0, bidirectional=1.0,
                detector_steps=2500)
CHECKPOINT = "motion_transfer/models.pt"


def _train_seed(args):
    import time

    seed, config = args
    torch.set_num_threads(1)
    frames, _, _ = make_videos(config["n_videos"], config["n_frames"], seed=[seed, 1])
    torch.manual_seed(int(_rng([seed, 2]).integers(2**31)))
    base = Animator(config["n_kp"], config["width"])
    start = time.process_time()
    kw = dict(batch_size=config["batch_size"], lr=config["lr"],
              equivariance=config["equivariance"], separation=config["separation"])
    h0 = train_animator(base, frames, steps=config["steps"], seed=[seed, 3], **kw)
    cpu0 = time.process_time() - start
    out = {}
    # both variants continue from the same backbone for the same number of steps; only the
    # bidirectional term differs
    for name, weight in (("plain", 0.0), ("bidirectional", config["bidirectional"])):
        model = Animator(config["n_kp"], config["width"])
        model.load_state_dict(base.state_dict())
        start = time.process_time()
        h = train_animator(model, frames, steps=config["finetune"], seed=[seed, 4],
                           bidirectional=weight, **dict(kw, lr=config["lr"] / 4))
        rec = dict(base=h0, finetune=h, cpu_s=cpu0 + time.process_time() - start)
        out[name] = ({k: v.detach().clone() for k, v in model.state_dict().items()}, rec)
    return seed, out


def train_evaluator(config: dict = TRAINING):
    """The evaluation detector, trained once (seed 1000, its own videos)."""
    import time

    torch.set_num_threads(1)
    torch.manual_seed(1000)
    frames, poses, ident = make_videos(config["n_videos"], config["n_frames"], seed=1000)
    det = PoseDetector(config["width"])
    start = time.process_time()
    h = train_pose_detector(det, frames, poses, ident, steps=config["detector_steps"],
                            seed=1001)
    return det, dict(history=h, cpu_s=time.process_time() - start)


def save_checkpoint(path, seeds=range(5), config: dict = TRAINING, jobs: int = 1) -> None:
    """Train the evaluation detector and, per seed, the plain and bidirectional animators;
    save the state dicts (half precision) and training records."""
    args = [(int(s), config) for s in seeds]
    if jobs > 1:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(jobs) as pool:
            results = pool.map(_train_seed, args)
    else:
        results = [_train_seed(a) for a in args]
    det, rec = train_evaluator(config)

    def half(sd):
        return {k: v.half() if v.is_floating_point() else v for k, v in sd.items()}

    seeds_out = {s: {n: (half(w), r) for n, (w, r) in res.items()} for s, res in results}
    torch.save({"config": dict(config), "seeds": seeds_out,
                "evaluator": (half(det.state_dict()), rec)}, path)


def _load_state(model, state):
    model.load_state_dict({k: v.float() if v.is_floating_point() else v
                           for k, v in state.items()})
    return model.eval()


def load_models(seed: int) -> tuple[dict, object, dict]:
    """The committed animators of ``seed`` (``{"plain"|"bidirectional": (model, record)}``),
    the evaluation detector ``(model, record)`` and the training config."""
    from .book import data as book_data

    state = torch.load(book_data.path(CHECKPOINT), weights_only=True)
    if seed not in state["seeds"]:
        raise ValueError(f"the committed models cover seeds {sorted(state['seeds'])}, not "
                         f"{seed}; train more with python -m icml25.motion_transfer train")
    config = state["config"]
    models = {name: (_load_state(Animator(config["n_kp"], config["width"]), w), rec)
              for name, (w, rec) in state["seeds"][seed].items()}
    w, rec = state["evaluator"]
    det = _load_state(PoseDetector(config["width"]), w)
    return models, (det, rec), config


def main(argv=None) -> None:  # pragma: no cover
    """``python -m icml25.motion_transfer train data/motion_transfer/models.pt [--jobs 2]``."""
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m icml25.motion_transfer")
    parser.add_argument("what", choices=["train"])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    save_checkpoint(args.out, range(args.seeds), jobs=args.jobs)
    print(f"wrote {args.out}")


if __name__ == "__main__":  # pragma: no cover
    main()
