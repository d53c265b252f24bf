r"""Kernel solvers for nonlinear PDEs with Kronecker structure (Xu et al., ICML 2025).

**The paper's solver (SKS, :func:`solve_sks`).** Model the solution as a standard kernel
interpolant of its values :math:`\eta` at collocation points :math:`M`,

.. math:: u(x) = \kappa(x, M)\,\tilde K^{-1}\eta,\qquad \tilde K = K_{MM} + jI,

and take derivatives by differentiating the interpolant,
:math:`\mathcal L u(x) = [\mathcal L_x\kappa(x, M)]\,\tilde K^{-1}\eta`.  With the points on a
grid :math:`g_1\times g_2` and a product kernel :math:`\kappa=\kappa_1\kappa_2`,
:math:`\tilde K=\tilde K_1\otimes\tilde K_2` and every derivative at the nodes is a
one-dimensional matrix applied along one axis, :math:`\partial_{x_1}^a\partial_{x_2}^b u|_M =
Q^{(a)}_1\,\eta\,Q^{(b)\top}_2` with :math:`Q^{(m)}_k=\kappa_k^{(m,0)}\tilde K_k^{-1}`: a residual
costs :math:`O(N\sum_k n_k)`, the set-up :math:`O(\sum_k n_k^3)`, and no :math:`N\times N` Gram
matrix is formed. The paper's code does not solve the collocation equations exactly: it
minimises a penalised loss,

.. math:: \tfrac12\eta^\top\tilde K^{-1}\eta + v\sum_{m\in M}(P[u](x_m)-f(x_m))^2
          + \tau\sum_{m\in\partial M}(u(x_m)-g(x_m))^2,

by Gauss-Newton (elliptic) or Adam (Allen-Cahn, Burgers, Eikonal).

**Our variant (:func:`solve_collocation`).** The same interpolant and derivative matrices, but the
collocation equations :math:`P[u](x_m)=f(x_m)` at the interior nodes solved exactly, boundary
values imposed (the limit of large :math:`v,\tau` and a vanishing nugget), by Newton's method;
each Newton system by GMRES with Kronecker matrix-vector products, preconditioned by the exact
inverse of the constant-coefficient part (fast diagonalisation) or, with first-order terms, by a
sparse finite-difference discretisation of the same linearised operator. It never forms an
:math:`N\times N` matrix, which the paper's elliptic Gauss-Newton does.

**The baseline (DAKS, Chen, Hosseini, Owhadi & Stuart 2021, :func:`solve_daks`).** A Gaussian
process whose measurements include the differential functionals :math:`\{\delta_x,
\partial\delta_x, \Delta\delta_x\}` at every interior point: the Gram matrix :math:`\Theta` between
all functionals is dense, of size about :math:`(1+\#\text{operators})N`.  The PDE eliminates one
functional's values; Gauss-Newton minimises :math:`z^\top\Theta^{-1}z` over the rest.

**A classical peer (:func:`solve_fd`).** Second-order finite differences with SciPy's sparse
direct solver, inside the same Newton iteration as our variant.

Benchmarks: the paper's nonlinear elliptic, Allen-Cahn and Burgers equations, and a regularised
Eikonal equation with a manufactured solution. Kernels: the Gaussian
:math:`\kappa_k(s,t)=\exp(-(s-t)^2/2\ell_k^2)`, whose derivatives are Hermite polynomials times the
kernel, :math:`\varphi^{(m)}(r)=(-1/\ell)^m\mathrm{He}_m(r/\ell)\varphi(r)`.

Modules: :mod:`.kernels` (kernels, Kronecker algebra, interpolation), :mod:`.pdes` (the
benchmarks), :mod:`.sks` (the paper's solver), :mod:`.collocation` (our variant),
:mod:`.daks` (the dense baseline), :mod:`.finite_differences`, :mod:`.results`.
"""

from .collocation import solve_collocation
from .daks import solve_daks
from .finite_differences import solve_fd
from .kernels import KroneckerInterpolant, gaussian_kernel_1d, kron_matvec, uniform_grid
from .pdes import PDE, allen_cahn, burgers, burgers_reference, eikonal, nonlinear_elliptic
from .results import SolveResult
from .sks import solve_sks

__all__ = [
    "PDE",
    "KroneckerInterpolant",
    "SolveResult",
    "allen_cahn",
    "burgers",
    "burgers_reference",
    "eikonal",
    "gaussian_kernel_1d",
    "kron_matvec",
    "nonlinear_elliptic",
    "solve_collocation",
    "solve_daks",
    "solve_fd",
    "solve_sks",
    "uniform_grid",
]

