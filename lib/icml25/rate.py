r"""RATE: causal attribute effects on a reward model from imperfect rewrites (Reber et al., ICML 2025).

**Estimand.** A reward model :math:`R(y)` scores a response :math:`y`; :math:`W(y)\in\{0,1\}` is a
binary attribute (sentiment, length, formality). With potential responses :math:`Y(1), Y(0)` that
differ *only* in :math:`W`,

.. math:: \text{ATE} = \mathbb E[R(Y(1)) - R(Y(0))],\quad
          \text{ATT} = \mathbb E[\,\cdot \mid W=1],\quad \text{ATU} = \mathbb E[\,\cdot \mid W=0].

**Estimators** (paper, Section 3 and Algorithm 1). :math:`\text{Re}(y, w)` is a rewrite of
:math:`y` to attribute value :math:`w`; real rewriters (LLMs) also change off-target features
(they fix typos, normalise style), so :math:`\text{Re}(y, w)\neq Y(w)`.

.. math::
    \widehat{\text{naive}} &= \overline{R(y)}_{W=1} - \overline{R(y)}_{W=0}\\
    \widehat{\text{ATT}}_\text{single} &= \overline{R(y) - R(\text{Re}(y,0))}_{W=1},\qquad
    \widehat{\text{ATU}}_\text{single} = \overline{R(\text{Re}(y,1)) - R(y)}_{W=0}\\
    \widehat{\text{ATT}}_\text{RATE} &= \overline{R(\text{Re}(\text{Re}(y,0),1)) - R(\text{Re}(y,0))}_{W=1},\qquad
    \widehat{\text{ATU}}_\text{RATE} = \overline{R(\text{Re}(y,1)) - R(\text{Re}(\text{Re}(y,1),0))}_{W=0}

and :math:`\widehat{\text{ATE}} = \tfrac{n_1}{n}\widehat{\text{ATT}} + \tfrac{n_0}{n}\widehat{\text{ATU}}`.
Rewriting *twice* makes both sides of the RATE contrast rewritten texts, so an off-target artefact
that the rewriter applies the same way in both directions cancels. Standard errors are paired
(per-example differences, as the official code's ``ATE_paired_stderr`` up to its commit
``2c436d8``; its later releases compute RATE's unpaired, a Welch error 1.0 to 2.2 times wider on
this chapter's samples); the interval is normal.

**Ground truth.** No LLM rewriter runs offline here, so the responses come from a generator of
short product reviews with four binary latent attributes (:data:`ATTRIBUTES`): every review exists
in all 16 versions, which gives the exact counterfactual :math:`Y(1-w)` of any review, and the
rewriter is rule based: it sets the target attribute and, like an LLM, makes documented off-target
edits (fixes typos; optionally lengthens when writing one direction). Responses and rewrites are
indices into a table of rewards ``table[review, version]``, so the estimators see exactly what they
would see with real texts; any reward that maps texts to numbers (:func:`lexicon_reward`, or a
learned head on sentence embeddings, :func:`fit_reward_head`) fills the table.

An LLM rewriter plugs in at :func:`estimate`, which takes only the three reward arrays.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from icml25.common.streams import as_generator

from . import minilm

ATTRIBUTES = ("sentiment", "length", "formality", "typos")
"""The latent binary attributes of a review; attribute ``i`` is bit ``i`` of a version code."""
N_VERSIONS = 1 << len(ATTRIBUTES)

_PRODUCTS = ("kettle", "backpack", "blender", "desk lamp", "pair of headphones", "water bottle",
             "keyboard", "tent", "coffee grinder", "phone case", "rice cooker", "umbrella")
# (positive, negative) sentiment words: flipping sentiment swaps within a pair, nothing else.
_SENTIMENT = (("sturdy", "flimsy"), ("excellent", "terrible"), ("reliable", "unreliable"),
              ("lovely", "ugly"), ("quiet", "noisy"), ("comfortable", "uncomfortable"),
              ("great", "poor"), ("solid", "shoddy"), ("impressive", "disappointing"),
              ("pleasant", "unpleasant"), ("durable", "fragile"), ("fantastic", "awful"))
# [casual|formal] alternatives; {adj} is the sentiment slot, {product} the product.
_CORE = (
    "[Honestly the|The] {product} is {adj} [for the price!|for its price.]",
    "[It's|It is] {adj} [and I'm kinda|and I am somewhat] surprised by that[!|.]",
    "[The build's|The build quality is] {adj} [tbh.|in my opinion.]",
    "[I've|I have] used it daily and [it's|it is] {adj}[!|.]",
    "[Setup was|The setup was] {adj} [lol.|as well.]",
    "[My partner thinks it's|My partner considers it] {adj} [too!|as well.]",
    "[For everyday stuff it's|For everyday use it is] {adj}[!|.]",
    "[Customer service was|The customer service was] {adj} [when I called!|when I contacted them.]",
    "[The packaging's|The packaging was] {adj} [btw.|as well.]",
    "[Overall it's|Overall, it is] {adj} [and I'd|and I would] say so again[!|.]",
)
_EXTRA = (  # neutral sentences that only the long version has
    "[Got it|I purchased it] last month [after my old one broke.|after my previous one broke.]",
    "[It came|It arrived] in a blue box [pretty fast.|within three days.]",
    "[I mostly use it|I use it mainly] in the kitchen on weekends[.|.]",
    "[We've had|We have had] [a few|several] similar ones over the years[.|.]",
    "[The manual's|The manual is] short and [the colour's|the colour is] grey[.|.]",
    "[I'll|I will] [prob|probably] update this review [later.|at a later date.]",
)
_ALT = re.compile(r"\[([^|\]]*)\|([^\]]*)\]")
_WORD = re.compile(r"[A-Za-z']+")
_N_CORE, _N_EXTRA = 3, 3
TYPO_RATE = 0.3
"""Share of eligible words (four letters or more, not sentiment words) that a typo'd review garbles."""


