"""Clinical rationales: phantoms, metrics, losses, models, errors."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml25 import rationales as R

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def phantoms():
    return R.make_phantoms(40, 24, seed=3)


# -------------------- the phantoms
def test_phantom_shapes_and_types(phantoms):
    n, s, k = 40, 24, len(R.CONCEPTS)
    assert phantoms.images.shape == (n, 3, s, s) and phantoms.images.dtype == np.float32
    assert phantoms.zones.shape == (n, s, s) and set(np.unique(phantoms.zones)) <= {0, 1, 2}
    assert phantoms.lesion_masks.shape == (n, 2, s, s)
    assert phantoms.labels.shape == (n, k)
    assert phantoms.evidence.shape == (n, k, s, s)
    assert len(phantoms.rationales) == n and len(phantoms) == n


def test_phantoms_are_deterministic_given_the_seed():
    a, b = R.make_phantoms(8, 20, seed=[1, 2]), R.make_phantoms(8, 20, seed=[1, 2])
    c = R.make_phantoms(8, 20, seed=[1, 3])
    assert np.array_equal(a.images, b.images) and a.rationales == b.rationales
    assert not np.array_equal(a.images, c.images)


def test_lesions_lie_in_their_zone_and_labels_match_attributes(phantoms):
    for i in range(len(phantoms)):
        for z in range(2):
            mask = phantoms.lesion_masks[i, z]
            present = phantoms.attributes[i, z, 0] == 1
            assert mask.any() == present
            assert (phantoms.zones[i][mask] == z + 1).all()
            if present:
                assert phantoms.labels[i, R.GROUP_START["location"] + z]
                margin = phantoms.attributes[i, z, 1]
                assert phantoms.labels[i, R.GROUP_START["margin"] + margin]
        # each concept of the rationale has evidence, and only those
        assert np.array_equal(phantoms.labels[i], phantoms.evidence[i].any((1, 2)))
    assert np.array_equal(phantoms.lesion, phantoms.lesion_masks.any(1))


def test_scores_follow_the_rule_and_the_text_names_them(phantoms):
    for i in range(len(phantoms)):
        att = phantoms.attributes[i]
        scores = [R.pirads(*att[z, 1:]) for z in range(2) if att[z, 0] == 1]
        assert phantoms.score[i] == (max(scores) if scores else 1)
        assert phantoms.rationales[i].endswith(f"PI-RADS {phantoms.score[i]}.")


def test_lesion_counts_follow_their_probabilities():
    none = R.make_phantoms(30, 20, seed=0, p_lesions=(1, 0, 0))
    two = R.make_phantoms(30, 20, seed=0, p_lesions=(0, 0, 1))
    assert (none.n_lesions == 0).all() and not none.labels.any()
    assert (two.n_lesions >= 1).all() and (two.n_lesions == 2).mean() > 0.8


def test_shifted_scanner_changes_images_not_masks():
    a = R.make_phantoms(5, 20, seed=4)
    b = R.make_phantoms(5, 20, seed=4, scanner=R.SCANNER_B)
    assert np.array_equal(a.zones, b.zones) and np.array_equal(a.evidence, b.evidence)
    assert not np.allclose(a.images, b.images)


@pytest.mark.parametrize("kwargs", [dict(n=0), dict(n=2.5), dict(size=8),
                                    dict(p_lesions=(0.5, 0.5, 0.5)), dict(p_nodule=1.5),
                                    dict(scanner=R.Scanner(gamma=0))])
def test_bad_generator_input_raises(kwargs):
    args = dict(n=4, size=20) | kwargs
    with pytest.raises(ValueError):
        R.make_phantoms(args.pop("n"), **args)


def test_pirads_rejects_non_binary():
    assert R.pirads(0, 0, 0) == 2 and R.pirads(1, 1, 1) == 5
    with pytest.raises(ValueError, match="margin"):
        R.pirads(2, 0, 0)


# -------------------- metrics
def test_dice_and_iou_on_known_masks():
    a = np.zeros((4, 4), bool)
    b = np.zeros((4, 4), bool)
    a[:2, :2] = True          # 4 pixels
    b[:2, :] = True           # 8 pixels, 4 shared
    assert R.dice(a, b) == pytest.approx(2 * 4 / 12)
    assert R.iou(a, b) == pytest.approx(4 / 8)
    assert R.dice(np.zeros((3, 3)), np.zeros((3, 3))) == 1.0
    assert R.dice(np.zeros((3, 3)), np.zeros((3, 3)), empty=0.0) == 0.0
    assert R.dice(a, ~a) == 0.0


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_dice_iou_identity(seed):
    rng = np.random.default_rng(seed)
    p, t = rng.random((3, 5, 6)) < 0.4, rng.random((3, 5, 6)) < 0.4
    d, j = R.dice(p, t), R.iou(p, t)
    both = (p | t).any((1, 2))
    assert np.allclose(d[both], 2 * j[both] / (1 + j[both]))
    assert ((0 <= d) & (d <= 1)).all() and np.allclose(R.dice(p, p), 1)


def test_pointing_game_on_known_maps():
    ev = np.zeros((2, 5, 5), bool)
    ev[:, 1, 1] = True
    heat = np.zeros((2, 5, 5))
    heat[0, 1, 1] = 1.0       # points at the evidence
    heat[1, 3, 3] = 1.0       # two pixels off diagonally
    assert R.pointing_game(heat, ev).tolist() == [True, False]
    assert R.pointing_game(heat, ev, tolerance=2).tolist() == [True, True]
    assert R.pointing_game(heat, ev, tolerance=1).tolist() == [True, False]


def test_iou_at_area_ranks_only():
    ev = np.zeros((6, 6), bool)
    ev[2:4, 2:4] = True
    perfect = ev * 5.0 + 0.1
    assert R.iou_at_area(perfect, ev) == pytest.approx(1.0)
    assert R.iou_at_area(2 * perfect - 3, ev) == pytest.approx(1.0)   # monotone: same
    assert R.iou_at_area(-perfect, ev) == pytest.approx(0.0)


def test_random_maps_score_near_chance():
    rng_ev = np.random.default_rng(0).random((400, 10, 10)) < 0.1
    rng_ev[:, 0, 0] = True
    hits = R.pointing_game(R.random_maps(rng_ev.shape, seed=1), rng_ev).mean()
    share = rng_ev.mean()
    assert abs(hits - share) < 0.05


@pytest.mark.parametrize("call", [
    lambda: R.dice(np.ones((3, 3)), np.ones((3, 4))),
    lambda: R.dice(np.full((3, 3), 0.5), np.ones((3, 3))),
    lambda: R.iou(np.ones(3), np.ones(3)),
    lambda: R.pointing_game(np.ones((3, 3)), np.zeros((3, 3), bool)),
    lambda: R.pointing_game(np.full((3, 3), np.nan), np.ones((3, 3), bool)),
    lambda: R.pointing_game(np.ones((3, 3)), np.ones((3, 3), bool), tolerance=-1),
    lambda: R.iou_at_area(np.ones((2, 3, 3)), np.ones((3, 3), bool)),
    lambda: R.standardise(np.ones((3, 3))),
])
def test_bad_metric_input_raises(call):
    with pytest.raises(ValueError):
        call()


# -------------------- models and losses
def test_models_shapes_and_heat_maps(phantoms):
    text = np.random.default_rng(0).normal(size=(len(R.TEXTS), 12)).astype(np.float32)
    model = R.RationaleModel(text, width=4, dim=6).eval()
    x = torch.as_tensor(R.standardise(phantoms.images[:3]))
    zone, lesion, e = model(x)
    assert zone.shape == (3, 3, 24, 24) and lesion.shape == (3, 24, 24)
    assert torch.allclose(e.norm(dim=1), torch.ones(3, 24, 24), atol=1e-5)
    h = model.heat_maps(e)
    assert h.shape == (3, len(R.TEXTS), 24, 24) and h.abs().max() <= 1 + 1e-5
    with pytest.raises(ValueError, match="TEXTS"):
        R.RationaleModel(text[:3])


def test_disentangle_loss_is_zero_for_orthonormal_and_one_for_parallel():
    eye = torch.eye(5)
    assert R.disentangle_loss(eye).item() == pytest.approx(0.0)
    same = torch.ones(5, 3) / 3 ** 0.5
    assert R.disentangle_loss(same).item() == pytest.approx(1.0, abs=1e-5)


def test_align_loss_prefers_embeddings_that_match_the_concepts(phantoms):
    t = torch.eye(len(R.TEXTS))
    masks = torch.as_tensor(phantoms.lesion_masks)
    attrs = torch.as_tensor(phantoms.attributes.astype(np.int64))
    n, _, h, w = masks.shape
    # the right embedding: lesion pixels point to the sum of their lesion's concepts
    good = torch.zeros(n, len(R.TEXTS), h, w)
    good[:, len(R.CONCEPTS)] = 1.0
    for i, z in zip(*np.nonzero(phantoms.attributes[:, :, 0] == 1)):
        vec = torch.zeros(len(R.TEXTS))
        a = phantoms.attributes[i, z]
        for g, v in (("location", z), ("margin", a[1]), ("texture", a[2]),
                     ("intensity", a[3]), ("diffusion", 0)):
            vec[R.GROUP_START[g] + v] = 1
        good[i][:, masks[i, z]] = (vec / vec.norm())[:, None]
    bad = torch.roll(good, 1, dims=1)
    assert R.align_loss(good, t, masks, attrs) < R.align_loss(bad, t, masks, attrs)


def test_training_is_deterministic_and_lowers_the_loss(phantoms):
    def fit():
        torch.manual_seed(0)
        model = R.SmallUNet(4)
        return R.train(model, phantoms, epochs=3, batch_size=20, seed=5), model
    h1, m1 = fit()
    h2, m2 = fit()
    assert h1 == h2 and h1[-1] < h1[0]
    seg = R.segment(m1, phantoms.subset(slice(0, 5)))
    assert seg["zones"].shape == (5, 24, 24) and seg["lesion"].dtype == bool


def test_gradcam_maps_shape(phantoms):
    model = R.ConceptClassifier(4).eval()
    small = phantoms.subset(slice(0, 3))
    for layer in ("dec1", "bottleneck"):
        maps = R.gradcam_maps(model, small, layer)
        assert maps.shape == (3, len(R.CONCEPTS), 24, 24) and (maps >= 0).all()
    with pytest.raises(ValueError, match="layer"):
        R.gradcam_maps(model, small, "enc1")


def test_bad_training_input_raises(phantoms):
    with pytest.raises(ValueError):
        R.train(R.SmallUNet(4), phantoms, epochs=0)
    with pytest.raises(ValueError, match="cannot train"):
        R.train(torch.nn.Linear(2, 2), phantoms)


def test_train_models_records_every_model_and_committed_seeds_are_checked():
    tiny = dict(R.TRAINING, size=20, n_train=16, n_low=8, epochs=1, batch_size=8)
    text = np.random.default_rng(0).normal(size=(len(R.TEXTS), 8)).astype(np.float32)
    out = R.train_models(0, tiny, text, names=["unet", "rationale_low"])
    assert set(out) == {"unet", "rationale_low"}
    assert out["unet"][1]["epochs"] == 1 and out["rationale_low"][1]["epochs"] == 2
    assert len(out["rationale_low"][1]["history"]) == 2
    assert set(out["unet"][1]) == {"history", "n_train", "epochs"}  # no timings
    with pytest.raises(ValueError, match="seeds"):
        R.load_models(99)
    with pytest.raises(ValueError, match="kind"):
        R.build("MLP", text, tiny)


def test_committed_models_hold_seeds_0_to_4_without_timings():
    models, config = R.load_models(4)
    assert config == R.TRAINING and set(models) == set(R.MODELS)
    assert all(set(rec) == {"history", "n_train", "epochs"} for _, rec in models.values())
    with pytest.raises(ValueError, match=r"`python -m icml25.rationales train .* --seeds N` trains seeds 0..N-1 \(N > 5"):
        R.load_models(5)
