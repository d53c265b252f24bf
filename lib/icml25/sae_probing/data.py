"""The probing data sets of the package ``sae-probes`` and the committed MiniLM activations.

The paper's 113 binary data sets ship inside ``sae-probes``; :func:`package_data_dir` finds them
without importing the package, :func:`read_dataset` / :func:`read_ood` read one, and
:func:`sample_texts` rebuilds the sample whose activations :func:`load` reads from
``data/sae_probing/activations.npz`` (written once by ``python -m icml25.sae_probing``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from icml25 import minilm
from icml25.common.sae_probes import (  # noqa: F401 - re-exported by the package
    INSTALL,
    PACKAGE,
    dataset_tags,
    ood_tags,
    package_data_dir,
    read_dataset,
    read_ood,
)
from icml25.common.streams import as_generator

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
        rng = as_generator([seed, int(tag.split("_")[0])])
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
