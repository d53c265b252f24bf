# %% [markdown]
# # The method: rewrite twice
#
# A reward model $R$ scores responses. Does it reward *sentiment*, or *length*, or *formality*? The
# tempting answer compares the mean reward of responses with the attribute to those without it.
# That answers another question: responses that differ in sentiment also differ in everything that
# comes with it in the data (here: positive reviews are more often typo-ridden), and the reward
# model may be reacting to that.
#
# Reber et al. {cite}`reber2025rate` want the *causal* effect, the mean of
# $R(Y(1)) - R(Y(0))$ over pairs of responses that differ **only** in the attribute, and get the
# missing half of each pair by asking an LLM to rewrite the response:
#
# > A key challenge is that these rewrites are imperfect in a manner that can induce substantial
# > bias in the estimated sensitivity of the reward model to the attribute. The core idea of RATE is
# > to adjust for this imperfect-rewrite effect by rewriting *twice*.
#
# This notebook shows the three estimators on one small sample that we can read review by review.
# No instruction-following LLM runs offline on this machine, so the rewriter is a set of rules with a
# stated, LLM-like flaw: **it also fixes typos** (GPT-4o does, in the paper's own example). The
# reviews come from a generator that can write any review in all 16 combinations of four
# attributes, which gives the exact counterfactual and so the true effect.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import textwrap

import numpy as np

from icml25 import book, rate

