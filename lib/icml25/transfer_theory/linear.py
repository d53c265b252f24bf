r"""Deep linear networks on finite data sets, and the transfer experiment built on them.

* Endpoints of training for one data set: :func:`min_norm_interpolator`,
  :func:`finetune_endpoint`.
* Training: weight-space gradient descent on a deep linear network (:func:`init_deep_linear`,
  :func:`end_to_end`, :func:`deep_linear_gd`) and the end-to-end gradient flow of a balanced
  network (:func:`gradient_flow`), batched over instances; ridge read-out on frozen features,
  :func:`linear_transfer`.
* The experiment: source/target tasks (:func:`make_tasks`) and scratch, linear transfer and
  fine-tuning on a whole :math:`(\sigma,\gamma,\theta,\text{seed})` grid
  (:func:`simulate_transfer`, :class:`TransferSimulation`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml25.common.streams import as_generator, stream
from icml25.common.validation import check_int

from ._common import LEARNERS, _angles, _array
from .closed_forms import _balanced_norm

__all__ = [
    "min_norm_interpolator",
    "finetune_endpoint",
    "init_deep_linear",
    "end_to_end",
    "deep_linear_gd",
    "gradient_flow",
    "linear_transfer",
    "make_tasks",
    "TransferSimulation",
    "simulate_transfer",
]


# --------------------------------------------------------------------------- end points


def _design(X) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim < 2 or X.shape[-1] < 1 or X.shape[-2] < 1:
        raise ValueError(f"X must have shape (..., n, d) with n, d >= 1; got {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values")
    return X


def _labels(y, X: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=float)
    if y.ndim < 1 or y.shape[-1] != X.shape[-2]:
        raise ValueError(f"y must have shape (..., n) with n = {X.shape[-2]}; got {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinite values")
    return y


def _vector(v, X: np.ndarray, name: str) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    if v.ndim < 1 or v.shape[-1] != X.shape[-1]:
        raise ValueError(f"{name} must have shape (..., d) with d = {X.shape[-1]}; got {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return v


def min_norm_interpolator(X, y) -> np.ndarray:
    r"""Minimum-norm least-squares solution :math:`\hat\beta=X^+y` (Theorem 3.5's end point).

    Gradient flow from a vanishing initialisation reaches it: updates live in the row space of
    :math:`X`. Batched: ``X`` (..., n, d), ``y`` (..., n) broadcast; returns (..., d).
    """
    X = _design(X)
    y = _labels(y, X)
    return np.einsum("...dn,...n->...d", np.linalg.pinv(X), y)


def finetune_endpoint(X, y, beta_init, depth: int = 2) -> np.ndarray:
    r"""End point of gradient flow on a balanced deep linear network started at ``beta_init``.

    .. math:: \hat\beta=X^+y+c\,(I-P)\beta_0,\qquad \|\hat\beta\|^2=\|X^+y\|^2+c^2a,\quad
              c=(\|\hat\beta\|/\|\beta_0\|)^{(L-1)/L},

    :math:`a=\|(I-P)\beta_0\|^2`, :math:`P=X^+X`: the row-space part interpolates, the
    null-space part is rescaled only (the finite-sample form of
    :func:`~icml25.transfer_theory.closed_forms.finetune_scale`).
    """
    X = _design(X)
    y = _labels(y, X)
    beta0 = _vector(beta_init, X, "beta_init")
    L = check_int(depth, "depth", minimum=2)
    pinv = np.linalg.pinv(X)
    row = np.einsum("...dn,...n->...d", pinv, y)
    null0 = beta0 - np.einsum("...dn,...nk,...k->...d", pinv, X, beta0)
    t = _balanced_norm((null0**2).sum(-1), (row**2).sum(-1), np.linalg.norm(beta0, axis=-1), L)
    r0 = np.linalg.norm(beta0, axis=-1)
    c = np.where(r0 > 0, (t / np.where(r0 > 0, r0, 1.0)) ** ((L - 1) / L), 0.0)
    return row + c[..., None] * null0


# --------------------------------------------------------------------------- deep linear nets


def init_deep_linear(d: int, depth: int = 2, scale: float = 1e-3, *, batch=(), rng=None):
    r"""Small random weights :math:`W_l=\alpha G_l/\sqrt d` (:math:`d\times d`, :math:`l<L`),
    :math:`w_L=\alpha g` (:math:`d`), the official code's ``init='rand'``.

    Returns a list of ``depth`` arrays with leading ``batch`` dimensions.
    """
    d = check_int(d, "d", minimum=1)
    L = check_int(depth, "depth", minimum=2)
    alpha = float(_array(scale, "scale", low=0.0, strict_low=True))
    rng = as_generator(rng)
    batch = tuple(np.atleast_1d(batch).astype(int)) if np.size(batch) else ()
    hidden = [alpha * rng.standard_normal((*batch, d, d)) / np.sqrt(d) for _ in range(L - 1)]
    return [*hidden, alpha * rng.standard_normal((*batch, d))]


def end_to_end(weights) -> np.ndarray:
    r"""The network's linear map :math:`\beta=W_1W_2\cdots W_{L-1}w_L`."""
    beta = weights[-1]
    for W in reversed(weights[:-1]):
        beta = np.einsum("...ij,...j->...i", W, beta)
    return beta


def deep_linear_gd(weights, target, *, cov=None, lr: float = 0.05, steps: int = 1000):
    r"""Full-batch gradient descent on the weights of a deep linear network.

    Minimises :math:`\tfrac12\beta^\top\Sigma\beta-b^\top\beta` (the mean squared error up to a
    constant, with :math:`\Sigma=X^\top X/n`, :math:`b=X^\top y/n`); ``cov=None`` is the
    population source loss :math:`\tfrac12\|\beta-\beta_s\|^2` with ``target`` :math:`=\beta_s`.
    With :math:`g=\Sigma\beta-b`, the gradient of layer :math:`l` is
    :math:`(W_1\cdots W_{l-1})^\top g\,(W_{l+1}\cdots w_L)^\top`, computed with matrix-vector
    products only: :math:`O(Ld^2)` per step and instance.

    Parameters
    ----------
    weights : list of arrays
        From :func:`init_deep_linear` (not modified).
    target : array (..., d)
        :math:`b` (or :math:`\beta_s` for the population loss).
    cov : array (..., d, d), optional
        :math:`\Sigma`.
    lr : float
        Step size. Gradient flow conserves the balance :math:`W_l^\top W_l-W_{l+1}W_{l+1}^\top`;
        a large step breaks it.
    steps : int
        Number of steps.
    """
    if len(weights) < 2:
        raise ValueError("a deep linear network needs at least 2 layers")
    weights = [np.array(W, dtype=float) for W in weights]
    d = weights[-1].shape[-1]
    b = np.asarray(target, dtype=float)
    if b.shape[-1] != d:
        raise ValueError(f"target must have shape (..., {d}); got {b.shape}")
    lr = float(_array(lr, "lr", low=0.0, strict_low=True))
    steps = check_int(steps, "steps", minimum=0)
    for _ in range(steps):
        suffix = [weights[-1]]
        for W in reversed(weights[1:-1]):
            suffix.insert(0, np.einsum("...ij,...j->...i", W, suffix[0]))
        beta = np.einsum("...ij,...j->...i", weights[0], suffix[0])
        g = beta - b if cov is None else np.einsum("...ij,...j->...i", cov, beta) - b
        grads, p = [], g
        for layer, W in enumerate(weights[:-1]):
            grads.append(p[..., :, None] * suffix[layer][..., None, :])
            p = np.einsum("...ji,...j->...i", W, p)
        grads.append(p)
        weights = [W - lr * G for W, G in zip(weights, grads)]
    return weights


@dataclass(frozen=True)
class FlowResult:
    """End point of :func:`gradient_flow`: ``beta`` (..., d), ``steps`` and ``converged`` (...)."""

    beta: np.ndarray
    steps: np.ndarray
    converged: np.ndarray


def _norm_from_row(row2, n0, r0, depth):
    """Norm t of beta from its row part (squared) and the conserved null part (see _flow_eig)."""
    if depth == 2:  # t^2 = row2 + n0 t / r0, a quadratic
        return 0.5 * (n0 / r0 + np.sqrt((n0 / r0) ** 2 + 4 * row2))
    return _balanced_norm(n0, row2, r0, depth, iterations=60)


def _flow_rows(lam, b, row, n0, r0, depth, step, max_steps, tol, check=50):
    r"""Euler steps of the balanced flow on the row-space coordinates of a batch of instances.

    Rows are instances. ``lam`` (B, r) > 0 are the nonzero eigenvalues of Σ, ``b`` and ``row``
    (B, r) the data vector and the start in that eigenbasis. The null-space part is never
    stepped: it equals :math:`\kappa` times its start, :math:`\kappa=(t/r_0)^{(L-1)/L}` with
    :math:`t=\|\beta\|`, :math:`t^2=\|\beta_{row}\|^2+\kappa^2 n_0` (``n0``: squared null
    part at the start, ``r0``: norm at the start). Returns the rows, :math:`\kappa`, steps and
    convergence flags.
    """
    B = len(b)
    out, kappa_out = row.copy(), np.ones(B)
    used, done = np.full(B, max_steps), np.zeros(B, bool)
    lmax = lam.max(1)
    L, p = depth, 2 - 2 / depth
    active = np.arange(B)
    for t in range(1, max_steps + 1):
        g = lam * row - b
        norm = _norm_from_row((row * row).sum(1), n0, r0, L)
        radial = (row * g).sum(1) / norm
        pre = norm**p
        rate = step * pre / (lmax * L * np.maximum(1.0, pre))
        row = row - rate[:, None] * (g + ((L - 1) * radial / norm)[:, None] * row)
        if t % check == 0 or t == max_steps:
            small = np.sqrt((g * g).sum(1)) <= tol
            finished = small | (t == max_steps)
            if finished.any():
                idx = active[finished]
                out[idx], used[idx], done[idx] = row[finished], t, small[finished]
                norm = _norm_from_row((row[finished] ** 2).sum(1), n0[finished], r0[finished], L)
                kappa_out[idx] = (norm / r0[finished]) ** ((L - 1) / L)
                keep = ~finished
                active, row, lam, b = active[keep], row[keep], lam[keep], b[keep]
                n0, r0, lmax = n0[keep], r0[keep], lmax[keep]
                if not len(active):
                    break
    return out, kappa_out, used, done


def _flow_eig(lam, b, beta, depth, step, max_steps, tol):
    """Balanced flow in the eigenbasis of Σ (eigenvalues ascending, so the null space first).

    Instances are grouped by the size of their null space; within a group the null
    coordinates are the leading ones and only the rest is stepped (see _flow_rows).
    """
    out = beta.copy()
    used, done = np.zeros(len(b), int), np.zeros(len(b), bool)
    zeros = (lam == 0).sum(1)
    r0 = np.linalg.norm(beta, axis=1)
    for k in np.unique(zeros):
        idx = np.flatnonzero(zeros == k)
        if k == lam.shape[1]:  # X = 0: nothing to fit, the flow stays where it starts
            done[idx] = True
            continue
        null0 = beta[idx, :k]
        row, kappa, used[idx], done[idx] = _flow_rows(
            lam[idx, k:], b[idx, k:], beta[idx, k:], (null0**2).sum(1), r0[idx], depth, step,
            max_steps, tol)
        out[idx, :k], out[idx, k:] = kappa[:, None] * null0, row
    return out, used, done


def gradient_flow(X, y, beta_init, *, depth: int = 2, step: float = 1.0,
                  max_steps: int = 20_000, tol: float = 1e-6) -> FlowResult:
    r"""Gradient flow of a balanced deep linear network on :math:`\tfrac1{2n}\|X\beta-y\|^2`.

    For balanced layers (small initialisation, or a pretrained network) the end-to-end map
    follows (Arora, Cohen & Hazan 2018, single output)

    .. math:: \dot\beta=-\|\beta\|^{2-2/L}\Big(g+(L-1)\,\hat\beta\hat\beta^\top g\Big),\qquad
              g=\Sigma\beta-b,

    integrated by explicit Euler in the eigenbasis of :math:`\Sigma=X^\top X/n` (:math:`O(d)` per
    step), with a step :math:`\eta/(L\lambda_{\max}\max(1,\|\beta\|^{2-2/L}))` (a change of time
    that leaves the path unchanged). The null-space part of :math:`\beta` only scales, as
    :math:`(\|\beta\|/\|\beta_0\|)^{(L-1)/L}` times its start; that conserved quantity is imposed
    after every step so the discretisation cannot drift from it. Scratch training is
    ``beta_init`` tiny and random; fine-tuning starts at the pretrained :math:`\beta_s`.

    Parameters
    ----------
    X : array (..., n, d)
        Designs (batched; the eigendecomposition is done once per design).
    y : array (..., n)
        Labels; broadcast with ``X``'s batch dimensions.
    beta_init : array (..., d)
        Start of the flow, nonzero; broadcast too.
    depth : int
        Number of layers :math:`L\ge2`.
    step : float
        :math:`\eta\in(0, 2)`: the Euler step in units of the stability limit.
    max_steps : int
        Step budget per instance.
    tol : float
        Stop an instance when :math:`\|g\|\le` ``tol``.
    """
    X = _design(X)
    y = _labels(y, X)
    beta0 = _vector(beta_init, X, "beta_init")
    L = check_int(depth, "depth", minimum=2)
    eta = float(_array(step, "step", low=0.0, strict_low=True, high=2.0))
    max_steps = check_int(max_steps, "max_steps", minimum=1)
    tol = float(_array(tol, "tol", low=0.0, strict_low=True))
    if np.any(np.linalg.norm(beta0, axis=-1) == 0):
        raise ValueError("beta_init must be nonzero (the origin is a saddle the flow never leaves)")
    n = X.shape[-2]
    lam, Q = np.linalg.eigh(np.swapaxes(X, -1, -2) @ X / n)
    lam = np.where(lam > 1e-9 * lam[..., -1:], lam, 0.0)
    b = np.einsum("...dk,...d->...k", Q, np.einsum("...n,...nd->...d", y, X) / n)
    b = np.where(lam == 0, 0.0, b)  # X^T y lies in the row space: drop rounding noise
    z0 = np.einsum("...dk,...d->...k", Q, beta0)
    shape = np.broadcast_shapes(lam.shape, b.shape, z0.shape)
    flat = [np.broadcast_to(v, shape).reshape(-1, shape[-1]) for v in (lam, b, z0)]
    z, used, done = _flow_eig(*flat, L, eta, max_steps, tol)
    z = z.reshape(shape)
    beta = np.einsum("...dk,...k->...d", Q, z)
    return FlowResult(beta, used.reshape(shape[:-1]), done.reshape(shape[:-1]))


def linear_transfer(X, y, features, lam: float = 0.0):
    r"""Linear transfer: ridge read-out on frozen features, :math:`\hat\beta=Wc` with

    .. math:: F=XW,\qquad c=(F^\top F+n\lambda I)^{-1}F^\top y,

    as in the official code (:math:`\lambda=0` uses the pseudo-inverse). For a pretrained
    balanced network, :math:`W=W_1\cdots W_{L-1}` is rank one along :math:`\beta_s`.

    Parameters
    ----------
    X : array (..., n, d)
    y : array (..., n)
    features : array (..., d, k)
        :math:`W`; batch dimensions broadcast with ``X`` and ``y``.
    lam : float
        :math:`\lambda\ge0`.

    Returns
    -------
    beta : array (..., d)
    coef : array (..., k)
    """
    X = _design(X)
    y = _labels(y, X)
    W = np.asarray(features, dtype=float)
    if W.ndim < 2 or W.shape[-2] != X.shape[-1]:
        raise ValueError(f"features must have shape (..., {X.shape[-1]}, k); got {W.shape}")
    lam = float(_array(lam, "lam", low=0.0))
    n, k = X.shape[-2], W.shape[-1]
    F = X @ W
    gram = np.swapaxes(F, -1, -2) @ F + n * lam * np.eye(k)
    rhs = np.einsum("...nk,...n->...k", F, y)
    inv = np.linalg.inv(gram) if lam > 0 else np.linalg.pinv(gram, hermitian=True)
    coef = np.einsum("...kj,...j->...k", inv, rhs)
    return np.einsum("...dk,...k->...d", W, coef), coef


# --------------------------------------------------------------------------- experiments


@dataclass(frozen=True)
class Tasks:
    r"""Source/target directions for ``seeds`` repetitions: ``beta_s``, ``beta_perp`` (S, d)."""

    beta_s: np.ndarray
    beta_perp: np.ndarray

    def target(self, thetas) -> np.ndarray:
        r""":math:`\beta_t=\cos\theta\,\beta_s+\sin\theta\,\beta_\perp`, shape (θ, S, d)."""
        th = _angles(thetas)[:, None, None]
        return np.cos(th) * self.beta_s + np.sin(th) * self.beta_perp


def make_tasks(d: int, seeds: int, seed: int = 0) -> Tasks:
    """Random orthonormal pairs :math:`(\\beta_s,\\beta_\\perp)`, one per repetition, drawn
    from the stream ``"tasks"`` of ``seed``."""
    d, seeds = check_int(d, "d", minimum=2), check_int(seeds, "seeds", minimum=1)
    rng = as_generator(stream(seed, "tasks"))
    Q, _ = np.linalg.qr(rng.standard_normal((seeds, d, 2)))
    return Tasks(Q[..., 0], Q[..., 1])


@dataclass(frozen=True)
class TransferSimulation:
    r"""Risks of the three learners on a grid: arrays of shape (σ, γ, θ, seed).

    ``risk[name]`` for ``name`` in ``("scratch", "linear", "finetune")``; ``steps`` and
    ``converged`` of the two trained learners; the grid and the size ``d``.
    """

    d: int
    gammas: np.ndarray
    thetas: np.ndarray
    sigmas: np.ndarray
    risk: dict
    steps: dict
    converged: dict

    def gain(self, learner: str) -> np.ndarray:
        """Transferability :math:`R_{sc}-R` of ``learner`` per instance."""
        return self.risk["scratch"] - self.risk[learner]

    @property
    def n(self) -> np.ndarray:
        return np.maximum(1, np.rint(self.gammas * self.d)).astype(int)


def simulate_transfer(d: int, gammas, thetas, sigmas=(0.0,), *, seeds: int = 4, seed: int = 0,
                      depth: int = 2, lam: float = 0.0, init_scale: float = 1e-6,
                      step: float = 1.0, max_steps: int = 20_000,
                      tol: float = 1e-6) -> TransferSimulation:
    r"""Scratch, linear transfer and fine-tuning on :math:`n=\gamma d` samples, whole grid.

    Per repetition: a source :math:`\beta_s`; pretraining by :func:`gradient_flow` on the
    population loss (:math:`\Sigma=I`) from a tiny random start. Per :math:`(\gamma,`
    repetition): one Gaussian design :math:`X` and one noise vector :math:`\epsilon`, shared by
    every :math:`(\sigma,\theta)` so that the learners and the grid points are paired. Scratch
    and fine-tuning run as one batched :func:`gradient_flow` per :math:`\gamma`; linear transfer
    is :func:`linear_transfer` on the rank-one pretrained feature.

    Parameters
    ----------
    d : int
        Dimension :math:`d`.
    gammas, thetas, sigmas : 1-D arrays
        The grid: :math:`\gamma>0`, :math:`\theta\in[0,\pi]`, :math:`\sigma\ge0`.
    seeds, seed : int
        Repetitions and the seed of all draws: named streams of ``seed``
        (:func:`icml25.common.streams.stream`) for the tasks, the pretraining start and each
        :math:`\gamma`'s design, noise and scratch start.
    depth, lam, init_scale, step, max_steps, tol
        Network depth :math:`L`, ridge :math:`\lambda` of linear transfer, norm of the random
        start of scratch training, and the flow's settings (:func:`gradient_flow`).
    """
    d, seeds, L = check_int(d, "d", minimum=2), check_int(seeds, "seeds", minimum=1), check_int(depth, "depth", minimum=2)
    gammas = np.atleast_1d(_array(gammas, "gammas", low=0.0, strict_low=True))
    thetas = np.atleast_1d(_angles(thetas, "thetas"))
    sigmas = np.atleast_1d(_array(sigmas, "sigmas", low=0.0))
    if any(v.ndim != 1 for v in (gammas, thetas, sigmas)):
        raise ValueError("gammas, thetas and sigmas must be 1-D")
    eps = float(_array(init_scale, "init_scale", low=0.0, strict_low=True))
    tasks = make_tasks(d, seeds, seed)
    rng = as_generator(stream(seed, "pretraining start"))
    start = rng.standard_normal((seeds, d))
    start *= eps / np.linalg.norm(start, axis=1, keepdims=True)
    pre = gradient_flow(np.eye(d), tasks.beta_s @ np.eye(d), start, depth=L, step=step,
                        max_steps=max_steps, tol=tol * 1e-2)
    beta_pre = pre.beta                                          # (S, d), ≈ beta_s
    size = np.linalg.norm(beta_pre, axis=1)
    feature = (beta_pre / size[:, None] * size[:, None] ** ((L - 1) / L))[..., None]
    beta_t = tasks.target(thetas)                                # (θ, S, d)
    shape = (len(sigmas), len(gammas), len(thetas), seeds)
    risk = {k: np.empty(shape) for k in LEARNERS}
    steps = {k: np.empty(shape, int) for k in ("scratch", "finetune")}
    converged = {k: np.empty(shape, bool) for k in ("scratch", "finetune")}
    for i, gamma in enumerate(gammas):
        n = max(1, int(round(gamma * d)))
        draw = as_generator(stream(seed, f"design, noise, scratch start {i}"))
        X = draw.standard_normal((seeds, n, d))
        noise = draw.standard_normal((seeds, n))
        y = (np.einsum("snd,tsd->tsn", X, beta_t)[None]
             + sigmas[:, None, None, None] * noise)              # (σ, θ, S, n)
        scratch0 = draw.standard_normal((len(sigmas), len(thetas), seeds, d))
        scratch0 *= eps / np.linalg.norm(scratch0, axis=-1, keepdims=True)
        starts = np.stack([scratch0, np.broadcast_to(beta_pre, scratch0.shape)])
        flow = gradient_flow(X, y, starts, depth=L, step=step, max_steps=max_steps, tol=tol)
        for j, name in enumerate(("scratch", "finetune")):
            risk[name][:, i] = ((flow.beta[j] - beta_t) ** 2).sum(-1)
            steps[name][:, i], converged[name][:, i] = flow.steps[j], flow.converged[j]
        beta_lt, _ = linear_transfer(X, y, feature, lam)
        risk["linear"][:, i] = ((beta_lt - beta_t) ** 2).sum(-1)
    return TransferSimulation(d, gammas, thetas, sigmas, risk, steps, converged)
