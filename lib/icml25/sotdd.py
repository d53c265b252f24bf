r"""s-OTDD: the sliced optimal transport dataset distance (Nguyen, Nguyen, Pham & Ho, ICML 2025).

A labelled dataset :math:`D=\{(x_i, y_i)\}_{i=1}^n`, :math:`x_i\in\mathbb R^d`, is a distribution
over pairs (feature, label).  A label :math:`y` stands for its class-conditional distribution
:math:`q_y`, the empirical distribution of the features that carry :math:`y` *in the same
dataset*; labels of two datasets therefore never need to match.

One random projection :math:`(\theta, \lambda, \psi)` maps every labelled point to a real number:

* :math:`\theta\sim\mathcal U(\mathbb S^{d-1})` projects the feature, :math:`\theta^\top x`;
* the **Moment Transform Projection** maps the label's distribution to :math:`k` numbers,

  .. math:: \mathrm{MTP}_j(q_y) = \frac{1}{\lambda_j!}\,
            \mathbb E_{x'\sim q_y}\big[(\theta^\top x')^{\lambda_j}\big],\qquad j=1..k,

  with moment orders :math:`\lambda_j` drawn from a zero-truncated Poisson of rate :math:`j`;
* :math:`\psi\sim\mathcal U(\mathbb S^{k})` mixes the :math:`k+1` numbers,

  .. math:: z(x, y) = \psi_0\,\theta^\top x + \sum_{j=1}^{k}\psi_j\,\mathrm{MTP}_j(q_y).

s-OTDD averages the one-dimensional :math:`W_p^p` between the projected datasets over :math:`L`
projections drawn once and shared by both datasets:

.. math:: \text{s-OTDD}_p(D_1, D_2) = \Big(\frac1L\sum_{l=1}^{L}
          W_p^p\big(z_l\sharp D_1,\ z_l\sharp D_2\big)\Big)^{1/p}.

The reference it approximates, :func:`otdd_exact`, is the OTDD of Alvarez-Melis & Fusi (2020):
optimal transport between the two datasets under the ground cost
:math:`\|x-x'\|^p + W_p^p(q_y, q'_{y'})`.

Cost of :func:`sotdd`: :math:`O(L\,n\,(d + \lambda_{\max} + \log n))` time and
:math:`O(\text{chunk}\cdot n)` memory; the class moments are a segment sum over points sorted by
label, so the number of classes does not enter. Its floor is the matrix product
:math:`\Theta X^\top` and the sort of every projected row. The label polynomial is the one part
that numpy cannot do near that floor (a pass over the block per degree, each bound by the cache's
bandwidth): a small compiled kernel (numba) evaluates it on runs of points that stay in the L1
cache, in the same arithmetic order on every CPU (no fused multiply-add, fixed partial sums).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from scipy.special import gammaln

from icml25.common.streams import as_generator
from icml25.common.validation import check_int

__all__ = [
    "Projections",
    "draw_projections",
    "project_dataset",
    "wasserstein_1d_pp",
    "sotdd",
    "label_wasserstein_table",
    "otdd_exact",
]


# --------------------------------------------------------------------------- validation


def _check_dataset(X, y, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Validate one labelled dataset and return ``(X as float64 (n, d), integer class codes)``."""
    X = np.asarray(X)
    y = np.asarray(y)
    if X.ndim != 2:
        raise ValueError(f"{name}: X must be a 2-D array (n_samples, n_features), got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name}: X is empty (shape {X.shape})")
    if not np.issubdtype(X.dtype, np.number) or np.iscomplexobj(X):
        raise ValueError(f"{name}: X must hold real numbers, got dtype {X.dtype}")
    X = X.astype(np.float64, copy=False)
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name}: X contains NaN or infinite values")
    if y.ndim != 1:
        raise ValueError(f"{name}: y must be a 1-D array of labels, got shape {y.shape}")
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"{name}: X has {X.shape[0]} rows but y has {y.shape[0]} labels; they must match"
        )
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{name}: y contains NaN labels")
    # Labels are names: re-code them as 0..c-1.  A class is "empty" only if it cannot be
    # represented in y, so unique() guarantees every code has at least one member.
    _, codes = np.unique(y, return_inverse=True)
    return X, codes.astype(np.intp)


