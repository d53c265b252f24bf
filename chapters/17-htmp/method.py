# %% [markdown]
# # The method: Marchenko-Pastur at high temperature
#
# Weight matrices of trained networks have eigenvalue spectra with heavy, power-law-looking tails;
# the tail exponent correlates with model quality, which made it the basis of WeightWatcher's
# "heavy-tailed self-regularisation". Where do the heavy tails come from, when the entries of the
# matrices are not heavy-tailed at all? Hodgkinson, Wang and Mahoney {cite}`hodgkinson2025htmp`
# propose a family of random matrices, the **high-temperature Marchenko-Pastur (HTMP) ensemble**:
#
# > Under this model, spectral densities with power laws on (upper and lower) tails arise through a
# > combination of three independent factors (complex correlation structures in the data; reduced
# > temperatures during training; and reduced eigenvector entropy), appearing as an implicit bias in
# > the model structure, and they can be controlled with an "eigenvalue repulsion" parameter.
#
# The ensemble is the $\beta$-Laguerre (Wishart-like) ensemble of random matrix theory with the
# inverse temperature $\beta$ sent to zero as the size $p$ grows, $\kappa=\beta p$ fixed
# {cite}`allez2013laguerre`. Its eigenvalues repel each other through $|\lambda_i-\lambda_j|^\beta$:
# a large $\kappa$ freezes them into the Marchenko-Pastur (MP) law of a Gaussian matrix; a small
# $\kappa$ lets them spread over decades. This notebook draws the density, checks it against a
# sampler, looks at its tails and fits $\kappa$. All of it is `icml25.htmp`.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import numpy as np

from icml25 import book, htmp

