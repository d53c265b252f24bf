"""Fixed strategies and their worst identical opponents.

Self-play systems output one *fixed* strategy $x$. Against $n-1$ identical opponents playing
$\\sigma$ it earns $U(x;\\sigma)$, so the equal share is secured by $x$ only if

$$W(x)=\\min_{\\sigma\\in\\Delta_A}U(x;\\sigma,\\dots,\\sigma)\\;\\ge\\;C/n .$$

:func:`worst_identical_opponent` computes $W(x)$: exactly for two actions (a polynomial of
degree $n-1$ in one variable) and for three players (a quadratic form
$\\sigma^\\top M(x)\\sigma$ on the simplex, minimised over all supports through the KKT
system); otherwise by a simplex grid plus local polish, an upper bound on the true minimum.
:func:`worst_identical_opponent_scipy` is the multi-start Nelder-Mead search used as the peer.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from scipy.optimize import minimize, minimize_scalar

from icml25.common.streams import as_generator
from icml25.common.validation import check_int

from .games import as_game, compositions, strategy


def simplex_grid(n_actions: int, resolution: int) -> np.ndarray:
    """All points of the simplex whose coordinates are multiples of 1/``resolution``."""
    check_int(resolution, "resolution", minimum=1)
    return compositions(resolution, n_actions) / resolution


def _worst_two_actions(game, x):
    s = np.linspace(0, 1, 2001)
    sig = np.column_stack([1 - s, s])
    vals = game.payoff_vectors(sig) @ x
    i = int(np.argmin(vals))
    lo, hi = s[max(i - 1, 0)], s[min(i + 1, len(s) - 1)]
    res = minimize_scalar(lambda t: float(game.payoff_vectors(np.array([1 - t, t])) @ x),
                          bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    t = res.x if res.fun < vals[i] else s[i]
    return np.array([1 - t, t]), float(min(res.fun, vals[i]))


def quadratic_form(game, x) -> np.ndarray:
    """For three players: $M(x)=\\sum_a x_a u[a,:,:]$, so that $U(x;\\sigma)=\\sigma^\\top
    M(x)\\sigma$."""
    game = as_game(game)
    if game.n_players != 3:
        raise ValueError(f"quadratic_form is for 3-player games; got {game.n_players}")
    x = strategy(x, game.n_actions, "x")
    return np.tensordot(x, game.dense(), axes=1)


def _worst_three_players(game, x):
    M = quadratic_form(game, x)
    A = len(x)
    best, best_val = None, np.inf
    for size in range(1, A + 1):
        for S in combinations(range(A), size):
            S = list(S)
            kkt = np.zeros((size + 1, size + 1))
            kkt[:size, :size] = M[np.ix_(S, S)]
            kkt[:size, size] = -1.0
            kkt[size, :size] = 1.0
            rhs = np.r_[np.zeros(size), 1.0]
            try:
                sol = np.linalg.solve(kkt, rhs)
            except np.linalg.LinAlgError:
                continue  # a flat direction: a minimiser also lies on a smaller face
            if not np.all(np.isfinite(sol)) or np.any(sol[:size] < -1e-12):
                continue
            sigma = np.zeros(A)
            sigma[S] = np.clip(sol[:size], 0, None)
            sigma /= sigma.sum()
            val = float(sigma @ M @ sigma)
            if val < best_val:
                best, best_val = sigma, val
    return best, best_val


def _polish(game, x, start):
    A = len(x)

    def f(s):
        return float(game.payoff_vectors(np.clip(s, 0, None)) @ x)

    res = minimize(f, start, method="SLSQP", bounds=[(0, 1)] * A,
                   constraints=[{"type": "eq", "fun": lambda s: s.sum() - 1}],
                   options={"ftol": 1e-12, "maxiter": 200})
    sigma = np.clip(res.x, 0, None)
    sigma /= sigma.sum()
    return sigma, f(sigma)


def worst_identical_opponent(game, x, *, resolution: int = 24, polish: int = 3
                             ) -> tuple[np.ndarray, float]:
    """The identical opponents' strategy that minimises $U(x;\\sigma,\\dots,\\sigma)$.

    Parameters
    ----------
    game : SymmetricGame or payoff tensor
    x : array_like, shape (A,)
        The fixed strategy $x$.
    resolution, polish : int
        Only for $n\\ge4$ with $A\\ge3$: the simplex grid's step $1/$``resolution`` and how many
        of its best points are polished by SLSQP.

    Returns
    -------
    sigma : ndarray, shape (A,)
        The minimiser.
    value : float
        $W(x)=U(x;\\sigma)$. Exact for $A=2$ and $n=3$; otherwise an upper bound.
    """
    game = as_game(game)
    x = strategy(x, game.n_actions, "x")
    if x.ndim != 1:
        raise ValueError("x must be one mixed strategy, shape (A,)")
    if game.n_actions == 2:
        return _worst_two_actions(game, x)
    if game.n_players == 3:
        return _worst_three_players(game, x)
    check_int(resolution, "resolution", minimum=1)
    check_int(polish, "polish", minimum=1)
    grid = simplex_grid(game.n_actions, resolution)
    vals = game.payoff_vectors(grid) @ x
    results = [_polish(game, x, grid[i]) for i in np.argsort(vals)[:polish]]
    results.append((grid[np.argmin(vals)], float(vals.min())))
    return min(results, key=lambda r: r[1])


def worst_identical_opponent_scipy(game, x, *, starts: int = 10, seed=0
                                   ) -> tuple[np.ndarray, float]:
    """Peer: best of ``starts`` Nelder-Mead searches over $\\sigma=\\mathrm{softmax}(z)$
    (``scipy.optimize.minimize``), from seeded Gaussian starts. A local search: its value is
    an upper bound on $W(x)$."""
    game = as_game(game)
    x = strategy(x, game.n_actions, "x")
    check_int(starts, "starts", minimum=1)
    rng = as_generator(seed)

    def f(z):
        e = np.exp(z - z.max())
        return float(game.payoff_vectors(e / e.sum()) @ x)

    best = None
    for _ in range(starts):
        res = minimize(f, rng.normal(size=game.n_actions), method="Nelder-Mead",
                       options={"xatol": 1e-8, "fatol": 1e-12, "maxiter": 4000})
        if best is None or res.fun < best.fun:
            best = res
    e = np.exp(best.x - best.x.max())
    return e / e.sum(), float(best.fun)


def fictitious_self_play(game, iterations: int = 2000, *, seed=0) -> np.ndarray:
    """Symmetric fictitious self-play: the average $\\bar\\sigma_k$ of the best responses
    $b_k=\\arg\\max_a g_a(\\bar\\sigma_{k-1})$, from a seeded random start $\\bar\\sigma_0$.

    $\\bar\\sigma_k=\\bar\\sigma_{k-1}+(e_{b_k}-\\bar\\sigma_{k-1})/(k+1)$; returns
    $\\bar\\sigma_K$, the strategy such a system deploys.
    """
    game = as_game(game)
    check_int(iterations, "iterations", minimum=1)
    avg = as_generator(seed).dirichlet(np.ones(game.n_actions))
    eye = np.eye(game.n_actions)
    for k in range(1, iterations + 1):
        best = int(np.argmax(game.payoff_vectors(avg)))
        avg += (eye[best] - avg) / (k + 1)
    return avg


def hedge_self_play(game, iterations: int = 2000, *, seed=0) -> np.ndarray:
    """Time-averaged Hedge self-play: all players play $p_t\\propto\\exp(\\eta S_t)$ with
    $S_{t+1}=S_t+g(p_t)$, $\\eta=\\sqrt{8\\ln A/K}/R$ ($R$ the payoff range); returns
    $\\bar p=\\frac1K\\sum_t p_t$. ``seed`` draws the initial logits
    $\\eta S_1\\sim\\mathcal N(0,I)$, as independent self-play runs would differ."""
    game = as_game(game)
    check_int(iterations, "iterations", minimum=1)
    A = game.n_actions
    eta = np.sqrt(8 * np.log(A) / iterations) / game.payoff_range
    S = as_generator(seed).normal(scale=1.0, size=A) / eta
    total = np.zeros(A)
    for _ in range(iterations):
        z = eta * S
        p = np.exp(z - z.max())
        p /= p.sum()
        total += p
        S += game.payoff_vectors(p)
    return total / iterations


def symmetric_equilibrium(game, *, starts: int = 32, seed=0) -> np.ndarray:
    """A symmetric Nash equilibrium: $\\sigma$ with $\\max_a g_a(\\sigma)=C/n$.

    Two actions: the smallest root of $g_1(s)-g_0(s)$ or a pure equilibrium, whichever has
    the lower exploitability (ties: the first found, pure 0, pure 1, interior). Otherwise
    minimises $\\sum_a\\max(0,g_a(\\sigma)-C/n)^2$ over $\\sigma=\\mathrm{softmax}(z)$
    from up to ``starts`` seeded starts (L-BFGS-B, analytic gradient), stopping at the first
    with exploitability below $10^{-7}$, and returns the least exploitable.
    """
    game = as_game(game)
    check_int(starts, "starts", minimum=1)
    share = game.equal_share
    if game.n_actions == 2:
        s = np.linspace(0, 1, 4001)
        g = game.payoff_vectors(np.column_stack([1 - s, s]))
        cands = [np.array([1.0, 0.0]), np.array([0.0, 1.0])]
        diff = g[:, 1] - g[:, 0]
        for i in np.flatnonzero(np.sign(diff[:-1]) * np.sign(diff[1:]) < 0):
            lo, hi = s[i], s[i + 1]
            for _ in range(60):
                mid = (lo + hi) / 2
                d = np.diff(game.payoff_vectors(np.array([1 - mid, mid])))[0]
                lo, hi = (mid, hi) if np.sign(d) == np.sign(diff[i]) else (lo, mid)
            cands.append(np.array([1 - lo, lo]))
        gaps = [game.payoff_vectors(c).max() - share for c in cands]
        return cands[int(np.argmin(np.round(gaps, 12)))]
    rng = as_generator(seed)

    def softmax(z):
        e = np.exp(z - z.max())
        return e / e.sum()

    def loss(z):
        sigma = softmax(z)
        excess = np.clip(game.payoff_vectors(sigma) - share, 0, None)
        grad_sigma = 2 * excess @ game.payoff_jacobian(sigma)
        return float((excess ** 2).sum()), sigma * (grad_sigma - sigma @ grad_sigma)

    best, best_loss = None, np.inf
    for _ in range(starts):
        res = minimize(loss, rng.normal(size=game.n_actions), jac=True,
                       method="L-BFGS-B",
                       options={"ftol": 1e-16, "gtol": 1e-10, "maxiter": 300})
        if res.fun < best_loss:
            best, best_loss = softmax(res.x), res.fun
        if best_loss < 1e-14:  # exploitability below 1e-7: an equilibrium; stop
            break
    return best