def _check_pair(X1, y1, X2, y2):
    X1, c1 = _check_dataset(X1, y1, "dataset 1")
    X2, c2 = _check_dataset(X2, y2, "dataset 2")
    if X1.shape[1] != X2.shape[1]:
        raise ValueError(
            f"the datasets have different feature dimensions ({X1.shape[1]} and {X2.shape[1]}); "
            "s-OTDD and OTDD compare datasets in one feature space"
        )
    return X1, c1, X2, c2


def _check_p(p) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.number)) or not p >= 1:
        raise ValueError(f"p must be a number >= 1, got {p!r}")
    return float(p)


# --------------------------------------------------------------------------- projections


@dataclass(frozen=True)
class Projections:
    r"""A batch of :math:`m` random projections :math:`(\theta, \lambda, \psi)`.

    Attributes
    ----------
    theta : ndarray, shape (m, d)
        Feature directions :math:`\theta_l`, uniform on the sphere :math:`\mathbb S^{d-1}`.
    moments : ndarray of int, shape (m, k)
        Moment orders :math:`\lambda_{l,j}\ge1`, zero-truncated Poisson of rate :math:`j`.
    psi : ndarray, shape (m, k + 1)
        Mixing vectors :math:`\psi_l`, uniform on :math:`\mathbb S^{k}`.
    """

    theta: np.ndarray
    moments: np.ndarray
    psi: np.ndarray


def _unit_rows(rng: np.random.Generator, m: int, d: int) -> np.ndarray:
    v = rng.standard_normal((m, d))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _zero_truncated_poisson(rng: np.random.Generator, rates: np.ndarray, m: int) -> np.ndarray:
    """``m`` draws per rate of Poisson(rate) conditioned on being >= 1 (rejection of zeros)."""
    out = rng.poisson(rates, size=(m, rates.size))
    zeros = out == 0
    while zeros.any():  # P(0) <= e^{-1}, so this ends after a handful of rounds
        out[zeros] = rng.poisson(np.broadcast_to(rates, out.shape)[zeros])
        zeros = out == 0
    return out


def draw_projections(
    n_features: int, n_projections: int, n_moments: int, rng: np.random.Generator
) -> Projections:
    r"""Draw ``n_projections`` projections :math:`(\theta, \lambda, \psi)` as the paper does.

    Parameters
    ----------
    n_features : int
        Feature dimension :math:`d`.
    n_projections : int
        Number :math:`m` of projections in this batch.
    n_moments : int
        Number :math:`k` of label moments, :math:`\lambda_j\sim\text{ZTPoisson}(j)`.
    rng : numpy.random.Generator
    """
    rates = np.arange(1, n_moments + 1, dtype=float)
    return Projections(
        theta=_unit_rows(rng, n_projections, n_features),
        moments=_zero_truncated_poisson(rng, rates, n_projections),
        psi=_unit_rows(rng, n_projections, n_moments + 1),
    )