def bit(attribute: str) -> int:
    """The bit of ``attribute`` in a version code (raises ``ValueError`` for an unknown name)."""
    if attribute not in ATTRIBUTES:
        raise ValueError(f"unknown attribute {attribute!r}; expected one of {ATTRIBUTES}")
    return 1 << ATTRIBUTES.index(attribute)


def get(codes, attribute: str) -> np.ndarray:
    """Value (0 or 1) of ``attribute`` in each version code."""
    return (np.asarray(codes) & bit(attribute)) > 0


def with_value(codes, attribute: str, value) -> np.ndarray:
    """Version codes with ``attribute`` set to ``value`` (scalar or array of 0/1)."""
    b = bit(attribute)
    codes = np.asarray(codes)
    return np.where(np.asarray(value, dtype=bool), codes | b, codes & ~b)


@dataclass(frozen=True)
class ReviewPool:
    """``n`` review skeletons, each rendered in all 16 versions (``texts[i, code]``).

    A skeleton fixes the product, the sentences and the typo positions; the version code sets the
    four attributes. Two versions of one skeleton that differ in one attribute are therefore exact
    counterfactuals of each other in that attribute.
    """

    seed: int
    products: np.ndarray
    core: np.ndarray  # (n, 3) template indices
    adjectives: np.ndarray  # (n, 3) sentiment-pair indices
    extra: np.ndarray  # (n, 3) extra-sentence indices
    texts: np.ndarray = field(repr=False)  # (n, 16) object array of str

    @property
    def size(self) -> int:
        return len(self.products)


def _typo(word: str, position: int) -> str:
    """Swap two adjacent letters inside ``word`` (a keyboard-slip typo)."""
    j = 1 + position % (len(word) - 2)
    return word[:j] + word[j + 1] + word[j] + word[j + 2:]


