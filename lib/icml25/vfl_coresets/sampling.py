r"""The server's side: the sampling distribution, the draw (with or without replacement) and
the weights, and :func:`coreset`, the whole protocol.

**Which sampler the theory covers.** The paper's guarantees, like every sensitivity-sampling
bound, are stated for $m$ i.i.d. draws with replacement, each row drawn with probability
$p_i$ and given the weight $1/(m\,p_i)$ per draw (``replace=True``, the default): the weighted
sum is then an average of $m$ independent unbiased estimates of the full sum, which is what
the concentration arguments need. ``replace=False`` draws $m$ *distinct* rows with inclusion
probabilities $\pi_i=\min(1,c\,p_i)$, $\sum_i\pi_i=m$ (:func:`inclusion_probabilities`), by
randomised systematic sampling, and weights a drawn row $1/\pi_i$ (the Horvitz-Thompson
weight): the weighted sums are unbiased too, but the draws are dependent and the paper's
bounds are not proved for them. The weight $1/(m\,p_i)$ belongs to the with-replacement
sampler only: given to rows drawn without replacement it is biased once some $m\,p_i$ is not
small (a row with $m\,p_i>1$ can be kept at most once).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml25.common.streams import as_generator
from icml25.common.validation import check_int, check_scalar

from ._checks import METHODS, _blocks, _check_labels_pm1, _check_replace
from .scores import party_scores


def sampling_probabilities(scores) -> np.ndarray:
    r"""The server's $p_i=(\sum_j g^{(j)}_i+1/n)/\sum_k(\sum_j g^{(j)}_k+1/n)$.

    The uniform term $1/n$ keeps every row reachable (the logistic loss is $\log2$ on every row
    at $\beta=0$). ``scores`` is a list of per-party arrays of shape (n,).
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2 or scores.shape[1] == 0:
        raise ValueError("scores must be a list of per-party score vectors of equal length")
    if not np.all(np.isfinite(scores)) or np.any(scores < 0):
        raise ValueError("scores must be finite and non-negative")
    total = scores.sum(0) + 1.0 / scores.shape[1]
    return total / total.sum()


def _probabilities(probabilities) -> np.ndarray:
    p = np.asarray(probabilities, dtype=float)
    if (p.ndim != 1 or p.size == 0 or not np.all(np.isfinite(p)) or np.any(p < 0)
            or not np.isclose(p.sum(), 1.0)):
        raise ValueError("probabilities must be a non-negative vector summing to 1")
    return p


def inclusion_probabilities(probabilities, m: int) -> np.ndarray:
    r"""$\pi_i=\min(1,c\,p_i)$ with $c$ such that $\sum_i\pi_i=m$: sampling proportional to $p$
    without replacement.

    The rows whose $c\,p_i$ would exceed 1 are kept for sure ($\pi_i=1$) and $c$ is solved
    again on the rest, until no new row is capped (at most $m$ rounds). Needs at least $m$
    rows with $p_i>0$.
    """
    p = _probabilities(probabilities)
    m = check_int(m, "m", minimum=1, maximum=p.size)
    if np.count_nonzero(p) < m:
        raise ValueError(f"sampling {m} distinct rows needs at least {m} rows with p_i > 0; "
                         f"got {np.count_nonzero(p)}")
    capped = np.zeros(p.size, bool)
    while True:
        rest = p[~capped].sum()
        if capped.sum() == m or rest == 0:  # every row left has p_i = 0, or none is left
            return capped.astype(float)
        c = (m - capped.sum()) / rest
        new = ~capped & (c * p >= 1)
        if not new.any():
            break
        capped |= new
    return np.where(capped, 1.0, np.minimum(c * p, 1.0))


def _draw(p, m: int, rng, *, replace: bool, cdf=None):
    """``m`` row indices and their weights, one entry per draw (length ``m``).

    With replacement: i.i.d. draws from ``p`` by inverting the cdf, weight $1/(m p_i)$ each
    (a row drawn twice appears twice). Without: randomised systematic sampling of $m$ distinct
    rows with inclusion probabilities $\\pi$: the rows in a random order lay intervals of
    lengths $\\pi_i\\le1$ end to end on $[0,m)$; one uniform start $u$ and the points
    $u, u+1, \\dots, u+m-1$ pick the rows whose interval they fall in, each row with
    probability exactly $\\pi_i$ (Madow's design with a random order). Weight $1/\\pi_i$.
    """
    if replace:
        if cdf is None:
            cdf = np.cumsum(p)
        draws = np.minimum(np.searchsorted(cdf / cdf[-1], rng.random(m), side="right"),
                           p.size - 1)
        return draws, 1.0 / (m * p[draws])
    pi = inclusion_probabilities(p, m)
    order = rng.permutation(p.size)
    edges = np.cumsum(pi[order])
    edges *= m / edges[-1]  # the intervals tile [0, m) exactly
    points = rng.random() + np.arange(m)
    chosen = order[np.minimum(np.searchsorted(edges, points, side="right"), p.size - 1)]
    return chosen, 1.0 / pi[chosen]


