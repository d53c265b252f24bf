r"""Evaluating the models: masks, concept maps (ours, Grad-CAM), answers to questions."""

from __future__ import annotations

import numpy as np

from .concepts import CONCEPTS, GROUP_START, GROUPS, pirads
from .metrics import dice
from .models import ConceptClassifier, RationaleModel, SmallUNet, _torch
from .phantoms import Phantoms, standardise


def unet_of(model):
    """The :class:`SmallUNet` inside any of the three models."""
    return model if isinstance(model, SmallUNet) else model.unet


def segment(model, data: Phantoms, batch_size: int = 256) -> dict:
    """Predicted masks: ``zones`` (n, H, W) in {0, 1, 2}, ``lesion`` (bool) and ``lesion_prob``."""
    torch = _torch()
    x = torch.as_tensor(standardise(data.images))
    unet = unet_of(model).eval()
    zones, probs = [], []
    with torch.no_grad():
        for s in range(0, len(x), batch_size):
            z, les, _ = unet(x[s:s + batch_size])
            zones.append(z.argmax(1).numpy())
            probs.append(les.sigmoid().numpy())
    prob = np.concatenate(probs)
    return dict(zones=np.concatenate(zones).astype(np.int8), lesion=prob > 0.5, lesion_prob=prob)


def segmentation_scores(pred: dict, data: Phantoms) -> dict:
    """Per-image Dice of the gland, the zones (mean of PZ and TZ) and the lesion (on images with
    a lesion); each an array."""
    gland = dice(pred["zones"] > 0, data.zones > 0)
    zone = (dice(pred["zones"] == 1, data.zones == 1)
            + dice(pred["zones"] == 2, data.zones == 2)) / 2
    has = data.lesion.any((1, 2))
    return dict(gland=gland, zone=zone, lesion=dice(pred["lesion"][has], data.lesion[has]))


def rationale_maps(model: RationaleModel, data: Phantoms, batch_size: int = 256):
    """Heat maps :math:`H_c` ``(n, K + 1, H, W)`` and pixel embeddings ``(n, d, H, W)``."""
    torch = _torch()
    x = torch.as_tensor(standardise(data.images))
    maps, embs = [], []
    with torch.no_grad():
        for s in range(0, len(x), batch_size):
            _, _, e = model(x[s:s + batch_size])
            maps.append(model.heat_maps(e).numpy())
            embs.append(e.numpy())
    return np.concatenate(maps), np.concatenate(embs)


def gradcam_maps(model: ConceptClassifier, data: Phantoms, layer: str = "dec1") -> np.ndarray:
    r"""Grad-CAM concept maps of the concept classifier (``captum.attr.LayerGradCam``).

    :math:`H_c = \mathrm{ReLU}(\sum_k \alpha^c_k A_k)` with :math:`\alpha^c_k` the spatial mean
    of :math:`\partial y_c/\partial A_k` over the feature maps :math:`A` of ``layer`` (``"dec1"``,
    full resolution, or ``"bottleneck"``, a quarter, upsampled bilinearly). Returns
    ``(n, K, H, W)``.
    """
    import warnings

    torch = _torch()
    with warnings.catch_warnings():  # captum imports tqdm.auto, which warns in Jupyter
        warnings.simplefilter("ignore")
        from captum.attr import LayerAttribution, LayerGradCam

    if layer not in ("dec1", "bottleneck"):
        raise ValueError(f"layer must be 'dec1' or 'bottleneck', got {layer!r}")
    x = torch.as_tensor(standardise(data.images))
    model.eval()
    cam = LayerGradCam(lambda inp: model(inp)[2], getattr(model.unet, layer))
    out = np.empty((len(x), len(CONCEPTS)) + x.shape[2:], np.float32)
    for c in range(len(CONCEPTS)):
        a = cam.attribute(x, target=c, relu_attributions=True)
        if a.shape[-1] != x.shape[-1]:
            a = LayerAttribution.interpolate(a, tuple(x.shape[2:]), "bilinear")
        out[:, c] = a[:, 0].detach().numpy()
    return out


def concept_probabilities(model: ConceptClassifier, data: Phantoms) -> np.ndarray:
    """The concept classifier's probabilities ``(n, K)``."""
    torch = _torch()
    with torch.no_grad():
        return model(torch.as_tensor(standardise(data.images)))[2].sigmoid().numpy()


