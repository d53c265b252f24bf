"""Motion transfer, evaluation at scale: subsampled test pairs, shared Farnebäck flows,
the video bootstrap, scores with the real keypoints detected once."""

import numpy as np
import pytest
import torch
from icml25 import motion_transfer as M

torch.set_num_threads(1)


def test_test_pairs_without_subsampling_are_the_videos_pairs():
    p = M.test_pairs(3, 5, seed=[4, 1])
    frames, poses, _ = M.make_videos(3, 5, seed=[4, 1])
    assert np.array_equal(p["frames"], frames) and np.array_equal(p["poses"], poses)
    assert np.array_equal(p["source_video"], np.arange(3))
    assert np.array_equal(p["driving"], frames[p["video"], p["frame"]])


def test_test_pairs_keep_every_large_pair_and_a_subset_of_the_others():
    full = M.test_pairs(30, 8, seed=7)
    sub = M.test_pairs(30, 8, seed=7, per_bin=(10, 5, None), subsample_seed=3)
    bf, bs = M.bin_displacement(full["displacement"]), M.bin_displacement(sub["displacement"])
    assert np.bincount(bs, minlength=3).tolist() == [10, 5, int((bf == 2).sum())]
    # every kept pair is the same pair of the full set: same video, frame, images, joints
    key_full = {(v, f): i for i, (v, f) in enumerate(zip(full["video"], full["frame"]))}
    for i, (v, f) in enumerate(zip(sub["source_video"][sub["video"]], sub["frame"])):
        j = key_full[(v, f)]
        assert np.array_equal(sub["driving"][i], full["driving"][j])
        assert np.array_equal(sub["source"][i], full["source"][j])
        assert np.allclose(sub["joints_d"][i], full["joints_d"][j])
        assert sub["displacement"][i] == full["displacement"][j]
    # only the videos with a kept pair are rendered, and the draw is reproducible
    assert len(sub["frames"]) == len(np.unique(sub["video"])) <= 30
    again = M.test_pairs(30, 8, seed=7, per_bin=(10, 5, None), subsample_seed=3)
    other = M.test_pairs(30, 8, seed=7, per_bin=(10, 5, None), subsample_seed=4)
    assert np.array_equal(again["driving"], sub["driving"])
    assert not np.array_equal(other["frame"], sub["frame"]) or not np.array_equal(
        other["source_video"], sub["source_video"])
    with pytest.raises(ValueError, match="per_bin needs 3"):
        M.test_pairs(3, 5, per_bin=(1, 2))


def test_farneback_chain_pairs_is_the_chain_of_each_pair():
    p = M.test_pairs(2, 6, seed=5)
    out = M.farneback_chain_pairs(p["frames"], p["video"], p["frame"])
    for i, (v, f) in enumerate(zip(p["video"], p["frame"])):
        assert np.array_equal(out[i], M.farneback_chain(p["frames"][v:v + 1, :f + 1])[0])
    with pytest.raises(ValueError, match="frame lie in"):
        M.farneback_chain_pairs(p["frames"], [0], [6])


def test_video_bootstrap_sees_the_clusters():
    # 200 videos of 5 identical pairs: the pairs carry the information of 200, not 1000,
    # so the interval is about 1.96 sd / sqrt(200) wide each side, not sd / sqrt(1000)
    rng = np.random.default_rng(0)
    per_video = rng.normal(0.0, 1.0, 200)
    gain = np.repeat(per_video, 5)
    bins = np.full(1000, 2)
    groups = np.repeat(np.arange(200), 5)
    clustered = M.gain_by_bin(gain, np.zeros(1000), bins, groups=groups, n_boot=4000,
                              seed=1)
    naive = M.gain_by_bin(gain, np.zeros(1000), bins, n_boot=4000, seed=1)
    expect = 1.96 * per_video.std() / np.sqrt(200)
    half = (clustered["high"][0] - clustered["low"][0]) / 2
    assert half == pytest.approx(expect, rel=0.1)
    assert (naive["high"][0] - naive["low"][0]) / 2 == pytest.approx(expect / np.sqrt(5),
                                                                      rel=0.1)
    assert clustered["mean"][0] == pytest.approx(gain.mean())
    # a contrast of two bins inside the same videos: the shared video effect cancels
    bins2 = np.tile([0, 0, 2, 2, 2], 200)
    shift = np.where(bins2 == 2, 0.3, 0.0)
    out = M.gain_by_bin(gain + shift, np.zeros(1000), bins2, groups=groups, n_boot=2000,
                        seed=2)
    value, (lo, hi) = out["contrast"]
    assert value == pytest.approx(0.3) and hi - lo < 1e-9 + 1e-6
    with pytest.raises(ValueError, match="one label per pair"):
        M.gain_by_bin(gain, np.zeros(1000), bins, groups=groups[:10])


def test_scores_with_the_real_keypoints_given():
    _, (det, _), _ = M.load_models(0)
    p = M.test_pairs(2, 4, seed=1)
    gen = p["source"]
    a = M.scores(det, gen, p)
    b = M.scores(det, gen, p, real=M.detect(det, p["driving"]))
    assert all(np.array_equal(a[k], b[k]) for k in ("akd", "mkr", "l1"))
