r"""Beyond the linear model, on real images: a small ReLU network on scikit-learn's digits.

**The tasks.** Every task detects :math:`k` digit classes: its label for an image :math:`x` of
class :math:`c(x)` is the vector :math:`f(x)\in\{0,1\}^k` with
:math:`f_j(x)=\mathbf 1[c(x)=t_j]`, for the task's ordered classes :math:`(t_1,\dots,t_k)`.
The target detects :math:`T=(t_1,\dots,t_k)`; the source at *overlap* :math:`q=j/k` detects
:math:`(t_1,\dots,t_j,u_{j+1},\dots,u_k)`, its first :math:`j` classes shared with the target
and the others drawn from the digits outside :math:`T`. On the data distribution class
indicators of different classes are orthogonal, so

.. math:: \langle f_s,f_t\rangle=q\,\|f_t\|^2,\qquad \|f_s\|=\|f_t\|,\qquad
          \cos\theta=q,\qquad \frac{\|f_t-f_s\|^2}{\|f_t\|^2}=2(1-q):

the overlap plays the angle's role. The linear theory then predicts, with features that span
exactly the source's outputs, a linear-transfer floor :math:`1-q` (the share of the target
outside the source's span) and a fine-tuning start :math:`f_s` closer to :math:`f_t` than zero
iff :math:`q>1/2` (:math:`\theta<60^\circ`).

**The network.** :math:`f(x)=W_2\,\mathrm{relu}(W_1x+b_1)+b_2`, :math:`m` hidden units, small
initialisation (scale :math:`\alpha` times the usual :math:`1/\sqrt{\text{fan-in}}`), squared
loss, full-batch Adam. Networks of a whole experiment are trained at once, batched
(``torch.bmm``); their initial weights come from numpy streams, so a seed fixes everything.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml25.common.streams import as_generator, stream
from icml25.common.validation import check_int

from ._common import LEARNERS, _array, _integers

__all__ = [
    "load_digit_images",
    "digit_task_classes",
    "detection_labels",
    "init_mlp",
    "train_mlp",
    "mlp_forward",
    "mlp_features",
    "ridge_readout",
    "DigitsSimulation",
    "simulate_digits_transfer",
]

N_CLASSES = 10


def load_digit_images():
    r"""scikit-learn's 8x8 digits (1,797 images, bundled, no download), standardised.

    Returns ``X`` (1797, 64) float: pixels centred by their mean image and divided by one
    global standard deviation (so every pixel keeps its relative scale), and ``labels``
    (1797,) int in 0..9.
    """
    from sklearn.datasets import load_digits

    data = load_digits()
    X = data.data.astype(float)
    X = X - X.mean(0)
    return X / X.std(), data.target.astype(np.int64)


def digit_task_classes(rng, k: int, overlaps):
    r"""The target's classes and, per overlap :math:`q`, the source's.

    Parameters
    ----------
    rng : numpy.random.Generator
        Draws a random order of the ten digits: the first ``k`` are the target's, the next ``k``
        the source's replacements.
    k : int
        Classes per task, ``1 <= k <= 5`` (target and replacements are disjoint).
    overlaps : array of float in [0, 1]
        Each must be a multiple of ``1/k``: the source shares its first ``q k`` classes.

    Returns
    -------
    target : (k,) int
    sources : (Q, k) int; row ``i`` shares exactly ``round(q_i k)`` classes, in the same
        output positions, with ``target`` and is nested in ``q`` (a larger overlap only swaps
        replacements for target classes).
    """
    k = check_int(k, "k", minimum=1, maximum=N_CLASSES // 2)
    q = np.atleast_1d(_array(overlaps, "overlaps", low=0.0, high=1.0))
    shared = np.rint(q * k)
    if np.any(np.abs(shared - q * k) > 1e-9):
        raise ValueError(f"every overlap must be a multiple of 1/k = {1 / k:g}; got {overlaps!r}")
    order = rng.permutation(N_CLASSES)
    target, spare = order[:k], order[k:2 * k]
    sources = np.where(np.arange(k)[None, :] < shared[:, None], target[None, :],
                       spare[None, :])
    return target, sources


def detection_labels(labels, classes) -> np.ndarray:
    r"""One-vs-rest detection labels :math:`f_j(x)=\mathbf 1[c(x)=t_j]`.

    ``labels`` (..., n) int and ``classes`` (..., k) int, broadcast over the leading axes,
    give (..., n, k) float.
    """
    labels, classes = np.asarray(labels), np.asarray(classes)
    return (labels[..., :, None] == classes[..., None, :]).astype(float)


def init_mlp(rng, batch: int, d: int, m: int, k: int, scale: float):
    r"""Small initial weights of ``batch`` networks: :math:`W_1\sim\mathcal N(0,\alpha^2/d)`,
    :math:`W_2\sim\mathcal N(0,\alpha^2/m)`, zero biases. Returns ``(W1, b1, W2, b2)`` with
    shapes (B, m, d), (B, m), (B, k, m), (B, k)."""
    batch, d, m, k = (check_int(v, name, minimum=1) for v, name in
                      ((batch, "batch"), (d, "d"), (m, "m"), (k, "k")))
    scale = float(_array(scale, "scale", low=0.0, strict_low=True))
    return (scale * rng.standard_normal((batch, m, d)) / np.sqrt(d), np.zeros((batch, m)),
            scale * rng.standard_normal((batch, k, m)) / np.sqrt(m), np.zeros((batch, k)))


def mlp_features(params, X) -> np.ndarray:
    r"""Hidden features :math:`\mathrm{relu}(W_1x+b_1)`: ``X`` (B, n, d) -> (B, n, m)."""
    W1, b1 = (np.asarray(p, dtype=float) for p in params[:2])
    return np.maximum(np.asarray(X, dtype=float) @ np.swapaxes(W1, -1, -2) + b1[..., None, :], 0)


def mlp_forward(params, X) -> np.ndarray:
    r"""Outputs :math:`W_2\,\mathrm{relu}(W_1x+b_1)+b_2`: ``X`` (B, n, d) -> (B, n, k)."""
    W2, b2 = (np.asarray(p, dtype=float) for p in params[2:])
    return mlp_features(params, X) @ np.swapaxes(W2, -1, -2) + b2[..., None, :]


def train_mlp(params, X, Y, *, steps: int, lr: float):
    r"""Full-batch Adam on the mean squared loss :math:`\frac1n\sum_i\|f(x_i)-y_i\|^2` of each
    of ``B`` networks at once.

    Parameters
    ----------
    params : (W1, b1, W2, b2)
        Start, shapes as :func:`init_mlp` returns.
    X : (B, n, d) array
    Y : (B, n, k) array
    steps : int
    lr : float
        Adam's step. Adam acts on each weight separately and the summed loss of independent
        networks has independent gradients, so the ``B`` trainings do not interact.

    Returns
    -------
    The trained ``(W1, b1, W2, b2)`` as float64 numpy arrays.
    """
    import torch

    from icml25.common.optim import Adam

    steps = check_int(steps, "steps", minimum=0)
    lr = float(_array(lr, "lr", low=0.0, strict_low=True))
    X = torch.as_tensor(np.asarray(X, dtype=np.float32))
    Y = torch.as_tensor(np.asarray(Y, dtype=np.float32))
    if X.ndim != 3 or Y.ndim != 3 or X.shape[:2] != Y.shape[:2]:
        raise ValueError(f"X and Y must be (B, n, d) and (B, n, k); got {tuple(X.shape)}, "
                         f"{tuple(Y.shape)}")
    W1, b1, W2, b2 = (torch.tensor(np.asarray(p, dtype=np.float32), requires_grad=True)
                      for p in params)
    if W1.shape[0] != X.shape[0] or W1.shape[2] != X.shape[2] or W2.shape[1] != Y.shape[2]:
        raise ValueError("params do not fit X and Y: W1 must be (B, m, d), W2 (B, k, m)")
    opt = Adam([W1, b1, W2, b2], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        H = torch.relu(torch.baddbmm(b1[:, None, :], X, W1.transpose(1, 2)))
        out = torch.baddbmm(b2[:, None, :], H, W2.transpose(1, 2))
        ((out - Y) ** 2).sum(-1).mean(-1).sum().backward()
        opt.step()
    return tuple(p.detach().numpy().astype(float) for p in (W1, b1, W2, b2))


def ridge_readout(F, Y, lam: float):
    r"""Linear transfer: a new read-out :math:`(W_2,b_2)` on frozen features, by ridge.

    With centred features :math:`\tilde F` and labels :math:`\tilde Y`,
    :math:`W_2^\top=(\tilde F^\top\tilde F+n\lambda s I)^{-1}\tilde F^\top\tilde Y` and the
    intercept unpenalised; :math:`s=\operatorname{tr}(\tilde F^\top\tilde F)/(nm)`, the mean
    feature variance, makes :math:`\lambda` free of the features' scale.
    ``F`` (B, n, m), ``Y`` (B, n, k) give ``W2`` (B, k, m) and ``b2`` (B, k).
    """
    F, Y = np.asarray(F, dtype=float), np.asarray(Y, dtype=float)
    lam = float(_array(lam, "lam", low=0.0, strict_low=True))
    n, m = F.shape[-2], F.shape[-1]
    f_mean, y_mean = F.mean(-2, keepdims=True), Y.mean(-2, keepdims=True)
    Fc, Yc = F - f_mean, Y - y_mean
    gram = np.swapaxes(Fc, -1, -2) @ Fc
    s = np.trace(gram, axis1=-2, axis2=-1)[..., None, None] / (n * m)
    coef = np.linalg.solve(gram + n * lam * np.maximum(s, 1e-12) * np.eye(m),
                           np.swapaxes(Fc, -1, -2) @ Yc)                   # (B, m, k)
    b2 = (y_mean - f_mean @ coef)[..., 0, :]
    return np.swapaxes(coef, -1, -2), b2


@dataclass(frozen=True)
class DigitsSimulation:
    r"""Relative test risks :math:`R/\|f_t\|^2` (mean squared error over the test images,
    divided by that of predicting zero), arrays (overlap, n, repetition), of the three learners.

    ``feature_floor`` (overlap, repetition): the share of the target's test labels outside the
    span of the pretrained hidden features and a constant (least squares on the test images),
    the analogue of :math:`1-q`; ``source_distance``: :math:`\|f_t-f_s\|^2/\|f_t\|^2` on the
    test images for the pretrained network :math:`f_s` (ideally :math:`2(1-q)`);
    ``pretrain_risk``: the pretrained network's relative risk on its own task (test images).
    """

    overlaps: np.ndarray
    ns: np.ndarray
    risk: dict
    feature_floor: np.ndarray
    source_distance: np.ndarray
    pretrain_risk: np.ndarray

    def gain(self, learner: str) -> np.ndarray:
        """Relative transferability :math:`(R_{sc}-R)/\\|f_t\\|^2`, (overlap, n, repetition)."""
        if learner not in LEARNERS:
            raise ValueError(f"learner must be one of {LEARNERS}; got {learner!r}")
        return self.risk["scratch"] - self.risk[learner]


def _relative_risk(pred, Y):
    return ((pred - Y) ** 2).sum(-1).mean(-1) / (Y ** 2).sum(-1).mean(-1)


def simulate_digits_transfer(overlaps, ns, *, repetitions: int = 4, seed: int = 0, k: int = 4,
                             hidden: int = 32, scale: float = 0.1, lr: float = 0.01,
                             pretrain_steps: int = 400, steps: int = 300, lam: float = 0.1,
                             n_source: int = 800, n_test: int = 400) -> DigitsSimulation:
    r"""Pretrain on a source detection task, transfer to the target, against scratch.

    Per repetition (independent children of the seed's stream): a random order of the ten
    digits fixes the tasks (:func:`digit_task_classes`); a random split of the 1,797 images
    gives ``n_test`` test images, ``n_source`` source images (pretraining, all ten digits,
    labelled by the source task) and a pool from which the target's nested training sets of
    ``n`` images are the first ``n``; one small initialisation (:func:`init_mlp`) starts both
    pretraining and scratch training, so the learners are paired. Then, per overlap and
    ``n``: *scratch* trains that initialisation on the ``n`` target images, *linear
    transfer* refits the read-out of the pretrained network by :func:`ridge_readout`,
    *fine-tuning* trains all its weights (``steps`` Adam steps, the same as scratch).

    Parameters
    ----------
    overlaps : array of float
        Multiples of ``1/k`` in [0, 1] (the fraction of shared classes, :math:`q=\cos\theta`).
    ns : array of int
        Target training sizes, each at most the pool (``1797 - n_source - n_test``).
    repetitions, seed : int
        Independent repetitions; the run seed of the streams.
    k, hidden, scale, lr, pretrain_steps, steps, lam, n_source, n_test
        Classes per task; hidden units; initial scale :math:`\alpha`; Adam's step; steps of
        pretraining and of each target training; ridge penalty of linear transfer; sizes of the
        source set and of the test set.
    """
    repetitions, hidden, n_source, n_test = (
        check_int(v, name, minimum=1) for v, name in
        ((repetitions, "repetitions"), (hidden, "hidden"), (n_source, "n_source"),
         (n_test, "n_test")))
    k = check_int(k, "k", minimum=1, maximum=N_CLASSES // 2)
    overlaps = np.atleast_1d(_array(overlaps, "overlaps", low=0.0, high=1.0))
    ns = _integers(np.atleast_1d(ns), "ns", 2)
    X_all, labels_all = load_digit_images()
    pool = len(X_all) - n_source - n_test
    if pool < 1 or ns.max() > pool:
        raise ValueError(f"the target pool holds {pool} images (1797 - n_source - n_test); "
                         f"ns must not exceed it; got max {ns.max()}")
    Q, N, R, d = len(overlaps), len(ns), repetitions, X_all.shape[1]
    children = stream(seed, "digits repetitions").spawn(R)
    gens = [as_generator(child) for child in children]
    targets, sources, splits, starts = [], [], [], []
    for g in gens:
        t, s = digit_task_classes(g, k, overlaps)
        targets.append(t)
        sources.append(s)
        splits.append(g.permutation(len(X_all)))
        starts.append(init_mlp(g, 1, d, hidden, k, scale))
    targets, sources, splits = np.array(targets), np.array(sources), np.array(splits)
    start = tuple(np.concatenate([s[i] for s in starts]) for i in range(4))   # (R, ...)
    test, src = splits[:, :n_test], splits[:, n_test:n_test + n_source]
    train = splits[:, n_test + n_source:]
    X_test, lab_test = X_all[test], labels_all[test]                         # (R, n_test, d)
    Y_test = detection_labels(lab_test, targets)                             # (R, n_test, k)

    def per_overlap(a):  # (R, ...) -> (R * Q, ...), the overlap varying fastest
        return np.repeat(a, Q, axis=0)

    # pretraining: one network per (repetition, overlap) on the source's labels
    Y_src = detection_labels(labels_all[src][:, None, :], sources)           # (R, Q, ns, k)
    pre = train_mlp(tuple(per_overlap(p) for p in start), per_overlap(X_all[src]),
                    Y_src.reshape(R * Q, n_source, k), steps=pretrain_steps, lr=lr)
    Xt_rq = per_overlap(X_test)
    Y_src_test = detection_labels(lab_test[:, None, :], sources).reshape(R * Q, n_test, k)
    out_pre = mlp_forward(pre, Xt_rq)
    pretrain_risk = _relative_risk(out_pre, Y_src_test).reshape(R, Q).T
    Yt_rq = per_overlap(Y_test)
    source_distance = _relative_risk(out_pre, Yt_rq).reshape(R, Q).T
    W2f, b2f = ridge_readout(mlp_features(pre, Xt_rq), Yt_rq, 1e-10)
    floor = _relative_risk(mlp_forward((*pre[:2], W2f, b2f), Xt_rq), Yt_rq).reshape(R, Q).T

    risk = {name: np.empty((Q, N, R)) for name in LEARNERS}
    for j, n in enumerate(ns):
        idx = train[:, :n]
        X_n, Y_n = X_all[idx], detection_labels(labels_all[idx], targets)    # (R, n, ·)
        W2, b2 = ridge_readout(mlp_features(pre, per_overlap(X_n)), per_overlap(Y_n), lam)
        lt = _relative_risk(mlp_forward((*pre[:2], W2, b2), Xt_rq), Yt_rq)
        risk["linear"][:, j] = lt.reshape(R, Q).T
        # fine-tuning from every pretrained network and scratch from the shared start, at once
        both = tuple(np.concatenate([p, s]) for p, s in zip(pre, start))
        fitted = train_mlp(both, np.concatenate([per_overlap(X_n), X_n]),
                           np.concatenate([per_overlap(Y_n), Y_n]), steps=steps, lr=lr)
        out = mlp_forward(fitted, np.concatenate([Xt_rq, X_test]))
        r_all = _relative_risk(out, np.concatenate([Yt_rq, Y_test]))
        risk["finetune"][:, j] = r_all[:R * Q].reshape(R, Q).T
        risk["scratch"][:, j] = r_all[R * Q:][None, :]
    return DigitsSimulation(overlaps, ns, risk, floor, source_distance, pretrain_risk)