SIZES = {
    "quick": dict(n=1000, draws=2, kappas=(0.5, 4.0)),
    "book": dict(n=2000, draws=4, kappas=(0.25, 1.0, 4.0, 16.0)),
    "paper": dict(n=8000, draws=10, kappas=(0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 16.0, 64.0)),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
GAMMA = 2.0  # aspect ratio p/n of the matrices

# %% [markdown]
# ## The density and the sampler
#
# With $b=\kappa/2$, $c = 1+\tfrac\kappa2(1-\tfrac1\gamma)$ and $y=\tfrac{\kappa}{2\gamma}x$, the
# density of the nonzero eigenvalues is
#
# $$f(x) = \frac{\kappa}{2}\,\frac{y^{-c}e^{-y}}{\Gamma(\tfrac\kappa2+1)\,\Gamma(\tfrac{\kappa}{2\gamma})
#   \,|U(\tfrac\kappa2, c, -y)|^2},\qquad x>0,$$
#
# with $U$ Tricomi's confluent hypergeometric function (`htmp.htmp_density`; the module docstring
# says how it was checked). The sampler (`htmp.sample_htmp`) is Dumitriu and Edelman's bidiagonal
# model of the $\beta$-Laguerre ensemble {cite}`dumitriu2002matrix` with $\beta=\kappa/p$: $O(n)$
# chi-distributed numbers and one tridiagonal eigenproblem instead of a dense $p\times n$ matrix.
# Below, {glue:text}`draws` matrices of {glue:text}`n` nonzero eigenvalues each per $\kappa$, at
# $\gamma=2$, on logarithmic axes.

# %%
book.glue("draws", size.draws)
book.glue("n", size.n)
samples = {
    k: np.concatenate([htmp.sample_htmp(size.n, GAMMA, k, run.rng)
                       for _ in range(size.draws)])
    for k in (*size.kappas, np.inf)
}
ks = {k: htmp.ks_distance(x, GAMMA, k) for k, x in samples.items()}

# %% tags=["hide-input", "remove-output"]
fig, ax = book.figure(height=3.4)
for i, (k, x) in enumerate(samples.items()):
    bins = np.logspace(np.log10(max(x.min(), 1e-6)), np.log10(x.max()), 50)
    hist, edges = np.histogram(x, bins, density=True)
    centres = np.sqrt(edges[1:] * edges[:-1])
    label = "MP ($\\kappa=\\infty$)" if np.isinf(k) else f"$\\kappa={k:g}$"
    ax.loglog(centres[hist > 0], hist[hist > 0], "o", ms=3, color=book.PALETTE[i],
              alpha=0.6)
    grid = np.logspace(np.log10(centres[0]), np.log10(edges[-1]), 400)
    density = (htmp.mp_density(grid, GAMMA) if np.isinf(k)
               else htmp.htmp_density(grid, GAMMA, k))
    ax.loglog(grid, density, color=book.PALETTE[i], label=f"{label}, KS {ks[k]:.3f}")
ax.set_ylim(1e-5, None)
ax.set_xlabel("eigenvalue $x$ (mean $\\gamma$)")
ax.set_ylabel("density")
ax.legend(fontsize=8, loc="upper right")  # the densities vanish there
book.show_figure(fig, "fig_density")

# %% [markdown]
# ```{glue:figure} fig_density
# :alt: Log-log plot of eigenvalue densities at gamma = 2, one colour per kappa and one for the Marchenko-Pastur law: dots are histograms of sampled eigenvalues, lines the closed-form densities; the smaller kappa, the further the curve reaches towards small and large eigenvalues.
# :name: fig-17-density
#
# **The smaller $\kappa$, the further the spectrum spreads, down and up.** Lines: the
# closed-form HTMP density for each $\kappa$ and its limit, the MP law ($\kappa=\infty$);
# dots: histograms of {glue:text}`draws` sampled matrices of {glue:text}`n` nonzero
# eigenvalues each, at $\gamma=2$. The legend gives the KS distance between the two.
# ```

# %% tags=["nbval-check-output"]
worst = max(ks.values())
book.claim(
    "sampler-matches",
    "the closed-form density and its MP limit match the tridiagonal sampler at "
    "gamma = 2: KS distance < 0.03 for every kappa shown",
    worst, "<", 0.03,
    kind="check",
    digits=3,
    paper="HTMP spectral density (closed form in U); Marchenko-Pastur as "
    "kappa -> infinity",
    note=f"ours: the worst KS over kappa in {list(size.kappas)} and MP, gamma = 2",
)

# %% [markdown]
# In {numref}`fig-17-density`, curves (density) and dots (samples) agree for every
# $\kappa$. The agreement is a check of the formula and of the sampler, including their $\kappa\to\infty$ limit (MP); the
# reproduction repeats it over other aspect ratios $\gamma$. As $\kappa$ falls the
# spectrum spreads: the small eigenvalues reach down by orders of magnitude and the
# large ones up, with nearly straight stretches on the log-log plot. With
# $\kappa=\infty$ the support is MP's interval.
#
# ## How heavy are the tails?
#
# The local slope $d\log f/d\log x$ is the exponent a power law would have. Near zero it tends to
# $\tfrac\kappa2(1-\tfrac1\gamma)-1$: the lower tail *is* a power law. Far out it falls without
# bound: $f(x)\sim y^{\frac\kappa2(1+\frac1\gamma)-1}e^{-y}$, an exponential cut-off at
# $x\approx 2\gamma/\kappa$. In between, for small $\kappa$, the slope lingers near $-1$ to $-3$
# for a long stretch, which is what a finite sample of eigenvalues sees.

# %% tags=["hide-input", "remove-output"]
fig, ax = book.figure(height=3.0)
for i, k in enumerate(size.kappas):
    grid = np.logspace(-4, np.log10(max(40 * GAMMA / k, 30)), 600)
    logf = htmp.htmp_logpdf(grid, GAMMA, k)
    ax.semilogx(grid, np.gradient(logf, np.log(grid)), color=book.PALETTE[i],
                label=f"$\\kappa={k:g}$")
    ax.axhline(k / 2 * (1 - 1 / GAMMA) - 1, color=book.PALETTE[i], ls=":", lw=1)
ax.set_ylim(-8, 4)
ax.set_xlabel("eigenvalue $x$")
ax.set_ylabel("local slope $d\\log f / d\\log x$")
ax.legend(fontsize=8, loc="lower left")
book.show_figure(fig, "fig_local_slope")

# %% [markdown]
# ```{glue:figure} fig_local_slope
# :alt: Local slope of the log density against the eigenvalue on a log axis, one curve per kappa: each curve is flat at small eigenvalues, on a dotted line at its lower-tail exponent, and falls ever more steeply at large eigenvalues.
# :name: fig-17-local-slope
#
# **The lower tail is a true power law; the upper tail is not.** The local slope
# $d\log f/d\log x$ of the HTMP density at $\gamma=2$ for each $\kappa$: flat near zero, at
# the lower-tail exponent $\tfrac\kappa2(1-\tfrac1\gamma)-1$ (dotted), and falling without
# bound beyond the bulk.
# ```
#
# No curve in {numref}`fig-17-local-slope` has a flat stretch at the top: at any fixed
# $\kappa$ the upper tail is not a true power law, and a fitted exponent depends on where
# the fit starts and on how many eigenvalues there are. The reproduction measures that
# dependence.
#
# The lower tail, on the other hand, is an exact power law, so the *inverse* spectrum $1/x$ has an
# exact upper power law, with density exponent $1+\tfrac\kappa2(1-\tfrac1\gamma)$. The first
# author's public helper code draws inverse Marchenko-Pastur spectra, and the abstract speaks of
# power laws on both tails; whether the paper models some spectra (features, Hessians) as inverse
# HTMP is not checked here against the paper's full text.
#
# ## Fitting $\kappa$
#
# `htmp.fit_kappa` maximises the likelihood over $\log\kappa$ after scaling the eigenvalues to mean
# $\gamma$ (the mean of $f$ for every $\kappa$), so that the estimate sees only the *shape* of the
# spectrum, like WeightWatcher's exponent. On one matrix of 200 eigenvalues per true $\kappa$:

# %%
fits = {k: htmp.fit_kappa(htmp.sample_htmp(200, GAMMA, k, run.rng), GAMMA, (0.01, 30.0))
        for k in size.kappas}
{f"kappa = {k:g}": round(v, 3) for k, v in fits.items()}

# %% [markdown]
# ## Exercises
#
# ```{exercise} The Marchenko-Pastur limit
# :label: ex-htmp-mp
#
# Plot `htmp.htmp_density` for $\kappa = 16, 64, 256$ against `htmp.mp_density` at $\gamma=2$.
# How fast does the largest pointwise difference shrink with $\kappa$? Why does the MP law have a
# hard edge while every HTMP density has unbounded support?
# ```
#
# ```{solution} ex-htmp-mp
# :class: dropdown
#
# The difference shrinks roughly like $1/\kappa$ in the bulk (the fluctuations of a
# $\beta$-ensemble scale like $1/(\beta p)$). At finite $\beta p$ every eigenvalue configuration
# has positive probability, since the repulsion $|\Delta|^\beta$ never forbids anything and the
# weight $x^{\cdots}e^{-\cdots x}$ is positive on $(0,\infty)$; only in the frozen limit do the
# eigenvalues settle on MP's interval $[(1-\gamma^{-1/2})^2, (1+\gamma^{-1/2})^2]\cdot\gamma$.
# ```
#
# ```{exercise} Read the lower tail
# :label: ex-htmp-lower
#
# For $\kappa=0.5$ and $\gamma=2$, predict the exponent of the lower tail, then estimate it from
# 20 samples of `sample_htmp(1000, 2, 0.5, rng)` by a log-log regression of the empirical CDF on the
# smallest 2% of eigenvalues. What goes wrong if you include eigenvalues below $10^{-12}$?
# ```
#
# ```{solution} ex-htmp-lower
# :class: dropdown
#
# The density behaves like $x^{0.25\cdot(1-0.5)\cdot 2-1}=x^{-0.875}$, so the CDF like $x^{0.125}$:
# the slope of $\log F$ against $\log x$ should be near 0.125. Eigenvalues near machine precision
# relative to the largest are dominated by rounding (the sampler is accurate to high relative
# precision, a dense eigensolver is not), so a fit that reaches into them reads noise; keep to a
# window well above $10^{-12}$ times the largest eigenvalue.
# ```
#
# ```{exercise} Scale-free
# :label: ex-htmp-scale
#
# Multiply a sample by 1000 and refit $\kappa$. Then replace the mean normalisation in
# `fit_kappa` by a median normalisation: is the estimate still consistent? Why is the mean the
# natural choice here?
# ```
#
# ```{solution} ex-htmp-scale
# :class: dropdown
#
# The fit is unchanged by scaling, because it first maps the sample to mean $\gamma$. The mean of
# $f$ is $\gamma$ for every $\kappa$ (exactly, from the sampler's construction), so the normalisation
# does not depend on the unknown parameter; the median of $f$ does depend on $\kappa$, and a median
# normalisation would bias the estimate unless the median's dependence on $\kappa$ were built into
# the likelihood.
# ```

# %%
book.finish()
