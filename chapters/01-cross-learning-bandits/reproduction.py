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
# (every claim restated after a first measurement says there what changed and why); every
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
from icml25.common.stats import paired_bootstrap_ci

from _chapter import COLOURS

SIZES = {
    "quick": dict(n_bids=10, contexts=(10, 50), horizon_c=200, seeds_c=4,
                  contexts_long=(5, 10), horizon_long=1000, seeds_long=4,
                  horizons=(100, 400), seeds_tail=20, horizon_v=200, seeds_v=4,
                  horizon_ex=200, seeds_ex=3, boot=30),
    "book": dict(n_bids=10, contexts=(10, 100, 1000), horizon_c=2000, seeds_c=20,
                 contexts_long=(10, 30, 100), horizon_long=20000, seeds_long=40,
                 horizons=(500, 2000), seeds_tail=200, horizon_v=2000, seeds_v=20,
                 horizon_ex=2000, seeds_ex=16, boot=1000),
    "paper": dict(n_bids=10, contexts=(10, 30, 100, 300, 1000), horizon_c=20000,
                  seeds_c=100, contexts_long=(10, 30, 100, 300), horizon_long=60000,
                  seeds_long=100, horizons=(2500, 10000, 40000), seeds_tail=1000,
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


def bootstrap(statistic, *samples):
    """95% percentile interval of ``statistic(*samples)`` over resampled runs;
    samples of the same length are resampled together (paired: the same runs)."""
    return paired_bootstrap_ci(statistic, *samples, n_boot=size.boot, seed=boot_rng)


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

# %% [markdown]
# At $C=$ {glue:text}`c_max` this horizon leaves {glue:text}`rounds_per_context:.0f` rounds
# per context on average: a learner that learns each context apart can hardly start, and a
# learner that does not learn has bounded regret per round whatever $C$ is. The
# $\sqrt{CKT}$ bound of per-context EXP3 describes it only when every context gets many
# rounds per action, $T\gg CK$. A second sweep gives it that room: the same four learners play
# $T=$ {glue:text}`horizon_long` rounds for $C\in\{$ {glue:text}`contexts_long` $\}$, so
# that $T\ge$ {glue:text}`long_factor:.0f`$\,CK$ even at the largest $C$, in
# {glue:text}`seeds_long` runs.

# %%
results_long = {}
for C in size.contexts_long:
    env = cl.FirstPriceAuction(C, K, adversary="phases")
    results_long[C] = cl.simulate(
        env, learners(env, ["reconstruction", "oracle", "per-context", "blind"]),
        size.horizon_long, n_seeds=size.seeds_long, seed=run.seed_of(f"long-runs-C{C}"),
        n_checkpoints=1)
scale_long = np.sqrt(K * size.horizon_long)
fixed_long = {name: np.array([results_long[C].fixed_regret[name][:, -1] / scale_long
                              for C in size.contexts_long])
              for name in fixed_c}  # (n_C, S)
book.glue(contexts_long=", ".join(str(c) for c in size.contexts_long),
          horizon_long=size.horizon_long, seeds_long=size.seeds_long,
          long_factor=size.horizon_long / (size.contexts_long[-1] * K),
          cl_min=size.contexts_long[0], cl_max=size.contexts_long[-1],
          sqrt_growth=np.sqrt(size.contexts_long[-1] / size.contexts_long[0]))
for name, key in (("reconstruction", "rec"), ("oracle", "or"), ("per-context", "pc"),
                  ("blind", "bl")):
    book.glue(f"{key}_long_cmin", fixed_long[name][0].mean())
    book.glue(f"{key}_long_cmax", fixed_long[name][-1].mean())

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
for name, values in fixed_long.items():
    mean = values.mean(1)
    err = 2 * values.std(1, ddof=1) / np.sqrt(values.shape[1])
    ax.errorbar(size.contexts_long, mean, yerr=err, marker="o", ms=4, capsize=2,
                color=COLOURS[name], label=name)
c_line = np.array(size.contexts_long, dtype=float)
ax.plot(c_line, fixed_long["per-context"][0].mean() * np.sqrt(c_line / c_line[0]),
        ls="--", color="0.5", lw=1, label=r"$\propto\sqrt{C}$")
ax.set_xscale("log")
ax.set_xlabel("number of contexts $C$")
ax.set_ylabel(r"regret / $\sqrt{KT}$")
ax.set_title(f"T = {size.horizon_long}: against $\\pi^\\star$", fontsize=9)
ax.legend(loc="upper left", fontsize=8)
book.show_figure(fig, "fig_contexts")


# %% [markdown]
# ```{glue:figure} fig_contexts
# :alt: Two panels of regret divided by the square root of K T against the number of contexts on a log axis, for four learners. Left, a short horizon with up to a thousand contexts: the reconstruction and the oracle stay flat and lowest, the context-blind learner is flat and a little higher, per-context EXP3 is highest and rises only a little; dotted lines, the regret against the hindsight policy, lie slightly above. Right, a horizon ten times longer with up to a hundred contexts: the reconstruction, the oracle and the blind learner stay flat, per-context EXP3 rises steadily, less steeply than a dashed square-root-of-C guide.
# :name: fig-01-contexts
#
# **Cross-learning makes the regret independent of the number of contexts; learning each
# context separately does not, once the horizon lets it learn.** Final regret against
# $\pi^\star$, mean $\pm2$ standard errors. Left: $T=$ {glue:text}`horizon_c`, up to
# {glue:text}`c_max` contexts, with the regret against the best policy in hindsight
# (dotted). Right: $T=$ {glue:text}`horizon_long` $\ge$ {glue:text}`long_factor:.0f`$\,CK$,
# with a $\sqrt C$ guide through per-context EXP3 at the smallest $C$ (dashed).
# ```

# %% [markdown]
# At $T=$ {glue:text}`horizon_c`, from $C=$ {glue:text}`c_min` to {glue:text}`c_max`
# contexts the reconstruction's regret against $\pi^\star$ goes from
# {glue:text}`rec_cmin:.2f` to {glue:text}`rec_cmax:.2f` (in units of $\sqrt{KT}$), the
# oracle's from {glue:text}`or_cmin:.2f` to {glue:text}`or_cmax:.2f`, per-context EXP3's
# from {glue:text}`pc_cmin:.2f` to {glue:text}`pc_cmax:.2f`. The context-blind learner
# stays near {glue:text}`bl_cmax:.2f`: here the best bid moves smoothly with the value and
# the bump is narrow, so one bid for all values is not far from the best policy; it cannot do
# better than the best single action. Against the hindsight comparator at
# {glue:text}`c_max` contexts the reconstruction's regret is
# {glue:text}`rec_hind_cmax:.2f`: with {glue:text}`rounds_per_context:.0f` rounds per
# context on average, the realised contexts' noise is part of that comparator.
#
# At $T=$ {glue:text}`horizon_long`, from $C=$ {glue:text}`cl_min` to {glue:text}`cl_max`,
# per-context EXP3 goes from {glue:text}`pc_long_cmin:.2f` to {glue:text}`pc_long_cmax:.2f`,
# while the reconstruction goes from {glue:text}`rec_long_cmin:.2f` to
# {glue:text}`rec_long_cmax:.2f` and the oracle from {glue:text}`or_long_cmin:.2f` to
# {glue:text}`or_long_cmax:.2f`.
#
# The first claim asks that the reconstruction's regret grow by at most 25% from
# $C=$ {glue:text}`c_min` to {glue:text}`c_max` at $T=$ {glue:text}`horizon_c` (the
# theorem has no $C$ at all); the second that per-context EXP3's grow by at least 25% from
# $C=$ {glue:text}`cl_min` to {glue:text}`cl_max` at $T=$ {glue:text}`horizon_long` (its
# bound grows like $\sqrt C$, a factor {glue:text}`sqrt_growth:.2f` over that range), so
# that the flat curve is not an artefact of an easy instance.

# %% tags=["nbval-check-output"]
def growth(values):
    """Ratio of mean regrets at the largest and the smallest $C$, with its interval."""
    low, high = values[0], values[-1]
    ratio = float(high.mean() / low.mean())
    interval = bootstrap(lambda a, b: b.mean() / a.mean(), low, high)
    return ratio, interval


rec_growth, rec_growth_ci = growth(fixed_c["reconstruction"])
pc_growth, pc_growth_ci = growth(fixed_long["per-context"])
book.glue(pc_growth=pc_growth)
book.claim(
    "flat-in-contexts", rec_growth, interval=rec_growth_ci,
    shown={f"C = {size.contexts[0]}": fixed_c["reconstruction"][0].mean(),
           f"C = {size.contexts[-1]}": fixed_c["reconstruction"][-1].mean()},
    note="ratio of mean regrets; interval: 95% bootstrap over runs",
)
book.claim(
    "per-context-grows", pc_growth, interval=pc_growth_ci,
    shown={f"C = {size.contexts_long[0]}": fixed_long["per-context"][0].mean(),
           f"C = {size.contexts_long[-1]}": fixed_long["per-context"][-1].mean()},
    note=f"ratio of mean regrets at T = {size.horizon_long}; interval: 95% bootstrap "
    "over runs",
)

# %% [markdown]
# Per-context EXP3 grows by a factor {glue:text}`pc_growth:.2f`, less than the
# {glue:text}`sqrt_growth:.2f` of its bound, which is a worst case over adversaries: this
# claim asks for the direction, not the exponent. The direction that the paper's motivation
# rests on is clear once the horizon lets every context be learned: without cross-learning
# the regret grows with the number of contexts, and with it it does not.
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
# The theorem bounds the regret of the learner that does not know $\nu$ by the rate of the
# one that does, $\tilde O(\sqrt{KT\log(1/\delta)})$ with probability $1-\delta$, up to
# constants and logarithms that it does not fix. The size of a quantile or the slope of a
# curve at these horizons is therefore a property of the instance, which the oracle shares;
# what the theorem is about is the reconstruction *beside* the oracle, on the same runs.
# Three claims, with thresholds fixed before the run:
#
# - **Light tail:** the tail shape of the reconstruction's regret is at most 2.43, no
#   heavier than exponential.
# - **High quantile against the oracle:** at $T=$ {glue:text}`T_max` the 99th percentile
#   of the reconstruction's regret is at most 1.5 times the oracle's, on both adversaries:
#   the constant that section 3 allows the mean, since half of the rounds only estimate
#   (learning from half of the rounds costs about $\sqrt2$ in an exponential-weights
#   bound).
# - **Rate against the oracle:** from $T=$ {glue:text}`T_lo` to {glue:text}`T_max` the
#   log-log slope of the reconstruction's 99th percentile exceeds the oracle's by at most
#   $1/6$, on both adversaries. That is the gap between $\sqrt T$ and $T^{2/3}$, the rate of
#   the earlier algorithm of Balseiro et al. {cite}`balseiro2019contextual` for an unknown
#   distribution; a factor $\log T$ adds about $1/\ln T\approx0.14$ to a slope here, so
#   one logarithm fits under it, two do not. The theorem hides logarithms of a power it
#   does not fix, so this claim is marked stricter than the paper.

# %% tags=["nbval-check-output"]
def worst(statistic):
    """The largest ``statistic(reconstruction, oracle)`` over both adversaries at the
    largest $T$, with its interval (both learners resampled together: the same runs)."""
    values = {a: statistic(tail[a, T_max]["reconstruction"], tail[a, T_max]["oracle"])
              for a in envs_tail}
    adversary = max(values, key=values.get)
    pair = (tail[adversary, T_max]["reconstruction"], tail[adversary, T_max]["oracle"])
    return float(values[adversary]), bootstrap(statistic, *pair), adversary


def q99_of(x):
    return np.quantile(x, 0.99)


T_lo = size.horizons[0]
spreads = {(a, n): float(q99_of(tail[a, T_max][n]) / tail[a, T_max][n].mean())
           for a in envs_tail for n in ("reconstruction", "oracle")}
spread_at = max(envs_tail, key=lambda a: spreads[a, "reconstruction"])
shape, shape_ci, shape_at = worst(lambda rec, orc: tail_stats(rec)[3])
q_ratio, q_ratio_ci, q_ratio_at = worst(lambda rec, orc: q99_of(rec) / q99_of(orc))


def slope(statistic, lo, hi):
    """Log-log slope of ``statistic`` of the regret (not divided by $\\sqrt{KT}$)."""
    growth = statistic(hi) * np.sqrt(T_max) / (statistic(lo) * np.sqrt(T_lo))
    return float(np.log(growth) / np.log(T_max / T_lo))


def slope_gap(rec_lo, orc_lo, rec_hi, orc_hi, statistic=q99_of):
    """Slope of the reconstruction minus the oracle's: the ratio's growth exponent."""
    return slope(statistic, rec_lo, rec_hi) - slope(statistic, orc_lo, orc_hi)


def four(a):
    return (tail[a, T_lo]["reconstruction"], tail[a, T_lo]["oracle"],
            tail[a, T_max]["reconstruction"], tail[a, T_max]["oracle"])


gaps = {a: slope_gap(*four(a)) for a in envs_tail}
gap_at = max(gaps, key=gaps.get)
gap_ci = bootstrap(slope_gap, *four(gap_at))
mean_slopes = {(a, n): slope(np.mean, tail[a, T_lo][n], tail[a, T_max][n])
               for a in envs_tail for n in ("reconstruction", "oracle")}
q99_slopes = {(a, n): slope(q99_of, tail[a, T_lo][n], tail[a, T_max][n])
              for a in envs_tail for n in ("reconstruction", "oracle")}
slope_at = max(envs_tail, key=lambda a: mean_slopes[a, "reconstruction"])
book.glue("T_lo", T_lo)
book.glue("spread", spreads[spread_at, "reconstruction"])
book.glue("spread_at", spread_at)
book.glue("oracle_spread", spreads[spread_at, "oracle"])
book.glue("shape", shape)
book.glue("shape_at", shape_at)
book.glue("q_ratio", q_ratio)
book.glue("q_ratio_at", q_ratio_at)
book.glue("gap", gaps[gap_at])
book.glue("gap_at", gap_at)
book.glue("gap_rec", q99_slopes[gap_at, "reconstruction"])
book.glue("gap_oracle", q99_slopes[gap_at, "oracle"])
book.glue("slope", mean_slopes[slope_at, "reconstruction"])
book.glue("slope_at", slope_at)
book.glue("oracle_slope", mean_slopes[slope_at, "oracle"])
book.claim(
    "light-tail", shape, interval=shape_ci,
    note=f"worst adversary: {shape_at}; interval: 95% bootstrap over runs",
)
book.claim(
    "quantile-vs-oracle", q_ratio, interval=q_ratio_ci,
    shown={"reconstruction q99": q99_of(tail[q_ratio_at, T_max]["reconstruction"]),
           "oracle q99": q99_of(tail[q_ratio_at, T_max]["oracle"])},
    note=f"worst adversary: {q_ratio_at}; regrets in units of $\\sqrt{{KT}}$; "
    "interval: 95% bootstrap over runs, the two learners resampled together",
)
book.claim(
    "rate-vs-oracle", gaps[gap_at], interval=gap_ci,
    shown={"reconstruction slope": q99_slopes[gap_at, "reconstruction"],
           "oracle slope": q99_slopes[gap_at, "oracle"],
           "same for the means": mean_slopes[gap_at, "reconstruction"]
           - mean_slopes[gap_at, "oracle"]},
    note=f"worst adversary: {gap_at}; slopes of the 99th percentile from T = {T_lo} to "
    f"{T_max}; interval: 95% bootstrap over runs",
)

# %% [markdown]
# The tail shape is {glue:text}`shape:.2f` at worst (on the {glue:text}`shape_at`
# adversary), lighter than exponential. At $T=$ {glue:text}`T_max` the reconstruction's
# 99th percentile is at most {glue:text}`q_ratio:.2f` times the oracle's (on the
# {glue:text}`q_ratio_at` adversary): not knowing $\nu$ costs a constant factor in the
# high quantile. From $T=$ {glue:text}`T_lo` to {glue:text}`T_max` the slope of the
# reconstruction's 99th percentile exceeds the oracle's by {glue:text}`gap:.2f` at most
# ({glue:text}`gap_rec:.2f` against {glue:text}`gap_oracle:.2f` on the
# {glue:text}`gap_at` adversary): a gap of $1/6$ would be the difference between
# $\sqrt T$ and $T^{2/3}$, a gap of about $0.14$ one factor $\log T$. On the rare-context
# adversary, which is itself drawn anew in every seed, the gap moves a lot from seed to seed;
# over a factor of four in $T$ it cannot tell a slower rate from a transient that an
# unknown $\nu$ lengthens (the first epoch is played uniformly, and every estimate rests on
# the previous epoch's few rare contexts). The ledger pools the seeds.
#
# The absolute figures are the instance's, and the oracle shares them. On the
# {glue:text}`spread_at` adversary the reconstruction's 99th percentile is
# {glue:text}`spread:.2f` times its mean, the oracle's, which knows $\nu$,
# {glue:text}`oracle_spread:.2f` on the same runs. That ratio says more about the mean than
# about the tail: the regret against a fixed policy contains a term of order $\sqrt T$ that
# depends only on which contexts came and on the learner's draws, and where a learner has
# little regret left beside it (on a rare-context adversary whose rare contexts are found
# early), the mean is small and the ratio large, for the oracle as much as for the
# reconstruction. The mean regret grows with slope {glue:text}`slope:.2f` on the
# {glue:text}`slope_at` adversary, the oracle's with {glue:text}`oracle_slope:.2f`: at
# these horizons both are still in their transient, above the $1/2$ of a $\sqrt T$ rate.
# Neither figure is bounded by the theorem, whose constants and logarithms are free, so
# neither is a claim here. The tail measurements move from seed to seed: with
# {glue:text}`seeds_tail` runs, a 99th percentile rests on two values; the ledger's verdict
# pools the seeds.
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
# How much does estimating $\nu$ cost on average? The next claim compares the
# reconstruction's mean regret with the oracle's in every cell above: both sweeps over $C$,
# both adversaries at both horizons. Near-optimal means the same rate; the threshold allows
# a constant factor of 1.5, since half of the rounds only estimate (their feedback is thrown
# away, and the learning round counts double).

# %% tags=["nbval-check-output"]
cells = {f"auction, C = {C}": (fixed_c["reconstruction"][i], fixed_c["oracle"][i])
         for i, C in enumerate(size.contexts)}
cells.update({f"auction, C = {C}, T = {size.horizon_long}":
              (fixed_long["reconstruction"][i], fixed_long["oracle"][i])
              for i, C in enumerate(size.contexts_long)})
cells.update({f"{a}, T = {T}": (tail[a, T]["reconstruction"], tail[a, T]["oracle"])
              for a, T in tail})
ratios = {cell: float(rec.mean() / orc.mean()) for cell, (rec, orc) in cells.items()}
worst_cell = max(ratios, key=ratios.get)
book.glue("nu_ratio", ratios[worst_cell])
book.glue("nu_worst", worst_cell)
book.glue("nu_cells", len(cells))
ratio_ci = bootstrap(lambda a, b: a.mean() / b.mean(), *cells[worst_cell])
book.claim(
    "unknown-nu-cost", ratios[worst_cell], interval=ratio_ci,
    shown={"reconstruction": cells[worst_cell][0].mean(),
           "oracle": cells[worst_cell][1].mean()},
    note=f"worst cell: {worst_cell}; the ratio ranges over "
    f"[{min(ratios.values()):.2f}, {max(ratios.values()):.2f}] over {len(cells)} "
    "cells; interval: 95% bootstrap",
)

# %% [markdown]
# The largest ratio, {glue:text}`nu_ratio:.2f`, is in the cell {glue:text}`nu_worst`, where
# the oracle's own regret is smallest: learning from half of the rounds costs most where
# there is least regret to begin with. The largest ratio moves from seed to seed, so this
# run's verdict says little alone; the ledger's verdict pools the seeds.
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
#   $\gamma=\eta/2$, epochs of $2\lceil\sqrt T\,\rceil$ rounds) are this chapter's choices
#   (the method notebook says why they could not be checked).
# - **No experiments to match.** The paper is a theorem; the instances are ours: a
#   first-price auction (one of the two applications the abstract names) and two adversaries
#   built to stress the estimator and the pairing.
# - **No peer library.** No package implements cross-learning bandits; the peers are the
#   paper's own baselines (the known-$\nu$ oracle, per-context and context-blind EXP3),
#   measured in the same runs.
# - **Scale.** $T$ up to {glue:text}`horizon_long` and $C$ up to {glue:text}`c_max`
#   (but $T\gg CK$ only up to $C=$ {glue:text}`cl_max`); the tails and rates are measured
#   over $T$ from {glue:text}`T_lo` to {glue:text}`T_max`. The paper's statements are
#   asymptotic. The `paper` mode runs larger grids.
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
