"""Tests of icml25.sae_probing: the data loader, the committed activations, the TopK SAE, the
probes against scikit-learn, the regime splits and the quivers."""

import importlib.util

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from xgboost import XGBClassifier

from icml25 import minilm
from icml25 import sae_probing as sp
from icml25.common.stats import bootstrap_ci
from icml25.sae_probing.probes import _sklearn_seed


@pytest.fixture(scope="module")
def committed():
    return sp.load()


def sparse_data(n=3000, d=32, m=96, active=4, seed=0):
    """Inputs that are exactly sparse combinations of ``m`` unit atoms, plus a little noise."""
    rng = np.random.default_rng(seed)
    atoms = rng.normal(size=(m, d))
    atoms /= np.linalg.norm(atoms, axis=1, keepdims=True)
    codes = np.zeros((n, m))
    for i in range(n):
        codes[i, rng.choice(m, active, replace=False)] = rng.exponential(1.0, active) + 0.5
    return (codes @ atoms + 0.01 * rng.normal(size=(n, d))).astype(np.float32), codes


# --- the data loader ---------------------------------------------------------------------------

def test_loader_finds_the_package_files():
    root = sp.package_data_dir()
    assert (root / "probing_datasets_MASTER.csv.zst").exists()
    tags = sp.dataset_tags()
    assert len(tags) == 113 and set(sp.DATASETS) <= set(tags)
    assert sp.ood_tags() == list(sp.OOD_DATASETS)
    df = sp.read_dataset("87_glue_cola")
    assert list(df.columns) == ["text", "label"] and set(df.label) == {0, 1}
    assert df.attrs["classes"] == ("0", "1")
    assert set(sp.read_ood("87_glue_cola").label) == {0, 1}


def test_loader_names_the_install_command_when_the_package_is_missing(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "sae_probes" else real(name, *a))
    with pytest.raises(ModuleNotFoundError, match="pip install --no-deps sae-probes==0.4.2"):
        sp.package_data_dir()
    with pytest.raises(ModuleNotFoundError, match="--no-deps"):
        sp.sample_texts(["87_glue_cola"])


def test_unknown_data_sets_are_refused():
    with pytest.raises(ValueError, match="dataset_tags"):
        sp.read_dataset("0_no_such_data")
    with pytest.raises(ValueError, match="no OOD test set"):
        sp.read_ood("36_sciq_tf")
    with pytest.raises(ValueError, match="even integer"):
        sp.sample_texts(["36_sciq_tf"], per_dataset=7)


def test_sample_is_balanced_seeded_and_includes_the_ood_rows():
    a = sp.sample_texts(["5_hist_fig_ismale", "36_sciq_tf"], per_dataset=40, seed=1)
    b = sp.sample_texts(["5_hist_fig_ismale", "36_sciq_tf"], per_dataset=40, seed=1)
    c = sp.sample_texts(["5_hist_fig_ismale", "36_sciq_tf"], per_dataset=40, seed=2)
    pd.testing.assert_frame_equal(a, b)
    assert minilm.texts_digest(a.text) != minilm.texts_digest(c.text)
    iid = a[~a.ood]
    assert (iid.groupby("dataset").label.agg(["size", "sum"]).to_numpy() == [40, 20]).all()
    assert a[a.ood].dataset.unique().tolist() == ["5_hist_fig_ismale"]
    assert a.ood.sum() == len(sp.read_ood("5_hist_fig_ismale"))


