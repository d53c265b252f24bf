r"""Closed forms of the proportional limit :math:`n,d\to\infty`, :math:`n/d=\gamma`.

:func:`risk_scratch` (eq. 8), :func:`risk_linear_transfer` (eqs. 10 and 13),
:func:`transfer_gain_linear` (eq. 11), :func:`transfer_gain_finetune` (eq. 15, with the
balancedness scale :func:`finetune_scale` for label noise), :func:`break_even_angle`, and the
exact finite-size means :func:`risk_scratch_finite`, :func:`risk_linear_transfer_finite`.
"""

from __future__ import annotations

import numpy as np

from icml25.common.validation import check_int

from ._common import _angles, _array, _integers, _scalar_or_array

__all__ = [
    "risk_scratch",
    "risk_scratch_finite",
    "risk_linear_transfer",
    "risk_linear_transfer_finite",
    "transfer_gain_linear",
    "finetune_scale",
    "transfer_gain_finetune",
    "break_even_angle",
]


def risk_scratch(gamma, sigma=0.0):
    r"""Risk of the minimum-norm interpolator trained from scratch, eq. (8).

    .. math::
        R_{sc}(\gamma,\sigma)=\begin{cases}(1-\gamma)+\dfrac{\gamma\sigma^2}{1-\gamma},
        & \gamma<1,\\[1ex] \dfrac{\sigma^2}{\gamma-1}, & \gamma>1,\end{cases}

    the bias :math:`\|(I-P)\beta_t\|^2\to1-\gamma` of the part of :math:`\beta_t` outside the
    row space of :math:`X` plus the variance :math:`\sigma^2\operatorname{tr}(XX^\top)^{-1}`.
    At :math:`\gamma=1` it is :math:`+\infty` with noise and 0 without (the double-descent peak).

    Parameters
    ----------
    gamma : float or array
        Samples per dimension :math:`\gamma=n/d>0`.
    sigma : float or array
        Label-noise standard deviation :math:`\sigma\ge0`.
    """
    g = _array(gamma, "gamma", low=0.0, strict_low=True)
    s2 = _array(sigma, "sigma", low=0.0) ** 2
    g, s2 = np.broadcast_arrays(g, s2)
    with np.errstate(divide="ignore", invalid="ignore"):
        below = (1 - g) + g * s2 / (1 - g)
        above = s2 / (g - 1)
    out = np.where(g < 1, below, above)
    out = np.where(g == 1, np.where(s2 > 0, np.inf, 0.0), out)
    return _scalar_or_array(out)


def risk_scratch_finite(n, d, sigma=0.0):
    r"""Exact mean risk of the minimum-norm interpolator, Gaussian :math:`X\in\mathbb R^{n\times d}`.

    .. math::
        \mathbb E\,R_{sc}=\begin{cases}1-\dfrac nd+\dfrac{\sigma^2 n}{d-n-1}, & n<d-1,\\[1ex]
        \dfrac{\sigma^2 d}{n-d-1}, & n>d+1,\end{cases}

    from :math:`\mathbb E\|P\beta_t\|^2=n/d` (the row space is a uniformly random subspace) and
    the mean of an inverse Wishart matrix. Tends to eq. (8) as :math:`d\to\infty`. Infinite for
    :math:`|n-d|\le1` with noise.

    Parameters
    ----------
    n, d : int or array of int
        Sample size :math:`n\ge1` and dimension :math:`d\ge1`.
    sigma : float or array
        Label-noise standard deviation :math:`\sigma\ge0`.
    """
    n = _integers(n, "n", 1).astype(float)
    d = _integers(d, "d", 1).astype(float)
    s2 = _array(sigma, "sigma", low=0.0) ** 2
    n, d, s2 = np.broadcast_arrays(n, d, s2)
    with np.errstate(divide="ignore", invalid="ignore"):
        below = 1 - n / d + s2 * n / (d - n - 1)
        above = s2 * d / (n - d - 1)
    out = np.where(n < d - 1, below, above)
    near = np.abs(n - d) <= 1
    out = np.where(near, np.where(s2 > 0, np.inf, np.maximum(1 - n / d, 0.0)), out)
    return _scalar_or_array(out)


