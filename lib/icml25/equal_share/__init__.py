"""Securing an equal share in multiplayer symmetric constant-sum games.

Ge, Wang, Li & Jin, *Securing Equal Share: A Principled Approach for Learning Multiplayer
Symmetric Games*, ICML 2025 (arXiv 2406.04201).

In an $n$-player symmetric game with total payoff $C$, a player *secures an equal share* when
its expected payoff is at least $C/n-\\epsilon$. Fixed strategies (what self-play systems
output) cannot promise it; learners can, when the $n-1$ opponents play the same strategy and
adapt slowly enough:

* :mod:`.games`: games in count form, $U(x;\\sigma)$, random games, majority and minority vote,
  a many-player switch-dominance game, the 2-player maximin LP;
* :mod:`.strategies`: the worst identical opponent of a fixed strategy, and the fixed
  strategies of self-play (fictitious self-play, averaged Hedge self-play, an equilibrium);
* :mod:`.learners`: Hedge, SAOL with Hedge base learners, behaviour cloning, adaptive
  opponents and the game loop;
* :mod:`.rates`: the deficit from the equal share across horizons $T$ and its growth exponent.
"""

from .games import (
    SymmetricGame,
    as_game,
    compositions,
    exploitability,
    game_from_tensor,
    majority_vote,
    minority_vote,
    payoff,
    payoff_against,
    random_game,
    switch_dominance,
    two_player_maximin,
)
from .learners import (
    BehaviourCloning,
    Hedge,
    ResponsiveOpponents,
    StronglyAdaptive,
    behaviour_cloning,
    drifting,
    hedge,
    hedge_epsilon,
    hedge_rate,
    play_gains,
    simulate,
    strongly_adaptive,
    switching,
)
from .rates import (
    deficit_exponent,
    equal_share_deficits,
    hedge_fixed_average,
)
from .strategies import (
    fictitious_self_play,
    hedge_self_play,
    quadratic_form,
    simplex_grid,
    symmetric_equilibrium,
    worst_identical_opponent,
    worst_identical_opponent_scipy,
)

__all__ = [
    "BehaviourCloning", "Hedge", "ResponsiveOpponents", "StronglyAdaptive", "SymmetricGame",
    "as_game", "behaviour_cloning", "compositions", "deficit_exponent", "drifting",
    "equal_share_deficits", "exploitability",
    "fictitious_self_play", "game_from_tensor", "hedge", "hedge_epsilon",
    "hedge_fixed_average", "hedge_rate",
    "hedge_self_play", "majority_vote", "minority_vote", "payoff", "payoff_against", "play_gains",
    "quadratic_form", "random_game", "simplex_grid", "simulate", "strongly_adaptive",
    "switch_dominance", "switching", "symmetric_equilibrium", "two_player_maximin",
    "worst_identical_opponent", "worst_identical_opponent_scipy",
]
