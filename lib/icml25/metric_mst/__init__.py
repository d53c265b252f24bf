r"""Metric minimum spanning trees by forest completion (Veldt et al., ICML 2025).

An exact MST of :math:`n` points in an arbitrary metric space needs all
:math:`\binom n2` distances.  The paper's framework spends far fewer:

1. **a forest** :math:`F` from a practical heuristic: k-center clustering (Gonzalez's
   farthest-first traversal) into :math:`t` clusters, then an exact MST inside each cluster, which
   costs :math:`n t + \sum_i \binom{|C_i|}{2}` distances;
2. **metric forest completion** (MFC): connect the :math:`t` components with light edges.  Solving
   MFC optimally still takes :math:`\Omega(n^2)` time; the paper's subquadratic
   MFC-Approx picks one representative :math:`r_i` per component and, for every pair of
   components, the lightest edge among
   :math:`\{(r_i, v): v\in C_j\}\cup\{(u, r_j): u\in C_i\}` (:math:`n t` distances in all), then an
   MST of the :math:`t`-node graph of these candidates.  It is a 2.62-approximation of MFC,
   whose objective is the weight of the whole tree :math:`F\cup E` (the paper's theorem;
   :math:`2.62\approx(3+\sqrt5)/2`).

**Learning-augmented guarantee.** If the forest overlaps an optimal MST :math:`M^*`, the tree is a
:math:`(2\gamma+1)`-approximation of the MST, where

.. math:: \gamma = \frac{w(F)}{w\big(\{e\in M^*: e \text{ inside one component of } F\}\big)}

measures how well the forest agrees with :math:`M^*` (as the official code computes it; it needs
the exact MST, so it is a diagnostic, not a run-time certificate).

Distances go through :class:`DistanceOracle`, which counts every evaluation: the count is the
machine-independent cost that the chapter reports beside wall time.

* :mod:`.distances`: the counting oracle;
* :mod:`.trees`: the result type and exact MSTs: Kruskal on a dense matrix, the sort-free
  :func:`mst_of_condensed` (the same tree), implicit Prim, and the kd-tree peers;
* :mod:`.forest`: k-center, the forest inside components, MFC-Approx, the whole method;
* :mod:`.diagnostics`: :math:`\gamma`, the optimal completion, the MFC ratio, single linkage;
* :mod:`.data`: the chapter's Gaussian mixtures and string families.
"""

from .data import gaussian_mixture, string_families
from .diagnostics import cut_tree, mfc_ratio, optimal_completion_weight, overlap_gamma
from .distances import DistanceOracle
from .forest import complete_forest, forest_completion_mst, forest_in_components, k_center
from .trees import (
    EMST_LIBRARIES,
    SpanningTree,
    exact_emst,
    exact_mst,
    implicit_prim_mst,
    mst_of_condensed,
    mst_of_dense,
)

__all__ = [
    "EMST_LIBRARIES",
    "DistanceOracle",
    "SpanningTree",
    "complete_forest",
    "cut_tree",
    "exact_emst",
    "exact_mst",
    "forest_completion_mst",
    "forest_in_components",
    "gaussian_mixture",
    "implicit_prim_mst",
    "k_center",
    "mfc_ratio",
    "mst_of_condensed",
    "mst_of_dense",
    "optimal_completion_weight",
    "overlap_gamma",
    "string_families",
]
