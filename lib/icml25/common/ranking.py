r"""Ranking scores shared by the chapters: the area under the ROC curve and average precision.

Both follow scikit-learn's definitions (tied scores count as scikit-learn counts them) and take
one ranking ``(n,)`` or many ``(rows, n)`` at once, one row per bootstrap resample.
"""

from __future__ import annotations

import numpy as np

__all__ = ["auroc", "average_precision", "check_ranking"]


def check_ranking(scores, labels, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(scores as float, labels as bool)`` of one ranking ``(n,)`` or of several
    ``(rows, n)``, if the shapes agree, ``n >= 2``, the labels are binary, the scores finite and
    every row has a positive and a negative label; ``name`` opens the error message."""
    s = np.asarray(scores, float)
    y = np.asarray(labels)
    if s.shape != y.shape or s.ndim not in (1, 2) or s.shape[-1] < 2:
        raise ValueError(f"{name}: scores {s.shape} and labels {y.shape} must have the same "
                         "shape (n,) or (rows, n), n >= 2")
    if y.dtype != bool and not np.isin(y, (0, 1)).all():
        raise ValueError(f"{name}: labels must be binary (bool or 0/1)")
    if not np.isfinite(s).all():
        raise ValueError(f"{name}: scores contain NaN or infinite values")
    y = y.astype(bool)
    if not (y.any(-1) & ~y.all(-1)).all():
        raise ValueError(f"{name}: every row needs positive and negative labels")
    return s, y


def auroc(scores, labels) -> np.ndarray:
    r"""Area under the ROC curve, per row: :math:`P(s^+ > s^-) + \tfrac12 P(s^+ = s^-)`.

    The Mann-Whitney form :math:`(\sum_{i:y_i=1} r_i - n_1(n_1+1)/2)/(n_1 n_0)` with the
    mid-ranks :math:`r_i` of the scores (ties count one half). ``scores`` and ``labels`` have
    shape ``(n,)`` or ``(rows, n)`` (one row per bootstrap resample); returns a float or one per
    row.
    """
    from scipy.stats import rankdata  # imported here: average precision does not need scipy

    s, y = check_ranking(scores, labels, "auroc")
    ranks = rankdata(s, axis=-1)
    n1 = y.sum(-1)
    n0 = y.shape[-1] - n1
    out = ((ranks * y).sum(-1) - n1 * (n1 + 1) / 2) / (n1 * n0)
    return float(out) if out.ndim == 0 else out


def average_precision(scores, labels) -> np.ndarray:
    r"""Average precision, per row: :math:`\mathrm{AP} = \sum_k (R_k - R_{k-1})\,P_k`.

    :math:`P_k` and :math:`R_k` are the precision and recall when every score at least the
    :math:`k`-th largest distinct score is called positive (scikit-learn's definition, no
    interpolation; tied scores enter together). Equivalently, the mean over the positives of
    the precision at the lowest threshold that still includes them. Shapes as :func:`auroc`.
    """
    s, y = check_ranking(scores, labels, "average_precision")
    s2, y2 = np.atleast_2d(s), np.atleast_2d(y)
    order = np.argsort(-s2, axis=1, kind="stable")
    s_sorted = np.take_along_axis(s2, order, 1)
    y_sorted = np.take_along_axis(y2, order, 1)
    n = s2.shape[1]
    tp = np.cumsum(y_sorted, 1)
    # the last position of each group of tied scores: a positive's threshold includes them all
    last = np.ones_like(y_sorted)
    last[:, :-1] = s_sorted[:, :-1] != s_sorted[:, 1:]
    pos = np.where(last, np.arange(n), n - 1)
    end = np.minimum.accumulate(pos[:, ::-1], axis=1)[:, ::-1]
    precision_at_end = np.take_along_axis(tp, end, 1) / (end + 1)
    out = (precision_at_end * y_sorted).sum(1) / y_sorted.sum(1)
    return float(out[0]) if s.ndim == 1 else out
