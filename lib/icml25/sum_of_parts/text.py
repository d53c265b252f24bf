r"""Sum-of-Parts on text: tokens are the patches.

A text is cut to its first $T$ tokens (MiniLM's WordPiece tokenizer, no special tokens),
and token $t$ becomes a vector $x_t\in\mathbb R^{d+1}$: MiniLM's *input* embedding
(its layer 0, $\mathrm{LayerNorm}(e_{\mathrm{word}}+e_{\mathrm{position}}+
e_{\mathrm{type}})$, which depends on the token and its position only) projected on the
top $d$ principal axes of the model's word-embedding table, followed by a presence
feature $x_{t,d}=1$ (0 for padding). A masked token is the zero vector, presence
included, as a padding token is. Because the features are non-contextual, masking is
exact: what a group's tokens say does not depend on the tokens masked out, as it would
inside a transformer's later layers.

On these inputs the chapter's models read tokens where they read patches:
:class:`TokenBackbone` (mean-pooled per-token network, trained first with random token
masking), :class:`TokenSumOfParts` (SOP's generator over tokens), fixed groups of
contiguous tokens (:func:`contiguous_groups`), the "-F" construction
(:func:`posthoc_token_scores`, :func:`mask_tokens`) and the per-feature SANN over
tokens, :class:`PerTokenAdditive`.

The features of the chapter's data set (SST-2 sentences from the package ``sae-probes``)
are committed in ``data/sum_of_parts/sst2_tokens.npz`` (:func:`load_tokens`), written by
``python -m icml25.sum_of_parts data/sum_of_parts/sst2_tokens.npz``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from icml25.common.validation import check_int
from icml25.sum_of_parts.attributions import _captum_attributions
from icml25.sum_of_parts.data import _seeded
from icml25.sum_of_parts.models import SumOfParts

DATASET = "92_glue_sst2"
"""The sae-probes data set: 5,000 SST-2 sentences and phrases, label 1 = positive."""

N_TOKENS, N_AXES = 16, 32
"""Tokens kept per text ($T$) and principal axes of the embedding table ($d$)."""

TOKENS_FILE = "sum_of_parts/sst2_tokens.npz"


# -------------------- data
@dataclass(frozen=True)
class TokenData:
    """``X`` (n, T, d + 1) float32 token features, presence last (0 for padding);
    ``y`` (n,) labels; ``ids`` (n, T) token ids (0 for padding) and ``vocab`` (id to
    WordPiece string, for the ids that occur); ``digest``: sha256 of the texts."""

    X: np.ndarray
    y: np.ndarray
    ids: np.ndarray = field(repr=False)
    vocab: dict = field(repr=False)
    digest: str = ""

    def words(self, i: int, keep=None) -> list[str]:
        """The tokens of text ``i`` (padding left out), those not in ``keep`` (T,) bool
        in brackets when ``keep`` is given."""
        out = []
        for t, tid in enumerate(self.ids[i]):
            if self.X[i, t, -1] == 0:
                continue
            word = self.vocab[int(tid)]
            out.append(word if keep is None or keep[t] else f"[{word}]")
        return out


def embedding_axes(weight, n_axes: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The mean $\mu$ (D,) and top ``n_axes`` principal axes $V$ (d, D) of an embedding
    table ``weight`` (V, D): $W-\mu = U\Sigma V^\top$, each axis signed so that its
    largest-magnitude entry is positive (a sign fixed by the data, not by LAPACK)."""
    W = np.asarray(weight, np.float64)
    if W.ndim != 2:
        raise ValueError(f"weight must be a (vocabulary, width) table; got {W.shape}")
    check_int(n_axes, "n_axes", minimum=1, maximum=min(W.shape))
    mean = W.mean(0)
    _, _, vt = np.linalg.svd(W - mean, full_matrices=False)
    axes = vt[:n_axes]
    signs = np.sign(axes[np.arange(n_axes), np.abs(axes).argmax(1)])
    return mean, axes * signs[:, None]


