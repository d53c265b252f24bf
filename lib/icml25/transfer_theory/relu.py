r"""The nonlinear analogue: a mean-field two-layer ReLU student and a ReLU teacher whose source
version lacks a fraction :math:`\mu` of its neurons (the paper's Section 4, at small scale).

Exact population risks through the arc-cosine kernel (:func:`relu_kernel`,
:func:`relu_population_risk`, :func:`relu_out_of_span`); training (:func:`relu_pretrain` on the
population loss, :func:`relu_fit` on samples, :func:`relu_linear_transfer`); the experiment
:func:`simulate_relu_transfer` (:class:`ReluSimulation`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml25.common.streams import as_generator, stream
from icml25.common.validation import check_int

from ._common import LEARNERS, _array, _integers

__all__ = [
    "relu_kernel",
    "relu_population_risk",
    "relu_out_of_span",
    "relu_pretrain",
    "relu_fit",
    "relu_linear_transfer",
    "ReluSimulation",
    "simulate_relu_transfer",
]


def _norms(A):
    return np.sqrt((A * A).sum(-1))


def _cosines(A, B):
    na, nb = _norms(A), _norms(B)
    safe = np.where(na > 0, na, 1.0)[..., :, None] * np.where(nb > 0, nb, 1.0)[..., None, :]
    return na, nb, np.clip(A @ np.swapaxes(B, -1, -2) / safe, -1.0, 1.0)


def relu_kernel(A, B) -> np.ndarray:
    r"""Arc-cosine kernel :math:`k(a,b)=\mathbb E_{x\sim\mathcal N(0,I)}[\mathrm{relu}(a^\top x)\,
    \mathrm{relu}(b^\top x)]` for all row pairs.

    .. math:: k(a,b)=\|a\|\|b\|\,\frac{\sqrt{1-u^2}+u\,(\pi-\arccos u)}{2\pi},\quad
              u=\frac{a^\top b}{\|a\|\|b\|}.

    ``A`` (..., p, d) and ``B`` (..., q, d) give (..., p, q).
    """
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    if A.ndim < 2 or B.ndim < 2 or A.shape[-1] != B.shape[-1]:
        raise ValueError(f"A and B must be (..., p, d) and (..., q, d); got {A.shape}, {B.shape}")
    na, nb, u = _cosines(A, B)
    shape = (np.sqrt(1 - u * u) + u * (np.pi - np.arccos(u))) / (2 * np.pi)
    return na[..., :, None] * nb[..., None, :] * shape


def relu_population_risk(W, c, V, a) -> np.ndarray:
    r"""Population risk :math:`\mathbb E(f-f_*)^2` of the mean-field student
    :math:`f(x)=\frac1m\sum_i c_i\,\mathrm{relu}(w_i^\top x)` against the teacher
    :math:`f_*(x)=\sum_j a_j\,\mathrm{relu}(v_j^\top x)`, exactly, through :func:`relu_kernel`.
    """
    W, c, V, a = (np.asarray(v, dtype=float) for v in (W, c, V, a))
    m = W.shape[-2]
    cs = c / m
    return (np.einsum("...i,...ij,...j->...", cs, relu_kernel(W, W), cs)
            - 2 * np.einsum("...i,...ij,...j->...", cs, relu_kernel(W, V), a)
            + np.einsum("...i,...ij,...j->...", a, relu_kernel(V, V), a))


def relu_out_of_span(features, V, a) -> float:
    r"""Fraction of a ReLU teacher outside the span of a set of ReLU features, the analogue of
    :math:`\sin^2\theta`:

    .. math:: \rho=\frac{\|f_t-P_Sf_t\|^2}{\|f_t\|^2},\qquad
              S=\operatorname{span}\{\mathrm{relu}(w^\top x):w\in\text{features}\}
              \subset L^2(\mathcal N(0,I)),

    from Gram matrices of the arc-cosine kernel (the paper's Section 4 and Appendix E). With
    the source teacher's neurons as ``features`` it is the floor of linear transfer from an
    ideally pretrained network; with a student's pretrained neurons, the floor of that student.

    Parameters
    ----------
    features : array (p, d)
        Feature neurons :math:`w` (rows).
    V : array (k, d)
        Teacher neurons; ``a`` (k,): its output weights.
    """
    F, V, a = (np.asarray(v, dtype=float) for v in (features, V, a))
    if F.ndim != 2 or V.ndim != 2 or a.shape != V.shape[:1] or F.shape[1] != V.shape[1]:
        raise ValueError(f"need features (p, d), V (k, d), a (k,); got {F.shape}, {V.shape}, "
                         f"{a.shape}")
    total = a @ relu_kernel(V, V) @ a
    if total <= 0:
        raise ValueError("the teacher is the zero function")
    if len(F) == 0:
        return 1.0
    cross = relu_kernel(F, V) @ a
    inside = cross @ np.linalg.pinv(relu_kernel(F, F), rtol=1e-10, hermitian=True) @ cross
    return float(np.clip(1 - inside / total, 0.0, 1.0))


def _relu_population_grads(W, c, V, a):
    """Gradients of ½E(f - f*)² times m (mean-field scaling) w.r.t. c and W."""
    m = W.shape[-2]
    nw, _, u_ww = _cosines(W, W)
    _, nv, u_wv = _cosines(W, V)
    unit = W / np.where(nw > 0, nw, 1.0)[..., None]
    coef_w, coef_v = c[..., None, :] / m, -a[..., None, :]
    resid = (relu_kernel(W, W) * coef_w).sum(-1) + (relu_kernel(W, V) * coef_v).sum(-1)
    # d k(w, b) / dw = ((pi - angle) b + |b| sin(angle) w/|w|) / (2 pi)
    angle_ww, angle_wv = np.arccos(u_ww), np.arccos(u_wv)
    along = ((np.pi - angle_ww) * coef_w) @ W + ((np.pi - angle_wv) * coef_v) @ V
    radial = ((nw[..., None, :] * np.sqrt(1 - u_ww**2) * coef_w).sum(-1)
              + (nv[..., None, :] * np.sqrt(1 - u_wv**2) * coef_v).sum(-1))
    grad_W = c[..., None] * (along + radial[..., None] * unit) / (2 * np.pi)
    return resid, grad_W


def relu_pretrain(W, c, V, a, *, lr: float = 0.5, steps: int = 1000):
    r"""Mean-field gradient descent on the *population* loss :math:`\tfrac12\mathbb E(f-f_s)^2`.

    Exact gradients from the arc-cosine kernel, e.g.
    :math:`\nabla_a k(a,b)=\frac{(\pi-\phi)\,b+\|b\|\sin\phi\,\hat a}{2\pi}`; each neuron moves
    at rate ``lr`` :math:`\times m` times its gradient (mean-field scaling).
    """
    W, c = np.array(W, dtype=float), np.array(c, dtype=float)
    V, a = np.asarray(V, dtype=float), np.asarray(a, dtype=float)
    lr = float(_array(lr, "lr", low=0.0, strict_low=True))
    for _ in range(check_int(steps, "steps", minimum=0)):
        grad_c, grad_W = _relu_population_grads(W, c, V, a)
        c -= lr * grad_c
        W -= lr * grad_W
    return W, c


def relu_fit(W, c, X, y, *, lr: float = 0.5, steps: int = 1000):
    r"""Mean-field full-batch gradient descent on :math:`\frac1{2n}\sum_k(f(x_k)-y_k)^2`.

    Batched: ``W`` (..., m, d), ``c`` (..., m), ``X`` (..., n, d), ``y`` (..., n). Computed in
    float32 (four times faster here; the risk is evaluated in float64 afterwards).
    """
    W, c = np.array(W, dtype=np.float32), np.array(c, dtype=np.float32)
    X, y = np.asarray(X, dtype=np.float32), np.asarray(y, dtype=np.float32)
    lr = np.float32(_array(lr, "lr", low=0.0, strict_low=True))
    m, n = W.shape[-2], X.shape[-2]
    Xt = np.swapaxes(X, -1, -2)
    for _ in range(check_int(steps, "steps", minimum=0)):
        H = X @ np.swapaxes(W, -1, -2)
        A = np.maximum(H, 0)
        r = (A @ c[..., None])[..., 0] / m - y
        grad_c = (np.swapaxes(A, -1, -2) @ r[..., None])[..., 0] / n
        grad_W = np.swapaxes((Xt @ ((H > 0) * r[..., None] * c[..., None, :])), -1, -2) / n
        c = c - lr * grad_c
        W = W - lr * grad_W
    return W.astype(float), c.astype(float)


def relu_linear_transfer(W, X, y, lam: float = 1e-2):
    r"""Ridge read-out on the frozen ReLU features :math:`\phi_i(x)=\mathrm{relu}(w_i^\top x)`.

    Returns output weights ``c`` in the student's convention (:math:`f=\frac1m\sum c_i\phi_i`).
    """
    W, X, y = (np.asarray(v, dtype=float) for v in (W, X, y))
    lam = float(_array(lam, "lam", low=0.0))
    m, n = W.shape[-2], X.shape[-2]
    Phi = np.maximum(X @ np.swapaxes(W, -1, -2), 0)
    gram = np.swapaxes(Phi, -1, -2) @ Phi + n * lam * np.eye(m)
    coef = np.linalg.solve(gram, np.swapaxes(Phi, -1, -2) @ y[..., None])[..., 0]
    return m * coef


@dataclass(frozen=True)
class ReluSimulation:
    r"""Relative risks :math:`R/\|f_t\|^2`, arrays (μ, n, seed), of the three learners.

    ``out_of_span`` (μ, seed): :func:`relu_out_of_span` of the source's neurons;
    ``student_floor`` (μ, seed): the same for the pretrained student's neurons;
    ``source_distance`` (μ, seed): :math:`\|f_t-f_s\|^2/\|f_t\|^2`, how far the pretrained
    function starts from the target (the fine-tuning analogue of :math:`2-2\cos\theta`).
    """

    mus: np.ndarray
    ns: np.ndarray
    risk: dict
    out_of_span: np.ndarray
    student_floor: np.ndarray
    source_distance: np.ndarray
    pretrain_risk: np.ndarray

    def gain(self, learner: str) -> np.ndarray:
        return self.risk["scratch"] - self.risk[learner]


def simulate_relu_transfer(d: int, k: int, m: int, mus, ns, *, seeds: int = 3, seed: int = 0,
                           lr: float = 0.5, pretrain_steps: int = 1000, steps: int = 1000,
                           lam: float = 1e-2, sigma: float = 0.0) -> ReluSimulation:
    r"""Teacher-student transfer with ReLU networks (the paper's Section 4, at small scale).

    Target teacher :math:`f_t(x)=\frac1k\sum_{j\le k}\mathrm{relu}(v_j^\top x)`, unit
    :math:`v_j`; the source teacher drops the last :math:`\mathrm{round}(\mu k)` neurons. The
    student (:math:`m` neurons, mean-field scaling) is pretrained on the source's population
    loss, then: *linear transfer* (ridge read-out, :func:`relu_linear_transfer`), *fine-tuning*
    (all weights, :func:`relu_fit`) and *scratch* (the same initialisation, not pretrained) on
    ``n`` target samples. Risks are exact population risks.
    """
    d, k, m, seeds = (check_int(v, name, minimum=1) for v, name in ((d, "d"), (k, "k"), (m, "m"), (seeds, "seeds")))
    mus = np.atleast_1d(_array(mus, "mus", low=0.0, high=1.0))
    ns = _integers(np.atleast_1d(ns), "ns", 1)
    sigma = float(_array(sigma, "sigma", low=0.0))
    if np.any(np.rint(mus * k) >= k):
        raise ValueError("every mu must leave at least one source neuron: round(mu * k) < k")
    rng = as_generator(stream(seed, "teachers and initialisation"))
    V = rng.standard_normal((seeds, k, d))
    V /= _norms(V)[..., None]
    a_t = np.full((seeds, k), 1.0 / k)
    keep = np.arange(k)[None, :] < k - np.rint(mus * k)[:, None]        # (μ, k)
    a_s = keep[:, None, :] * a_t[None]                                   # (μ, S, k)
    W0 = rng.standard_normal((seeds, m, d)) / np.sqrt(d)
    c0 = rng.standard_normal((seeds, m))
    Vb = np.broadcast_to(V, (len(mus), *V.shape))
    Wp, cp = relu_pretrain(np.broadcast_to(W0, (len(mus), *W0.shape)),
                           np.broadcast_to(c0, (len(mus), *c0.shape)), Vb, a_s, lr=lr,
                           steps=pretrain_steps)
    norm_t = np.einsum("si,sij,sj->s", a_t, relu_kernel(V, V), a_t)
    pre_risk = relu_population_risk(Wp, cp, Vb, a_s) / np.maximum(
        np.einsum("usi,sij,usj->us", a_s, relu_kernel(V, V), a_s), 1e-300)
    span = np.array([[relu_out_of_span(V[s][keep[u]], V[s], a_t[s]) for s in range(seeds)]
                     for u in range(len(mus))])
    floor = np.array([[relu_out_of_span(Wp[u, s], V[s], a_t[s]) for s in range(seeds)]
                      for u in range(len(mus))])
    dist = np.einsum("usi,sij,usj->us", a_t - a_s, relu_kernel(V, V), a_t - a_s) / norm_t
    shape = (len(mus), len(ns), seeds)
    risk = {name: np.empty(shape) for name in LEARNERS}
    for j, n in enumerate(ns):
        draw = as_generator(stream(seed, f"target samples {j}"))
        X = draw.standard_normal((seeds, int(n), d))
        y = (np.maximum(X @ np.swapaxes(V, -1, -2), 0) @ a_t[..., None])[..., 0]
        y = y + sigma * draw.standard_normal(y.shape)
        c_lt = relu_linear_transfer(Wp, X, y, lam)
        risk["linear"][:, j] = relu_population_risk(Wp, c_lt, Vb, a_t) / norm_t
        starts_W = np.concatenate([Wp, W0[None]])                        # (μ + 1, S, m, d)
        starts_c = np.concatenate([cp, c0[None]])
        Wf, cf = relu_fit(starts_W, starts_c, X, y, lr=lr, steps=steps)
        fitted = relu_population_risk(Wf, cf, V, a_t) / norm_t          # (μ + 1, S)
        risk["finetune"][:, j], risk["scratch"][:, j] = fitted[:-1], fitted[-1]
    return ReluSimulation(mus, ns, risk, span, floor, dist, pre_risk)
