r"""SequOOL (Bartlett, Gabillon & Valko, 2019) on a box of coordinates."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from icml25.common.validation import check_int

from .counting import CountedFunction, Result, _bounds


def harmonic(n: int) -> float:
    r"""The harmonic number $\overline{\log}(n)=\sum_{i=1}^n 1/i$."""
    n = check_int(n, "n", minimum=1)
    return float(np.sum(1.0 / np.arange(1, n + 1)))


def sequool_schedule(n: int) -> tuple[int, np.ndarray]:
    r"""SequOOL's depth and per-depth opening caps for a budget $n$.

    $h_{\max}=\lfloor n/\overline{\log}(n)\rfloor$; at depth 0 one opening, at depth
    $1\le h\le h_{\max}$ at most $\lfloor h_{\max}/h\rfloor$ (Bartlett et al., 2019,
    Algorithm 1, where $n$ counts openings: $\sum_{h\le h_{\max}}\lfloor h_{\max}/h\rfloor
    \le h_{\max}\overline{\log}(h_{\max})\le n$). Like the paper's code we give it the number
    of evaluations; an opening costs two, so the deepest depths may be cut by the budget.

    Returns
    -------
    h_max : int
    caps : ndarray (h_max + 1,)
        ``caps[h]`` is the most openings at depth ``h``.
    """
    n = check_int(n, "n", minimum=1)
    h_max = int(n // harmonic(n))
    caps = np.ones(h_max + 1, dtype=np.int64)
    if h_max >= 1:
        caps[1:] = h_max // np.arange(1, h_max + 1)
    return h_max, caps


def _sequool_box(fc: CountedFunction, to_x: Callable, box: np.ndarray) -> None:
    """SequOOL on ``box`` (m, 2) of coordinates; ``to_x`` maps coordinates (k, m) to points."""
    m = box.shape[0]
    n = fc.remaining
    if n < 1:
        return
    lo, hi = box[:, 0][None].copy(), box[:, 1][None].copy()
    vals = np.atleast_1d(fc(to_x((lo + hi) / 2)))
    h_max, caps = sequool_schedule(n)
    for h in range(h_max + 1):
        k = min(int(caps[h]), lo.shape[0], (fc.remaining) // 2)
        if k < 1:
            break
        best = np.argsort(vals, kind="stable")[:k]
        plo, phi, pval = lo[best], hi[best], vals[best]
        axis = h % m
        third = (phi[:, axis] - plo[:, axis]) / 3
        left_lo, left_hi = plo.copy(), phi.copy()
        left_hi[:, axis] = plo[:, axis] + third
        mid_lo, mid_hi = plo.copy(), phi.copy()
        mid_lo[:, axis] = plo[:, axis] + third
        mid_hi[:, axis] = phi[:, axis] - third
        right_lo, right_hi = plo.copy(), phi.copy()
        right_lo[:, axis] = phi[:, axis] - third
        outer_lo, outer_hi = np.r_[left_lo, right_lo], np.r_[left_hi, right_hi]
        outer_vals = np.atleast_1d(fc(to_x((outer_lo + outer_hi) / 2)))
        lo = np.r_[outer_lo, mid_lo]
        hi = np.r_[outer_hi, mid_hi]
        vals = np.r_[outer_vals, pval]


def sequool(f: Callable, bounds, budget: int, *, vectorized: bool = False,
            history: bool = False) -> Result:
    r"""Minimise ``f`` on the box ``bounds`` with SequOOL, at most ``budget`` evaluations.

    The root is the whole box, evaluated at its centre. Depths $h=0..h_{\max}$ are processed
    in order; at depth $h$ the $\min(\lfloor h_{\max}/h\rfloor, N_h)$ boxes of lowest centre
    value among the $N_h$ at that depth are cut in three along axis $h \bmod d$
    (:func:`sequool_schedule`); each cut costs two evaluations, and the run stops when fewer
    than two are left.

    Parameters
    ----------
    f : callable
        Objective to minimise: ``(d,)`` to float (or batches with ``vectorized=True``).
    bounds : array (d, 2)
        Lower and upper end of each coordinate.
    budget : int
        Largest number of evaluations $n\ge1$.
    vectorized : bool
        ``f`` maps ``(k, d)`` to ``(k,)``.
    history : bool
        Keep every evaluated point in ``result.info["points"]``.
    """
    box = _bounds(bounds)
    fc = CountedFunction(f, budget, vectorized=vectorized, history=history)
    _sequool_box(fc, lambda z: z, box)
    return fc.result()


