"""Group attributions: SOP's own, and post-hoc attributions of the backbone (captum) made
into self-attributing '-F' models by keeping their top patches."""

from __future__ import annotations

import warnings

import numpy as np
import torch

from icml25.common.validation import check_int
from icml25.sum_of_parts.data import _seeded, patch_grid
from icml25.sum_of_parts.models import SOPOutput


# -------------------- attributions
def sop_patch_scores(out: SOPOutput, target) -> np.ndarray:
    r"""Per-patch scores from group attributions: :math:`\sum_g a_{t,g}\,m_{g,p}/|m_g|`."""
    target = torch.as_tensor(target)
    attr = out.attributions[torch.arange(len(target)), target]            # (B, G)
    masks = out.masks / out.masks.sum(-1, keepdim=True).clamp(min=1)
    return torch.einsum("bg,bgp->bp", attr, masks).detach().numpy()


def _captum_attributions(backbone, X, target, ids, n_units: int, method: str,
                         n_samples: int, seed):
    """captum's attribution of ``backbone`` at every input element, shaped as ``X``;
    ``ids`` (X's shape, long) numbers the unit (patch, token) of each element, the
    features that patch ablation and Shapley sampling switch off together."""
    with warnings.catch_warnings():  # captum imports tqdm.auto, which warns in Jupyter
        warnings.simplefilter("ignore")
        from captum.attr import (
            FeatureAblation,
            InputXGradient,
            IntegratedGradients,
            ShapleyValueSampling,
        )

    if method not in ("ig", "saliency", "ablation", "shap"):
        raise ValueError(
            f"method must be ig, saliency, ablation or shap; got {method!r}")
    if method == "ig":
        attr = IntegratedGradients(backbone).attribute(X, target=target, n_steps=32)
    elif method == "saliency":
        inputs = X.clone().requires_grad_()
        attr = InputXGradient(backbone).attribute(inputs, target=target)
    elif method == "ablation":
        attr = FeatureAblation(backbone).attribute(X, target=target, feature_mask=ids)
    else:
        check_int(n_samples, "n_samples", minimum=1)
        with _seeded(seed):  # captum draws the orders from torch's global generator
            attr = ShapleyValueSampling(backbone).attribute(
                X, target=target, feature_mask=ids, n_samples=n_samples,
                perturbations_per_eval=n_units)
    return attr.detach()


def posthoc_patch_scores(backbone, X, target, patch: int, method: str = "ig", *,
                         n_samples: int = 16, seed=0) -> np.ndarray:
    r"""Post-hoc attributions of the backbone from captum, summed per patch, (n, P).

    ``method``: ``"ig"`` (IntegratedGradients, zero baseline), ``"saliency"``
    (gradient x input), ``"ablation"`` (FeatureAblation with one feature per patch) or
    ``"shap"`` (ShapleyValueSampling over the patches, zero baseline: the Shapley value
    :math:`\phi_p=\mathbb E_\pi[h(x_{B\cup\{p\}})-h(x_B)]`, $B$ the patches before $p$ in
    the order $\pi$, estimated from ``n_samples`` random orders drawn from ``seed``;
    SHAP's target, and the paper's strongest post-hoc explainer).
    """
    X, target = torch.as_tensor(X), torch.as_tensor(target)
    grid = torch.as_tensor(patch_grid(X.shape[-2:], patch)).float()
    ids = grid.argmax(0).long()[None, None].expand_as(X).contiguous()
    attr = _captum_attributions(backbone, X, target, ids, len(grid), method, n_samples,
                                seed)
    # ablation and Shapley sampling give every pixel the value of its patch: the sum is
    # that value times the patch's size, the same ranking
    return torch.einsum("bchw,phw->bp", attr, grid).numpy()


def top_patches(scores, n_keep: int) -> np.ndarray:
    """Boolean (n, P): the ``n_keep`` highest-scoring patches of each row (ties broken
    by patch order)."""
    scores = np.asarray(scores)
    if scores.ndim != 2:
        raise ValueError(f"scores must be (n, P); got shape {scores.shape}")
    check_int(n_keep, "n_keep", minimum=1, maximum=scores.shape[1])
    keep = np.zeros(scores.shape, bool)
    np.put_along_axis(keep, np.argsort(-scores, 1, kind="stable")[:, :n_keep], True, 1)
    return keep


def mask_patches(X, keep, patch: int) -> np.ndarray:
    """The images with only the patches marked in ``keep`` (n, P) left, the rest zero.
    With :func:`top_patches` of a post-hoc attribution this is the paper's "-F"
    construction: the backbone run on it is a self-attributing model."""
    X, keep = np.asarray(X), np.asarray(keep, np.float32)
    grid = patch_grid(X.shape[-2:], patch)
    if keep.shape != (len(X), len(grid)):
        raise ValueError(f"keep must be ({len(X)}, {len(grid)}); got {keep.shape}")
    return (X * np.einsum("np,phw->nhw", keep, grid)[:, None]).astype(np.float32)

