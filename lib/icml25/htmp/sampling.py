r"""Sampling the ensemble: the Dumitriu-Edelman bidiagonal model, and Haar layers with a given
spectrum."""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import eigvalsh_tridiagonal

from icml25.common.streams import as_generator
from icml25.common.validation import check_int

from ._checks import SMALL_EIGENVALUE, _check_gamma, _check_kappa


def _bidiagonal_gram_eigenvalues(diag: np.ndarray, sub: np.ndarray) -> np.ndarray:
    """Sorted eigenvalues of B B^T for the lower-bidiagonal B = (diag, sub).

    LAPACK's tridiagonal solver is accurate to ~1e-16 of the largest eigenvalue only, and for
    small kappa many eigenvalues lie far below that (they come from tiny chi variates).  Those are
    recomputed as squared singular values of B by bisection on the Golub-Kahan matrix, the
    zero-diagonal tridiagonal with off-diagonal (d1, e1, d2, ..., dn) and eigenvalues +-sigma,
    which is accurate to high *relative* precision (Demmel & Kahan 1990).
    """
    n = len(diag)
    fast = eigvalsh_tridiagonal(diag**2 + np.r_[0.0, sub**2], diag[:-1] * sub)
    fast.sort()
    inaccurate = int(np.searchsorted(fast, SMALL_EIGENVALUE * fast[-1])) + 1  # +1: the boundary
    if inaccurate > 1:
        inaccurate = min(inaccurate, n)
        golub_kahan = np.empty(2 * n - 1)
        golub_kahan[0::2], golub_kahan[1::2] = diag, sub
        sigma = eigvalsh_tridiagonal(
            np.zeros(2 * n), golub_kahan, select="i", select_range=(n, n + inaccurate - 1),
            lapack_driver="stebz", tol=np.finfo(float).tiny)
        fast[:inaccurate] = np.sort(np.abs(sigma)) ** 2
    return fast


def sample_htmp(n, gamma, kappa, rng):
    r"""Nonzero eigenvalues of one HTMP matrix of rank ``n``, sorted, in the scale of
    :func:`~icml25.htmp.density.htmp_density`.

    Dumitriu & Edelman's (2002) bidiagonal model of the :math:`\beta`-Laguerre ensemble with
    :math:`p=\gamma n`:

    .. math:: B_{ii}\sim\chi_{\beta(p-i+1)},\quad B_{i+1,i}\sim\chi_{\beta(n-i)},\qquad
              \beta=\kappa/p,\qquad x=\frac{\gamma}{\kappa}\operatorname{eig}(BB^\top),

    so that :math:`\mathbb E[x]=\gamma` exactly and the empirical distribution of :math:`x` tends
    to :math:`f` as :math:`n\to\infty` with :math:`\kappa=\beta p` fixed.  (The :math:`p-n` zero
    eigenvalues of the :math:`p\times p` matrix, the atom, are not returned.)  ``kappa=np.inf``
    samples the real Wishart matrix (:math:`\beta=1`, scaled by :math:`\gamma/p`), whose spectrum
    tends to Marchenko-Pastur.  :math:`O(n^2)` time; small eigenvalues are accurate to high
    relative precision (see ``_bidiagonal_gram_eigenvalues``).

    Parameters
    ----------
    n : int
        Number of nonzero eigenvalues (the smaller dimension).
    gamma : float
        Aspect ratio :math:`\gamma=p/n>1`; :math:`p=\gamma n` need not be an integer.
    kappa : float
        :math:`\kappa>0` or ``np.inf``.
    rng : numpy.random.Generator or int
        Randomness (an int is used as a seed).

    Returns
    -------
    ndarray, shape (n,)
    """
    n, gamma = check_int(n, "n", minimum=1), _check_gamma(gamma)
    kappa = _check_kappa(kappa, for_density=False)  # any kappa: the sampler needs no U
    rng = as_generator(rng)
    p = gamma * n
    beta = 1.0 if math.isinf(kappa) else kappa / p
    i = np.arange(1, n + 1)
    diag = np.sqrt(rng.chisquare(beta * (p - i + 1)))
    sub = np.sqrt(rng.chisquare(beta * (n - i[:-1])))
    return _bidiagonal_gram_eigenvalues(diag, sub) * (gamma / (beta * p))


def sample_htmp_many(n, gamma, kappa, count, seed) -> np.ndarray:
    r"""Nonzero eigenvalues of ``count`` independent HTMP matrices (:func:`sample_htmp`), one
    row each, sorted within rows.

    Matrix :math:`r` draws from the :math:`r`-th child of ``seed`` (``Generator.spawn``), so
    that the first rows do not change when ``count`` grows, and replicates are independent by
    construction rather than consecutive draws of one stream.

    Parameters
    ----------
    n, gamma, kappa
        As for :func:`sample_htmp`.
    count : int
        Number of matrices.
    seed : int, SeedSequence or numpy.random.Generator
        The stream the children are spawned from (a Generator is advanced: spawning from it
        twice gives new children).

    Returns
    -------
    ndarray, shape (count, n)
    """
    count = check_int(count, "count", minimum=1)
    children = as_generator(seed).spawn(count)
    return np.stack([sample_htmp(n, gamma, kappa, child) for child in children])


def haar_layer(eigs, m, rng) -> np.ndarray:
    r"""A weight matrix :math:`W=U\,\mathrm{diag}(\sqrt{\lambda})\,V^\top` of shape ``(m, n)``
    whose :math:`W^\top W` has the eigenvalues ``eigs``, with Haar-distributed singular vectors.

    :math:`V` is Haar on :math:`O(n)` and :math:`U` Haar on the Stiefel manifold of
    :math:`m\times n` orthonormal frames, both from the QR factorisation of a Gaussian matrix with
    the signs of :math:`R`'s diagonal moved into :math:`Q` (Mezzadri 2007;
    ``scipy.stats.ortho_group`` does the same for square matrices).  Maximal eigenvector entropy:
    the spectrum is all the structure.

    Parameters
    ----------
    eigs : array_like, shape (n,)
        Nonnegative eigenvalues (squared singular values).
    m : int
        Number of rows, ``m >= n`` (``m / n`` is the aspect ratio :math:`\gamma`).
    rng : numpy.random.Generator or int
    """
    eigs = np.asarray(eigs, dtype=float)
    if eigs.ndim != 1 or eigs.size == 0:
        raise ValueError(f"eigs must be a non-empty 1-D array, got shape {eigs.shape}")
    if not np.all(np.isfinite(eigs)) or np.any(eigs < 0):
        raise ValueError("eigs must be finite and nonnegative")
    n = eigs.size
    m = check_int(m, "m", minimum=1)
    if m < n:
        raise ValueError(f"m must be at least len(eigs) = {n}, got {m}")
    rng = as_generator(rng)

    def haar_frame(rows, cols):
        q, r = np.linalg.qr(rng.standard_normal((rows, cols)))
        return q * np.sign(np.diag(r))

    return (haar_frame(m, n) * np.sqrt(eigs)) @ haar_frame(n, n).T
