"""The classical-flow peer: OpenCV's Farnebäck optical flow, direct or chained through the
real frames between source and driving frame."""

from __future__ import annotations

import numpy as np

from .data import _check_images

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


def farneback_chain_pairs(frames, video, frame) -> np.ndarray:
    r""":func:`farneback_chain` for many pairs of a few videos at once: pair $i$ warps frame 0
    of video ``video[i]`` to its frame ``frame[i]`` through the frames between.

    ``frames (V, T, 3, H, W)``. The flow $f_j$ from frame $j+1$ to frame $j$ of a video is
    the same in every pair of that video, so it is computed once per video and step and
    composed per pair exactly as in :func:`farneback_chain` (the same numbers, fewer flows).
    Returns ``(N, 3, H, W)``.
    """
    frames = np.asarray(frames, np.float32)
    video, frame = np.asarray(video), np.asarray(frame)
    if frames.ndim != 5 or frames.shape[1] < 2:
        raise ValueError(f"frames must be (V, T, 3, H, W) with T >= 2, got {frames.shape}")
    if video.shape != frame.shape or video.ndim != 1:
        raise ValueError("video and frame must be 1-d arrays of one length")
    if len(video) and (video.min() < 0 or video.max() >= len(frames) or frame.min() < 1
                       or frame.max() >= frames.shape[1]):
        raise ValueError("video must index frames and frame lie in 1..T-1")
    flows = {}

    def step(v, j):  # flow from frame j+1 to frame j of video v, once
        if (v, j) not in flows:
            flows[v, j] = farneback_flow(frames[v, j + 1], frames[v, j])
        return flows[v, j]

    out = []
    for v, m in zip(video.tolist(), frame.tolist()):
        total = step(v, m - 1)
        for j in range(m - 2, -1, -1):
            total = total + _remap(np.moveaxis(step(v, j), -1, 0), total).transpose(1, 2, 0)
        out.append(_remap(frames[v, 0], total))
    return np.stack(out) if out else np.empty((0, *frames.shape[2:]), np.float32)
