"""Chapter 05 beside the authors' SAE-probing code (JoshEngels/SAE-Probes), run outside the
project.

``data/reference/sae_probing/authors_probes.npz`` holds what their functions computed, unmodified
(CPU, one thread, the book's numeric pins), on arrays of ours: the committed MiniLM activations at
layer 3 (``icml25.sae_probing.load()``), our scarcity splits (``scarcity_split``, 144 balanced test
texts, seed 0) of four data sets at 8, 16, 64 and 256 training texts (``<data set>/n<size>/train``
and ``/test``, rows of the data set), and the codes of a TopK SAE trained with
``icml25.sae_probing.train_sae`` (2,048 latents, k = 32, 10 epochs, seed 0), stored sparsely.

* ``*/their_order_new``: their ``get_sorted_indices_new`` (``train_sae_probes.py``, the latent
  choice of the paper's runs: class-mean difference after dividing each latent by its mean
  non-zero value), first 512; ``*/their_order_old``: their older ``get_sorted_indices`` (no
  division), first 128.
* ``*/sae_k16``, ``*/sae_k128``: their ``find_best_reg`` on the first k latents, raw values, as
  their ``run_baseline`` passes them; ``*/logreg``: the same on the raw activations (their L2
  baseline). Rows are (validation AUC, test AUC, chosen C). (Their PCA and k-NN baselines are
  left out: our paper-grid versions of them take about 28 s on these 16 splits.)
* ``*/n_folds``, ``*/val_sizes``, ``*/val_rows``: their validation folds (``get_cv`` and
  ``get_splits`` of ``utils_training.py``).
* ``grid/*``, ``count/*``: their regime grids (``utils_data.py``), the labels their
  ``corrupt_ytrain`` flips and the positives their ``get_train_test_indices`` draws at 128
  training texts.

Their driver script is stored in the file as ``scripts``.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

from icml25 import sae_probing as sp
from icml25.common import data

LAYER, N_TEST, N_LATENTS = 3, 144, 2048
DATASETS = ("5_hist_fig_ismale", "36_sciq_tf", "87_glue_cola", "92_glue_sst2")
SIZES = (8, 16, 64, 256)
SPLITS = [f"{name}/n{n}" for name in DATASETS for n in SIZES]


@functools.lru_cache(maxsize=1)
def _reference() -> dict:
    with np.load(data.path("reference/sae_probing/authors_probes.npz")) as file:
        return {key: file[key] for key in file.files}


@functools.lru_cache(maxsize=1)
def _data():
    return sp.load()


class _Codes:
    """Stands in for the SAE inside our SAELatents: the stored codes are its input and output."""

    n_latents = N_LATENTS

    def codes(self, Z):
        return np.asarray(Z)


def _split(key: str):
    ref = _reference()
    name = key.split("/")[0]
    _, y = _data().get(name, LAYER)
    out = {"y_train": y[ref[f"{key}/train"]], "y_test": y[ref[f"{key}/test"]]}
    for part in ("train", "test"):
        Z = np.zeros((len(ref[f"{key}/{part}"]), N_LATENTS), np.float32)
        Z[ref[f"{key}/codes_{part}_rows"], ref[f"{key}/codes_{part}_cols"]] = \
            ref[f"{key}/codes_{part}_values"]
        out[f"Z_{part}"] = Z
    return out


def test_the_splits_are_ours():
    """The stored rows are what our scarcity_split draws (the inputs of both sides)."""
    ref = _reference()
    for key in SPLITS:
        name, n = key.split("/")
        _, y = _data().get(name, LAYER)
        split = sp.scarcity_split(y, int(n[1:]), N_TEST, seed=0)
        np.testing.assert_array_equal(split.train, ref[f"{key}/train"])
        np.testing.assert_array_equal(split.test, ref[f"{key}/test"])


@pytest.mark.parametrize("key", SPLITS)
def test_our_latent_choice_is_theirs_up_to_ties(key):
    """Our SAELatents ranks latents by the rule of their get_sorted_indices_new. Their order is
    a descending order of our scores (inversions at most 1e-6 relative: float32 means, and their
    1e-6 guards in the divisions; measured 1.4e-7), and wherever our k-th and (k+1)-th scores are
    more than 1e-6 apart the first k latents are the same set. Ties are frequent (a latent that
    fires once in training scores exactly 1/n_c) and broken otherwise: ours by index, theirs by
    torch's unstable argsort, so the lists themselves part after a few entries."""
    ref, s = _reference(), _split(key)
    full = sp.SAELatents(_Codes(), N_LATENTS).fit(s["Z_train"], s["y_train"])
    score = np.zeros(N_LATENTS)
    score[full.latents_] = full.scores_
    theirs = ref[f"{key}/their_order_new"]
    along = score[theirs]
    assert (np.diff(along) <= 1e-6 * along[:-1]).all()
    ours = sp.SAELatents(_Codes(), 513).fit(s["Z_train"], s["y_train"])
    gaps = ours.scores_[:-1] - ours.scores_[1:] > 1e-6 * ours.scores_[:-1]
    checked = [k for k in range(1, 513) if gaps[k - 1]]
    assert len(checked) >= 20
    for k in checked:
        assert set(ours.latents_[:k]) == set(theirs[:k]), k


def test_the_unnormalised_rule_picks_other_latents():
    """Pinned: their older get_sorted_indices (no division by the mean non-zero value) shares
    only 7 to 14 of its first 16 latents (11.3 on average) with ours, and so with their newer
    rule, on these splits: we follow the newer rule, which the paper's runs use."""
    ref = _reference()
    overlap = []
    for key in SPLITS:
        s = _split(key)
        ours = sp.SAELatents(_Codes(), 16).fit(s["Z_train"], s["y_train"]).latents_
        overlap.append(len(set(ours) & set(ref[f"{key}/their_order_old"][:16])))
    assert max(overlap) < 16
    assert np.mean(overlap) < 14


