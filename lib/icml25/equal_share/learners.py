"""Online learners that face identical opponents, the opponents, and the game loop.

Information model (full information): after round $t$ the learner observes the opponents'
common mixed strategy $\\sigma_t$, hence the counterfactual payoff vector
$g_t=g(\\sigma_t)$, $g_t(a)=U(a;\\sigma_t,\\dots,\\sigma_t)$, and earns the expected payoff
$x_t^\\top g_t$. Since $U(\\sigma_t;\\sigma_t)=C/n$, $\\max_a g_t(a)\\ge C/n$ every round:
a learner with regret $\\epsilon T$ against the best fixed action secures $C/n-\\epsilon$
against *fixed* opponents, and one with small regret on every interval tracks drifting ones.
With ``observe="sampled"`` the learner sees only the opponents' sampled actions instead.

All learners are batched: ``B`` independent runs share one loop (each row its own game
history), and take gains of shape ``(B, A)``.
"""

from __future__ import annotations

import numpy as np

from icml25.common.streams import as_generator
from icml25.common.validation import check_int

from .games import as_game, strategy


def _softmax(z, axis=-1):
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def _check_hedge(n_actions, horizon, payoff_range):
    check_int(n_actions, "n_actions", minimum=2)
    check_int(horizon, "horizon", minimum=1)
    if not payoff_range > 0:
        raise ValueError(f"payoff_range must be positive; got {payoff_range}")


def hedge_rate(n_actions: int, horizon: int, payoff_range: float = 1.0) -> float:
    """$\\eta=\\sqrt{8\\ln A/T}/R$, the rate of the standard Hedge regret bound."""
    _check_hedge(n_actions, horizon, payoff_range)
    return float(np.sqrt(8 * np.log(n_actions) / horizon) / payoff_range)


def hedge_epsilon(n_actions: int, horizon: int, payoff_range: float = 1.0) -> float:
    """$\\epsilon_T=R\\sqrt{\\ln A/(2T)}$: Hedge's average regret bound at that rate
    (Cesa-Bianchi & Lugosi, 2006, Thm. 2.2), so it earns at least $C/n-\\epsilon_T$ against
    fixed identical opponents."""
    _check_hedge(n_actions, horizon, payoff_range)
    return float(payoff_range * np.sqrt(np.log(n_actions) / (2 * horizon)))


class Hedge:
    """Full-information Hedge: $x_t\\propto\\exp(\\eta\\sum_{s<t}g_s)$,
    $\\eta=\\sqrt{8\\ln A/T}/R$ unless ``lr`` is given."""

    name = "Hedge"

    def __init__(self, n_actions, horizon, *, payoff_range=1.0, batch=1, lr=None):
        check_int(n_actions, "n_actions", minimum=2)
        check_int(horizon, "horizon", minimum=1)
        check_int(batch, "batch", minimum=1)
        if payoff_range <= 0:
            raise ValueError(f"payoff_range must be positive; got {payoff_range}")
        self.lr = hedge_rate(n_actions, horizon, payoff_range) if lr is None else float(lr)
        if not self.lr > 0:
            raise ValueError(f"lr must be positive; got {lr}")
        self.gains = np.zeros((batch, n_actions))

    def strategy(self):
        return _softmax(self.lr * self.gains)

    def update(self, gains, sigma):
        self.gains += gains


