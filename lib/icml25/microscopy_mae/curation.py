r"""Step 1 of the recipe: curation by replicate consistency (a permutation test on well
embeddings against random sets of control wells)."""

from __future__ import annotations

import numpy as np

from icml25.common.streams import as_generator

from .screen import Screen

# --------------------------------------------------------------------------------------
# Step 1: curation by replicate consistency
# --------------------------------------------------------------------------------------


def _unit(x):
    return x / (np.linalg.norm(x, axis=-1, keepdims=True) + 1e-12)


def well_means(crop_embeddings, crop_well, n_wells: int) -> np.ndarray:
    """Mean of the crop embeddings of each well: (W, d)."""
    crop_embeddings = np.asarray(crop_embeddings, float)
    if len(crop_embeddings) != len(crop_well):
        raise ValueError("crop_embeddings and crop_well must have the same length")
    sums = np.zeros((n_wells, crop_embeddings.shape[1]))
    np.add.at(sums, crop_well, crop_embeddings)
    counts = np.bincount(crop_well, minlength=n_wells)
    if (counts == 0).any():
        raise ValueError("every well needs at least one crop")
    return sums / counts[:, None]


def consistency_pvalues(well_emb, well_gene, well_plate=None, *, n_null: int = 1000,
                        seed=0) -> np.ndarray:
    r"""Replicate-consistency permutation test of every perturbation.

    For gene $g$ with replicate wells $w_1, \dots, w_k$ the statistic is the mean
    pairwise cosine $s_g = \binom k2^{-1} \sum_{i<j} \cos(x_{w_i}, x_{w_j})$; its null
    is the same statistic over ``n_null`` random sets of $k$ control wells (``well_gene
    == -1``), and $p_g = (1 + \#\{s^{\mathrm{null}} \ge s_g\}) / (1 +
    n_{\mathrm{null}})$. The paper keeps a perturbation when $p < 0.01$.

    With ``well_plate`` the null mirrors the replicates' layout: one random control of
    each plate that holds a replicate. Without it, any $k$ controls; after a per-plate
    alignment that null is biased, because controls of one plate are centred on their
    own mean and so anti-correlated.

    Returns
    -------
    (G,) array of p-values, G = ``well_gene.max() + 1``.
    """
    x = _unit(np.asarray(well_emb, float))
    well_gene = np.asarray(well_gene)
    if len(x) != len(well_gene):
        raise ValueError("well_emb and well_gene must have the same length")
    plate = (np.zeros(len(x), int) if well_plate is None
             else np.asarray(well_plate))
    if len(plate) != len(x):
        raise ValueError("well_plate must have one entry per well")
    ctrl = np.flatnonzero(well_gene < 0)
    rng = as_generator(seed)
    n_genes = int(well_gene.max()) + 1
    p = np.ones(n_genes)

    def mean_pair_cos(sets):  # sets: (m, k) well indices
        v = x[sets]
        k = sets.shape[1]
        total = np.einsum("mkd,mld->m", v, v)
        return (total - k) / (k * (k - 1))

    def null_sets(plates):
        if well_plate is None:
            if len(plates) > len(ctrl):
                raise ValueError(f"{len(plates)} replicates but only {len(ctrl)} "
                                 "controls")
            return ctrl[np.argsort(rng.random((n_null, len(ctrl))), 1)[:, :len(plates)]]
        cols = []
        for k in plates:
            pool = ctrl[plate[ctrl] == k]
            if len(pool) == 0:
                raise ValueError(f"plate {k} has no control well for the null")
            cols.append(rng.choice(pool, n_null))
        return np.stack(cols, 1)

    null_cache = {}
    for g in range(n_genes):
        wells = np.flatnonzero(well_gene == g)
        if len(wells) < 2:
            continue
        key = (len(wells) if well_plate is None
               else tuple(sorted(plate[wells].tolist())))
        if key not in null_cache:
            null_cache[key] = mean_pair_cos(null_sets(sorted(plate[wells].tolist())))
        s = mean_pair_cos(wells[None])[0]
        p[g] = (1 + (null_cache[key] >= s).sum()) / (1 + n_null)
    return p


def curate(screen: Screen, pvalues, *, alpha: float = 0.01,
           control_fraction: float = 0.3,
           seed=0) -> np.ndarray:
    """Indices of the crops kept for training: every crop of the genes with $p <$
    ``alpha`` and a random ``control_fraction`` of the control wells (the paper keeps
    30% of the negative controls)."""
    if not 0 < alpha < 1 or not 0 <= control_fraction <= 1:
        raise ValueError(f"alpha in (0, 1) and control_fraction in [0, 1]; got "
                         f"{alpha}, "
                         f"{control_fraction}")
    rng = as_generator(seed)
    keep_gene = np.flatnonzero(np.asarray(pvalues) < alpha)
    ctrl = np.flatnonzero(screen.is_control)
    n_keep = int(round(control_fraction * len(ctrl)))
    keep_ctrl = rng.choice(ctrl, n_keep, replace=False)
    keep_well = np.isin(screen.well_gene, keep_gene)
    keep_well[keep_ctrl] = True
    return np.flatnonzero(keep_well[screen.crop_well])