def presence_scores(pred: dict) -> np.ndarray:
    r"""Each image's lesion-presence score: its highest lesion probability, :math:`\max_x
    \sigma(l(x))` (the detection score that AP and AUROC rank). ``pred`` from :func:`segment`."""
    prob = np.asarray(pred["lesion_prob"], float)
    if prob.ndim != 3:
        raise ValueError(f"lesion_prob must be (n, H, W), got shape {prob.shape}")
    return prob.max((1, 2))


def lesion_components(mask, *, min_pixels: int = 3) -> list:
    """The predicted lesions of one image: connected components (8-connected) of the binary
    ``(H, W)`` ``mask`` with at least ``min_pixels`` pixels, as boolean masks, largest first
    (the empty list when there is none)."""
    from scipy import ndimage

    mask = np.asarray(mask, bool)
    if mask.ndim != 2:
        raise ValueError(f"mask must be (H, W), got shape {mask.shape}")
    lab, n = ndimage.label(mask, ndimage.generate_binary_structure(2, 2))
    parts = [lab == j for j in range(1, n + 1)]
    parts = [m for m in parts if m.sum() >= min_pixels]
    return sorted(parts, key=lambda m: -int(m.sum()))


#: The answers to the location question: the zones that hold a lesion.
LOCATION_ANSWERS = ("PZ", "TZ", "PZ and TZ")


def answer_questions(maps_or_embeddings, t, pred: dict, data: Phantoms, *,
                     min_pixels: int = 3) -> dict:
    r"""Answer three questions of a report per image from the model: segment, then retrieve.

    The predicted lesions are the connected components of the segmentation's lesion mask with
    at least ``min_pixels`` pixels (:func:`lesion_components`). For each, the pixel embeddings
    pooled over it, :math:`z = \mathrm{norm}(\sum_{x\in\hat M} e(x))`, retrieve one concept
    per group, :math:`\arg\max_{c\in g} z^\top t_c`, and :func:`pirads` turns the retrieved
    margin, texture and intensity into the lesion's score.

    * **lesion present?** (every image) at least one predicted lesion;
    * **location** (images with a lesion): the zones retrieved for the predicted lesions,
      an index into :data:`LOCATION_ANSWERS` (PZ, TZ, or both); with no predicted lesion the
      5 pixels of highest lesion probability stand for one;
    * **score** (every image): the image's PI-RADS-like category, the highest score of its
      predicted lesions, 1 when there is none.

    Location and score need every lesion of the image segmented, separated and described:
    a missed lesion, two lesions merged or one descriptor read wrong changes the answer.
    ``maps_or_embeddings``: pixel embeddings ``(n, d, H, W)``; ``t``: ``(K+1, d)``. Returns
    the answers and the true values (``truth_*``) as arrays; location on the images with a
    lesion only.
    """
    e = np.asarray(maps_or_embeddings, float)
    t = np.asarray(t, float)
    if e.ndim != 4 or t.ndim != 2 or e.shape[1] != t.shape[1] or len(e) != len(data):
        raise ValueError(f"embeddings {e.shape} must be (n, d, H, W) with d = {t.shape[-1]} "
                         f"and n = {len(data)}")
    if min_pixels < 1:
        raise ValueError(f"min_pixels must be positive, got {min_pixels}")

    def describe(i, m):
        z = e[i][:, m].sum(1)
        z /= np.linalg.norm(z) + 1e-12
        sims = t @ z
        pick = {g: int(np.argmax(sims[GROUP_START[g]:GROUP_START[g] + len(p)]))
                for g, p in GROUPS.items()}
        return pick["location"], pirads(pick["margin"], pick["texture"], pick["intensity"])

    present, location, score = [], [], []
    for i in range(len(data)):
        parts = lesion_components(pred["lesion"][i], min_pixels=min_pixels)
        found = [describe(i, m) for m in parts]
        present.append(bool(found))
        score.append(max((s for _, s in found), default=1))
        if data.n_lesions[i] > 0:
            if not found:
                top = np.argsort(-pred["lesion_prob"][i].ravel())[:5]
                m = np.zeros(pred["lesion"][i].size, bool)
                m[top] = True
                found = [describe(i, m.reshape(pred["lesion"][i].shape))]
            zones = {z for z, _ in found}
            location.append(2 if len(zones) == 2 else zones.pop())
    has = data.n_lesions > 0
    att = data.attributes[has][:, :, 0] > 0
    truth_location = np.where(att.all(1), 2, att.argmax(1))
    return dict(present=np.array(present), truth_present=has,
                location=np.array(location, int), truth_location=truth_location,
                score=np.array(score, int), truth_score=np.asarray(data.score, int))