def _our_test_aucs(key):
    """Our logistic-regression probe and SAE probes (k = 16, 128) with the paper's C grid."""
    C = sp.GRIDS["paper"]["logreg"]["C"]
    name = key.split("/")[0]
    X, y = _data().get(name, LAYER)
    ref, s = _reference(), _split(key)
    tr, te = ref[f"{key}/train"], ref[f"{key}/test"]
    sae = [sp.Probe(f"sae_k{k}", lambda p, n: sp.sae_probe_estimator(_Codes(), **p),
                    tuple({"k": k, "C": c} for c in C), "sae") for k in (16, 128)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = sp.evaluate(sp.baseline_probes({"logreg": {"C": C}}), X[tr], y[tr], X[te], y[te])
        latent = sp.evaluate(sae, s["Z_train"], s["y_train"], s["Z_test"], s["y_test"])
    return {row.probe: row.test_auc for df in (base, latent) for _, row in df.iterrows()}


@functools.lru_cache(maxsize=1)
def _auc_table():
    ref = _reference()
    ours = [_our_test_aucs(key) for key in SPLITS]
    return {p: (np.array([o[p] for o in ours]), np.array([ref[f"{k}/{p}"][1] for k in SPLITS]))
            for p in ("logreg", "sae_k16", "sae_k128")}


def test_probe_test_aucs_agree_on_average():
    """The probes differ by design in three places: we standardise before the logistic
    regression (they fit raw activations, and raw latent values), we validate on a stratified
    quarter of the training set (they: leave-2-out up to 12 texts, 6 stratified folds up to 127,
    else the last min(20%, 100) texts), and on tied validation AUCs we keep the smallest C (they
    scan C downwards and keep the largest). Single splits differ by up to 0.136 (measured; bound
    0.15): the chosen C differs, and a test set of 144 texts gives an AUC a standard error near
    0.04. Over the 16 splits the mean difference (ours - theirs) is -0.008 for logistic
    regression, -0.005 for the SAE probe at k = 16 and +0.020 at k = 128 (bound 0.03, about
    three standard errors of a mean of 16 such differences)."""
    for probe, (ours, theirs) in _auc_table().items():
        diff = ours - theirs
        assert abs(diff.mean()) < 0.03, (probe, diff.mean())
        assert np.abs(diff).max() < 0.15, (probe, np.abs(diff).max())


def test_both_find_the_sae_probe_mostly_below_logistic_regression():
    """The paper's verdict on these splits, by both codes: the SAE probe (k = 16) beats the
    logistic-regression baseline on the test set in fewer than half of the 16 splits (ours 3,
    theirs 4)."""
    table = _auc_table()
    for side in (0, 1):
        wins = (table["sae_k16"][side] > table["logreg"][side]).sum()
        assert wins < len(SPLITS) / 2, (side, wins)


def test_validation_folds_differ_by_design():
    """Their folds: leave-2-out pairs holding both classes at 8 texts (16 of the 28 pairs), 6
    stratified folds at 16 and 64, the last 51 rows (int(0.2 n)) at 256. Ours: one stratified
    hold-out of a quarter, 2, 4, 16 and 64 texts."""
    ref = _reference()
    expected = {8: (16, [2] * 16), 16: (6, [3, 3, 3, 3, 2, 2]), 64: (6, [11] * 4 + [10] * 2),
                256: (1, [51])}
    for key in SPLITS:
        n = int(key.split("/n")[1])
        folds, sizes = expected[n]
        assert int(ref[f"{key}/n_folds"]) == folds
        assert sorted(ref[f"{key}/val_sizes"].tolist(), reverse=True) == sizes
        if n == 256:
            np.testing.assert_array_equal(ref[f"{key}/val_rows"], np.arange(205, 256))
        _, val = sp.validation_split(_split(key)["y_train"], 0.25, seed=0)
        assert len(val) == n // 4


def test_regime_grids_and_counts():
    """The book mode's settings (chapters/05-sae-probing/reproduction.py: imbalance 0.05, 0.2,
    0.5; noise 0, 0.2, 0.4) lie on their grids; of its training sizes 4, 16, 64, 256 only 4 is
    on theirs (round(2^t), 20 values of t from 1 to 10). Our noise_split flips as many labels as
    their corrupt_ytrain (int(f n)) at every fraction of their grid; our imbalance_split draws
    round(f n) positives, theirs ceil(f n): 11 of their 19 fractions get the same count at 128
    training texts, the other 8 one positive fewer with us (pinned)."""
    ref = _reference()
    sizes, fracs, flips = (ref["grid/training_sizes"], ref["grid/class_imbalance"],
                           ref["grid/corrupt_frac"])
    assert [n for n in (4, 16, 64, 256) if n in sizes] == [4]
    assert all(np.isclose(fracs, f).any() for f in (0.05, 0.2, 0.5))
    assert all(np.isclose(flips, f).any() for f in (0.0, 0.2, 0.4))
    _, y = _data().get(DATASETS[0], LAYER)
    for f, theirs in zip(flips, ref["count/flipped_128"]):
        split = sp.noise_split(y, float(f), 128, N_TEST, seed=0)
        assert (split.y_train != y[split.train]).sum() == theirs
    ours = np.array([y[sp.imbalance_split(y, float(f), 128, N_TEST, seed=0).train].sum()
                     for f in fracs])
    theirs = ref["count/positives_128"]
    assert (ours == theirs).sum() == 11
    assert ((ours == theirs) | (ours == theirs - 1)).all()
    assert "get_sorted_indices_new" in str(ref["scripts"])