@dataclass(frozen=True)
class Coreset:
    """A weighted coreset; unpacks as ``indices, weights``.

    Attributes
    ----------
    indices : array of int
        The distinct rows drawn, sorted.
    weights : array of float
        With replacement, $w_i=c_i/(m\\,p_i)$ for a row drawn $c_i$ times in $m$ i.i.d.
        draws; without, $w_i=1/\\pi_i$ (:func:`inclusion_probabilities`).
    probabilities : array, shape (n,)
        The sampling distribution $p$.
    floats_sent : array of int, shape (T,)
        Floats each party sends: $n$ scores (none for uniform sampling), then its features of
        the drawn rows (the label holder also their labels).
    floats_full : int
        Floats the whole data set would cost: $n(d+1)$.
    replace : bool
        Whether the rows were drawn with replacement (the sampler the theory covers).
    """

    indices: np.ndarray
    weights: np.ndarray
    probabilities: np.ndarray
    floats_sent: np.ndarray
    floats_full: int
    replace: bool = True

    def __iter__(self):
        return iter((self.indices, self.weights))

    @property
    def floats_total(self) -> int:
        return int(self.floats_sent.sum())


def sample_coreset(probabilities, m: int, *, widths, scored: bool = True, seed=0,
                   replace: bool = True) -> Coreset:
    r"""Draw a coreset of size ``m`` from ``probabilities`` and weight it.

    ``replace=True`` (default, the sampler of the paper's theory): $m$ i.i.d. draws, weight
    $1/(m\,p_i)$ per draw, so at most $m$ distinct rows. ``replace=False``: exactly $m$
    distinct rows with inclusion probabilities $\pi_i=\min(1,c\,p_i)$, weight $1/\pi_i$
    (Horvitz-Thompson; see the module's note). Either way
    $\mathbb E\sum_{i\in S}w_if_i=\sum_if_i$ for any $f$.

    ``widths`` are the parties' numbers of columns (the label holder's counted with its label
    column), for the count of floats sent; ``scored`` says whether the parties sent scores.
    """
    p = _probabilities(probabilities)
    m = check_int(m, "m", minimum=1, maximum=p.size)
    replace = _check_replace(replace)
    rng = as_generator(seed)
    draws, per_draw = _draw(p, m, rng, replace=replace)
    indices, first, counts = np.unique(draws, return_index=True, return_counts=True)
    weights = counts * per_draw[first]
    widths = np.asarray(widths, dtype=int)
    sent = widths * indices.size + (p.size if scored else 0)
    return Coreset(indices, weights, p, sent, int(p.size * widths.sum()), replace)


def coreset(blocks, y, m: int, *, method: str, lam: float, seed=0,
            label_party: int = -1, replace: bool = True) -> Coreset:
    r"""A weighted coreset of ``m`` draws for data held as vertical blocks.

    Each party $j$ scores its rows from $X^{(j)}$ alone (:func:`party_scores`; the party
    ``label_party`` holds the labels and scores $[X^{(j)},y]$ for the leverage scores); the
    server forms $p$ (:func:`sampling_probabilities`) and draws (:func:`sample_coreset`).

    Parameters
    ----------
    blocks : list of arrays, each (n, d_j)
        The parties' feature blocks, same rows.
    y : array, shape (n,)
        Labels (real for ridge, $\pm1$ for the Lewis methods).
    m : int
        Number of draws, $1\le m\le n$; with replacement the coreset has at most $m$ distinct
        rows, without it exactly $m$.
    method : {"uniform", "leverage", "ridge", "lewis", "lewis-aug"}
    lam : float
        The penalty $\lambda$ of the objective (used by ``"ridge"`` and ``"lewis-aug"``).
    seed : int or Generator, optional
    replace : bool
        i.i.d. draws with replacement (default; what the paper's theory covers) or distinct
        rows with Horvitz-Thompson weights.

    Returns
    -------
    Coreset
        Unpacks as ``(indices, weights)``; also holds $p$ and the floats sent per party.
    """
    blocks, y = _blocks(blocks, y)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    n = blocks[0].shape[0]
    m = check_int(m, "m", minimum=1, maximum=n)
    lam = check_scalar(lam, "lam", minimum=0, open_minimum=method in ("ridge", "lewis-aug"))
    replace = _check_replace(replace)
    if method in ("lewis", "lewis-aug"):
        _check_labels_pm1(y)
    holder = range(len(blocks))[label_party]
    widths = [b.shape[1] + (j == holder) for j, b in enumerate(blocks)]
    if method == "uniform":
        return sample_coreset(np.full(n, 1.0 / n), m, widths=widths, scored=False,
                              seed=seed, replace=replace)
    scores = [party_scores(b, method, lam, labels=y if j == holder else None)
              for j, b in enumerate(blocks)]
    return sample_coreset(sampling_probabilities(scores), m, widths=widths, seed=seed,
                          replace=replace)
