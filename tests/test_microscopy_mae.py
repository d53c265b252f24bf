"""Tests of icml25.microscopy_mae: the screen, the MAE, curation, probes and EFAAR
metrics."""

import numpy as np
import pytest
import torch

from icml25 import microscopy_mae as M


@pytest.fixture(scope="module")
def screen():
    return M.make_screen(n_pathways=3, pathway_size=3, n_null=3, n_plates=3,
                         controls_per_plate=4, crops_per_well=2, seed=1)


def test_screen_layout(screen):
    n_genes = 3 * 3 + 3
    assert screen.images.shape == (len(screen.crop_well), 4, 24, 24)
    assert len(screen.well_gene) == 3 * (n_genes + 4)
    assert (np.bincount(screen.well_gene[screen.well_gene >= 0]) == 3).all()
    assert (screen.gene_effect[screen.gene_pathway < 0] == 0).all()
    norms = np.linalg.norm(screen.gene_effect[screen.gene_pathway >= 0], axis=1)
    assert np.allclose(norms, 2.5)  # the default effect size
    assert screen.is_control.sum() == 12


def test_screen_deterministic():
    a = M.make_screen(n_pathways=2, pathway_size=2, n_null=1, crops_per_well=1, seed=3)
    b = M.make_screen(n_pathways=2, pathway_size=2, n_null=1, crops_per_well=1, seed=3)
    assert np.array_equal(a.images, b.images)


def test_pathway_genes_share_direction():
    s = M.make_screen(n_pathways=4, pathway_size=3, n_null=0, within_pathway=0.1,
                      crops_per_well=1, seed=0)
    u = s.gene_effect
    cos = u @ u.T
    same = s.gene_pathway[:, None] == s.gene_pathway[None]
    off = ~np.eye(len(u), dtype=bool)
    assert cos[same & off].min() > 0.9


def test_bad_screen_input():
    with pytest.raises(ValueError, match="n_plates"):
        M.make_screen(n_plates=1)
    with pytest.raises(ValueError, match="traits"):
        M.render_cells(np.zeros((3, 2)))


def test_render_traits_move_the_drawing():
    z = np.zeros((2, M.N_TRAITS))
    z[1, 1] = 2.0  # a bigger cell
    img = M.render_cells(z, rng=0)
    # same randomness, bigger cell: more cytoplasm signal
    assert img[1, 1].sum() > img[0, 1].sum()


def test_normalise_crops():
    x = np.random.default_rng(0).normal(3, 2, (5, 4, 8, 8))
    y = M.normalise_crops(x * 7 + 1)
    assert np.allclose(y.mean((-2, -1)), 0, atol=1e-6)
    assert np.allclose(y, M.normalise_crops(x), atol=1e-5)  # gain/offset invariant


def test_sincos_positions():
    p = M.sincos_positions(3, 8)
    assert p.shape == (9, 8)
    assert np.allclose(p[0], np.r_[0, 0, 1, 1, 0, 0, 1, 1])  # row 0, column 0
    with pytest.raises(ValueError):
        M.sincos_positions(3, 6)


def test_mae_shapes_and_mask():
    m = M.build_mae(0, width=16, depth=2, heads=2, dec_width=16, dec_depth=1)
    x = torch.randn(3, 4, 24, 24)
    pred, target, mask = m(x, generator=torch.Generator().manual_seed(0))
    assert pred.shape == target.shape == (3, 36, 64)
    assert (mask.sum(1) == 27).all()  # 75% of 36 patches masked
    assert torch.allclose(m.unpatchify(m.patchify(x), 4), x)
    emb = M.block_embeddings(m, x.numpy())
    assert emb.shape == (2, 3, 16)


def test_fourier_loss_and_mae_loss():
    x = torch.randn(2, 4, 8, 8)
    assert M.fourier_loss(x, x).item() == 0
    # Fourier magnitudes ignore a circular shift
    assert M.fourier_loss(torch.roll(x, 2, -1), x).item() < 1e-5
    with pytest.raises(ValueError):
        M.fourier_loss(x, x[:1])
    m = M.build_mae(0, size=8, width=16, depth=1, heads=2, dec_width=16, dec_depth=1)
    pred, target, mask = m(x)
    total, mse, four = M.mae_loss(pred, target, mask, m)
    assert np.isclose(total.item(), mse.item() + 0.01 * four.item(), rtol=1e-5)
    hand = (((pred - target) ** 2).mean(-1) * mask).sum() / mask.sum()
    assert np.isclose(mse.item(), hand.item())
    with pytest.raises(ValueError):
        M.mae_loss(pred, target, mask, m, alpha=-1)


