"""Training and prediction, with random patch masking of the backbone's inputs."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from icml25.common.optim import AdamW
from icml25.common.parallel import starmap
from icml25.common.streams import as_generator
from icml25.common.validation import check_int
from icml25.sum_of_parts.data import _upsample, patch_grid, random_patch_mask
from icml25.sum_of_parts.models import SOPOutput, SumOfParts


# -------------------- training
def predict(model, X, batch_size: int = 512) -> np.ndarray:
    """Class probabilities (n, C) of ``model`` (a backbone, additive model or SOP)."""
    out = []
    with torch.no_grad():
        for i in range(0, len(X), batch_size):
            logits = model(torch.as_tensor(X[i:i + batch_size]))
            logits = logits.logits if isinstance(logits, SOPOutput) else logits
            out.append(logits.softmax(-1).numpy())
    return np.concatenate(out)


def train(model, X, y, *, steps: int, seed, batch_size: int = 128, lr: float = 3e-3,
          mask_patch: int | None = None, mask_tokens: bool = False,
          weight_decay: float = 1e-4) -> list[float]:
    r"""Minimise the cross-entropy of ``model`` on (X, y) with AdamW; return the losses.

    With ``mask_patch`` the inputs are multiplied by random patch masks
    (:func:`random_patch_mask`), so that a backbone sees masked inputs in training;
    with ``mask_tokens`` the same masks drop whole tokens of token inputs (n, T, d),
    each kept token's features unchanged and a dropped token's all zero.
    """
    check_int(steps, "steps", minimum=1)
    check_int(batch_size, "batch_size", minimum=1)
    X, y = torch.as_tensor(X), torch.as_tensor(y)
    if len(X) != len(y) or len(X) == 0:
        raise ValueError("X and y must be non-empty and of equal length; "
                         f"got {len(X)}, {len(y)}")
    if mask_tokens and (mask_patch is not None or X.ndim != 3):
        raise ValueError("mask_tokens needs token inputs (n, T, d) and no mask_patch; "
                         f"got X of shape {tuple(X.shape)}, mask_patch={mask_patch}")
    start = int(as_generator(seed).integers(2**31))
    generator = torch.Generator().manual_seed(start)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = AdamW(params, lr=lr, weight_decay=weight_decay)
    grid = None if mask_patch is None else patch_grid(X.shape[-2:], mask_patch)
    losses = []
    model.train()
    for _ in range(steps):
        idx = torch.randint(len(X), (min(batch_size, len(X)),), generator=generator)
        xb = X[idx]
        if grid is not None:
            keep = random_patch_mask(len(idx), len(grid), generator)
            xb = xb * _upsample(keep, X.shape[-2:], mask_patch)
        elif mask_tokens:
            xb = xb * random_patch_mask(len(idx), X.shape[1], generator)[..., None]
        out = model(xb)
        out = out.logits if isinstance(out, SOPOutput) else out
        loss = nn.functional.cross_entropy(out, y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    if isinstance(model, SumOfParts):
        model.backbone.eval()
    return losses




def _train_returning(model, X, y, kwargs):
    losses = train(model, X, y, **kwargs)
    return model, losses


def train_many(runs, *, n_jobs: int = 1) -> list:
    """Train independent models, spread over ``n_jobs`` processes; ``[(model, losses)]``.

    ``runs`` lists ``(model, X, y, kwargs)``, the arguments of one :func:`train` call each.
    Every run is deterministic given its model's initial weights and its ``seed``, and the
    workers compute with one thread as this process does (:func:`icml25.common.parallel.starmap`),
    so the trained weights equal those of calling :func:`train` on each in turn. The models
    come back as trained copies: use the returned ones, not the objects passed in.
    """
    jobs = [(model, X, y, dict(kwargs)) for model, X, y, kwargs in runs]
    return starmap(_train_returning, jobs, n_jobs=n_jobs)
