"""Sampling: sequence to image (DDIM or DDPM), the regression's prediction, image to
sequence (OA-ARDM, one residue at a time in a random order)."""

from __future__ import annotations

import numpy as np

from icml25.common.streams import as_generator

from .cells import MASK, Cells, _tokens
from .metrics import _images
from .model import T_TRAIN, _to_model, _torch, denoise_step, scheduler

__all__ = ["predict_regression", "sample_images", "sample_sequences"]


def sample_images(model, cells: Cells, *, steps: int = 20, sampler: str = "ddim",
                  seed=0, sequences=None) -> np.ndarray:
    r"""Sequence -> image: denoise from $x_T\sim N(0,I)$ conditioned on the morphology and
    the sequence (``sequences`` overrides ``cells.sequences``), with ``diffusers``' DDIM
    ($\eta=0$, ``steps`` steps) or ancestral DDPM (all 200 steps) schedule, stepped by
    :func:`~icml25.cell_diff.model.denoise_step`. Returns (n, H, W) in [0, 1]."""
    torch = _torch()
    if steps < 1 or steps > T_TRAIN:
        raise ValueError(f"steps must lie in 1..{T_TRAIN}; got {steps}")
    sched = scheduler(sampler)
    sched.set_timesteps(T_TRAIN if sampler == "ddpm" else steps)
    _, morph, seq = _to_model(cells)
    if sequences is not None:
        seq = torch.from_numpy(_tokens(sequences))
    g = torch.Generator().manual_seed(int(as_generator(seed).integers(2**31)))
    x = torch.randn((len(cells), 1, model.size, model.size), generator=g)
    with torch.no_grad():
        for t in sched.timesteps:
            eps, _ = model(x, morph, seq, t.repeat(len(x)))
            x = denoise_step(sched, eps, t, x, generator=g)
    return ((x[:, 0].clamp(-1, 1) + 1) / 2).numpy()


def predict_regression(model, cells: Cells, sequences=None) -> np.ndarray:
    """The regression baseline's image: one forward pass at $t=0$ from zeros."""
    torch = _torch()
    x0, morph, seq = _to_model(cells)
    if sequences is not None:
        seq = torch.from_numpy(_tokens(sequences))
    with torch.no_grad():
        pred, _ = model(torch.zeros_like(x0), morph, seq,
                        torch.zeros(len(x0), dtype=torch.long))
    return ((pred[:, 0].clamp(-1, 1) + 1) / 2).numpy()


def sample_sequences(model, cells: Cells, *, seed=0, temperature: float = 1.0,
                     protein=None) -> np.ndarray:
    r"""Image -> sequence (OA-ARDM sampling): start all masked and, in a random order per
    cell, sample one position at a time from the softmax of its logits / ``temperature``
    given the clean protein image (``protein`` overrides ``cells.protein``) at $t=0$, the
    morphology and the residues already drawn. Returns (n, L) tokens."""
    torch = _torch()
    if temperature <= 0:
        raise ValueError(f"temperature must be positive; got {temperature}")
    if not model.use_sequence:
        raise ValueError("the model has no sequence head")
    x0, morph, _ = _to_model(cells)
    if protein is not None:
        x0 = torch.from_numpy(2 * _images(protein, "protein").astype(np.float32)[:, None]
                              - 1)
    n, length = len(cells), model.seq_len
    g = torch.Generator().manual_seed(int(as_generator(seed).integers(2**31)))
    order = torch.rand(n, length, generator=g).argsort(1)
    seq = torch.full((n, length), MASK, dtype=torch.long)
    t0 = torch.zeros(n, dtype=torch.long)
    rows = torch.arange(n)
    with torch.no_grad():
        for i in range(length):
            _, logits = model(x0, morph, seq, t0)
            pos = order[:, i]
            probs = torch.softmax(logits[rows, pos] / temperature, -1)
            seq[rows, pos] = torch.multinomial(probs, 1, generator=g)[:, 0]
    return seq.numpy()

