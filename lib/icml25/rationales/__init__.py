r"""Segmentation that gives clinical reasons and points to evidence, at toy scale (chapter 19).

Ma et al. (ICML 2025) segment the gland, the zones and the lesions of multi-parametric prostate
MRI and, trained on image-mask-rationale triples, localise the rationale's clinical concepts
without pixel-level concept labels. Their losses are not public; this package implements a
stated reconstruction consistent with the paper's overview figure:

* :mod:`.concepts`: the concept groups and phrases, the toy PI-RADS-like rule :func:`pirads`,
  the committed sentence embeddings of the phrases.
* :mod:`.phantoms`: :func:`make_phantoms`, seeded three-channel phantoms (T2W, DWI, ADC
  analogues) with the gland, its peripheral (PZ) and transition (TZ) zones, benign TZ nodules
  and 0-2 lesions whose appearance follows sampled concepts; a rationale text per image; hidden
  per-concept evidence maps, for evaluation only.
* :mod:`.models`: :class:`SmallUNet` (image encoder :math:`f_\mathrm{img}` and mask decoder
  :math:`f_\mathrm{mask}`), :class:`RationaleModel` (plus a pixel-embedding head and a
  projection of frozen sentence embeddings of the concept phrases into the same space), the
  concept classifier whose Grad-CAM maps are the baseline, and the losses
  :func:`segmentation_loss`, :func:`align_loss` and :func:`disentangle_loss`.
* :mod:`.training`: :func:`train`, :func:`train_models` and the committed models
  (:func:`load_models`).
* :mod:`.metrics`: :func:`dice`, :func:`iou`, :func:`pointing_game`, :func:`iou_at_area`,
  :func:`random_maps`, and the detection scores :func:`average_precision` and :func:`auroc`.
* :mod:`.evaluation`: predicted masks, concept maps (ours and Grad-CAM via
  ``captum.attr.LayerGradCam``), lesion-presence scores and answers to a report's questions.

``python -m icml25.rationales embed data/rationales/concepts.npz`` embeds the concept phrases
with all-MiniLM-L6-v2 (:mod:`icml25.minilm`) once; ``python -m icml25.rationales train
data/rationales/models.pt`` trains the committed models. The chapter loads both.
"""

from icml25.common.ranking import auroc, average_precision  # the detection scores

from .concepts import (
    CONCEPTS,
    EMBEDDINGS,
    GROUP_START,
    GROUPS,
    NORMAL,
    TEXTS,
    ZONE_NAMES,
    embed_concepts,
    load_concept_embeddings,
    pirads,
)
from .evaluation import (
    LOCATION_ANSWERS,
    answer_questions,
    concept_probabilities,
    gradcam_maps,
    lesion_components,
    presence_scores,
    rationale_maps,
    segment,
    segmentation_scores,
    unet_of,
)
from .metrics import (
    dice,
    iou,
    iou_at_area,
    paired_gap,
    pointing_game,
    random_maps,
)
from .models import (
    ConceptClassifier,
    RationaleModel,
    SmallUNet,
    align_loss,
    disentangle_loss,
    segmentation_loss,
)
from .phantoms import SCANNER_A, SCANNER_B, Phantoms, Scanner, make_phantoms, standardise
from .training import (
    CHECKPOINT,
    MODELS,
    PAPER_TRAINING,
    TRAIN_COMMAND,
    TRAINING,
    TRAINING_CPU_MINUTES,
    build,
    load_models,
    save_checkpoint,
    train,
    train_models,
)

__all__ = [
    "CHECKPOINT",
    "CONCEPTS",
    "EMBEDDINGS",
    "GROUPS",
    "GROUP_START",
    "LOCATION_ANSWERS",
    "MODELS",
    "NORMAL",
    "PAPER_TRAINING",
    "SCANNER_A",
    "SCANNER_B",
    "TEXTS",
    "TRAINING",
    "TRAINING_CPU_MINUTES",
    "TRAIN_COMMAND",
    "ZONE_NAMES",
    "ConceptClassifier",
    "Phantoms",
    "RationaleModel",
    "Scanner",
    "SmallUNet",
    "align_loss",
    "answer_questions",
    "auroc",
    "average_precision",
    "build",
    "concept_probabilities",
    "dice",
    "disentangle_loss",
    "embed_concepts",
    "gradcam_maps",
    "iou",
    "iou_at_area",
    "lesion_components",
    "load_concept_embeddings",
    "load_models",
    "make_phantoms",
    "paired_gap",
    "pirads",
    "pointing_game",
    "presence_scores",
    "random_maps",
    "rationale_maps",
    "save_checkpoint",
    "segment",
    "segmentation_loss",
    "segmentation_scores",
    "standardise",
    "train",
    "train_models",
    "unet_of",
]