def project_dataset(X: np.ndarray, codes: np.ndarray, proj: Projections) -> np.ndarray:
    r"""Project every labelled point: :math:`z_l(x_i, y_i)` for each projection :math:`l`.

    Parameters
    ----------
    X : ndarray, shape (n, d)
    codes : ndarray of int, shape (n,)
        Class codes ``0..c-1`` (see ``_check_dataset``); every code must occur.
    proj : Projections
        A batch of :math:`m` projections.

    Returns
    -------
    ndarray, shape (n, m)
        :math:`z_{il} = \psi_{l0}\,\theta_l^\top x_i + \sum_j \psi_{lj}\,
        \mathrm{MTP}_j(q_{y_i})`.

    Notes
    -----
    Powers :math:`P^{\lambda}` are built incrementally, one integer exponent at a time, and each
    moment column picks the power it needs: :math:`\lambda_{\max}` multiplications of an
    :math:`n\times m` array instead of a slow ``np.power`` with an array of exponents.  Class means
    are segment sums over points sorted by class (``np.add.reduceat``), :math:`O(nm)` whatever the
    number of classes.  Division by :math:`\lambda!` uses ``gammaln`` to stay finite.
    """
    P = X @ proj.theta.T  # (n, m): theta_l^T x_i
    n, m = P.shape
    k = proj.moments.shape[1]
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    P_sorted = P[order]

    # moment_means[c, l, j] = mean over class c of P[:, l] ** lambda[l, j]
    moment_means = np.empty((counts.size, m, k))
    lam = proj.moments
    power = np.ones_like(P_sorted)
    for e in range(1, int(lam.max()) + 1):
        power *= P_sorted
        where_l, where_j = np.nonzero(lam == e)
        if where_l.size:
            sums = np.add.reduceat(power[:, where_l], starts, axis=0)  # (c, #cols)
            moment_means[:, where_l, where_j] = sums / counts[:, None]
    # MTP_j = mean(P^lambda_j) / lambda_j!
    mtp = moment_means * np.exp(-gammaln(lam + 1.0))[None, :, :]
    label_part = np.einsum("clj,lj->cl", mtp, proj.psi[:, 1:])  # (c, m)
    return proj.psi[:, 0] * P + label_part[codes]


# --------------------------------------------------------------------------- 1-D transport


def _quantile_grid(na: int, nb: int):
    """The merged grid of :func:`wasserstein_1d_pp`: interval widths, sample index on each side."""
    # jumps of F_a^{-1} at i*nb, of F_b^{-1} at j*na (units of 1/(na*nb))
    grid = np.union1d(np.arange(1, na + 1) * nb, np.arange(1, nb + 1) * na)
    widths = np.diff(grid, prepend=0) / (na * nb)
    # ceil(t * na) - 1 at the right end of each interval, and the same for b
    return widths, (grid + nb - 1) // nb - 1, (grid + na - 1) // na - 1


def wasserstein_1d_pp(a: np.ndarray, b: np.ndarray, p: float = 2.0) -> np.ndarray:
    r"""Column-wise :math:`W_p^p` between uniform empirical distributions on the real line.

    .. math:: W_p^p(\mu,\nu) = \int_0^1 |F_\mu^{-1}(t) - F_\nu^{-1}(t)|^p\,dt

    Both quantile functions are step functions; the integral is exact on the merged grid of
    their jumps :math:`\{i/n_a\}\cup\{j/n_b\}`, kept in integer units of :math:`1/(n_a n_b)` so
    that equal breakpoints merge exactly.  With :math:`n_a=n_b` it is the sorted difference.

    Parameters
    ----------
    a : ndarray, shape (n_a, m)
    b : ndarray, shape (n_b, m)
        ``m`` pairs of samples, one pair per column.
    p : float
        Order :math:`p\ge1`.

    Returns
    -------
    ndarray, shape (m,)
    """
    a = np.sort(np.asarray(a, dtype=float), axis=0)
    b = np.sort(np.asarray(b, dtype=float), axis=0)
    na, nb = a.shape[0], b.shape[0]
    if na == nb:
        return np.mean(np.abs(a - b) ** p, axis=0)
    widths, ia, ib = _quantile_grid(na, nb)
    return widths @ (np.abs(a[ia] - b[ib]) ** p)


# --------------------------------------------------------------------------- s-OTDD

#: Bytes of one block of rows that stays in the L2 cache from the label pass to the sort and the
#: transport cost (the product wrote the rows to memory; the block is read from it once).
_BLOCK_BYTES = 1 << 18


def _label_polynomials(proj: Projections) -> np.ndarray:
    r"""Coefficients of :math:`g_l(t) = \sum_j \psi_{lj}\, t^{\lambda_{lj}} / \lambda_{lj}!`.

    Returns ``coef`` of shape ``(m, lambda_max + 1)`` with ``coef[l, e]`` the sum of
    :math:`\psi_{lj}/\lambda_{lj}!` over the :math:`j` with :math:`\lambda_{lj} = e`, so that the
    label part of :math:`z_l` is the class mean of :math:`g_l(\theta_l^\top x)`.
    """
    m = proj.moments.shape[0]
    coef = np.zeros((m, int(proj.moments.max()) + 1))
    weights = proj.psi[:, 1:] * np.exp(-gammaln(proj.moments + 1.0))
    np.add.at(coef, (np.arange(m)[:, None], proj.moments), weights)
    return coef