def test_lion_step_is_sign():
    p = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    opt = M.Lion([p], lr=0.1, weight_decay=0.0)
    p.grad = torch.tensor([0.3, -5.0])
    opt.step()
    assert torch.allclose(p.detach(), torch.tensor([0.9, -1.9]))


def test_one_cycle():
    lrs = [M.one_cycle(s, 100, 1.0) for s in range(100)]
    assert np.isclose(max(lrs), 1.0) and lrs[0] < 0.2 and lrs[-1] < 0.01
    with pytest.raises(ValueError):
        M.one_cycle(100, 100, 1.0)


def test_consistency_pvalues_separate_signal_from_null():
    rng = np.random.default_rng(0)
    # gene 0: replicates share a direction; gene 1: noise; 20 controls
    well_gene = np.r_[np.zeros(4, int), np.ones(4, int), -np.ones(20, int)]
    x = rng.normal(size=(28, 10))
    x[:4] += 4 * np.eye(10)[0]
    p = M.consistency_pvalues(x, well_gene, n_null=500, seed=0)
    assert p[0] < 0.01 and p[1] > 0.01
    assert p.min() >= 1 / 501


def test_curate_keeps_consistent_genes_and_some_controls(screen):
    p = np.ones(len(screen.gene_pathway))
    p[[0, 4]] = 0.001
    keep = M.curate(screen, p, control_fraction=0.5, seed=0)
    genes = screen.crop_gene[keep]
    assert set(np.unique(genes)) == {-1, 0, 4}
    n_ctrl_wells = len(np.unique(screen.crop_well[keep][genes < 0]))
    assert n_ctrl_wells == 6
    with pytest.raises(ValueError):
        M.curate(screen, p, alpha=2)


def test_balanced_accuracy_and_bootstrap():
    truth = np.array([0, 0, 0, 1])
    pred = np.array([[0, 0, 0, 0], [0, 0, 0, 1]])
    assert np.allclose(M.balanced_accuracy(pred, truth), [0.5, 1.0])
    boot = M.bootstrap_balanced_accuracy(pred, truth, n_boot=50, seed=0)
    assert boot.shape == (50, 2) and (boot[:, 1] == 1).all()


def test_probe_blocks_learns_a_separable_label():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 30)
    good = rng.normal(size=(90, 5)) + 3 * np.eye(5)[y]
    bad = rng.normal(size=(90, 5))
    idx = np.arange(90)
    train, test = idx[idx % 3 != 0], idx[idx % 3 == 0]
    pred = M.probe_blocks(np.stack([good, bad]), y, train, test)
    acc = M.balanced_accuracy(pred, y[idx % 3 == 0])
    assert acc[0] > 0.9 and acc[1] < 0.7
    with pytest.raises(ValueError, match="overlap"):
        M.probe_blocks(good[None], y, idx, idx[:3])


def test_tvn_removes_batch_shifts_and_whitens_controls():
    rng = np.random.default_rng(0)
    batch = np.repeat([0, 1], 60)
    ctrl = np.tile(np.r_[np.ones(40, bool), np.zeros(20, bool)], 2)
    x = rng.normal(size=(120, 3)) @ np.diag([1, 2, 3])
    x[batch == 1] = x[batch == 1] * 3 + 10  # batch 1: other scale and shift
    y = M.tvn(x, ctrl, batch, reg=0.0)
    for b in (0, 1):
        c = y[(batch == b) & ctrl]
        assert np.allclose(c.mean(0), 0, atol=1e-9)
        assert np.allclose(np.cov(c, rowvar=False), np.eye(3), atol=1e-6)
    with pytest.raises(ValueError, match="control"):
        M.tvn(x, np.zeros(120, bool), batch)


def test_aggregate():
    x = np.arange(8.0).reshape(4, 2)
    assert np.allclose(M.aggregate(x, [0, 1, 0, -1], 2), [[2, 3], [2, 3]])
    with pytest.raises(ValueError):
        M.aggregate(x, [0, 0, 0, -1], 2)


def test_relationship_recall_hand_case():
    # seven genes on a circle; pathway 0 at 0 and 5 degrees (the most similar pair of
    # all), pathway 1 at 90 and 150 degrees (cosine 0.5, in the middle of the null)
    deg = np.radians([0, 5, 90, 150, 40, 60, 110])
    emb = np.c_[np.cos(deg), np.sin(deg)]
    recall, hits, pw = M.relationship_recall(emb, [0, 0, 1, 1, -1, -1, -1])
    assert pw.tolist() == [0, 1] and hits.tolist() == [True, False] and recall == 0.5
    with pytest.raises(ValueError, match="known"):
        M.relationship_recall(emb, [-1] * 7)


