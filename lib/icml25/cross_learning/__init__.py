r"""Cross-learning contextual bandits with adversarial losses (Huang & Huang, ICML 2025).

**Setting.** :math:`T` rounds, :math:`K` actions, :math:`C` contexts.  Contexts
:math:`c_t\sim\nu` are i.i.d.; an oblivious adversary fixes losses
:math:`\ell_t(c,a)\in[0,1]` in advance.  In round :math:`t` the learner sees :math:`c_t`, draws
:math:`A_t\sim\pi_t(\cdot\mid c_t)` and, under *cross-learning* feedback (Balseiro et al., 2019),
observes :math:`\ell_t(c, A_t)` **for every context** :math:`c` -- never the loss of an action it
did not play.  The regret is measured against the best fixed policy :math:`\pi:[C]\to[K]` in hindsight,

.. math:: R_T=\sum_{t=1}^T\ell_t(c_t,A_t)-\min_{\pi}\sum_{t=1}^T\ell_t(c_t,\pi(c_t))
          =\sum_{t}\ell_t(c_t,A_t)-\sum_{c}\min_a\sum_{t:\,c_t=c}\ell_t(c,a),

(the minimum over policies decomposes over contexts).

**Known** :math:`\nu` **(Balseiro et al., 2019).**  One exponential-weights distribution per
context, :math:`\pi_t(a\mid c)\propto\exp(-\eta\hat L_{t-1}(c,a))`, and one importance weight shared by all
contexts: the *marginal* probability of the played action

.. math:: f_t(a)=\mathbb E_{c\sim\nu}[\pi_t(a\mid c)],\qquad
          \hat\ell_t(c,a)=\frac{\ell_t(c,a)\,\mathbb 1[A_t=a]}{f_t(a)+\gamma}\quad\text{for all } c.

The variance term is :math:`\sum_a f_t(a)/f_t(a)=K` per round instead of :math:`CK`: regret
:math:`\tilde O(\sqrt{KT})`, independent of :math:`C`.

**Unknown** :math:`\nu` **(Schneider & Zimmert, NeurIPS 2023; analysed by Huang & Huang).**
:math:`f_t` is replaced by its plug-in estimate on contexts that the policy has not seen.  The
rounds are cut into epochs; the contexts stored during epoch :math:`e-1` form the empirical
distribution :math:`H_{e-1}` used throughout epoch :math:`e`,

.. math:: \hat f_t(a)=\sum_c H_{e-1}(c)\,\pi_t(a\mid c),

so that :math:`\hat f_t` is built from contexts independent of :math:`\pi_t`.  In the default
``paired`` form each exponential-weights step spans two rounds played with the same policy: a fair
coin picks one of them as the *learning* round (its feedback enters :math:`\hat L`) and the other
as the *estimation* round (only its context is stored).  The estimation contexts then never
influence the policy before they are used.  Huang & Huang prove that this algorithm has regret
:math:`\tilde O(\sqrt{KT\log(1/\delta)})` with probability :math:`1-\delta`.

**Provenance.**  The full text of Algorithm 1 of Schneider & Zimmert (arXiv 2401.01857) could not
be consulted for this module.  The epoch structure with the previous epoch's contexts, the
plug-in marginal and the pairing of rounds ("two steps per EXP3 step, one of them to estimate the
context distribution", as an ICLR 2025 review of Huang & Huang summarises it) follow secondary
descriptions; the fair coin, the uniform first epoch and all default constants (:math:`\eta`,
:math:`\gamma`, the epoch length) are this module's choices.  ``paired=False`` gives the simpler
reading in which every round learns and every context is stored.

**Implementation.**  Every array has the independent runs ("seeds") as its leading axis ``S``.
Only column :math:`A_t` of :math:`\hat L` changes in a round, so a cross-learning update costs
:math:`O(SC)`: weights are kept as ``(S, K, C)`` with running normalisers, and
:math:`f_t(A_t)` is a dot product of one gathered row with :math:`\nu` (or :math:`H_{e-1}`).

The environment produces a :class:`Round` per round; :func:`simulate` holds it and hands each
learner only ``Round.at_action(A_t)`` (cross-learning learners) or :math:`\ell_t(c_t,A_t)`
(bandit learners).  Learners never receive the environment, a :class:`Round` or any loss of an
unplayed action.

**Parts.**

* :mod:`.environments`: :class:`Problem`, :class:`Round`, :class:`Environment`, the first-price
  auction, sleeping bandits and explicit loss tables;
* :mod:`.adversaries`: the rare-context adversary and the adversary aimed at the pairing;
* :mod:`.learners`: the learner interface, :class:`BalseiroOracle` (known :math:`\nu`) and
  :class:`SchneiderZimmert` (the epoch estimator, a reconstruction);
* :mod:`.baselines`: EXP3-IX per context and blind to the context, a fixed policy;
* :mod:`.simulation`: :func:`simulate`, :class:`SimulationResult`, :func:`hindsight_optimum`.
"""

from ._common import FEEDBACK_DTYPE, gaussian_bump
from .adversaries import estimation_round_adversary, rare_context_adversary
from .baselines import ContextBlindExp3, FixedPolicy, PerContextExp3
from .environments import (
    Environment,
    FirstPriceAuction,
    Problem,
    Round,
    SleepingBandit,
    TableEnvironment,
)
from .learners import BalseiroOracle, Learner, SchneiderZimmert
from .simulation import SimulationResult, hindsight_optimum, simulate

__all__ = [
    "FEEDBACK_DTYPE",
    "BalseiroOracle",
    "ContextBlindExp3",
    "Environment",
    "FirstPriceAuction",
    "FixedPolicy",
    "Learner",
    "PerContextExp3",
    "Problem",
    "Round",
    "SchneiderZimmert",
    "SimulationResult",
    "SleepingBandit",
    "TableEnvironment",
    "estimation_round_adversary",
    "gaussian_bump",
    "hindsight_optimum",
    "rare_context_adversary",
    "simulate",
]