SIZES = {
    "quick": dict(pool=300, n=600),
    "book": dict(pool=1000, n=2000),
    "paper": dict(pool=3000, n=10000),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size
pool = rate.make_pool(size.pool, run.seed_of("review pool"))
table = rate.lexicon_reward(pool.texts)  # table[review, version]
# One colour per estimator, the same in every figure of the chapter; the truth in grey.
COLOURS = {"naive": book.PALETTE[0], "single rewrite": book.PALETTE[1],
           "RATE": book.PALETTE[2], "truth": "0.55"}

# %% [markdown]
# ## One review, its rewrites and its counterfactual
#
# A review is a skeleton (product, sentences, typo positions) in one of 16 versions: the version
# code's bits are the attributes `sentiment`, `length`, `formality` and `typos`. Here is a short,
# casual, positive review with typos ($W=1$), the rewrite to negative $\text{Re}(y,0)$, the rewrite
# of that rewrite back to positive $\text{Re}(\text{Re}(y,0),1)$, and the true counterfactual
# $Y(0)$, which no real data set has:

# %%
code = rate.bit("sentiment") | rate.bit("typos")
fixer = rate.RuleRewriter("sentiment", fix_typos=1.0)
rewriter_rng = run.rng("rewriter coins")  # unused by a consistent rewriter
once = fixer([0], [code], 0, rewriter_rng)[0]
twice = fixer([0], [once], 1, rewriter_rng)[0]
truth_code = code & ~rate.bit("sentiment")
for label, c in [("y (W=1)", code), ("Re(y, 0)", once), ("Re(Re(y, 0), 1)", twice),
                 ("Y(0), the truth", truth_code)]:
    print(f"{label:16s} R = {table[0, c]:+.3f}")
    print(textwrap.fill(pool.texts[0, c], 84, initial_indent="    ",
                        subsequent_indent="    "))

# %% [markdown]
# The reward here is a transparent stand-in for a reward model (`rate.lexicon_reward`): it counts
# positive and negative words, penalises words outside the vocabulary (typos) and likes longer
# texts a little,
#
# $$R(y) = 0.3\,\frac{\#\text{pos}-\#\text{neg}}{\sqrt{|y|}} - 2\cdot\text{typo share} + 0.1\log|y|.$$
#
# The true effect of making this review negative is $R(Y(0)) - R(y)$. The single rewrite measures
# $R(\text{Re}(y,0)) - R(y)$ instead, which adds the reward of fixing the typos. RATE compares the
# two rewritten texts, $R(\text{Re}(\text{Re}(y,0),1))$ and $R(\text{Re}(y,0))$: both are clean, the
# typo fix appears on both sides and cancels.

# %% [markdown]
# ## The three estimators on a confounded sample
#
# Draw {glue:text}`n_toy` reviews in which the attribute and the typos are correlated:
# $P(\text{typos}\mid W=1) = 0.9$ and $P(\text{typos}\mid W=0)=0.1$ (phi coefficient 0.8), the
# other attributes at random. For the $W=1$ reviews (ATT) the estimators average
#
# | estimator | contrast per review |
# | --- | --- |
# | naive | difference of the two groups' mean rewards |
# | single rewrite | $R(y) - R(\text{Re}(y,0))$ |
# | RATE | $R(\text{Re}(\text{Re}(y,0),1)) - R(\text{Re}(y,0))$ |
#
# and mirror images for the $W=0$ reviews (ATU); the ATE weights the two by the group sizes.
# `rate.rewrites` makes the two rewrites of every review, and `rate.estimate` turns the three
# rewards into the table's contrasts: `diffs` holds the per-review contrasts of the single
# rewrite and of RATE, signed so that each reads treated minus control, and the ATT, ATU and
# ATE are their means over $W=1$, $W=0$ and all reviews.
#
# ```{literalinclude} /lib/icml25/rate.py
# :pyobject: rewrites
# :caption: `icml25.rate.rewrites`: $\text{Re}(y,1-w)$ and the rewrite back
# :language: python
# ```
#
# :::{dropdown} The code: `rate.estimate`, the three estimators with their intervals
# :open:
# ```{literalinclude} /lib/icml25/rate.py
# :pyobject: estimate
# :caption: `icml25.rate.estimate`
# :language: python
# ```
# :::

# %%
book.glue(n_toy=size.n)
probs = rate.design("sentiment", phi=0.8)
reviews, codes = rate.sample(pool.size, size.n, probs, run.rng("confounded sample"))
estimates = rate.effects_from_table(table, reviews, codes, fixer, rewriter_rng)
truth = rate.true_effects(table, "sentiment", None, reviews, codes)
shown = estimates.estimate.unstack()[["ATT", "ATU", "ATE"]]
shown.loc["truth (exact counterfactuals)"] = [truth[t] for t in shown.columns]
shown.round(3)

# %% tags=["nbval-check-output"]
rate_error = abs(estimates.estimate[("RATE", "ATE")] - truth["ATE"])
naive_error = abs(estimates.estimate[("naive", "ATE")] - truth["ATE"])
book.glue("toy_rate_error", rate_error)
book.glue("toy_naive_error", naive_error)
book.claim(
    "toy-exact", rate_error,
    note="ours: |RATE - truth|; exact by construction here, not an empirical finding",
    digits=12,
)

# %% [markdown]
# The naive contrast is off by {glue:text}`toy_naive_error:.3f`: positive reviews carry the typo
# penalty. RATE is off by {glue:text}`toy_rate_error:.1e`, that is, not at all; with this additive
# reward and a rewriter that always fixes typos that is **by construction**, not an empirical
# finding. The single rewrite errs on the ATT and the ATU in opposite directions: its artefact
# (fixing typos) always adds reward to the *rewritten* side, which enters the ATT with a minus
# sign and the ATU with a plus sign; the ATE is left with the difference, weighted by the typo rates
# of the two groups. {numref}`fig-08-contrasts` shows the per-review contrasts for the $W=1$
# reviews.

# %% tags=["hide-input", "remove-output"]
w, once_codes, twice_codes = rate.rewrites(reviews, codes, fixer, rewriter_rng)
treated = w == 1
ite = rate.individual_effects(table, "sentiment")[reviews, codes][treated]
single = (table[reviews, codes] - table[reviews, once_codes])[treated]
rate_d = (table[reviews, twice_codes] - table[reviews, once_codes])[treated]
fig, ax = book.figure(height=3.0)
bins = np.linspace(min(single.min(), ite.min()), max(single.max(), ite.max()), 40)
ax.hist(ite, bins, alpha=0.5, label="true effect $R(Y(1))-R(Y(0))$",
        color=COLOURS["truth"])
ax.hist(single, bins, histtype="step", lw=2, label="single rewrite",
        color=COLOURS["single rewrite"])
ax.hist(rate_d, bins, histtype="step", lw=2, ls="--", label="RATE",
        color=COLOURS["RATE"])
ax.set_xlabel("per-review contrast (W = 1 reviews)")
ax.set_ylabel("reviews")
ax.legend(fontsize=8, loc="upper left")
book.show_figure(fig, "fig_contrasts")

# %% [markdown]
# ```{glue:figure} fig_contrasts
# :alt: Histograms of the per-review contrasts of the positive reviews: the true effects as grey bars, the RATE contrasts as a dashed outline lying on them, and the single-rewrite contrasts as an outline spread further to the left.
# :name: fig-08-contrasts
#
# **RATE's contrasts lie on the true effects; the single rewrite's are shifted left.**
# Per-review contrasts of the $W=1$ reviews of the confounded sample: the true effect
# $R(Y(1))-R(Y(0))$ from the exact counterfactual (grey bars), the single rewrite
# $R(y)-R(\text{Re}(y,0))$ and RATE $R(\text{Re}(\text{Re}(y,0),1))-R(\text{Re}(y,0))$
# (outlines). Typo'd reviews lose the typo penalty in the single-rewrite contrast only.
# ```

# %% [markdown]
# The single-rewrite contrasts of the typo'd reviews are shifted left by the typo penalty; RATE's
# contrasts lie on the true ones.
#
# ## Why it works, and when it does not
#
# Write a rewrite as the true counterfactual plus an artefact: $R(\text{Re}(y, w)) = R(Y(w)) +
# \varepsilon_w(y)$. Then, for the $W=1$ reviews,
#
# $$\underbrace{R(\text{Re}(\text{Re}(y,0),1)) - R(\text{Re}(y,0))}_{\text{RATE}}
#   = R(Y(1)) - R(Y(0)) + \big(\varepsilon_1 - \varepsilon_0\big),$$
#
# where both artefacts are those of *rewritten* texts, whereas the single rewrite carries
# $-\varepsilon_0$ alone. RATE needs $\varepsilon_1$ and $\varepsilon_0$ to agree on average. Two
# rewriters break that, and [the reproduction](reproduction.ipynb) measures both:
#
# * one whose artefact depends on the direction (it also lengthens the text whenever it writes
#   positive), and
# * one that fixes typos only now and then, independently at each call: then the second rewrite
#   fixes typos the first one left, and the two sides no longer carry the same artefact.

# %%
pushy = rate.RuleRewriter("sentiment", fix_typos=1.0, push={"length": 1})
pushy_estimates = rate.effects_from_table(table, reviews, codes, pushy, rewriter_rng)
biased = pushy_estimates.estimate[("RATE", "ATE")]
book.glue(pushy_bias=biased - truth["ATE"])

# %% [markdown]
# With the lengthening rewriter RATE's ATE on the same sample is off by
# {glue:text}`pushy_bias:+.3f`, the reward's taste for length times the share of short reviews.
#
# ## Exercises
#
# ```{exercise} A rewriter without an artefact
# :label: ex-rate-clean
#
# **Level:** easy · **Time:** about 10 minutes.
#
# `RuleRewriter("sentiment", fix_typos=0.0)` flips the sentiment and leaves the typos as they
# are. **Predict first:** on the confounded sample above, which of the three estimates of the
# ATT (naive, single rewrite, RATE) is exact with this rewriter, and which stays biased? Then
# run the three and compare each with the truth.
# ```
#
# ```{solution-start} ex-rate-clean
# :class: dropdown
# ```
#
# Without an artefact a rewrite *is* the counterfactual, so the single rewrite and RATE are
# both exact. The naive contrast compares different reviews, not rewrites of the same ones,
# so it keeps the confounding of sentiment with typos ($\phi = 0.8$ above).

# %%
clean = rate.RuleRewriter("sentiment", fix_typos=0.0)
clean_estimates = rate.effects_from_table(table, reviews, codes, clean,
                                          run.rng("clean-rewriter exercise"))
clean_errors = {how: clean_estimates.estimate[(how, "ATT")] - truth["ATT"]
                for how in ("naive", "single rewrite", "RATE")}
for how, error in clean_errors.items():
    print(f"{how:15s} ATT error {error:+.4f}")
book.glue(ex_clean_naive=clean_errors["naive"],
          ex_clean_single=clean_errors["single rewrite"],
          ex_clean_rate=clean_errors["RATE"])


# %% [markdown]
# The single rewrite is off by {glue:text}`ex_clean_single:+.1e` and RATE by
# {glue:text}`ex_clean_rate:+.1e`, both exact up to rounding; the naive contrast is off by
# {glue:text}`ex_clean_naive:+.3f`. RATE's second rewrite matters only when the rewriter
# leaves a mark of its own.
#
# ```{solution-end}
# ```
#
# ```{exercise} Single rewrite: biases of opposite sign
# :label: ex-rate-single
#
# **Level:** medium · **Time:** about 20 minutes.
#
# Write the single rewrite's bias on the ATT, the ATU and the ATE in terms of the typo penalty $c$
# (the reward gained by fixing a review's typos, taken constant) and $P(\text{typos}\mid W=w)$.
# Show that with equal typo rates in both groups ($\phi=0$) the ATE is unbiased although the ATT
# and the ATU are not, and check the formula on the table above.
# ```
#
# ```{solution-start} ex-rate-single
# :class: dropdown
# ```
#
# For $W=1$ the contrast is $R(y) - R(\text{Re}(y,0))$; a typo'd $y$ loses $c$ against its clean
# rewrite, so the bias is $-c\,P(\text{typos}\mid W=1)$. For $W=0$ the contrast is
# $R(\text{Re}(y,1)) - R(y)$, biased by $+c\,P(\text{typos}\mid W=0)$. The ATE's bias is
# $c\,[\,n_0 P(\text{typos}\mid W=0) - n_1 P(\text{typos}\mid W=1)\,]/n$, zero when the two typo
# rates are equal and the groups balanced. The cell measures the bias on the sample above and
# on a sample with $\phi=0$, and sets beside it the formula with the exact penalty of every
# review and with one constant $c$ (the mean penalty).

# %%
def single_bias_check(reviews_, codes_, rng):
    """Measured single-rewrite bias; the formula with exact and constant penalty."""
    w_ = rate.get(codes_, "sentiment")
    typo = rate.get(codes_, "typos")
    flipped = rate.with_value(codes_, "sentiment", ~w_)  # the true counterfactual
    penalty = (table[reviews_, rate.with_value(flipped, "typos", 0)]
               - table[reviews_, flipped])  # reward gained by fixing its typos
    est = rate.effects_from_table(table, reviews_, codes_, fixer, rng)
    true_ = rate.true_effects(table, "sentiment", None, reviews_, codes_)
    c_bar = penalty[typo].mean()
    rows_ = {}
    for target, group, sign in (("ATT", w_, -1), ("ATU", ~w_, +1)):
        rows_[target] = (est.estimate[("single rewrite", target)] - true_[target],
                         sign * np.mean(typo[group] * penalty[group]),
                         sign * c_bar * typo[group].mean())
    n1 = w_.mean()
    rows_["ATE"] = tuple(n1 * a + (1 - n1) * b
                         for a, b in zip(rows_["ATT"], rows_["ATU"]))
    return rows_


single_rng = run.rng("single-rewrite exercise")
single_checks = {"phi = 0.8 (above)": single_bias_check(reviews, codes, single_rng)}
reviews_0, codes_0 = rate.sample(pool.size, size.n, rate.design("sentiment", phi=0.0),
                                 single_rng)
single_checks["phi = 0"] = single_bias_check(reviews_0, codes_0, single_rng)
for label, rows_ in single_checks.items():
    print(f"{label}: target   measured bias   formula, exact c   formula, constant c")
    for target, (measured, exact_c, const_c) in rows_.items():
        print(f"{'':18s}{target}   {measured:+13.4f}   {exact_c:+16.4f}   "
              f"{const_c:+19.4f}")
book.glue(ex_single_att0=single_checks["phi = 0"]["ATT"][0],
          ex_single_ate0=single_checks["phi = 0"]["ATE"][0])

# %% [markdown]
# With the exact penalty of each review the formula reproduces the measured biases to the
# last digit: on an additive reward the single rewrite's error *is* the typo fix. The
# constant-$c$ version is close but not exact: the penalty is a share of the words, so it
# depends on the review's length and on how many words the typos hit. At $\phi=0$ the ATT is
# still biased ({glue:text}`ex_single_att0:+.4f`) while the ATE's bias is
# {glue:text}`ex_single_ate0:+.4f`: the two groups' errors, of opposite signs, cancel up to
# the sample's imbalance in group sizes and typo rates.
#
# ```{solution-end}
# ```
#
# ```{exercise} A forgetful rewriter
# :label: ex-rate-coin
#
# **Level:** medium · **Time:** about 20 minutes.
#
# `RuleRewriter("sentiment", fix_typos=q, consistent=False)` fixes a review's typos with
# probability $q$, independently at each call. Derive RATE's bias on the ATT as a function of $q$,
# and check it numerically on the sample above for $q = 0.25, 0.5, 0.75$.
# ```
#
# ```{solution-start} ex-rate-coin
# :class: dropdown
# ```
#
# A typo'd $W=1$ review stays typo'd after the first rewrite with probability $1-q$; the second
# rewrite then fixes it with probability $q$. Only in that case do the two rewritten texts differ in
# typos, and the clean one is on the plus side, so the bias is $+\bar c\,q(1-q)\,P(\text{typos}\mid
# W=1)$, zero at $q\in\{0,1\}$ and largest at $q=1/2$. The cell averages RATE's ATT error
# over 20 draws of the coins on the sample above and compares it with the formula, $\bar c$
# the mean penalty of the typo'd $W=1$ reviews.

# %%
w_s = rate.get(codes, "sentiment")
typo_s = rate.get(codes, "typos")
penalty_s = table[reviews, rate.with_value(codes, "typos", 0)] - table[reviews, codes]
c_typo_w1 = np.mean(typo_s[w_s] * penalty_s[w_s])  # = c_bar * P(typos | W = 1)
print("   q   RATE ATT bias (mean of 20 draws)   formula q(1-q) c P(typos|W=1)")
coin_bias = {}
for q in (0.25, 0.5, 0.75):
    forgetful = rate.RuleRewriter("sentiment", fix_typos=q, consistent=False)
    errors = [rate.effects_from_table(table, reviews, codes, forgetful,
                                      run.rng(f"forgetful rewriter coins {k}")
                                      ).estimate[("RATE", "ATT")] - truth["ATT"]
              for k in range(20)]
    coin_bias[q] = np.mean(errors)
    print(f"{q:4.2f}   {coin_bias[q]:+32.4f}   {q * (1 - q) * c_typo_w1:+31.4f}")
book.glue(ex_coin_half=coin_bias[0.5], ex_coin_formula=0.25 * c_typo_w1)

# %% [markdown]
# At $q=1/2$ RATE's ATT is off by {glue:text}`ex_coin_half:+.4f` on average against
# {glue:text}`ex_coin_formula:+.4f` from the formula; the residual difference is the
# Monte-Carlo error of 20 draws of the coins. The bias is symmetric in $q$ and $1-q$: a
# rewriter that fixes typos a quarter of the time is as harmful as one that fixes them three
# quarters of the time.
#
# ```{solution-end}
# ```
#
# ```{exercise} Bring your own rewriter
# :label: ex-rate-llm
#
# **Level:** medium · **Time:** about 25 minutes.
#
# `rate.estimate(w, r_obs, r_once, r_twice)` needs only rewards. Sketch how an LLM rewriter would
# plug in (which texts to send, which to score), and how you would check, on a few hundred examples,
# whether its artefact depends on the direction of the rewrite.
# ```
#
# ```{solution-start} ex-rate-llm
# :class: dropdown
# ```
#
# For each response send "rewrite to $1-w$", score the result ($r_\text{once}$), send that back with
# "rewrite to $w$" and score it ($r_\text{twice}$). To probe direction dependence, measure off-target
# features of both rewrites (length, typo count, formality markers) against the originals:
# $\text{Re}(\cdot,1)$ and $\text{Re}(\cdot,0)$ should change them by the same amount. The cell
# runs that audit on 300 reviews of the sample with two rule rewriters standing in for the
# LLM, the typo fixer and the one that lengthens when it writes positive, and adds the null
# check: a reward that ignores sentiment (each version scored as its negative twin), on which
# RATE must find no effect.

# %%
audit = slice(0, 300)
r_a, c_a = reviews[audit], codes[audit]
print("rewriter      direction   short ones lengthened   typo'd ones fixed")
for name, rewriter in (("typo fixer", fixer), ("lengthening", pushy)):
    for value in (1, 0):
        to_rewrite = rate.get(c_a, "sentiment") != value  # rewrite only the others
        before = c_a[to_rewrite]
        after = rewriter(r_a[to_rewrite], before, value, run.rng("audit rewrites"))
        short, typoed = ~rate.get(before, "length"), rate.get(before, "typos")
        lengthened = np.mean(rate.get(after, "length")[short])
        fixed = np.mean(~rate.get(after, "typos")[typoed])
        print(f"{name:12s}  to W = {value}   {lengthened:21.2f}   {fixed:17.2f}")
null_table = table[:, rate.with_value(np.arange(rate.N_VERSIONS), "sentiment", 0)]
w_a, once_a, twice_a = rate.rewrites(r_a, c_a, fixer, run.rng("null-reward rewrites"))
null_est = rate.estimate(w_a, null_table[r_a, c_a], null_table[r_a, once_a],
                         null_table[r_a, twice_a])
print("reward blind to sentiment: RATE ATE = "
      f"{null_est.estimate[('RATE', 'ATE')]:+.4f}, "
      f"naive ATE = {null_est.estimate[('naive', 'ATE')]:+.4f}")
book.glue(ex_llm_null_naive=null_est.estimate[("naive", "ATE")])

# %% [markdown]
# The audit separates the two rewriters at once: both fix every typo'd review in both
# directions, but the lengthening rewriter lengthens short reviews only when it writes
# $W=1$, the direction dependence that biases RATE. (Measure each artefact on the reviews
# it can touch: the raw share of changed typos differs between directions only because
# positive reviews are typo'd more often in this sample.) On the reward that
# ignores sentiment RATE returns 0, while the naive contrast reports
# {glue:text}`ex_llm_null_naive:+.4f`, the typo confounding. With an LLM the same three
# measurements need only a feature extractor for the off-target attributes and the reward
# model's scores.
#
# ```{solution-end}
# ```

# %%
book.finish()