def token_features(texts, n_tokens: int = N_TOKENS, n_axes: int = N_AXES):
    r"""Token features of ``texts`` from all-MiniLM-L6-v2 (:mod:`icml25.minilm`).

    Returns ``(features, present, ids)``: ``features`` (n, T, d) float32, the input
    embeddings $h_0$ of the first $T$ tokens projected, $(h_0-\mu)V^\top$, on
    :func:`embedding_axes` of the word-embedding table, zero at padding; ``present``
    (n, T) bool; ``ids`` (n, T) int32.
    """
    from icml25 import minilm

    check_int(n_tokens, "n_tokens", minimum=1)
    texts = [str(t) for t in np.asarray(texts, dtype=object).ravel()]
    if not texts:
        raise ValueError("texts is empty")
    tokenizer, model = minilm._model()
    batch = tokenizer(texts, add_special_tokens=False, truncation=True,
                      max_length=n_tokens, padding="max_length", return_tensors="pt")
    with torch.inference_mode():
        states = model.embeddings(input_ids=batch["input_ids"]).numpy()
        table = model.embeddings.word_embeddings.weight.numpy()
    mean, axes = embedding_axes(table, n_axes)
    present = batch["attention_mask"].numpy().astype(bool)
    features = ((states - mean) @ axes.T) * present[..., None]
    return features.astype(np.float32), present, batch["input_ids"].numpy().astype(np.int32)


def token_inputs(features, present) -> np.ndarray:
    """``(features, present)`` as model inputs (n, T, d + 1): the presence appended as
    the last feature, every feature of an absent token zero."""
    features, present = np.asarray(features, np.float32), np.asarray(present, bool)
    if features.ndim != 3 or present.shape != features.shape[:2]:
        raise ValueError(f"features must be (n, T, d) and present (n, T); got "
                         f"{features.shape} and {present.shape}")
    X = np.concatenate([features, np.ones(present.shape + (1,), np.float32)], -1)
    return X * present[..., None]


def save_tokens(out, texts, labels, n_tokens: int = N_TOKENS,
                n_axes: int = N_AXES) -> None:
    """Write :func:`token_features` of ``texts`` (float16), their labels, ids, the
    WordPiece strings of the ids that occur and the texts' digest to ``out``."""
    from icml25 import minilm

    features, present, ids = token_features(texts, n_tokens, n_axes)
    tokenizer, _ = minilm._model()
    used = np.unique(ids[present])
    np.savez_compressed(
        out, features=features.astype(np.float16), present=present, ids=ids,
        label=np.asarray(labels, np.int8), vocab_ids=used.astype(np.int32),
        vocab=np.array(tokenizer.convert_ids_to_tokens(used.tolist())),
        digest=np.array(minilm.texts_digest(texts)), dataset=np.array(DATASET))


def load_tokens(file=None) -> TokenData:
    """The committed SST-2 token features (``data/sum_of_parts/sst2_tokens.npz``,
    checked against ``data/MANIFEST``) as :class:`TokenData`."""
    if file is None:
        from icml25.common import data

        file = data.path(TOKENS_FILE)
    with np.load(file, allow_pickle=False) as z:
        X = token_inputs(z["features"].astype(np.float32), z["present"])
        vocab = dict(zip(z["vocab_ids"].tolist(), z["vocab"].tolist()))
        return TokenData(X, z["label"].astype(np.int64), z["ids"], vocab,
                         str(z["digest"]))


def main(argv=None):  # pragma: no cover - the data command, run by hand
    """``python -m icml25.sum_of_parts data/sum_of_parts/sst2_tokens.npz``: the token
    features of every text of :data:`DATASET`."""
    import argparse

    from icml25.common.sae_probes import read_dataset

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("out")
    args = parser.parse_args(argv)
    frame = read_dataset(DATASET)
    save_tokens(args.out, frame["text"].tolist(), frame["label"].to_numpy())


# -------------------- models
def _presence(x):
    """The presence feature (..., T, 1) of token inputs."""
    return x[..., -1:]


