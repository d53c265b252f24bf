"""Probes: the paper's five baselines, the SAE probe, and their choice on validation AUC."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.decomposition import PCA
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from icml25.common.streams import as_generator, stream_int

from .sae import TopKSAE


class SAELatents(TransformerMixin, BaseEstimator):
    r"""Encode with an SAE and keep the ``k`` latents that best separate the classes.

    With :math:`\tilde z_{ij} = z_{ij} / \nu_j`, :math:`\nu_j` the mean non-zero value of latent
    :math:`j` on the training set (1 if it never fires), the score of latent :math:`j` is

    .. math:: \text{score}_j = \Big|\frac{1}{n_1}\sum_{i:y_i=1}\tilde z_{ij}
              - \frac{1}{n_0}\sum_{i:y_i=0}\tilde z_{ij}\Big|

    and the :math:`k` largest scores are kept (ties: the lower index); ``transform`` returns
    :math:`\tilde z` on them. This is the paper's selection rule with its newer normalisation
    (``run_sae_evals.py``); the normalisation puts latents of different scales on one footing.
    """

    def __init__(self, sae: TopKSAE | None = None, k: int = 16):
        self.sae = sae
        self.k = k

    def fit(self, X, y):
        if self.sae is None:
            raise ValueError("SAELatents needs a trained sae")
        if not 1 <= self.k <= self.sae.n_latents:
            raise ValueError(f"k must lie in 1..{self.sae.n_latents}, got {self.k}")
        y = np.asarray(y)
        if set(np.unique(y)) != {0, 1}:
            raise ValueError("y must contain both classes 0 and 1")
        z = self.sae.codes(X)
        fired = z != 0
        self.scale_ = np.where(fired.any(0), z.sum(0) / np.maximum(fired.sum(0), 1), 1.0)
        z = z / self.scale_
        score = np.abs(z[y == 1].mean(0) - z[y == 0].mean(0))
        self.latents_ = np.argsort(-score, kind="stable")[: self.k]
        self.scores_ = score[self.latents_]
        return self

    def transform(self, X):
        return self.sae.codes(X)[:, self.latents_] / self.scale_[self.latents_]


@dataclass(frozen=True)
class Probe:
    """A probe: ``build(params, n)`` returns a fresh scikit-learn classifier for ``n`` training
    examples; ``grid`` lists the hyperparameters tried on validation; ``family`` is
    ``"baseline"`` or ``"sae"`` (what :func:`~icml25.sae_probing.quivers.quiver` selects from)."""

    name: str
    build: Callable[[dict, int], object] = field(repr=False)
    grid: tuple[dict, ...] = ({},)
    family: str = "baseline"


def _logreg(C):
    return LogisticRegression(C=C, max_iter=1000)


def logreg(C: float = 1.0):
    r"""L2 logistic regression on standardised activations: :math:`\min_w \tfrac12\|w\|^2 + C\sum_i
    \ell(y_i, w^\top x_i + b)` (the paper's first baseline)."""
    return make_pipeline(StandardScaler(), _logreg(C))


def pca_logreg(n_components: int, C: float = 1.0):
    """PCA to ``n_components`` (on standardised activations) followed by :func:`logreg`."""
    return make_pipeline(StandardScaler(), PCA(n_components, random_state=0), _logreg(C))


def knn(n_neighbors: int):
    """:math:`k`-nearest neighbours on standardised activations, distance-weighted votes."""
    return make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors, weights="distance"))


def _sklearn_seed(seed: int, name: str) -> int:
    """A 32-bit ``random_state`` for scikit-learn and XGBoost: the stream ``name`` of ``seed``
    (any non-negative seed, 63-bit ones included)."""
    return stream_int(int(seed), name) % 2**32


def mlp(hidden: int = 32, alpha: float = 1e-2, max_iter: int = 100, seed: int = 0):
    """A one-hidden-layer ReLU perceptron on standardised activations, L2 penalty ``alpha``,
    fitted by L-BFGS (scikit-learn's advice for small data sets; faster than Adam here)."""
    return make_pipeline(StandardScaler(), MLPClassifier(
        (hidden,), alpha=alpha, solver="lbfgs", max_iter=max_iter,
        random_state=_sklearn_seed(seed, "mlp")))


