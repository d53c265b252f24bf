r"""Step 3 and the benchmarks: linear probes over blocks, then EFAAR (align by TVN,
aggregate, relate) scored by relationship recall and replicate consistency."""

from __future__ import annotations

import numpy as np

from icml25.common.ranking import average_precision
from icml25.common.stats import resample_indices
from icml25.common.streams import as_generator

from .curation import _unit, well_means
from .screen import Screen, normalise_crops

# --------------------------------------------------------------------------------------
# Step 3: linear probes over blocks
# --------------------------------------------------------------------------------------


def probe_blocks(block_emb, labels, train, test, *, C: float = 1.0):
    r"""A logistic-regression probe per block: standardise on the training crops, fit
    $\mathrm{softmax}(W z + b)$, predict the test crops.

    Parameters
    ----------
    block_emb : (B, N, d) array, :func:`~icml25.microscopy_mae.model.block_embeddings` (or one
        block with B = 1).
    labels : (N,) int array, the probe's target.
    train, test : index arrays into N (split by plate, so the probe must cross batches).

    Returns
    -------
    (B, len(test)) int array of predictions.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    block_emb = np.asarray(block_emb)
    if block_emb.ndim != 3 or block_emb.shape[1] != len(labels):
        raise ValueError(f"block_emb must be (B, N, d) with N = len(labels); got "
                         f"{block_emb.shape} and {len(labels)} labels")
    if np.intersect1d(train, test).size:
        raise ValueError("train and test crops must not overlap")
    preds = []
    for z in block_emb:
        sc = StandardScaler().fit(z[train])
        clf = LogisticRegression(C=C, max_iter=300)
        clf.fit(sc.transform(z[train]), labels[train])
        preds.append(clf.predict(sc.transform(z[test])))
    return np.array(preds)


def balanced_accuracy(pred, truth, classes=None) -> np.ndarray:
    r"""Mean over classes of the recall $\frac{1}{K}\sum_k P(\hat y = k \mid y = k)$,
    along the last axis (so a (B, n) array of predictions gives B scores)."""
    pred, truth = np.asarray(pred), np.asarray(truth)
    if pred.shape[-1] != truth.shape[-1]:
        raise ValueError("pred and truth must have the same length")
    classes = np.unique(truth) if classes is None else classes
    recalls = [((pred == k) & (truth == k)).sum(-1) / max(1, (truth == k).sum())
               for k in classes]
    return np.mean(recalls, axis=0)


def bootstrap_balanced_accuracy(pred, truth, *, n_boot: int = 1000,
                                seed=0) -> np.ndarray:
    """Balanced accuracies of (B, n) predictions on ``n_boot`` resamples of the test
    crops (the same resample for every block, so differences between blocks are paired):
    (n_boot, B)."""
    pred, truth = np.atleast_2d(pred), np.asarray(truth)
    classes = np.unique(truth)
    idx = resample_indices(len(truth), n_boot=n_boot, seed=as_generator(seed))
    t = truth[idx]  # (n_boot, n)
    hit = pred[:, idx] == t[None]  # (B, n_boot, n)
    recalls = []
    for k in classes:  # a class missing from a resample does not count
        in_k = t == k
        n_k = np.where(in_k.sum(-1) > 0, in_k.sum(-1), np.nan)
        recalls.append((hit & in_k[None]).sum(-1) / n_k[None])
    return np.nanmean(recalls, axis=0).T


# --------------------------------------------------------------------------------------
# EFAAR: align, aggregate, relate
# --------------------------------------------------------------------------------------


def centre_scale(x, ref) -> np.ndarray:
    """Standardise ``x`` with the mean and standard deviation of the rows ``ref`` (a
    bool or index array), e.g. the control wells."""
    x = np.asarray(x, float)
    mu, sd = x[ref].mean(0), x[ref].std(0)
    return (x - mu) / np.where(sd > 1e-12, sd, 1.0)


def _inv_sqrt(cov):
    w, v = np.linalg.eigh(cov)
    return (v / np.sqrt(np.maximum(w, 1e-12))) @ v.T


def tvn(x, is_control, batch, *, reg: float = 0.5) -> np.ndarray:
    r"""Typical variation normalisation on controls (Ando et al., 2017), as in EFAAR.

    1. centre-scale on all controls; 2. PCA fitted on the controls, all components;
    3. centre-scale on the controls again; 4. per batch $k$, centre on the batch's
    controls
    and whiten: $x \leftarrow (x - \mu_k)\,(\Sigma_k + r I)^{-1/2}$, with $\Sigma_k$ the
    covariance of batch $k$'s controls and $r$ = ``reg`` (0.5 in EFAAR).

    Parameters
    ----------
    x : (W, d) well embeddings. is_control : (W,) bool. batch : (W,) batch labels.
    """
    x = np.asarray(x, float)
    is_control, batch = np.asarray(is_control, bool), np.asarray(batch)
    if not (len(x) == len(is_control) == len(batch)):
        raise ValueError("x, is_control and batch must have the same length")
    if reg < 0:
        raise ValueError(f"reg must be non-negative; got {reg}")
    for b in np.unique(batch):
        if (is_control & (batch == b)).sum() < 2:
            raise ValueError(f"batch {b} needs at least two control wells for TVN")
    x = centre_scale(x, is_control)
    c = x[is_control]
    _, _, vt = np.linalg.svd(c - c.mean(0), full_matrices=False)
    x = (x - c.mean(0)) @ vt.T
    x = centre_scale(x, is_control)
    out = np.empty_like(x)
    for b in np.unique(batch):
        rows = batch == b
        ctrl = x[rows & is_control]
        cov = np.atleast_2d(np.cov(ctrl, rowvar=False)) + reg * np.eye(x.shape[1])
        out[rows] = (x[rows] - ctrl.mean(0)) @ _inv_sqrt(cov)
    return out


def aggregate(x, labels, n_labels: int) -> np.ndarray:
    """Mean of the rows of ``x`` per label ``0..n_labels-1`` (negative labels, the
    controls, are left out): one vector per gene."""
    labels = np.asarray(labels)
    keep = labels >= 0
    sums = np.zeros((n_labels, x.shape[1]))
    np.add.at(sums, labels[keep], x[keep])
    counts = np.bincount(labels[keep], minlength=n_labels)
    if (counts == 0).any():
        raise ValueError("every label needs at least one row")
    return sums / counts[:, None]


def relationship_recall(gene_emb, gene_pathway, *, lower: float = 0.05,
                        upper: float = 0.95):
    r"""Recall of the planted relationships at the tails of the cosine-similarity null.

    The null is the cosine similarity of all gene pairs; a known pair (two genes of the
    same pathway) is *recalled* when its cosine is below the ``lower`` or above the
    ``upper`` quantile of the null (EFAAR's 5/95 percentiles).

    Returns
    -------
    recall : float, the share of known pairs recalled.
    hits : (P,) bool, per known pair. pair_pathway : (P,) its pathway.
    """
    gene_pathway = np.asarray(gene_pathway)
    if len(gene_emb) != len(gene_pathway):
        raise ValueError("gene_emb and gene_pathway must have the same length")
    if not 0 <= lower < upper <= 1:
        raise ValueError(f"need 0 <= lower < upper <= 1; got {lower}, {upper}")
    u = _unit(np.asarray(gene_emb, float))
    cos = u @ u.T
    i, j = np.triu_indices(len(u), 1)
    null = cos[i, j]
    lo, hi = np.quantile(null, [lower, upper])
    known = (gene_pathway[i] == gene_pathway[j]) & (gene_pathway[i] >= 0)
    if not known.any():
        raise ValueError("no known relationships: no pathway has two genes")
    sims = null[known]
    hits = (sims <= lo) | (sims >= hi)
    return float(hits.mean()), hits, gene_pathway[i][known]


def cluster_bootstrap(hits, clusters, *, n_boot: int = 2000, seed=0) -> np.ndarray:
    """Means of ``hits`` over ``n_boot`` resamples of whole clusters (pathways), the
    unit that makes pairs dependent. ``hits`` may be (n,) or (m, n) (paired rows, the
    same resample for each). Returns (n_boot,) or (n_boot, m)."""
    hits = np.atleast_2d(np.asarray(hits, float))
    clusters = np.asarray(clusters)
    ids = np.unique(clusters)
    onehot = (clusters[None] == ids[:, None]).astype(float)  # (K, n)
    sums, counts = hits @ onehot.T, onehot.sum(1)  # (m, K), (K,)
    rng = as_generator(seed)
    pick = rng.integers(0, len(ids), (n_boot, len(ids)))
    w = np.stack([np.bincount(p, minlength=len(ids)) for p in pick])  # (n_boot, K)
    out = (w @ sums.T) / (w @ counts)[:, None]
    return out[:, 0] if out.shape[1] == 1 else out


def replicate_consistency(well_emb, well_gene, *, n_random: int = 5000, seed=0):
    r"""Replicate consistency: do a gene's replicate wells agree more than random wells?

    Cosines between replicate wells of the same gene (on different plates) against
    cosines between random pairs of wells of different genes; the two-sample
    Kolmogorov-Smirnov statistic :math:`\sup_s |F_{\mathrm{rep}}(s) - F_{\mathrm{rand}}(s)|`
    and the Cramér-von Mises statistic (scipy) measure how far apart they are. Controls
    are left out.

    Returns
    -------
    dict with ``ks``, ``cvm``, ``replicate`` and ``random`` cosines, ``rep_gene``.
    """
    from scipy.stats import cramervonmises_2samp, ks_2samp

    well_gene = np.asarray(well_gene)
    x = _unit(np.asarray(well_emb, float))
    i, j = np.triu_indices(len(x), 1)
    rep = (well_gene[i] == well_gene[j]) & (well_gene[i] >= 0)
    if not rep.any():
        raise ValueError("no gene has two replicate wells")
    rng = as_generator(seed)
    genes = np.flatnonzero(well_gene >= 0)
    a, b = rng.choice(genes, n_random), rng.choice(genes, n_random)
    ok = well_gene[a] != well_gene[b]
    a, b = a[ok], b[ok]
    rep_cos = np.einsum("nd,nd->n", x[i[rep]], x[j[rep]])
    rand_cos = np.einsum("nd,nd->n", x[a], x[b])
    return {"ks": float(ks_2samp(rep_cos, rand_cos).statistic),
            "cvm": float(cramervonmises_2samp(rep_cos, rand_cos).statistic),
            "replicate": rep_cos, "random": rand_cos, "rep_gene": well_gene[i[rep]]}


def ks_statistic(a, b) -> float:
    r"""Two-sample Kolmogorov-Smirnov statistic :math:`\sup_s |F_a(s) - F_b(s)|`, with both
    empirical distribution functions evaluated at every point of the two samples (what
    ``scipy.stats.ks_2samp`` computes; used here inside bootstrap loops)."""
    a, b = np.sort(np.asarray(a, float)), np.sort(np.asarray(b, float))
    if a.size == 0 or b.size == 0:
        raise ValueError("ks_statistic needs two non-empty samples")
    both = np.concatenate([a, b])
    fa = np.searchsorted(a, both, side="right") / a.size
    fb = np.searchsorted(b, both, side="right") / b.size
    return float(np.abs(fa - fb).max())


def ks_bootstrap(results, *, n_boot: int = 1000, seed=0) -> np.ndarray:
    """KS statistics of :func:`replicate_consistency` results on ``n_boot`` resamples of
    the genes (the same resample for every result, so differences are paired); the
    random pairs stay fixed. Returns (n_boot, len(results))."""
    if isinstance(results, dict):
        results = [results]
    genes = np.unique(results[0]["rep_gene"])
    for r in results[1:]:
        if not np.array_equal(np.unique(r["rep_gene"]), genes):
            raise ValueError("paired results must cover the same genes")
    rng = as_generator(seed)
    by_gene = [[r["replicate"][r["rep_gene"] == g] for g in genes] for r in results]
    out = np.empty((n_boot, len(results)))
    for b in range(n_boot):
        pick = rng.integers(0, len(genes), len(genes))
        for m, (r, parts) in enumerate(zip(results, by_gene)):
            rep = np.concatenate([parts[g] for g in pick])
            out[b, m] = ks_statistic(rep, r["random"])
    return out


def evaluate_blocks(block_emb, screen: Screen, *, test_plate: int = -1,
                    n_random: int = 5000, seed=0, align: str = "tvn") -> dict:
    r"""The block search and the map benchmarks for every block of one model.

    Per block $b$: a pathway probe trained on the crops of the other plates and scored
    on ``test_plate`` by balanced accuracy (pathway genes only: the probe's target is
    the gene's functional group); then well means, alignment (``"tvn"``, or
    ``"centre"``: centre-scale on all controls, no per-batch step), gene means,
    relationship recall at 5/95 and replicate consistency.

    Returns
    -------
    dict with ``pred`` (B, n_test), ``truth``, ``acc`` (B,), ``recall`` (B,), ``hits``
    (B, P), ``pair_pathway``, ``ks``, ``cvm`` (B,), ``consistency`` (list of B results).
    """
    block_emb = np.asarray(block_emb)
    if block_emb.ndim != 3 or block_emb.shape[1] != len(screen.crop_well):
        raise ValueError("block_emb must be (B, N, d) over the screen's crops")
    if align not in ("tvn", "centre"):
        raise ValueError(f"align must be 'tvn' or 'centre'; got {align!r}")
    plates = np.unique(screen.well_plate)
    test_plate = plates[test_plate]
    gene = screen.crop_gene
    label = screen.gene_pathway[np.maximum(gene, 0)]
    usable = np.flatnonzero((gene >= 0) & (label >= 0))
    test = usable[screen.crop_plate[usable] == test_plate]
    train = usable[screen.crop_plate[usable] != test_plate]
    out = {"pred": probe_blocks(block_emb, label, train, test), "truth": label[test]}
    out["acc"] = balanced_accuracy(out["pred"], out["truth"])
    n_wells, n_genes = len(screen.well_gene), len(screen.gene_pathway)
    recall, hits, ks, cvm, cons = [], [], [], [], []
    for z in block_emb:
        wells = well_means(z, screen.crop_well, n_wells)
        if align == "tvn":
            wells = tvn(wells, screen.is_control, screen.well_plate)
        else:
            wells = centre_scale(wells, screen.is_control)
        r, h, pw = relationship_recall(aggregate(wells, screen.well_gene, n_genes),
                                       screen.gene_pathway)
        c = replicate_consistency(wells, screen.well_gene, n_random=n_random, seed=seed)
        recall.append(r)
        hits.append(h)
        ks.append(c["ks"])
        cvm.append(c["cvm"])
        cons.append(c)
    out.update(recall=np.array(recall), hits=np.array(hits), pair_pathway=pw,
               ks=np.array(ks), cvm=np.array(cvm), consistency=cons)
    return out


def pixel_pca(fit_images, images, n_components: int) -> np.ndarray:
    """The pixel-PCA baseline: PCA (scikit-learn) of the normalised, flattened crops
    fitted on ``fit_images``; the scores of ``images``."""
    from sklearn.decomposition import PCA

    def flat(a):
        return normalise_crops(np.asarray(a, np.float32)).reshape(len(a), -1)

    pca = PCA(n_components, random_state=0).fit(flat(fit_images))
    return pca.transform(flat(images))


# --------------------------------------------------------------------------------------
# Compound-gene activity
# --------------------------------------------------------------------------------------


def joint_map(gene_wells, genes: Screen, compound_wells, compounds: Screen):
    """Gene and compound vectors in one aligned space: TVN over the wells of both screens
    at once (each plate whitened on its own controls, the PCA fitted on all controls), then
    the mean per gene and per compound. Returns ``(gene_vectors, compound_vectors)``."""
    if len(gene_wells) != len(genes.well_gene) or len(compound_wells) != len(
            compounds.well_gene):
        raise ValueError("one embedding row per well of each screen is needed")
    x = np.vstack([gene_wells, compound_wells])
    is_control = np.r_[genes.is_control, compounds.is_control]
    plate = np.r_[genes.well_plate, compounds.well_plate + genes.well_plate.max() + 1]
    z = tvn(x, is_control, plate)
    n = len(gene_wells)
    return (aggregate(z[:n], genes.well_gene, len(genes.gene_pathway)),
            aggregate(z[n:], compounds.well_gene, len(compounds.gene_pathway)))


def compound_gene_ap(gene_vectors, compound_vectors, target, *, n_boot: int = 1000,
                     seed=0):
    r"""Compound-gene activity prediction scored like RxRx3-core's benchmark: rank every
    (compound, gene) pair by the cosine similarity of their vectors and compute the
    average precision of the known pairs (each compound with its target).

    ``gene_vectors`` and ``compound_vectors`` may be lists (one entry per model): the
    bootstrap then resamples the same compounds for every model, so differences are paired.

    Returns
    -------
    ap : (m,) array, the AP of each model. boot : (n_boot, m) array, the AP on resamples
    of the compounds. chance : float, the share of known pairs (the AP of a random
    ranking, in expectation).
    """
    if isinstance(gene_vectors, np.ndarray):
        gene_vectors, compound_vectors = [gene_vectors], [compound_vectors]
    target = np.asarray(target)
    if not (target >= 0).any():
        raise ValueError("no compound has a known target")
    n_genes = len(gene_vectors[0])
    relevant = target[:, None] == np.arange(n_genes)[None]
    cos = [_unit(np.asarray(c, float)) @ _unit(np.asarray(g, float)).T
           for g, c in zip(gene_vectors, compound_vectors, strict=True)]
    if any(c.shape != relevant.shape for c in cos):
        raise ValueError("one compound vector per target and one gene vector per gene")
    # one ranking of every (compound, gene) pair: the arrays are flattened
    ap = np.array([average_precision(c.ravel(), relevant.ravel()) for c in cos])
    rng = as_generator(seed)
    boot = np.full((n_boot, len(cos)), np.nan)
    for b in range(n_boot):
        pick = rng.integers(0, len(target), len(target))
        if relevant[pick].any():
            boot[b] = [average_precision(c[pick].ravel(), relevant[pick].ravel())
                       for c in cos]
    return ap, boot[~np.isnan(boot[:, 0])], float(relevant.mean())
