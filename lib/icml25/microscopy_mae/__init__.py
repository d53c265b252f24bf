r"""Masked autoencoders for cell microscopy, curated, trimmed and benchmarked at toy
scale.

Kenyon-Dean et al. (ICML 2025), *ViTally Consistent*: a recipe in three steps,

1. **curate** the pre-training set: keep a perturbation only when its replicate wells
   agree more than random control wells do (a permutation test,
   :func:`consistency_pvalues`, $p < 0.01$);
2. **train** a ViT masked autoencoder (:class:`MAE`; mask ratio 0.75, loss =
   masked-patch MSE $+\,0.01\times$ Fourier-magnitude loss, :func:`mae_loss`);
3. **probe** every block with a linear classifier and trim the encoder after the best
   one (:func:`block_embeddings`, :func:`probe_blocks`);

then the EFAAR evaluation of a whole-genome map: **E**\ mbed wells, **A**\ lign by typical
variation normalisation on controls (:func:`tvn`), **A**\ ggregate per gene
(:func:`aggregate`), **R**\ elate by cosine similarity, scored by relationship recall at
the 5th/95th percentiles (:func:`relationship_recall`) and replicate consistency
(:func:`replicate_consistency`, KS and Cramér-von Mises statistics).

The data are synthetic "cell painting" crops (:func:`make_screen`): one cell per crop in
four channels (nucleus, cytoplasm, membrane, organelles), each gene a morphological
effect vector, genes of one planted pathway sharing a direction, null genes none, plates
carrying batch effects (channel gains and offsets, an illumination gradient, a shift of
the cells' state) and control wells on every plate, so every benchmark has a known
answer.

``python -m icml25.microscopy_mae train data/microscopy_mae/models.pt`` trains the
models the chapter loads (:func:`load_models`).

The parts: :mod:`.screen` (the synthetic screen, genes and compounds), :mod:`.model` (the
MAE, its loss and training), :mod:`.curation` (the replicate-consistency test),
:mod:`.evaluation` (probes, TVN, recall, consistency, compound-gene prediction) and
:mod:`.training` (the models of each training seed and the committed checkpoint).
"""

from .curation import consistency_pvalues, curate, well_means
from .evaluation import (
    aggregate,
    average_precision,
    balanced_accuracy,
    bootstrap_balanced_accuracy,
    centre_scale,
    cluster_bootstrap,
    compound_gene_ap,
    evaluate_blocks,
    joint_map,
    ks_bootstrap,
    ks_statistic,
    pixel_pca,
    probe_blocks,
    relationship_recall,
    replicate_consistency,
    tvn,
)
from .model import (
    Lion,
    block_embeddings,
    build_mae,
    fourier_loss,
    mae_loss,
    one_cycle,
    sincos_positions,
    train_mae,
)
from .screen import (
    CHANNELS,
    N_TRAITS,
    TRAITS,
    Screen,
    make_compound_screen,
    make_screen,
    normalise_crops,
    render_cells,
)
from .training import (
    CHECKPOINT,
    MAIN_WIDTH,
    TRAIN_COMMAND,
    TRAIN_SCREEN,
    TRAINING,
    TRAINING_SEEDS,
    WIDTHS,
    _train_one_thread,
    curation_outcomes,
    load_models,
    main,
    save_checkpoint,
    train_seed,
)

__all__ = [
    "CHANNELS",
    "CHECKPOINT",
    "MAIN_WIDTH",
    "N_TRAITS",
    "TRAINING",
    "TRAINING_SEEDS",
    "TRAIN_COMMAND",
    "TRAIN_SCREEN",
    "TRAITS",
    "WIDTHS",
    "Lion",
    "Screen",
    "_train_one_thread",
    "aggregate",
    "average_precision",
    "balanced_accuracy",
    "block_embeddings",
    "bootstrap_balanced_accuracy",
    "build_mae",
    "centre_scale",
    "cluster_bootstrap",
    "compound_gene_ap",
    "consistency_pvalues",
    "curate",
    "curation_outcomes",
    "evaluate_blocks",
    "fourier_loss",
    "joint_map",
    "ks_bootstrap",
    "ks_statistic",
    "load_models",
    "mae_loss",
    "main",
    "make_compound_screen",
    "make_screen",
    "normalise_crops",
    "one_cycle",
    "pixel_pca",
    "probe_blocks",
    "relationship_recall",
    "render_cells",
    "replicate_consistency",
    "save_checkpoint",
    "sincos_positions",
    "train_mae",
    "train_seed",
    "tvn",
    "well_means",
]
