"""A claim's verdict decided over independent seeds, not by seed 0.

Each seed $i = 1, \\dots, n$ of a chapter's seed record measured the claim's value $y_i$, often
with a within-seed interval (a bootstrap or binomial interval over the run's samples), read as a
standard error $s_i = (u_i - \\ell_i) / (2 \\cdot 1.96)$. The seeds differ in their data, their
training or their evaluation draws, so the values also vary *between* seeds, by more than the
within-seed errors say when the run's samples are not what moves the result (a model's training
luck). The pooled estimate therefore uses a random-effects model
$y_i = \\mu + b_i + e_i$, $b_i \\sim N(0, \\tau^2)$, $e_i \\sim N(0, s_i^2)$:

* $\\hat\\tau^2$ by DerSimonian-Laird, weights $w_i = 1 / (s_i^2 + \\hat\\tau^2)$,
  $\\hat\\mu = \\sum w_i y_i / \\sum w_i$;
* the interval of Hartung-Knapp-Sidik-Jonkman, $\\hat\\mu \\pm t_{n-1, 0.975} \\sqrt{q}$ with
  $q = \\sum w_i (y_i - \\hat\\mu)^2 / ((n - 1) \\sum w_i)$: it estimates the variance of
  $\\hat\\mu$ from the seeds' own scatter, so it is exact when the seeds agree up to their
  within-seed errors and close to nominal when they do not (the tests simulate both). Without
  within-seed intervals ($s_i = 0$) it is the $t$ interval over seeds,
  $\\bar y \\pm t_{n-1, 0.975}\\, \\mathrm{sd}(y) / \\sqrt n$.

The verdict compares that interval with the declared threshold: **holds** or **does not hold**
when the whole interval lies on one side, **inconclusive** when the threshold lies inside. A claim
whose value is a yes/no statement pools as the share $k / n$ of seeds where it is true, with a
Clopper-Pearson interval against one half: it holds when it is true in a clear majority of
seeds. A claim that no seed changes (declared ``varies = []``, or identical in every seed) is
decided by one run, with that run's interval.

When every seed measures the **same sample** (declared ``same_sample``: fixed questions, only the
evaluation draws change), the seeds are not independent replications of the sampling error:
$y_i = \\mu + c + d_i$ with $c$ the sample's error, shared, and $d_i$ the seed's own. The
within-seed variance estimates $\\sigma_c^2 + \\sigma_d^2$ and the scatter over seeds
$\\sigma_d^2$, so the variance of the mean over $n$ seeds is estimated as
$\\max(\\overline{s^2} - \\hat\\sigma_d^2, 0) + \\hat\\sigma_d^2 / n$, and the interval is the wider
of $\\hat\\mu \\pm 1.96$ times its root and the interval above: more seeds shrink only the seeds'
part. For an inconclusive claim,
:func:`seeds_to_decide` says how many seeds would decide it at the observed effect.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from icml25.book.claims import format_measured
from icml25.book.claims import verdict as point_verdict
from icml25.common.stats import clopper_pearson, random_effects, standard_errors


@dataclass(frozen=True)
class Pooled:
    """A claim's value and verdict over its seeds."""

    estimate: float
    interval: tuple[float, float]
    n: int
    verdict: str
    method: str  # "random effects", "t over seeds", "same sample", "share of seeds", "one run"
    seeds_to_decide: int | None = None

    def text(self) -> str:
        lo, hi = self.interval
        if self.method == "share of seeds":
            return (f"true in {round(self.estimate * self.n)} of {self.n} seeds "
                    f"[{format_measured(lo)}, {format_measured(hi)}]")
        if lo == hi == self.estimate:
            return format_measured(self.estimate)
        return f"{format_measured(self.estimate)} [{format_measured(lo)}, {format_measured(hi)}]"


def _edges(op: str, threshold) -> tuple:
    return tuple(threshold) if op == "in" else (threshold,)


def seeds_to_decide(n: int, estimate: float, half_width: float, op: str, threshold) -> int | None:
    """Seeds that would put the threshold outside the interval at the observed effect.

    The half-width shrinks as $1/\\sqrt n$, so :math:`n' = n\\,(h / |\\hat\\mu - t|)^2` (the nearest
    edge of a range), rounded up; ``None`` when the estimate sits on the threshold.
    """
    gap = min(abs(estimate - edge) for edge in _edges(op, threshold))
    if gap <= 0 or not math.isfinite(half_width):
        return None
    return max(n + 1, math.ceil(n * (half_width / gap) ** 2))


#: The chance of a false "holds" (or "does not hold") that a seed plan allows, one-sided.
ALPHA = 0.025


