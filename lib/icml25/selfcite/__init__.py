r"""SelfCite: citations rewarded by context ablation (Chuang et al., ICML 2025).

Everything public is re-exported here (``from icml25 import selfcite as sc``; ``sc.reward``, ...).

* :mod:`.citations`: the reward (Drop, Hold, their sum), best-of-N with the length guard, the
  SimPO loss and length balancing; the synthetic questions and their exact scoring; the
  baselines (lexical overlap, ContextCite's surrogate); the judge, SmolLM2-135M-Instruct, and
  its score tables (``python -m icml25.selfcite data/selfcite/scores.npz``, and
  ``data/selfcite/pronoun.npz`` with ``--style pronoun --jobs 2``).
* :mod:`.simpo`: the reward as a training signal: preference pairs by best-of-N on the model's
  own citations, a LoRA adapter trained with SimPO, the model's citations before and after
  (``python -m icml25.selfcite.simpo``, imported on its own: it needs torch).
"""

from .citations import (
                        CACHE,
                        CACHE_ITEMS,
                        CACHE_SEED,
                        CACHES,
                        DISTRACTOR_KINDS,
                        GUARD_PENALTY,
                        N_SENTENCES,
                        REWARDS,
                        SELECTORS,
                        STYLES,
                        Item,
                        best_of_n,
                        candidate_rewards,
                        citation_prf,
                        fit_surrogate,
                        item_texts,
                        length_balance,
                        length_guard,
                        lexical_scores,
                        load_cache,
                        load_model,
                        make_items,
                        mask_of,
                        prompt,
                        propose_candidates,
                        reward,
                        score_subsets,
                        select,
                        sentence_tokens,
                        simpo_loss,
                        statement_logprobs,
                        subset_index,
                        surrogate_weights,
                        texts_digest,
)

__all__ = [
    "CACHE", "CACHE_ITEMS", "CACHE_SEED", "CACHES", "DISTRACTOR_KINDS", "GUARD_PENALTY",
    "Item", "N_SENTENCES", "REWARDS", "SELECTORS", "STYLES", "best_of_n",
    "candidate_rewards",
    "citation_prf", "fit_surrogate", "item_texts", "length_balance", "length_guard",
    "lexical_scores", "load_cache", "load_model", "make_items", "mask_of", "prompt",
    "propose_candidates", "reward", "score_subsets", "select", "sentence_tokens", "simpo_loss",
    "statement_logprobs", "subset_index", "surrogate_weights", "texts_digest",
]