#: Points whose label polynomial is evaluated at once: the run and its partial values stay in the
#: L1 cache while Horner's rule passes over them once per degree.
_RUN = 512


@numba.njit(cache=True, nogil=True)
def _polynomial_sum(buf, lanes, t, coef, top):  # pragma: no cover - compiled; tested via sotdd
    r""":math:`\sum_i g(t_i)` for a short run ``t``, with ``g`` of degree ``top`` and no constant.

    Horner's rule, :math:`h \leftarrow c_{top} t`, then :math:`h \leftarrow (h + c_e)\,t` for
    :math:`e = top-1, \dots, 1`, up to three degrees per vectorised pass over the run; the sum
    in eight fixed interleaved partial sums, so that it is the same on every CPU whatever its
    vector width (no reassociation, no fused multiply-add).
    """
    k = t.shape[0]
    c, e = coef[top], top - 1
    if e >= 3:  # the top coefficient and three more degrees in the first pass
        c1, c2, c3 = coef[e], coef[e - 1], coef[e - 2]
        for i in range(k):
            x = t[i]
            buf[i] = (((c * x + c1) * x + c2) * x + c3) * x
        e -= 3
    else:
        for i in range(k):
            buf[i] = c * t[i]
    while e >= 3:  # three degrees per pass: a third of the loads and stores, same arithmetic
        c1, c2, c3 = coef[e], coef[e - 1], coef[e - 2]
        for i in range(k):
            x = t[i]
            buf[i] = (((buf[i] + c1) * x + c2) * x + c3) * x
        e -= 3
    while e >= 1:
        c1 = coef[e]
        for i in range(k):
            buf[i] = (buf[i] + c1) * t[i]
        e -= 1
    # eight independent chains (element i to chain i mod 8, in buf's precision: one vector of
    # float32, two of float64): an add's latency is hidden behind the next seven
    lanes[:] = 0
    whole = k - k % 8
    for i in range(0, whole, 8):
        for j in range(8):
            lanes[j] += buf[i + j]
    for i in range(whole, k):
        lanes[0] += buf[i]
    return (((np.float64(lanes[0]) + lanes[1]) + (lanes[2] + lanes[3]))
            + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7])))


@numba.njit(cache=True, nogil=True)
def _add_label_parts(T, coef, tops, psi0, starts, counts):  # pragma: no cover - compiled
    r"""Turn rows :math:`t_{li} = \theta_l^\top x_i` into :math:`z_l(x_i, y_i)`, in place.

    ``T`` is a block ``(b, n)`` of one dataset whose points are grouped by class (``starts``,
    ``counts``). The label part of row :math:`l` for class :math:`c` is the class mean of
    :math:`g_l(t)` (:func:`_label_polynomials`), then
    :math:`z = \psi_{l0}\,t + \text{label part}`: one read of each row for the polynomial and
    one read and write for :math:`z`, where numpy needs a pass over the block per degree.
    """
    # in T's precision (coef and psi0 come in it): float32 rows are rooted and scaled in float32,
    # eight to a vector, the sums over a run and over a class staying float64
    buf = np.empty(_RUN, dtype=T.dtype)
    lanes = np.empty(8, dtype=T.dtype)
    label = np.empty(1, dtype=T.dtype)
    for r in range(T.shape[0]):
        t, cf, top, scale = T[r], coef[r], tops[r], psi0[r]
        for c in range(starts.shape[0]):
            first, size = starts[c], counts[c]
            total = 0.0
            for lo in range(first, first + size, _RUN):
                hi = min(lo + _RUN, first + size)
                total += _polynomial_sum(buf[: hi - lo], lanes, t[lo:hi], cf, top)
            label[0] = total / size
            shift = label[0]
            segment = t[first : first + size]  # a view from 0: a loop the compiler vectorises
            for i in range(size):
                segment[i] = scale * segment[i] + shift


