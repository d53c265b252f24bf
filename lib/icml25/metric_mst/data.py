"""The chapter's data: the paper's Gaussian mixtures and families of strings."""

from __future__ import annotations

import numpy as np

from .forest import _rng


def gaussian_mixture(n: int, d: int, k: int, rng) -> np.ndarray:
    """The paper's synthetic data: ``k`` Gaussians in R^d, means ~ U(-5, 5)^d, scales ~ U(0.5, 0.8)."""
    rng = _rng(rng)
    means = rng.uniform(-5, 5, (k, d))
    scales = rng.uniform(0.5, 0.8, k)
    label = rng.integers(0, k, n)
    return means[label] + scales[label, None] * rng.standard_normal((n, d))


def string_families(n: int, n_families: int, rng, *, alphabet: str = "abcdefghij") -> list[str]:
    """``n`` strings in ``n_families`` families: random base words, each member 0-3 random edits away."""
    rng = _rng(rng)
    letters = np.array(list(alphabet))
    bases = ["".join(rng.choice(letters, rng.integers(8, 15))) for _ in range(n_families)]
    words = []
    for family in rng.integers(0, n_families, n):
        word = list(bases[family])
        for _ in range(rng.integers(0, 4)):
            kind, pos = rng.integers(0, 3), rng.integers(0, len(word) + 1)
            if kind == 0 or len(word) < 2:  # insertion
                word.insert(pos, rng.choice(letters))
            elif kind == 1:  # deletion
                del word[min(pos, len(word) - 1)]
            else:  # substitution
                word[min(pos, len(word) - 1)] = rng.choice(letters)
        words.append("".join(word))
    return words
