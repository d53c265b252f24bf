"""Articulated sprites with exact keypoints: identities, poses, rendering, videos, test pairs.

A sprite is a torso with two arms at its upper end and a leg at its lower end; a video moves
one identity linearly in pose space. Displacements between frames of one video go from zero
to large, and every joint is known exactly, so that AKD, MKR and L1 can be computed exactly.
"""

from __future__ import annotations

import numpy as np

from icml25.common.streams import as_generator

#: Image side in pixels and number of ground-truth keypoints of a sprite.
SIZE = 32
N_JOINTS = 5
#: Pose parameters: centre x, centre y (pixels), torso angle, three limb angles (radians).
POSE_NAMES = ("cx", "cy", "theta", "phi1", "phi2", "phi3")
BACKGROUND = np.array([0.08, 0.08, 0.1])


def _rng(seed):
    return as_generator(seed)


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


def video_poses(n_videos: int, n_frames: int = 12, *, seed=0, max_motion: float = 1.0):
    r"""The poses ``(V, T, 6)`` and identities of the videos of :func:`make_videos`, without
    rendering them (the same draw: :func:`make_videos` renders exactly these)."""
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
    return poses, ident


def _render_videos(poses, ident):
    n_videos, n_frames = poses.shape[:2]
    rep = {k: np.repeat(v, n_frames, 0) for k, v in ident.items()}
    return render(poses.reshape(-1, 6), rep).reshape(n_videos, n_frames, 3, SIZE, SIZE)


def make_videos(n_videos: int, n_frames: int = 12, *, seed=0, max_motion: float = 1.0):
    r"""Videos of articulated sprites: ``(frames, poses, identity)``.

    A video keeps one identity and moves linearly in pose space from a random start pose to
    a random end pose: the centre by up to $6\,m$ pixels, the torso by up to $1.6\,m$ radians,
    each limb by up to $1\,m$ radians ($m$ = ``max_motion``). Frames ``(V, T, 3, H, W)``,
    poses ``(V, T, 6)``; frame pairs of one video have displacements from zero to large.
    """
    poses, ident = video_poses(n_videos, n_frames, seed=seed, max_motion=max_motion)
    return _render_videos(poses, ident), poses, ident


def displacement(pose_a, pose_b, length) -> np.ndarray:
    """Mean distance in pixels between the ground-truth keypoints of two poses."""
    return np.linalg.norm(joints(pose_a, length) - joints(pose_b, length), axis=-1).mean(-1)


def test_pairs(n_videos: int, n_frames: int = 12, *, seed=0, per_bin=None,
               edges=(3.0, 6.0), subsample_seed=0) -> dict:
    """Source frame 0 against every later frame of held-out videos (the FOMM protocol):
    ``source, driving (N, 3, H, W)``, ``video, frame`` indices, ``joints_s, joints_d`` and the
    ground-truth ``displacement`` (pixels), plus ``frames`` and ``poses`` of the videos.

    ``per_bin`` (one count per displacement bin of ``edges``, ``None`` for all of a bin's
    pairs; or ``None`` for every pair) keeps at most that many pairs of each bin, drawn uniformly without replacement (from
    ``subsample_seed``), so that a large test set can spend its evaluation on the bins that
    need it; a bin's mean over the kept pairs estimates the same quantity as over all of
    them. Only the videos that keep a pair are rendered; ``video`` indexes the returned
    ``frames``, and ``source_video`` the drawn videos. Without ``per_bin`` every video is
    kept and the result is that of drawing the videos with :func:`make_videos`.
    """
    poses, ident = video_poses(n_videos, n_frames, seed=seed)
    v, f = np.meshgrid(np.arange(n_videos), np.arange(1, n_frames), indexing="ij")
    v, f = v.ravel(), f.ravel()
    length = ident["length"][v]
    disp = displacement(poses[v, 0], poses[v, f], length)
    if per_bin is not None:
        bins = bin_displacement(disp, edges)
        per_bin = [len(bins) if c is None else int(c) for c in per_bin]
        if len(per_bin) != len(edges) + 1 or min(per_bin) < 0:
            raise ValueError(f"per_bin needs {len(edges) + 1} non-negative counts, "
                             f"got {per_bin}")
        rng = as_generator(subsample_seed)
        keep = []
        for b, cap in enumerate(per_bin):
            idx = np.flatnonzero(bins == b)
            if len(idx) > cap:
                idx = np.sort(rng.choice(idx, cap, replace=False))
            keep.append(idx)
        keep = np.sort(np.concatenate(keep))
        v, f, disp = v[keep], f[keep], disp[keep]
    used, v_local = np.unique(v, return_inverse=True)
    poses = poses[used]
    ident = {k: val[used] for k, val in ident.items()}
    frames = _render_videos(poses, ident)
    length = ident["length"][v_local]
    return dict(source=frames[v_local, 0], driving=frames[v_local, f], video=v_local,
                frame=f, joints_s=joints(poses[v_local, 0], length),
                joints_d=joints(poses[v_local, f], length), displacement=disp,
                frames=frames, poses=poses, identity=ident, source_video=used)


def bin_displacement(d, edges=(3.0, 6.0)) -> np.ndarray:
    """0 (small), 1 (medium), 2 (large) by the displacement in pixels."""
    edges = np.asarray(edges, float)
    if edges.ndim != 1 or np.any(np.diff(edges) <= 0):
        raise ValueError(f"edges must be increasing, got {edges}")
    return np.searchsorted(edges, np.asarray(d, float), side="right")


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
