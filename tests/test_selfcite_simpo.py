"""SimPO on citations (icml25.selfcite.simpo): the policy's scoring, the pairs, LoRA, training.

The language model is a tiny randomly initialised Llama (no download), with a tokenizer that
maps each character to a token.
"""

from __future__ import annotations

import numpy as np
import pytest
from icml25 import selfcite as sc
from icml25.selfcite import simpo as ssp

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


class CharTokenizer:
    """One token per character (ids 3..102): enough to exercise the scoring code."""

    class _Out:
        def __init__(self, ids):
            self.input_ids = ids

    def __call__(self, text, add_special_tokens=False):
        return self._Out([3 + ord(ch) % 100 for ch in text])


def tiny_model(seed=0):
    config = transformers.LlamaConfig(vocab_size=104, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, max_position_embeddings=512)
    torch.manual_seed(seed)
    return transformers.LlamaForCausalLM(config).eval()


@pytest.fixture(scope="module")
def items():
    return sc.make_items(3, 5)


def test_citation_string():
    assert ssp.citation_string(1) == " [1]"
    assert ssp.citation_string(0b10101) == " [1][3][5]"
    assert len(ssp.SUBSETS) == 31 and ssp.SUBSETS[0] == 1 and ssp.SUBSETS[-1] == 31
    with pytest.raises(ValueError, match="at least one sentence"):
        ssp.citation_string(0)


def test_cached_scoring_equals_scoring_whole_sequences(items):
    model, tok = tiny_model(), CharTokenizer()
    sums, counts = ssp.citation_logprobs(model, tok, items[:2])
    assert sums.shape == (2, 31) and counts.shape == (31,)
    conts = ssp._citation_ids(tok)
    for k in range(2):
        pre = ssp._prefix_ids(tok, items[k])
        with torch.no_grad():
            mean = ssp._mean_logprobs(model, pre, [conts[j] for j in (0, 6, 30)]).numpy()
        np.testing.assert_allclose(sums[k, [0, 6, 30]] / counts[[0, 6, 30]], mean, rtol=1e-5)


def test_lora_starts_as_the_base_and_round_trips(items):
    tok = CharTokenizer()
    ids = torch.tensor([ssp._prefix_ids(tok, items[0])])
    base = tiny_model()
    with torch.no_grad():
        before = base(input_ids=ids).logits
    params = ssp.add_lora(base, rank=4, alpha=8.0, seed=1)
    assert len(params) == 2 * 2 * 2  # A and B, q and v, two layers
    assert all(p.requires_grad == ("lora_" in n) for n, p in base.named_parameters())
    with torch.no_grad():
        np.testing.assert_array_equal(base(input_ids=ids).logits.numpy(), before.numpy())
        for p in params[1::2]:
            p.normal_()  # a non-zero B: the adapter now changes the output
        changed = base(input_ids=ids).logits
    assert not torch.allclose(changed, before)
    other = tiny_model()
    ssp.add_lora(other, rank=4, alpha=8.0, seed=2)
    ssp.load_lora(other, ssp.lora_state(base))
    with torch.no_grad():
        np.testing.assert_allclose(other(input_ids=ids).logits.numpy(), changed.numpy(),
                                   rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="no adapter parameter"):
        ssp.load_lora(other, {"nope.lora_A.default.weight": np.zeros(1)})
    planes = ssp.pack_lora(ssp.lora_state(base))  # the committed form: lossless
    assert planes.dtype == np.uint8 and planes.shape[0] == 4
    third = tiny_model()
    ssp.add_lora(third, rank=4, alpha=8.0, seed=3)
    ssp.load_packed_lora(third, planes)
    with torch.no_grad():
        np.testing.assert_array_equal(third(input_ids=ids).logits.numpy(),
                                      other(input_ids=ids).logits.numpy())
    with pytest.raises(ValueError, match="packed adapter has shape"):
        ssp.load_packed_lora(third, planes[:, :-4])


def test_preference_pairs_choose_the_best_and_reject_the_worst():
    # the policy draws only [1] (mask 1) and [2] (mask 2); [2] has the larger reward in item
    # 0 and the smaller in item 1; item 2 always draws [1] and gives no pair
    scores = np.zeros((3, 32))
    full = 31
    scores[0, [2, full ^ 2]] = (0.0, -2.0)  # reward of [2]: 2
    scores[0, [1, full ^ 1]] = (0.0, -1.0)  # reward of [1]: 1
    scores[1, [2, full ^ 2]] = (0.0, -0.5)
    scores[1, [1, full ^ 1]] = (0.0, -3.0)
    policy = np.full((3, 31), -1e9)
    policy[:2, [0, 1]] = 0.0
    policy[2, 0] = 0.0
    pairs = ssp.preference_pairs(policy, scores, 50, seed=3)
    assert pairs == [(0, 2, 1), (1, 1, 2)]
    assert ssp.preference_pairs(policy, scores, 50, seed=3) == pairs
    # a two-sentence chosen citation gets a rejected one of two sentences (length balance)
    scores[0, [3, full ^ 3]] = (0.0, -9.0)
    policy[0, 2] = 0.0  # [1][2] (mask 3) is drawn too, and has the best reward
    (k, best, rejected), _ = ssp.preference_pairs(policy, scores, 50, seed=3)
    assert (k, best) == (0, 3) and bin(rejected).count("1") == 2 and rejected & 1
    # a chosen citation of all five sentences pads the rejected one to the same: no pair
    scores[1, [31, 0]] = (0.0, -20.0)
    policy[1] = -1e9
    policy[1, [0, 30]] = 0.0  # draws [1] and [1]..[5]
    assert [k for k, _, _ in ssp.preference_pairs(policy, scores, 50, seed=3)] == [0]
    with pytest.raises(ValueError, match="policy_sums must be"):
        ssp.preference_pairs(policy[:, :5], scores, 10, seed=0)


