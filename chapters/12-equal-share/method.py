# %% [markdown]
# # The method: equal share, and the learners that secure it
#
# In a symmetric $n$-player game whose payoffs always add to $C$, what can one player
# guarantee itself? Ge, Wang, Li and Jin {cite}`ge2025equal` take the natural target, an
# equal share $C/n$:
#
# > This paper takes an initial step towards addressing these challenges by focusing on the
# > natural objective of *equal share*—securing an expected payoff of $C/n$ in an $n$-player
# > symmetric game with a total payoff of $C$. We rigorously identify the theoretical
# > conditions under which achieving an equal share is tractable and design a series of
# > efficient algorithms, inspired by no-regret learning, that *provably* attain approximate
# > equal share across various settings. (Ge, Wang, Li & Jin, 2025, abstract)
#
# This notebook builds the argument on the three-player majority vote, a game small enough
# to see whole: why two players are easy and three are not, why a learner facing identical
# opponents can always get $C/n$, and why it must adapt when they move. The experiments are
# in [the reproduction](reproduction.ipynb). The proposition and theorem numbers cited
# (Props. 4.1 and 4.2, Theorem 5.2) could not be checked: the paper's stored opening ends
# before them, and no code is public.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import numpy as np

from icml25 import book
from icml25 import equal_share as es

from _chapter import COLOURS, LEARNERS

