r"""Sum-of-Parts: self-attributing networks with learned feature groups.

You, Qu, Gatti, Jain & Wong, ICML 2025. A *self-attributing* network (SANN) writes its
output as a sum of attributions of feature groups $m_g\in\{0,1\}^P$ over $P$ patches,

.. math:: f_c(x)=\sum_g w_{c,g}(x)\,h_c(x\odot m_g),

with *per-feature* SANNs using singleton groups and *group-based* ones larger groups.
:class:`SumOfParts` turns a frozen differentiable backbone $h$ into a group-based SANN,
as the authors' MIT-licensed library ``exlib`` (``modules/sop.py``) builds it:

1. a trainable patch projection $E=\mathrm{proj}(x)\in\mathbb R^{P\times D}$ (we add a
   learned position embedding);
2. candidate groups from attention, $A=\mathrm{softmax}_p\big(\mathrm{blur}(s_{gg}\,
   Q E_{1:M}(K E)^\top)\big)\in\mathbb R^{M\times P}$, one per query patch;
3. each row cut to a hard mask of its top $k$ fraction of patches, with the one
   differentiable scalar
   $c_g=\sum_{\text{top-}k}A_{g,p}-\sum_{\text{rest}}A_{g,p}\in[-1,1]$;
4. $G$ of the $M$ candidates kept at evenly spaced indices;
5. the frozen backbone on every masked input: logits $\ell_g$ and embedding $z_g$;
6. a sparsemax selector with the classifier weights $W$ as queries and
   identity-initialised projections,
   $\alpha_{c,\cdot}=\mathrm{sparsemax}_g(s_{gs}\,(W_c\,W_q)(W_k z_g))$;
7. the output $y_c=\sum_g \alpha_{c,g}\,c_g\,\ell_{g,c}$, whose terms are the group
   attributions: they sum to the logit by construction.

Baselines: :class:`PerFeatureAdditive` (a neural additive model, one shape function per
input feature), fixed-patch groups (``SumOfParts(..., fixed_groups=...)``), and post-hoc
attributions of the backbone from ``captum`` (:func:`posthoc_patch_scores`), turned
into self-attributing models by the paper's "-F" construction (:func:`top_patches`,
:func:`mask_patches`).
Data: :func:`two_motif_xor` (planted interacting motifs), :func:`load_digits_images`,
:func:`binomial_target` (the paper's lower-bound example). Metrics: accuracy,
:func:`insertion_deletion`, :func:`purity`; intervals: :func:`~icml25.common.stats.bootstrap_ci` over test
images, :func:`bootstrap_inits_images` over test images and training initialisations.

On text (:mod:`.text`) the tokens are the patches: :class:`TokenSumOfParts` over a
:class:`TokenBackbone` that reads MiniLM's input embeddings of SST-2 sentences
(:func:`load_tokens`), against fixed groups of contiguous tokens, "-F" over tokens and
the per-feature :class:`PerTokenAdditive`.

Parts: :mod:`.data` (data sets, patches and masks), :mod:`.models` (backbone, per-feature
additive model, :class:`SumOfParts`), :mod:`.training`, :mod:`.attributions` (SOP's and the
post-hoc ones, the "-F" construction), :mod:`.metrics` and :mod:`.text` (the same on
tokens).
"""

from icml25.sum_of_parts.attributions import (
    mask_patches,
    posthoc_patch_scores,
    sop_patch_scores,
    top_patches,
)
from icml25.sum_of_parts.data import (
    MotifData,
    additive_fit_mse,
    binomial_target,
    evenly_spaced,
    load_digits_images,
    patch_grid,
    random_patch_mask,
    topk_mask,
    two_motif_xor,
)
from icml25.sum_of_parts.metrics import bootstrap_inits_images, insertion_deletion, purity
from icml25.sum_of_parts.models import MLPBackbone, PerFeatureAdditive, SOPOutput, SumOfParts
from icml25.sum_of_parts.text import (
    PerTokenAdditive,
    TokenBackbone,
    TokenData,
    TokenSumOfParts,
    contiguous_groups,
    load_tokens,
    mask_tokens,
    posthoc_token_scores,
    token_inputs,
)
from icml25.sum_of_parts.training import predict, train, train_many

__all__ = [
    "MLPBackbone",
    "MotifData",
    "PerFeatureAdditive",
    "PerTokenAdditive",
    "SOPOutput",
    "SumOfParts",
    "TokenBackbone",
    "TokenData",
    "TokenSumOfParts",
    "additive_fit_mse",
    "binomial_target",
    "bootstrap_inits_images",
    "contiguous_groups",
    "evenly_spaced",
    "insertion_deletion",
    "load_digits_images",
    "load_tokens",
    "mask_patches",
    "mask_tokens",
    "patch_grid",
    "posthoc_patch_scores",
    "posthoc_token_scores",
    "predict",
    "purity",
    "random_patch_mask",
    "sop_patch_scores",
    "token_inputs",
    "top_patches",
    "topk_mask",
    "train",
    "train_many",
    "two_motif_xor",
]