class TokenBackbone(nn.Module):
    r"""The text backbone: a network of each token, mean-pooled over the present tokens,
    then an MLP; ``body`` gives the embedding and ``classifier`` the logits, as
    :class:`~icml25.sum_of_parts.MLPBackbone` does for images.

    .. math:: z(x)=\mathrm{ReLU}\Big(W_2\,\frac{\sum_t \pi_t\,\mathrm{ReLU}(W_1x_t+b_1)}
              {\max(1,\sum_t\pi_t)}+b_2\Big),\qquad f(x)=Wz(x)+b,

    $\pi_t=x_{t,d}$ the presence of token $t$. Pooling makes it read a bag of tokens
    (each with its position in its embedding); the layer after the pooling lets tokens
    interact (a negation can flip a sentiment word), so it is not additive.
    """

    def __init__(self, n_features: int, n_classes: int, hidden: int = 32,
                 width: int = 32, *, seed=0):
        super().__init__()
        for value, name in ((n_features, "n_features"), (n_classes, "n_classes"),
                            (hidden, "hidden"), (width, "width")):
            check_int(value, name, minimum=1)
        with _seeded(seed):
            self.token = nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU())
            self.pooled = nn.Sequential(nn.Linear(hidden, width), nn.ReLU())
            self.classifier = nn.Linear(width, n_classes)

    def body(self, x):
        if x.ndim != 3:
            raise ValueError(f"x must be (B, T, d + 1) token inputs; got {tuple(x.shape)}")
        present = _presence(x)
        pooled = (self.token(x) * present).sum(-2) / present.sum(-2).clamp(min=1)
        return self.pooled(pooled)

    def forward(self, x):
        return self.classifier(self.body(x))


class PerTokenAdditive(nn.Module):
    r"""The per-feature SANN over tokens (a neural additive model whose features are the
    tokens): $f_c(x)=b_c+\sum_t \pi_t\,h_c(x_t)$, one network
    $h(x_t)=W_2\,\mathrm{ReLU}(W_1x_t+b_1)$ shared by all positions (the position is in
    $x_t$), $\pi_t$ the presence. ``attributions`` returns the terms $\pi_t h_c(x_t)$
    (B, C, T), which sum with $b_c$ to the logit. It is
    :class:`~icml25.sum_of_parts.PerFeatureAdditive` with vector features and one shape
    function for them all: a text's tokens, unlike an image's pixels, have no fixed
    places, so a network per position would learn each word once per position.
    """

    def __init__(self, n_features: int, n_classes: int, hidden: int = 32, *, seed=0):
        super().__init__()
        for value, name in ((n_features, "n_features"), (n_classes, "n_classes"),
                            (hidden, "hidden")):
            check_int(value, name, minimum=1)
        with _seeded(seed):
            self.shape_function = nn.Sequential(
                nn.Linear(n_features, hidden), nn.ReLU(), nn.Linear(hidden, n_classes))
        self.bias = nn.Parameter(torch.zeros(n_classes))

    def attributions(self, x):
        if x.ndim != 3:
            raise ValueError(f"x must be (B, T, d + 1) token inputs; got {tuple(x.shape)}")
        return (self.shape_function(x) * _presence(x)).transpose(1, 2)

    def forward(self, x):
        return self.attributions(x).sum(-1) + self.bias