def test_recall_invariant_to_scale_and_rotation():
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(20, 5))
    pw = np.repeat(np.arange(5), 4)
    q, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    r1 = M.relationship_recall(emb, pw)[0]
    r2 = M.relationship_recall(3 * emb @ q, pw)[0]
    assert r1 == r2


def test_cluster_bootstrap():
    hits = np.array([1, 1, 0, 0], float)
    boot = M.cluster_bootstrap(hits, [0, 0, 1, 1], n_boot=200, seed=0)
    assert set(np.unique(boot)) <= {0.0, 0.5, 1.0}
    assert 0.3 < boot.mean() < 0.7
    paired = M.cluster_bootstrap(np.stack([hits, hits]), [0, 0, 1, 1], n_boot=10)
    assert paired.shape == (10, 2) and np.array_equal(paired[:, 0], paired[:, 1])


def test_replicate_consistency_detects_agreeing_replicates():
    rng = np.random.default_rng(0)
    genes = np.tile(np.arange(30), 3)
    signal = rng.normal(size=(30, 8))
    strong = signal[genes] + 0.3 * rng.normal(size=(90, 8))
    weak = rng.normal(size=(90, 8))
    s, w = (M.replicate_consistency(x, genes, seed=0) for x in (strong, weak))
    assert s["ks"] > 0.5 > w["ks"] and s["cvm"] > w["cvm"]
    with pytest.raises(ValueError):
        M.replicate_consistency(strong[:30], genes[:30])


def test_ks_bootstrap_paired_and_centred():
    rng = np.random.default_rng(0)
    genes = np.tile(np.arange(30), 3)
    x = rng.normal(size=(30, 8))[genes] + 0.5 * rng.normal(size=(90, 8))
    r = M.replicate_consistency(x, genes, seed=0)
    boot = M.ks_bootstrap([r, r], n_boot=50, seed=0)
    assert boot.shape == (50, 2) and np.array_equal(boot[:, 0], boot[:, 1])
    assert abs(np.median(boot[:, 0]) - r["ks"]) < 0.1


def test_evaluate_blocks_runs_on_a_screen(screen):
    z = M.normalise_crops(screen.images).reshape(len(screen.images), -1)[:, :40]
    res = M.evaluate_blocks(np.stack([z, z]), screen, n_random=200)
    assert res["acc"].shape == res["recall"].shape == res["ks"].shape == (2,)
    assert res["acc"][0] == res["acc"][1] and 0 <= res["recall"][0] <= 1
    with pytest.raises(ValueError, match="align"):
        M.evaluate_blocks(z[None], screen, align="none")


def test_plate_matched_null_is_calibrated_after_plate_centring():
    # null genes only; wells centred on their own plate's controls: a null that draws
    # any controls (several from one plate, anti-correlated) passes null genes too often
    rng = np.random.default_rng(1)
    n_plates, n_genes, n_ctrl = 4, 200, 6
    gene = np.tile(np.r_[np.arange(n_genes), -np.ones(n_ctrl, int)], n_plates)
    plate = np.repeat(np.arange(n_plates), n_genes + n_ctrl)
    x = rng.normal(size=(len(gene), 5))
    for k in range(n_plates):
        rows = plate == k
        x[rows] -= x[rows & (gene < 0)].mean(0)
    matched = M.consistency_pvalues(x, gene, plate, n_null=500, seed=0)
    assert (matched < 0.05).mean() < 0.1
    with pytest.raises(ValueError, match="one entry per well"):
        M.consistency_pvalues(x, gene, plate[:3])


def test_ks_statistic_matches_scipy():
    from scipy.stats import ks_2samp

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=37), rng.normal(0.4, 1.2, size=101)
    assert np.isclose(M.ks_statistic(a, b), ks_2samp(a, b).statistic)
    ties = np.array([0, 0, 1, 1, 2.0])
    assert np.isclose(M.ks_statistic(ties, ties[::-1]), 0)
    with pytest.raises(ValueError):
        M.ks_statistic([], b)


