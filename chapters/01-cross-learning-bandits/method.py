# %% [markdown]
# # The method: cross-learning, and learning without the context distribution
#
# A bidder in repeated first-price auctions sees her value for the item, bids, and learns
# whether she won. Her value is a *context*; her bid an *action*. Because winning does not
# depend on the value, one round tells her what the same bid would have earned at **every**
# value. Huang and Huang {cite}`huang2025highprob` study this feedback:
#
# > Motivated by applications in online bidding and sleeping bandits, we examine the problem
# > of contextual bandits with cross learning, where the learner observes the loss associated
# > with the action across all possible contexts, not just the current round's context. Our
# > focus is on a setting where losses are chosen adversarially, and contexts are sampled
# > i.i.d. from a specific distribution. (Huang & Huang, 2025, abstract)
#
# :::{important}
# The algorithm that the paper analyses is Algorithm 1 of Schneider and Zimmert
# {cite}`schneider2023optimal`, whose text is not public. What this chapter implements is an
# **S&Z-style reconstruction** from the published one-sentence description of its mechanism
# and the structure of Huang and Huang's proof. The details marked below as our choices
# could not be checked: beyond the abstract neither paper's text could be read, and neither
# paper's code is public. The chapter checks whether the paper's claims hold *for this
# reconstruction*.
# :::
#
# This notebook builds the method on a toy you can see: the feedback, the learner that knows
# the context distribution {cite}`balseiro2019contextual`, the epoch estimator that does
# not, and a look inside it. The experiments are in [the reproduction](reproduction.ipynb).

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import numpy as np

from icml25 import book
from icml25 import cross_learning as cl

from _chapter import COLOURS

