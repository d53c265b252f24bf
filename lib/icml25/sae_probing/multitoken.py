r"""Multi-token probes: an SAE's latents pooled over a text's tokens, against probes on raw states.

The paper's multi-token study (Kantamneni, Engels et al., 2025; ``run_multi_token_acts.py`` in the
authors' release) asks whether an SAE helps a probe that reads *every* token of a text instead of
one. Its SAE probe encodes each token with the SAE, marks the latents that fire, pools them over
the tokens by a maximum (a latent counts if it fires on any token), keeps the :math:`k` latents
whose mean differs most between the classes, and fits an L1 logistic regression. Its non-SAE
baseline is an attention-pooled probe on the raw token states. We rebuild both on the hidden
states of all-MiniLM-L6-v2 after block :data:`LAYER`:

* :func:`fired_any`: :math:`f_{ij} = \max_{t \ge 2} \mathbb 1[z_j(h_{it}) > 0]`, the tokens of
  text :math:`i` after ``[CLS]`` (the paper skips the first token, Gemma's ``<bos>``);
* :func:`sae_multitoken_probe`: :class:`TopLatents` (the :math:`k` largest
  :math:`|\bar f_{\cdot j}^{(1)} - \bar f_{\cdot j}^{(0)}|`) then L1 logistic regression;
* :class:`AttentionProbe`: :math:`\alpha_{it} = \operatorname{softmax}_t(q^\top h_{it})`,
  :math:`p_i = \sigma(w^\top \sum_t \alpha_{it} h_{it} + b)`, trained on the cross-entropy with an
  L2 penalty :math:`\lambda(\|q\|^2 + \|w\|^2)`, as the authors' ``train_attn_probing``;
* the single-token probe: logistic regression on the ``[CLS]`` state alone, the counterpart in an
  encoder of the paper's last-token probe in a decoder.

:func:`multitoken_results` runs all of them on every data set for one seed; ``python -m
icml25.sae_probing.multitoken data/sae_probing/multitoken.npz`` measures the seeds the chapter's
plan may read and writes their test AUCs (about 3 CPU-minutes a seed: the token-level SAE is the
heavy step, so the chapter reads the committed file).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from icml25.common.optim import Adam
from icml25.common.streams import as_generator, stream_int

from .probes import Probe, _product, evaluate, logreg
from .sae import TopKSAE, train_sae

LAYER, MAX_TOKENS = 3, 64
"""The block whose token states are probed (the chapter's middle layer) and the truncation."""

N_TRAIN = 256
"""Training texts per data set (balanced); the other 144 of the 400 sampled are the test set."""

SAE = {"n_latents": 2048, "k": 32, "epochs": 3}
"""The token-level SAE: the chapter's width and sparsity, three passes over ~140,000 tokens."""

SEEDS = tuple(range(10))
"""The seeds measured: the chapter's plan reads its verdicts at 5 and, if undecided, 10 seeds."""

PROBES = ("sae_max", "attention", "cls", "mean")
"""The probes of :func:`multitoken_results`: the SAE's max-pooled latents, the attention-pooled
raw states, the ``[CLS]`` state alone, and the mean over tokens (the chapter's usual input)."""

MULTITOKEN = "sae_probing/multitoken.npz"


def _check_ragged(states, offsets) -> tuple[np.ndarray, np.ndarray]:
    states = np.asarray(states, dtype=np.float32)
    offsets = np.asarray(offsets, dtype=np.int64)
    if states.ndim != 2:
        raise ValueError(f"states must be (tokens, width), got shape {states.shape}")
    if (offsets.ndim != 1 or len(offsets) < 2 or offsets[0] != 0
            or offsets[-1] != len(states) or np.any(np.diff(offsets) < 2)):
        raise ValueError("offsets must rise from 0 to len(states) by at least 2 a text "
                         "([CLS] and one more token)")
    return states, offsets


def fired_any(sae: TopKSAE, states, offsets) -> np.ndarray:
    r"""Which latents fire on any token of each text after its first: ``(texts, latents)``, 0/1.

    :math:`f_{ij} = \max_{t \ge 2} \mathbb 1[z_j(h_{it}) > 0]` with :math:`z` the SAE's codes;
    the binarised max pooling of the authors' ``train_aggregated_probe_on_acts`` (they binarise
    at 1 for Gemma Scope's JumpReLU codes; a TopK code is either 0 or active).
    """
    states, offsets = _check_ragged(states, offsets)
    fired = np.array(sae.codes(states) > 0)
    fired[offsets[:-1]] = False  # each text's [CLS] counts for nothing
    return np.logical_or.reduceat(fired, offsets[:-1], axis=0).astype(np.float32)


def padded(states, offsets, skip_first: bool = True) -> np.ndarray:
    """The ragged token states as ``(texts, T, width)``, zero-padded to the longest text.

    With ``skip_first`` the ``[CLS]`` token of each text is left out. An all-zero row marks
    padding (a hidden state is never exactly zero).
    """
    states, offsets = _check_ragged(states, offsets)
    first = offsets[:-1] + int(skip_first)
    lengths = offsets[1:] - first
    out = np.zeros((len(lengths), lengths.max(), states.shape[1]), dtype=np.float32)
    for i, (a, n) in enumerate(zip(first, lengths)):
        out[i, :n] = states[a:a + n]
    return out


class TopLatents(TransformerMixin, BaseEstimator):
    r"""Keep the ``k`` columns with the largest class-mean difference
    :math:`|\bar f^{(1)}_j - \bar f^{(0)}_j|` on the training set (ties: the lower index)."""

    def __init__(self, k: int = 128):
        self.k = k

    def fit(self, X, y):
        X, y = np.asarray(X), np.asarray(y)
        if not 1 <= self.k <= X.shape[1]:
            raise ValueError(f"k must lie in 1..{X.shape[1]}, got {self.k}")
        if set(np.unique(y)) != {0, 1}:
            raise ValueError("y must contain both classes 0 and 1")
        score = np.abs(X[y == 1].mean(0) - X[y == 0].mean(0))
        self.columns_ = np.argsort(-score, kind="stable")[: self.k]
        return self

    def transform(self, X):
        return np.asarray(X)[:, self.columns_]


def sae_multitoken_probe(k: int = 128, C: float = 1.0):
    """:class:`TopLatents` then an L1 logistic regression (the authors' ``penalty="l1"``)."""
    return make_pipeline(TopLatents(k), LogisticRegression(
        l1_ratio=1.0, C=C, solver="liblinear", max_iter=1000))


class AttentionProbe(ClassifierMixin, BaseEstimator):
    r"""An attention-pooled logistic probe on token states (the authors' attention-like probe).

    ``X`` is ``(texts, T * width)``: :func:`padded`'s array flattened, all-zero rows as padding.
    With the states standardised per feature over the training tokens,

    .. math::
        \alpha_{it} = \frac{e^{q^\top h_{it}}}{\sum_{s} e^{q^\top h_{is}}},\qquad
        p_i = \sigma\Big(w^\top \sum_t \alpha_{it} h_{it} + b\Big),

    the sums over the text's tokens only, fitted by full-batch Adam (``steps`` steps, learning
    rate ``lr``) on the mean cross-entropy plus :math:`\lambda(\|q\|^2 + \|w\|^2)`. At
    :math:`q = 0` the pooling is the mean over tokens: the probe starts as a mean-pooled linear
    probe and learns where to look. :math:`q` and :math:`w` start at :math:`\mathcal N(0,
    10^{-6})` entries, as the authors', from the stream ``"attention-probe"`` of ``seed``.
    """

    def __init__(self, width: int = 384, l2: float = 1e-3, steps: int = 200, lr: float = 0.02,
                 seed: int = 0):
        self.width, self.l2, self.steps, self.lr, self.seed = width, l2, steps, lr, seed

    def _tokens(self, X) -> tuple[torch.Tensor, torch.Tensor]:
        """The non-padding token states ``(N, width)`` and the ``(N,)`` mask positions."""
        X = np.asarray(X, dtype=np.float32)
        if X.ndim != 2 or X.shape[1] % self.width:
            raise ValueError(f"X must be (texts, T * {self.width}), got shape {X.shape}")
        h = torch.from_numpy(X.reshape(len(X), -1, self.width).copy())
        mask = h.abs().sum(-1) > 0
        if not mask.any(1).all():
            raise ValueError("every text needs at least one token (a non-zero row)")
        return h[mask], mask

    @staticmethod
    def _logits(tokens, mask, q, w, b):
        # one product with the real tokens only, then a softmax over each text's positions:
        # the padded (texts, T) grid holds two numbers a token, not its whole state
        sv = tokens @ torch.stack([q, w], dim=1)
        scores = torch.full(mask.shape, -torch.inf).masked_scatter(mask, sv[:, 0])
        values = torch.zeros(mask.shape).masked_scatter(mask, sv[:, 1])
        return (torch.softmax(scores, dim=1) * values).sum(1) + b

    def fit(self, X, y):
        tokens, mask = self._tokens(X)
        y = np.asarray(y)
        if set(np.unique(y)) != {0, 1} or len(y) != len(mask):
            raise ValueError("y must hold both classes 0 and 1, one label per text")
        self.classes_ = np.array([0, 1])
        self.mean_ = tokens.mean(0)
        self.scale_ = tokens.std(0).clamp_min(1e-6)
        tokens = (tokens - self.mean_) / self.scale_
        gen = torch.Generator().manual_seed(stream_int(int(self.seed), "attention-probe"))
        q = (torch.randn(self.width, generator=gen) * 1e-3).requires_grad_()
        w = (torch.randn(self.width, generator=gen) * 1e-3).requires_grad_()
        b = torch.zeros((), requires_grad=True)
        target = torch.from_numpy(y.astype(np.float32))
        opt = Adam([q, w, b], lr=self.lr)
        previous = torch.get_num_threads()
        torch.set_num_threads(1)  # small products: a second thread costs more than it gives
        try:
            for _ in range(self.steps):
                loss = torch.nn.functional.binary_cross_entropy_with_logits(
                    self._logits(tokens, mask, q, w, b), target) + self.l2 * (q @ q + w @ w)
                opt.zero_grad()
                loss.backward()
                opt.step()
        finally:
            torch.set_num_threads(previous)
        self.q_, self.w_, self.b_ = q.detach(), w.detach(), b.detach()
        return self

    def predict_proba(self, X):
        tokens, mask = self._tokens(X)
        tokens = (tokens - self.mean_) / self.scale_
        with torch.no_grad():
            p = torch.sigmoid(self._logits(tokens, mask, self.q_, self.w_, self.b_)).numpy()
        return np.stack([1 - p, p], axis=1).astype(np.float64)

    def predict(self, X):
        return (self.predict_proba(X)[:, 1] > 0.5).astype(int)


def _probes(seed: int, width: int) -> dict[str, Probe]:
    return {
        "sae_max": Probe("sae_max", lambda p, n: sae_multitoken_probe(**p),
                         _product({"k": [16, 128], "C": [0.1, 1.0, 10.0]}), "sae"),
        "attention": Probe("attention", lambda p, n: AttentionProbe(width, **p, seed=seed),
                           _product({"l2": [1e-4, 1e-2]})),
        "cls": Probe("cls", lambda p, n: logreg(**p), _product({"C": [0.01, 0.1, 1.0]})),
        "mean": Probe("mean", lambda p, n: logreg(**p), _product({"C": [0.01, 0.1, 1.0]})),
    }


def train_split(y, n_train: int = N_TRAIN, seed: int = 0) -> np.ndarray:
    """A balanced training set of ``n_train`` positions of ``y`` (the rest is the test set)."""
    y = np.asarray(y)
    if n_train % 2 or min(np.bincount(y, minlength=2)) <= n_train // 2:
        raise ValueError(f"need an even n_train and more than {n_train // 2} texts per class")
    rng = as_generator(seed)
    return np.sort(np.concatenate([rng.choice(np.flatnonzero(y == c), n_train // 2,
                                              replace=False) for c in (0, 1)]))


def multitoken_results(states, offsets, dataset, label, seed: int,
                       sae_sizes: dict | None = None, n_train: int = N_TRAIN,
                       names: Sequence[str] | None = None) -> pd.DataFrame:
    """Test AUC of the four :data:`PROBES` on every data set, for one seed.

    The seed names three streams: ``"sae-training"`` (the token-level SAE, trained on every token
    of every text: unsupervised, like the chapter's SAE), ``"splits"`` (each data set's balanced
    training set of ``n_train`` texts; the rest is its test set) and ``"probe-init"`` (the
    attention probe's start). Each probe's hyperparameters are chosen on a stratified quarter of
    the training set (:func:`~icml25.sae_probing.probes.evaluate`, one split for all probes).

    Returns one row per data set and probe: ``dataset``, ``probe``, ``params``, ``val_auc``,
    ``test_auc``, ``seconds``.
    """
    states, offsets = _check_ragged(states, offsets)
    dataset, label = np.asarray(dataset), np.asarray(label).astype(int)
    if len(dataset) != len(offsets) - 1 or len(label) != len(dataset):
        raise ValueError("dataset and label need one entry per text")
    sizes = {**SAE, **(sae_sizes or {})}
    sae, _ = train_sae(states, seed=stream_int(seed, "sae-training"), **sizes)
    probes = _probes(stream_int(seed, "probe-init"), states.shape[1])
    split_seed = stream_int(seed, "splits")
    rows = []
    names = list(names) if names is not None else list(dict.fromkeys(dataset.tolist()))
    for i, name in enumerate(names):
        texts = np.flatnonzero(dataset == name)
        if not len(texts):
            raise ValueError(f"no texts of data set {name!r}")
        y = label[texts]
        train = np.isin(np.arange(len(texts)), train_split(y, n_train, [split_seed, i]))
        cut = np.concatenate([offsets[texts], [offsets[texts[-1] + 1]]])
        if not np.array_equal(np.diff(cut), np.diff(offsets)[texts]):
            raise ValueError(f"the texts of {name!r} must be contiguous")
        local = states[cut[0]:cut[-1]]
        local_off = cut - cut[0]
        tokens = padded(local, local_off)
        features = {
            "sae_max": fired_any(sae, local, local_off),
            "attention": tokens.reshape(len(texts), -1),
            "cls": local[local_off[:-1]],
            "mean": np.add.reduceat(local, local_off[:-1], axis=0) / np.diff(local_off)[:, None],
        }
        for key in PROBES:
            X = features[key]
            out = evaluate([probes[key]], X[train], y[train], X[~train], y[~train],
                           seed=[split_seed, i, 1])
            rows.append(out.assign(dataset=name))
    return pd.concat(rows, ignore_index=True)[
        ["dataset", "probe", "params", "val_auc", "test_auc", "seconds"]]


def load_results(file=None) -> pd.DataFrame:
    """The committed test AUCs (``data/sae_probing/multitoken.npz``): one row per seed, data set
    and probe.

    ``frame.attrs`` holds ``n_tokens`` (the token states the SAE trained on), ``layer``,
    ``max_tokens`` and ``n_train``.
    """
    if file is None:
        from icml25.common import data

        file = data.path(MULTITOKEN)
    with np.load(file, allow_pickle=False) as z:
        auc = z["test_auc"]  # (seeds, datasets, probes)
        seeds, names, probes = z["seeds"], [str(s) for s in z["names"]], [
            str(p) for p in z["probes"]]
        index = pd.MultiIndex.from_product([seeds.tolist(), names, probes],
                                           names=["seed", "dataset", "probe"])
        out = pd.DataFrame({"test_auc": auc.ravel(), "params": z["params"].ravel()},
                           index=index).reset_index()
        out.attrs.update({key: int(z[key]) for key in
                          ("n_tokens", "layer", "max_tokens", "n_train")})
        return out


def main(argv=None):  # pragma: no cover - the data command, run by hand
    """``python -m icml25.sae_probing.multitoken data/sae_probing/multitoken.npz``."""
    import argparse

    from .data import DATASETS, sample_texts

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("out")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    from icml25 import minilm

    texts = sample_texts(ood=False)
    t0 = time.perf_counter()
    states, offsets = minilm.token_states(texts["text"], LAYER, max_tokens=MAX_TOKENS)
    print(f"{len(states)} token states of {len(texts)} texts in "
          f"{time.perf_counter() - t0:.0f} s", flush=True)
    names = list(DATASETS)
    from icml25.common.parallel import starmap

    jobs = [(states, offsets, texts["dataset"].to_numpy(), texts["label"].to_numpy(), seed,
             None, N_TRAIN, names) for seed in args.seeds]
    t0 = time.perf_counter()
    results = starmap(multitoken_results, jobs, n_jobs=args.jobs)
    print(f"{len(jobs)} seeds in {time.perf_counter() - t0:.0f} s", flush=True)
    auc = np.empty((len(args.seeds), len(names), len(PROBES)))
    params = np.empty(auc.shape, dtype=object)
    for s, res in enumerate(results):
        table = res.set_index(["dataset", "probe"])
        for i, name in enumerate(names):
            for j, probe in enumerate(PROBES):
                auc[s, i, j] = table.loc[(name, probe), "test_auc"]
                params[s, i, j] = table.loc[(name, probe), "params"]
    np.savez_compressed(args.out, test_auc=auc, params=params.astype(str),
                        seeds=np.array(args.seeds), names=np.array(names),
                        probes=np.array(PROBES), layer=np.array(LAYER),
                        max_tokens=np.array(MAX_TOKENS), n_train=np.array(N_TRAIN),
                        n_tokens=np.array(len(states)),
                        digest=np.array(minilm.texts_digest(texts["text"])))


if __name__ == "__main__":  # pragma: no cover
    main()
