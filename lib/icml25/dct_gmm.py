r"""DCT-GMM: a conditional-independence test for discretised data (Sun et al., ICML 2025).

**Data model.** A latent vector :math:`X\sim\mathcal N(0,\Sigma)` with unit diagonal; each
observed :math:`\tilde X_j\in\{0,\dots,M_j-1\}` is :math:`X_j` cut at unknown thresholds
:math:`h_{j,0}<\dots<h_{j,M_j-2}`.  The question is about the *latent* variables:

.. math:: X_j \perp X_k \mid X_S \iff \beta_{jk} = 0,\qquad
          \beta_j = \Sigma_{-j,-j}^{-1}\Sigma_{-j,j}

(nodewise regression on the tested variables :math:`\{j,k\}\cup S`).  Tests on the observed codes
are wrong: discretisation destroys conditional independence.

**Step 1, thresholds.** :math:`\hat h_{j,l} = \Phi^{-1}(\text{share of } \tilde X_j\le l)`.

**Step 2, each latent correlation by over-identified GMM** (the paper's key step).  For a pair
:math:`(j,k)` every contingency cell :math:`(l,m)` with at least 1% of the data gives a moment

.. math:: g_i(\sigma) = \mathbb 1[\tilde X_{ij}=l,\tilde X_{ik}=m]
          - P_\sigma(h_{j,l-1}<X_j\le h_{j,l},\ h_{k,m-1}<X_k\le h_{k,m}),

a bivariate-normal rectangle probability.  Many cells, one parameter: the system is
over-identified.  Phase one (the official default) minimises :math:`\|\hat\tau-\tau(\sigma)\|^2`;
phase two re-weights by :math:`\hat\Omega^{-1}` (efficient two-step GMM).  The predecessor DCT
(ICLR 2025) instead binarises each variable at its mean and solves a single bridge equation.

**Step 3, influence functions.** With :math:`J=\partial P/\partial(\sigma,h_j,h_k)` (analytic
here; central differences in the official code) and weight :math:`A`,
:math:`\xi_i = [(J^\top AJ)^{-1}J^\top A\,(\mathbb 1_i-\hat\tau)]_\sigma`, one value per
observation and per pair, so that :math:`\hat\sigma-\sigma\approx\frac1n\sum_i\xi_i`.

**Step 4, the Wald test of** :math:`\beta_{jk}=0`.  Linearising
:math:`\beta_j=\Theta\,\Sigma_{-j,j}` with :math:`\Theta=\Sigma_{-j,-j}^{-1}` under
:math:`H_0` (:math:`b_0=\beta_j` with its :math:`k`-th entry set to 0):

.. math:: \text{infl}_i = \Theta_{k\cdot}\big(\xi_i[-j,j]-\xi_i[-j,-j]\,b_0\big),\qquad
          z = \frac{\sqrt n\,\hat\beta_{jk}}{\sqrt{\tfrac1n\sum_i\text{infl}_i^2}}
          \ \xrightarrow{d}\ \mathcal N(0,1).

Bivariate normal probabilities use Owen's :math:`T` function (``scipy.special.owens_t``),
vectorised over all cells.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

from icml25.common.streams import as_generator
from icml25.common.validation import check_int, check_scalar

__all__ = [
    "bvn_cdf",
    "rectangle_probabilities",
    "PairEstimate",
    "CITestResult",
    "LatentCI",
    "ci_test",
    "dct_test",
    "fisher_z_test",
    "binarize_at_mean",
    "random_dag_weights",
    "random_dag_edges",
    "skeleton_scores",
    "simulate",
]

MIN_CELL_SHARE = 0.01  # cells below 1% of the data give no moment (as in the official code)


# --------------------------------------------------------------------------- bivariate normal


def bvn_cdf(h, k, rho):
    r""":math:`\Phi_2(h, k;\rho)=P(X\le h, Y\le k)` for a standard bivariate normal, vectorised.

    Owen (1956): :math:`\Phi_2 = \tfrac12[\Phi(h)+\Phi(k)] - T(h,a_h) - T(k,a_k) - \beta`, with
    :math:`a_h=\frac{k-\rho h}{h\sqrt{1-\rho^2}}`, :math:`a_k=\frac{h-\rho k}{k\sqrt{1-\rho^2}}` and
    :math:`\beta=\tfrac12` when :math:`hk<0` (or :math:`hk=0` with :math:`h+k<0`), else 0.
    Infinite arguments are handled exactly.
    """
    h, k, rho = np.broadcast_arrays(np.asarray(h, float), np.asarray(k, float), np.asarray(rho, float))
    out = np.empty(h.shape)
    lo = (h == -np.inf) | (k == -np.inf)
    h_inf, k_inf = h == np.inf, k == np.inf
    out[lo] = 0.0
    only_k = h_inf & ~lo
    out[only_k] = special.ndtr(k[only_k])
    only_h = k_inf & ~lo & ~h_inf
    out[only_h] = special.ndtr(h[only_h])
    finite = ~(lo | h_inf | k_inf)
    if finite.any():
        hh, kk, r = h[finite], k[finite], rho[finite]
        # h or k exactly 0 makes a_h or a_k infinite; nudging by 1e-12 changes Phi_2 by ~1e-13.
        hh = np.where(hh == 0, 1e-12, hh)
        kk = np.where(kk == 0, 1e-12, kk)
        s = np.sqrt(1.0 - r * r)
        with np.errstate(over="ignore"):  # |a| = inf for tiny h or k: owens_t(h, inf) is exact
            a_h = (kk - r * hh) / (hh * s)
            a_k = (hh - r * kk) / (kk * s)
        beta = np.where(np.signbit(hh) != np.signbit(kk), 0.5, 0.0)  # hk < 0 without underflow
        out[finite] = (
            0.5 * (special.ndtr(hh) + special.ndtr(kk))
            - special.owens_t(hh, a_h)
            - special.owens_t(kk, a_k)
            - beta
        )
    return np.clip(out, 0.0, 1.0)


def rectangle_probabilities(l1, u1, l2, u2, rho):
    """:math:`P(l_1<X\\le u_1,\\ l_2<Y\\le u_2)` under correlation ``rho``, vectorised over cells."""
    return np.clip(
        bvn_cdf(u1, u2, rho) - bvn_cdf(l1, u2, rho) - bvn_cdf(u1, l2, rho) + bvn_cdf(l1, l2, rho),
        0.0,
        1.0,
    )


def _bvn_pdf(x, y, rho):
    s2 = 1.0 - rho * rho
    with np.errstate(invalid="ignore"):
        q = (x * x - 2 * rho * x * y + y * y) / s2
    val = np.exp(-0.5 * q) / (2 * np.pi * np.sqrt(s2))
    return np.where(np.isfinite(x) & np.isfinite(y), np.nan_to_num(val), 0.0)


def _edge_mass(x, lo, hi, rho):
    """:math:`\\varphi(x)\\,[\\Phi((hi-\\rho x)/s)-\\Phi((lo-\\rho x)/s)]`: the derivative of a rectangle
    probability with respect to one of its edges at ``x`` (zero at infinite edges)."""
    s = np.sqrt(1.0 - rho * rho)
    with np.errstate(invalid="ignore"):
        inner = special.ndtr((hi - rho * x) / s) - special.ndtr((lo - rho * x) / s)
    return np.where(np.isfinite(x), stats.norm.pdf(x) * np.nan_to_num(inner), 0.0)


# --------------------------------------------------------------------------- one pair


@dataclass(frozen=True)
class PairEstimate:
    """Latent correlation of one pair and its influence values.

    Attributes
    ----------
    sigma : float
        :math:`\\hat\\sigma_{jk}`.
    influence : ndarray, shape (n,)
        :math:`\\xi_i`, the influence of observation :math:`i` on :math:`\\hat\\sigma_{jk}`.
    n_moments : int
        Number of cell moments used (the over-identification is ``n_moments`` minus the
        number of parameters).
    """

    sigma: float
    influence: np.ndarray
    n_moments: int


def _thresholds(codes: np.ndarray, levels: int) -> np.ndarray:
    shares = np.bincount(codes, minlength=levels)[:-1].cumsum() / len(codes)
    return special.ndtri(shares)


def estimate_pair(a: np.ndarray, b: np.ndarray, *, weighting: str = "identity") -> PairEstimate:
    """Over-identified GMM estimate of the latent correlation of two ordinal variables.

    Parameters
    ----------
    a, b : ndarray of int, shape (n,)
        Category codes ``0..M-1`` (each level present).
    weighting : {"identity", "efficient"}
        Phase one (identity weight, the official default) or phase two (weight
        :math:`\\hat\\Omega^{-1}` at the phase-one estimate, pseudo-inverted).
    """
    n = len(a)
    Ma, Mb = int(a.max()) + 1, int(b.max()) + 1
    ha, hb = _thresholds(a, Ma), _thresholds(b, Mb)
    edges_a = np.concatenate([[-np.inf], ha, [np.inf]])
    edges_b = np.concatenate([[-np.inf], hb, [np.inf]])
    cell_of = a * Mb + b
    tau_all = np.bincount(cell_of, minlength=Ma * Mb) / n
    cells = np.flatnonzero(tau_all >= MIN_CELL_SHARE)
    la, lb = cells // Mb, cells % Mb
    tau = tau_all[cells]
    box = (edges_a[la], edges_a[la + 1], edges_b[lb], edges_b[lb + 1])

    def model(sigma):
        return rectangle_probabilities(*box, sigma)

    # indicator of each observation's cell among the moment cells (or none)
    position = np.full(Ma * Mb, -1)
    position[cells] = np.arange(len(cells))
    pos_i = position[cell_of]

    def solve(weight):
        def objective(sigma):
            r = tau - model(sigma)
            return r @ weight @ r

        return optimize.minimize_scalar(objective, bounds=(-0.999, 0.999), method="bounded",
                                        options={"xatol": 1e-8}).x

    weight = np.eye(len(cells))
    sigma = solve(weight)
    if weighting == "efficient":
        P = model(sigma)
        omega = np.diag(P) - np.outer(P, P)  # covariance of the cell indicators
        weight = np.linalg.pinv(omega)
        sigma = solve(weight)
    elif weighting != "identity":
        raise ValueError(f"weighting must be 'identity' or 'efficient', got {weighting!r}")

    # Jacobian of the cell probabilities in (sigma, thresholds of a, thresholds of b)
    l1, u1, l2, u2 = box
    J = np.zeros((len(cells), 1 + (Ma - 1) + (Mb - 1)))
    J[:, 0] = _bvn_pdf(u1, u2, sigma) - _bvn_pdf(l1, u2, sigma) - _bvn_pdf(u1, l2, sigma) + _bvn_pdf(l1, l2, sigma)
    for m in range(Ma - 1):  # threshold h_a[m] is the upper edge of level m, the lower of m + 1
        J[:, 1 + m] = np.where(la == m, _edge_mass(u1, l2, u2, sigma), 0.0) - np.where(
            la == m + 1, _edge_mass(l1, l2, u2, sigma), 0.0)
    for m in range(Mb - 1):
        J[:, Ma + m] = np.where(lb == m, _edge_mass(u2, l1, u1, sigma), 0.0) - np.where(
            lb == m + 1, _edge_mass(l2, l1, u1, sigma), 0.0)
    # xi_i = [(J'AJ)^+ J'A (1_i - tau)]_sigma; it depends on i only through its cell
    row = (np.linalg.pinv(J.T @ weight @ J) @ J.T @ weight)[0]
    base = -row @ tau
    influence = base + np.where(pos_i >= 0, row[np.maximum(pos_i, 0)], 0.0)
    return PairEstimate(float(sigma), influence, len(cells))


# --------------------------------------------------------------------------- the test


@dataclass(frozen=True)
class CITestResult:
    """Outcome of a test of :math:`X \\perp Y \\mid Z` on the latent variables.

    ``statistic`` is :math:`z`, asymptotically standard normal under the null (the paper's
    statistic); ``p_value`` is two-sided; ``beta`` is :math:`\\hat\\beta_{xy}` and ``std_error``
    its standard error.
    """

    statistic: float
    p_value: float
    beta: float
    std_error: float
    n: int
    alpha: float = 0.05

    @property
    def reject(self) -> bool:
        return self.p_value < self.alpha


def _check_data(data) -> np.ndarray:
    data = np.asarray(data)
    if data.ndim != 2:
        raise ValueError(f"data must be a 2-D array (n_samples, n_variables), got shape {data.shape}")
    if data.shape[0] < 10:
        raise ValueError(f"data has {data.shape[0]} rows; the test needs at least 10")
    if not np.issubdtype(data.dtype, np.number) or not np.all(np.isfinite(data)):
        raise ValueError("data must hold finite numbers (no NaN)")
    return data


def _as_codes(column: np.ndarray, name: int, continuous_bins: int) -> np.ndarray:
    """Ordinal codes 0..M-1 of one column; columns with many values are treated as continuous."""
    values = np.unique(column)
    if len(values) < 2:
        raise ValueError(f"variable {name} is constant: it carries no information")
    if len(values) > continuous_bins:
        # A continuously observed variable: cut at its empirical quantiles (our choice; the
        # official GMM code handles ordinal columns only).
        edges = np.quantile(column, np.linspace(0, 1, continuous_bins + 1)[1:-1])
        return np.searchsorted(edges, column, side="right")
    return np.searchsorted(values, column)


class LatentCI:
    """CI tests on the latent Gaussian variables behind one data set, with cached pair estimates.

    Parameters
    ----------
    data : array, shape (n, p)
        Ordinal codes (any ordered values) or continuous columns (more than
        ``continuous_bins`` distinct values).
    weighting : {"identity", "efficient"}
        GMM phase one or two.
    binarize : bool
        Binarise every variable at its mean first: the DCT test of the previous paper.
    alpha : float
        Level used by ``CITestResult.reject``.

    The instance is also a causal-learn independence test: ``test(x, y, S)`` returns the p-value
    and ``method`` names it, so it plugs into causal-learn's PC skeleton search.
    """

    def __init__(self, data, *, weighting="identity", binarize=False, alpha=0.05,
                 continuous_bins=10):
        data = _check_data(data)
        check_scalar(alpha, "alpha", minimum=0, maximum=1, open_minimum=True, open_maximum=True)
        if binarize:
            data = binarize_at_mean(data)
        self.codes = np.column_stack([_as_codes(data[:, j], j, continuous_bins)
                                      for j in range(data.shape[1])])
        self.n, self.p = self.codes.shape
        self.weighting, self.alpha = weighting, alpha
        self.method = "dct" if binarize else "dct_gmm"
        self._pairs: dict[tuple[int, int], PairEstimate] = {}

    def pair(self, j: int, k: int) -> PairEstimate:
        key = (min(j, k), max(j, k))
        if key not in self._pairs:
            self._pairs[key] = estimate_pair(self.codes[:, key[0]], self.codes[:, key[1]],
                                             weighting=self.weighting)
        return self._pairs[key]

    def test(self, x: int, y: int, z=()) -> CITestResult:
        """Test :math:`X_x \\perp X_y \\mid X_z` (step 4 of the module docstring)."""
        z = [int(v) for v in np.atleast_1d(np.asarray(z, dtype=int))] if len(z) else []
        idx = [int(x), int(y), *z]
        for v in idx:
            if not 0 <= v < self.p:
                raise ValueError(f"variable index {v} out of range for {self.p} variables")
        if len(set(idx)) != len(idx):
            raise ValueError(f"x, y and z must be distinct variables, got x={x}, y={y}, z={z}")
        q = len(idx)
        sigma = np.eye(q)
        xi = np.zeros((self.n, q, q))
        for a in range(q):
            for b in range(a + 1, q):
                est = self.pair(idx[a], idx[b])
                sigma[a, b] = sigma[b, a] = est.sigma
                xi[:, a, b] = xi[:, b, a] = est.influence
        rest = np.arange(1, q)  # -j with j = x at position 0; y is rest[0]
        theta = np.linalg.pinv(sigma[np.ix_(rest, rest)])
        beta = theta @ sigma[rest, 0]
        b0 = beta.copy()
        b0[0] = 0.0
        deviation = xi[:, rest, 0] - xi[:, rest][:, :, rest] @ b0
        infl = deviation @ theta[0]
        std_error = float(np.sqrt(np.mean(infl**2) / self.n))
        statistic = float(beta[0] / std_error) if std_error > 0 else np.inf
        p_value = float(2 * stats.norm.sf(abs(statistic)))
        return CITestResult(statistic, p_value, float(beta[0]), std_error, self.n, self.alpha)

    def __call__(self, x, y, condition_set=()):
        return self.test(x, y, tuple(condition_set)).p_value


def ci_test(data, x, y, z=(), *, alpha=0.05, weighting="identity") -> CITestResult:
    """Test :math:`X_x\\perp X_y\\mid X_z` for the latent variables with DCT-GMM.

    Works with an empty conditioning set too (the official wrapper falls back to Fisher-z there;
    this one does not).
    """
    return LatentCI(data, weighting=weighting, alpha=alpha).test(x, y, z)


def dct_test(data, x, y, z=(), *, alpha=0.05) -> CITestResult:
    """The binarisation-based DCT (Sun et al., ICLR 2025): binarise at the mean, then one bridge
    equation per pair.  With two levels per variable the GMM cell system is exactly identified
    (four cells summing to one, three parameters), so the estimator above *is* DCT's."""
    return LatentCI(data, binarize=True, alpha=alpha).test(x, y, z)


