"""CELL-Diff: synthetic cells, motifs, metrics, the objective, the model, errors."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml25 import cell_diff as C
from icml25.cell_diff.model import _to_model

torch.set_num_threads(1)

SMALL = dict(C.TRAINING, d=16, depth=1, heads=2, steps=3, no_sequence_steps=3,
             regression_steps=3, batch=8, n_train=40)


@pytest.fixture(scope="module")
def cells():
    return C.make_cells(64, seed=3)


# -------------------- the synthetic cells
def test_cells_shapes_and_determinism(cells):
    assert cells.protein.shape == (64, 16, 16) and cells.protein.dtype == np.float32
    assert cells.morphology.shape == (64, 2, 16, 16)
    assert cells.masks.shape == (64, 4, 16, 16) and cells.sequences.shape == (64, 24)
    again = C.make_cells(64, seed=3)
    assert np.array_equal(cells.protein, again.protein)
    assert not np.array_equal(cells.protein, C.make_cells(64, seed=4).protein)
    assert len(cells.subset(slice(0, 5))) == 5


def test_compartments_nest_and_protein_sits_in_its_compartment(cells):
    nuc, nol, cyt, rim = (cells.masks[:, j] for j in range(4))
    assert (nol <= nuc).all() and not (nuc & cyt).any()
    assert nol.any((1, 2)).all() and rim.any((1, 2)).all()
    own = cells.masks[np.arange(len(cells)), cells.labels]
    inside = (cells.protein * own).sum((1, 2)) / cells.protein.sum((1, 2))
    assert inside.min() > 0.5  # the blur spills light out of small compartments


def test_every_sequence_carries_exactly_its_motif(cells):
    hits = C.motif_hits(cells.sequences)
    assert hits[np.arange(len(cells)), cells.labels].all()
    assert hits.sum(1).mean() < 1.1


def test_motif_detectors_on_hand_made_sequences():
    def tok(s):
        return np.array([[C.AMINO.index(a) for a in s]])

    assert C.motif_hits(tok("AAAAAPKKKRKVAAAAAAAAAAAA"))[0].tolist() == [1, 0, 0, 0]
    assert C.motif_hits(tok("AAAAAPKKKAKVAAAAAAAAAAAA"))[0, 0]  # one mismatch allowed
    assert not C.motif_hits(tok("AAAAAPKAKAKVAAAAAAAAAAAA"))[0, 0]
    assert C.motif_hits(tok("AAAARRGRGRRAAAAAAAAAAAAA"))[0].tolist() == [0, 1, 0, 0]
    assert C.motif_hits(tok("AAAALDEKLSTLQLAAAAAAAAAA"))[0].tolist() == [0, 0, 1, 0]
    assert C.motif_hits(tok("AAAAIIVVLFFIAAAAAAAAAAAA"))[0].tolist() == [0, 0, 0, 1]
    assert not C.motif_hits(tok("AAAAIIVVLFAAAAAAAAAAAAAA"))[0, 3]  # 6 is too short
    masked = np.full((1, 24), C.MASK)
    assert not C.motif_hits(masked).any()


# -------------------- metrics
def test_iou_paper_by_hand():
    real = np.zeros((1, 4, 4))
    real[0, :2] = 1  # top half bright: B is the top half
    gen = np.zeros((1, 4, 4))
    gen[0, :, :2] = 1  # left half bright: A is the left half
    assert C.iou_paper(real, real)[0] == 1
    assert C.iou_paper(gen, real)[0] == pytest.approx(4 / 12)


def test_iou_at_area_by_hand():
    img = np.arange(16, dtype=float).reshape(1, 4, 4)
    mask = np.zeros((1, 4, 4), bool)
    mask[0, 3] = True  # the four brightest pixels
    assert C.iou_at_area(img, mask)[0] == 1
    assert C.iou_at_area(-img, mask)[0] == 0


def test_radial_psd_dc_parseval_and_constant_image():
    rng = np.random.default_rng(0)
    x = rng.random((3, 16, 16))
    p = C.radial_psd(x, total=1000)
    assert p[:, 0] == pytest.approx(1000**2 / 256)
    # Parseval: the PSD over all frequencies sums to the energy of the scaled image,
    # and the rings up to radius 8 miss only the corners
    scaled = x * 1000 / x.sum((1, 2), keepdims=True)
    assert (p.sum(1) <= (scaled**2).sum((1, 2)) + 1e-6).all()
    flat = C.radial_psd(np.ones((1, 16, 16)))
    assert flat[0, 1:] == pytest.approx(0, abs=1e-9)


def test_msf_resolution_and_high_frequencies_order_blur():
    from scipy.ndimage import gaussian_filter

    rng = np.random.default_rng(1)
    x = rng.random((8, 16, 16))
    blurred = gaussian_filter(x, (0, 1.5, 1.5))
    assert (C.high_frequency_fraction(blurred) < C.high_frequency_fraction(x)).all()
    sharp = C.msf_resolution(x, 100, threshold=50.0)
    soft = C.msf_resolution(blurred, 100, threshold=50.0)
    assert (soft >= sharp).all() and soft.mean() > sharp.mean()
    assert C.msf_resolution(np.ones((1, 16, 16)), 100, 1.0)[0] == pytest.approx(1600)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**16), st.floats(0.1, 10))
def test_metrics_are_scale_invariant(seed, scale):
    x = np.random.default_rng(seed).random((2, 16, 16))
    assert np.allclose(C.radial_psd(x), C.radial_psd(scale * x))
    assert np.allclose(C.iou_paper(x, x[::-1]), C.iou_paper(scale * x, x[::-1]))


def test_classifier_reads_real_images(cells):
    train = C.make_cells(400, seed=5)
    clf = C.LocalisationClassifier(train)
    assert (clf.predict(cells.protein, cells) == cells.labels).mean() > 0.95


def test_kmer_features_and_retrieval(cells):
    f = C.kmer_features(np.array([[0, 1, 0, 1]]), k=2)
    assert f.shape == (1, 400) and f.sum() == 3 and f[0, 1] == 2 and f[0, 20] == 1
    out = C.retrieve_images(cells, cells.sequences[:5])
    assert np.array_equal(out, cells.protein[:5])  # a cell's nearest neighbour is itself


# -------------------- the objective and the model
def test_oaardm_mask_counts_are_uniform():
    g = torch.Generator().manual_seed(0)
    m = C.oaardm_mask(20000, 6, g)
    counts = m.sum(1).numpy()
    assert counts.min() == 1 and counts.max() == 6
    freq = np.bincount(counts, minlength=7)[1:] / len(counts)
    assert np.allclose(freq, 1 / 6, atol=0.015)
    # positions are masked equally often (the order is uniform)
    assert np.allclose(m.float().mean(0).numpy(), 3.5 / 6, atol=0.02)


def test_scheduler_is_the_cosine_schedule_with_200_steps():
    s = C.scheduler("ddpm")
    assert s.config.num_train_timesteps == 200
    t = np.arange(201) / 200
    f = np.cos((t + 0.008) / 1.008 * np.pi / 2) ** 2
    betas = np.minimum(1 - f[1:] / f[:-1], 0.999)
    assert np.allclose(s.betas.numpy(), betas, atol=1e-6)


@pytest.fixture
def torch_roots_correctly_rounded(monkeypatch):
    """diffusers' float32 ``** 0.5`` with the book's correctly rounded root, so that the
    book's steps can be compared with diffusers' bit for bit."""
    from icml25.common.optim import sqrt

    power = torch.Tensor.__pow__
    monkeypatch.setattr(torch.Tensor, "__pow__",
                        lambda x, e: sqrt(x) if e == 0.5 else power(x, e))


@pytest.mark.parametrize("kind", ["ddim", "ddpm"])
def test_the_book_s_steps_are_diffusers_with_a_correctly_rounded_root(
        kind, torch_roots_correctly_rounded):
    sched = C.scheduler(kind)
    sched.set_timesteps(10 if kind == "ddim" else C.T_TRAIN)
    g = torch.Generator().manual_seed(0)
    x0, noise = torch.randn(6, 1, 8, 8, generator=g), torch.randn(6, 1, 8, 8, generator=g)
    t = torch.tensor([0, 1, 57, 120, 198, 199])
    assert torch.equal(C.add_noise(sched, x0, noise, t), sched.add_noise(x0, noise, t))
    x = torch.randn(6, 1, 8, 8, generator=g)
    for step in sched.timesteps[[0, 1, -2, -1]]:  # the last step has no earlier alpha-bar
        eps = torch.randn(6, 1, 8, 8, generator=g)
        ours = C.denoise_step(sched, eps, step, x, torch.Generator().manual_seed(1))
        theirs = sched.step(eps, step, x, generator=torch.Generator().manual_seed(1))
        assert torch.equal(ours, theirs.prev_sample), int(step)


def test_unified_loss_switch_and_gradients(cells):
    model = C.build("cell_diff", SMALL)
    x0, morph, seq = _to_model(cells)
    g = torch.Generator().manual_seed(0)
    total, img, sl = C.unified_loss(model, x0, morph, seq, g, C.scheduler())
    assert total.item() == pytest.approx(img.item() + sl.item(), rel=1e-6)
    # a fresh model's residue logits are near uniform: CE close to log 20
    assert sl.item() == pytest.approx(np.log(20), rel=0.3)
    total.backward()
    assert model.out_seq.weight.grad.abs().sum() > 0
    # with p_image = 1 there is no sequence term
    _, _, none = C.unified_loss(model, x0, morph, seq, g, C.scheduler(), p_image=1.0)
    assert none.item() == 0


def test_sequence_loss_ignores_visible_positions(cells):
    """Changing the logits of visible positions cannot change the sequence loss."""
    model = C.build("cell_diff", SMALL)
    x0, morph, seq = _to_model(cells.subset(slice(0, 8)))
    loss_a = C.unified_loss(model, x0, morph, seq, torch.Generator().manual_seed(4),
                            C.scheduler(), p_image=0.0)[2]
    g = torch.Generator().manual_seed(4)
    torch.rand(8, generator=g)  # reproduce the draws to find the mask
    torch.randint(0, 200, (8,), generator=g)
    torch.randn(x0.shape, generator=g)
    masked = C.oaardm_mask(8, 24, g)
    with torch.no_grad():
        _, logits = model(x0, morph, torch.where(masked, C.MASK, seq),
                            torch.zeros(8, dtype=torch.long))
        ce = torch.nn.functional.cross_entropy(logits.transpose(1, 2), seq,
                                               reduction="none")
    expect = ((ce * masked).sum(1) / masked.sum(1)).mean()
    assert loss_a.item() == pytest.approx(expect.item(), rel=1e-5)


def test_model_shapes_and_no_sequence_variant(cells):
    for name in C.MODELS:
        m = C.build(name, SMALL)
        x0, morph, seq = _to_model(cells.subset(slice(0, 3)))
        img, logits = m(x0, morph, seq, torch.tensor([0, 5, 199]))
        assert img.shape == (3, 1, 16, 16)
        assert (logits is None) == (name == "no_sequence")
        if logits is not None:
            assert logits.shape == (3, 24, 20)


def test_no_sequence_model_ignores_the_sequence(cells):
    m = C.build("no_sequence", SMALL).eval()
    sub = cells.subset(slice(0, 4))
    a = C.sample_images(m, sub, steps=3, seed=1)
    b = C.sample_images(m, sub, steps=3, seed=1, sequences=sub.sequences[::-1].copy())
    assert np.array_equal(a, b)


def test_training_runs_and_sampling_is_seeded(cells):
    model, rec = C.train_model("cell_diff", cells, SMALL, seed=0)
    assert len(rec["image"]) == 3 and np.isfinite(rec["image"]).all()
    sub = cells.subset(slice(0, 4))
    a = C.sample_images(model, sub, steps=4, seed=2)
    assert a.shape == (4, 16, 16) and 0 <= a.min() and a.max() <= 1
    assert np.array_equal(a, C.sample_images(model, sub, steps=4, seed=2))
    s = C.sample_sequences(model, sub, seed=2)
    assert s.shape == (4, 24) and s.max() < 20 and s.min() >= 0
    assert np.array_equal(s, C.sample_sequences(model, sub, seed=2))
    reg, _ = C.train_model("regression", cells, SMALL, seed=0)
    assert C.predict_regression(reg, sub).shape == (4, 16, 16)


# -------------------- errors
def test_bad_inputs_raise_clear_errors(cells):
    with pytest.raises(ValueError, match="n >= 1"):
        C.make_cells(0)
    with pytest.raises(ValueError, match="integer array"):
        C.motif_hits(np.zeros((2, 3), float))
    with pytest.raises(ValueError, match="0..20"):
        C.motif_hits(np.full((1, 24), 21))
    with pytest.raises(ValueError, match="shape"):
        C.iou_paper(np.zeros((1, 4, 4)), np.zeros((1, 5, 5)))
    with pytest.raises(ValueError, match=r"\(n, H, H\)"):
        C.radial_psd(np.zeros((4, 4)))
    with pytest.raises(ValueError, match="positive"):
        C.msf_resolution(np.zeros((1, 4, 4)), 0, 1)
    with pytest.raises(ValueError, match="cutoff"):
        C.high_frequency_fraction(np.zeros((1, 4, 4)), 1.5)
    with pytest.raises(ValueError, match="'ddpm' or 'ddim'"):
        C.scheduler("euler")
    with pytest.raises(ValueError, match="model must be one of"):
        C.build("vae", SMALL)
    with pytest.raises(ValueError, match="multiple of the patch"):
        C.UnifiedNet(size=18, patch=4)
    with pytest.raises(ValueError, match="steps"):
        C.sample_images(C.build("cell_diff", SMALL), cells, steps=0)
    with pytest.raises(ValueError, match="no sequence head"):
        C.sample_sequences(C.build("no_sequence", SMALL), cells)
    with pytest.raises(ValueError, match="temperature"):
        C.sample_sequences(C.build("cell_diff", SMALL), cells, temperature=0)
    with pytest.raises(ValueError,
                       match=r"seeds \[0, 1, 2, 3, 4\], not 5; `python -m icml25.cell_diff train"):
        C.load_models(C.TRAINING_SEEDS)  # the committed file holds seeds 0 .. TRAINING_SEEDS - 1


# -------------------- training seeds and the committed models
def _weights(models):
    return {name: {k: v.clone() for k, v in m.state_dict().items()}
            for name, (m, _) in models.items()}


def _same(a, b):
    return all(torch.equal(a[n][k], b[n][k]) for n in a for k in a[n])


def test_training_is_deterministic_and_seeds_are_independent():
    """A few steps twice give identical weights and curves; another seed other ones."""
    first = C.train_models(0, SMALL)
    again = C.train_models(0, SMALL)
    other = C.train_models(1, SMALL)
    assert set(first) == set(C.MODELS)
    assert _same(_weights(first), _weights(again))
    for name in C.MODELS:
        assert np.array_equal(first[name][1]["image"], again[name][1]["image"])
    w0, w1 = _weights(first), _weights(other)
    assert not any(torch.equal(w0[n]["embed_img.weight"], w1[n]["embed_img.weight"])
                   for n in C.MODELS)


def test_committed_file_holds_the_three_training_seeds():
    from icml25.common import checkpoints
    from icml25.common import data as book_data

    ckpt = checkpoints.load(book_data.path(C.CHECKPOINT))
    assert sorted(ckpt.seeds) == list(range(C.TRAINING_SEEDS)) == [0, 1, 2, 3, 4]
    assert ckpt.config == C.TRAINING
    first = {n: w["embed_img.weight"] for n, w in ckpt.seeds[0].items()}
    for s in (1, 2):  # each seed trained its own models
        assert set(ckpt.seeds[s]) == set(C.MODELS)
        assert not any(torch.equal(first[n], ckpt.seeds[s][n]["embed_img.weight"])
                       for n in C.MODELS)
    models, config = C.load_models(2)
    assert set(models) == set(C.MODELS) and config == C.TRAINING
    assert len(models["cell_diff"][1]["image"]) == C.TRAINING["steps"]