def risk_linear_transfer(theta, lam=0.0):
    r"""Risk of linear transfer (ridge read-out on the pretrained feature), eq. (13).

    .. math:: R_{lt}(\theta,\lambda)=1-\frac{1+2\lambda}{(1+\lambda)^2}\cos^2\theta,

    independent of :math:`\gamma` and :math:`\sigma` in the proportional limit;
    :math:`\sin^2\theta` at :math:`\lambda=0` (eq. 10 as :math:`n\to\infty`). It rises with
    :math:`\lambda` for every :math:`\theta<\pi/2`: ridge only shrinks the one coefficient.

    Parameters
    ----------
    theta : float or array
        Angle :math:`\theta\in[0,\pi]` between :math:`\beta_s` and :math:`\beta_t`.
    lam : float or array
        Ridge penalty :math:`\lambda\ge0` on the read-out (per sample, as in
        :func:`~icml25.transfer_theory.linear.linear_transfer`).
    """
    th = _angles(theta)
    lam = _array(lam, "lam", low=0.0)
    return _scalar_or_array(1 - (1 + 2 * lam) / (1 + lam) ** 2 * np.cos(th) ** 2)


def risk_linear_transfer_finite(theta, n, sigma=0.0):
    r"""Exact mean risk of unregularised linear transfer from :math:`n` samples, eq. (10).

    .. math:: \mathbb E\,R_{lt}=\sin^2\theta+\frac{\sigma^2+\sin^2\theta}{n-2},

    the floor :math:`\sin^2\theta` plus the variance of one least-squares coefficient whose
    residual (label noise plus the target's part outside the feature) has variance
    :math:`\sigma^2+\sin^2\theta`; :math:`\mathbb E\,\|z\|^{-2}=1/(n-2)` for
    :math:`z\sim\mathcal N(0,I_n)`.

    Parameters
    ----------
    theta : float or array
        Angle :math:`\theta\in[0,\pi]`.
    n : int or array of int
        Target sample size :math:`n\ge3`.
    sigma : float or array
        Label-noise standard deviation :math:`\sigma\ge0`.
    """
    th = _angles(theta)
    n = _integers(n, "n", 3)
    s2 = _array(sigma, "sigma", low=0.0) ** 2
    floor = np.sin(th) ** 2
    return _scalar_or_array(floor + (s2 + floor) / (n - 2))


def transfer_gain_linear(gamma, theta, sigma=0.0, lam=0.0):
    r"""Transferability of linear transfer, eq. (11): :math:`\mathcal T_{lt}=R_{sc}-R_{lt}`.

    .. math:: \mathcal T_{lt}(\gamma,\theta,\sigma)=R_{sc}(\gamma,\sigma)
              -1+\frac{1+2\lambda}{(1+\lambda)^2}\cos^2\theta .

    Without noise and ridge, linear transfer wins iff :math:`\cos^2\theta>\gamma`.

    Parameters
    ----------
    gamma, theta, sigma, lam : float or array
        As in :func:`risk_scratch` and :func:`risk_linear_transfer`; broadcast together.
    """
    return _scalar_or_array(np.asarray(risk_scratch(gamma, sigma))
                            - np.asarray(risk_linear_transfer(theta, lam)))


def _balanced_norm(a, b, r, depth: int, iterations: int = 100):
    r"""Positive root :math:`t` of :math:`t^2=b+a\,(t/r)^{q}`, :math:`q=2(L-1)/L` (bisection).

    ``a`` is the squared null-space part of the starting vector, ``b`` the squared row-space
    part of the end point, ``r`` the starting norm. Unique: :math:`t^{2-q}-b\,t^{-q}` increases.
    """
    a, b, r = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (a, b, r)))
    q = 2 * (depth - 1) / depth
    scale = np.where(a > 0, a / np.where(r > 0, r, 1.0) ** q, 0.0)

    def excess(t):
        return t * t - b - scale * t**q

    lo, hi = np.zeros_like(b), np.ones_like(b)
    while np.any(excess(hi) <= 0):
        hi = np.where(excess(hi) <= 0, 2 * hi, hi)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        low_side = excess(mid) <= 0
        lo, hi = np.where(low_side, mid, lo), np.where(low_side, hi, mid)
    return 0.5 * (lo + hi)