class StronglyAdaptive:
    """A strongly adaptive online learner with Hedge base learners (SAOL, Daniely, Gonen &
    Shalev-Shwartz, 2015).

    Geometric covering intervals: at level $k$ the intervals $[i2^k,(i+1)2^k-1]$, $i\\ge1$;
    at round $t$ one interval per level with $2^k\\le t$ is awake. Each runs Hedge restarted
    at its start with rate $\\sqrt{8\\ln A/2^k}/R$. A sleeping-experts meta-learner mixes
    the awake ones through their instantaneous regrets
    $r_I=(g^\\top x_I-g^\\top x)/R\\in[-1,1]$ since the interval started:

    * ``meta="adanormalhedge"`` (default; Luo & Schapire, 2015): with $S_I=\\sum r_I$,
      $V_I=\\sum|r_I|$ and $\\Phi(S,V)=\\exp([S]_+^2/3V)$, weights
      $w_I=[\\Phi(S_I+1,V_I+1)-\\Phi(S_I-1,V_I+1)]_+/2$ (uniform over the awake
      intervals when all are zero); parameter-free.
    * ``meta="daniely"``: $w_I\\leftarrow w_I(1+\\eta_I r_I)$ from $w_I=1$, with
      $\\eta_I=\\min(1/2,|I|^{-1/2})$, and weights $\\eta_Iw_I$.

    The learner plays $x=\\sum_I w_Ix_I/\\sum_I w_I$. Its regret on *every* interval $I$
    is :math:`\\tilde O(R\\sqrt{|I|})`, hence it tracks opponents that change slowly.
    """

    name = "SAOL (Hedge base)"

    def __init__(self, n_actions, horizon, *, payoff_range=1.0, batch=1,
                 meta="adanormalhedge"):
        check_int(n_actions, "n_actions", minimum=2)
        check_int(horizon, "horizon", minimum=1)
        check_int(batch, "batch", minimum=1)
        if payoff_range <= 0:
            raise ValueError(f"payoff_range must be positive; got {payoff_range}")
        if meta not in ("adanormalhedge", "daniely"):
            raise ValueError(f"meta must be 'adanormalhedge' or 'daniely'; got {meta!r}")
        self.meta = meta
        self.levels = int(np.floor(np.log2(horizon))) + 1
        length = 2.0 ** np.arange(self.levels)
        self.R = float(payoff_range)
        self.base_lr = np.sqrt(8 * np.log(n_actions) / length) / self.R
        self.meta_lr = np.minimum(0.5, 1 / np.sqrt(length))
        self.gains = np.zeros((batch, self.levels, n_actions))
        self.awake = np.zeros((batch, self.levels), bool)
        self.log_w = np.zeros((batch, self.levels))   # daniely
        self.S = np.zeros((batch, self.levels))       # adanormalhedge: sum of r
        self.V = np.zeros((batch, self.levels))       # adanormalhedge: sum of |r|
        self.length = length.astype(np.int64)
        self.t = 0
        self._start()

    def _start(self):
        self.t += 1
        # the intervals starting now are those of levels k with 2^k dividing t: a prefix
        starting = min(self.levels, (self.t & -self.t).bit_length())
        for state in (self.gains, self.log_w, self.S, self.V):
            state[:, :starting] = 0.0
        self.awake[:, :starting] = True

    def base_strategies(self):
        return _softmax(self.base_lr[:, None] * self.gains)

    def weights(self):
        """Meta weights of the levels this round, shape (B, levels); 0 for sleeping ones."""
        if self.meta == "daniely":
            return _softmax(np.where(self.awake, np.log(self.meta_lr) + self.log_w,
                                     -np.inf))
        S, V = self.S, self.V + 1
        with np.errstate(over="ignore"):
            w = 0.5 * (np.exp(np.clip(S + 1, 0, None) ** 2 / (3 * V))
                       - np.exp(np.clip(S - 1, 0, None) ** 2 / (3 * V)))
        w = np.where(self.awake, np.clip(w, 0, None), 0.0)
        big = np.isinf(w).any(1, keepdims=True)
        w = np.where(big, np.isinf(w), w)  # an overflowing weight dominates the others
        total = w.sum(1, keepdims=True)
        uniform = self.awake / self.awake.sum(1, keepdims=True)
        return np.where(total > 0, w / np.where(total > 0, total, 1), uniform)

    def strategy(self):
        self._bases = self.base_strategies()
        self._q = self.weights()
        return np.einsum("bk,bka->ba", self._q, self._bases)

    def update(self, gains, sigma):
        x = np.einsum("bk,bka->ba", self._q, self._bases)
        regret = np.clip((np.einsum("bka,ba->bk", self._bases, gains)
                          - np.einsum("ba,ba->b", x, gains)[:, None]) / self.R, -1, 1)
        regret = np.where(self.awake, regret, 0.0)
        if self.meta == "daniely":
            self.log_w += np.log1p(self.meta_lr * regret)
        else:
            self.S += regret
            self.V += np.abs(regret)
        self.gains += gains[:, None, :]
        self._start()


class BehaviourCloning:
    """Copy the opponents: $x_t=\\frac1W\\sum_{s=t-W}^{t-1}\\sigma_s$ (uniform at $t=1$).
    Against identical opponents, $U(\\sigma_{t-1};\\sigma_t)\\ge C/n-L\\|\\sigma_t-
    \\sigma_{t-1}\\|_1$ for a Lipschitz constant $L$ of $U$ in its second argument."""

    name = "behaviour cloning"

    def __init__(self, n_actions, horizon=None, *, payoff_range=1.0, batch=1, window=1):
        check_int(n_actions, "n_actions", minimum=2)
        check_int(batch, "batch", minimum=1)
        check_int(window, "window", minimum=1)
        self.window = window
        self.history: list = []
        self.start = np.full((batch, n_actions), 1 / n_actions)

    def strategy(self):
        if not self.history:
            return self.start
        return np.mean(self.history, axis=0)

    def update(self, gains, sigma):
        self.history.append(np.array(sigma, float))
        if len(self.history) > self.window:
            self.history.pop(0)


