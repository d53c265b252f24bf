"""The paper's four regimes as split builders, and one sweep over data sets and settings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from icml25.common.parallel import starmap
from icml25.common.streams import as_generator, stream

from .data import ProbingData
from .probes import Probe, evaluate


@dataclass(frozen=True)
class Split:
    """Row positions of one training/test split of a data set.

    ``train`` and ``test`` index the data set's in-distribution rows, except that ``test`` indexes
    its OOD rows when ``ood_test``, and both index the in-distribution rows followed by the OOD
    rows (``np.concatenate([y, y_ood])``) when ``joint``; ``y_train`` holds the labels the probe
    is trained on (noisy in the label-noise regime, else the true ones).
    """

    train: np.ndarray
    test: np.ndarray
    y_train: np.ndarray
    ood_test: bool = False
    joint: bool = False


def _check_labels(y) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1 or not np.isin(y, (0, 1)).all():
        raise ValueError("y must be a 1-d array of 0/1 labels")
    return y.astype(int)


def holdout(y, n_test: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A class-balanced test set of ``n_test`` rows and the rest as the training pool: ``(pool,
    test)``. The same ``seed`` gives the same test set in every regime."""
    y = _check_labels(y)
    if n_test < 2 or n_test % 2:
        raise ValueError(f"n_test must be an even number >= 2, got {n_test}")
    rng = as_generator(stream(seed, "test set"))
    test = []
    for c in (0, 1):
        members = np.flatnonzero(y == c)
        if len(members) <= n_test // 2:
            raise ValueError(f"class {c} has {len(members)} examples; a test set of {n_test} "
                             "leaves none for training")
        test.append(rng.choice(members, n_test // 2, replace=False))
    test = np.sort(np.concatenate(test))
    return np.setdiff1d(np.arange(len(y)), test), test


def _draw(y, pool, n_pos: int, n_neg: int, rng) -> np.ndarray:
    out = []
    for c, n in ((1, n_pos), (0, n_neg)):
        members = pool[y[pool] == c]
        if n > len(members):
            raise ValueError(f"asked for {n} training examples of class {c}, the pool has "
                             f"{len(members)}")
        out.append(rng.choice(members, n, replace=False))
    return rng.permutation(np.concatenate(out))


def scarcity_split(y, n_train: int, n_test: int, seed: int = 0) -> Split:
    """Data scarcity: a balanced training set of ``n_train`` examples (``ceil(n/2)`` positive)."""
    y = _check_labels(y)
    if n_train < 4:
        raise ValueError(f"n_train must be at least 4 (two per class to validate), got {n_train}")
    pool, test = holdout(y, n_test, seed)
    rng = as_generator(stream(seed, f"scarcity training set {n_train}"))
    n_pos = -(-n_train // 2)
    train = _draw(y, pool, n_pos, n_train - n_pos, rng)
    return Split(train, test, y[train])


def imbalance_split(y, positive_fraction: float, n_train: int, n_test: int,
                    seed: int = 0) -> Split:
    """Class imbalance: ``round(f n)`` positives among ``n_train`` (at least two of each class).

    The test set stays balanced (AUC does not depend on the class ratio, and a balanced test set
    measures it with the least noise); the paper imbalances its test set in the same ratio.
    """
    y = _check_labels(y)
    if not 0 < positive_fraction < 1:
        raise ValueError(f"positive_fraction must lie in (0, 1), got {positive_fraction}")
    pool, test = holdout(y, n_test, seed)
    n_pos = int(min(max(round(positive_fraction * n_train), 2), n_train - 2))
    rng = as_generator(
        stream(seed, f"imbalance training set {round(positive_fraction * 1e6)}"))
    train = _draw(y, pool, n_pos, n_train - n_pos, rng)
    return Split(train, test, y[train])


def noise_split(y, flip_fraction: float, n_train: int, n_test: int, seed: int = 0) -> Split:
    """Label noise: a balanced training set whose labels are flipped on exactly
    ``floor(flip_fraction * n_train)`` random examples (as the paper's ``corrupt_ytrain``)."""
    y = _check_labels(y)
    if not 0 <= flip_fraction <= 0.5:
        raise ValueError(f"flip_fraction must lie in [0, 0.5], got {flip_fraction}")
    base = scarcity_split(y, n_train, n_test, seed)
    rng = as_generator(stream(seed, f"label flips {round(flip_fraction * 1e6)}"))
    flip = rng.choice(n_train, int(flip_fraction * n_train), replace=False)
    noisy = base.y_train.copy()
    noisy[flip] = 1 - noisy[flip]
    return Split(base.train, base.test, noisy)


def shift_split(y, y_ood, n_train: int, n_test: int, seed: int = 0) -> Split:
    """Covariate shift: the scarcity split's balanced training set, tested on every OOD row."""
    y_ood = _check_labels(y_ood)
    if set(np.unique(y_ood)) != {0, 1}:
        raise ValueError("the OOD test set must contain both classes")
    base = scarcity_split(y, n_train, n_test, seed)
    return Split(base.train, np.arange(len(y_ood)), base.y_train, ood_test=True)


def spurious_split(y, y_ood, agreement: float, n_train: int, n_test: int,
                   seed: int = 0) -> Split:
    r"""Spurious correlation: the label agrees with the text's domain in training, not in test.

    The domain :math:`d` of a row is 1 for the data set's in-distribution rows and 0 for its OOD
    rows (another language, fictional names, typos...: a feature the model encodes strongly).
    Each class :math:`c` gets :math:`n_\text{train}/2` training examples, of which
    :math:`\operatorname{round}(a\,n_\text{train}/2)` come from domain :math:`d=c` and the
    rest from the other one, so that label and domain agree on a share :math:`\approx a` of the
    training set (``agreement`` :math:`a`; 0.5: independent, 1: the domain alone predicts the
    label). The test set holds :math:`n_\text{test}/4` rows of each (class, domain) cell, drawn
    before the training set: there the domain carries no information about the label, and a
    probe that leaned on it loses AUC.

    Returns
    -------
    A :class:`Split` with ``joint=True``: positions in ``np.concatenate([y, y_ood])``.
    """
    y, y_ood = _check_labels(y), _check_labels(y_ood)
    if not 0.5 <= agreement <= 1:
        raise ValueError(f"agreement must lie in [0.5, 1], got {agreement}")
    if n_train < 4 or n_train % 2:
        raise ValueError(f"n_train must be an even number >= 4, got {n_train}")
    if n_test < 4 or n_test % 4:
        raise ValueError(f"n_test must be a multiple of 4 (one quarter per class and domain), "
                         f"got {n_test}")
    labels = np.concatenate([y, y_ood])
    domain = np.concatenate([np.ones(len(y), int), np.zeros(len(y_ood), int)])
    test_rng = as_generator(stream(seed, "spurious test set"))
    cells = {(c, d): np.flatnonzero((labels == c) & (domain == d)) for c in (0, 1) for d in (0, 1)}
    test, pools = [], {}
    for (c, d), members in cells.items():
        if len(members) <= n_test // 4:
            raise ValueError(f"class {c} has {len(members)} rows in domain {d}; a test set of "
                             f"{n_test} leaves none for training")
        picked = test_rng.choice(members, n_test // 4, replace=False)
        test.append(picked)
        pools[c, d] = np.setdiff1d(members, picked)
    rng = as_generator(
        stream(seed, f"spurious training set {round(agreement * 1e6)}"))
    half = n_train // 2
    aligned = round(agreement * half)
    train = []
    for c in (0, 1):
        for d, n in ((c, aligned), (1 - c, half - aligned)):
            if n > len(pools[c, d]):
                raise ValueError(f"asked for {n} training examples of class {c} in domain {d}, "
                                 f"the pool has {len(pools[c, d])}")
            train.append(rng.choice(pools[c, d], n, replace=False))
    train = rng.permutation(np.concatenate(train))
    return Split(train, np.sort(np.concatenate(test)), labels[train], joint=True)


REGIMES = ("scarcity", "imbalance", "noise", "shift")
"""The paper's four regimes."""

SPURIOUS = "spurious"
"""The spurious-correlation setting (:func:`spurious_split`), run like a regime by
:func:`run_regime` but kept apart from :data:`REGIMES`."""


def make_split(regime: str, setting, y, *, n_train: int, n_test: int, seed: int = 0,
               y_ood=None) -> Split:
    """The split of ``regime`` at ``setting``: the training size (scarcity, shift), the
    positive fraction (imbalance), the flip fraction (noise) or the agreement between label and
    domain (spurious; ``n_train`` is then the training size). Shift and spurious need ``y_ood``.
    """
    if regime == "scarcity":
        return scarcity_split(y, int(setting), n_test, seed)
    if regime == "imbalance":
        return imbalance_split(y, float(setting), n_train, n_test, seed)
    if regime == "noise":
        return noise_split(y, float(setting), n_train, n_test, seed)
    if regime in ("shift", SPURIOUS):
        if y_ood is None:
            raise ValueError(f"the {regime} regime needs y_ood")
        if regime == "shift":
            return shift_split(y, y_ood, int(setting), n_test, seed)
        return spurious_split(y, y_ood, float(setting), n_train, n_test, seed)
    raise ValueError(f"unknown regime {regime!r}; expected one of {REGIMES + (SPURIOUS,)}")


def _run_dataset(X, y, X_ood, y_ood, name, regime, settings, probes, n_train, n_test, seed):
    from threadpoolctl import threadpool_limits

    frames = []
    # One BLAS/OpenMP thread: on a few hundred rows, threads only add overhead (the trees and the
    # MLP ran three to ten times slower with two threads on a busy two-core machine).
    with threadpool_limits(limits=1):
        for setting in settings:
            frames.append(_run_setting(X, y, X_ood, y_ood, name, regime, setting, probes,
                                       n_train, n_test, seed))
    return frames


def _run_setting(X, y, X_ood, y_ood, name, regime, setting, probes, n_train, n_test, seed):
    split = make_split(regime, setting, y, n_train=n_train, n_test=n_test, seed=seed, y_ood=y_ood)
    if split.joint:
        X_train = X_test = np.concatenate([X, X_ood])
        y_test = np.concatenate([y, y_ood])
    else:
        X_train = X
        X_test, y_test = (X_ood, y_ood) if split.ood_test else (X, y)
    out = evaluate(probes, X_train[split.train], split.y_train, X_test[split.test],
                   y_test[split.test], seed=seed)
    return out.assign(dataset=name, regime=regime, setting=setting)


def run_regime(data: ProbingData, layer: int, regime: str, settings, probes: Sequence[Probe], *,
               n_train: int = 128, n_test: int = 144, datasets: Sequence[str] | None = None,
               seed: int = 0, n_jobs: int = 1) -> pd.DataFrame:
    """Evaluate ``probes`` on every data set and setting of ``regime``.

    ``n_train`` is the training size of the imbalance, noise and spurious regimes (the scarcity
    and shift settings are training sizes); ``n_test`` the size of the balanced test set. The
    shift and spurious regimes (:data:`SPURIOUS`) run on the data sets with OOD rows only; the
    shift regime's settings default to ``(n_train,)``.
    ``n_jobs > 1`` spreads the data sets over processes (:func:`icml25.common.parallel.starmap`);
    results do not depend on it.
    Every fit runs with one BLAS/OpenMP thread (``threadpoolctl``), which is faster at this size.

    Returns
    -------
    :func:`evaluate`'s rows with ``dataset``, ``regime`` and ``setting`` columns in front.
    """
    if regime not in REGIMES + (SPURIOUS,):
        raise ValueError(f"unknown regime {regime!r}; expected one of {REGIMES + (SPURIOUS,)}")
    names = list(datasets) if datasets is not None else data.names
    with_ood = regime in ("shift", SPURIOUS)
    if with_ood:
        names = [n for n in names if n in data.ood_names]
    if regime == "shift" and settings is None:
        settings = (n_train,)
    if settings is None or len(settings) == 0:
        raise ValueError(f"the {regime} regime needs at least one setting")
    if not names:
        raise ValueError(f"no data sets to run the {regime} regime on")
    jobs = []
    for name in names:
        X, y = data.get(name, layer)
        X_ood, y_ood = data.get(name, layer, ood=True) if with_ood else (None, None)
        jobs.append((X, y, X_ood, y_ood, name, regime, list(settings), probes, n_train, n_test,
                     seed))
    parts = starmap(_run_dataset, jobs, n_jobs=n_jobs)
    df = pd.concat([f for part in parts for f in part], ignore_index=True)
    front = ["dataset", "regime", "setting"]
    return df[front + [c for c in df.columns if c not in front]]
