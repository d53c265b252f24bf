r"""HTMP: the high-temperature Marchenko-Pastur ensemble (Hodgkinson, Wang & Mahoney, ICML 2025).

**The ensemble.**  A :math:`p\times p` spectral matrix of rank :math:`n`, aspect ratio
:math:`\gamma=p/n>1`, whose nonzero eigenvalues follow the :math:`\beta`-Laguerre ensemble
(Dumitriu & Edelman 2002) in the *high-temperature* regime: :math:`\beta\to0` with

.. math:: \kappa = \beta p \quad\text{fixed}.

:math:`\kappa>0` is the paper's eigenvalue-repulsion parameter: :math:`|\Delta(\lambda)|^\beta` is
the only coupling between eigenvalues, so small :math:`\kappa` (hot, weakly repelling) spreads them
over many decades, and :math:`\kappa\to\infty` freezes them into Marchenko-Pastur (MP).

**The density.**  With :math:`b=\kappa/2`, :math:`c=1+\tfrac{\kappa}{2}(1-\tfrac1\gamma)`,
:math:`a=c-b=1-\tfrac{\kappa}{2\gamma}` and :math:`y=\tfrac{\kappa}{2\gamma}x`, the limiting
spectral distribution is :math:`(1-\tfrac1\gamma)\,\delta_0+\tfrac1\gamma\,f(x)\,dx` with

.. math:: f(x) = \frac{\kappa}{2}\;
          \frac{y^{-c}\,e^{-y}}{\Gamma(\tfrac\kappa2+1)\,\Gamma(\tfrac{\kappa}{2\gamma})\,
          \bigl|U(\tfrac\kappa2,\,c,\,-y)\bigr|^2},\qquad x>0,

:math:`U` Tricomi's confluent hypergeometric function: the orthogonality measure of the associated
Laguerre polynomials (Ismail, Letessier & Valent 1988), which Allez, Bouchaud, Majumdar & Vivo
(2013) and Trinh & Trinh (2021) found as the high-temperature limit of the :math:`\beta`-Laguerre
ensemble.  The paper's HTMP density is :math:`f/\gamma` (mass :math:`1/\gamma`, the rest an atom at
zero), as in the first author's public code (``liamhodg/htspectra``, ``htmp.py``); every function
here uses :math:`f`, the probability density of the *nonzero* eigenvalues, whose mean is
:math:`\gamma` whatever :math:`\kappa`.

**Tails** (from the small- and large-argument forms of :math:`U`):

.. math:: f(x)\sim C_0\,x^{\frac\kappa2(1-\frac1\gamma)-1}\ (x\to0),\qquad
          f(x)\sim C_\infty\,y^{\frac\kappa2(1+\frac1\gamma)-1}e^{-y}\ (x\to\infty).

The lower tail is a true power law.  The upper tail is Gamma-like, exponential at fixed
:math:`\kappa`; but for small :math:`\kappa` its power part :math:`x^{\approx-1}` spans decades
before the cut-off :math:`x\approx2\gamma/\kappa`, and a finite sample reads it as a heavy tail.

**Evaluation.**  :math:`U` at a negative argument is complex.  DLMF 13.2.41 with Kummer's
transformation writes its modulus through real functions of positive argument, which SciPy
vectorises:

.. math:: \bigl|U(b,c,-y)\bigr|^2 = \frac{\pi^2 e^{-2y}y^{2(1-c)}}{\Gamma(1-a)^2\sin^2\pi a}\,
          \bigl(P^2-2PQ\cos\pi a+Q^2\bigr),\qquad
          P=\frac{y^{c-1}M(a,c,y)}{\Gamma(c)},\quad Q=\frac{U(1-b,2-c,y)}{\Gamma(b)},

a hundred times faster than ``mpmath.hyperu``.  It is used where it was validated against mpmath
(:math:`\kappa\le32`, :math:`a\le0` and :math:`c\ge2` away from integers, no catastrophic
cancellation in the bracket).  At an integer :math:`a` or :math:`c` the formula is a removable
:math:`0\cdot\infty`; :math:`\log f` is analytic in :math:`\kappa`, so it is interpolated from six
reliable neighbouring :math:`\kappa`.  The remaining points go to ``mpmath``.

**Distribution function.**  :math:`f` is the derivative of the phase of :math:`U` (a Wronskian
identity): :math:`F(x)=\tfrac{2\gamma}{\pi\kappa}\,\bigl|\arg U(b,c,-y)-\arg U(b,c,-0)\bigr|`,
unwrapped.  :func:`htmp_cdf` integrates :math:`f` instead (panels in :math:`\log x`) and is tested
against this identity.

**Sampling.**  The Dumitriu-Edelman bidiagonal model :math:`B` with
:math:`B_{ii}\sim\chi_{\beta(p-i+1)}`, :math:`B_{i+1,i}\sim\chi_{\beta(n-i)}` has
:math:`\operatorname{eig}(BB^\top)` distributed as the :math:`\beta`-Laguerre ensemble; with
:math:`\beta=\kappa/p` and the rescaling :math:`x=\gamma\lambda/\kappa` its empirical distribution
converges to :math:`f` (checked by Kolmogorov-Smirnov distance; ten per cent off in
:math:`\beta` is already visible at 20,000 eigenvalues).

The paper's own equations could not be consulted for this module: the formula and the convention
:math:`\kappa=\beta p` are checked numerically here (normalisation, mean, the MP limit, the exact
phase identity, the sampler), not transcribed.

**The parts.**  Everything public is re-exported here (``from icml25 import htmp``;
``htmp.sample_htmp``, ...).

* :mod:`.marchenko_pastur`: :func:`mp_density`, :func:`mp_cdf` (the :math:`\kappa\to\infty`
  limit, closed forms).
* :mod:`.density`: :func:`htmp_logpdf`, :func:`htmp_density` (SciPy, interpolation across
  removable singularities, mpmath).
* :mod:`.cdf`: :func:`htmp_cdf` (panels in :math:`\log x`, the phase identity below them).
* :mod:`.sampling`: :func:`sample_htmp`, :func:`sample_htmp_many` (the bidiagonal model) and
  :func:`haar_layer` (a weight matrix with a given spectrum and Haar singular vectors).
* :mod:`.fitting`: :func:`ks_distance`, :func:`fit_kappa` (maximum likelihood).
* :mod:`.tails`: :func:`hill_alpha` (fixed window) and :func:`powerlaw_alpha` (the
  Clauset-Shalizi-Newman fit with :math:`x_\min` chosen by KS, vectorised over the candidates).
* :mod:`._checks`: argument validation and numerical thresholds shared by the parts.
"""

from __future__ import annotations

from .cdf import htmp_cdf
from .density import htmp_density, htmp_logpdf
from .fitting import fit_kappa, ks_distance
from .marchenko_pastur import mp_cdf, mp_density
from .sampling import haar_layer, sample_htmp, sample_htmp_many
from .tails import PowerLawFit, hill_alpha, powerlaw_alpha

__all__ = [
    "PowerLawFit",
    "fit_kappa",
    "haar_layer",
    "hill_alpha",
    "htmp_cdf",
    "htmp_density",
    "htmp_logpdf",
    "ks_distance",
    "mp_cdf",
    "mp_density",
    "powerlaw_alpha",
    "sample_htmp",
    "sample_htmp_many",
]