LEARNERS = {"hedge": Hedge, "saol": StronglyAdaptive, "clone": BehaviourCloning}


class ResponsiveOpponents:
    """Identical opponents that adapt to the learner: each round they move a fraction
    ``rate`` ($\\beta$) towards the worst identical response to the learner's strategy
    ``lag`` rounds earlier,

    $$\\sigma_t=(1-\\beta)\\sigma_{t-1}+\\beta\\,\\arg\\min_{\\sigma\\in G}U(x_{t-\\mathrm{lag}};
    \\sigma),$$

    with the argmin over a simplex grid $G$. ``rate=1, lag=0`` is the arbitrarily adapting
    opponent of the impossibility result: it sees $x_t$ before playing.
    """

    def __init__(self, game, rate, *, lag=1, start=None, resolution=200):
        from .strategies import simplex_grid

        self.game = as_game(game)
        if not 0 < rate <= 1:
            raise ValueError(f"rate must be in (0, 1]; got {rate}")
        check_int(lag, "lag", minimum=0)
        self.rate, self.lag = float(rate), int(lag)
        A = self.game.n_actions
        self.first = (np.full(A, 1 / A) if start is None
                      else strategy(start, A, "start"))
        self.grid = simplex_grid(A, resolution)
        self.grid_payoffs = self.game.payoff_vectors(self.grid)  # (P, A)

    def start(self, batch):
        self.sigma = np.tile(self.first, (batch, 1))
        self.seen: list = []

    def respond(self, x):
        """$\\arg\\min_{\\sigma\\in G}U(x;\\sigma)$ row by row, shape (B, A)."""
        return self.grid[np.argmin(self.grid_payoffs @ x.T, axis=0)]

    def strategy(self, t, x):
        self.seen.append(x)
        if len(self.seen) > self.lag:
            target = self.respond(self.seen[-1 - self.lag])
            self.sigma = (1 - self.rate) * self.sigma + self.rate * target
            self.seen.pop(0)
        return self.sigma