def gbt(max_iter: int = 25, max_depth: int = 3, learning_rate: float = 0.2, max_bins: int = 32,
        min_samples_leaf: int = 5, reg_alpha: float = 0.0, seed: int = 0):
    """Gradient-boosted trees with XGBoost, the paper's booster (histogram method, one thread).

    ``max_iter`` rounds of depth at most ``max_depth``; ``max_bins`` histogram bins per feature.
    ``min_samples_leaf`` is passed as XGBoost's ``min_child_weight`` (a leaf's sum of Hessians),
    scaled by 1/4, the Hessian :math:`p(1-p)` of the logistic loss at :math:`p=1/2`: a leaf
    then holds at least about that many examples while predictions are uncertain. Few,
    coarse-binned rounds by default: the probes are fitted thousands of times.
    """
    from xgboost import XGBClassifier  # imported here: 0.3 s that most users of the module skip

    return XGBClassifier(
        n_estimators=max_iter, max_depth=max_depth, learning_rate=learning_rate,
        max_bin=max_bins, min_child_weight=min_samples_leaf / 4, reg_alpha=reg_alpha,
        tree_method="hist", n_jobs=1, random_state=_sklearn_seed(seed, "gbt"))


def sae_probe_estimator(sae: TopKSAE, k: int, C: float = 1.0):
    """:class:`SAELatents` then :func:`logreg` on the ``k`` kept latents (the paper's SAE probe)."""
    return make_pipeline(SAELatents(sae, k), StandardScaler(), _logreg(C))


GRIDS = {
    "fixed": {"logreg": {"C": [1.0]}, "pca_logreg": {"n_components": [16]},
              "knn": {"n_neighbors": [10]}, "mlp": {}, "gbt": {}},
    "small": {"logreg": {"C": [0.01, 0.1, 1.0]}, "pca_logreg": {"n_components": [4, 16, 64]},
              "knn": {"n_neighbors": [3, 10, 30]}, "mlp": {}, "gbt": {}},
    "paper": {"logreg": {"C": [float(c) for c in np.logspace(-5, 5, 10)]},
              "pca_logreg": {"n_components": [1, 2, 4, 8, 16, 32, 64, 100]},
              "knn": {"n_neighbors": [1, 2, 4, 8, 16, 32, 64, 100]},
              "mlp": {"alpha": [1e-5, 1e-3, 1e-1], "hidden": [32, 128]},
              "gbt": {"max_iter": [50, 150, 250], "max_depth": [2, 3, 5],
                      "learning_rate": [0.01, 0.1], "reg_alpha": [1e-3, 0.1, 10.0],
                      "max_bins": [255]}},
}
"""Hyperparameter grids of the baselines (an empty grid: the defaults of :func:`mlp`, :func:`gbt`).
``fixed``: one setting each (quick mode). ``small``: the cheap probes tuned, MLP and trees at
their defaults (book mode). ``paper``: ranges like the paper's ``utils_training.py``, its random
searches over the MLP and XGBoost turned into a grid (hours on a laptop)."""


def _product(grid: dict) -> tuple[dict, ...]:
    combos = [{}]
    for key, values in grid.items():
        combos = [{**c, key: v} for c in combos for v in values]
    return tuple(combos)