def test_training_raises_the_chosen_citations_margin(items):
    model, tok = tiny_model(), CharTokenizer()
    pairs = [(0, 1, 2), (1, 4, 8), (2, 16, 3)]
    conts = ssp._citation_ids(tok)
    index = {m: j for j, m in enumerate(ssp.SUBSETS.tolist())}

    def margins():
        out = []
        with torch.no_grad():
            for k, w, lose in pairs:
                m = ssp._mean_logprobs(model, ssp._prefix_ids(tok, items[k]),
                                       [conts[index[w]], conts[index[lose]]])
                out.append(float(m[0] - m[1]))
        return np.array(out)

    before = margins()
    history = ssp.train_simpo(model, tok, items, pairs, seed=0, rank=4, alpha=8.0, lr=1e-2,
                              epochs=4)
    assert len(history) == 4 and history[-1] < history[0]
    assert (margins() > before).all()
    with pytest.raises(ValueError, match="no preference pairs"):
        ssp.train_simpo(tiny_model(), tok, items, [], seed=0)


def test_f1_of_the_choice_and_of_the_distribution(items):
    gold = [sc.subset_index(it.gold) for it in items]
    sums = np.full((len(items), 31), -50.0)
    for k, g in enumerate(gold):
        sums[k, g - 1] = 0.0  # all the mass on the gold citation
    np.testing.assert_allclose(ssp.choice_f1(sums, items), 1.0)
    np.testing.assert_allclose(ssp.expected_f1(sums, items), 1.0, atol=1e-12)
    uniform = ssp.expected_f1(np.zeros((len(items), 31)), items)
    np.testing.assert_allclose(uniform, ssp.f1_table(items).mean(axis=1))
    assert (uniform < 1).all()


def test_lora_is_peft_s_layer_with_the_book_s_draw():
    """The adapter is ``peft``'s LoRA layer: its output is $W x + \\frac{\\alpha}{r} B A x$
    computed by hand, and $A$ is the book's draw from the seed (the same seed, the same $A$)."""
    from peft.tuners.lora import LoraLayer

    model = tiny_model()
    params = ssp.add_lora(model, rank=4, alpha=8.0, seed=5)
    proj = model.model.layers[1].self_attn.v_proj
    assert isinstance(proj, LoraLayer)
    again = tiny_model()
    ssp.add_lora(again, rank=4, alpha=8.0, seed=5)
    np.testing.assert_array_equal(params[0].detach().numpy(),
                                  again.model.layers[0].self_attn.q_proj.lora_A["default"]
                                  .weight.detach().numpy())
    with torch.no_grad():
        for p in params[1::2]:
            p.normal_(generator=torch.Generator().manual_seed(1))
        x = torch.randn(3, proj.in_features, generator=torch.Generator().manual_seed(2))
        a, b = proj.lora_A["default"].weight, proj.lora_B["default"].weight
        by_hand = proj.base_layer(x) + (x @ a.T @ b.T) * (8.0 / 4)
        np.testing.assert_allclose(proj(x).numpy(), by_hand.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.slow  # loads SmolLM2-135M (about half a minute)
def test_a_committed_adapter_loads_to_its_recorded_numbers():
    """The adapters of ``data/selfcite/simpo.npz``, loaded into ``peft``'s layers, give the
    citation log-probabilities the training command recorded with them (to float32 rounding:
    the file was made under the pins of an earlier commit, MKL's AVX2 branch)."""
    from icml25.common import data as book_data

    with np.load(book_data.path(ssp.RESULTS)) as f:
        planes, recorded = f["lora_seed0"], f["eval_seed0"][:3]
    model, tokenizer = sc.load_model()
    ssp.add_lora(model, rank=ssp.TRAINING["rank"], alpha=ssp.TRAINING["alpha"], seed=0)
    ssp.load_packed_lora(model, planes)
    sums, _ = ssp.citation_logprobs(model, tokenizer,
                                    sc.make_items(sc.CACHE_ITEMS, sc.CACHE_SEED)[:3])
    assert np.abs(sums - recorded).max() < 1e-4
