r"""The clinical concepts of a rationale, the toy score rule and the concept phrases' embeddings."""

from __future__ import annotations

import numpy as np

#: The concept groups of the rationale, each with its mutually exclusive phrases.
GROUPS = {
    "location": ("lesion in the peripheral zone", "lesion in the transition zone"),
    "margin": ("circumscribed margin", "non-circumscribed margin"),
    "texture": ("homogeneous signal", "heterogeneous signal"),
    "intensity": ("moderately hypointense on T2W", "markedly hypointense on T2W"),
    "diffusion": ("restricted diffusion, bright on DWI and dark on ADC",),
}
#: Every concept phrase, group by group; ``NORMAL`` is the last text of :data:`TEXTS`.
CONCEPTS = tuple(p for phrases in GROUPS.values() for p in phrases)
#: The phrase of normal tissue, the text that no concept holds.
NORMAL = "normal prostate tissue"
#: The texts embedded: every concept phrase of :data:`CONCEPTS`, then :data:`NORMAL`.
TEXTS = CONCEPTS + (NORMAL,)
#: Index of each group's first concept in :data:`CONCEPTS`.
GROUP_START = dict(zip(GROUPS, np.cumsum([0] + [len(v) for v in GROUPS.values()])[:-1]))
ZONE_NAMES = ("PZ", "TZ")
EMBEDDINGS = "rationales/concepts.npz"


def pirads(margin: int, texture: int, intensity: int) -> int:
    r"""The toy PI-RADS-like score of a lesion: :math:`2 + m + h + k \in \{2,3,4,5\}`.

    ``margin`` :math:`m` (1: non-circumscribed), ``texture`` :math:`h` (1: heterogeneous) and
    ``intensity`` :math:`k` (1: markedly hypointense) each add one point: the descriptors
    decide the score, as in the paper's rationale tree (descriptors, then score). An image
    without a lesion scores 1.
    """
    for name, v in (("margin", margin), ("texture", texture), ("intensity", intensity)):
        if v not in (0, 1):
            raise ValueError(f"{name} must be 0 or 1, got {v!r}")
    return 2 + margin + texture + intensity


def embed_concepts(path) -> None:
    """Embed :data:`TEXTS` with all-MiniLM-L6-v2 and save ``embeddings`` and ``texts``."""
    from icml25 import minilm

    emb = minilm.sentence_embeddings(list(TEXTS))
    np.savez_compressed(path, embeddings=emb.astype(np.float32), texts=np.array(TEXTS),
                        digest=np.array(minilm.texts_digest(TEXTS)))


def load_concept_embeddings() -> np.ndarray:
    """The committed MiniLM embeddings of :data:`TEXTS` (checked against the phrases)."""
    from icml25 import minilm
    from icml25.common import data as book_data

    with np.load(book_data.path(EMBEDDINGS)) as z:
        if str(z["digest"]) != minilm.texts_digest(TEXTS):
            raise ValueError("data/rationales/concepts.npz was made for other phrases; "
                             "regenerate it with python -m icml25.rationales")
        return z["embeddings"]
