"""How a learner's deficit from the equal share shrinks with the horizon $T$.

Against identical opponents fixed at $\\sigma$ the learner sees the same payoff vector
$g=g(\\sigma)$ every round and earns on average $\\bar u_T=\\frac1T\\sum_t x_t^\\top g$. Its
*deficit from the equal share* is

$$d_T=C/n-\\bar u_T=\\underbrace{\\big(C/n-\\max_a g_a\\big)}_{\\le 0}
+\\underbrace{\\big(\\max_a g_a-\\bar u_T\\big)}_{\\text{regret}/T},$$

and since $\\max_a g_a\\ge C/n$ it is at most the learner's average regret: for Hedge tuned to
$T$ at most $\\epsilon_T=R\\sqrt{\\ln A/(2T)}$. The first term is zero exactly when $\\sigma$ is a
symmetric equilibrium (no action earns more than $C/n$): against equilibrium opponents the
deficit *is* the regret, the case in which the guarantee's argument is tight.

:func:`equal_share_deficits` gives $d_T$ on a grid of horizons for a batch of games,
:func:`deficit_exponent` the log-log slope of the mean deficit in $T$ with a bootstrap
interval over the games.
"""

from __future__ import annotations

import numpy as np

from icml25.common.stats import Estimate, resample_indices
from icml25.common.validation import check_array, check_choice, check_int

from .learners import hedge_rate, play_gains


def _horizons(horizons) -> np.ndarray:
    T = np.asarray(horizons)
    if T.ndim != 1 or T.size == 0 or not np.issubdtype(T.dtype, np.integer):
        raise ValueError(f"horizons must be a non-empty 1-d array of integers; got {horizons!r}")
    if T.min() < 1 or np.any(np.diff(T) <= 0):
        raise ValueError(f"horizons must be positive and increasing; got {T.tolist()}")
    return T.astype(np.int64)


def _gains_and_ranges(gains, payoff_range):
    gains = check_array(gains, "gains", ndim=2)
    if gains.shape[1] < 2:
        raise ValueError(f"gains must have at least 2 actions; got shape {gains.shape}")
    R = np.broadcast_to(check_array(payoff_range, "payoff_range"), gains.shape[:1]).copy()
    if np.any(R <= 0):
        raise ValueError("payoff_range must be positive")
    return gains, R


def hedge_fixed_average(gains, horizon: int, payoff_range=1.0) -> np.ndarray:
    """Hedge's average payoff over ``horizon`` rounds against fixed opponents, in closed form.

    With constant gains $g$ Hedge's cumulative gains after $t$ rounds are $tg$, so it plays
    $x_t=\\mathrm{softmax}(\\eta t g)$ with $\\eta=\\sqrt{8\\ln A/T}/R$ and earns
    $\\frac1T\\sum_{t=0}^{T-1}x_t^\\top g$: the loop of :func:`~.learners.play_gains` without
    the loop.

    Parameters
    ----------
    gains : array_like, shape (B, A)
        One payoff vector $g(\\sigma)$ per game.
    horizon : int
        $T$, which also sets the rate.
    payoff_range : float or array_like, shape (B,)
        $R$ of each game.

    Returns
    -------
    ndarray, shape (B,)
    """
    gains, R = _gains_and_ranges(gains, payoff_range)
    T = check_int(horizon, "horizon", minimum=1)
    A = gains.shape[1]
    eta = hedge_rate(A, T) / R                       # (B,)
    out = np.zeros(len(gains))
    for lo in range(0, T, 4096):  # in blocks, to bound the memory of the (t, B, A) array
        t = np.arange(lo, min(T, lo + 4096))[:, None, None]
        z = eta[None, :, None] * t * gains[None]
        p = np.exp(z - z.max(-1, keepdims=True))
        out += ((p * gains[None]).sum(-1) / p.sum(-1)).sum(0)
    return out / T


def equal_share_deficits(learner: str, gains, share: float, horizons, payoff_range=1.0
                         ) -> np.ndarray:
    """The deficit $d_T=C/n-\\bar u_T$ of a learner against fixed opponents, per horizon.

    Parameters
    ----------
    learner : {"hedge", "saol"}
        ``"hedge"``: Hedge tuned to each $T$ (:func:`hedge_fixed_average`), a separate run per
        horizon. ``"saol"``: the strongly adaptive learner, which does not depend on $T$ (its
        base learners' rates depend only on their intervals' lengths), so one run of the
        largest horizon gives every $T$ as a prefix average.
    gains : array_like, shape (B, A)
        One fixed payoff vector per game; games of one batch share $A$.
    share : float
        $C/n$.
    horizons : array_like of int
        Increasing horizons $T$.
    payoff_range : float or array_like, shape (B,)
        $R$ of each game; each learner runs on its game's gains divided by $R$, as it would be
        tuned.

    Returns
    -------
    ndarray, shape (len(horizons), B)
    """
    check_choice(learner, "learner", ("hedge", "saol"))
    gains, R = _gains_and_ranges(gains, payoff_range)
    T = _horizons(horizons)
    if learner == "hedge":
        pay = np.stack([hedge_fixed_average(gains, int(t), R) for t in T])
    else:
        per_round = play_gains("saol", gains / R[:, None], int(T[-1])) * R
        pay = np.cumsum(per_round, axis=0)[T - 1] / T[:, None]
    return float(share) - pay


def _slope(log_T, y):
    """Least-squares slopes of the columns of log(y) against log_T (y of shape (H, K))."""
    ly = np.log(y)
    x = log_T - log_T.mean()
    return x @ (ly - ly.mean(0)) / (x @ x)


def deficit_exponent(horizons, deficits, *, n_boot: int = 2000, seed=0) -> Estimate:
    """The log-log slope of the mean deficit in $T$, with a bootstrap interval over games.

    Fits $\\log\\bar d_T=a+b\\log T$ by least squares, $\\bar d_T$ the mean over the games;
    a rate $d_T=O(T^{-1/2})$ that is tight shows as $b=-1/2$. The 95% percentile interval
    resamples the games (columns) with replacement and refits.

    Parameters
    ----------
    horizons : array_like of int, shape (H,)
    deficits : array_like, shape (H, B)
        From :func:`equal_share_deficits`; the mean over games must be positive at every
        horizon (resamples whose mean is not are dropped).
    n_boot : int
        Bootstrap resamples.
    seed : int, SeedSequence or Generator
        The resampling stream.
    """
    T = _horizons(horizons)
    d = check_array(deficits, "deficits", ndim=2)
    if d.shape[0] != len(T) or len(T) < 2:
        raise ValueError(f"deficits must be (H, B) with H = len(horizons) >= 2; got shape "
                         f"{d.shape} for {len(T)} horizons")
    mean = d.mean(1)
    if np.any(mean <= 0):
        raise ValueError("the mean deficit must be positive at every horizon to fit a slope")
    log_T = np.log(T.astype(float))
    value = float(_slope(log_T, mean[:, None])[0])
    idx = resample_indices(d.shape[1], n_boot=n_boot, seed=seed)
    boot = d[:, idx].mean(2)                          # (H, n_boot)
    boot = boot[:, np.all(boot > 0, axis=0)]
    slopes = _slope(log_T, boot)
    return Estimate(value, (float(np.quantile(slopes, 0.025)),
                            float(np.quantile(slopes, 0.975))))