def test_committed_activations_match_the_loaders_texts(committed):
    texts = sp.sample_texts()
    assert committed.digest == minilm.texts_digest(texts["text"])
    assert (committed.dataset == texts["dataset"].to_numpy()).all()
    assert (committed.row == texts["row"].to_numpy()).all()
    assert (committed.ood == texts["ood"].to_numpy()).all()
    assert (committed.label == texts["label"].to_numpy()).all()
    assert committed.layers == sp.LAYERS and committed.names == list(sp.DATASETS)
    assert committed.ood_names == list(sp.OOD_DATASETS)
    for layer in committed.layers:
        assert committed.activations[layer].shape == (len(texts), 384)
        assert np.isfinite(committed.activations[layer]).all()
    X, y = committed.get("92_glue_sst2", sp.LAYERS[0])
    assert X.dtype == np.float32 and X.shape == (sp.PER_DATASET, 384) and y.mean() == 0.5
    with pytest.raises(ValueError, match="not stored"):
        committed.get("92_glue_sst2", 1)
    with pytest.raises(ValueError, match="no OOD rows"):
        committed.get("92_glue_sst2", sp.LAYERS[0], ood=True)


# --- the TopK SAE ------------------------------------------------------------------------------

def test_sae_reconstruction_improves_with_training_and_codes_have_k_nonzeros():
    X, _ = sparse_data()
    sae, history = sp.train_sae(X, n_latents=192, k=4, epochs=15, batch_size=128, lr=3e-3)
    assert history.fve.iloc[-1] > history.fve.iloc[0] + 0.1
    assert history.fve.iloc[-1] > 0.8
    untrained = sp.TopKSAE(32, 192, 4)
    untrained.mu.copy_(torch.from_numpy(X.mean(0)))
    assert sp.sae_metrics(sae, X)["fve"] > sp.sae_metrics(untrained, X)["fve"] + 0.3
    z = sae.codes(X)
    assert z.shape == (len(X), 192) and (z >= 0).all()
    assert ((z != 0).sum(1) == 4).all()  # TopK: exactly k active latents on every input
    assert sp.sae_metrics(sae, X)["l0"] == 4
    norms = sae.W_dec.detach().norm(dim=1)
    assert torch.allclose(norms, torch.ones_like(norms), atol=1e-5)


def test_sae_is_reproducible_and_validates_its_inputs():
    X, _ = sparse_data(n=400)
    a, _ = sp.train_sae(X, n_latents=64, k=4, epochs=2, seed=3)
    b, _ = sp.train_sae(X, n_latents=64, k=4, epochs=2, seed=3)
    assert np.array_equal(a.codes(X), b.codes(X))
    previous = torch.get_num_threads()
    try:  # the training thread count is pinned: the process's setting does not matter
        torch.set_num_threads(2)
        c, _ = sp.train_sae(X, n_latents=64, k=4, epochs=2, seed=3)
    finally:
        torch.set_num_threads(previous)
    assert np.array_equal(a.codes(X), c.codes(X)) and torch.get_num_threads() == previous
    with pytest.raises(ValueError, match="k must lie"):
        sp.TopKSAE(8, 16, 17)
    with pytest.raises(ValueError, match="2-d array"):
        sp.train_sae(X[0])
    with pytest.raises(ValueError, match="finite"):
        sp.train_sae(np.full((4, 3), np.nan))


def test_remembered_codes_are_fresh_codes_and_forgotten_when_the_weights_change():
    """codes() remembers recent encodings: a remembered result equals a fresh encoding bit for
    bit, an in-place change of the weights forgets it, and the memo never travels in a pickle."""
    import pickle

    X, _ = sparse_data(n=300)
    sae, _ = sp.train_sae(X, n_latents=64, k=4, epochs=2, seed=3)
    first = sae.codes(X)
    assert sae.codes(X.copy()) is first  # the same bytes: remembered
    with torch.no_grad():
        fresh = sae.encode(torch.from_numpy(X.astype(np.float32))).numpy()
    assert np.array_equal(first, fresh) and not first.flags.writeable
    # (the memo is keyed by the whole array: the codes of a subset of rows are not a slice of
    # these, since a matrix product's rows may round differently with the number of rows)
    with torch.no_grad():
        sae.W_enc.mul_(-1.0)  # another encoder: the memo must not answer for it
    flipped = sae.codes(X)
    assert flipped is not first and not np.array_equal(flipped, first)
    copy = pickle.loads(pickle.dumps(sae))
    assert "_codes_memo" not in copy.__dict__ and np.array_equal(copy.codes(X), flipped)


