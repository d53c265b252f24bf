r"""Optimistic optimisation with learned partitions (Sunkara & Tripathy, ICML 2025).

Black-box minimisation of $f:\mathcal X=\prod_i[\ell_i,u_i]\to\mathbb R$ with a fixed budget of
$n$ evaluations, judged by the *simple regret* $r_n=f(x_n)-\min_{\mathcal X} f$ of the best
point found.

* :mod:`.sequool`: SequOOL (Bartlett, Gabillon & Valko, 2019), the deterministic optimistic
  optimiser on a ternary tree of boxes. With $n'$ openings it explores depths
  $h=0,\dots,h_{\max}$, $h_{\max}=\lfloor n'/\overline{\log}(n')\rfloor$
  ($\overline{\log}(n')=\sum_{i\le n'}1/i$), opening at depth $h\ge1$ the
  $\lfloor h_{\max}/h\rfloor$ boxes of lowest centre value; a box is cut in three equal slabs
  along axis $h \bmod d$ (round robin); the middle child keeps its parent's centre value, the
  two outer ones cost one evaluation each.
* :mod:`.subspace`: the two ways of the paper to learn the active subspace.
  :func:`learn_subspace` (Algorithm 1) senses gradients by finite differences at $m_x$ points
  on the unit sphere around the domain's centre along $m_\phi$ Rademacher directions,
  recovers each by basis pursuit ($\ell_1$, :func:`basis_pursuit`), and keeps the top-$m$
  right singular vectors of the recovered gradients. :func:`neural_subspace` fits a
  one-hidden-layer network to uniform samples and keeps the top-$m$ right singular vectors
  of its first layer.
* :mod:`.learned`: :func:`learned_partition` (Algorithm 2), SequOOL on the box of
  coordinates $\alpha\in\mathbb R^m$, $x=c+V\alpha$, instead of $\mathcal X$.
* :mod:`.peers`: :func:`direct` (SciPy's DIRECT), :func:`random_search`, :func:`cma_es`
  (the ``cma`` package).
* :mod:`.problems`: :func:`make_problem`, multi-index test functions
  $f(x)=g(A(x-x^\star))$, $A\in\mathbb R^{m\times d}$ with orthonormal rows, on
  $[-5,5]^d$, with $\min f=0$.
* :mod:`.benchmark`: :func:`benchmark` runs them all at equal budgets; :func:`win_rate`.

Every optimiser evaluates $f$ through :class:`CountedFunction` (:mod:`.counting`), which
refuses the evaluation that would exceed the budget: no method calls $f$ more than
``budget`` times, and the learning samples of :func:`learned_partition` are counted in the
same budget.
"""

from .benchmark import ANYTIME, METHODS, Benchmark, benchmark, win_rate
from .counting import BudgetExhausted, CountedFunction, Result
from .learned import LEARNERS, learned_partition
from .peers import cma_es, direct, random_search
from .problems import _ST_ARGMIN, FUNCTIONS, Problem, _g, make_problem
from .sequool import harmonic, sequool, sequool_schedule
from .subspace import basis_pursuit, learn_subspace, neural_subspace, principal_angle

__all__ = [
    "ANYTIME",
    "FUNCTIONS",
    "LEARNERS",
    "METHODS",
    "_ST_ARGMIN",
    "Benchmark",
    "BudgetExhausted",
    "CountedFunction",
    "Problem",
    "Result",
    "_g",
    "basis_pursuit",
    "benchmark",
    "cma_es",
    "direct",
    "harmonic",
    "learn_subspace",
    "learned_partition",
    "make_problem",
    "neural_subspace",
    "principal_angle",
    "random_search",
    "sequool",
    "sequool_schedule",
    "win_rate",
]
