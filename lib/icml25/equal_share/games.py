"""Symmetric constant-sum games in count form, their payoffs, and the games of the chapter.

In an $n$-player symmetric game every player has the same actions $\\mathcal A$,
$|\\mathcal A|=A$, and a player's payoff depends only on its own action $a$ and on the
*multiset* of the other $n-1$ actions, i.e. on the count vector $k\\in\\mathbb N^A$,
$\\sum_j k_j=n-1$. A game is therefore the table $v[a,k]$: there are
$\\binom{n+A-2}{A-1}$ count vectors instead of $A^{n-1}$ opponent profiles, which makes 30
players cheap. It is *constant-sum* with total $C$ when, for every full count vector $c$
($\\sum_j c_j = n$),

$$\\sum_{a:\\,c_a\\ge1} c_a\\, v[a, c-e_a] = C .$$

When the $n-1$ opponents all play the mixed strategy $\\sigma$, the count vector is
multinomial and the payoff of action $a$ is

$$g_a(\\sigma) = U(a;\\sigma,\\dots,\\sigma)=\\sum_k \\binom{n-1}{k}\\,\\prod_j\\sigma_j^{k_j}\\,
v[a,k],\\qquad U(x;\\sigma)=x^\\top g(\\sigma).$$

Symmetry and constant sum give $U(\\sigma;\\sigma)=C/n$ for every $\\sigma$: all $n$ players
are exchangeable and their expected payoffs add to $C$.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from math import factorial, prod

import numpy as np

from icml25.common.streams import as_generator
from icml25.common.validation import check_int

TOL = 1e-9


@lru_cache(maxsize=None)
def compositions(total: int, parts: int) -> np.ndarray:
    """All count vectors of ``parts`` non-negative integers summing to ``total`` (rows)."""
    if total < 0 or parts < 1:
        raise ValueError(f"compositions needs total >= 0 and parts >= 1; got {total}, {parts}")
    if parts == 1:
        return np.array([[total]], dtype=np.int64)
    rows = [np.column_stack([np.full(len(rest), first), rest])
            for first in range(total, -1, -1)
            for rest in [compositions(total - first, parts - 1)]]
    out = np.vstack(rows)
    out.setflags(write=False)
    return out


def _multinomial(counts: np.ndarray) -> np.ndarray:
    n = int(counts[0].sum())
    return np.array([factorial(n) // prod(factorial(int(c)) for c in row)
                     for row in counts], dtype=float)


@dataclass(frozen=True, eq=False)
class SymmetricGame:
    """A symmetric $n$-player constant-sum game in count form (see the module docstring).

    Build it with :func:`game_from_tensor`, :func:`random_game`, :func:`majority_vote`,
    :func:`minority_vote` or :func:`switch_dominance`; the constructor validates the table.

    Attributes
    ----------
    n_players : int
        $n\\ge2$.
    values : ndarray, shape (A, K)
        $v[a,k]$ for the count vectors ``counts`` (row order of :func:`compositions`).
    total : float
        The constant sum $C$ (checked).
    name : str
        For legends.
    """

    n_players: int
    values: np.ndarray
    total: float
    name: str = ""
    counts: np.ndarray = field(init=False, repr=False)
    coef: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        if not isinstance(self.n_players, (int, np.integer)) or self.n_players < 2:
            raise ValueError(f"n_players must be an integer >= 2; got {self.n_players!r}")
        values = np.array(self.values, dtype=float)
        if values.ndim != 2 or values.shape[0] < 2:
            raise ValueError(f"values must be an (A, K) table with A >= 2; got shape "
                             f"{values.shape}")
        counts = compositions(self.n_players - 1, values.shape[0])
        if values.shape[1] != len(counts):
            raise ValueError(f"values must have one column per opponents' count vector "
                             f"({len(counts)}); got {values.shape[1]}")
        if not np.all(np.isfinite(values)):
            raise ValueError("values must be finite")
        values.setflags(write=False)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "counts", counts)
        object.__setattr__(self, "coef", _multinomial(counts))
        sums = self.profile_sums()
        scale = max(1.0, float(np.abs(values).max()))
        if np.ptp(sums) > 1e-8 * scale * self.n_players:
            raise ValueError(f"the game is not constant-sum: the players' payoffs add to "
                             f"between {sums.min():.6g} and {sums.max():.6g}")
        if abs(sums.mean() - self.total) > 1e-8 * scale * self.n_players:
            raise ValueError(f"the payoffs add to {sums.mean():.6g}, not total={self.total}")

    @property
    def n_actions(self) -> int:
        return self.values.shape[0]

    @property
    def equal_share(self) -> float:
        """$C/n$."""
        return self.total / self.n_players

    @property
    def payoff_range(self) -> float:
        """$\\max v-\\min v$: the range that enters the regret bounds."""
        return float(np.ptp(self.values)) or 1.0

    def profile_sums(self) -> np.ndarray:
        """$\\sum_a c_a v[a,c-e_a]$ for every full count vector $c$ (all equal to $C$)."""
        index = {tuple(row): i for i, row in enumerate(self.counts)}
        full = compositions(self.n_players, self.n_actions)
        sums = np.zeros(len(full))
        for r, c in enumerate(full):
            for a in np.flatnonzero(c):
                k = c.copy()
                k[a] -= 1
                sums[r] += c[a] * self.values[a, index[tuple(k)]]
        return sums

    def count_probabilities(self, sigma) -> np.ndarray:
        """Multinomial law of the opponents' count vector, $\\binom{n-1}{k}\\prod_j
        \\sigma_j^{k_j}$, shape ``sigma.shape[:-1] + (K,)``."""
        sigma = np.asarray(sigma, float)
        return self.coef * np.prod(sigma[..., None, :] ** self.counts, axis=-1)

    def payoff_vectors(self, sigma) -> np.ndarray:
        """$g(\\sigma)$: each action's payoff against identical opponents ``sigma`` (batched
        over leading axes)."""
        return self.count_probabilities(sigma) @ self.values.T

    def payoff_jacobian(self, sigma) -> np.ndarray:
        """$J[a,j]=\\partial g_a(\\sigma)/\\partial\\sigma_j=\\sum_k\\binom{n-1}{k}k_j
        \\sigma^{k-e_j}v[a,k]$, shape (A, A), for one strategy ``sigma``."""
        sigma = np.asarray(sigma, float)
        eye = np.eye(self.n_actions, dtype=np.int64)
        powers = np.clip(self.counts[:, None, :] - eye[None], 0, None)   # (K, A, A)
        mono = np.prod(sigma ** powers, axis=-1) * self.counts            # (K, A)
        return self.values @ (self.coef[:, None] * mono)

    def dense(self) -> np.ndarray:
        """The payoff tensor $u[a, b_1, \\dots, b_{n-1}]$ (for small $n$ only)."""
        n, A = self.n_players, self.n_actions
        if A ** n > 5_000_000:
            raise ValueError(f"a dense tensor of {A}^{n} entries is too large")
        profiles = np.indices((A,) * (n - 1)).reshape(n - 1, -1).T
        counts = np.stack([np.bincount(p, minlength=A) for p in profiles])
        index = {tuple(row): i for i, row in enumerate(self.counts)}
        cols = np.array([index[tuple(c)] for c in counts])
        return self.values[:, cols].reshape((A,) * n)


def _tensor(u) -> np.ndarray:
    u = np.asarray(u, dtype=float)
    if u.ndim < 2 or len(set(u.shape)) != 1 or u.shape[0] < 2:
        raise ValueError(f"a payoff tensor must have n >= 2 axes of equal length A >= 2; "
                         f"got shape {u.shape}")
    if not np.all(np.isfinite(u)):
        raise ValueError("the payoff tensor must be finite")
    return u


def game_from_tensor(u, *, name: str = "") -> SymmetricGame:
    """A validated :class:`SymmetricGame` from the focal player's payoff tensor.

    Parameters
    ----------
    u : array_like, shape (A,) * n
        $u[a, b_1, \\dots, b_{n-1}]$: payoff of a player choosing $a$ while the others
        choose $b_1..b_{n-1}$. Must be symmetric in the opponents' axes, and the game
        constant-sum: $\\sum_i u[a_i, a_{-i}]=C$ for every profile.

    Raises
    ------
    ValueError
        When the shape, symmetry or constant sum fails, saying which.
    """
    u = _tensor(u)
    n, A = u.ndim, u.shape[0]
    scale = max(1.0, float(np.abs(u).max()))
    for axis in range(1, n - 1):  # adjacent swaps generate all permutations of opponents
        if not np.allclose(u, np.swapaxes(u, axis, axis + 1), atol=1e-9 * scale):
            raise ValueError(f"the payoff tensor is not symmetric in the opponents' axes "
                             f"({axis} and {axis + 1} differ)")
    sums = sum(np.moveaxis(u, 0, i) for i in range(n))
    if np.ptp(sums) > 1e-8 * scale * n:
        raise ValueError(f"the game is not constant-sum: the players' payoffs add to "
                         f"between {sums.min():.6g} and {sums.max():.6g}")
    counts = compositions(n - 1, A)
    firsts = [np.repeat(np.arange(A), k) for k in counts]  # one profile per count vector
    values = np.stack([u[(slice(None),) + tuple(p)] for p in firsts], axis=1)
    return SymmetricGame(n, values, float(sums.mean()), name)


def as_game(game) -> SymmetricGame:
    """Accept a :class:`SymmetricGame` or a payoff tensor (validated)."""
    if isinstance(game, SymmetricGame):
        return game
    if isinstance(game, (np.ndarray, list, tuple)):
        return game_from_tensor(game)
    raise ValueError(f"game must be a SymmetricGame or a payoff tensor; got "
                     f"{type(game).__name__}")


def strategy(x, n_actions: int, name: str = "x") -> np.ndarray:
    """Validate a mixed strategy (or a batch, last axis = actions) and return it as floats."""
    x = np.asarray(x, dtype=float)
    if x.ndim == 0 or x.shape[-1] != n_actions:
        raise ValueError(f"{name} must have {n_actions} entries (one per action) on its last "
                         f"axis; got shape {x.shape}")
    if not np.all(np.isfinite(x)) or np.any(x < -TOL):
        raise ValueError(f"{name} must be finite and non-negative")
    if np.any(np.abs(x.sum(-1) - 1) > 1e-6):
        raise ValueError(f"{name} must sum to 1 (a mixed strategy); sums to "
                         f"{np.round(x.sum(-1), 6)}")
    return np.clip(x, 0, None)


def payoff(game, x, sigma) -> float:
    """$U(x;\\sigma,\\dots,\\sigma)$: expected payoff of ``x`` when all $n-1$ opponents play
    ``sigma``.

    Parameters
    ----------
    game : SymmetricGame or array_like
        The game (a payoff tensor is validated: symmetric, constant-sum).
    x, sigma : array_like, shape (A,)
        Mixed strategies.
    """
    game = as_game(game)
    x = strategy(x, game.n_actions, "x")
    sigma = strategy(sigma, game.n_actions, "sigma")
    if x.ndim != 1 or sigma.ndim != 1:
        raise ValueError("payoff takes one strategy x and one strategy sigma")
    return float(x @ game.payoff_vectors(sigma))


def payoff_against(game, x, opponents) -> float:
    """$U(x;\\sigma_2,\\dots,\\sigma_n)$ for opponents who may play *different* strategies.

    The law of the opponents' count vector is built one opponent at a time (a convolution).

    Parameters
    ----------
    opponents : array_like, shape (n - 1, A)
        One mixed strategy per opponent.
    """
    game = as_game(game)
    x = strategy(x, game.n_actions, "x")
    opponents = strategy(opponents, game.n_actions, "opponents")
    if opponents.shape != (game.n_players - 1, game.n_actions):
        raise ValueError(f"opponents must have shape ({game.n_players - 1}, "
                         f"{game.n_actions}); got {opponents.shape}")
    law = {(0,) * game.n_actions: 1.0}
    for sigma in opponents:
        nxt: dict = {}
        for k, p in law.items():
            for a in np.flatnonzero(sigma > 0):
                key = tuple(k[j] + (j == a) for j in range(game.n_actions))
                nxt[key] = nxt.get(key, 0.0) + p * sigma[a]
        law = nxt
    index = {tuple(row): i for i, row in enumerate(game.counts)}
    probs = np.zeros(len(game.counts))
    for k, p in law.items():
        probs[index[k]] = p
    return float(x @ (game.values @ probs))


def exploitability(game, sigma) -> float:
    """$\\max_a g_a(\\sigma)-C/n\\ge0$; zero exactly at a symmetric Nash equilibrium."""
    game = as_game(game)
    sigma = strategy(sigma, game.n_actions, "sigma")
    return float(game.payoff_vectors(sigma).max(-1) - game.equal_share)


def _from_full(n: int, A: int, total: float, rule) -> np.ndarray:
    """Tabulate ``rule(c) -> payoff per action`` given full count vectors ``c``."""
    counts = compositions(n - 1, A)
    values = np.empty((A, len(counts)))
    for j, k in enumerate(counts):
        for a in range(A):
            c = k.copy()
            c[a] += 1
            values[a, j] = rule(c)[a]
    return values


def _check_size(n_players, n_actions=2):
    check_int(n_players, "n_players", minimum=2)
    check_int(n_actions, "n_actions", minimum=2)


def random_game(n_players: int, n_actions: int, *, seed, total: float = 1.0
                ) -> SymmetricGame:
    """A random symmetric constant-sum game.

    Draw $f[a,k]\\sim U(0,1)$ for every own action and opponents' count vector, then make each
    full profile $c$ sum to $C$ by centring:
    $v[a,c-e_a]=f[a,c-e_a]-\\frac1n\\sum_b c_b f[b,c-e_b]+C/n$ (each entry $(a,k)$ belongs to
    exactly one full profile $c=k+e_a$).
    """
    _check_size(n_players, n_actions)
    rng = as_generator(seed)
    counts = compositions(n_players - 1, n_actions)
    f = rng.uniform(size=(n_actions, len(counts)))
    index = {tuple(row): i for i, row in enumerate(counts)}

    def rule(c):
        raw = np.array([f[a, index[tuple(c - np.eye(n_actions, dtype=int)[a])]]
                        if c[a] else 0.0 for a in range(n_actions)])
        return raw - (c @ raw) / n_players + total / n_players

    return SymmetricGame(n_players, _from_full(n_players, n_actions, total, rule), total,
                         f"random ({n_players} players, {n_actions} actions)")


def _split(winning_action_of, n, total):
    def rule(c):
        win = winning_action_of(c)
        if win is None:
            return np.full(2, total / n)
        out = np.zeros(2)
        out[win] = total / c[win]
        return out
    return rule


def majority_vote(n_players: int = 3, *, total: float = 1.0) -> SymmetricGame:
    """Majority vote: two actions; the players of the strict majority split $C$, the others
    get 0; a tie (or unanimity) gives everyone $C/n$."""
    _check_size(n_players)
    rule = _split(lambda c: None if c[0] == c[1] or min(c) == 0 else int(c[1] > c[0]),
                  n_players, total)
    return SymmetricGame(n_players, _from_full(n_players, 2, total, rule), total,
                         f"majority vote ({n_players} players)")


def minority_vote(n_players: int = 3, *, total: float = 1.0) -> SymmetricGame:
    """Minority vote: the players of the strict minority split $C$; a tie or unanimity
    gives everyone $C/n$."""
    _check_size(n_players)
    rule = _split(lambda c: None if c[0] == c[1] or min(c) == 0 else int(c[1] < c[0]),
                  n_players, total)
    return SymmetricGame(n_players, _from_full(n_players, 2, total, rule), total,
                         f"minority vote ({n_players} players)")


def switch_dominance(n_players: int, threshold: int | None = None, *,
                     total: float = 1.0) -> SymmetricGame:
    """A many-player game whose dominant action switches with its popularity (our stand-in).

    Two actions. With $m$ players on action 1: if $1\\le m\\le$ ``threshold`` (default
    $\\lfloor n/3\\rfloor$) the action-1 players split $C$; if $m>$ ``threshold`` and some
    player chose 0, the action-0 players split $C$; unanimity gives everyone $C/n$. Action 1
    dominates while it is rare and is dominated once it is popular.
    """
    _check_size(n_players)
    if threshold is None:
        threshold = max(1, n_players // 3)
    if not 1 <= threshold < n_players:
        raise ValueError(f"threshold must be in [1, n_players - 1]; got {threshold}")
    rule = _split(lambda c: None if min(c) == 0 else int(c[1] <= threshold),
                  n_players, total)
    return SymmetricGame(n_players, _from_full(n_players, 2, total, rule), total,
                         f"switch dominance ({n_players} players)")


def two_player_maximin(game) -> tuple[np.ndarray, float]:
    """Maximin strategy of a symmetric 2-player game by linear programming (scipy's HiGHS).

    $\\max_{x,v} v$ s.t. $x^\\top u[:,b]\\ge v$ for all $b$, $x\\in\\Delta$. By the minimax
    theorem and symmetry its value is $C/2$.
    """
    from scipy.optimize import linprog

    game = as_game(game)
    if game.n_players != 2:
        raise ValueError(f"two_player_maximin needs a 2-player game; got {game.n_players}")
    u, A = game.dense(), game.n_actions
    cost = np.r_[np.zeros(A), -1.0]
    upper = np.column_stack([-u.T, np.ones(A)])  # v - x^T u[:, b] <= 0
    res = linprog(cost, A_ub=upper, b_ub=np.zeros(A), A_eq=[np.r_[np.ones(A), 0.0]],
                  b_eq=[1.0], bounds=[(0, None)] * A + [(None, None)], method="highs")
    return np.clip(res.x[:A], 0, None), float(-res.fun)