def test_sae_latents_keep_the_k_largest_class_mean_differences():
    X, _ = sparse_data(n=600)
    sae, _ = sp.train_sae(X, n_latents=96, k=4, epochs=5)
    z = sae.codes(X)
    y = (z[:, 7] > 0).astype(int)  # a label that one latent encodes exactly
    sel = sp.SAELatents(sae, k=5).fit(X, y)
    assert sel.latents_[0] == 7 and len(sel.latents_) == 5
    nu = np.where((z != 0).any(0), z.sum(0) / np.maximum((z != 0).sum(0), 1), 1.0)
    score = np.abs((z / nu)[y == 1].mean(0) - (z / nu)[y == 0].mean(0))
    assert np.allclose(np.sort(score)[::-1][:5], sel.scores_)
    assert np.allclose(sel.transform(X), z[:, sel.latents_] / nu[sel.latents_], atol=1e-6)
    with pytest.raises(ValueError, match="both classes"):
        sp.SAELatents(sae, 3).fit(X, np.zeros(len(X), int))


# --- probes against scikit-learn ---------------------------------------------------------------

def _toy(seed=0, n=200, d=20):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(size=n) > 0.5).astype(int)
    return X[:120], y[:120], X[120:], y[120:]


@pytest.mark.parametrize("name, grid, reference", [
    ("logreg", {"C": [0.1]}, lambda: make_pipeline(
        StandardScaler(), LogisticRegression(C=0.1, max_iter=1000))),
    ("pca_logreg", {"n_components": [5]}, lambda: make_pipeline(
        StandardScaler(), PCA(5, random_state=0), LogisticRegression(max_iter=1000))),
    ("knn", {"n_neighbors": [7]}, lambda: make_pipeline(
        StandardScaler(), KNeighborsClassifier(7, weights="distance"))),
    ("mlp", {"alpha": [1e-3]}, lambda: make_pipeline(StandardScaler(), MLPClassifier(
        (32,), alpha=1e-3, solver="lbfgs", max_iter=100,
        random_state=_sklearn_seed(0, "mlp")))),
    ("gbt", {"max_iter": [30]}, lambda: XGBClassifier(
        n_estimators=30, max_depth=3, learning_rate=0.2, max_bin=32, min_child_weight=1.25,
        tree_method="hist", n_jobs=1, random_state=_sklearn_seed(0, "gbt"))),
])
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_baselines_match_scikit_learn(name, grid, reference):
    X, y, Xt, yt = _toy()
    (probe,) = sp.baseline_probes({name: grid})
    row = sp.evaluate([probe], X, y, Xt, yt).iloc[0]
    expected = roc_auc_score(yt, reference().fit(X, y).predict_proba(Xt)[:, 1])
    assert row.test_auc == pytest.approx(expected, abs=1e-12)
    fit, val = sp.validation_split(y, 0.25, 0)
    scores = reference().fit(X[fit], y[fit]).predict_proba(X[val])[:, 1]
    expected_val = roc_auc_score(y[val], scores)
    assert row.val_auc == pytest.approx(expected_val, abs=1e-12)


def test_grid_search_picks_the_best_validation_auc_and_refits():
    X, y, Xt, yt = _toy(1)
    (probe,) = sp.baseline_probes({"logreg": {"C": [1e-4, 1e-2, 1.0]}})
    row = sp.evaluate([probe], X, y, Xt, yt).iloc[0]
    fit, val = sp.validation_split(y, 0.25, 0)
    vals = [roc_auc_score(y[val], sp.logreg(C).fit(X[fit], y[fit]).predict_proba(X[val])[:, 1])
            for C in (1e-4, 1e-2, 1.0)]
    best = (1e-4, 1e-2, 1.0)[int(np.argmax(vals))]
    assert row.val_auc == pytest.approx(max(vals)) and row.params == f"C={best:g}"
    assert row.test_auc == pytest.approx(
        roc_auc_score(yt, sp.logreg(best).fit(X, y).predict_proba(Xt)[:, 1]))