def _render(pool_seed: int, i: int, product: int, core, adjectives, extra, code: int) -> str:
    positive, long_, formal, typos = (bool(code & (1 << k)) for k in range(4))
    sentences = []
    for t, a in zip(core, adjectives):
        adj = _SENTIMENT[a][0 if positive else 1]
        sentences.append(_CORE[t].format(product=_PRODUCTS[product], adj=adj))
    if long_:  # interleave the neutral sentences: the long review is about twice as long
        sentences = [s for pair in zip(sentences, (_EXTRA[e] for e in extra)) for s in pair]
    text = " ".join(_ALT.sub(lambda m: m.group(2 if formal else 1), s) for s in sentences)
    if typos:
        # The typo positions depend on the skeleton, length and formality but not on sentiment,
        # so flipping sentiment leaves the typos exactly where they were.
        words = list(_WORD.finditer(text))
        sentiment_words = {w for pair in _SENTIMENT for w in pair}
        eligible = [k for k, m in enumerate(words) if len(m.group(0)) >= 4
                    and "'" not in m.group(0) and m.group(0).lower() not in sentiment_words]
        rng = as_generator([pool_seed, i, long_, formal])
        chosen = rng.choice(eligible, max(1, round(TYPO_RATE * len(eligible))), replace=False)
        for k in sorted(chosen, reverse=True):  # right to left keeps earlier offsets valid
            m = words[k]
            text = text[:m.start()] + _typo(m.group(0), int(rng.integers(1 << 16))) + text[m.end():]
    return text


def make_pool(n: int, seed: int) -> ReviewPool:
    """Draw ``n`` review skeletons from ``seed`` and render their 16 versions each."""
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    rng = as_generator([seed, 8])
    n = int(n)
    products = rng.integers(len(_PRODUCTS), size=n)
    core = np.stack([rng.choice(len(_CORE), _N_CORE, replace=False) for _ in range(n)])
    adjectives = rng.integers(len(_SENTIMENT), size=(n, _N_CORE))
    extra = np.stack([rng.choice(len(_EXTRA), _N_EXTRA, replace=False) for _ in range(n)])
    texts = np.empty((n, N_VERSIONS), dtype=object)
    for i in range(n):
        for code in range(N_VERSIONS):
            texts[i, code] = _render(seed, i, products[i], core[i], adjectives[i], extra[i], code)
    return ReviewPool(seed, products, core, adjectives, extra, texts)


_POSITIVE = frozenset(p for p, _ in _SENTIMENT)
_NEGATIVE = frozenset(n for _, n in _SENTIMENT)


def _vocabulary() -> frozenset:
    words = set(_POSITIVE | _NEGATIVE)
    for template in _CORE + _EXTRA + _PRODUCTS:
        for variant in (1, 2):
            words |= {w.lower() for w in _WORD.findall(_ALT.sub(lambda m: m.group(variant), template))}
    return frozenset(words - {"adj", "product"})


VOCABULARY = _vocabulary()
"""Every word the generator writes without typos; a word outside it counts as a typo."""


def lexicon_reward(texts) -> np.ndarray:
    r"""A transparent black-box reward computed from the text alone (the brief's pilot reward).

    .. math:: R(y) = 0.3\,\frac{\#\text{pos} - \#\text{neg}}{\sqrt{|y|}}
              - 2\,\text{typo share} + 0.1\log|y|

    with :math:`|y|` the number of words, a typo being a word outside :data:`VOCABULARY`. It is
    additive in sentiment and typos, so a rewrite artefact that fixes typos cancels exactly in RATE.
    """
    texts = np.asarray(texts, dtype=object)
    out = np.empty(texts.shape)
    for idx, text in np.ndenumerate(texts):
        words = [w.lower() for w in _WORD.findall(text)]
        if not words:
            raise ValueError(f"text at {idx} has no words")
        pos = sum(w in _POSITIVE for w in words)
        neg = sum(w in _NEGATIVE for w in words)
        typos = sum(w not in VOCABULARY for w in words)
        n = len(words)
        out[idx] = 0.3 * (pos - neg) / np.sqrt(n) - 2.0 * typos / n + 0.1 * np.log(n)
    return out