@numba.njit(cache=True, nogil=True)
def _wpp_equal_rows(a, b, p):  # pragma: no cover - compiled; tested through sotdd
    """Row-wise :math:`W_p^p` between sorted rows of equal length, in one pass.

    Four fixed partial sums (element ``i`` goes to sum ``i mod 4``), so that the result is the
    same on every CPU; the loop for :math:`p = 2` has no branch and no power.
    """
    m, n = a.shape
    out = np.empty(m)
    whole = n - n % 4
    for r in range(m):
        x, y = a[r], b[r]
        s0 = s1 = s2 = s3 = 0.0
        if p == 2.0:
            for i in range(0, whole, 4):
                d0, d1 = x[i] - y[i], x[i + 1] - y[i + 1]
                d2, d3 = x[i + 2] - y[i + 2], x[i + 3] - y[i + 3]
                s0 += d0 * d0
                s1 += d1 * d1
                s2 += d2 * d2
                s3 += d3 * d3
            for i in range(whole, n):
                s0 += (x[i] - y[i]) ** 2
        else:
            for i in range(0, whole, 4):
                s0 += abs(x[i] - y[i]) ** p
                s1 += abs(x[i + 1] - y[i + 1]) ** p
                s2 += abs(x[i + 2] - y[i + 2]) ** p
                s3 += abs(x[i + 3] - y[i + 3]) ** p
            for i in range(whole, n):
                s0 += abs(x[i] - y[i]) ** p
        out[r] = ((s0 + s1) + (s2 + s3)) / n
    return out


#: Elements of a float32 row summed in float32 before the sum joins the row's float64 total.
_F32_BLOCK = 256


@numba.njit(cache=True, nogil=True)
def _w22_equal_rows_f32(a, b):  # pragma: no cover - compiled; tested through sotdd
    """Row-wise :math:`W_2^2` between sorted float32 rows of equal length.

    Within a block of :data:`_F32_BLOCK` elements, eight float32 lanes (element ``i`` to lane
    ``i mod 8``: a vector of the CPU) each add 32 squares; the blocks' sums are added in
    float64. The order is fixed, so the result is the same on every CPU, and each lane's
    rounding (about :math:`32 \times 6\times10^{-8}` relative) is far below the Monte-Carlo
    error. Converting every element to float64 instead runs four times slower.
    """
    m, n = a.shape
    out = np.empty(m)
    lanes = np.zeros(8, dtype=np.float32)
    whole = n - n % _F32_BLOCK
    for r in range(m):
        x, y = a[r], b[r]
        total = 0.0
        for lo in range(0, whole, _F32_BLOCK):
            lanes[:] = 0
            for i in range(lo, lo + _F32_BLOCK, 8):
                for j in range(8):
                    d = x[i + j] - y[i + j]
                    lanes[j] += d * d
            total += (((np.float64(lanes[0]) + lanes[1]) + (lanes[2] + lanes[3]))
                      + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7])))
        for i in range(whole, n):
            total += np.float64(x[i] - y[i]) ** 2
        out[r] = total / n
    return out


def _wpp_sorted_rows(a: np.ndarray, b: np.ndarray, p: float, grid) -> np.ndarray:
    """Row-wise :math:`W_p^p` between sorted rows ``a`` (m, na) and ``b`` (m, nb)."""
    if a.shape[1] == b.shape[1]:
        if a.dtype == np.float32 and p == 2.0:
            return _w22_equal_rows_f32(a, b)
        return _wpp_equal_rows(a, b, p)
    widths, ia, ib = grid
    return (np.abs(a[:, ia] - b[:, ib]) ** p) @ widths