SIZES = {
    "quick": dict(values=20, bids=10, horizon=200, seeds=4, horizon_ex=200, seeds_ex=3,
                  draws_ex=10_000),
    "book": dict(values=20, bids=10, horizon=2000, seeds=20, horizon_ex=2000,
                 seeds_ex=16, draws_ex=200_000),
    "paper": dict(values=20, bids=10, horizon=20000, seeds=100, horizon_ex=20000,
                  seeds_ex=100, draws_ex=2_000_000),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size

# %% [markdown]
# ## The problem
#
# ```{prf:definition} Cross-learning contextual bandits
# :label: def-01-cross-learning
#
# In rounds $t=1,\dots,T$ a context $c_t\in\{1,\dots,C\}$ is drawn i.i.d. from a distribution
# $\nu$ that the learner does **not** know; an oblivious adversary has fixed losses
# $\ell_t(c,a)\in[0,1]$ in advance. The learner sees $c_t$, plays $A_t\sim\pi_t(\cdot\mid
# c_t)$ among $K$ actions, and observes $\ell_t(c,A_t)$ **for every context** $c$. Its
# regret against the best fixed policy $\pi:[C]\to[K]$ is
#
# $$R_T=\sum_{t=1}^T\ell_t(c_t,A_t)-\min_\pi\sum_{t=1}^T\ell_t(c_t,\pi(c_t)).$$
# ```
#
# In the auction ($C$ values $v_c=c/C$, $K$ bids $b_a=(a-1)/K$, highest competing bid $m_t$),
#
# $$\ell_t(v,b)=\tfrac12\bigl(1-(v-b)\,\mathbb 1[b\ge m_t]\bigr),$$
#
# and bidding $b$ reveals $\mathbb 1[b\ge m_t]$, hence the whole column $\ell_t(\cdot,b)$.

# %%
auction = cl.FirstPriceAuction(size.values, size.bids, adversary="stationary")
# the first round whose competing bid is in the middle of the range
one_round = next(r for r in auction.rounds(1, 200, run.rng("example-round"))
                 if 0.3 <= r.competing[0] <= 0.6)
table = one_round.table()[0]  # (C, K)
played_bid = int(np.searchsorted(auction.bids, one_round.competing[0]))
book.glue(m_t=float(one_round.competing[0]), b_played=float(auction.bids[played_bid]),
          values=size.values, bids=size.bids)

# %% tags=["remove-output"]
fig, axes = book.figure(2, height=3.0, gridspec_kw=dict(width_ratios=[1.4, 1]))
ax = axes[0]
image = ax.imshow(table, origin="lower", aspect="auto", cmap="viridis",
                  extent=(-0.5 / size.bids, 1 - 0.5 / size.bids, 0.5 / size.values,
                          1 + 0.5 / size.values))
ax.axvspan(auction.bids[played_bid] - 0.5 / size.bids,
           auction.bids[played_bid] + 0.5 / size.bids, fill=False, ec="white", lw=2)
ax.axvline(one_round.competing[0], color="white", ls=":", lw=1)
ax.set_xlabel("bid $b$ (action)")
ax.set_ylabel("value $v$ (context)")
ax.grid(False)
ax.set_title("losses of one round; the framed column is revealed", fontsize=9)
fig.colorbar(image, ax=ax, label=r"$\ell_t(v,b)$")
ax = axes[1]
ax.barh(auction.values, auction.context_probs, height=0.8 / size.values,
        color=COLOURS["oracle"])
ax.set_xlabel(r"$\nu(v)$")
ax.set_ylabel("value $v$")
ax.set_title("the value distribution", fontsize=9)
book.show_figure(fig, "fig_auction")


# %% [markdown]
# ```{glue:figure} fig_auction
# :alt: Left, a heat map of one round's losses with values on the vertical axis and bids on the horizontal one: bids below the competing bid, a dotted line, lose one half at every value; bids above it lose less at high values and more at low values. A white frame marks the column of the bid that was played. Right, horizontal bars of the value distribution, a bump centred at 0.6.
# :name: fig-01-auction
#
# **One bid reveals its loss at every value: that is cross-learning.** Left: the losses
# $\ell_t(v,b)$ of one round of the auction; the played bid's column (framed) is observed in
# full, the others not at all. Right: the distribution $\nu$ of values, unknown to the
# bidder.
# ```

# %% [markdown]
# Here the competing bid is $m_t=$ {glue:text}`m_t:.3f`; bidding
# {glue:text}`b_played:.1f` wins, and the bidder learns her loss for that bid at all
# {glue:text}`values` values ({numref}`fig-01-auction`).
#
# ## Knowing $\nu$: one importance weight for all contexts
#
# Balseiro et al. {cite}`balseiro2019contextual` keep one exponential-weights distribution
# per context, $\pi_t(a\mid c)\propto\exp(-\eta\hat L_{t-1}(c,a))$, and update **every**
# context with the same importance weight, the *marginal* probability of the played action:
#
# $$f_t(a)=\sum_c\nu(c)\,\pi_t(a\mid c),\qquad
# \hat\ell_t(c,a)=\frac{\ell_t(c,a)\,\mathbb 1[A_t=a]}{f_t(a)+\gamma}\quad\text{for all }c.$$
#
# With $\gamma=0$ the estimate is unbiased ($A_t=a$ with probability $f_t(a)$, averaging
# over the context), and the variance term of the exponential-weights analysis is
# $\sum_a\mathbb E_c[\pi_t(a\mid c)]/f_t(a)=K$ per round: regret $\tilde O(\sqrt{KT})$, with
# no $C$. Without cross-learning one EXP3 per context pays $\tilde O(\sqrt{CKT})$. The
# implicit-exploration term $\gamma$ {cite}`neu2015explore` caps the weights at $1/\gamma$,
# the usual device for high-probability bounds. This is `cl.BalseiroOracle`: in `marginal`,
# `prob @ self._nu32` is $f_t(A_t)$, and `update` shrinks the played action's weight in
# every context at once by $\exp(-\eta\,\ell_t(c,A_t)/(f_t(A_t)+\gamma))$.
#
# ```{literalinclude} /lib/icml25/cross_learning/learners.py
# :pyobject: BalseiroOracle
# :caption: `icml25.cross_learning.BalseiroOracle`: exponential weights that know $\nu$
# :language: python
# ```
#
# ## Not knowing $\nu$: the epoch estimator (a reconstruction)
#
# Replacing $f_t$ by an estimate from past contexts is natural, but the contexts that shaped
# $\pi_t$ are correlated with it. Schneider and Zimmert {cite}`schneider2023optimal` estimate
# from contexts the learner has **not** learned from, in epochs; a review of Huang and
# Huang's paper sums the mechanism up as committing two rounds to each exponential-weights
# step and using one of them to estimate the distribution of the context. Our reading:
#
# ```{prf:algorithm} S&Z-style epoch estimator (reconstruction)
# :label: alg-01-reconstruction
#
# **Inputs** $K$, $T$, epoch length $L$ (rounds), learning rate $\eta$, exploration $\gamma$.
#
# 1. Rounds come in pairs; each pair is one step played with one policy $\pi_s$.
# 2. Epoch 1 plays uniformly and only stores contexts (our choice).
# 3. In epoch $e\ge2$, for each pair: a fair coin picks one round as the **learning round**
#    and the other as the **estimation round** (our choice).
#    - estimation round: add its context to the sample $S_e$; its feedback is not used;
#    - learning round: with $H_{e-1}$ the empirical distribution of $S_{e-1}$, compute
#      $\hat f_s(A)=\sum_c H_{e-1}(c)\,\pi_s(A\mid c)$ and, for every context $c$,
#      $\hat L(c,A)\mathrel{+}=2\,\ell(c,A)/(\hat f_s(A)+\gamma)$ (the step covers two rounds).
#
# Constants (our choice): $\eta=\sqrt{2\ln K/(KT)}$, $\gamma=\eta/2$, $L=2\lceil\sqrt T\,\rceil$.
# ```
#
# The estimation contexts of epoch $e-1$ never entered $\hat L$, so they are independent of
# what the learner did with them; $\pi_s$ in epoch $e$ still depends on $S_{e-1}$ through the
# earlier steps of epoch $e$, the *weak dependence between epochs* that Huang and Huang's
# analysis handles. The coin makes the learning round an unbiased sample of the pair, so an
# adversary cannot hide losses where the learner does not look (the reproduction builds such
# an adversary). This is `cl.SchneiderZimmert`; the options `paired=False` (every round
# learns, every context is stored), `coin=False` and `frozen=True` (one policy per epoch)
# are other readings of the same description.
#
# In the code, `marginal_estimate` is $\hat f_s(A)$ with `previous_sample` $=H_{e-1}$;
# `update` holds the pair's first round back, flips the coin (`second_learns`), stores the
# estimation round's context and applies the doubled step `repeat = 2.0`; `_advance` turns
# the finished epoch's counts into $H_e$.
#
# :::{dropdown} The code: the reconstruction's estimate, update and epoch switch
# :open:
# ```{literalinclude} /lib/icml25/cross_learning/learners.py
# :pyobject: SchneiderZimmert.marginal_estimate
# :dedent: 4
# :caption: `SchneiderZimmert.marginal_estimate`: $\hat f_s(A)$ from the previous epoch
# :language: python
# ```
#
# ```{literalinclude} /lib/icml25/cross_learning/learners.py
# :pyobject: SchneiderZimmert.update
# :dedent: 4
# :caption: `SchneiderZimmert.update`: step 3 of the algorithm, one round at a time
# :language: python
# ```
#
# ```{literalinclude} /lib/icml25/cross_learning/learners.py
# :pyobject: SchneiderZimmert._advance
# :dedent: 4
# :caption: `SchneiderZimmert._advance`: the end of an epoch
# :language: python
# ```
# :::
#
# ## Inside the estimator
#
# How good is $\hat f$? The cell below runs the reconstruction on the hardest case of the
# reproduction, where two rare contexts (5% of the mass together) need an action that the
# others avoid, and records at every update the estimate $\hat f_s(A)$ next to the true
# marginal $f_s(A)=\sum_c\nu(c)\pi_s(A\mid c)$ of the same policy:
# {glue:text}`seeds` runs of $T=$ {glue:text}`horizon` rounds, $C=10$,
# $K=$ {glue:text}`bids`.

# %%
class Watched(cl.SchneiderZimmert):
    """The reconstruction, logging (estimate, truth) of the played action's marginal."""

    def __init__(self, nu, **options):
        super().__init__(**options)
        self.nu, self.log = np.asarray(nu, dtype=np.float32), []

    def marginal_estimate(self, actions):
        f_hat, w = super().marginal_estimate(actions)
        if f_hat is not None:
            truth = (w / self.weights.z) @ self.nu  # pi(A | c) for every c, times nu
            self.log.append((f_hat.copy(), truth))
        return f_hat, w


rare = cl.rare_context_adversary(10, size.bids, size.horizon,
                                 seed=run.seed_of("rare-adversary"))
watched = Watched(rare.context_probs)
cl.simulate(rare, {"reconstruction": watched}, size.horizon, n_seeds=size.seeds,
            seed=run.seed_of("bias-runs"), n_checkpoints=1)
f_hat, f_true = (np.array(x) for x in zip(*watched.log))  # (updates, S)
gamma = watched.gamma_
relative_bias = (f_hat - f_true).mean() / f_true.mean()
per_run = (f_hat - f_true).mean(0) / f_true.mean()  # one value per run
bias_ci = (relative_bias - 2 * per_run.std(ddof=1) / np.sqrt(size.seeds),
           relative_bias + 2 * per_run.std(ddof=1) / np.sqrt(size.seeds))
weight_ratio = (f_true + gamma) / (f_hat + gamma)  # estimated / true importance weight
book.glue(seeds=size.seeds, horizon=size.horizon, n_updates=f_hat.size,
          bias_pct=100 * relative_bias, weight_q01=np.quantile(weight_ratio, 0.01),
          weight_q99=np.quantile(weight_ratio, 0.99), gamma=gamma)

# %% tags=["remove-output"]
fig, axes = book.figure(2, height=3.0)
ax = axes[0]
pick = run.rng("scatter-subsample").choice(f_hat.size, min(4000, f_hat.size),
                                           replace=False)
ax.loglog(f_true.ravel()[pick], f_hat.ravel()[pick], ".", ms=2, alpha=0.4,
          color=COLOURS["reconstruction"])
lims = [max(1e-4, f_true.min()), 1]
ax.plot(lims, lims, color="0.3", lw=1)
ax.axhline(gamma, color="0.5", ls=":", lw=1, label=r"$\gamma$")
ax.set_xlabel(r"true marginal $f_s(A)$")
ax.set_ylabel(r"estimate $\hat f_s(A)$")
ax.legend(loc="upper left", fontsize=8)
ax = axes[1]
ax.hist(np.log2(weight_ratio.ravel()), bins=60, color=COLOURS["reconstruction"])
ax.set_xlabel(r"$\log_2$ of the weight ratio $(f+\gamma)/(\hat f+\gamma)$")
ax.set_ylabel("updates")
ax.set_yscale("log")
book.show_figure(fig, "fig_marginal")

# %% [markdown]
# ```{glue:figure} fig_marginal
# :alt: Left, a log-log scatter of the estimated against the true marginal of the played action, clustered along the diagonal, with more scatter at small marginals below about 0.05. Right, a histogram with a logarithmic count axis of the log ratio of estimated to true importance weights, sharply peaked at zero with thin tails on both sides.
# :name: fig-01-marginal
#
# **The previous epoch's contexts estimate the marginal well where it is large, and
# $\gamma$ caps the damage where it is small.** Left: estimate against truth at every update
# (a random subset). Right: how far the importance weight $1/(\hat f+\gamma)$ is from the
# one that knows $\nu$.
# ```

# %% [markdown]
# Over {glue:text}`n_updates` updates the estimate is off by {glue:text}`bias_pct:.2f`% on
# average, and 98% of the importance weights lie within a factor
# [{glue:text}`weight_q01:.2f`, {glue:text}`weight_q99:.2f`] of the oracle's. Without the
# weak dependence between epochs $\hat f$ would be exactly unbiased given the policy; the
# check asks that what the dependence leaves is small.

# %% tags=["nbval-check-output"]
book.claim(
    "plug-in-unbiased", float(relative_bias), interval=bias_ci,
    note="interval: $\\pm 2$ standard errors over runs",
)

# %% [markdown]
# ## Exercises
#
# ```{exercise} Why one importance weight for all contexts helps
# :label: ex-01-variance
#
# **Level:** easy · **Time:** about 10 minutes.
#
# Take $\nu$ uniform on $C$ contexts, $\pi(\cdot\mid c)$ uniform on $K$ actions and all
# losses equal to 1. Compare, for one context $c$ and action $a$, the variance of two
# unbiased estimates of $\ell_t(c,a)$: per context,
# $X=\mathbb 1[c_t=c,A_t=a]/(\nu(c)\pi(a\mid c))$, and with cross-learning,
# $Y=\mathbb 1[A_t=a]/f(a)$. Derive both, then check them by simulation for $C=50$, $K=10$.
# ```
#
# ```{solution-start} ex-01-variance
# :class: dropdown
# ```
#
# $X$ takes the value $CK$ with probability $1/(CK)$, so $\operatorname{Var}X=CK-1$; $Y$
# takes the value $K$ with probability $1/K$ (here $f(a)=1/K$), so
# $\operatorname{Var}Y=K-1$. Cross-learning divides the variance by about $C$: that is
# where the $\sqrt C$ of per-context EXP3 goes.

# %%
C_ex, K_ex = 50, 10
ex_rng = run.rng("variance-exercise")
contexts = ex_rng.integers(0, C_ex, size.draws_ex)
actions = ex_rng.integers(0, K_ex, size.draws_ex)
X = ((contexts == 0) & (actions == 0)) * C_ex * K_ex
Y = (actions == 0) * K_ex
print(f"per context:     mean {X.mean():6.3f}, variance {X.var():7.1f} "
      f"(theory {C_ex * K_ex - 1})")
print(f"cross-learning:  mean {Y.mean():6.3f}, variance {Y.var():7.1f} "
      f"(theory {K_ex - 1})")
book.glue(ex_var_ratio=X.var() / Y.var())


# %% [markdown]
# The simulated variances differ by a factor {glue:text}`ex_var_ratio:.0f`, close to
# $(CK-1)/(K-1)$.
#
# ```{solution-end}
# ```
#
# ```{exercise} Another reading: the running plug-in
# :label: ex-01-running-plugin
#
# **Level:** hard · **Time:** about 40 minutes.
#
# The simplest reading of "estimate the context distribution" forgets about epochs and
# pairs: estimate $f_t(a)=\sum_c\hat\nu_t(c)\pi_t(a\mid c)$ with $\hat\nu_t$ the histogram of
# **all** contexts seen so far, the current one included, and learn in every round.
# Implement it as a learner (hint: subclass `cl.SchneiderZimmert` with `paired=False`, count
# contexts in `policy`, override `marginal_estimate`), and compare its mean and 99th
# percentile of regret with the reconstruction and the oracle on
# `cl.rare_context_adversary(10, 10, T)`. Does the correlation that the epochs avoid show up?
# ```
#
# ```{solution-start} ex-01-running-plugin
# :class: dropdown
# ```
#
# The running histogram includes the current context, which is correlated with the played
# action; with thousands of contexts stored that correlation is of order $1/t$, and the
# histogram is far more precise than one epoch's sample. On this instance it does not hurt:
# the epochs are a device of the proof, which needs independence to apply martingale
# inequalities, not a visible need of the learner.

# %%
class RunningPlugIn(cl.SchneiderZimmert):
    r"""$\hat f_t(a)=\sum_c\hat\nu_t(c)\pi_t(a\mid c)$ over all contexts seen so far."""

    def __init__(self, **options):
        super().__init__(paired=False, **options)

    def reset(self, problem, n_seeds, horizon, rng):
        super().reset(problem, n_seeds, horizon, rng)
        self.seen = np.zeros((n_seeds, problem.n_contexts))

    def policy(self, contexts):
        self.seen[self.rows, contexts] += 1
        return super().policy(contexts)

    def marginal_estimate(self, actions):
        w, prob = self.weights.column(actions)
        nu_hat = self.seen / self.seen.sum(axis=1, keepdims=True)
        return np.einsum("sc,sc->s", prob, nu_hat), w


T_ex = size.horizon_ex
env_ex = cl.rare_context_adversary(10, 10, T_ex, seed=run.seed_of("exercise-adversary"))
race = cl.simulate(env_ex, {"running plug-in": RunningPlugIn(),
                            "reconstruction": cl.SchneiderZimmert(),
                            "oracle": cl.BalseiroOracle(env_ex.context_probs)},
                   T_ex, n_seeds=size.seeds_ex, seed=run.seed_of("exercise-runs"),
                   n_checkpoints=1)
print(f"{'':16s}{'mean':>7s}{'q99':>7s}   (regret / sqrt(K T), {size.seeds_ex} runs)")
race_means = {}
for name, r in race.fixed_regret.items():
    x = r[:, -1] / np.sqrt(10 * T_ex)
    race_means[name] = x.mean()
    print(f"{name:16s}{x.mean():7.2f}{np.quantile(x, 0.99):7.2f}")
book.glue(ex_plugin=race_means["running plug-in"], ex_rec=race_means["reconstruction"],
          ex_oracle=race_means["oracle"])

# %% [markdown]
# The running plug-in's mean regret is {glue:text}`ex_plugin:.2f` (in units of
# $\sqrt{KT}$), the reconstruction's {glue:text}`ex_rec:.2f`, the oracle's
# {glue:text}`ex_oracle:.2f`. The reconstruction pays for learning from half of the rounds;
# the running plug-in, which learns from all of them, sits near the oracle.
#
# ```{solution-end}
# ```

# %%
book.finish()
