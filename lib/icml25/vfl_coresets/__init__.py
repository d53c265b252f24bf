"""Coresets for regularised linear and logistic regression in vertical federated learning.

Shit, Chadha, Kumar & Chatterjee, *Improved Coresets for Vertical Federated Learning:
Regularized Linear and Logistic Regressions*, ICML 2025.

**Setting.** $n$ rows whose features are split *vertically* among $T$ parties,
$X=[X^{(1)}\\mid\\cdots\\mid X^{(T)}]$; the labels $y$ sit with one party (the last, as in the
official code). The model minimises a regularised objective

$$L(\\beta)=\\sum_{i=1}^n \\ell(y_i, x_i^\\top\\beta)+\\lambda\\|\\beta\\|_2^2,$$

with $\\ell(y,z)=(z-y)^2$ (ridge regression, :func:`ridge_objective`) or
$\\ell(y,z)=\\log(1+e^{-yz})$, $y\\in\\{-1,+1\\}$ (logistic regression,
:func:`logistic_objective`). A coreset is a weighted subset $(S,w)$ whose weighted loss plus
the same penalty is within $1\\pm\\varepsilon$ of $L(\\beta)$ for every $\\beta$.

**Protocol** (:func:`coreset`). Every party $j$ computes a score $g^{(j)}_i$ for each row from
its own block only and sends the $n$ scores to the server; the server samples $m$ rows i.i.d.
with probability $p_i\\propto\\sum_j g^{(j)}_i+1/n$, gives a drawn row the weight
$1/(m\\,p_i)$ per draw (an unbiased estimate of every sum over rows), and asks the parties for
the drawn rows' features (``replace=False`` draws $m$ distinct rows instead, with
Horvitz-Thompson weights $1/\\pi_i$; only the i.i.d. sampler is covered by the paper's
theory, see :mod:`.sampling`). The scores:

* ``"uniform"``: no scores, $p_i=1/n$;
* ``"leverage"``: the prior VFL coreset (Huang et al., 2022), the leverage scores of
  each block, blind to $\\lambda$;
* ``"ridge"``: the paper's regularisation-aware scores for ridge regression, the square root of
  the ridge leverage of each block, $\\sqrt{\\tau_i(X^{(j)},\\lambda)}$ (the label holder scores
  $[X^{(j)}, y]$ with the label column unpenalised);
* ``"lewis"``: $\\ell_1$ Lewis weights of each block (logistic regression, blind to $\\lambda$);
* ``"lewis-aug"``: the paper's $\\ell_1$ Lewis weights of each block stacked on
  $\\lambda I$, the regularisation-aware scores for logistic regression.

Fits on a weighted coreset go through scikit-learn's ``sample_weight`` (:func:`fit_ridge`,
:func:`fit_logistic`); many coresets at once through batched solvers of the same objectives
(:func:`fit_ridge_many`, :func:`fit_logistic_many`).

The parts: :mod:`.scores` (the parties' scores and $\\kappa_\\lambda$), :mod:`.sampling` (the
server's distribution, the draw and :func:`coreset`), :mod:`.objectives` (objectives and
fits), :mod:`.data` (synthetic data), :mod:`.experiments` (gap studies, bootstrap medians).
"""

from ._checks import METHODS
from .data import gaussian_data, rare_rows_data
from .experiments import bootstrap_medians, gap_study, median_ratio
from .objectives import (
    fit_logistic,
    fit_logistic_many,
    fit_ridge,
    fit_ridge_many,
    logistic_objective,
    relative_gap,
    ridge_objective,
)
from .sampling import (
    Coreset,
    coreset,
    inclusion_probabilities,
    sample_coreset,
    sampling_probabilities,
)
from .scores import (
    augmented_lewis_weights,
    lewis_weights,
    party_scores,
    ridge_leverage_scores,
    sensitivity_inflation,
    statistical_dimension,
)

__all__ = [
    "METHODS", "Coreset", "augmented_lewis_weights", "bootstrap_medians", "coreset",
    "fit_logistic", "fit_logistic_many", "fit_ridge", "fit_ridge_many", "gap_study",
    "gaussian_data", "inclusion_probabilities", "lewis_weights", "logistic_objective",
    "median_ratio", "party_scores", "rare_rows_data", "relative_gap", "ridge_leverage_scores",
    "ridge_objective", "sample_coreset", "sampling_probabilities", "sensitivity_inflation",
    "statistical_dimension",
]
