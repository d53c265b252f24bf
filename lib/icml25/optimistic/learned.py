r"""SequOOL on a learned partition (the paper's Algorithm 2)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from icml25.common.validation import check_int

from .counting import CountedFunction, Result, _bounds
from .sequool import _sequool_box
from .subspace import learn_subspace, neural_subspace

LEARNERS = ("sensing", "neural")


def learned_partition(f: Callable, bounds, budget: int, *, active_dim: int, seed=0,
                      learn_fraction: float = 0.2, learn_evals: int | None = None,
                      learner: str = "sensing", directions: int = 4, step: float = 1e-3,
                      radius: float = 1.0, hidden: int = 64, subspace=None,
                      clip: bool = True, vectorized: bool = False,
                      history: bool = False) -> Result:
    r"""SequOOL in a learned $m$-dimensional subspace (the paper's Algorithms 1 and 2).

    Spends $L$ evaluations learning a basis $V$ ($L=\lfloor\lambda n\rfloor$ with
    $\lambda=$ ``learn_fraction``, or ``learn_evals``), then runs SequOOL with the other
    $n-L$ on the box of coordinates $\alpha$ of $x=c+V\alpha$ ($c$ the domain's centre),
    whose side $i$ is the range of $v_i^\top(x-c)$ over the domain,
    $\pm\sum_j|V_{ji}|(u_j-\ell_j)/2$. The learning samples are part of the budget: to
    spend them *on top of* a search budget $n$, as the paper's released code does, pass
    ``budget`` $=n+L$ and ``learn_evals`` $=L$.

    Two learners: ``"sensing"`` (:func:`learn_subspace`, :math:`m_x=\lfloor L/(m_\phi+1)\rfloor`
    points, compressed sensing with :math:`m_\phi` directions; with :math:`m_\phi\ge d` plain
    forward differences) and ``"neural"`` (:func:`neural_subspace`, $L$ uniform samples).

    Points of the plane outside the domain: with ``clip=True`` (default) they are clipped to
    the domain, so every evaluation is in the domain. With ``clip=False`` they are evaluated
    where they are, as in the paper's released code; then ``info`` also holds
    ``"outside_share"`` (share of the search points outside the domain), ``"best_inside"``
    (the best value among in-domain points) and ``"best_outside"`` (whether the best point
    lies outside).

    Parameters
    ----------
    f, bounds, budget, vectorized, history
        As in :func:`~icml25.optimistic.sequool.sequool`; the budget covers the learning samples
        too.
    active_dim : int
        The assumed dimension $m$ of the subspace, $1\le m\le d$.
    seed : int, SeedSequence or Generator, optional
        Randomness of the learning samples (and of the network).
    learn_fraction : float in (0, 1)
        Share $\lambda$ of the budget spent learning (ignored with ``learn_evals``).
    learn_evals : int, optional
        Evaluations spent learning, $1\le L<n$.
    learner : {"sensing", "neural"}
        How the subspace is learned.
    directions : int
        $m_\phi$, sensing directions per point (``"sensing"``).
    step : float
        Finite-difference step $\epsilon$ (``"sensing"``).
    radius : float
        Radius of the sphere of learning points around $c$ (``"sensing"``).
    hidden : int
        Width of the network's hidden layer (``"neural"``).
    subspace : array (d, m), optional
        Use this basis instead of learning one (an oracle; no evaluations spent).
    clip : bool
        Clip the search points to the domain (see above).
    """
    box = _bounds(bounds)
    d = box.shape[0]
    active_dim = check_int(active_dim, "active_dim", minimum=1)
    if active_dim > d:
        raise ValueError(f"active_dim must be <= d = {d}; got {active_dim}")
    if not 0 < learn_fraction < 1:
        raise ValueError(f"learn_fraction must lie in (0, 1); got {learn_fraction!r}")
    if learner not in LEARNERS:
        raise ValueError(f"unknown learner {learner!r}; choose from {', '.join(LEARNERS)}")
    directions = check_int(directions, "directions", minimum=1)
    if not step > 0 or not radius > 0:
        raise ValueError(f"step and radius must be positive; got {step!r}, {radius!r}")
    fc = CountedFunction(f, budget, vectorized=vectorized, history=history or not clip)
    if learn_evals is None:
        evals = int(learn_fraction * fc.budget)
    else:
        evals = check_int(learn_evals, "learn_evals", minimum=1, maximum=fc.budget - 1)
    centre = box.mean(axis=1)
    if subspace is None:
        if learner == "sensing":
            points = evals // (min(directions, d) + 1)
            if points < active_dim:
                raise ValueError(f"budget {budget} is too small to learn a {active_dim}-"
                                 f"dimensional subspace with {evals} learning evaluations")
            V = learn_subspace(fc, centre, active_dim, points, directions=directions,
                               step=step, radius=radius, rng=seed)
        else:
            if evals < active_dim + 1:
                raise ValueError(f"budget {budget} is too small to learn a {active_dim}-"
                                 f"dimensional subspace with {evals} learning evaluations")
            V = neural_subspace(fc, box, active_dim, evals, hidden=hidden, rng=seed)
    else:
        V = np.asarray(subspace, dtype=float)
        if V.shape != (d, active_dim):
            raise ValueError(f"subspace must have shape ({d}, {active_dim}); got {V.shape}")
    n_learn = fc.count
    half = np.abs(V).T @ ((box[:, 1] - box[:, 0]) / 2)              # (m,)
    alpha_box = np.c_[-half, half]
    low, high = box[:, 0], box[:, 1]

    def to_x(alpha):
        x = centre + alpha @ V.T
        return np.clip(x, low, high) if clip else x

    _sequool_box(fc, to_x, alpha_box)
    res = fc.result(subspace=V, n_learn=n_learn)
    if not clip:
        pts, vals = res.info["points"], res.info["values"]
        inside = np.all((pts >= low) & (pts <= high), axis=1)
        search = ~inside[n_learn:]
        res.info["outside_share"] = float(search.mean()) if search.size else 0.0
        res.info["best_inside"] = float(vals[inside].min()) if inside.any() else np.inf
        res.info["best_outside"] = bool(not inside[int(np.argmin(vals))])
        if not history:
            del res.info["points"], res.info["values"]
    return res
