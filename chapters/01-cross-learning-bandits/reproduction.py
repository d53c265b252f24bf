# %% [markdown]
# # Reproduction: regret against the number of contexts, and its tails
#
# Huang and Huang {cite}`huang2025highprob` prove that the algorithm of Schneider and Zimmert
# {cite}`schneider2023optimal` for cross-learning with an unknown context distribution has
# small regret not only on average but with high probability:
#
# > In this paper, we present a novel, in-depth analysis of their algorithm and demonstrate
# > that it actually achieves near-optimal regret with high probability. (Huang & Huang,
# > 2025, abstract)
#
# The paper has no experiments; this page measures what its theorem is about. The learner is
# **an S&Z-style reconstruction**, built in [the method](method.ipynb): the text of the
# original Algorithm 1 is not public, so what is checked here is whether the paper's claims
# hold for a faithful reading of its one-sentence description, not for the authors' code.

# %% [markdown]
# Every learner meets the same contexts and losses in each run (common random numbers);
# regrets are divided by $\sqrt{KT}$, the scale of the optimal rate. The thresholds of the
# claims come from the paper's statements and are declared in the chapter's `claims.toml`
# (the one restated after a first measurement, the coin check's, says so there); every
# Monte-Carlo measurement carries a 95% bootstrap interval over the independent runs, and
# the ledger's verdict pools it over seeds.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import numpy as np
from scipy.stats import norm

from icml25 import book
from icml25 import cross_learning as cl

from _chapter import COLOURS