def design(target: str, phi: float = 0.0, confounder: str = "typos",
           base: float = 0.5) -> np.ndarray:
    r"""Probabilities of the 16 versions in a sample where ``target`` is confounded.

    :math:`W\sim\text{Bernoulli}(1/2)`; the confounder is 1 with probability
    :math:`(1+\phi)/2` when :math:`W=1` and :math:`(1-\phi)/2` when :math:`W=0`, so that its
    correlation (phi coefficient) with :math:`W` is :math:`\phi`; the other attributes are
    independent Bernoulli(``base``).
    """
    if not -1.0 <= phi <= 1.0:
        raise ValueError(f"phi must lie in [-1, 1], got {phi}")
    if target == confounder:
        raise ValueError(f"target and confounder are the same attribute {target!r}")
    if not 0.0 <= base <= 1.0:
        raise ValueError(f"base must be a probability, got {base}")
    codes = np.arange(N_VERSIONS)
    w, c = get(codes, target), get(codes, confounder)
    p = np.full(N_VERSIONS, 0.5)
    p *= np.where(c == w, (1 + phi) / 2, (1 - phi) / 2)
    for other in ATTRIBUTES:
        if other not in (target, confounder):
            p *= np.where(get(codes, other), base, 1 - base)
    return p / p.sum()


def sample(pool_size: int, n: int, probs, rng: np.random.Generator):
    """``n`` (review, version) pairs: reviews uniform from the pool, versions drawn from ``probs``."""
    probs = np.asarray(probs, dtype=float)
    if probs.shape != (N_VERSIONS,) or np.any(probs < 0) or not np.isclose(probs.sum(), 1):
        raise ValueError(f"probs must be {N_VERSIONS} non-negative numbers summing to 1")
    if n < 2:
        raise ValueError(f"n must be at least 2, got {n}")
    return rng.integers(pool_size, size=n), rng.choice(N_VERSIONS, size=n, p=probs)


@dataclass(frozen=True)
class RuleRewriter:
    """A rule-based stand-in for an LLM rewriter, with its off-target edits stated.

    ``rewrite(reviews, codes, value, rng)`` sets ``attribute`` to ``value`` and, off target,

    * fixes the review's typos with probability ``fix_typos``; with ``consistent=True`` whether
      a review gets fixed is a fixed property of the review (an LLM that always "cleans up" the same
      texts), otherwise a fresh coin for every call, so a second rewrite can fix what the first
      left;
    * sets the attributes in ``push`` when writing ``value = 1`` only (a direction-dependent
      artefact, e.g. ``{"length": 1}``: it lengthens whenever it writes positive).
    """

    attribute: str
    fix_typos: float = 1.0
    consistent: bool = True
    push: dict = field(default_factory=dict)
    seed: int = 0

    def __post_init__(self):
        bit(self.attribute)
        if not 0.0 <= self.fix_typos <= 1.0:
            raise ValueError(f"fix_typos is a probability, got {self.fix_typos}")
        for name, value in self.push.items():
            bit(name)
            if name == self.attribute or value not in (0, 1):
                raise ValueError(f"push must set other attributes to 0 or 1, got {name}={value}")

    def __call__(self, reviews, codes, value: int, rng: np.random.Generator) -> np.ndarray:
        if value not in (0, 1):
            raise ValueError(f"value must be 0 or 1, got {value!r}")
        reviews, codes = np.asarray(reviews), np.asarray(codes)
        if reviews.shape != codes.shape:
            raise ValueError(f"reviews {reviews.shape} and codes {codes.shape} must pair up")
        out = with_value(codes, self.attribute, value)
        if self.consistent:  # a hash of the review: the same reviews get fixed on every call
            u = ((reviews.astype(np.uint64) * np.uint64(2654435761) + np.uint64(self.seed))
                 % np.uint64(1 << 32)) / float(1 << 32)
        else:
            u = rng.random(len(codes))
        out = with_value(out, "typos", get(out, "typos") & (u >= self.fix_typos))
        if value == 1:
            for name, v in self.push.items():
                out = with_value(out, name, v)
        return out


def rewrites(reviews, codes, rewriter: RuleRewriter, rng: np.random.Generator):
    """The versions RATE scores: ``w``, the rewrite :math:`\\text{Re}(y, 1-w)` and its rewrite back.

    Returns ``(w, once, twice)``: version codes of ``Re(y, 1-w)`` and ``Re(Re(y, 1-w), w)``.
    """
    w = get(codes, rewriter.attribute).astype(int)
    once, twice = np.empty_like(codes), np.empty_like(codes)
    for value in (0, 1):  # rewrite the W = 1 - value units to `value`, then back
        m = w == 1 - value
        once[m] = rewriter(reviews[m], codes[m], value, rng)
        twice[m] = rewriter(reviews[m], once[m], 1 - value, rng)
    return w, once, twice


