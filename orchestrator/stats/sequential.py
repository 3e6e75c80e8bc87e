"""Looks after every round that keep their error rate: alpha spending (Lan & DeMets 1983).

A rule that judges an interval after every round and stops at the first verdict must spend
its α over the looks: a fixed 95% interval peeked at after each of 30 rounds is wrong ~30% of
the time. Three ways, each giving the nominal two-sided level q_n of the interval after n
rounds:

- `bonferroni`: α/K at each of the K planned looks. Valid under any dependence, but it pays
  for the looks as if they were independent, though look k holds every round of look k − 1.
- `obrien-fleming`: Lan-DeMets spending α(t) = 2 − 2Φ(z_{1−α/2}/√t) over the information
  fraction t = rounds / max rounds: almost nothing early, nearly all of α at the last look.
- `pocock`: α(t) = α·ln(1 + (e − 1)·t): about even, a little more early.

The spending boundaries c_n are set on the looks' joint law: P(|T_j| < c_j for the looks
j < n, |T_n| > c_n) = α(t_n) − α(t_{n−1}), T_n the paired t statistic after n rounds (the
mean of the per-round log ratios over its standard error, n − 1 df). Then the intervals
mean_n ± c_n·se_n hold the true ratio at every look together with probability 1 − α
(repeated confidence intervals, Jennison & Turnbull 2000 ch. 9): a verdict read from any of
them, at whatever look the rule stops, is false with probability at most α.

Why simulated: with a known spread the boundaries follow from a Brownian motion by numerical
integration (Armitage, McPherson & Rowe 1969), and the textbook way with an estimated spread
takes each look at that boundary's nominal level on Student's t. With the 2-9 degrees of
freedom of 3-10 rounds that breaks the promise: 5.6-6% of runs wrong where 5% was spent
(tests/stats/test_sequential.py measures it). The sequence T_3, T_4, ... of normal rounds
has a law free of the mean and the spread, so the boundaries here come from PATHS simulated
runs of that law (a fixed seed: a resumed sweep takes the same decisions), each look's c_n
the threshold that the spent share of the runs not yet stopped crosses. The level is the
look's two-sided t tail at c_n, so a look whose rounds differ (Welch) takes the same level.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from orchestrator.stats import intervals

SPENDINGS = ("obrien-fleming", "pocock", "bonferroni")
DEFAULT_SPENDING = "obrien-fleming"
SEED = 41  # the simulated paths: fixed, so a resumed sweep takes the same decisions
PATHS = 400_000  # at α/m = 0.6% about 2,500 paths cross: the level within a few %
MIN_PATHS = 40_000
DRAWS = 40_000_000  # paths × rounds at most (a rule of 1000 rounds: 40,000 paths)


def normal_sf(z: float) -> float:
    """P(Z > z), standard normal."""
    return 0.5 * math.erfc(z / math.sqrt(2))


def normal_isf(p: float) -> float:
    """The z with P(Z > z) = p, p in (0, 1): bisection on normal_sf, which keeps its
    relative precision in the far tail (an O'Brien-Fleming first look spends ~1e-12)."""
    if not 0 < p < 1:
        raise ValueError(f"normal_isf needs p in (0, 1), got {p}")
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if normal_sf(mid) > p else (lo, mid)
        if hi - lo < 1e-15:
            break
    return (lo + hi) / 2


def spent(t: float, alpha: float, spending: str) -> float:
    """α(t): the error spent by information fraction t (0 < t ≤ 1)."""
    if t <= 0:
        return 0.0
    t = min(t, 1.0)
    if spending == "obrien-fleming":
        return 2 * normal_sf(normal_isf(alpha / 2) / math.sqrt(t))
    if spending == "pocock":
        return alpha * math.log1p((math.e - 1) * t)
    raise ValueError(f"unknown spending {spending!r} (one of {', '.join(SPENDINGS)})")


@functools.lru_cache(maxsize=64)
def _t_boundaries(looks: tuple[int, ...], last: int, alpha: float,
                  spending: str) -> tuple[float, ...]:
    """c_n of each look (after n rounds) on |T|, by simulating the t statistics' joint law."""
    paths = max(MIN_PATHS, min(PATHS, DRAWS // last))
    rng = np.random.Generator(np.random.PCG64(SEED))
    total = np.zeros(paths)
    squares = np.zeros(paths)
    open_ = np.ones(paths, dtype=bool)
    crossed, out = 0, []
    wanted = set(looks)
    for n in range(1, last + 1):
        x = rng.standard_normal(paths)
        total += x
        squares += x * x
        if n not in wanted:
            continue
        c = math.inf
        new = round(spent(n / last, alpha, spending) * paths) - crossed
        if n >= 2 and new > 0:
            sd = np.sqrt(np.maximum(squares - total * total / n, 0) / (n - 1))
            t = np.abs(total / n) / (sd / math.sqrt(n))
            alive = t[open_]
            c = 0.0 if new >= len(alive) else float(-np.partition(-alive, new)[new])
            hit = open_ & (t > c)
            crossed += int(hit.sum())
            open_ &= ~hit
        out.append(c)
    return tuple(out)


def look_levels(first: int, last: int, alpha: float, spending: str) -> dict[int, float]:
    """The nominal two-sided level q_n of the paired t interval after n rounds (n − 1 df),
    for looks after every round from `first` to `last` (information fraction n / last); 0.0
    where a look spends nothing (it cannot decide)."""
    looks = tuple(range(max(first, 1), last + 1))
    if not looks:
        raise ValueError(f"no look between rounds {first} and {last}")
    if spending == "bonferroni":
        return {n: alpha / len(looks) for n in looks}
    if spending not in SPENDINGS:
        raise ValueError(f"unknown spending {spending!r} (one of {', '.join(SPENDINGS)})")
    cs = _t_boundaries(looks, last, alpha, spending)
    return {n: 0.0 if n < 2 or not math.isfinite(c) else 2 * intervals.t_sf(c, n - 1)
            for n, c in zip(looks, cs, strict=True)}
