"""Data and patches: planted two-motif XOR images, scikit-learn's digits, the binomial
lower-bound target, and the patch grid, masks and top-k cuts that groups are built from."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from itertools import product

import numpy as np
import torch

from icml25.common.streams import as_generator
from icml25.common.validation import check_int


# -------------------- data
@dataclass(frozen=True)
class MotifData:
    """Images ``X`` (n, 1, H, W), labels ``y`` (n,), motif presence ``a``, ``b`` (n,),
    and ``motif_patches`` (P,) bool: the patches the planted motifs occupy."""

    X: np.ndarray
    y: np.ndarray
    a: np.ndarray
    b: np.ndarray
    motif_patches: np.ndarray


@contextmanager
def _seeded(seed):
    """Initialise parameters from ``seed`` without touching torch's global generator."""
    with torch.random.fork_rng():
        torch.manual_seed(int(as_generator(seed).integers(2**31)))
        yield


def two_motif_xor(n: int, *, seed, noise: float = 0.3) -> MotifData:
    r"""Two-motif XOR on 8x8 images: the label needs both motifs at once.

    Background pixels are $U(0,\text{noise})$. Motif $A$ (a 2x4 bar, top left) and
    motif $B$ (a 4x2 bar, right edge) are each present with probability 1/2, their
    pixels then $U(0.7,1)$; the label is $y=A\oplus B$. Each motif covers two of the 16
    patches of 2x2 pixels. Any model additive in the pixels has a log-loss optimum that
    is constant in $(A,B)$ by symmetry, so it predicts at chance; a group holding both
    motifs decides.
    """
    check_int(n, "n", minimum=1)
    if not 0 <= noise < 0.7:
        raise ValueError(f"noise must lie in [0, 0.7); got {noise}")
    rng = as_generator(seed)
    X = rng.uniform(0, noise, (n, 1, 8, 8))
    a, b = rng.random(n) < 0.5, rng.random(n) < 0.5
    X[a, 0, 0:2, 0:4] = rng.uniform(0.7, 1.0, (a.sum(), 2, 4))
    X[b, 0, 4:8, 6:8] = rng.uniform(0.7, 1.0, (b.sum(), 4, 2))
    motif = np.zeros((8, 8), bool)
    motif[0:2, 0:4] = motif[4:8, 6:8] = True
    patches = patch_grid((8, 8), 2).reshape(16, 64) @ motif.ravel() > 0
    return MotifData(X.astype(np.float32), (a ^ b).astype(np.int64), a, b, patches)


def load_digits_images() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 1,797 8x8 digits: ``X`` (n, 1, 8, 8) in [0, 1], labels ``y``."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return (d.images[:, None] / 16.0).astype(np.float32), d.target.astype(np.int64)


def binomial_target(d: int = 10, s1=(0, 1, 2), s2=(3, 4), s3=(5, 6, 7)):
    r"""All $x\in\{0,1\}^d$ and the multilinear binomial of the paper's lower bound,
    $p(x)=\prod_{i\in S_1\cup S_2}x_i+\prod_{j\in S_2\cup S_3}x_j$."""
    check_int(d, "d", minimum=1)
    used = set(s1) | set(s2) | set(s3)
    if d > 20 or not used <= set(range(d)):
        raise ValueError(f"need d <= 20 and S1, S2, S3 inside range(d); got d={d}")
    X = np.array(list(product((0, 1), repeat=d)), dtype=float)
    y = X[:, list(s1) + list(s2)].prod(1) + X[:, list(s2) + list(s3)].prod(1)
    return X, y


def additive_fit_mse(X, y, groups) -> float:
    r"""Least-squares MSE of the best model additive over ``groups`` of binary features.

    $\hat y(x)=b+\sum_{G}\phi_G(x_G)$ with $\phi_G$ an arbitrary function of the
    configuration of $x_G$ (a one-hot code of its :math:`2^{|G|}` values). Singleton groups
    give the per-feature (additive) model; groups equal to the interacting sets fit any
    target that is a sum of functions of those sets exactly.
    """
    X, y = np.asarray(X), np.asarray(y, float)
    if X.ndim != 2 or y.shape != (X.shape[0],) or not np.isin(X, (0, 1)).all():
        raise ValueError("X must be an (n, d) 0/1 array and y of length n")
    columns = [np.ones(len(y))]
    for g in groups:
        g = list(g)
        if not g or max(g) >= X.shape[1] or min(g) < 0:
            raise ValueError(f"group {g} is empty or outside the {X.shape[1]} features")
        code = X[:, g] @ (2 ** np.arange(len(g)))
        columns += [(code == v).astype(float) for v in range(2 ** len(g))]
    design = np.column_stack(columns)
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    return float(np.mean((design @ coef - y) ** 2))


# -------------------- patches
def patch_grid(shape, patch: int) -> np.ndarray:
    """One boolean pixel mask per patch, shape (P, H, W), patches in row-major order."""
    H, W = shape
    check_int(patch, "patch", minimum=1)
    if H % patch or W % patch:
        raise ValueError(f"patch {patch} must divide the image size {H}x{W}")
    ids = (np.arange(H)[:, None] // patch) * (W // patch) + np.arange(W)[None] // patch
    return ids[None] == np.arange(ids.max() + 1)[:, None, None]


def _upsample(mask, shape, patch: int):
    """(..., P) patch masks to (..., 1, H, W) pixel masks."""
    gh, gw = shape[0] // patch, shape[1] // patch
    grid = mask.reshape(*mask.shape[:-1], 1, gh, gw)
    return grid.repeat_interleave(patch, -2).repeat_interleave(patch, -1)


def topk_mask(attention, k: float):
    r"""Hard top-$k$ masks and the scalar $c=\sum_{\text{top}}A-\sum_{\text{rest}}A$.

    ``attention`` (..., P), rows summing to one; keeps $\max(1,\mathrm{round}(kP))$
    entries.
    The mask carries no gradient; $c=2\sum_{\text{top}}A-1\in[-1,1]$ does.
    """
    if not 0 < k <= 1:
        raise ValueError(f"k is a fraction of the patches in (0, 1]; got {k}")
    n_keep = max(1, int(round(k * attention.shape[-1])))
    idx = attention.topk(n_keep, dim=-1).indices
    hard = torch.zeros_like(attention).scatter_(-1, idx, 1.0)
    return hard, 2 * (attention * hard).sum(-1) - 1


def evenly_spaced(m: int, g: int) -> np.ndarray:
    """``g`` of ``m`` candidate indices at even spacing: ``round(linspace(0, m - 1, g))``.

    The authors keep ``floor(i * m / g)`` instead (``0, 2, ..., 14`` of 16 for 8,
    where this gives ``0, 2, 4, 6, 9, 11, 13, 15``); given their indices, the book's model
    gives their outputs (``tests/test_authors_sum_of_parts.py``).
    """
    check_int(m, "m", minimum=1)
    check_int(g, "g", minimum=1)
    if g > m:
        raise ValueError(f"cannot keep {g} groups out of {m} candidates")
    return np.round(np.linspace(0, m - 1, g)).astype(int)


def random_patch_mask(n: int, n_patches: int, generator, p_full: float = 0.25):
    """Random patch masks for training a backbone on masked inputs: each row is all
    ones with probability ``p_full``, else keeps each patch with probability
    $q\\sim U(0.1,0.9)$."""
    keep = torch.rand(n, 1, generator=generator) * 0.8 + 0.1
    mask = (torch.rand(n, n_patches, generator=generator) < keep).float()
    full = torch.rand(n, 1, generator=generator) < p_full
    return torch.where(full, torch.ones_like(mask), mask)