def binarize_at_mean(data) -> np.ndarray:
    """Each column to 1 where it is at least its mean, else 0 (DCT's binarisation)."""
    data = np.asarray(data, dtype=float)
    return (data >= data.mean(axis=0)).astype(int)


def fisher_z_test(data, x, y, z=(), *, alpha=0.05) -> CITestResult:
    """Fisher's z test of zero partial correlation, via causal-learn's ``fisherz``.

    On the discretised codes this is what a naive user runs; on the latent values it is the
    oracle that real data never allows.
    """
    from causallearn.utils.cit import CIT

    data = _check_data(data).astype(float)
    p_value = float(CIT(data, "fisherz")(int(x), int(y), tuple(int(v) for v in z)))
    statistic = float(stats.norm.isf(p_value / 2))
    return CITestResult(statistic, p_value, np.nan, np.nan, len(data), alpha)


# --------------------------------------------------------------------------- data


def random_dag_weights(p: int, edges, rng, *, low=0.3, high=0.8) -> np.ndarray:
    """Weights ``W[child, parent]`` of a linear SEM for the given ``(parent, child)`` edges,
    with magnitudes uniform on ``[low, high]`` and random signs."""
    rng = as_generator(rng)
    W = np.zeros((p, p))
    for parent, child in edges:
        W[child, parent] = rng.uniform(low, high) * rng.choice([-1.0, 1.0])
    return W