def finetune_scale(gamma, sigma=0.0, depth: int = 2):
    r"""Scale :math:`c` of the pretrained null-space part after fine-tuning (balancedness).

    Gradient flow keeps :math:`\hat\beta` moving in the row space of :math:`X` except along
    :math:`\hat\beta` itself, and conserves the layers' balance, which ties the null-space
    part :math:`c\,(I-P)\beta_s` to the norm: :math:`c=\|\hat\beta\|^{(L-1)/L}`. Interpolation
    fixes the row-space part to :math:`X^+y`, whence, with :math:`s^L=\|\hat\beta\|`,

    .. math:: s^{2L}=a\,s^{2L-2}+b,\quad c=s^{L-1},\quad a=1-\gamma,\quad
              b=\gamma+\frac{\sigma^2\gamma}{1-\gamma}.

    For :math:`L=2` this is :math:`c^4-ac^2-b=0`. :math:`c=1` exactly when :math:`\sigma=0`;
    eq. (15) as printed uses :math:`c=1` at every noise level. Returns ``nan`` for
    :math:`\gamma\ge1` (no null space).

    Parameters
    ----------
    gamma : float or array
        :math:`\gamma=n/d>0`.
    sigma : float or array
        Label-noise standard deviation :math:`\sigma\ge0`.
    depth : int
        Number of layers :math:`L\ge2`.
    """
    g = _array(gamma, "gamma", low=0.0, strict_low=True)
    s2 = _array(sigma, "sigma", low=0.0) ** 2
    L = check_int(depth, "depth", minimum=2)
    g, s2 = np.broadcast_arrays(g, s2)
    inside = g < 1
    gi = np.where(inside, g, 0.5)
    a, b = 1 - gi, gi + s2 * gi / (1 - gi)
    t = _balanced_norm(a, b, 1.0, L)
    c = np.where(s2 == 0, 1.0, t ** ((L - 1) / L))
    return _scalar_or_array(np.where(inside, c, np.nan))


def transfer_gain_finetune(gamma, theta, sigma=0.0, *, depth: int = 2, balanced: bool = True):
    r"""Transferability of fine-tuning, eq. (15), with the balancedness scale for noise.

    .. math:: \mathcal T_{ft}=\begin{cases}(1-\gamma)\,(2c\cos\theta-c^2), & \gamma<1,\\
              0, & \gamma\ge1,\end{cases}

    with :math:`c` from :func:`finetune_scale`. At :math:`\sigma=0`, :math:`c=1` and this is the
    paper's :math:`(\gamma-1)(1-2\cos\theta)`: fine-tuning helps iff :math:`\theta<\pi/3` and
    :math:`\gamma<1`. The reason: gradient descent changes :math:`\hat\beta` only in the row
    space of :math:`X`; in the null space scratch keeps 0 and fine-tuning keeps
    :math:`c\,\beta_s`.

    Parameters
    ----------
    gamma, theta, sigma : float or array
        Broadcast together; :math:`\theta\in[0,\pi]`.
    depth : int
        Number of layers :math:`L\ge2` (enters only through :math:`c`).
    balanced : bool
        ``False`` uses :math:`c=1` at every noise level (eq. 15 as printed).
    """
    g = _array(gamma, "gamma", low=0.0, strict_low=True)
    th = _angles(theta)
    _array(sigma, "sigma", low=0.0)
    c = np.asarray(finetune_scale(gamma, sigma, depth)) if balanced else np.ones_like(g)
    g, th, c = np.broadcast_arrays(g, th, c)
    gain = (1 - g) * (2 * c * np.cos(th) - c**2)
    return _scalar_or_array(np.where(g < 1, gain, 0.0))


def break_even_angle(gamma, sigma=0.0, depth: int = 2):
    r"""Angle below which fine-tuning beats scratch, :math:`\theta^*=\arccos(c/2)` (γ < 1).

    :math:`\pi/3` without noise; smaller with noise (``0`` once :math:`c\ge2`).
    """
    c = np.asarray(finetune_scale(gamma, sigma, depth))
    return _scalar_or_array(np.arccos(np.clip(c / 2, -1, 1)))