def test_committed_models_hold_every_training_seed():
    for seed in range(M.TRAINING_SEEDS):
        models, info = M.load_models(seed)
        assert set(models) == {"uncurated", *(f"curated_{w}" for w in M.WIDTHS)}
        assert info["model_seed"] == seed and info["widths"] == M.WIDTHS
        assert info["pvalues"].dtype == np.float64 and info["gene_pathway"].dtype == np.int64
        assert 0 < info["kept_crops"] < info["n_crops"]
    outcomes = M.curation_outcomes()
    assert sorted(outcomes) == list(range(M.TRAINING_SEEDS))
    assert np.array_equal(outcomes[0]["pvalues"], M.load_models(0)[1]["pvalues"])
    # each seed curates its own pre-training screen
    assert not np.array_equal(outcomes[0]["pvalues"], outcomes[1]["pvalues"])
    with pytest.raises(ValueError,
                       match=rf"not {M.TRAINING_SEEDS}; `python -m icml25.microscopy_mae"):
        M.load_models(M.TRAINING_SEEDS)


def test_average_precision_matches_scikit_learn():
    from sklearn.metrics import average_precision_score

    rng = np.random.default_rng(3)
    scores, relevant = rng.normal(size=400), rng.random(400) < 0.1
    assert M.average_precision(scores, relevant) == pytest.approx(
        average_precision_score(relevant, scores), abs=1e-12)
    assert M.average_precision([3.0, 2.0, 1.0], [True, False, False]) == 1.0
    assert M.average_precision([3.0, 2.0, 1.0], [False, False, True]) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="positive and negative labels"):
        M.average_precision([1.0, 2.0], [False, False])
    with pytest.raises(ValueError, match="must have the same shape"):
        M.average_precision([1.0, 2.0], [True])


def test_compound_screen_plants_its_targets():
    genes = M.make_screen(n_pathways=3, pathway_size=4, n_null=4, controls_per_plate=4,
                          crops_per_well=1, seed=5)
    compounds, target = M.make_compound_screen(genes, n_compounds=8, active=0.75,
                                               controls_per_plate=4, crops_per_well=1,
                                               seed=6)
    assert (target >= 0).sum() == 6 and (target[6:] == -1).all()
    assert (genes.gene_pathway[target[target >= 0]] >= 0).all()  # targets are pathway genes
    assert np.array_equal(compounds.gene_pathway[:6], genes.gene_pathway[target[:6]])
    # an active compound copies part of its target's knockout: positively aligned effects
    cos = np.einsum("kt,kt->k", compounds.gene_effect[:6], genes.gene_effect[target[:6]])
    assert (cos > 0).all()
    assert compounds.images.shape == (2 * (8 + 4), 4, 24, 24)
    again, _ = M.make_compound_screen(genes, n_compounds=8, controls_per_plate=4,
                                      crops_per_well=1, seed=6)
    assert np.array_equal(again.images, compounds.images)
    with pytest.raises(ValueError, match="n_compounds"):
        M.make_compound_screen(genes, n_compounds=0)
    with pytest.raises(ValueError, match="active"):
        M.make_compound_screen(genes, active=0.0)


def test_compound_gene_ap_scores_known_pairs():
    rng = np.random.default_rng(0)
    genes = rng.normal(size=(20, 8))
    target = np.array([0, 5, 9, -1])
    exact = np.vstack([genes[[0, 5, 9]], rng.normal(size=(1, 8))])
    ap, boot, chance = M.compound_gene_ap([genes, genes], [exact, rng.normal(size=(4, 8))],
                                          target, n_boot=200, seed=1)
    assert ap[0] == 1.0 and ap[1] < 1.0  # a compound identical to its target ranks it first
    assert chance == pytest.approx(3 / 80)
    assert boot.shape[1] == 2 and (boot[:, 0] == 1.0).all()
    with pytest.raises(ValueError, match="no compound has a known target"):
        M.compound_gene_ap(genes, exact, np.full(4, -1))


def test_joint_map_aligns_both_screens_on_their_controls():
    genes = M.make_screen(n_pathways=2, pathway_size=3, n_null=2, controls_per_plate=6,
                          crops_per_well=1, seed=1)
    compounds, _ = M.make_compound_screen(genes, n_compounds=4, controls_per_plate=6,
                                          crops_per_well=1, seed=2)
    rng = np.random.default_rng(0)
    gw = rng.normal(size=(len(genes.well_gene), 5))
    cw = rng.normal(size=(len(compounds.well_gene), 5))
    g, c = M.joint_map(gw, genes, cw, compounds)
    assert g.shape == (8, 5) and c.shape == (4, 5)
    with pytest.raises(ValueError, match="one embedding row per well"):
        M.joint_map(gw[:-1], genes, cw, compounds)