SIZES = {
    "quick": dict(n_bids=10, contexts=(10, 50), horizon_c=200, seeds_c=4,
                  horizons=(100, 400), seeds_tail=20, horizon_v=200, seeds_v=4,
                  horizon_ex=200, seeds_ex=3, boot=30),
    "book": dict(n_bids=10, contexts=(10, 100, 1000), horizon_c=2000, seeds_c=20,
                 horizons=(500, 2000), seeds_tail=200, horizon_v=2000, seeds_v=20,
                 horizon_ex=2000, seeds_ex=16, boot=1000),
    "paper": dict(n_bids=10, contexts=(10, 30, 100, 300, 1000), horizon_c=20000,
                  seeds_c=100, horizons=(2500, 10000, 40000), seeds_tail=1000,
                  horizon_v=20000, seeds_v=100, horizon_ex=20000, seeds_ex=100,
                  boot=2000),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
K = size.n_bids
boot_rng = run.rng("bootstrap")


def learners(env, names):
    """Fresh learners by name; the oracle is handed the true context distribution."""
    make = {
        "reconstruction": lambda: cl.SchneiderZimmert(),
        "no coin": lambda: cl.SchneiderZimmert(coin=False),
        "unpaired": lambda: cl.SchneiderZimmert(paired=False),
        "frozen": lambda: cl.SchneiderZimmert(paired=False, frozen=True),
        "oracle": lambda: cl.BalseiroOracle(env.context_probs),
        "per-context": lambda: cl.PerContextExp3(),
        "blind": lambda: cl.ContextBlindExp3(),
    }
    return {name: make[name]() for name in names}


def bootstrap(statistic, *samples, n=None):
    """95% percentile interval of ``statistic(*samples)`` over resampled runs.

    Samples of the same length are resampled together (paired: the same runs)."""
    n = n or size.boot
    draws = []
    for _ in range(n):
        picks = {}
        resampled = []
        for x in samples:
            idx = picks.setdefault(len(x), boot_rng.integers(0, len(x), len(x)))
            resampled.append(x[idx])
        draws.append(statistic(*resampled))
    return tuple(np.quantile(draws, [0.025, 0.975]))


# %% [markdown]
# ## 1. Regret against the number of contexts
#
# A first-price auction ({numref}`fig-01-auction` of the method): the context is the private
# value, one of $C$ levels drawn from a bump centred at 0.6; the action is one of
# $K=$ {glue:text}`K` bids; the oblivious adversary draws the highest competing bid from an
# interval that moves in four phases. For $C\in\{$ {glue:text}`contexts` $\}$ every learner
# plays $T=$ {glue:text}`horizon_c` rounds in {glue:text}`seeds_c` runs:
#
# - the **reconstruction** (paired rounds, fair coin, previous epoch's contexts);
# - the **oracle** of Balseiro et al. {cite}`balseiro2019contextual`, given the true $\nu$;
# - **per-context EXP3**, one EXP3-IX {cite}`neu2015explore` per context, no cross-learning;
# - **context-blind EXP3**, one EXP3-IX for all contexts.
#
# Regret is measured against $\pi^\star$, the best fixed policy for the $\nu$-averaged losses.
# The best policy *in hindsight* on the realised contexts also fits the noise of which
# contexts happened to come, a term that grows with $C$ for every learner; both are shown.

# %%
results_c = {}
for C in size.contexts:
    env = cl.FirstPriceAuction(C, K, adversary="phases")
    results_c[C] = cl.simulate(
        env, learners(env, ["reconstruction", "oracle", "per-context", "blind"]),
        size.horizon_c, n_seeds=size.seeds_c, seed=run.seed_of(f"contexts-runs-C{C}"),
        n_checkpoints=40)
scale_c = np.sqrt(K * size.horizon_c)
fixed_c = {name: np.array([results_c[C].fixed_regret[name][:, -1] / scale_c
                           for C in size.contexts])
           for name in results_c[size.contexts[0]].fixed_regret}  # (n_C, S)
hind_c = {name: np.array([results_c[C].regret[name][:, -1] / scale_c
                          for C in size.contexts]) for name in fixed_c}
book.glue(K=K, contexts=", ".join(str(c) for c in size.contexts),
          horizon_c=size.horizon_c, seeds_c=size.seeds_c, c_min=size.contexts[0],
          c_max=size.contexts[-1],
          rounds_per_context=size.horizon_c / size.contexts[-1])
for name, key in (("reconstruction", "rec"), ("oracle", "or"), ("per-context", "pc"),
                  ("blind", "bl")):
    book.glue(f"{key}_cmin", fixed_c[name][0].mean())
    book.glue(f"{key}_cmax", fixed_c[name][-1].mean())
    book.glue(f"{key}_hind_cmax", hind_c[name][-1].mean())

# %% tags=["remove-output"]
fig, axes = book.figure(2, height=3.1)
ax = axes[0]
for name, values in fixed_c.items():
    mean = values.mean(1)
    err = 2 * values.std(1, ddof=1) / np.sqrt(values.shape[1])
    ax.errorbar(size.contexts, mean, yerr=err, marker="o", ms=4, capsize=2,
                color=COLOURS[name], label=name)
    ax.plot(size.contexts, hind_c[name].mean(1), ls=":", color=COLOURS[name], lw=1)
ax.set_xscale("log")
ax.set_xlabel("number of contexts $C$")
ax.set_ylabel(r"regret / $\sqrt{KT}$")
ax.set_title(f"T = {size.horizon_c}: against $\\pi^\\star$ (solid), hindsight (dotted)",
             fontsize=9)
ax = axes[1]
middle = results_c[size.contexts[len(size.contexts) // 2]]
for name in fixed_c:
    curve = middle.fixed_regret[name]
    ax.plot(middle.rounds, curve.mean(0), color=COLOURS[name], label=name)
    ax.fill_between(middle.rounds, *np.quantile(curve, [0.05, 0.95], axis=0),
                    color=COLOURS[name], alpha=0.15, lw=0)
ax.set_xlabel("round $t$")
ax.set_ylabel("regret against $\\pi^\\star$")
ax.set_title(f"C = {size.contexts[len(size.contexts) // 2]}: mean and 5-95% band",
             fontsize=9)
ax.legend(loc="upper left", fontsize=8)
book.show_figure(fig, "fig_contexts")


# %% [markdown]
# ```{glue:figure} fig_contexts
# :alt: Left, regret divided by the square root of K T against the number of contexts on a log axis, for four learners. The reconstruction and the oracle stay flat and lowest, the context-blind learner is flat and a little higher, per-context EXP3 is highest and rises from 10 to 100 contexts, then flattens. Dotted lines, the regret against the hindsight policy, lie slightly above and rise at 1000 contexts. Right, regret against the round for the middle number of contexts: per-context EXP3 grows fastest, the reconstruction and the oracle slowest, with narrow bands.
# :name: fig-01-contexts
#
# **Cross-learning makes the regret independent of the number of contexts; learning each
# context separately does not.** Left: final regret against $\pi^\star$ (solid, $\pm2$
# standard errors) and against the best policy in hindsight (dotted). Right: regret curves
# at the middle $C$, mean and 5–95% band over runs.
# ```

# %% [markdown]
# From $C=$ {glue:text}`c_min` to {glue:text}`c_max` contexts the reconstruction's regret
# against $\pi^\star$ goes from {glue:text}`rec_cmin:.2f` to {glue:text}`rec_cmax:.2f`
# (in units of $\sqrt{KT}$), the oracle's from {glue:text}`or_cmin:.2f` to
# {glue:text}`or_cmax:.2f`, per-context EXP3's from {glue:text}`pc_cmin:.2f` to
# {glue:text}`pc_cmax:.2f`. The context-blind learner stays near {glue:text}`bl_cmax:.2f`:
# here the best bid moves smoothly with the value and the bump is narrow, so one bid for all
# values is not far from the best policy; it cannot do better than the best single action.
# Against the hindsight comparator at {glue:text}`c_max` contexts the reconstruction's
# regret is {glue:text}`rec_hind_cmax:.2f`: with {glue:text}`rounds_per_context:.0f` rounds
# per context on average, the realised contexts' noise is part of that comparator.
#
# The first claim asks that the reconstruction's regret grow by at most 25% over the range
# of $C$ (the theorem has no $C$ at all); the second that per-context EXP3's grow by at
# least 25% (its bound grows like $\sqrt C$), so that the flat curve is not an artefact of
# an easy instance.

# %% tags=["nbval-check-output"]
def growth(name):
    low, high = fixed_c[name][0], fixed_c[name][-1]
    ratio = float(high.mean() / low.mean())
    interval = bootstrap(lambda a, b: b.mean() / a.mean(), low, high)
    return ratio, interval


rec_growth, rec_growth_ci = growth("reconstruction")
pc_growth, pc_growth_ci = growth("per-context")
book.claim(
    "flat-in-contexts", rec_growth, interval=rec_growth_ci,
    note="ratio of mean regrets; interval: 95% bootstrap over runs",
)
book.claim(
    "per-context-grows", pc_growth, interval=pc_growth_ci,
    note="ratio of mean regrets; interval: 95% bootstrap over runs",
)

# %% [markdown]
# Per-context EXP3 grows far less than the $\sqrt C$ of its bound over this range, and its
# curve flattens at the largest $C$: with {glue:text}`rounds_per_context:.0f` rounds per
# context it can hardly learn at all, and a learner that does not learn has bounded regret
# per round whatever $C$ is. The $\sqrt C$ growth of the bound shows only for $T\gg CK$.
#
# ## 2. The distribution of regret: tails and confidence
#
# The paper's point is the *high-probability* bound: with probability at least $1-\delta$,
# $R_T=\tilde O(\sqrt{KT\log(1/\delta)})$. The empirical counterpart is the $(1-\delta)$
# quantile of $R_T$ over many independent runs. Two adversaries, $C=10$ contexts:
#
# - **benign**: the auction of section 1;
# - **rare contexts** (`cl.rare_context_adversary`): two contexts with total probability
#   5% need an action that the common contexts never want, and the adversary changes which
#   action in four phases. The marginal of that action is about 0.05, and a short epoch holds
#   only a handful of rare contexts, sometimes none: the estimated $\hat f$ is noisiest
#   exactly where the losses matter.
#
# Each learner plays $T\in\{$ {glue:text}`horizons` $\}$ rounds in {glue:text}`seeds_tail`
# runs (the learning rate tuned for each $T$).

# %%
envs_tail = {
    "benign": lambda T: cl.FirstPriceAuction(10, K, adversary="phases"),
    "rare contexts": lambda T: cl.rare_context_adversary(
        10, K, T, seed=run.seed_of("tail-rare-adversary")),
}
tail = {}  # (adversary, T) -> {learner: final regret / sqrt(K T), shape (S,)}
for adversary, make_env in envs_tail.items():
    for T in size.horizons:
        env = make_env(T)
        res = cl.simulate(env, learners(env, ["reconstruction", "oracle"]), T,
                          n_seeds=size.seeds_tail, seed=run.seed_of(f"tail-runs-T{T}"),
                          n_checkpoints=1)
        tail[adversary, T] = {n: r[:, -1] / np.sqrt(K * T)
                              for n, r in res.fixed_regret.items()}
T_max = size.horizons[-1]
deltas = np.array([0.5, 0.2, 0.1, 0.05, 0.02, 0.01])
book.glue(horizons=", ".join(str(T) for T in size.horizons), seeds_tail=size.seeds_tail,
          T_max=T_max)

# %% tags=["remove-output"]
fig, axes = book.figure(2, height=3.1)
markers = {"benign": "o", "rare contexts": "s"}
ax = axes[0]
for adversary in envs_tail:
    for name in ("reconstruction", "oracle"):
        values = np.array([tail[adversary, T][name] for T in size.horizons])
        regret = values * np.sqrt(K * np.array(size.horizons))[:, None]
        ax.plot(size.horizons, regret.mean(1), marker=markers[adversary], ms=4,
                color=COLOURS[name], label=f"{name}, {adversary}")
        ax.plot(size.horizons, np.quantile(regret, 0.99, axis=1), ls="--",
                marker=markers[adversary], ms=3, color=COLOURS[name], lw=1)
T_line = np.array(size.horizons, dtype=float)
ax.plot(T_line, np.sqrt(K * T_line), color="0.5", lw=1, label=r"$\sqrt{KT}$")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("horizon $T$")
ax.set_ylabel("regret")
ax.set_title("mean (solid) and 99th percentile (dashed)", fontsize=9)
ax.legend(loc="lower right", fontsize=7)
ax = axes[1]
for adversary in envs_tail:
    for name in ("reconstruction", "oracle"):
        x = tail[adversary, T_max][name]
        q = np.quantile(x, 1 - deltas)
        ax.plot(np.log(1 / deltas), q, marker=markers[adversary], ms=4,
                color=COLOURS[name])
        if name == "reconstruction":
            shape = q[0] * np.sqrt(np.log(1 / deltas) / np.log(2))
            ax.plot(np.log(1 / deltas), shape, ls=":", color=COLOURS[name], lw=1,
                    label=r"$\propto\sqrt{\log(1/\delta)}$" if adversary == "benign"
                    else None)
ax.set_xlabel(r"$\log(1/\delta)$")
ax.set_ylabel(r"$(1-\delta)$-quantile of regret / $\sqrt{KT}$")
ax.set_title(f"T = {T_max}", fontsize=9)
ax.legend(loc="upper left", fontsize=8)
book.show_figure(fig, "fig_tails")


# %% [markdown]
# ```{glue:figure} fig_tails
# :alt: Left, log-log plot of regret against the horizon for the reconstruction and the oracle on two adversaries; the 99th percentiles lie above the means by up to a factor of about two, near the grey square-root-of-K-T line; on the rare-context adversary the mean grows slowly. Right, quantiles of regret over the square root of K T against log of one over delta: the measured quantiles rise steadily but stay below the dotted curves proportional to the square root of log one over delta, matched at delta one half.
# :name: fig-01-tails
#
# **The regret's upper quantiles grow with $\log(1/\delta)$ more slowly than the bound's
# $\sqrt{\log(1/\delta)}$ shape, for the reconstruction and the oracle alike.** Left: mean
# (solid) and 99th percentile (dashed) of the regret against $T$ on both adversaries. Right:
# the $(1-\delta)$-quantiles at the largest $T$, beside the bound's shape
# $\sqrt{\log(1/\delta)}$ matched at $\delta=1/2$ (dotted).
# ```

# %%
def tail_stats(x):
    q50, q90, q99 = np.quantile(x, [0.5, 0.9, 0.99])
    return x.mean(), q99, q99 / x.mean(), (q99 - q50) / (q90 - q50)


rows = []
for (adversary, T), by_learner in tail.items():
    for name, x in by_learner.items():
        mean, q99, spread, shape = tail_stats(x)
        z_max = (x.max() - mean) / x.std(ddof=1)
        rows.append((adversary, T, name, mean, q99, spread, shape, z_max))
# the median of the largest of n standard normal draws, for comparison
book.glue(z_typical=float(norm.ppf(0.5 ** (1 / size.seeds_tail))))
print(f"{'adversary':14s}{'T':>6s}  {'learner':15s}{'mean':>7s}{'q99':>7s}"
      f"{'q99/mean':>10s}{'tail shape':>12s}{'max z':>7s}")
for adversary, T, name, mean, q99, spread, shape, z_max in rows:
    print(f"{adversary:14s}{T:6d}  {name:15s}{mean:7.2f}{q99:7.2f}{spread:10.2f}"
          f"{shape:12.2f}{z_max:7.1f}")


# %% [markdown]
# The table gives, in units of $\sqrt{KT}$, the mean and the 99th percentile, their ratio,
# the *tail shape* $(q_{99}-q_{50})/(q_{90}-q_{50})$ (1.82 for a Gaussian, 2.43 for a
# Laplace law, larger for heavier tails) and the largest run in standard deviations above
# the mean (for {glue:text}`seeds_tail` Gaussian draws, the median of that largest value
# is {glue:text}`z_typical:.1f`).
#
# Three claims, with thresholds fixed before the run. **Concentration:** the 99th percentile
# is at most 1.5 times the mean on both adversaries, i.e. a $\delta=0.01$ guarantee costs at
# most a constant over the expected one. **Light tail:** the tail shape is at most 2.43, no
# heavier than exponential. **Rate:** the log-log slope of the mean regret between the
# smallest and largest $T$ is at most 0.75 ($\sqrt T$ with its logarithms is 0.5 only
# asymptotically; a slope near 1 would be linear regret).

# %% tags=["nbval-check-output"]
def worst(statistic):
    """The largest value of ``statistic`` over both adversaries, with its interval."""
    values = {a: statistic(tail[a, T_max]["reconstruction"]) for a in envs_tail}
    adversary = max(values, key=values.get)
    x = tail[adversary, T_max]["reconstruction"]
    return float(values[adversary]), bootstrap(statistic, x), adversary


spread, spread_ci, spread_at = worst(lambda x: np.quantile(x, 0.99) / x.mean())
oracle_at = tail[spread_at, T_max]["oracle"]
shape, shape_ci, shape_at = worst(lambda x: tail_stats(x)[3])
T_lo = size.horizons[0]


def slope(a, b):
    return np.log(b.mean() * np.sqrt(T_max) / (a.mean() * np.sqrt(T_lo))) / np.log(
        T_max / T_lo)


slopes = {a: float(slope(tail[a, T_lo]["reconstruction"],
                         tail[a, T_max]["reconstruction"])) for a in envs_tail}
slope_at = max(slopes, key=slopes.get)
oracle_slope = float(slope(tail[slope_at, T_lo]["oracle"],
                           tail[slope_at, T_max]["oracle"]))
book.glue("spread", spread)
book.glue("spread_at", spread_at)
book.glue("oracle_spread", float(np.quantile(oracle_at, 0.99) / oracle_at.mean()))
book.glue("shape", shape)
book.glue("slope", slopes[slope_at])
book.glue("slope_at", slope_at)
book.glue("oracle_slope", oracle_slope)
slope_ci = bootstrap(slope, tail[slope_at, T_lo]["reconstruction"],
                     tail[slope_at, T_max]["reconstruction"])
book.claim(
    "concentration", spread, interval=spread_ci,
    note=f"worst adversary: {spread_at}; the oracle, which knows $\\nu$, has "
    f"{np.quantile(oracle_at, 0.99) / oracle_at.mean():.2f} on the same runs: the "
    "spread comes from the contexts and the draws, not from the estimate; interval: "
    "95% bootstrap",
)
book.claim(
    "light-tail", shape, interval=shape_ci,
    note=f"worst adversary: {shape_at}; interval: 95% bootstrap over runs",
)
book.claim(
    "rate", slopes[slope_at], interval=slope_ci,
    note=f"worst adversary: {slope_at}; the oracle's slope there: {oracle_slope:.2f}; "
    "interval: 95% bootstrap over runs",
)

# %% [markdown]
# On the {glue:text}`spread_at` adversary the 99th percentile is {glue:text}`spread:.2f`
# times the mean, and the oracle, which knows $\nu$, has {glue:text}`oracle_spread:.2f` on
# the same runs. The ratio is large because the mean is small, not because the tail is
# heavy: the regret against a fixed policy contains a term of order $\sqrt T$ that depends
# only on which contexts came and on the learner's draws, and on that adversary a learner
# that has found the rare contexts' action has little regret left beside it. The tail
# shape, which does not depend on the mean, is {glue:text}`shape:.2f` at worst, lighter
# than exponential. The mean regret grows with slope {glue:text}`slope:.2f` on the
# {glue:text}`slope_at` adversary, the oracle's with {glue:text}`oracle_slope:.2f`: at these
# horizons both are still in their transient, where a $\sqrt T$ rate is not yet visible.
# The light-tail measurement moves from seed to seed: with {glue:text}`seeds_tail` runs, a
# 99th percentile rests on two values; the ledger's verdict pools the seeds.
#
# What these runs cannot show: a quantile at $\delta=0.01$ from {glue:text}`seeds_tail`
# runs rests on the two largest values, so the tail claims speak for $\delta$ down to about
# $0.01$ only; the theorem is about every $\delta$ and about the worst oblivious adversary,
# and two adversaries are not all of them. A slope measured over a factor of four in $T$
# cannot separate $\sqrt T$ from $\sqrt T\log T$. The runs show the *shape* the paper
# predicts, not its constants.
#
# ## 3. The cost of not knowing the distribution, and the readings of the algorithm
#
# How much does estimating $\nu$ cost? The next claim compares the reconstruction with the
# oracle in every cell above: both adversaries, both horizons, every $C$. Near-optimal means
# the same rate; the threshold allows a constant factor of 1.5, since half of the rounds
# only estimate (their feedback is thrown away, and the learning round counts double).

# %% tags=["nbval-check-output"]
cells = {f"auction, C = {C}": (fixed_c["reconstruction"][i], fixed_c["oracle"][i])
         for i, C in enumerate(size.contexts)}
cells.update({f"{a}, T = {T}": (tail[a, T]["reconstruction"], tail[a, T]["oracle"])
              for a, T in tail})
ratios = {cell: float(rec.mean() / orc.mean()) for cell, (rec, orc) in cells.items()}
worst_cell = max(ratios, key=ratios.get)
book.glue("nu_ratio", ratios[worst_cell])
book.glue("nu_worst", worst_cell)
ratio_ci = bootstrap(lambda a, b: a.mean() / b.mean(), *cells[worst_cell])
book.claim(
    "unknown-nu-cost", ratios[worst_cell], interval=ratio_ci,
    note=f"worst cell: {worst_cell}; the ratio ranges over "
    f"[{min(ratios.values()):.2f}, {max(ratios.values()):.2f}]; interval: 95% "
    "bootstrap",
)

# %% [markdown]
# The largest ratio, {glue:text}`nu_ratio:.2f`, is in the cell {glue:text}`nu_worst`, where
# the oracle's own regret is smallest: learning from half of the rounds costs most where
# there is least regret to begin with. The largest ratio moves from seed to seed and lies
# close to 1.5, so this run's verdict says little alone; the ledger's verdict pools the
# seeds.
#
# The reading of the algorithm matters too. Four versions of the epoch estimator, all in
# `cl.SchneiderZimmert`, with the oracle as reference, on the rare-context adversary and on
# an adversary aimed at the pairing (`cl.estimation_round_adversary`): it puts a loss of 1 on
# action 0 in the *second* round of every pair and $\tfrac12$ on action 1 in the first, so
# that action 1 is best but looks worse from the first rounds alone.
#
# - **reconstruction**: pairs, a fair coin picks the learning round;
# - **no coin**: pairs, the first round always learns;
# - **unpaired**: every round learns and every context is stored (the plug-in over the
#   previous epoch with no estimation rounds);
# - **frozen**: unpaired, and the policy is frozen within each epoch.
#
# {glue:text}`seeds_v` runs of $T=$ {glue:text}`horizon_v` rounds, $C=10$.

# %%
variant_names = ["reconstruction", "no coin", "unpaired", "frozen", "oracle"]
envs_v = {
    "rare contexts": cl.rare_context_adversary(
        10, K, size.horizon_v, seed=run.seed_of("variant-rare-adversary")),
    "estimation rounds": cl.estimation_round_adversary(10, K, size.horizon_v),
}
variants = {}
for adversary, env in envs_v.items():
    res = cl.simulate(env, learners(env, variant_names), size.horizon_v,
                      n_seeds=size.seeds_v, seed=run.seed_of("variant-runs"),
                      n_checkpoints=2)
    variants[adversary] = {n: r[:, -1] / np.sqrt(K * size.horizon_v)
                           for n, r in res.fixed_regret.items()}
    if adversary == "estimation rounds":
        second_half = {n: (r[:, -1] - r[:, 0]) / (size.horizon_v - res.rounds[0])
                       for n, r in res.fixed_regret.items()}
book.glue(seeds_v=size.seeds_v, horizon_v=size.horizon_v,
          no_coin_half=second_half["no coin"].mean(),
          coin_half=second_half["reconstruction"].mean(),
          oracle_half=second_half["oracle"].mean())
for name, key in (("reconstruction", "rec"), ("unpaired", "unp"), ("frozen", "frz"),
                  ("oracle", "or")):
    book.glue(f"v_{key}_rare", variants["rare contexts"][name].mean())
    book.glue(f"v_{key}_est", variants["estimation rounds"][name].mean())

# %% tags=["remove-output"]
fig, ax = book.figure(height=2.9)
width = 0.8 / len(variant_names)
for i, name in enumerate(variant_names):
    means = [variants[a][name].mean() for a in envs_v]
    errs = [2 * variants[a][name].std(ddof=1) / np.sqrt(size.seeds_v) for a in envs_v]
    ax.bar(np.arange(len(envs_v)) + (i - 2) * width, means, width, yerr=errs,
           color=COLOURS[name], label=name, capsize=2, ecolor="0.5")
ax.set_xticks(np.arange(len(envs_v)), list(envs_v))
ax.set_ylabel(r"regret / $\sqrt{KT}$")
ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
book.show_figure(fig, "fig_variants")

# %% [markdown]
# ```{glue:figure} fig_variants
# :alt: Grouped bars of regret over the square root of K T for five learners on two adversaries. On the rare-context adversary all versions are close, the oracle lowest. On the estimation-round adversary the version without the coin has a bar several times higher than the others.
# :name: fig-01-variants
#
# **Without the coin, an adversary that knows the schedule makes the regret linear; the
# other readings land together, above the oracle.** Mean final regret against $\pi^\star$
# ($\pm2$ standard errors) of four readings of the epoch estimator and the oracle.
# ```

# %% [markdown]
# Without the coin the learner keeps losing {glue:text}`no_coin_half:.3f` per round more
# than the best policy in the second half of the horizon on the adversary aimed at it: it has
# settled on the wrong action, a linear regret. With the coin the reconstruction loses
# {glue:text}`coin_half:.3f` per round there (the oracle {glue:text}`oracle_half:.3f`); over
# the whole horizon its regret is {glue:text}`v_rec_est:.2f` in units of $\sqrt{KT}$,
# against {glue:text}`v_or_est:.2f` for the oracle: with eight useless actions out of ten,
# exploration is expensive at this $T$ for every learner. The unpaired reading, which has no
# estimation rounds to hide losses on, reaches {glue:text}`v_unp_rare:.2f` and
# {glue:text}`v_unp_est:.2f` on the two adversaries, and freezing the policy gives
# {glue:text}`v_frz_rare:.2f` and {glue:text}`v_frz_est:.2f`. The check below only confirms
# that the counterexample does what it was built to do: it shows why the coin is there, it
# is not a claim of the paper.

# %% tags=["nbval-check-output"]
half_ratio = float(second_half["no coin"].mean() / second_half["reconstruction"].mean())
book.claim(
    "coin-matters", half_ratio,
    interval=bootstrap(lambda a, b: a.mean() / b.mean(), second_half["no coin"],
                       second_half["reconstruction"]),
    note=f"regret per round in the second half: {second_half['no coin'].mean():.3f} "
    f"without the coin, {second_half['reconstruction'].mean():.3f} with it; "
    "interval: 95% bootstrap over runs",
)

# %% [markdown]
# ## What differs from the paper
#
# - **The algorithm is a reconstruction.** Schneider and Zimmert's Algorithm 1 is described
#   here from its one-sentence summary (two rounds per exponential-weights step, one of them
#   to estimate the context distribution) and from the structure of Huang and Huang's
#   analysis (epochs, weak dependence between them); the fair coin, the uniform first epoch,
#   the plug-in estimate $1/(\hat f+\gamma)$ and every constant ($\eta=\sqrt{2\ln K/(KT)}$,
#   $\gamma=\eta/2$, epochs of $2\lceil\sqrt T\,\rceil$ rounds) are this chapter's choices,
#   not checked against the paper's full text. No code of either paper is public.
# - **No experiments to match.** The paper is a theorem; the instances are ours: a
#   first-price auction (one of the two applications the abstract names) and two adversaries
#   built to stress the estimator and the pairing.
# - **No peer library.** No package implements cross-learning bandits; the peers are the
#   paper's own baselines (the known-$\nu$ oracle, per-context and context-blind EXP3),
#   measured in the same runs.
# - **Scale.** $T$ up to {glue:text}`T_max` and $C$ up to {glue:text}`c_max`; the paper's
#   statements are asymptotic. The `paper` mode runs larger grids.
#
# ## Exercise
#
# ```{exercise} How long should an epoch be?
# :label: ex-01-epoch-length
#
# **Level:** medium · **Time:** about 20 minutes.
#
# The epoch length $L$ trades the quality of $\hat f$ (a longer epoch stores more contexts)
# against its staleness (the sample is one epoch old). On the rare-context adversary with
# $T=2000$, run the reconstruction with `epoch_length` $\approx T^{1/4}$, $T^{1/2}$ and
# $T^{3/4}$ (even numbers), 16 runs each, and compare the mean regret and its 99th
# percentile. Which way does each extreme fail?
# ```
#
# ```{solution-start} ex-01-epoch-length
# :class: dropdown
# ```
#
# Short epochs hold a handful of contexts: the rare ones are often absent, and $\hat f$ of
# the rare contexts' action falls towards 0, where $\gamma$ caps the importance weight.
# Long epochs are few, and the first one, played uniformly while its contexts are collected,
# costs a constant share of the horizon.

# %%
T_ex = size.horizon_ex
env_ex = cl.rare_context_adversary(10, K, T_ex, seed=run.seed_of("exercise-adversary"))
lengths = [2 * max(1, round(T_ex ** p / 2)) for p in (0.25, 0.5, 0.75)]
ex_runs = {f"L = {L}": cl.SchneiderZimmert(epoch_length=L) for L in lengths}
ex = cl.simulate(env_ex, ex_runs, T_ex, n_seeds=size.seeds_ex,
                 seed=run.seed_of("exercise-runs"), n_checkpoints=1)
print(f"{'':10s}{'mean':>8s}{'q99':>8s}   (regret / sqrt(K T))")
for name, r in ex.fixed_regret.items():
    x = r[:, -1] / np.sqrt(K * T_ex)
    print(f"{name:10s}{x.mean():8.2f}{np.quantile(x, 0.99):8.2f}")
ex_means = {n: r[:, -1].mean() / np.sqrt(K * T_ex) for n, r in ex.fixed_regret.items()}
ex_q99 = {n: np.quantile(r[:, -1], 0.99) / np.sqrt(K * T_ex)
          for n, r in ex.fixed_regret.items()}
names_ex = list(ex_means)
for key, name in zip(("short", "mid", "long"), names_ex):
    book.glue(f"ex_{key}_mean", ex_means[name])
    book.glue(f"ex_{key}_q99", ex_q99[name])
    book.glue(f"ex_{key}_L", name)

# %% [markdown]
# Mean and 99th percentile (in units of $\sqrt{KT}$): {glue:text}`ex_short_L`,
# {glue:text}`ex_short_mean:.2f` and {glue:text}`ex_short_q99:.2f`;
# {glue:text}`ex_mid_L`, {glue:text}`ex_mid_mean:.2f` and {glue:text}`ex_mid_q99:.2f`;
# {glue:text}`ex_long_L`, {glue:text}`ex_long_mean:.2f` and {glue:text}`ex_long_q99:.2f`.
# The long epochs fail clearly, through the uniform first epoch. The short ones fail less
# than the argument suggests: $\gamma$ caps the weights, and a context absent from one epoch
# is back in the next. With a few runs, differences in the 99th percentile are within the
# noise; the default $L=2\lceil\sqrt T\,\rceil$ ($\sqrt T$ epochs of $\sqrt T$ rounds)
# is what the analysis balances, not what this instance tunes.
#
# ```{solution-end}
# ```

# %%
book.finish()