def baseline_probes(grids: str | dict = "fixed", seed: int = 0) -> list[Probe]:
    """The paper's five baselines with their grids (a name of :data:`GRIDS` or such a dict).

    Sizes adapt to the training set: ``n_components`` and ``n_neighbors`` are capped at what
    ``n`` examples allow, and the trees' leaves hold at most ``n // 4`` examples.
    """
    grids = GRIDS[grids] if isinstance(grids, str) else grids
    builders = {
        "logreg": lambda p, n: logreg(**p),
        "pca_logreg": lambda p, n: pca_logreg(**{**p, "n_components": max(1, min(
            p.get("n_components", 16), n - 1))}),
        "knn": lambda p, n: knn(max(1, min(p.get("n_neighbors", 10), n - 1))),
        "mlp": lambda p, n: mlp(**p, seed=seed),
        "gbt": lambda p, n: gbt(**{**p, "min_samples_leaf": max(1, min(
            p.get("min_samples_leaf", 5), n // 4))}, seed=seed),
    }
    unknown = set(grids) - set(builders)
    if unknown:
        raise ValueError(f"unknown baselines {sorted(unknown)}; expected some of {list(builders)}")
    return [Probe(name, builders[name], _product(grids[name]))
            for name in builders if name in grids]


def sae_probes(sae: TopKSAE, ks: Sequence[int] = (16, 128), C: Sequence[float] = (1.0,),
               separate: bool = False) -> list[Probe]:
    """SAE probes: one probe choosing ``k`` from ``ks`` on validation, or one per ``k``."""
    build = lambda p, n: sae_probe_estimator(sae, **p)
    if separate:
        return [Probe(f"sae_k{k}", build, _product({"k": [k], "C": list(C)}), "sae") for k in ks]
    return [Probe("sae", build, _product({"k": list(ks), "C": list(C)}), "sae")]


def _scores(model, X) -> np.ndarray:
    return model.predict_proba(X)[:, 1]


def _auc(y, s) -> float:
    return float(roc_auc_score(y, s)) if len(np.unique(y)) == 2 else float("nan")


def validation_split(y, fraction: float = 0.25, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Stratified hold-out: ``(fit, val)`` positions, each with at least one example per class.

    Class :math:`c` with :math:`n_c` members sends :math:`\\max(1, \\min(n_c - 1,
    \\operatorname{round}(f\\,n_c)))` of them to validation.
    """
    y = np.asarray(y)
    counts = np.bincount(y, minlength=2)
    if len(counts) != 2 or counts.min() < 2:
        raise ValueError("need at least two examples of each class to validate, got "
                         f"{counts.tolist()}")
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must lie in (0, 1), got {fraction}")
    rng = as_generator(seed)
    val = []
    for c in (0, 1):
        members = rng.permutation(np.flatnonzero(y == c))
        val.append(members[: max(1, min(len(members) - 1, round(fraction * len(members))))])
    val = np.sort(np.concatenate(val))
    return np.setdiff1d(np.arange(len(y)), val), val


def evaluate(probes: Sequence[Probe], X_train, y_train, X_test, y_test, *,
             val_fraction: float = 0.25, seed: int = 0) -> pd.DataFrame:
    """Fit each probe, choose its hyperparameters on validation AUC, report test AUC.

    For each probe and each entry of its grid, fit on the training set minus a stratified
    validation hold-out (:func:`validation_split`, shared by all probes) and score the validation
    AUC; refit the best entry (ties: the first) on the whole training set and score the test AUC.

    Returns
    -------
    One row per probe: ``probe``, ``family``, ``params`` (the chosen entry, as a string),
    ``val_auc``, ``test_auc`` and ``seconds`` (all fits and predictions of that probe).
    """
    X_train, X_test = np.asarray(X_train, np.float32), np.asarray(X_test, np.float32)
    y_train, y_test = np.asarray(y_train).astype(int), np.asarray(y_test).astype(int)
    if X_train.ndim != 2 or X_test.ndim != 2 or X_train.shape[1] != X_test.shape[1]:
        raise ValueError(f"X_train {X_train.shape} and X_test {X_test.shape} must be 2-d with "
                         "the same number of columns")
    if len(X_train) != len(y_train) or len(X_test) != len(y_test):
        raise ValueError("X and y must have the same number of rows")
    if set(np.unique(y_test)) != {0, 1}:
        raise ValueError("the test set must contain both classes")
    fit, val = validation_split(y_train, val_fraction, seed)
    rows = []
    with warnings.catch_warnings():
        # the MLP and logistic fits run on fixed iteration budgets, by design
        warnings.simplefilter("ignore", ConvergenceWarning)
        for probe in probes:
            rows.append(_evaluate_one(probe, X_train, y_train, X_test, y_test, fit, val))
    return pd.DataFrame(rows)


def _evaluate_one(probe, X_train, y_train, X_test, y_test, fit, val) -> dict:
    t0 = time.perf_counter()
    best, best_auc = probe.grid[0], -np.inf
    for params in probe.grid:
        model = probe.build(params, len(fit)).fit(X_train[fit], y_train[fit])
        auc = _auc(y_train[val], _scores(model, X_train[val]))
        if auc > best_auc:
            best, best_auc = params, auc
    model = probe.build(best, len(y_train)).fit(X_train, y_train)
    test_auc = _auc(y_test, _scores(model, X_test))
    return {"probe": probe.name, "family": probe.family,
            "params": ", ".join(f"{k}={v:g}" if isinstance(v, (int, float)) else f"{k}={v}"
                                for k, v in best.items()),
            "val_auc": best_auc, "test_auc": test_auc, "seconds": time.perf_counter() - t0}