ESTIMATORS = ("naive", "single rewrite", "RATE")


def estimate(w, r_obs, r_once, r_twice, level: float = 0.95) -> pd.DataFrame:
    """Naive, single-rewrite and RATE estimates of ATT, ATU and ATE with paired normal intervals.

    Parameters
    ----------
    w : array of 0/1, the attribute of each original response.
    r_obs, r_once, r_twice : arrays
        Rewards of the original :math:`y`, of :math:`\\text{Re}(y, 1-w)` and of
        :math:`\\text{Re}(\\text{Re}(y, 1-w), w)`, one per response.
    level : float, the confidence level.

    Returns
    -------
    DataFrame indexed by (estimator, target) with columns ``estimate``, ``se``, ``low``, ``high``.
    The naive contrast has no ATT/ATU of its own (it is one difference of means); it is reported
    under all three targets, as the official code does.
    """
    w = np.asarray(w)
    arrays = [np.asarray(a, dtype=float) for a in (r_obs, r_once, r_twice)]
    if w.ndim != 1 or any(a.shape != w.shape for a in arrays):
        raise ValueError("w, r_obs, r_once and r_twice must be 1-d arrays of one length (paired)")
    if not np.isin(w, (0, 1)).all():
        raise ValueError("w must hold only 0 and 1")
    if any(not np.isfinite(a).all() for a in arrays):
        raise ValueError("rewards must be finite")
    t, u = w == 1, w == 0
    if t.sum() < 2 or u.sum() < 2:
        raise ValueError(f"need at least two responses with W=1 and two with W=0, got {t.sum()} and {u.sum()}")
    r_obs, r_once, r_twice = arrays
    z = stats.norm.ppf(0.5 + level / 2)
    # Per-response contrasts (treated minus control), one per estimator.
    diffs = {
        "single rewrite": np.where(t, r_obs - r_once, r_once - r_obs),
        "RATE": np.where(t, r_twice - r_once, r_once - r_twice),
    }
    rows = {}

    def mean_se(x):
        return x.mean(), x.std(ddof=1) / np.sqrt(len(x))

    naive = r_obs[t].mean() - r_obs[u].mean()
    naive_se = np.sqrt(r_obs[t].var(ddof=1) / t.sum() + r_obs[u].var(ddof=1) / u.sum())
    for target in ("ATT", "ATU", "ATE"):
        rows[("naive", target)] = (naive, naive_se)
    for name, d in diffs.items():
        rows[(name, "ATT")] = mean_se(d[t])
        rows[(name, "ATU")] = mean_se(d[u])
        rows[(name, "ATE")] = mean_se(d)  # = n1/n ATT + n0/n ATU
    df = pd.DataFrame.from_dict(rows, orient="index", columns=["estimate", "se"])
    df.index = pd.MultiIndex.from_tuples(df.index, names=["estimator", "target"])
    df["low"] = df.estimate - z * df.se
    df["high"] = df.estimate + z * df.se
    return df


def effects_from_table(table, reviews, codes, rewriter: RuleRewriter, rng, level: float = 0.95):
    """:func:`estimate` on a sample whose rewards are looked up in ``table[review, version]``."""
    table = np.asarray(table, dtype=float)
    if table.ndim != 2 or table.shape[1] != N_VERSIONS:
        raise ValueError(f"table must have shape (n_reviews, {N_VERSIONS}), got {table.shape}")
    reviews, codes = np.asarray(reviews), np.asarray(codes)
    w, once, twice = rewrites(reviews, codes, rewriter, rng)
    return estimate(w, table[reviews, codes], table[reviews, once], table[reviews, twice], level)


def individual_effects(table, attribute: str) -> np.ndarray:
    """:math:`R(Y(1)) - R(Y(0))` for every review and version: ``(n_reviews, 16)``."""
    table = np.asarray(table, dtype=float)
    codes = np.arange(N_VERSIONS)
    return table[:, with_value(codes, attribute, 1)] - table[:, with_value(codes, attribute, 0)]