def design_level(looks) -> float:
    """The interval's coverage at each look of a seed plan that reads its verdicts at ``looks``
    (numbers of seeds): $1 - 2\\alpha / K$ for $K$ looks, $\\alpha = 0.025$.

    A plan that looks once (a fixed number of seeds) reads the usual 95% interval. A sequential
    plan (look at 5 seeds, add seeds only while undecided, look again at 10, then 20) has $K$
    chances to declare a false verdict; splitting $\\alpha$ evenly over the looks (Bonferroni)
    keeps the chance of any false "holds" at most $\\alpha$ whatever the looks' correlation, at
    the price of wider intervals (98.3% at each of three looks). The tests simulate the
    procedure with the true value on the threshold.
    """
    looks = list(looks or [])
    if not looks:
        raise ValueError("a seed plan needs at least one look")
    return 1 - 2 * ALPHA / len(looks)


def pool(values, intervals, op: str, threshold, *, deterministic: bool = False,
         same_sample: bool = False, level: float = 0.95) -> Pooled:
    """The pooled estimate, interval and verdict of one claim over its seeds.

    Parameters
    ----------
    values : sequence of float or bool
        The value each seed measured ($y_i$).
    intervals : sequence of (float, float) or None
        Each seed's within-seed 95% interval, ``None`` where the run has none.
    op, threshold
        The declared comparison and threshold (a threshold computed by the run: seed 0's).
    deterministic : bool
        The claim declares that no seed changes it: one run decides, with its own interval.
    same_sample : bool
        Every seed measures the same sample, and the within-seed intervals are over it: their
        shared part is kept in the pooled interval (see the module's docstring).
    level : float
        The pooled interval's coverage: 95% for a fixed number of seeds, wider at each look of
        a sequential plan (:func:`design_level`). The seeds' own intervals stay 95% ones.
    """
    values, intervals = list(values), list(intervals)
    if not values or len(values) != len(intervals):
        raise ValueError("pool needs one interval (or None) per value, and at least one value")
    if all(isinstance(v, (bool, np.bool_)) for v in values):
        n, k = len(values), int(sum(bool(v) for v in values))
        if deterministic or len(set(values)) == 1 and n == 1:
            v = bool(values[0])
            return Pooled(float(v), (float(v), float(v)), 1, point_verdict(v, op, threshold),
                          "one run")
        lo, hi = clopper_pearson(k, n, level)
        share = k / n
        wanted = bool(threshold) if op == "==" else True
        if wanted is False:
            share, lo, hi = 1 - share, 1 - hi, 1 - lo
        verdict = "holds" if lo > 0.5 else "does not hold" if hi < 0.5 else "inconclusive"
        more = None
        if verdict == "inconclusive":
            more = next((m for m in range(n + 1, 200)
                         if clopper_pearson(round(share * m), m, level)[0] > 0.5
                         or clopper_pearson(round(share * m), m, level)[1] < 0.5), None)
        return Pooled(share, (lo, hi), n, verdict, "share of seeds", more)
    y = np.array([float(v) for v in values])
    if deterministic or len(values) == 1 or np.all(y == y[0]):
        interval = intervals[0] or (float(y[0]), float(y[0]))
        verdict = point_verdict(float(y[0]), op, threshold, intervals[0])
        return Pooled(float(y[0]), tuple(map(float, interval)), 1, verdict, "one run")
    se = standard_errors(intervals)
    within = bool(np.all(np.isfinite(se)) and np.all(se > 0))
    method = "random effects" if within else "t over seeds"
    mu, half, _ = random_effects(y, se if within else 0 * y, level)
    shared = 0.0
    if same_sample:
        if not within:
            raise ValueError("same_sample pooling needs every seed's within-seed interval")
        scatter = float(y.var(ddof=1))
        shared = max(float(np.mean(se**2)) - scatter, 0.0)
        z = float(scipy_stats.norm.ppf(1 - (1 - level) / 2))
        half = max(half, z * math.sqrt(shared + scatter / len(y)))
        method = "same sample"
    interval = (mu - half, mu + half)
    verdict = point_verdict(mu, op, threshold, interval)
    more = None
    if verdict == "inconclusive":
        more = (seeds_to_decide(len(y), mu, half, op, threshold) if not same_sample
                else _seeds_with_shared_error(len(y), mu, shared, float(y.var(ddof=1)), op,
                                              threshold, level))
    return Pooled(mu, interval, len(y), verdict, method, more)


def _seeds_with_shared_error(n, estimate, shared, scatter, op, threshold,
                             level: float = 0.95) -> int | None:
    """Seeds that would decide a same-sample claim: ``None`` when the shared error alone
    keeps the threshold inside (a larger sample, not more seeds, would decide it)."""
    z = float(scipy_stats.norm.ppf(1 - (1 - level) / 2))
    gap = min(abs(estimate - edge) for edge in _edges(op, threshold)) / z
    if gap**2 <= shared:
        return None
    return max(n + 1, math.ceil(scatter / (gap**2 - shared)))