SIZES = {
    "quick": dict(grid=41, horizon=500, switch_horizon=800, two_player_games=5),
    "book": dict(grid=101, horizon=5000, switch_horizon=8000, two_player_games=20),
    "paper": dict(grid=201, horizon=20_000, switch_horizon=40_000,
                  two_player_games=100),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size

# %% [markdown]
# ## Symmetric constant-sum games
#
# ```{prf:definition} Symmetric constant-sum game, equal share
# :label: def-12-game
#
# $n$ players share the actions $\mathcal A$ ($|\mathcal A|=A$). A player's payoff
# $u(a;b_1,\dots,b_{n-1})$ depends on its own action $a$ and, symmetrically, on the others';
# the payoffs of all players add to $C$ in every profile. Write
# $U(x;\sigma)=U(x;\sigma,\dots,\sigma)$ for the expected payoff of the mixed strategy $x$
# when all $n-1$ opponents play $\sigma$. A player *secures an $\epsilon$-equal share*
# when its expected payoff is at least $C/n-\epsilon$.
# ```
#
# Two facts carry everything. If all $n$ players use the same $\sigma$ they are
# exchangeable, so each gets the same, and the payoffs add to $C$:
#
# $$U(\sigma;\sigma)=C/n\quad\text{for every }\sigma,\qquad\text{hence}\qquad
# \max_a U(a;\sigma)\ \ge\ C/n .$$
#
# Against identical opponents, some action always earns the equal share; the trouble is
# knowing which before they move. `icml25.equal_share` stores a game by its payoff for each
# own action and each *count vector* of the opponents' actions (how many chose each action),
# which is all a symmetric game depends on.
#
# The three-player **majority vote**: two actions; the two players who agree split the pot
# $C=1$, the dissenter gets 0; unanimity gives each $1/3$.

# %%
vote = es.majority_vote(3)
print("payoff of own action (rows) against the opponents' counts (n0, n1):")
for a in range(2):
    cells = "  ".join(f"{tuple(int(v) for v in k)}: {vote.values[a, j]:.3f}"
                      for j, k in enumerate(vote.counts))
    print(f"action {a}: {cells}")
s = np.linspace(0, 1, size.grid)
U = np.array([[es.payoff(vote, [1 - p, p], [1 - q, q]) for q in s] for p in s])
mixed_sigma, mixed_worst = es.worst_identical_opponent(vote, [0.5, 0.5])
book.glue(diag_gap=float(np.abs(np.diag(U) - 1 / 3).max()), mixed_worst=mixed_worst,
          maximin_vote=float(U.min(axis=1).max()))

# %% tags=["remove-output"]
fig, axes = book.figure(2, height=3.2, gridspec_kw=dict(width_ratios=[1.1, 1]))
ax = axes[0]
im = ax.imshow(U, origin="lower", extent=(0, 1, 0, 1), cmap="viridis", vmin=0, vmax=0.5)
ax.plot([0, 1], [0, 1], "w--", lw=1)
ax.grid(False)
ax.set_xlabel("opponents' P(action 1), σ")
ax.set_ylabel("own P(action 1), x")
ax.set_title("U(x; σ, σ), majority vote", fontsize=10)
fig.colorbar(im, ax=ax, shrink=0.85)
ax = axes[1]
ax.plot(s, U.min(axis=1), color=COLOURS["equilibrium"],
        label="worst identical opponents")
ax.plot(s, U.max(axis=1), color=COLOURS["Hedge"], label="best identical opponents")
ax.axhline(1 / 3, color=COLOURS["share"], ls="--", lw=1, label="C/3")
ax.set_xlabel("own fixed strategy, P(action 1)")
ax.set_ylabel("payoff")
ax.legend(loc="center right", fontsize=8)
book.show_figure(fig, "fig_vote")

# %% [markdown]
# ```{glue:figure} fig_vote
# :alt: Left, a heat map of the payoff of own strategy x against identical opponents sigma in the majority vote, brightest (about 0.375) where the learner plays one action and the opponents mostly but not always play it too, darkest (0) in the two corners where the learner plays one action and both opponents the other, with the dashed diagonal where the payoff is one third. Right, for each fixed own strategy, the worst payoff over identical opponents, which is a tent peaking at one sixth at x = 0.5, and the best payoff, above one third.
# :name: fig-12-vote
#
# **Every fixed strategy can be held below the equal share, yet against each fixed opponent
# some strategy earns it.** Left: $U(x;\sigma,\sigma)$ in the three-player majority vote;
# on the diagonal it is exactly $C/3$. Right: the worst and best identical opponents of each
# fixed strategy; no fixed strategy secures more than $C/6$.
# ```

# %% [markdown]
# On the diagonal the payoff equals $1/3$ up to {glue:text}`diag_gap:.1e`. Even the mixed
# equilibrium $(\tfrac12,\tfrac12)$ is held to {glue:text}`mixed_worst:.3f` when both
# opponents play action 1, and the best any fixed strategy can secure is
# {glue:text}`maximin_vote:.3f`. This is the failure of the minimax theorem for three
# players, and the reason a fixed strategy from self-play cannot promise an equal share.
#
# ## Why two players are different
#
# With two players, a symmetric constant-sum game is a zero-sum game shifted by $C/2$: its
# value is $C/2$ by symmetry, and the minimax theorem gives a fixed strategy that secures it
# against *any* opponent. A linear program (scipy's HiGHS) finds it; the check below solves
# it for {glue:text}`n_two` random 2-player games.

# %%
values_2p = []
for i in range(size.two_player_games):
    two = es.random_game(2, 4, seed=run.seed_of(f"two-player-game-{i}"))
    x, value = es.two_player_maximin(two)
    values_2p.append(value - two.equal_share)
    # the LP's guarantee holds against every pure (hence every mixed) opponent
    assert min(es.payoff(two, x, np.eye(4)[b]) for b in range(4)) >= value - 1e-9
book.glue(n_two=size.two_player_games)

# %% tags=["nbval-check-output"]
book.claim("two-player-value", float(np.abs(values_2p).max()))

# %% [markdown]
# ## Hedge against fixed identical opponents
#
# Facing identical opponents with a fixed $\sigma$, the learner sees after each round the
# payoff vector $g_t(a)=U(a;\sigma_t)$ (the *full-information* model: it observes the
# opponents' mixed strategy). Hedge plays
#
# $$x_t(a)\propto\exp\Big(\eta\sum_{s<t}g_s(a)\Big),\qquad
# \eta=\frac{1}{R}\sqrt{\frac{8\ln A}{T}},$$
#
# with $R$ the payoff range, and its regret against the best fixed action is at most
# $R\sqrt{T\ln A/2}$ {cite}`cesabianchi2006prediction`. Since that action earns at least
# $C/n$ each round,
#
# $$\frac1T\sum_t U(x_t;\sigma)\ \ge\ \frac Cn-\epsilon_T,\qquad
# \epsilon_T=R\sqrt{\frac{\ln A}{2T}} .$$
#
# The paper's result for fixed opponents is of this kind; its constants are not checked
# against its full text, so the bound here is the standard one.
#
# In `Hedge`, `lr` is $\eta$, `gains` holds $\sum_{s<t}g_s$ (`update` adds each round's
# $g_t$) and `strategy` returns $x_t$, the softmax of $\eta\sum_{s<t}g_s$; one row per
# independent run.
#
# ```{literalinclude} /lib/icml25/equal_share/learners.py
# :pyobject: Hedge
# :caption: `icml25.equal_share.Hedge`: full-information Hedge
# :language: python
# ```

# %%
T = size.horizon
pay = es.hedge(vote, [0.0, 1.0], T)
eps = es.hedge_epsilon(2, T, vote.payoff_range)
book.glue(hedge_avg=pay.mean(), hedge_eps=eps, T=T)

# %% tags=["nbval-check-output"]
book.claim(
    "hedge-toy", float(pay.mean() - (1 / 3 - eps)),
    note="ours: the margin above the bound",
)

# %% [markdown]
# Hedge averages {glue:text}`hedge_avg:.4f` over {glue:text}`T` rounds, above
# $1/3-\epsilon_T$ with $\epsilon_T=$ {glue:text}`hedge_eps:.4f`.
#
# ## Opponents that move: strong adaptivity, and cloning
#
# If the identical opponents drift, the best *fixed* action is no longer good enough: the
# comparator that earns $C/n$ every round is "play $\sigma_t$", which moves. Two ways to
# follow it:
#
# * **SAOL** {cite}`daniely2015strongly`: start a fresh Hedge on every interval of a
#   geometric cover, $[i2^k,(i+1)2^k-1]$ for each level $k$, and let a sleeping-experts
#   meta-learner (here AdaNormalHedge {cite}`luo2015achieving`) weight the ones awake. Its
#   regret is small on *every* interval, so after a change it catches up within about the
#   length of the shortest interval that fits.
# * **Behaviour cloning**: play last round's $\sigma_{t-1}$. Because $U(\sigma;\sigma)=C/n$,
#   it loses only what the opponents moved since, $U(\sigma_{t-1};\sigma_t)\ge C/n-
#   L\|\sigma_t-\sigma_{t-1}\|_1$.
#
# In `StronglyAdaptive`, one row of state per level $k$ is the one awake interval of that
# level: `_start` wakes the intervals that begin at round $t$ (those of the levels with $2^k$
# dividing $t$) and restarts their Hedge; `update` adds each awake interval's instantaneous
# regret $r_I=(g_t^\top x_I-g_t^\top x_t)/R$ to `S` ($S_I$) and $|r_I|$ to `V` ($V_I$); and
# `weights` is AdaNormalHedge's $w_I=[\Phi(S_I+1,V_I+1)-\Phi(S_I-1,V_I+1)]_+/2$ with
# $\Phi(S,V)=\exp([S]_+^2/3V)$, normalised over the awake intervals. The learner plays
# $x_t=\sum_Iw_Ix_I$.
#
# :::{dropdown} The code: SAOL's covering intervals, meta-weights and update
# :open:
# ```{literalinclude} /lib/icml25/equal_share/learners.py
# :pyobject: StronglyAdaptive._start
# :dedent: 4
# :caption: `icml25.equal_share.StronglyAdaptive._start`: the intervals that begin now
# :language: python
# ```
#
# ```{literalinclude} /lib/icml25/equal_share/learners.py
# :pyobject: StronglyAdaptive.update
# :dedent: 4
# :caption: `icml25.equal_share.StronglyAdaptive.update`: the regrets $r_I$, $S_I$ and $V_I$
# :language: python
# ```
#
# ```{literalinclude} /lib/icml25/equal_share/learners.py
# :pyobject: StronglyAdaptive.weights
# :dedent: 4
# :caption: `icml25.equal_share.StronglyAdaptive.weights`: the meta-learner's weights
# :language: python
# ```
# :::
#
# The paper assigns Hedge to fixed, SAOL with Hedge base learners to slowly adapting and
# cloning to "intermediately" adapting opponents. Below, opponents in the majority vote
# switch between the two actions every {glue:text}`period` rounds.

# %%
T2 = size.switch_horizon
period = T2 // 8
switch = es.switching([[1, 0], [0, 1]], period, T2)
paths = {name: es.simulate(vote, learner, switch) for name, learner in LEARNERS.items()}
probe = es.StronglyAdaptive(2, T2)
awake_levels = []
for t in range(1, 65):
    awake_levels.append(probe.awake[0].copy())
    probe.strategy()
    probe.update(np.zeros((1, 2)), None)
book.glue(period=period)
for name, p in paths.items():
    book.glue(f"switch_{name.lower()}", p.mean())

# %% tags=["remove-output"]
fig, axes = book.figure(2, height=3.0, gridspec_kw=dict(width_ratios=[1, 2]))
ax = axes[0]
starts = np.array(awake_levels)
for k in range(starts.shape[1]):
    length = 2**k
    for i in range(1, 64 // length + 1):
        lo, hi = i * length, min((i + 1) * length - 1, 64)
        if lo <= 64:
            ax.plot([lo, hi + 0.8], [k, k], lw=5, solid_capstyle="butt",
                    color=book.PALETTE[2] if i % 2 else book.PALETTE[5])
ax.set_xlabel("round t")
ax.set_ylabel("level k (length 2^k)")
ax.set_title("geometric covering intervals", fontsize=10)
ax = axes[1]
window = 100
for name, p in paths.items():
    smooth = np.convolve(p, np.ones(window) / window, mode="valid")
    ax.plot(np.arange(len(smooth)) + window, smooth, color=COLOURS[name], lw=1.2,
            label=f"{name}")
ax.axhline(1 / 3, color=COLOURS["share"], ls="--", lw=1)
for k in range(period, T2, period):
    ax.axvline(k, color="0.85", lw=0.8, zorder=0)
ax.set_xlabel("round")
ax.set_ylabel(f"payoff ({window}-round average)")
ax.set_title(f"opponents switch every {period} rounds", fontsize=10)
ax.legend(loc="lower left", fontsize=8, ncol=3)
book.show_figure(fig, "fig_switch")

# %% [markdown]
# ```{glue:figure} fig_switch
# :alt: Left, horizontal bars at levels 0 to 6 showing the dyadic intervals of lengths 1, 2, 4 up to 64 that tile the rounds 1 to 64 from their first full interval. Right, 100-round moving averages of payoff over 8000 rounds as the opponents switch action every 1000 rounds: cloning stays at one third except for dips at the switches, SAOL drops at each switch and recovers within a few hundred rounds, Hedge alternates between long stretches near one third and stretches near zero.
# :name: fig-12-switch
#
# **Restarted Hedge on every dyadic interval recovers after each switch; a single Hedge
# does not.** Left: the intervals of the geometric cover, one awake per level at any round.
# Right: payoff per round (moving average) in the majority vote when the identical opponents
# switch action every {glue:text}`period` rounds.
# ```

# %% [markdown]
# Averaged over the run: Hedge {glue:text}`switch_hedge:.3f`, SAOL
# {glue:text}`switch_saol:.3f`, cloning {glue:text}`switch_cloning:.3f`. When the opponents
# change every round instead, cloning copies the strategy just abandoned and everything
# fails; the reproduction sweeps the speed of change and shows the two impossibility
# results: non-identical opponents, and opponents that adapt without limit.
#
# ## Exercises
#
# ```{exercise} The worst opponent of the mixed equilibrium
# :label: ex-12-mixed
#
# **Level:** easy · **Time:** about 10 minutes.
#
# In the majority vote, write $U(x;\sigma)$ for $x=(\tfrac12,\tfrac12)$ and opponents
# playing action 1 with probability $q$, find its minimum by hand, and compare with
# `es.worst_identical_opponent`.
# ```
#
# ```{solution-start} ex-12-mixed
# :class: dropdown
# ```
#
# With probability $(1-q)^2$ both opponents play 0, $q^2$ both play 1, $2q(1-q)$ they split.
# Action 0 earns $(1-q)^2/3+q(1-q)$ and action 1 earns $q^2/3+q(1-q)$, so
# $U=\tfrac16+\tfrac23q(1-q)$: smallest at $q\in\{0,1\}$, where it is $\tfrac16$.

# %%
by_hand = min(1 / 6 + 2 / 3 * q * (1 - q) for q in np.linspace(0, 1, 101))
print(f"by hand {by_hand:.6f}; worst_identical_opponent {mixed_worst:.6f}")
book.glue(ex_by_hand=by_hand)

# %% [markdown]
# Both give {glue:text}`ex_by_hand:.4f`.
#
# ```{solution-end}
# ```
#
# ```{exercise} Learning from sampled actions
# :label: ex-12-sampled
#
# **Level:** medium · **Time:** about 15 minutes.
#
# Suppose the learner sees only the opponents' sampled actions, not their mixed strategy.
# Run Hedge with `observe="sampled"` in a random 3-player game with 4 actions against
# identical opponents with a random mixed strategy, and compare its average with the
# full-information run and with the guarantee $\max_a g_a(\sigma)-\epsilon_T$ (the best
# action's payoff less the regret bound).
# ```
#
# ```{solution-start} ex-12-sampled
# :class: dropdown
# ```
#
# The sampled payoff vector is an unbiased estimate of $g(\sigma)$, so Hedge's regret bound
# still holds in expectation; one run adds noise of order $R/\sqrt T$.

# %%
ex_game = es.random_game(3, 4, seed=run.seed_of("sampled-exercise-game"))
ex_sigma = run.rng("sampled-exercise-opponents").dirichlet(np.ones(4))
ex_full = es.hedge(ex_game, ex_sigma, T).mean()
ex_sampled = es.hedge(ex_game, ex_sigma, T, observe="sampled",
                      seed=run.seed_of("sampled-exercise-actions")).mean()
ex_bound = (ex_game.payoff_vectors(ex_sigma).max()
            - es.hedge_epsilon(4, T, ex_game.payoff_range))
print(f"full information {ex_full:.4f}; sampled actions {ex_sampled:.4f}; "
      f"best action - eps {ex_bound:.4f}")
book.glue(ex_sampled=ex_sampled, ex_full=ex_full, ex_bound=ex_bound)

# %% [markdown]
# Sampled: {glue:text}`ex_sampled:.4f`, full information: {glue:text}`ex_full:.4f`,
# guarantee: {glue:text}`ex_bound:.4f`. Here the opponents are not adversarial, so both
# runs are far above $C/3$ as well.
#
# ```{solution-end}
# ```
#
# ```{exercise} Which meta-learner?
# :label: ex-12-meta
#
# **Level:** medium · **Time:** about 15 minutes.
#
# SAOL's original meta-learner {cite}`daniely2015strongly` updates
# $w_I\leftarrow w_I(1+\eta_Ir_I)$ with $\eta_I=\min(1/2,|I|^{-1/2})$. Compare it
# (`meta="daniely"`) with AdaNormalHedge on the switching opponents above.
# ```
#
# ```{solution-start} ex-12-meta
# :class: dropdown
# ```
#
# Both have regret $\tilde O(\sqrt{|I|})$ on every interval, but with different constants:
# the small $\eta_I$ of long intervals make the original slow to shift weight after a
# switch, and the many short intervals, whose Hedge has barely started, pull it towards
# uniform play.

# %%
ex_meta = {m: es.simulate(vote, es.StronglyAdaptive, switch, meta=m).mean()
           for m in ("adanormalhedge", "daniely")}
print("  ".join(f"{m}: {v:.4f}" for m, v in ex_meta.items()))
book.glue(ex_daniely=ex_meta["daniely"], ex_anh=ex_meta["adanormalhedge"])

# %% [markdown]
# AdaNormalHedge {glue:text}`ex_anh:.3f` against {glue:text}`ex_daniely:.3f` for the
# original.
#
# ```{solution-end}
# ```

# %%
book.finish()