def random_dag_edges(p: int, edge_prob: float, rng) -> list[tuple[int, int]]:
    r"""The ``(parent, child)`` edges of an Erdos-Renyi random DAG on ``p`` nodes.

    A causal order is a uniform random permutation :math:`\pi`; each of the
    :math:`\binom p2` pairs :math:`\pi_a \to \pi_b` (:math:`a < b`) is an edge independently with
    probability ``edge_prob``, so a node's expected degree is ``edge_prob * (p - 1)``.
    """
    p = check_int(p, "p", minimum=2)
    check_scalar(edge_prob, "edge_prob", minimum=0, maximum=1)
    rng = as_generator(rng)
    order = rng.permutation(p)
    present = rng.random((p, p)) < edge_prob  # only the upper triangle is read
    return [(int(order[a]), int(order[b])) for a in range(p) for b in range(a + 1, p)
            if present[a, b]]


def skeleton_scores(learned, truth) -> tuple[float, int]:
    r"""F1 and structural Hamming distance of a learned skeleton against the true one.

    Both are symmetric boolean adjacency matrices (the diagonal is ignored).  Over the
    unordered pairs :math:`i<j`, with TP, FP and FN the true, spurious and missed edges,
    :math:`F_1 = 2\,TP / (2\,TP + FP + FN)` (1 when both skeletons are empty) and
    :math:`\mathrm{SHD} = FP + FN`.
    """
    learned, truth = np.asarray(learned, dtype=bool), np.asarray(truth, dtype=bool)
    if learned.ndim != 2 or learned.shape != truth.shape or learned.shape[0] != learned.shape[1]:
        raise ValueError("learned and truth must be square matrices of the same shape; got "
                         f"{learned.shape} and {truth.shape}")
    upper = np.triu(np.ones(learned.shape, dtype=bool), 1)
    if np.any(learned != learned.T) or np.any(truth != truth.T):
        raise ValueError("skeletons must be symmetric adjacency matrices")
    tp = int(np.sum(learned & truth & upper))
    fp = int(np.sum(learned & ~truth & upper))
    fn = int(np.sum(~learned & truth & upper))
    f1 = 1.0 if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn)
    return f1, fp + fn


