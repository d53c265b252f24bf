# %% [markdown]
# # The method: testing latent independence through the cells of a table
#
# Many variables are measured coarsely: a questionnaire answer on a five-point scale, an income
# bracket, a disease stage. Behind each code sits a continuous quantity that was cut at unknown
# thresholds. Causal discovery asks about the quantities, not the codes, and
# conditional-independence (CI) tests on the codes give wrong answers:
#
# > Applying CI tests directly to discretized data, however, can lead to incorrect conclusions
# > about the independence of latent variables. [...] We find that the relationship can be
# > established by addressing an over-identifying restriction problem with Generalized Method of
# > Moments (GMM). (Sun et al., 2025, abstract)
#
# This notebook shows on small pictures why the naive test fails, how a latent correlation is
# recovered from a contingency table by GMM, and how the test of Sun et al.
# {cite}`sun2025dctgmm` combines those correlations. The experiments are in
# [the reproduction](reproduction.ipynb).

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import numpy as np
from matplotlib import ticker

from icml25 import book
from icml25.dct_gmm import (
    LatentCI,
    ci_test,
    estimate_pair,
    fisher_z_test,
    rectangle_probabilities,
    simulate,
)

from _chapter import COLOURS

SIZES = {
    "quick": dict(n_toy=600, n_chain=(250, 1000, 4000)),
    "book": dict(n_toy=2000, n_chain=(250, 1000, 4000, 16000)),
    "paper": dict(n_toy=10000, n_chain=(250, 1000, 4000, 16000, 64000)),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size

# %% [markdown]
# ## Discretisation breaks conditional independence
#
# Take a chain of latent Gaussians $X\to Y\to Z$. Given $Y$, $X$ and $Z$ are independent. Now
# observe $Y$ only through four categories. Within one category $Y$ still varies, and that
# leftover variation still links $X$ and $Z$: conditioning on the *code* of $Y$ does not block the
# path. A test on the codes sees the leftover dependence, and the more data, the surer it is.

# %% tags=["nbval-check-output"]
W = np.array([[0, 0, 0], [0.8, 0, 0], [0, 0.8, 0]], dtype=float)  # X -> Y -> Z
print("    n   Fisher-z on codes   Fisher-z on latent   DCT-GMM on codes"
      "   (p-values of X _|_ Z | Y)")
for n in size.n_chain:
    observed, latent = simulate(W, n, [0, 4, 0], run.rng(f"chain-n{n}"))
    print(f"{n:6d}   {fisher_z_test(observed, 0, 2, [1]).p_value:17.3g}"
          f"   {fisher_z_test(latent, 0, 2, [1]).p_value:18.3g}"
          f"   {ci_test(observed, 0, 2, [1]).p_value:16.3g}")

# %% [markdown]
# Fisher's $z$ on the codes rejects a true independence with ever smaller p-values as $n$ grows;
# on the latent values (which real data never shows us) it does not. The test of the paper works on
# the codes and behaves like the oracle.
#
# ## A latent correlation from a contingency table
#
# Two latent standard normals with correlation $\sigma$, each cut at thresholds, give a table of
# cell probabilities. Every cell is a bivariate-normal rectangle:
#
# $$\tau_{lm}(\sigma) = P\big(h_{j,l-1}<X_j\le h_{j,l},\ h_{k,m-1}<X_k\le h_{k,m}\big).$$
#
# The thresholds come from the margins, $\hat h_{j,l}=\Phi^{-1}(\text{share of codes}\le l)$. The
# only unknown is $\sigma$, and every cell gives one equation $\hat\tau_{lm}=\tau_{lm}(\sigma)$: far
# more equations than unknowns. GMM solves such **over-identified** systems by minimising a weighted
# distance between the empirical and the model moments. {numref}`fig-04-table` shows a
# pair with $\sigma = 0.6$ cut into $3\times4$ cells.

# %%
rho_true = 0.6
latent = run.rng("toy-pair").multivariate_normal(
    [0, 0], [[1, rho_true], [rho_true, 1]], size=size.n_toy)
cuts_a, cuts_b = [-0.6, 0.3], [-1.0, -0.2, 0.7]
a = np.searchsorted(cuts_a, latent[:, 0])
b = np.searchsorted(cuts_b, latent[:, 1])
table = np.zeros((3, 4))
np.add.at(table, (a, b), 1)

# %% tags=["hide-input", "remove-output"]
fig, axes = book.figure(2, height=3.3)
axes[0].scatter(*latent.T, s=3, alpha=0.3, color="grey")
for c in cuts_a:
    axes[0].axvline(c, color="black", lw=1.2)
for c in cuts_b:
    axes[0].axhline(c, color="black", lw=1.2)
axes[0].set_xlabel("latent $X_j$ (cut into 3 codes)")
axes[0].set_ylabel("latent $X_k$ (cut into 4 codes)")
axes[0].set_title("what we never see")
im = axes[1].imshow(table.T / size.n_toy, origin="lower", cmap="Blues")
for (l, m), v in np.ndenumerate(table):
    axes[1].text(l, m, f"{v / size.n_toy:.2f}", ha="center", va="center", fontsize=8)
axes[1].set_xticks(range(table.shape[0]))
axes[1].set_yticks(range(table.shape[1]))
axes[1].set_xlabel("code of $X_j$")
axes[1].set_ylabel("code of $X_k$")
axes[1].set_title("what we see: cell shares")
axes[1].grid(False)
book.show_figure(fig, "fig_table")

# %% [markdown]
# ```{glue:figure} fig_table
# :alt: Left, a scatter plot of correlated latent pairs cut by two vertical and three horizontal lines into a 3-by-4 grid; right, the 3-by-4 table of the shares of points in each cell, shaded by size, with the large shares along the diagonal.
# :name: fig-04-table
#
# **Discretisation keeps only the share of points in each rectangle.** Left: the latent
# pairs with correlation $\sigma = 0.6$ (never observed) and the thresholds that cut them
# into 3 and 4 codes; right: the contingency table that is observed, as shares of the
# {glue:text}`n_toy` points, from which GMM must recover $\sigma$.
# ```

# %% [markdown]
# The GMM objective of phase one (identity weight) is $\|\hat\tau-\tau(\sigma)\|^2$ over the cells
# holding at least 1% of the data. Binarising both variables, as the earlier DCT test does, keeps
# one equation: the objective is then flat in much of the information the table carries.
# {numref}`fig-04-objective` draws the objective over all the cells of the table.

# %%
edges_a = np.concatenate([[-np.inf], cuts_a, [np.inf]])
edges_b = np.concatenate([[-np.inf], cuts_b, [np.inf]])
la, lb = np.meshgrid(np.arange(3), np.arange(4), indexing="ij")
box = (edges_a[la], edges_a[la + 1], edges_b[lb], edges_b[lb + 1])
grid = np.linspace(-0.2, 0.95, 200)
objective = [np.sum((table / size.n_toy - rectangle_probabilities(*box, s)) ** 2)
             for s in grid]
estimate = estimate_pair(a, b)
binary = estimate_pair((latent[:, 0] >= latent[:, 0].mean()).astype(int),
                       (latent[:, 1] >= latent[:, 1].mean()).astype(int))

book.glue(toy_sigma=estimate.sigma, toy_sigma_binary=binary.sigma,
          toy_moments=estimate.n_moments, n_toy=size.n_toy)

# %% tags=["hide-input", "remove-output"]
fig, ax = book.figure(height=3.2)
ax.plot(grid, objective, color=COLOURS["DCT-GMM"],
        label=r"$\|\hat\tau-\tau(\sigma)\|^2$ over all 12 cells")
ax.axvline(rho_true, color="grey", ls=":", lw=1.5, label=f"true $\\sigma$ = {rho_true}")
ax.axvline(estimate.sigma, color=COLOURS["DCT-GMM"], ls="--", label="GMM estimate")
ax.axvline(binary.sigma, color=COLOURS["DCT (binarised)"], ls="-.",
           label="estimate from the binarised data")
ax.set_xlabel(r"$\sigma$")
ax.set_yscale("log")
ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
ax.yaxis.set_minor_locator(ticker.NullLocator())
ax.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
ax.set_ylabel("objective (log scale)")
fig.legend(loc="outside lower center", ncols=2)
book.show_figure(fig, "fig_objective")

# %% [markdown]
# ```{glue:figure} fig_objective
# :alt: A line plot of the GMM objective against sigma from -0.2 to 0.95 on a log scale, with a single valley; vertical lines mark the true sigma of 0.6, the GMM estimate at the bottom of the valley, and the estimate from the binarised data.
# :name: fig-04-objective
#
# **Many cells, one unknown: the objective has a single clear minimum near the true
# correlation.** The phase-one GMM objective, the squared distance between the observed
# cell shares of {numref}`fig-04-table` and the model's rectangle probabilities, as a
# function of the latent correlation $\sigma$ (here over all 12 cells; the estimator
# drops cells holding under 1% of the data). Dashed: its minimiser, the GMM estimate;
# dash-dotted: the estimate from the binarised data; dotted: the truth.
# ```

# %% [markdown]
# From {glue:text}`toy_moments` cell moments (the cells holding at least 1% of the data) the
# estimate is {glue:text}`toy_sigma:.3f` (true
# value 0.6); from the binarised data, {glue:text}`toy_sigma_binary:.3f`. Both are consistent; the
# difference is in their **variance**, which is what decides a test's power.
#
# ## From correlations to a test
#
# ```{prf:definition} Nodewise regression and the null hypothesis
# :label: def-dctgmm-null
#
# For the tested variables $\{j, k\}\cup S$ with latent correlation matrix $\Sigma$, let
# $\beta_j=\Sigma_{-j,-j}^{-1}\Sigma_{-j,j}$ be the coefficients of the regression of $X_j$ on the
# others. Then $X_j\perp X_k\mid X_S \iff \beta_{jk}=0$.
# ```
#
# Each estimated correlation $\hat\sigma_{uv}$ comes with an **influence function**: numbers
# $\xi_i$, one per observation, such that $\hat\sigma_{uv}-\sigma_{uv}\approx\frac1n\sum_i\xi_i$.
# For GMM with moment Jacobian $J$ (over $\sigma$ and the thresholds) and weight $A$,
# $\xi_i=[(J^\top AJ)^{-1}J^\top A(\mathbb 1_i-\hat\tau)]_\sigma$, where $\mathbb 1_i$ marks the
# cell of observation $i$. The delta method turns them into the influence of $\hat\beta_{jk}$:
#
# ```{prf:theorem} Asymptotic distribution (Sun et al., 2025)
# :label: thm-dctgmm
#
# With $\Theta=\Sigma_{-j,-j}^{-1}$ and $b_0=\beta_j$ with its $k$-th entry set to zero,
# $\text{infl}_i=\Theta_{k\cdot}\big(\xi_i[-j,j]-\xi_i[-j,-j]\,b_0\big)$ and, under
# $H_0:\beta_{jk}=0$,
#
# $$z=\frac{\sqrt n\,\hat\beta_{jk}}{\sqrt{\frac1n\sum_i\text{infl}_i^2}}\ \xrightarrow{d}\ \mathcal N(0,1).$$
# ```
#
# The code is `icml25.dct_gmm`: `estimate_pair` (one latent correlation and its influence values),
# `LatentCI` (all pairs of a data set, cached, and the test), `ci_test` and `dct_test`.
# In `estimate_pair`, `tau` holds the cells with at least 1% of the data, `solve` minimises
# $(\hat\tau-\tau(\sigma))^\top A(\hat\tau-\tau(\sigma))$, `J` is the Jacobian in
# $\sigma$ and the thresholds, and `row` is the $\sigma$ row of $(J^\top AJ)^{-1}J^\top A$,
# so that `influence` is $\xi_i$, which depends on $i$ only through its cell.
#
# :::{dropdown} The code: `estimate_pair`, one latent correlation by GMM
# :open:
# ```{literalinclude} /lib/icml25/dct_gmm.py
# :pyobject: estimate_pair
# :caption: `icml25.dct_gmm.estimate_pair`
# :language: python
# ```
# :::
#
# In `LatentCI.test`, `theta` is $\Theta$, `beta[0]` is $\hat\beta_{jk}$, `b0` is $b_0$,
# `infl` is $\text{infl}_i$ and `statistic` is the $z$ of the theorem.
#
# ```{literalinclude} /lib/icml25/dct_gmm.py
# :pyobject: LatentCI.test
# :dedent: 4
# :caption: `icml25.dct_gmm.LatentCI.test`: the test statistic of the theorem
# :language: python
# ```

# %% tags=["nbval-check-output"]
observed, _ = simulate(W, 1000, [3, 4, 5], run.rng("example-data-set"))
tests = LatentCI(observed)
cases = [(0, 2, [1], "independent"), (0, 1, [2], "dependent"), (0, 2, [], "dependent")]
for x, y, z, truth in cases:
    r = tests.test(x, y, z)
    print(f"X{x} _|_ X{y} | {z}: beta = {r.beta:+.3f}, z = {r.statistic:+.2f}, "
          f"p = {r.p_value:.3g}  (latent truth: {truth})")

# %% [markdown]
# An empty conditioning set works the same way: $\beta$ is then the latent correlation itself. (The
# official code falls back to Fisher's $z$ on the codes there; ours does not.)
#
# ## Exercises
#
# ```{exercise} Counting equations
# :label: ex-dctgmm-count
#
# **Level:** easy · **Time:** about 15 minutes.
#
# Variables with $M_j$ and $M_k$ categories give up to $M_jM_k$ cell moments. How many parameters
# does the pair's GMM estimate (counting the thresholds), and how many over-identifying
# restrictions remain? What happens with two binary variables?
# ```
#
# ```{solution-start} ex-dctgmm-count
# :class: dropdown
# ```
#
# The parameters are $\sigma$ and $(M_j-1)+(M_k-1)$ thresholds; the cell shares sum to one, so at
# most $M_jM_k-1$ moments are independent. Restrictions: $M_jM_k-M_j-M_k$. Two binary variables
# give $4-1=3$ independent moments for 3 parameters: exactly identified. The cell checks it on
# simulated pairs (latent correlation 0.6): with $2\times2$ cells the fitted model reproduces
# every cell share exactly, with more cells it cannot.

# %%
from scipy import special

W_pair = np.array([[0, 0], [0.6, 0]], dtype=float)


def cell_edges(codes, levels):
    shares = np.bincount(codes, minlength=levels)[:-1].cumsum() / len(codes)
    cuts = special.ndtri(shares)
    return np.concatenate([[-np.inf], cuts, [np.inf]])


def largest_cell_residual(a, b):
    """GMM estimate of the pair and the largest |observed - fitted| cell share."""
    est = estimate_pair(a, b)
    Ma, Mb = a.max() + 1, b.max() + 1
    ea, eb = cell_edges(a, Ma), cell_edges(b, Mb)
    la, lb = np.divmod(np.arange(Ma * Mb), Mb)
    fitted = rectangle_probabilities(ea[la], ea[la + 1], eb[lb], eb[lb + 1], est.sigma)
    observed_share = np.bincount(a * Mb + b, minlength=Ma * Mb) / len(a)
    return est, np.abs(observed_share - fitted).max()


print("M_j x M_k   moments   parameters   restrictions   cells used   "
      "sigma   largest cell residual")
count_residual, count_cells = {}, {}
for Mj, Mk in [(2, 2), (3, 4), (5, 5)]:
    codes, _ = simulate(W_pair, size.n_toy, [Mj, Mk],
                        run.rng(f"table-{Mj}x{Mk}"))
    est, residual = largest_cell_residual(*codes.astype(int).T)
    count_residual[Mj, Mk] = residual
    count_cells[Mj, Mk] = est.n_moments
    print(f"  {Mj} x {Mk}     {Mj * Mk - 1:7d}   {Mj + Mk - 1:10d}   "
          f"{Mj * Mk - Mj - Mk:12d}   {est.n_moments:10d}   {est.sigma:.3f}   "
          f"{residual:.1e}")
book.glue(ex_count_res22=count_residual[2, 2], ex_count_res34=count_residual[3, 4],
          ex_count_cells34=count_cells[3, 4], ex_count_cells55=count_cells[5, 5])


# %% [markdown]
# For $2\times2$ the largest cell residual is {glue:text}`ex_count_res22:.0e`, zero up to the
# optimiser's tolerance: exactly identified. That is why DCT's single bridge equation is the
# binary special case of the GMM estimator. For $3\times4$ it is
# {glue:text}`ex_count_res34:.1e`: the estimate cannot meet every cell at once, and the
# weighting decides how the misfit is spread. The counts in the table are upper bounds: the
# estimator drops cells with less than `MIN_CELL_SHARE` (1%) of the data, and `simulate`
# draws its thresholds at random quantiles, so some categories are thin. Here it used
# {glue:text}`ex_count_cells34` of the 12 cells for $3\times4$ and
# {glue:text}`ex_count_cells55` of the 25 for $5\times5$. (The thresholds are read off the
# margins, so only $\sigma$ is fitted to the joint cells.)
#
# ```{solution-end}
# ```
#
# ```{exercise} Where does the leftover dependence go?
# :label: ex-dctgmm-residual
#
# **Level:** medium · **Time:** about 20 minutes.
#
# In the chain of the first section, compute the partial correlation of $X$ and $Z$ given the
# *code* of $Y$ for growing numbers of categories of $Y$ (2, 4, 8, 32). Predict the limit.
# ```
#
# ```{solution-start} ex-dctgmm-residual
# :class: dropdown
# ```
#
# The cell simulates the chain with {glue:text}`ex_res_n` samples for each number of
# categories, computes the partial correlation from the inverse correlation matrix of
# $(X, \text{code of } Y, Z)$, and adds two references: $Y$ itself, and $Y$ clipped to
# the range where `simulate` places its thresholds (its 10% and 90% quantiles). Predict
# before running: does the limit depend on where the thresholds go?

# %%
def partial_xz(data):
    P = np.linalg.inv(np.corrcoef(data.T))
    return -P[0, 2] / np.sqrt(P[0, 0] * P[2, 2])


n_res = size.n_chain[-1]
print("categories of Y   partial corr(X, Z | code of Y)   Fisher-z p-value")
residual_pc = {}
for M in (2, 4, 8, 32, 256):
    codes, latent = simulate(W, n_res, [0, M, 0], run.rng(f"chain-codes-{M}"))
    residual_pc[M] = partial_xz(codes)
    print(f"{M:16d}   {residual_pc[M]:30.3f}   "
          f"{fisher_z_test(codes, 0, 2, [1]).p_value:.2g}")
clipped = latent.copy()
clipped[:, 1] = np.clip(latent[:, 1], *np.quantile(latent[:, 1], [0.1, 0.9]))
print(f"Y clipped at its 10% and 90% quantiles:   {partial_xz(clipped):.3f}")
print(f"Y itself (latent):                         {partial_xz(latent):.3f}")
book.glue(ex_res_n=n_res, ex_res_2=residual_pc[2], ex_res_256=residual_pc[256],
          ex_res_clipped=partial_xz(clipped))

# %% [markdown]
# The partial correlation falls from {glue:text}`ex_res_2:.3f` with two categories, not
# always monotonically, and not to 0: with 256 it is still {glue:text}`ex_res_256:.3f`, of
# the order of the value for $Y$ clipped at its 10% and 90% quantiles
# ({glue:text}`ex_res_clipped:.3f`). `simulate` draws its thresholds at random quantiles
# between 10% and 90%, so finer categories approach a *clipped* $Y$ (and a rank-like
# transform of it, since the codes are equally spaced), whose tails still carry dependence
# between $X$ and $Z$; only $Y$ itself gives 0. With thresholds over the whole line the limit
# would be 0. For any fixed coding the partial correlation stays positive, so Fisher's $z$
# rejects with probability tending to one as $n$ grows.
#
# ```{solution-end}
# ```
#
# ```{exercise} Efficient weighting
# :label: ex-dctgmm-phase-two
#
# **Level:** medium · **Time:** about 20 minutes.
#
# `LatentCI(data, weighting="efficient")` runs phase two: the weight is the inverse covariance of
# the cell indicators. Compare the spread of $\hat\sigma$ under both weightings over 200 simulated
# tables. Is the gain worth a second optimisation?
# ```
#
# ```{solution-start} ex-dctgmm-phase-two
# :class: dropdown
# ```
#
# The cell simulates {glue:text}`ex_w_tables` tables of $3\times4$ categories with
# 1,000 rows each (latent correlation 0.6; fewer than 200 to keep the chapter quick; set
# `n_tables = 200` to run the exercise as stated) and estimates $\hat\sigma$ on each
# with both weightings.

# %%
n_tables = size.n_toy // 25
sigma_by_weight = {"identity": [], "efficient": []}
for i in range(n_tables):
    codes, _ = simulate(W_pair, 1000, [3, 4], run.rng(f"weighting-table-{i}"))
    a, b = codes.astype(int).T
    for weighting in sigma_by_weight:
        est = estimate_pair(a, b, weighting=weighting)
        sigma_by_weight[weighting].append(est.sigma)
spread = {w: np.std(v, ddof=1) for w, v in sigma_by_weight.items()}
print("weighting   mean sigma   standard deviation (± 1 s.e.)")
for w, v in sigma_by_weight.items():
    print(f"{w:9s}   {np.mean(v):10.4f}   {spread[w]:.4f} ± "
          f"{spread[w] / np.sqrt(2 * (n_tables - 1)):.4f}")
book.glue(ex_w_tables=n_tables, ex_w_ratio=spread["efficient"] / spread["identity"])

# %% [markdown]
# The efficient weighting's spread is {glue:text}`ex_w_ratio:.2f` times the identity
# weighting's on the same tables. Two-step GMM is asymptotically efficient among estimators
# using these moments, so its spread cannot be larger in the limit; with a handful of cells the
# gain is small, of the order of the standard errors in the table, and it costs a second
# optimisation and the pseudo-inverse of the cell covariance.
#
# ```{solution-end}
# ```

# %%
book.finish()