def switching(strategies, period, horizon) -> np.ndarray:
    """Oblivious identical opponents cycling through ``strategies`` (rows), each held for
    ``period`` rounds; shape (horizon, A)."""
    strategies = np.atleast_2d(np.asarray(strategies, float))
    if strategies.ndim != 2:
        raise ValueError(f"strategies must be rows of mixed strategies; got shape "
                         f"{strategies.shape}")
    strategies = strategy(strategies, strategies.shape[1], "strategies")
    check_int(period, "period", minimum=1)
    check_int(horizon, "horizon", minimum=1)
    return strategies[(np.arange(horizon) // period) % len(strategies)]


def drifting(a, b, period, horizon) -> np.ndarray:
    """Oblivious identical opponents moving smoothly between ``a`` and ``b``:
    $\\sigma_t=a+(b-a)\\,(1-\\cos(2\\pi t/P))/2$; shape (horizon, A)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"a and b must be mixed strategies of the same length; got shapes "
                         f"{a.shape} and {b.shape}")
    a, b = strategy(a, len(a), "a"), strategy(b, len(b), "b")
    check_int(period, "period", minimum=1)
    check_int(horizon, "horizon", minimum=1)
    w = (1 - np.cos(2 * np.pi * np.arange(horizon) / period)) / 2
    return a + np.outer(w, b - a)


def _sampled_gains(game, sigmas, rng):
    """Counterfactual gains at sampled opponents' actions, and the sampled frequencies."""
    counts = rng.multinomial(game.n_players - 1, sigmas)
    radix = (game.n_players) ** np.arange(game.n_actions)
    keys = game.counts @ radix
    order = np.argsort(keys)
    col = order[np.searchsorted(keys[order], counts @ radix)]
    return game.values.T[col], counts / (game.n_players - 1)


def simulate(game, learner, opponents, horizon=None, *, observe="mixed", seed=0,
             **options):
    """Play ``learner`` against identical opponents for ``horizon`` rounds.

    Parameters
    ----------
    game : SymmetricGame or payoff tensor
    learner : {"hedge", "saol", "clone"} or a learner class
        Built with ``(A, horizon, payoff_range=R, batch=B, **options)``.
    opponents : array_like or ResponsiveOpponents
        A fixed strategy, shape (A,); a sequence, shape (T, A); a batch of sequences, shape
        (T, B, A); or adaptive opponents (then ``horizon`` is required and B = 1 unless
        ``options`` has ``batch``).
    observe : {"mixed", "sampled"}
        What the learner sees after each round: the opponents' mixed strategy, or their
        sampled actions (drawn with ``seed``).

    Returns
    -------
    ndarray, shape (T,) or (T, B)
        The learner's expected payoff $x_t^\\top g(\\sigma_t)$ per round.
    """
    game = as_game(game)
    A = game.n_actions
    if isinstance(learner, str):
        if learner not in LEARNERS:
            raise ValueError(f"learner must be one of {', '.join(LEARNERS)}; got {learner!r}")
        learner = LEARNERS[learner]
    if observe not in ("mixed", "sampled"):
        raise ValueError(f"observe must be 'mixed' or 'sampled'; got {observe!r}")
    rng = as_generator(seed)
    adaptive = isinstance(opponents, ResponsiveOpponents)
    if adaptive:
        if horizon is None:
            raise ValueError("horizon is required with adaptive opponents")
        if opponents.game.n_actions != A:
            raise ValueError(f"the opponents were built for a game with "
                             f"{opponents.game.n_actions} actions, not {A}")
        batch = options.pop("batch", 1)
        squeeze = batch == 1
        opponents.start(batch)
    else:
        sig = strategy(opponents, A, "opponents")
        if sig.ndim == 1:
            if horizon is None:
                raise ValueError("horizon is required with a fixed opponent strategy")
            sig = np.broadcast_to(sig, (horizon, A))
        if horizon is None:
            horizon = len(sig)
        if sig.ndim not in (2, 3) or len(sig) != horizon:
            raise ValueError(f"opponents must be (A,), (T, A) or (T, B, A) with T = "
                             f"horizon = {horizon}; got shape {sig.shape}")
        squeeze = sig.ndim == 2
        sig = sig.reshape(horizon, -1, A)
        batch = sig.shape[1]
    check_int(horizon, "horizon", minimum=1)
    agent = learner(A, horizon, payoff_range=game.payoff_range, batch=batch, **options)
    if not adaptive:
        expected = game.payoff_vectors(sig)
        if observe == "sampled":
            seen_g, seen_s = _sampled_gains(game, sig, rng)
        else:
            seen_g, seen_s = expected, sig
    out = np.empty((horizon, batch))
    for t in range(horizon):
        x = agent.strategy()
        if adaptive:
            s = opponents.strategy(t, x)
            g = game.payoff_vectors(s)
            gs, ss = (_sampled_gains(game, s, rng) if observe == "sampled" else (g, s))
        else:
            g, gs, ss = expected[t], seen_g[t], seen_s[t]
        out[t] = np.einsum("ba,ba->b", x, g)
        agent.update(gs, ss)
    return out[:, 0] if squeeze else out


def play_gains(learner, gains, horizon, *, payoff_range=1.0, **options):
    """Run a learner on given payoff vectors: ``gains`` of shape (B, A) (the same every
    round: fixed opponents, one game per row) or (T, B, A). Returns (T, B) payoffs
    $x_t^\\top g_t$. Behaviour cloning needs strategies, not gains: use :func:`simulate`."""
    if isinstance(learner, str):
        if learner not in LEARNERS or learner == "clone":
            raise ValueError(f"learner must be 'hedge' or 'saol' (cloning needs the "
                             f"opponents' strategies: use simulate); got {learner!r}")
        learner = LEARNERS[learner]
    gains = np.asarray(gains, float)
    if not np.all(np.isfinite(gains)):
        raise ValueError("gains must be finite")
    if gains.ndim not in (2, 3) or (gains.ndim == 3 and len(gains) != horizon):
        raise ValueError(f"gains must be (B, A) or (T, B, A) with T = horizon; got shape "
                         f"{gains.shape}")
    check_int(horizon, "horizon", minimum=1)
    agent = learner(gains.shape[-1], horizon, payoff_range=payoff_range,
                    batch=gains.shape[-2], **options)
    out = np.empty((horizon, gains.shape[-2]))
    for t in range(horizon):
        g = gains if gains.ndim == 2 else gains[t]
        out[t] = np.einsum("ba,ba->b", agent.strategy(), g)
        agent.update(g, None)
    return out


def hedge(game, opponents, T=None, *, seed=0, observe="mixed", lr=None):
    """Payoffs per round of full-information Hedge against identical opponents (see
    :func:`simulate`; ``lr`` overrides $\\eta=\\sqrt{8\\ln A/T}/R$)."""
    return simulate(game, Hedge, opponents, T, seed=seed, observe=observe, lr=lr)


def strongly_adaptive(game, opponents, T=None, *, seed=0, observe="mixed"):
    """Payoffs per round of SAOL with Hedge base learners (see :class:`StronglyAdaptive`)."""
    return simulate(game, StronglyAdaptive, opponents, T, seed=seed, observe=observe)


def behaviour_cloning(game, opponents, T=None, *, seed=0, observe="mixed", window=1):
    """Payoffs per round of behaviour cloning (see :class:`BehaviourCloning`)."""
    return simulate(game, BehaviourCloning, opponents, T, seed=seed, observe=observe,
                    window=window)
