"""Motion transfer: sprites, keypoints, warps, metrics, Farnebäck, errors."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml25 import motion_transfer as M

torch.set_num_threads(1)


# -------------------- sprites and keypoints
def test_joints_by_hand():
    # torso along x, arms straight up/down-ish, leg straight back
    pose = np.array([16.0, 16.0, 0.0, np.pi / 2, -np.pi / 2, np.pi])
    length = np.array([8.0, 5.0, 6.0, 4.0])
    j = M.joints(pose, length)
    expected = [[12, 16], [20, 16], [20, 21], [20, 10], [8, 16]]
    assert np.allclose(j, expected)


def test_render_draws_parts_in_their_colours():
    ident = M.make_identities(1, seed=0)
    pose = np.array([[16.0, 16.0, 0.3, 0.8, -0.8, np.pi]])
    img = M.render(pose, ident)
    assert img.shape == (1, 3, M.SIZE, M.SIZE) and img.dtype == np.float32
    assert img.min() >= 0 and img.max() <= 1
    c = M.joints(pose, ident["length"])[0].mean(0)  # inside the torso, near its centre
    x, y = np.floor(pose[0, :2]).astype(int)
    assert np.allclose(img[0, :, y, x], ident["colour"][0, 0], atol=1e-6)
    assert np.allclose(img[0, :, 0, 0], M.BACKGROUND, atol=1e-6)
    assert np.isfinite(c).all()


def test_videos_are_deterministic_and_move():
    a = M.make_videos(3, 5, seed=[1, 2])
    b = M.make_videos(3, 5, seed=[1, 2])
    c = M.make_videos(3, 5, seed=[1, 3])
    assert np.array_equal(a[0], b[0]) and not np.array_equal(a[0], c[0])
    frames, poses, ident = a
    assert frames.shape == (3, 5, 3, M.SIZE, M.SIZE) and poses.shape == (3, 5, 6)
    # the pose moves linearly in time
    assert np.allclose(poses[:, 2] - poses[:, 1], poses[:, 1] - poses[:, 0])
    # the frames really are the rendered poses
    rep = {k: np.repeat(v, 5, 0) for k, v in ident.items()}
    drawn = M.render(poses.reshape(-1, 6), rep)
    assert np.allclose(frames.reshape(-1, 3, M.SIZE, M.SIZE), drawn)


def test_test_pairs_displacement_and_bins():
    p = M.test_pairs(4, 6, seed=0)
    assert p["source"].shape == (20, 3, M.SIZE, M.SIZE)
    d = np.linalg.norm(p["joints_s"] - p["joints_d"], axis=-1).mean(-1)
    assert np.allclose(d, p["displacement"])
    # later frames of one video are further from frame 0 (linear motion)
    dv = p["displacement"].reshape(4, 5)
    assert (np.diff(dv, axis=1) > -1e-9).all()
    d = [0.0, 2.99, 3.0, 5.9, 6.0, 20.0]
    assert list(M.bin_displacement(d)) == [0, 0, 1, 1, 2, 2]


# -------------------- kernels of the backbone
@settings(max_examples=25, deadline=None)
@given(st.integers(0, 15), st.integers(0, 15))
def test_soft_argmax_finds_a_sharp_peak(i, j):
    logits = torch.full((1, 1, 16, 16), -50.0)
    logits[0, 0, i, j] = 50.0
    kp = M.soft_argmax(logits)[0, 0]
    g = M.grid(16, 16)
    assert torch.allclose(kp, g[i, j], atol=1e-5)
    # and its pixel position is the pixel centre
    assert np.allclose(M.to_pixels(kp.numpy(), 16), [j + 0.5, i + 0.5], atol=1e-4)


def test_pixel_unit_round_trip():
    x = np.random.default_rng(0).uniform(0, 32, (4, 5, 2))
    assert np.allclose(M.to_pixels(M.to_unit(x)), x)


def test_zero_motion_keeps_the_source_and_shapes():
    torch.manual_seed(0)
    model = M.Animator(4, 8)
    s = torch.rand(2, 3, M.SIZE, M.SIZE)
    kp = torch.rand(2, 4, 2) * 2 - 1
    flow, occ, mask = model.motion(s, kp, kp)
    # every candidate motion is the identity, so the mixed flow is the identity grid
    assert torch.allclose(flow, M.grid(M.SIZE, M.SIZE)[None].expand_as(flow), atol=1e-5)
    assert occ.shape == (2, 1, M.SIZE, M.SIZE) and mask.shape == (2, 5, 16, 16)
    assert torch.allclose(mask.sum(1), torch.ones(2, 16, 16), atol=1e-5)
    assert model(s, s).shape == s.shape


def test_equivariance_loss_is_zero_for_an_equivariant_detector():
    # a "detector" that returns fixed points of the plane is not equivariant; a detector
    # that finds the brightest pixel is
    class Peak(torch.nn.Module):
        def forward(self, x):
            return M.soft_argmax(x[:, :1] * 200.0, temperature=1.0)

    x = torch.zeros(3, 3, 32, 32)
    x[:, :, 12:14, 18:20] = 1.0
    g = torch.Generator().manual_seed(0)
    assert float(M.equivariance_loss(Peak(), x, g, sigma=0.0)) < 1e-4


def test_bidirectional_terms_are_finite_and_differentiable():
    torch.manual_seed(0)
    model = M.Animator(4, 8)
    s, d = torch.rand(2, 3, 32, 32), torch.rand(2, 3, 32, 32)
    terms = M.bidirectional_loss(model, s, d, torch.tensor([0.3, 0.7]))
    assert set(terms) == {"chain", "agree", "keypoints"}
    total = sum(terms.values())
    total.backward()
    assert all(torch.isfinite(v) for v in terms.values())
    assert model.motion.mask.weight.grad is not None


def test_anytime_selector_and_midpoint():
    torch.manual_seed(0)
    model = M.Animator(4, 8).eval()
    p = M.test_pairs(2, 3, seed=1)
    out = M.transfer_anytime(model, p["source"], p["driving"])
    assert out["output"].shape == p["source"].shape
    assert out["candidates"].shape == (3, 4, 3, M.SIZE, M.SIZE)
    # the keypoint selector takes the candidate with the smallest score
    k = out["scores"].argmin(0)
    assert np.allclose(out["output"], out["candidates"][k, np.arange(4)])
    mid = M.transfer_anytime(model, p["source"], p["driving"], selector="midpoint")
    assert np.allclose(mid["t"], 0.5)
    assert np.allclose(mid["output"], out["candidates"][1])


# -------------------- metrics
def test_akd_mkr_by_hand():
    a = np.zeros((1, 2, 2))
    b = np.array([[[3.0, 4.0], [1.0, 0.0]]])
    akd, mkr = M.akd_mkr(a, b, radius=2.0)
    assert np.allclose(akd, [3.0]) and np.allclose(mkr, [0.5])
    assert np.allclose(M.l1(np.zeros((1, 3, 2, 2)), np.full((1, 3, 2, 2), 0.25)), 0.25)


# -------------------- the classical-flow peer
def test_farneback_recovers_a_small_shift():
    ident = M.make_identities(1, seed=4)
    pose = np.array([[16.0, 16.0, 0.5, 0.8, -0.8, np.pi]])
    s = M.render(pose, ident)
    d = M.render(pose + [[1.0, 0, 0, 0, 0, 0]], ident)
    warped = M.farneback_direct(s, d)
    assert M.l1(warped, d)[0] < 0.5 * M.l1(s, d)[0]


def test_farneback_chain_of_one_step_is_direct():
    p = M.test_pairs(1, 3, seed=2)
    frames = p["frames"][:, [0, 2]]
    assert np.allclose(M.farneback_chain(frames), M.farneback_direct(frames[:, 0],
                                                                     frames[:, 1]))


# -------------------- errors
def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="n must be positive"):
        M.make_identities(0)
    with pytest.raises(ValueError, match="need n_videos"):
        M.make_videos(2, 1)
    with pytest.raises(ValueError, match="pose must end"):
        M.joints(np.zeros(5), np.zeros(4))
    with pytest.raises(ValueError, match="edges must be increasing"):
        M.bin_displacement([1.0], edges=(5.0, 2.0))
    with pytest.raises(ValueError, match="images must be"):
        M.l1(np.zeros((2, 32, 32)), np.zeros((2, 32, 32)))
    with pytest.raises(ValueError, match="two \\(N, J, 2\\)"):
        M.akd_mkr(np.zeros((2, 5, 2)), np.zeros((2, 4, 2)))
    with pytest.raises(ValueError, match="logits must be"):
        M.soft_argmax(torch.zeros(3, 16, 16))
    model = M.Animator(4, 8)
    s = np.zeros((1, 3, 32, 32), np.float32)
    with pytest.raises(ValueError, match="fractions in \\(0, 1\\)"):
        M.transfer_anytime(model, s, s, ts=(0.0, 0.5))
    with pytest.raises(ValueError, match="selector must be"):
        M.transfer_anytime(model, s, s, selector="best")
    with pytest.raises(ValueError, match="frames must be"):
        M.farneback_chain(np.zeros((1, 1, 3, 32, 32)))
    with pytest.raises(ValueError, match="steps and batch_size"):
        M.train_animator(model, np.zeros((1, 2, 3, 32, 32), np.float32), steps=0)


def test_gain_by_bin_means_and_intervals():
    rng = np.random.default_rng(0)
    bins = np.repeat([0, 1, 2], 200)
    base = rng.normal(1.0, 0.1, 600) + 0.5 * (bins == 2)
    out = M.gain_by_bin(base, np.ones(600), bins, n_boot=500, seed=1)
    assert np.allclose(out["mean"], [base[bins == j].mean() - 1 for j in range(3)])
    assert (out["low"] <= out["mean"]).all() and (out["mean"] <= out["high"]).all()
    value, (lo, hi) = out["contrast"]
    assert lo < 0.5 < hi and abs(value - 0.5) < 0.05
    with pytest.raises(ValueError, match="one length"):
        M.gain_by_bin(base, np.ones(5), bins)


def test_separation_loss_by_hand():
    far = torch.tensor([[[-0.9, -0.9], [0.9, 0.9]]])
    same = torch.zeros(1, 2, 2)
    assert float(M.separation_loss(same)) == pytest.approx(1.0)
    d2 = 2 * 1.8 ** 2
    assert float(M.separation_loss(far, sigma=0.5)) == pytest.approx(np.exp(-d2 / 0.5))


def test_committed_models_hold_seeds_0_to_4_and_the_evaluator():
    models, (det, det_rec), config = M.load_models(4)
    assert config == M.TRAINING and set(models) == {"plain", "bidirectional"}
    assert set(det_rec) == {"history"}  # no timings
    assert all(set(rec) == {"base", "finetune"} for _, rec in models.values())
    with pytest.raises(ValueError, match=r"`python -m icml25.motion_transfer train .* --seeds N` trains seeds 0..N-1 \(N > 5"):
        M.load_models(5)
