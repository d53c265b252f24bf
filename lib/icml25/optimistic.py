r"""Optimistic optimisation with learned partitions (Sunkara & Tripathy, ICML 2025).

Black-box minimisation of $f:\mathcal X=\prod_i[\ell_i,u_i]\to\mathbb R$ with a fixed budget of
$n$ evaluations, judged by the *simple regret* $r_n=f(x_n)-\min_{\mathcal X} f$ of the best
point found.

* :func:`sequool`: SequOOL (Bartlett, Gabillon & Valko, 2019), the deterministic optimistic
  optimiser on a ternary tree of boxes. With $n'$ openings it explores depths
  $h=0,\dots,h_{\max}$, $h_{\max}=\lfloor n'/\overline{\log}(n')\rfloor$
  ($\overline{\log}(n')=\sum_{i\le n'}1/i$), opening at depth $h\ge1$ the
  $\lfloor h_{\max}/h\rfloor$ boxes of lowest centre value; a box is cut in three equal slabs
  along axis $h \bmod d$ (round robin); the middle child keeps its parent's centre value, the
  two outer ones cost one evaluation each.
* :func:`learned_partition`: the paper's learned-subspace variant (its Algorithms 1 and 2).
  Gradients of $f$ are sensed by finite differences at $m_x$ points on the unit sphere around
  the domain's centre along $m_\phi$ Rademacher directions, each recovered by basis pursuit
  ($\ell_1$, :func:`basis_pursuit`), and the top-$m$ right singular vectors $V$ of the
  recovered gradients span the learned subspace; SequOOL then partitions the box of
  coordinates $\alpha\in\mathbb R^m$, $x=c+V\alpha$, instead of $\mathcal X$.
* Peers measured in the same runs: :func:`direct` (SciPy's DIRECT), :func:`random_search`,
  :func:`cma_es` (the ``cma`` package).
* :func:`make_problem`: multi-index test functions $f(x)=g(A(x-x^\star))$, $A\in\mathbb
  R^{m\times d}$ with orthonormal rows, on $[-5,5]^d$, with $\min f=0$.

Every optimiser evaluates $f$ through :class:`CountedFunction`, which refuses the evaluation
that would exceed the budget: no method calls $f$ more than ``budget`` times, and the learning
samples of :func:`learned_partition` are counted in the same budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.linalg import subspace_angles

from icml25.common.streams import stream
from icml25.common.validation import check_int

__all__ = [
    "BudgetExhausted",
    "CountedFunction",
    "Problem",
    "Result",
    "basis_pursuit",
    "cma_es",
    "direct",
    "harmonic",
    "learn_subspace",
    "learned_partition",
    "make_problem",
    "principal_angle",
    "random_search",
    "sequool",
    "sequool_schedule",
    "FUNCTIONS",
    "METHODS",
    "benchmark",
    "win_rate",
]

FUNCTIONS = ("sphere", "ellipsoid", "sharp_ridge", "rastrigin", "branin", "styblinski_tang")


# ---------------------------------------------------------------------------- validation


def _bounds(bounds) -> np.ndarray:
    try:
        b = np.asarray(bounds, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a (d, 2) array of numbers; got {bounds!r}")
    if b.ndim != 2 or b.shape[1] != 2 or b.shape[0] == 0:
        raise ValueError(f"bounds must be a non-empty (d, 2) array; got shape {b.shape}")
    if not np.all(np.isfinite(b)):
        raise ValueError("bounds must be finite")
    if np.any(b[:, 1] <= b[:, 0]):
        bad = np.flatnonzero(b[:, 1] <= b[:, 0])
        raise ValueError(f"bounds must have lower < upper in every row; rows {bad.tolist()} "
                         "are empty or inverted")
    return b


def _callable(f):
    if not callable(f):
        raise ValueError(f"f must be callable; got {type(f).__name__}")
    return f


# ---------------------------------------------------------------------------- counting


class BudgetExhausted(RuntimeError):
    """Raised by :class:`CountedFunction` instead of evaluating beyond the budget."""


class CountedFunction:
    r"""$f$ behind a counter: every evaluation counted, none beyond ``budget``.

    Call it with a point ``(d,)`` or a batch ``(k, d)``; it returns the values, records the
    best-so-far value after every evaluation and the best point. A call that would take the
    count past the budget raises :class:`BudgetExhausted` *before* evaluating anything.

    Parameters
    ----------
    f : callable
        The objective; a point ``(d,)`` to a float, or with ``vectorized=True`` a batch
        ``(k, d)`` to ``(k,)`` values.
    budget : int
        The largest number of evaluations $n$.
    vectorized : bool
        Whether ``f`` takes batches.
    """

    def __init__(self, f: Callable, budget: int, *, vectorized: bool = False,
                 history: bool = False):
        self.f = _callable(f)
        self.points: list[np.ndarray] | None = [] if history else None
        self.budget = check_int(budget, "budget", minimum=1)
        self.vectorized = bool(vectorized)
        self.count = 0
        self.best = np.inf
        self.best_x: np.ndarray | None = None
        self._trace: list[np.ndarray] = []

    @property
    def remaining(self) -> int:
        return self.budget - self.count

    def __call__(self, x):
        x = np.asarray(x, dtype=float)
        single = x.ndim == 1
        batch = x[None] if single else x
        k = batch.shape[0]
        if k > self.remaining:
            raise BudgetExhausted(f"{k} evaluations requested, {self.remaining} left")
        if self.vectorized:
            values = np.asarray(self.f(batch), dtype=float).reshape(k)
        else:
            values = np.array([float(self.f(row)) for row in batch])
        if np.any(np.isnan(values)):
            raise ValueError("f returned NaN")
        self.count += k
        if self.points is not None:
            self.points.append(batch.copy())
        best_so_far = np.minimum.accumulate(np.r_[self.best, values])[1:]
        self._trace.append(best_so_far)
        i = int(np.argmin(values))
        if values[i] < self.best:
            self.best, self.best_x = float(values[i]), batch[i].copy()
        return float(values[0]) if single else values

    def result(self, **extra) -> "Result":
        trace = np.concatenate(self._trace) if self._trace else np.empty(0)
        if self.points is not None:
            extra.setdefault("info", {})["points"] = np.concatenate(self.points)
        return Result(x=self.best_x, fun=self.best, n_evals=self.count, trace=trace, **extra)


@dataclass
class Result:
    """The outcome of one optimisation run.

    Attributes
    ----------
    x : ndarray (d,)
        The best point evaluated.
    fun : float
        Its value $\\min_{t\\le n} f(x_t)$.
    n_evals : int
        Evaluations of $f$ used, learning samples included; never more than the budget.
    trace : ndarray (n_evals,)
        Best value after each evaluation.
    subspace : ndarray (d, m), optional
        The learned subspace's orthonormal basis $V$ (:func:`learned_partition` only).
    n_learn : int
        Evaluations spent learning the subspace.
    """

    x: np.ndarray | None
    fun: float
    n_evals: int
    trace: np.ndarray
    subspace: np.ndarray | None = None
    n_learn: int = 0
    info: dict = field(default_factory=dict)

    def best_at(self, n) -> np.ndarray:
        """Best value after ``n`` evaluations (array-like; the last value beyond the trace)."""
        n = np.atleast_1d(np.asarray(n, dtype=int))
        if np.any(n < 1):
            raise ValueError("n must be >= 1")
        return self.trace[np.minimum(n, self.trace.size) - 1]


# ---------------------------------------------------------------------------- SequOOL


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


# ---------------------------------------------------------------------------- learned subspace


def basis_pursuit(phi, y, *, iterations: int = 1000, rho: float | None = None) -> np.ndarray:
    r"""Basis pursuit for a batch: $\hat g_j=\arg\min\|g\|_1$ s.t. $\Phi g=y_j$, by ADMM.

    ADMM on $\min\|z\|_1+\iota\{\Phi x=y\}$ with $x=z$ (Boyd et al., 2011, §6.2):
    $x\leftarrow\Pi(z-u)$, $z\leftarrow S_{1/\rho}(x+u)$, $u\leftarrow u+x-z$, where
    $\Pi(v)=v-\Phi^\top(\Phi\Phi^\top)^{-1}(\Phi v-y)$ projects on the affine set and $S$ is
    soft thresholding. All columns of ``y`` are solved at once; the iteration stops early
    when both residuals $\|x-z\|_\infty$ and $\|z-z_{\text{prev}}\|_\infty$ fall below
    $10^{-10}\max|x_0|$.

    Parameters
    ----------
    phi : array (k, d)
        Sensing matrix $\Phi$ of full row rank $k<d$.
    y : array (k,) or (k, p)
        Measurements, one column per vector to recover.
    iterations : int
        Most ADMM steps.
    rho : float, optional
        Penalty; by default $10/\mathrm{median}|y|$-scaled so the threshold suits the data.

    Returns
    -------
    ndarray (d,) or (d, p)
    """
    phi = np.asarray(phi, dtype=float)
    y = np.asarray(y, dtype=float)
    if phi.ndim != 2 or phi.shape[0] > phi.shape[1]:
        raise ValueError(f"phi must be a (k, d) matrix with k <= d; got shape {phi.shape}")
    single = y.ndim == 1
    Y = y[:, None] if single else y
    if Y.ndim != 2 or Y.shape[0] != phi.shape[0]:
        raise ValueError(f"y must have {phi.shape[0]} rows; got shape {y.shape}")
    if not (np.all(np.isfinite(phi)) and np.all(np.isfinite(Y))):
        raise ValueError("phi and y must be finite")
    iterations = check_int(iterations, "iterations", minimum=1)
    gram = phi @ phi.T
    if np.linalg.matrix_rank(gram) < phi.shape[0]:
        raise ValueError("phi must have full row rank")
    pinv = phi.T @ np.linalg.inv(gram)                      # (d, k)
    x0 = pinv @ Y                                            # least-norm solution
    scale = np.median(np.abs(x0)) if np.any(x0) else 1.0
    rho = 1.0 / max(scale, 1e-300) if rho is None else float(rho)
    if not rho > 0:
        raise ValueError(f"rho must be positive; got {rho}")
    proj = np.eye(phi.shape[1]) - pinv @ phi
    z, u = x0.copy(), np.zeros_like(x0)
    tol = 1e-10 * max(float(np.abs(x0).max()), 1e-300)
    for step in range(iterations):
        x = proj @ (z - u) + x0
        v = x + u
        z_old = z
        z = np.sign(v) * np.maximum(np.abs(v) - 1.0 / rho, 0.0)
        u += x - z
        # stop once primal and dual residuals are at round-off level
        if step % 25 == 24 and np.abs(x - z).max() < tol and np.abs(z - z_old).max() < tol:
            break
    x = proj @ z + x0                                        # feasible end point
    return x[:, 0] if single else x


def learn_subspace(fc: CountedFunction, centre, active_dim: int, points: int, *,
                   directions: int = 4, step: float = 1e-3, radius: float = 1.0,
                   rng=None) -> np.ndarray:
    r"""Algorithm 1: the top-$m$ right singular vectors of recovered gradients.

    $m_x$ points $X_j=c+r\,\xi_j/\|\xi_j\|$, $\xi_j\sim\mathcal N(0,I_d)$; a Rademacher matrix
    $\Phi\in\{\pm1/\sqrt{m_\phi}\}^{m_\phi\times d}$ (redrawn until full row rank); forward
    differences $Y_{ij}=(f(X_j+\epsilon\phi_i)-f(X_j))/\epsilon\approx\phi_i^\top\nabla f(X_j)$;
    $\hat g_j$ by :func:`basis_pursuit`; $V$ = top-$m$ right singular vectors of
    $[\hat g_1,\dots,\hat g_{m_x}]^\top$. Costs $m_x(m_\phi+1)$ evaluations of ``fc``. With
    $m_\phi\ge d$ ($m_\phi$ is capped at $d$) $\Phi$ is invertible and $\hat g_j$ is the
    forward-difference gradient itself.

    Returns
    -------
    ndarray (d, m) with orthonormal columns.
    """
    rng = np.random.default_rng(rng)
    centre = np.asarray(centre, dtype=float)
    d = centre.size
    directions = min(directions, d)          # d directions already determine the gradient
    xi = rng.standard_normal((points, d))
    X = centre + radius * xi / np.linalg.norm(xi, axis=1, keepdims=True)
    while True:
        phi = rng.choice([-1.0, 1.0], size=(directions, d)) / np.sqrt(directions)
        if np.linalg.matrix_rank(phi) == directions:
            break
    base = fc(X)                                                   # (m_x,)
    shifted = (X[:, None, :] + step * phi[None]).reshape(-1, d)
    Y = (fc(shifted).reshape(points, directions) - base[:, None]) / step
    G = basis_pursuit(phi, Y.T).T if directions < d else np.linalg.solve(phi, Y.T).T
    _, _, vt = np.linalg.svd(G, full_matrices=False)
    return vt[:active_dim].T


def learned_partition(f: Callable, bounds, budget: int, *, active_dim: int, seed=None,
                      learn_fraction: float = 0.2, directions: int = 4, step: float = 1e-3,
                      radius: float = 1.0, subspace=None, vectorized: bool = False,
                      history: bool = False) -> Result:
    r"""SequOOL in a learned $m$-dimensional subspace (the paper's Algorithms 1 and 2).

    Spends $m_x(m_\phi+1)$ evaluations, $m_x=\lfloor\lambda n/(m_\phi+1)\rfloor$ with
    $\lambda=$ ``learn_fraction``, on :func:`learn_subspace`, then runs SequOOL with the rest
    on the box of coordinates $\alpha$ of $x=c+V\alpha$ ($c$ the domain's centre), whose side
    $i$ is the range of $v_i^\top(x-c)$ over the domain,
    $\pm\sum_j|V_{ji}|(u_j-\ell_j)/2$; points outside the domain are clipped to it.

    Parameters
    ----------
    f, bounds, budget, vectorized, history
        As in :func:`sequool`; the budget covers the learning samples too.
    active_dim : int
        The assumed dimension $m$ of the subspace, $1\le m\le d$.
    seed : int or Generator, optional
        Randomness of the learning samples.
    learn_fraction : float in (0, 1)
        Share $\lambda$ of the budget spent learning.
    directions : int
        $m_\phi$, sensing directions per point.
    step : float
        Finite-difference step $\epsilon$.
    radius : float
        Radius of the sphere of learning points around $c$.
    subspace : array (d, m), optional
        Use this basis instead of learning one (an oracle; no evaluations spent).
    """
    box = _bounds(bounds)
    d = box.shape[0]
    active_dim = check_int(active_dim, "active_dim", minimum=1)
    if active_dim > d:
        raise ValueError(f"active_dim must be <= d = {d}; got {active_dim}")
    if not 0 < learn_fraction < 1:
        raise ValueError(f"learn_fraction must lie in (0, 1); got {learn_fraction!r}")
    directions = check_int(directions, "directions", minimum=1)
    if not step > 0 or not radius > 0:
        raise ValueError(f"step and radius must be positive; got {step!r}, {radius!r}")
    fc = CountedFunction(f, budget, vectorized=vectorized, history=history)
    centre = box.mean(axis=1)
    if subspace is None:
        points = int(learn_fraction * fc.budget) // (min(directions, d) + 1)
        if points < active_dim:
            raise ValueError(f"budget {budget} is too small to learn a {active_dim}-dimensional"
                             f" subspace with learn_fraction={learn_fraction}")
        V = learn_subspace(fc, centre, active_dim, points, directions=directions, step=step,
                           radius=radius, rng=seed)
    else:
        V = np.asarray(subspace, dtype=float)
        if V.shape != (d, active_dim):
            raise ValueError(f"subspace must have shape ({d}, {active_dim}); got {V.shape}")
    n_learn = fc.count
    half = np.abs(V).T @ ((box[:, 1] - box[:, 0]) / 2)              # (m,)
    alpha_box = np.c_[-half, half]
    low, high = box[:, 0], box[:, 1]

    def to_x(alpha):
        return np.clip(centre + alpha @ V.T, low, high)

    _sequool_box(fc, to_x, alpha_box)
    return fc.result(subspace=V, n_learn=n_learn)


def principal_angle(V, W) -> float:
    """Largest principal angle (radians) between the column spans of ``V`` and ``W``."""
    V, W = np.asarray(V, dtype=float), np.asarray(W, dtype=float)
    if V.ndim != 2 or W.ndim != 2 or V.shape[0] != W.shape[0]:
        raise ValueError(f"V and W must be (d, m) matrices with equal d; got {V.shape}, "
                         f"{W.shape}")
    return float(np.max(subspace_angles(V, W)))


# ---------------------------------------------------------------------------- peers


def random_search(f: Callable, bounds, budget: int, *, seed=None,
                  vectorized: bool = False) -> Result:
    """``budget`` points uniform in the box; the best is kept."""
    box = _bounds(bounds)
    fc = CountedFunction(f, budget, vectorized=vectorized)
    rng = np.random.default_rng(seed)
    fc(rng.uniform(box[:, 0], box[:, 1], size=(fc.budget, box.shape[0])))
    return fc.result()


def direct(f: Callable, bounds, budget: int, *, locally_biased: bool = False) -> Result:
    """SciPy's DIRECT (``scipy.optimize.direct``, Jones et al. 1993), stopped at ``budget``."""
    from scipy.optimize import direct as scipy_direct

    box = _bounds(bounds)
    fc = CountedFunction(f, budget)
    try:
        scipy_direct(fc, [tuple(b) for b in box], maxfun=fc.budget, maxiter=10**6, eps=1e-4,
                     locally_biased=locally_biased, vol_tol=0.0, len_tol=0.0)
    except BudgetExhausted:
        pass
    return fc.result()


def cma_es(f: Callable, bounds, budget: int, *, seed=None, sigma0: float = 0.3,
           vectorized: bool = False) -> Result:
    """CMA-ES (the ``cma`` package, Hansen) from the box's centre, step ``sigma0`` x width.

    The search runs in coordinates scaled to $[0,1]^d$ with cma's box constraints; each
    generation is evaluated as one batch and the last one is cut to what the budget allows.
    """
    import cma

    box = _bounds(bounds)
    d = box.shape[0]
    fc = CountedFunction(f, budget, vectorized=vectorized)
    width = box[:, 1] - box[:, 0]
    seed_int = int(np.random.default_rng(seed).integers(1, 2**31 - 1))
    es = cma.CMAEvolutionStrategy(np.full(d, 0.5), sigma0, {
        "bounds": [0.0, 1.0], "seed": seed_int, "verbose": -9, "maxfevals": np.inf,
        "tolfun": 0.0, "tolx": 0.0, "tolfunhist": 0.0, "tolstagnation": 10**9,
        "tolflatfitness": 10**9})
    while fc.remaining > 0 and not es.stop():
        asked = es.ask()
        unit = np.clip(np.array(asked), 0.0, 1.0)
        take = min(len(unit), fc.remaining)
        values = np.atleast_1d(fc(box[:, 0] + unit[:take] * width))
        if take < len(unit):
            break
        es.tell(asked, list(values))
    return fc.result()


# ---------------------------------------------------------------------------- test functions


def _t_osz(z):
    """COCO's oscillation transform $T_{osz}$ (Hansen et al., 2009)."""
    nz = z != 0
    zh = np.where(nz, np.log(np.abs(np.where(nz, z, 1.0))), 0.0)
    c1 = np.where(z > 0, 10.0, 5.5)
    c2 = np.where(z > 0, 7.9, 3.1)
    return np.where(nz, np.sign(z) * np.exp(zh + 0.049 * (np.sin(c1 * zh) + np.sin(c2 * zh))),
                    0.0)


def _t_asy(z, beta=0.2):
    """COCO's asymmetry transform $T^{\\beta}_{asy}$ along the last axis."""
    m = z.shape[-1]
    w = np.arange(m) / (m - 1) if m > 1 else np.zeros(1)
    pos = np.maximum(z, 0.0)
    return np.where(z > 0, pos ** (1 + beta * w * np.sqrt(pos)), z)


_BRANIN_MIN = (np.pi, 2.275)
_ST_ARGMIN = -2.903534027771177


def _g(name: str, z: np.ndarray) -> np.ndarray:
    """The low-dimensional part $g$, minimum 0 at $z=0$; ``z`` is (k, m)."""
    if name == "sphere":
        return (z**2).sum(-1)
    if name == "ellipsoid":
        m = z.shape[-1]
        c = 10.0 ** (6 * np.arange(m) / (m - 1)) if m > 1 else np.ones(1)
        return (c * _t_osz(z) ** 2).sum(-1)
    if name == "sharp_ridge":
        return z[:, 0] ** 2 + 10.0 * np.linalg.norm(z[:, 1:], axis=-1)
    if name == "rastrigin":
        t = _t_asy(_t_osz(z))
        return 10 * (z.shape[-1] - np.cos(2 * np.pi * t).sum(-1)) + (t**2).sum(-1)
    if name == "branin":
        x1, x2 = z[:, 0] + _BRANIN_MIN[0], z[:, 1] + _BRANIN_MIN[1]
        b = 5.1 / (4 * np.pi**2)
        val = (x2 - b * x1**2 + 5 / np.pi * x1 - 6) ** 2 + 10 * (1 - 1 / (8 * np.pi)) * np.cos(
            x1) + 10
        return val - 5 / (4 * np.pi)          # the minimum 0.397887... = 5/(4 pi)
    if name == "styblinski_tang":
        t = z + _ST_ARGMIN
        per = 0.5 * (t**4 - 16 * t**2 + 5 * t) - 0.5 * (
            _ST_ARGMIN**4 - 16 * _ST_ARGMIN**2 + 5 * _ST_ARGMIN)
        return per.sum(-1)
    raise ValueError(f"unknown function {name!r}; choose from {', '.join(FUNCTIONS)}")


@dataclass(frozen=True)
class Problem:
    r"""A multi-index function $f(x)=g(A(x-x^\star))$ on ``bounds``, $\min f=0$.

    ``f`` takes a point ``(d,)`` (returns a float) or a batch ``(k, d)`` (returns ``(k,)``).
    """

    name: str
    A: np.ndarray
    x_star: np.ndarray
    bounds: np.ndarray

    @property
    def d(self) -> int:
        return self.A.shape[1]

    @property
    def active_dim(self) -> int:
        return self.A.shape[0]

    def f(self, x):
        x = np.asarray(x, dtype=float)
        z = (np.atleast_2d(x) - self.x_star) @ self.A.T
        val = _g(self.name, z)
        return float(val[0]) if x.ndim == 1 else val


def make_problem(name: str, d: int, *, active_dim: int = 2, seed=None,
                 half_width: float = 5.0) -> Problem:
    r"""A random multi-index test problem on $[-w,w]^d$.

    $A$ is the first $m$ rows of a random orthogonal matrix (QR of a Gaussian, signs fixed);
    $x^\star$ is uniform in the box, redrawn until its projection $A^\top Ax^\star$ on the
    active subspace lies in the box too. ``g``: ``sphere`` $\|z\|^2$; ``ellipsoid``
    $\sum_i10^{6(i-1)/(m-1)}T_{osz}(z)_i^2$; ``sharp_ridge`` $z_1^2+10\|z_{2:}\|$;
    ``rastrigin`` $10(m-\sum\cos2\pi\tilde z_i)+\|\tilde z\|^2$,
    $\tilde z=T_{asy}^{0.2}(T_{osz}(z))$; ``branin`` (needs $m=2$) and ``styblinski_tang``
    shifted so that one global minimiser is $z=0$ and the minimum is 0.
    """
    if name not in FUNCTIONS:
        raise ValueError(f"unknown function {name!r}; choose from {', '.join(FUNCTIONS)}")
    d = check_int(d, "d", minimum=1)
    active_dim = check_int(active_dim, "active_dim", minimum=1)
    if active_dim > d:
        raise ValueError(f"active_dim must be <= d = {d}; got {active_dim}")
    if name == "branin" and active_dim != 2:
        raise ValueError("branin is two-dimensional: active_dim must be 2")
    if name == "sharp_ridge" and active_dim < 2:
        raise ValueError("sharp_ridge needs active_dim >= 2")
    if not half_width > 0:
        raise ValueError(f"half_width must be positive; got {half_width!r}")
    rng = np.random.default_rng(seed)
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    q = q * np.sign(np.diag(r))
    A = q[:, :active_dim].T.copy()
    bounds = np.tile([-half_width, half_width], (d, 1))
    for _ in range(10_000):
        x_star = rng.uniform(-half_width, half_width, d)
        if np.all(np.abs(A.T @ (A @ x_star)) <= half_width):
            break
    else:  # pragma: no cover - the projection is shorter, so this is all but impossible
        raise RuntimeError("could not place the optimum")
    return Problem(name, A, x_star, bounds)


# ---------------------------------------------------------------------------- benchmark

#: The methods of :func:`benchmark`: SequOOL and the learned variants are rerun per budget
#: (their trees depend on it); the peers run once at the largest budget and are read off
#: their best-so-far traces (their runs do not depend on the budget).
METHODS = ("sequool", "learned", "learned_fd", "direct", "cma_es", "random")
ANYTIME = ("direct", "cma_es", "random")


@dataclass
class Benchmark:
    """Simple regrets of :func:`benchmark`.

    Attributes
    ----------
    regret : dict method -> ndarray (functions, dims, seeds, budgets)
        $f(x_n)-\\min f$ of the best point after each budget (floored at 0).
    angle : dict method -> ndarray (functions, dims, seeds, budgets)
        Largest principal angle (radians) of the learned subspace (learned methods only).
    seconds : dict method -> float
        Wall-clock seconds spent in each method, all runs together.
    evals : dict method -> int
        Evaluations made by each method, all runs together.
    """

    functions: tuple
    dims: tuple
    seeds: tuple
    budgets: tuple
    regret: dict
    angle: dict
    seconds: dict
    evals: dict
    max_evals_over_budget: int = 0


def _run(method: str, problem: Problem, budget: int, seed) -> Result:
    f, b, m = problem.f, problem.bounds, problem.active_dim
    if method == "sequool":
        return sequool(f, b, budget, vectorized=True)
    if method == "learned":
        return learned_partition(f, b, budget, active_dim=m, seed=seed, vectorized=True)
    if method == "learned_fd":
        return learned_partition(f, b, budget, active_dim=m, seed=seed, vectorized=True,
                                 directions=problem.d)
    if method == "direct":
        return direct(f, b, budget)
    if method == "cma_es":
        return cma_es(f, b, budget, seed=seed, vectorized=True)
    if method == "random":
        return random_search(f, b, budget, seed=seed, vectorized=True)
    raise ValueError(f"unknown method {method!r}; choose from {', '.join(METHODS)}")


def benchmark(functions, dims, seeds, budgets, *, methods=METHODS, active_dim: int = 2,
              assumed_dim: int | None = None) -> Benchmark:
    r"""Every method on every problem ``make_problem(name, d, seed=...)``, for each seed.

    Seeds: each seed $s$ (a non-negative int, e.g. a run's replication seed) gives, per
    function and $d$, two independent named streams (:func:`icml25.common.streams.stream`):
    ``"problem {name} d={d}"`` draws the problem, ``"search {name} d={d}"`` the methods'
    randomness. ``assumed_dim`` (default ``active_dim``) is the $m$ given to the learned
    methods, to study a wrong guess.
    """
    functions, dims, seeds = tuple(functions), tuple(dims), tuple(seeds)
    budgets = tuple(check_int(n, "budget", minimum=1) for n in budgets)
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown method {m!r}; choose from {', '.join(METHODS)}")
    assumed = (active_dim if assumed_dim is None
               else check_int(assumed_dim, "assumed_dim", minimum=1))
    import time

    shape = (len(functions), len(dims), len(seeds), len(budgets))
    regret = {m: np.full(shape, np.nan) for m in methods}
    angle = {m: np.full(shape, np.nan) for m in methods if m.startswith("learned")}
    seconds = {m: 0.0 for m in methods}
    evals = {m: 0 for m in methods}
    over = 0
    for i, name in enumerate(functions):
        for j, d in enumerate(dims):
            for k, s in enumerate(seeds):
                problem = make_problem(name, d, active_dim=active_dim,
                                       seed=stream(int(s), f"problem {name} d={d}"))
                run_problem = Problem(problem.name, problem.A, problem.x_star, problem.bounds)
                for m in methods:
                    rng_seed = stream(int(s), f"search {name} d={d}")
                    runs = [max(budgets)] if m in ANYTIME else budgets
                    for n in runs:
                        start = time.perf_counter()
                        if m.startswith("learned") and assumed != active_dim:
                            res = learned_partition(
                                run_problem.f, run_problem.bounds, n, active_dim=assumed,
                                seed=rng_seed, vectorized=True,
                                directions=d if m == "learned_fd" else 4)
                        else:
                            res = _run(m, run_problem, n, rng_seed)
                        seconds[m] += time.perf_counter() - start
                        evals[m] += res.n_evals
                        over = max(over, res.n_evals - n)
                        if m in ANYTIME:
                            regret[m][i, j, k] = np.maximum(res.best_at(budgets), 0.0)
                        else:
                            b = budgets.index(n)
                            regret[m][i, j, k, b] = max(res.fun, 0.0)
                            if m in angle:
                                angle[m][i, j, k, b] = principal_angle(res.subspace,
                                                                       problem.A.T)
    return Benchmark(functions, dims, seeds, budgets, regret, angle, seconds, evals, over)


def win_rate(ours, theirs, *, floor: float = 1e-10, n_boot: int = 2000, seed=0):
    r"""Share of paired runs where ``ours`` has the lower regret, with a 95% bootstrap interval.

    Regrets below ``floor`` count as equal (both solved to floating-point precision); a tie
    counts one half. The interval resamples the pairs (each pair is an independent problem).

    Returns
    -------
    rate : float
    interval : (float, float)
    """
    a = np.maximum(np.ravel(np.asarray(ours, dtype=float)), floor)
    b = np.maximum(np.ravel(np.asarray(theirs, dtype=float)), floor)
    if a.shape != b.shape or a.size == 0:
        raise ValueError(f"ours and theirs must be non-empty and paired; got {a.shape}, "
                         f"{b.shape}")
    if np.any(np.isnan(a)) or np.any(np.isnan(b)):
        raise ValueError("regrets must not be NaN")
    score = (a < b) + 0.5 * (a == b)
    rng = np.random.default_rng(seed)
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    boot = score[rng.integers(0, score.size, (n_boot, score.size))].mean(1)
    return float(score.mean()), (float(np.quantile(boot, 0.025)),
                                 float(np.quantile(boot, 0.975)))
