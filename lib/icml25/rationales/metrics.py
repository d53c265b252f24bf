r"""Segmentation and localisation metrics: Dice, IoU, the pointing game, IoU at area."""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from icml25.common.ranking import check_ranking
from icml25.common.streams import as_generator


def _binary_pair(pred, target, name):
    pred, target = np.asarray(pred), np.asarray(target)
    if pred.shape != target.shape:
        raise ValueError(f"{name}: prediction {pred.shape} and target {target.shape} differ")
    for a, what in ((pred, "prediction"), (target, "target")):
        if a.dtype != bool and not np.isin(a, (0, 1)).all():
            raise ValueError(f"{name}: the {what} must be binary (bool or 0/1)")
    return pred.astype(bool), target.astype(bool)


def dice(pred, target, *, empty: float = 1.0) -> np.ndarray:
    r"""Dice score per image: :math:`2|P\cap T| / (|P|+|T|)`, ``empty`` when both are empty.

    ``pred`` and ``target`` are binary arrays of the same shape ``(..., H, W)``; returns the
    score of each leading index (a float for a single image).
    """
    p, t = _binary_pair(pred, target, "dice")
    if p.ndim < 2:
        raise ValueError("dice: masks need at least two dimensions (height, width)")
    inter = (p & t).sum((-2, -1))
    total = p.sum((-2, -1)) + t.sum((-2, -1))
    return np.where(total > 0, 2 * inter / np.maximum(total, 1), empty)


def iou(pred, target, *, empty: float = 1.0) -> np.ndarray:
    r"""Intersection over union per image, :math:`|P\cap T|/|P\cup T|` (``empty`` if both empty)."""
    p, t = _binary_pair(pred, target, "iou")
    if p.ndim < 2:
        raise ValueError("iou: masks need at least two dimensions (height, width)")
    inter = (p & t).sum((-2, -1))
    union = (p | t).sum((-2, -1))
    return np.where(union > 0, inter / np.maximum(union, 1), empty)


def _maps_and_evidence(heat, evidence, name):
    heat = np.asarray(heat, float)
    evidence = np.asarray(evidence)
    if heat.shape != evidence.shape or heat.ndim < 2:
        raise ValueError(f"{name}: heat maps {heat.shape} and evidence {evidence.shape} must "
                         "have the same shape (..., H, W)")
    if evidence.dtype != bool and not np.isin(evidence, (0, 1)).all():
        raise ValueError(f"{name}: evidence maps must be binary")
    if not np.isfinite(heat).all():
        raise ValueError(f"{name}: heat maps contain NaN or infinite values")
    evidence = evidence.astype(bool)
    if not evidence.any((-2, -1)).all():
        raise ValueError(f"{name}: every evidence map must contain at least one pixel")
    return heat, evidence


def pointing_game(heat, evidence, *, tolerance: int = 0) -> np.ndarray:
    r"""Pointing game: does the maximum of each heat map fall on its evidence?

    A hit when :math:`\arg\max_x H(x) \in \mathrm{dilate}_r(E)`, the evidence dilated by
    ``tolerance`` :math:`r` pixels (ties: the first maximum in row-major order). ``heat`` and
    ``evidence`` have the same shape ``(..., H, W)``; returns a bool per map.
    """
    heat, evidence = _maps_and_evidence(heat, evidence, "pointing_game")
    if tolerance < 0:
        raise ValueError(f"tolerance must be non-negative, got {tolerance}")
    shape = heat.shape
    flat_h = heat.reshape(-1, shape[-2] * shape[-1])
    ev = evidence.reshape(-1, shape[-2], shape[-1])
    if tolerance:
        st = ndimage.generate_binary_structure(2, 2)
        ev = np.stack([ndimage.binary_dilation(e, st, iterations=tolerance) for e in ev])
    top = flat_h.argmax(1)
    hits = ev.reshape(len(ev), -1)[np.arange(len(ev)), top]
    return hits.reshape(shape[:-2])


def iou_at_area(heat, evidence) -> np.ndarray:
    r"""IoU of the evidence :math:`E` with the :math:`|E|` highest pixels of the heat map.

    Ranking only (no threshold to calibrate): a map that ranks the evidence's pixels first
    scores 1; a random map scores about :math:`a/(2-a)` for an evidence of area share
    :math:`a`. Ties are broken by position (stable sort).
    """
    heat, evidence = _maps_and_evidence(heat, evidence, "iou_at_area")
    shape = heat.shape
    h = heat.reshape(-1, shape[-2] * shape[-1])
    e = evidence.reshape(len(h), -1)
    area = e.sum(1)
    order = np.argsort(-h, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(h.shape[1])[None].repeat(len(h), 0), 1)
    top = ranks < area[:, None]
    return iou(top.reshape(-1, *shape[-2:]), e.reshape(-1, *shape[-2:])).reshape(shape[:-2])


def random_maps(shape, *, seed=0) -> np.ndarray:
    """Uniform random heat maps of ``shape`` (the chance level of every localisation metric)."""
    return as_generator(seed).random(shape)


# ----------------------------------------------------------------------------------------------
# Detection: is there a lesion in the image?
# ----------------------------------------------------------------------------------------------

# The detection scores, auroc and average_precision, live in icml25.common.ranking (chapter 02
# ranks with them too); the package re-exports them.


def paired_gap(metric, scores_a, scores_b, labels, *, n_boot: int = 10_000, seed=0):
    r"""``metric(a) - metric(b)`` on the same images and its paired percentile bootstrap.

    The images are resampled with replacement ``n_boot`` times
    (:func:`icml25.common.stats.resample_indices`), the same resample for both score arrays;
    the interval is the 2.5% and 97.5% quantiles of the resampled differences. ``metric`` is
    :func:`~icml25.common.ranking.auroc` or :func:`~icml25.common.ranking.average_precision`.
    Returns an :class:`icml25.common.stats.Estimate` ``(value, (low, high))``; resamples without a
    positive or without a negative image are dropped (there are none at a few hundred images).
    """
    from icml25.common.stats import Estimate, resample_indices

    a, y = check_ranking(scores_a, labels, "paired_gap")
    b, _ = check_ranking(scores_b, labels, "paired_gap")
    if a.ndim != 1:
        raise ValueError("paired_gap: scores must be one-dimensional (one per image)")
    idx = resample_indices(len(a), n_boot=n_boot, seed=seed)
    yb = y[idx]
    ok = yb.any(1) & ~yb.all(1)
    idx, yb = idx[ok], yb[ok]
    gaps = metric(a[idx], yb) - metric(b[idx], yb)
    value = float(metric(a, y) - metric(b, y))
    return Estimate(value, (float(np.quantile(gaps, 0.025)), float(np.quantile(gaps, 0.975))))