def simulate(W: np.ndarray, n: int, levels, rng, *, quantile_range=(0.1, 0.9)):
    """Latent linear-Gaussian SEM, standardised, then discretised.

    Parameters
    ----------
    W : ndarray, shape (p, p)
        ``W[child, parent]`` edge weights of a DAG.
    n : int
    levels : int or sequence of int
        Categories per variable; 0 keeps the variable continuous.
    rng : seed or Generator

    Returns
    -------
    observed : ndarray (n, p)
        Category codes (or the latent value for continuous variables).
    latent : ndarray (n, p)
        The standardised latent values (for the oracle test).
    """
    rng = as_generator(rng)
    p = W.shape[0]
    order, done = [], np.zeros(p, dtype=bool)
    while len(order) < p:  # topological order: a node once all its parents are done
        ready = [j for j in range(p) if not done[j] and np.all(done[W[j] != 0])]
        if not ready:
            raise ValueError("W must describe a DAG: its edges contain a cycle")
        order.append(ready[0])
        done[ready[0]] = True
    noise = rng.standard_normal((n, p))
    X = np.zeros((n, p))
    for j in order:
        X[:, j] = X @ W[j] + noise[:, j]
    X = (X - X.mean(0)) / X.std(0)
    levels = np.broadcast_to(np.asarray(levels), (p,))
    observed = X.copy()
    for j, m in enumerate(levels):
        if m == 1 or m < 0:
            raise ValueError(f"levels must be 0 (continuous) or at least 2, got {m} for variable {j}")
        if m >= 2:
            cuts = np.sort(np.quantile(X[:, j], rng.uniform(*quantile_range, m - 1)))
            observed[:, j] = np.searchsorted(cuts, X[:, j], side="right")
    return observed, X