class TokenSumOfParts(SumOfParts):
    r"""SOP over the $T$ tokens of a text: :class:`~icml25.sum_of_parts.SumOfParts`
    with tokens as its patches.

    The patch projection is a linear map of each token's features,
    $E_t=\mathrm{proj}(x_t)+p_t$; a group keeps the features of its tokens and zeroes
    the others' (presence included, so a masked token reads as padding); everything
    else (attention candidates, top-$k$ masks and $c_g$, the sparsemax selector, the
    frozen backbone on each masked input) is SOP's. With ``blur`` the attention logits
    are blurred along the text by the kernel $[1,2,1]/4$ (the image kernel's rows),
    repeating the end values; off by default, since the authors' blur is an image one.

    Parameters
    ----------
    backbone : nn.Module
        Frozen; reads (B, T, d + 1) with ``body`` and ``classifier``.
    n_tokens : int
        $T$, the tokens of a text and the units of the groups.
    n_features : int
        $d+1$, the features of a token.
    **options
        ``dim``, ``n_candidates``, ``n_groups``, ``k``, ``gen_scale``, ``sel_scale``,
        ``blur``, ``straight_through``, ``fixed_groups`` (G, T) and ``seed``, as for
        :class:`~icml25.sum_of_parts.SumOfParts`.
    """

    def __init__(self, backbone, n_tokens: int, n_features: int, *, dim: int = 16,
                 n_candidates: int | None = None, n_groups: int = 8, k: float = 0.25,
                 gen_scale: float = 1.0, sel_scale: float = 1.0, blur: bool = False,
                 straight_through: bool = False, fixed_groups=None, seed: int = 0):
        nn.Module.__init__(self)
        check_int(n_tokens, "n_tokens", minimum=1)
        check_int(n_features, "n_features", minimum=1)
        self.shape = (n_tokens, n_features)
        self._build(backbone, n_tokens, lambda: nn.Linear(n_features, dim), dim=dim,
                    n_candidates=n_candidates, n_groups=n_groups, k=k,
                    gen_scale=gen_scale, sel_scale=sel_scale, blur=blur,
                    straight_through=straight_through, fixed_groups=fixed_groups,
                    seed=seed)
        self.register_buffer("kernel", torch.tensor([[[1.0, 2.0, 1.0]]]) / 4)

    def _embed(self, x):
        return self.proj(x)

    def _blur(self, logits):
        flat = logits.reshape(-1, 1, logits.shape[-1])
        flat = nn.functional.pad(flat, (1, 1), mode="replicate")
        return nn.functional.conv1d(flat, self.kernel).reshape(logits.shape)

    def _check_input(self, x):
        if x.ndim != 3 or tuple(x.shape[1:]) != self.shape:
            raise ValueError(f"x must be (B, {self.shape[0]}, {self.shape[1]}) token "
                             f"inputs; got {tuple(x.shape)}")

    def _masked(self, x, masks):
        return x[:, None] * masks[..., None]


def contiguous_groups(n_tokens: int, size: int) -> np.ndarray:
    """Fixed groups (n_tokens // size, n_tokens) of ``size`` consecutive tokens each
    (the text's analogue of the image quadrants); ``size`` must divide ``n_tokens``."""
    check_int(n_tokens, "n_tokens", minimum=1)
    check_int(size, "size", minimum=1, maximum=n_tokens)
    if n_tokens % size:
        raise ValueError(f"size {size} must divide n_tokens {n_tokens}")
    return np.arange(n_tokens)[None] // size == np.arange(n_tokens // size)[:, None]


# -------------------- "-F" over tokens
def posthoc_token_scores(backbone, X, target, method: str = "ig", *,
                         n_samples: int = 16, seed=0) -> np.ndarray:
    r"""Post-hoc attributions of the backbone from captum, one per token, (n, T).

    ``method`` as for :func:`~icml25.sum_of_parts.posthoc_patch_scores`, the tokens in
    place of the patches: Integrated Gradients from the all-zero (all masked) text,
    gradient x input, token ablation, or Shapley value sampling over the tokens
    (``n_samples`` random orders from ``seed``) with absent tokens zeroed. Gradient
    attributions are summed over a token's features; ablation and Shapley sampling give
    each token one value, its effect on the output (the Shapley values then sum to
    $h(x)-h(0)$).
    """
    X, target = torch.as_tensor(X), torch.as_tensor(target)
    if X.ndim != 3 or target.shape != (len(X),):
        raise ValueError(f"X must be (n, T, d + 1) and target (n,); got "
                         f"{tuple(X.shape)} and {tuple(target.shape)}")
    T = X.shape[1]
    ids = torch.arange(T)[None, :, None]  # broadcast: captum then loops over less
    attr = _captum_attributions(backbone, X, target, ids, T, method, n_samples, seed)
    if method in ("ablation", "shap"):  # every feature of a token carries its value
        return attr[..., 0].numpy()
    return attr.sum(-1).numpy()


def mask_tokens(X, keep) -> np.ndarray:
    """Token inputs (n, T, d + 1) with only the tokens marked in ``keep`` (n, T) left,
    the rest zero (absent). With :func:`~icml25.sum_of_parts.top_patches` of a post-hoc
    attribution this is the "-F" construction over tokens."""
    X, keep = np.asarray(X), np.asarray(keep, np.float32)
    if X.ndim != 3 or keep.shape != X.shape[:2]:
        raise ValueError(f"keep must be {X.shape[:2]} for X of shape {X.shape}")
    return (X * keep[..., None]).astype(np.float32)