def true_effects(table, attribute: str, probs, reviews=None, codes=None) -> dict:
    """True ATT, ATU and ATE from exact counterfactuals.

    With ``reviews``/``codes``: the sample's own effects (SATT, SATU, SATE). Without: the
    population effects of the design ``probs`` over the whole pool (reviews uniform), computed
    exactly by enumerating the 16 versions.
    """
    ite = individual_effects(table, attribute)
    if reviews is not None:
        d = ite[np.asarray(reviews), np.asarray(codes)]
        w = get(codes, attribute)
        return {"ATT": d[w].mean(), "ATU": d[~w].mean(), "ATE": d.mean()}
    probs = np.asarray(probs, dtype=float)
    w = get(np.arange(N_VERSIONS), attribute)
    per_version = ite.mean(axis=0)
    return {"ATT": per_version[w] @ probs[w] / probs[w].sum(),
            "ATU": per_version[~w] @ probs[~w] / probs[~w].sum(),
            "ATE": per_version @ probs}


# --- a learned reward model on sentence embeddings -------------------------------------------

UTILITY = {"sentiment": 1.0, "typos": -1.0, "length": 0.5, "formality": 0.0}
"""Weights of the latent utility behind the simulated preference labels (no formality term)."""


def preference_pairs(pool_size: int, n_pairs: int, rng: np.random.Generator, utility=None):
    r"""Simulated human preferences: pairs of (review, version) and Bradley-Terry labels.

    :math:`P(a \succ b) = \sigma(u(a) - u(b))` with :math:`u` linear in the attributes
    (:data:`UTILITY`); returns ``(ra, ca, rb, cb, label)`` with ``label = 1`` when ``a`` wins.
    """
    utility = UTILITY if utility is None else utility
    for name in utility:
        bit(name)
    ra, rb = rng.integers(pool_size, size=(2, n_pairs))
    ca, cb = rng.integers(N_VERSIONS, size=(2, n_pairs))
    u = lambda c: sum(v * get(c, k) for k, v in utility.items())  # noqa: E731
    label = rng.random(n_pairs) < 1 / (1 + np.exp(-(u(ca) - u(cb))))
    return ra, ca, rb, cb, label.astype(int)


def fit_reward_head(emb_a, emb_b, label, C: float = 1.0):
    r"""Bradley-Terry reward head :math:`R(y) = \theta^\top e(y)` fitted on preference pairs.

    :math:`P(a\succ b) = \sigma(\theta^\top(e_a - e_b))` is a logistic regression without intercept
    on embedding differences (scikit-learn, L2 penalty ``1/C``); the pair order is randomised by
    the data, so no intercept is needed. Returns :math:`\theta`.
    """
    from sklearn.linear_model import LogisticRegression

    emb_a, emb_b, label = np.asarray(emb_a, float), np.asarray(emb_b, float), np.asarray(label)
    if emb_a.shape != emb_b.shape or emb_a.ndim != 2 or len(label) != len(emb_a):
        raise ValueError("emb_a and emb_b must be (n_pairs, dim) arrays with one label per pair")
    model = LogisticRegression(C=C, fit_intercept=False, max_iter=2000)
    model.fit(emb_a - emb_b, label)
    return model.coef_[0]


POOL_SEED, POOL_SIZE = 2025, 600
EMBEDDINGS = "rate/minilm_reviews.npz"


def main(argv=None):  # pragma: no cover - the data command, run by hand
    """``python -m icml25.rate data/rate/minilm_reviews.npz``: embed the pool's 16 versions."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("out")
    args = parser.parse_args(argv)
    pool = make_pool(POOL_SIZE, POOL_SEED)
    emb = minilm.sentence_embeddings(pool.texts).reshape(pool.size, N_VERSIONS, -1)
    np.savez_compressed(args.out, embeddings=emb.astype(np.float16),
                        digest=np.array(minilm.texts_digest(pool.texts)))


if __name__ == "__main__":  # pragma: no cover
    main()