def test_sae_probe_is_selection_then_logistic_regression():
    X, _ = sparse_data(n=500, seed=2)
    sae, _ = sp.train_sae(X, n_latents=96, k=4, epochs=5)
    y = (sae.codes(X)[:, 3] > 0).astype(int)
    (probe,) = sp.sae_probes(sae, ks=(2,))
    row = sp.evaluate([probe], X[:300], y[:300], X[300:], y[300:]).iloc[0]
    sel = sp.SAELatents(sae, 2).fit(X[:300], y[:300])
    ref = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    ref.fit(sel.transform(X[:300]), y[:300])
    expected = roc_auc_score(y[300:], ref.predict_proba(sel.transform(X[300:]))[:, 1])
    assert row.family == "sae" and row.test_auc == pytest.approx(expected) and row.test_auc > 0.95
    assert [p.name for p in sp.sae_probes(sae, ks=(2, 8), separate=True)] == ["sae_k2", "sae_k8"]


def test_evaluate_rejects_bad_inputs():
    X, y, Xt, yt = _toy()
    probes = sp.baseline_probes({"logreg": {"C": [1.0]}})
    with pytest.raises(ValueError, match="both classes"):
        sp.evaluate(probes, X, y, Xt, np.zeros_like(yt))
    with pytest.raises(ValueError, match="same number of columns"):
        sp.evaluate(probes, X, y, Xt[:, :3], yt)
    with pytest.raises(ValueError, match="two examples of each class"):
        sp.evaluate(probes, X[:3], np.array([0, 1, 1]), Xt, yt)
    with pytest.raises(ValueError, match="unknown baselines"):
        sp.baseline_probes({"svm": {}})


# --- regimes -----------------------------------------------------------------------------------

Y = np.repeat([0, 1], 200)


@pytest.mark.parametrize("n_train", [4, 5, 16, 256])
def test_scarcity_split_sizes_balance_and_a_fixed_test_set(n_train):
    s = sp.scarcity_split(Y, n_train, n_test=100, seed=3)
    assert len(s.train) == n_train and len(s.test) == 100 and Y[s.test].mean() == 0.5
    assert Y[s.train].sum() == -(-n_train // 2) and not set(s.train) & set(s.test)
    assert len(set(s.train)) == n_train and (s.y_train == Y[s.train]).all()
    other = sp.imbalance_split(Y, 0.2, 100, n_test=100, seed=3)
    assert (other.test == s.test).all()  # one test set per data set and seed, in every regime


@pytest.mark.parametrize("fraction", [0.05, 0.1, 0.3, 0.5, 0.9])
def test_imbalance_split_has_the_requested_positive_fraction(fraction):
    s = sp.imbalance_split(Y, fraction, n_train=120, n_test=100)
    assert len(s.train) == 120 and s.y_train.sum() == round(fraction * 120)
    assert Y[s.test].mean() == 0.5 and not set(s.train) & set(s.test)


@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.25, 0.5])
def test_noise_split_flips_exactly_the_requested_fraction(fraction):
    s = sp.noise_split(Y, fraction, n_train=128, n_test=100)
    assert (s.y_train != Y[s.train]).sum() == int(fraction * 128)
    clean = sp.scarcity_split(Y, 128, 100)
    assert (s.train == clean.train).all() and (s.test == clean.test).all()


