r"""CELL-Diff (Zheng & Huang, ICML 2025) at toy size: one transformer, two diffusions.

The paper's model turns a protein sequence and reference cell-morphology images into a
fluorescence image of the protein, and a protein image back into sequences. One network
denoises both modalities:

* the **image** $x_0$ (the protein channel) by continuous DDPM diffusion,
  $x_t=\sqrt{\bar\alpha_t}\,x_0+\sqrt{1-\bar\alpha_t}\,\varepsilon$ with the cosine
  (``squaredcos_cap_v2``) schedule over $T=200$ steps and the loss
  $\lVert\varepsilon-\varepsilon_\theta(x_t,c,S,t)\rVert^2$, where $c$ are the morphology
  channels and $S$ the sequence;
* the **sequence** $S$ by order-agnostic autoregressive diffusion (OA-ARDM): draw
  $t\sim U\{1..D\}$ and a random order $\sigma$, mask the $D-t+1$ positions with
  $\sigma\ge t$, and minimise the cross-entropy of the masked positions given the visible
  ones and the clean image, weighted by $1/(D-t+1)$, i.e. averaged over masked positions.

Each training sample takes one of the two objectives with probability 1/2; when its
sequence is masked, its image timestep is set to 0 (the clean image conditions the
sequence), as in the official code.

Here: 16x16 synthetic cells (:func:`make_cells`) whose protein sits in the compartment
named by a motif planted in a 24-residue sequence; a DiT-style transformer over 4x4 image
patches and residue tokens (:class:`UnifiedNet`); the schedules are ``diffusers``'
``DDPMScheduler`` / ``DDIMScheduler``. Baselines: the same network without the sequence,
the same network trained by direct regression, nearest-neighbour retrieval on sequence
k-mers. Metrics: localisation by a classifier on compartment intensities, the paper's IoU
and MSF resolution, high-frequency power, motif hits of generated sequences.

The parts: :mod:`.cells` (the synthetic atlas and its motifs), :mod:`.metrics`
(localisation, IoU, MSF, sharpness, retrieval), :mod:`.model` (the network, the schedules,
the objective), :mod:`.training` (three models per training seed, the committed
checkpoint), :mod:`.sampling` (sequence to image, image to sequence).
"""


from .cells import AMINO, COMPARTMENTS, MASK, MOTIFS, Cells, make_cells, motif_hits
from .metrics import (
    LocalisationClassifier,
    compartment_features,
    high_frequency_fraction,
    iou_at_area,
    iou_paper,
    kmer_features,
    msf_resolution,
    radial_psd,
    retrieve_images,
)
from .model import (T_TRAIN, UnifiedNet, add_noise, denoise_step, oaardm_mask, scheduler,
                    unified_loss)
from .sampling import predict_regression, sample_images, sample_sequences
from .training import (
    CHECKPOINT,
    MODELS,
    TRAIN_COMMAND,
    TRAINING,
    TRAINING_CPU_MINUTES,
    TRAINING_SEEDS,
    build,
    load_models,
    save_checkpoint,
    train_model,
    train_models,
)

__all__ = [
    "AMINO",
    "CHECKPOINT",
    "COMPARTMENTS",
    "MASK",
    "MODELS",
    "MOTIFS",
    "TRAINING",
    "TRAINING_CPU_MINUTES",
    "TRAINING_SEEDS",
    "TRAIN_COMMAND",
    "T_TRAIN",
    "Cells",
    "LocalisationClassifier",
    "UnifiedNet",
    "add_noise",
    "build",
    "compartment_features",
    "denoise_step",
    "high_frequency_fraction",
    "iou_at_area",
    "iou_paper",
    "kmer_features",
    "load_models",
    "make_cells",
    "motif_hits",
    "msf_resolution",
    "oaardm_mask",
    "predict_regression",
    "radial_psd",
    "retrieve_images",
    "sample_images",
    "sample_sequences",
    "save_checkpoint",
    "scheduler",
    "train_model",
    "train_models",
    "unified_loss",
]