def _chunk_values(sides, proj: Projections, p: float, grid, out=None) -> np.ndarray:
    """:math:`W_p^p(z_l\\sharp D_1, z_l\\sharp D_2)` for one batch of projections.

    ``out``: optional buffers of at least ``(m, n_s)`` for the two products, reused from batch
    to batch (a fresh array of that size costs a page fault per 4 KiB at its first write).
    """
    dtype = sides[0][0].dtype
    coef = _label_polynomials(proj).astype(dtype)
    tops = proj.moments.max(axis=1)
    psi0 = np.ascontiguousarray(proj.psi[:, 0], dtype=dtype)
    m = len(coef)
    out = out or [np.empty((m, X.shape[0]), dtype=dtype) for X, _, _ in sides]
    # (m, n_s): one BLAS product per dataset, a row per projection
    projected = [np.matmul(proj.theta, X.T, out=buf[:m]) for (X, _, _), buf in zip(sides, out)]
    n_max = max(T.shape[1] for T in projected)
    rows = max(1, _BLOCK_BYTES // (projected[0].itemsize * n_max))
    values = np.empty(m)
    for r0 in range(0, m, rows):
        block = slice(r0, r0 + rows)
        for T, (_, starts, counts) in zip(projected, sides, strict=True):
            _add_label_parts(T[block], coef[block], tops[block], psi0[block], starts, counts)
            T[block].sort(axis=1)  # the block is still in the cache from the pass above
        values[block] = _wpp_sorted_rows(projected[0][block], projected[1][block], p, grid)
    return values


def sotdd(
    X1,
    y1,
    X2,
    y2,
    *,
    n_projections: int = 1000,
    n_moments: int = 5,
    p: float = 2,
    seed: int = 0,
    chunk_size: int = 250,
    return_per_projection: bool = False,
    dtype="float64",
):
    r"""Sliced optimal transport dataset distance, :math:`\text{s-OTDD}_p(D_1, D_2)`.

    Parameters
    ----------
    X1, y1 : array-like, shapes (n1, d) and (n1,)
        First dataset :math:`D_1`: features and labels (any hashable-sortable labels).
    X2, y2 : array-like, shapes (n2, d) and (n2,)
        Second dataset :math:`D_2`; its size, its number of classes and its label names may
        differ from :math:`D_1`'s.
    n_projections : int
        Number :math:`L` of Monte-Carlo projections.
    n_moments : int
        Number :math:`k` of label moments in the Moment Transform Projection (the paper's
        experiments use 5).
    p : float
        Order of the Wasserstein distance, :math:`p\ge1`.
    seed : int, SeedSequence or Generator (default 0)
        Seed of the projection draw; both datasets always share the same draw, so
        ``sotdd(X, y, X, y)`` is exactly 0 and the distance is exactly symmetric.
    chunk_size : int
        Projections drawn and processed at once; memory is
        :math:`O(\text{chunk}\cdot(n_1+n_2))`.
    return_per_projection : bool
        Also return the :math:`L` values :math:`W_p^p(z_l\sharp D_1, z_l\sharp D_2)` (for the
        Monte-Carlo error).
    dtype : {"float64", "float32"}
        Precision of the projected values :math:`\theta_l^\top x_i`, their sort and their
        differences (the label polynomials and every sum are float64 either way).
        ``"float32"``, the authors' precision, halves the memory traffic of the product and
        the sort; its rounding (relative :math:`6\times10^{-8}` per value) is far below the
        Monte-Carlo error of :math:`L` projections (about :math:`1/\sqrt L`).

    Returns
    -------
    float, or (float, ndarray of shape (L,))

    Notes
    -----
    The same values as :func:`project_dataset` followed by :func:`wasserstein_1d_pp` (to
    rounding), computed in a fused layout: points grouped by class once, one matrix product
    :math:`\Theta X^\top` per dataset with a row per projection (into buffers reused from
    chunk to chunk), the label moments as one polynomial per projection (Horner's rule, compiled,
    on runs of points in the L1 cache), and every row sorted in place, so that the work beyond
    the product and the sort is about two passes over each row. All projections are drawn
    before the first product (the same draws as chunk by chunk).
    """
    X1, c1, X2, c2 = _check_pair(X1, y1, X2, y2)
    L = check_int(n_projections, "n_projections", minimum=1)
    k = check_int(n_moments, "n_moments", minimum=1)
    chunk = check_int(chunk_size, "chunk_size", minimum=1)
    p = _check_p(p)
    if str(dtype) not in ("float64", "float32"):
        raise ValueError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
    dtype = np.dtype(str(dtype))
    sides = []
    for X, codes in ((X1, c1), (X2, c2)):
        order = np.argsort(codes, kind="stable")  # classes become contiguous segments
        counts = np.bincount(codes)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        sides.append((np.ascontiguousarray(X[order], dtype=dtype), starts, counts))
    grid = _quantile_grid(len(X1), len(X2)) if len(X1) != len(X2) else None
    rng = as_generator(seed)
    per_projection = np.empty(L)
    buffers = [np.empty((min(chunk, L), X.shape[0]), dtype=dtype) for X, _, _ in sides]
    starts = range(0, L, chunk)
    draws = [draw_projections(X1.shape[1], min(chunk, L - s), k, rng) for s in starts]
    if dtype != np.float64:  # the same draws, the directions rounded to the product's type
        draws = [Projections(d.theta.astype(dtype), d.moments, d.psi) for d in draws]
    for start, proj in zip(starts, draws):
        per_projection[start : start + len(proj.theta)] = _chunk_values(sides, proj, p, grid,
                                                                       buffers)
    value = float(np.mean(per_projection) ** (1.0 / p))
    return (value, per_projection) if return_per_projection else value


# --------------------------------------------------------------------------- exact OTDD


def _emd2(a, b, M) -> float:
    import ot  # POT: imported here so that s-OTDD alone does not pay for it

    # The default iteration cap of POT's network simplex is too low beyond ~1,000 points per side.
    return float(ot.emd2(a, b, M, numItermax=50_000_000))


def _pairwise_cost(A: np.ndarray, B: np.ndarray, p: float) -> np.ndarray:
    """:math:`\\|a-b\\|^p` for all pairs (squared Euclidean computed directly when p = 2)."""
    sq = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    np.maximum(sq, 0.0, out=sq)
    return sq if p == 2 else sq ** (p / 2)


def label_wasserstein_table(X1, c1, X2, c2, p: float = 2.0) -> np.ndarray:
    r"""Table :math:`W_p^p(q_a, q'_b)` between every class of :math:`D_1` and every class of :math:`D_2`.

    Each entry is an exact OT problem (POT's network simplex) between the two class-conditional
    empirical distributions with uniform weights and cost :math:`\|x-x'\|^p`.
    """
    classes1 = [X1[c1 == a] for a in range(c1.max() + 1)]
    classes2 = [X2[c2 == b] for b in range(c2.max() + 1)]
    W = np.empty((len(classes1), len(classes2)))
    for a, A in enumerate(classes1):
        wa = np.full(len(A), 1.0 / len(A))
        for b, B in enumerate(classes2):
            wb = np.full(len(B), 1.0 / len(B))
            W[a, b] = _emd2(wa, wb, _pairwise_cost(A, B, p))
    return W


def otdd_exact(X1, y1, X2, y2, *, p: float = 2) -> float:
    r"""Exact optimal transport dataset distance (Alvarez-Melis & Fusi, 2020).

    .. math:: \mathrm{OTDD}(D_1, D_2) = \Big(\min_{\pi\in\Pi(D_1,D_2)} \sum_{i,j}\pi_{ij}
              \big[\|x_i-x'_j\|^p + W_p^p(q_{y_i}, q'_{y'_j})\big]\Big)^{1/p}

    The inner label-to-label costs and the outer problem are both solved exactly with POT's
    network simplex (``ot.emd2``), as the paper's "OTDD (exact)" baseline.  Time grows like
    :math:`n^3\log n` for the outer problem and memory like :math:`n_1 n_2`.

    Parameters
    ----------
    X1, y1, X2, y2 : array-like
        The two labelled datasets, as in :func:`sotdd`.
    p : float
        Order :math:`p\ge1`.
    """
    X1, c1, X2, c2 = _check_pair(X1, y1, X2, y2)
    p = _check_p(p)
    W = label_wasserstein_table(X1, c1, X2, c2, p)
    cost = _pairwise_cost(X1, X2, p) + W[c1][:, c2]
    n1, n2 = len(X1), len(X2)
    value = _emd2(np.full(n1, 1.0 / n1), np.full(n2, 1.0 / n2), cost)
    return float(max(value, 0.0) ** (1.0 / p))
