"""Inference and evaluation: direct transfer, anytime interpolation with a selector, AKD, MKR,
L1 and paired gains by displacement bin with bootstrap intervals."""

from __future__ import annotations

import numpy as np
import torch

from .data import _check_images, _rng
from .model import to_pixels


def _batches(n, batch):
    return [slice(i, min(i + batch, n)) for i in range(0, n, batch)]


def transfer_direct(model, source, driving, *, batch: int = 64) -> np.ndarray:
    r"""$\hat D=G(S,k_S\to k_D)$ for arrays ``(N, 3, H, W)``."""
    source, driving = _check_images(source, driving)
    out = []
    with torch.no_grad():
        for sl in _batches(len(source), batch):
            out.append(model(torch.as_tensor(source[sl]), torch.as_tensor(driving[sl])))
    return torch.cat(out).numpy()


SELECTORS = ("keypoints", "midpoint")


def transfer_anytime(model, source, driving, *, ts=(0.25, 0.5, 0.75),
                     selector: str = "keypoints", batch: int = 64) -> dict:
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


def detect(pose_detector, images, *, batch: int = 64) -> np.ndarray:
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


def scores(pose_detector, generated, pairs, *, real=None) -> dict:
    """``{"akd", "mkr", "l1"}`` per test pair against the keypoints ``real`` the detector
    finds on the real driving frames (``detect(pose_detector, pairs["driving"])``; detected
    here when not given, so that many methods scored on one test set detect them once)."""
    if real is None:
        real = detect(pose_detector, pairs["driving"])
    akd, mkr = akd_mkr(detect(pose_detector, generated), real)
    return dict(akd=akd, mkr=mkr, l1=l1(generated, pairs["driving"]))


def gain_by_bin(baseline, method, bins, *, n_boot: int = 2000, level: float = 0.95,
                seed=0, groups=None) -> dict:
    r"""Paired gains $g_i=b_i-m_i$ (baseline error minus method error, per test pair) by
    displacement bin, with percentile-bootstrap intervals.

    Without ``groups`` pairs are resampled within each bin (a stratified bootstrap). With
    ``groups`` (one label per pair, e.g. its video) whole groups are resampled, as the
    pairs of one video share a source frame and an identity and are not independent; a
    bin's mean in a resample is then the ratio $\sum_{i\in j}w_i g_i/\sum_{i\in j}w_i$ with
    $w_i$ the number of times pair $i$'s group was drawn. Either way the same resamples give
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
    if groups is None:
        for j, lev in enumerate(levels):
            gj = g[bins == lev]
            boot[:, j] = gj[rng.integers(0, len(gj), (n_boot, len(gj)))].mean(1)
    else:
        groups = np.asarray(groups)
        if groups.shape != g.shape:
            raise ValueError("groups must give one label per pair")
        labels, gid = np.unique(groups, return_inverse=True)
        # how often each group is drawn in each resample: (n_boot, G)
        counts = np.zeros((n_boot, len(labels)))
        draws = rng.integers(0, len(labels), (n_boot, len(labels)))
        np.add.at(counts, (np.arange(n_boot)[:, None], draws), 1)
        for j, lev in enumerate(levels):
            inside = bins == lev
            sums = np.bincount(gid[inside], g[inside], len(labels))
            sizes = np.bincount(gid[inside], minlength=len(labels)).astype(float)
            with np.errstate(invalid="ignore", divide="ignore"):
                boot[:, j] = (counts @ sums) / (counts @ sizes)
        # a resample that drew no pair of some bin says nothing about it
        boot = boot[np.isfinite(boot).all(1)]
    a = (1 - level) / 2
    mean = np.array([g[bins == lev].mean() for lev in levels])
    lo, hi = np.quantile(boot, [a, 1 - a], axis=0)
    c = boot[:, -1] - boot[:, 0]
    contrast = (float(mean[-1] - mean[0]),
                (float(np.quantile(c, a)), float(np.quantile(c, 1 - a))))
    return dict(levels=levels, mean=mean, low=lo, high=hi, contrast=contrast)