def test_shift_split_tests_on_every_ood_row():
    y_ood = np.array([0, 1, 1, 0, 1])
    s = sp.shift_split(Y, y_ood, n_train=64, n_test=100)
    assert s.ood_test and (s.test == np.arange(5)).all() and len(s.train) == 64
    with pytest.raises(ValueError, match="both classes"):
        sp.shift_split(Y, np.ones(5, int), 64, 100)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_probes_and_splits_take_63_bit_seeds():
    # a named stream of a run seed (run.seed_of) is a 63-bit integer; scikit-learn and XGBoost
    # take 32 bits, so the probes reduce it to a stream of their own
    X, y, Xt, yt = _toy()
    big = 2**63 - 1
    probes = sp.baseline_probes({"mlp": {}, "gbt": {"max_iter": [5]}}, seed=big)
    split = sp.scarcity_split(y, 16, n_test=20, seed=big)
    rows = sp.evaluate(probes, X[split.train], split.y_train, Xt, yt, seed=big)
    assert rows.test_auc.between(0, 1).all()


def test_spurious_split_correlates_label_and_domain_in_training_only():
    y, y_ood = np.repeat([0, 1], 100), np.repeat([0, 1], 60)
    domain = np.r_[np.ones(200, int), np.zeros(120, int)]
    labels = np.r_[y, y_ood]
    for agreement in (0.5, 0.75, 1.0):
        s = sp.spurious_split(y, y_ood, agreement, n_train=64, n_test=40, seed=3)
        assert s.joint and len(s.train) == 64 and len(np.unique(s.train)) == 64
        assert not set(s.train) & set(s.test)
        assert (s.y_train == labels[s.train]).all()
        # exactly round(a * 32) of each class's 32 examples from the aligned domain
        agree = (domain[s.train] == s.y_train)
        assert agree.sum() == 2 * round(agreement * 32)
        # the test set: 10 rows in each (class, domain) cell, so domain is independent of label
        cells = np.bincount(2 * labels[s.test] + domain[s.test], minlength=4)
        assert (cells == 10).all()
    again = sp.spurious_split(y, y_ood, 1.0, n_train=64, n_test=40, seed=3)
    assert (again.test == s.test).all() and (again.train == s.train).all()
    with pytest.raises(ValueError, match=r"\[0.5, 1\]"):
        sp.spurious_split(y, y_ood, 0.3, 64, 40)
    with pytest.raises(ValueError, match="multiple of 4"):
        sp.spurious_split(y, y_ood, 0.9, 64, 42)
    with pytest.raises(ValueError, match="the pool has"):
        sp.spurious_split(y, y_ood, 1.0, 120, 40)


def test_a_probe_on_the_domain_alone_falls_to_chance_on_the_spurious_test_set():
    # a feature that is only the domain predicts the training labels perfectly at agreement 1
    # and says nothing on the test set: the split does what it claims
    y, y_ood = np.repeat([0, 1], 100), np.repeat([0, 1], 60)
    domain = np.r_[np.ones(200), np.zeros(120)]
    s = sp.spurious_split(y, y_ood, 1.0, n_train=64, n_test=40, seed=1)
    assert roc_auc_score(s.y_train, domain[s.train]) == 1.0
    assert roc_auc_score(np.r_[y, y_ood][s.test], domain[s.test]) == 0.5


def test_win_shares_give_exact_binomial_intervals():
    wins = pd.DataFrame({"regime": ["a"] * 10 + ["b"] * 4,
                         "sae_wins": [True] * 3 + [False] * 7 + [False] * 4})
    shares = sp.win_shares(wins)
    assert list(shares.index) == ["a", "b"]
    assert shares.loc["a", "wins"] == 3 and shares.loc["a", "evaluations"] == 10
    # Clopper-Pearson 3 of 10: the 2.5% and 97.5% beta quantiles (closed form, tabulated)
    assert shares.loc["a", "low"] == pytest.approx(0.066739, abs=1e-5)
    assert shares.loc["a", "high"] == pytest.approx(0.652453, abs=1e-5)
    assert shares.loc["b", "low"] == 0.0 and shares.loc["b", "high"] == pytest.approx(
        1 - 0.025 ** (1 / 4))
    with pytest.raises(ValueError, match="level"):
        sp.win_shares(wins, level=1.5)


def test_regimes_reject_impossible_requests():
    with pytest.raises(ValueError, match="at least 4"):
        sp.scarcity_split(Y, 2, 100)
    with pytest.raises(ValueError, match="the pool has"):
        sp.scarcity_split(Y, 400, 100)
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        sp.imbalance_split(Y, 1.0, 100, 100)
    with pytest.raises(ValueError, match=r"\[0, 0.5\]"):
        sp.noise_split(Y, 0.6, 100, 100)
    with pytest.raises(ValueError, match="even number"):
        sp.holdout(Y, 99)
    with pytest.raises(ValueError, match="0/1 labels"):
        sp.holdout(np.array([0, 2, 1]), 2)
    with pytest.raises(ValueError, match="unknown regime"):
        sp.make_split("drift", 1, Y, n_train=10, n_test=10)
    with pytest.raises(ValueError, match="needs y_ood"):
        sp.make_split("spurious", 0.9, Y, n_train=10, n_test=12)


# --- a sweep and the quivers -------------------------------------------------------------------

def test_run_regime_and_quivers_on_the_committed_data(committed):
    layer = sp.LAYERS[0]
    X = np.concatenate([committed.get(n, layer)[0] for n in committed.names[:4]])
    sae, _ = sp.train_sae(X, n_latents=256, k=16, epochs=2)
    probes = sp.baseline_probes({"logreg": {"C": [1.0]}, "knn": {"n_neighbors": [5]}})
    probes += sp.sae_probes(sae, ks=(8,))
    names = ["87_glue_cola", "5_hist_fig_ismale"]
    res = pd.concat([
        sp.run_regime(committed, layer, "scarcity", [8, 32], probes, datasets=names),
        sp.run_regime(committed, layer, "shift", None, probes, datasets=names + ["36_sciq_tf"]),
        sp.run_regime(committed, layer, "spurious", [1.0], probes,
                      datasets=names + ["36_sciq_tf"]),
    ], ignore_index=True)
    assert len(res) == (2 * 2 + 2 + 2) * 3
    assert set(res[res.regime == "shift"].setting) == {128}
    assert res.test_auc.between(0, 1).all() and res.val_auc.between(0, 1).all()
    q = sp.compare_quivers(res)
    assert len(q) == 8
    chosen = res.loc[res.groupby(["dataset", "regime", "setting"], sort=False).val_auc.idxmax()]
    assert np.allclose(q.with_sae, chosen.test_auc)
    assert (q.gain[~q.sae_chosen] == 0).all()
    again = sp.run_regime(committed, layer, "scarcity", [8, 32], probes, datasets=names, n_jobs=2)
    pd.testing.assert_frame_equal(res[res.regime == "scarcity"].drop(columns="seconds"),
                                  again.drop(columns="seconds"), check_dtype=False)
    wins = sp.sae_wins(res, against="oracle")
    best = res[res.family == "baseline"].groupby(["dataset", "regime", "setting"], sort=False)
    assert (wins.baseline.to_numpy() == best.test_auc.max().to_numpy()).all()


def test_quiver_picks_the_best_validation_auc_with_ties_to_the_first():
    res = pd.DataFrame({
        "dataset": ["a"] * 3, "regime": ["noise"] * 3, "setting": [0.1] * 3,
        "probe": ["logreg", "knn", "sae"], "family": ["baseline", "baseline", "sae"],
        "val_auc": [0.8, 0.8, 0.9], "test_auc": [0.7, 0.9, 0.6]})
    assert sp.quiver(res).probe.item() == "logreg"
    q = sp.compare_quivers(res).iloc[0]
    assert q.baselines == 0.7 and q.with_sae == 0.6 and q.sae_chosen
    assert q.gain == pytest.approx(-0.1)
    mean, (low, high) = bootstrap_ci(np.array([0.0, 0.1, -0.1, 0.05]), n_boot=2000)
    assert low <= mean <= high
