"""Run until decided (`precision_target: {decide: true}` with `variants:`): the look.

A group is the series of every variant at one point of the sweep (one target at one shape,
thread count, warm-up: its runs differ only in variant and process). Interleaved rounds put
process k of each of them in round k, so after round k every variant has k processes and
B/A of each steady figure (each variant against the first) is judged on the per-round log
ratios (paired; Welch's t on the log process values where the rounds differ).

Looking after every round and stopping at the first "decided" would inflate false verdicts (a
fixed-n 5% test peeked at 30 times is wrong ~30% of the time). The level here holds under any
stopping: α = 5% is split evenly over the group's m figures (Bonferroni: the figures of one run
are not independent), and each figure's α/m is spent over the looks after rounds pilot..last
(stats/sequential.py; `last` is max_processes, or the rounds the time budget holds at the
pilot's pace: run/stopping.py): by O'Brien-Fleming-type spending over the information fraction
rounds / last (the default: little early, most of α/m at the last looks), Pocock-type,
or `bonferroni` (α/(K·m) at each of the K looks, the first rule, kept for comparison). The
boundaries are set on the paired t statistics' joint law, so the intervals are repeated
confidence intervals: all of them, at every look, hold the true ratio with probability
1 − α/m together, and a verdict read at any look is false at most that often. The group
stops, `decided`, when every figure's interval lies beyond the ±min_effect band (slower,
faster) or inside it (same); else at the budget or max_processes like any stopping target.
`compare` at the end judges the whole comparison by its own correction (BH's α·R/M over its M
figures): no stricter than the rule's look (at most α/m) wherever it decides R ≥ M/m figures,
as in the sweeps here, so the decided figures keep their verdicts (tests/run/test_deciding.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from orchestrator.records import RunDef
from orchestrator.stats import sequential

DECIDED = "decided"
ALPHA = 0.05
MIN_LEVEL = 1e-12  # a look spending less cannot decide (O'Brien-Fleming's first of many)
Points = list[tuple[int, float, Any]]  # (process, median, samples) of one figure


class Quantiles:
    """What the look needs of the statistics (stats/intervals)."""

    def t_quantile(self, p: float, df: float) -> float: ...


def group_of(run: RunDef) -> tuple[Any, ...]:
    """The group a run's series belongs to: everything but its variant and process."""
    params = tuple(sorted((k, repr(v)) for k, v in run.params.items()
                          if k not in ("variant", "process", "profile")))
    return (run.experiment, run.program, run.device, params)


def level(rounds: int, first: int, last: int, figures: int, spending: str,
          alpha: float = ALPHA) -> float:
    """q of each interval after `rounds` rounds, of looks after every round from `first` to
    `last`: α/figures spent over them by `spending` (stats/sequential.py); 0.0 (nothing
    left: no verdict) after `last` or before `first`."""
    last = max(last, first, 1)
    levels = sequential.look_levels(first, last, alpha / max(figures, 1), spending)
    return levels.get(rounds, 0.0)


def interval(stats: Quantiles, a: Points, b: Points, q: float) -> tuple[float, float] | None:
    """log B/A's interval at level 1 − q: paired by round where both ran the same rounds,
    else Welch's; None with fewer than 2 values a side or a value without a log."""
    va, vb = {k: v for k, v, _ in a}, {k: v for k, v, _ in b}
    if len(va) < 2 or len(vb) < 2 or min(*va.values(), *vb.values()) <= 0 or q < MIN_LEVEL:
        return None
    if set(va) == set(vb):
        diffs = [math.log(vb[k]) - math.log(va[k]) for k in sorted(va)]
        mean, sd = _moments(diffs)
        se, df = sd / math.sqrt(len(diffs)), float(len(diffs) - 1)
    else:
        ma, sa = _moments([math.log(v) for v in va.values()])
        mb, sb = _moments([math.log(v) for v in vb.values()])
        ea, eb = sa * sa / len(va), sb * sb / len(vb)
        mean, se = mb - ma, math.sqrt(ea + eb)
        df = (ea + eb) ** 2 / (ea * ea / (len(va) - 1) + eb * eb / (len(vb) - 1)) \
            if ea > 0 and eb > 0 else float(len(va) + len(vb) - 2)
    half = stats.t_quantile(1 - q / 2, df) * se if se > 0 else 0.0
    return mean - half, mean + half


def _moments(xs: Sequence[float]) -> tuple[float, float]:
    mean = math.fsum(xs) / len(xs)
    return mean, math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (len(xs) - 1))


def verdict(bounds: tuple[float, float] | None, min_effect: float) -> str:
    """slower / faster (beyond the band), same (inside), else inconclusive."""
    if bounds is None:
        return "inconclusive"
    lo, hi = bounds
    edge = math.log1p(min_effect)
    if lo > edge:
        return "slower"
    if hi < -edge:
        return "faster"
    return "same" if lo >= -edge and hi <= edge else "inconclusive"


def look(stats: Quantiles, sides: list[dict[tuple[str, str], Points]], rounds: int,
         first: int, last: int, min_effect: float,
         spending: str = sequential.DEFAULT_SPENDING) -> dict[tuple[str, str], list[str]] | None:
    """Each figure's verdicts (one per variant after the first) over the first `rounds`
    processes, at the look level of looks after rounds first..last; None when a figure of the
    first variant is missing on another side (a failed or unmatched series: not decided)."""
    cut = [{f: [p for p in points if p[0] <= rounds] for f, points in side.items()}
           for side in sides]
    base, others = cut[0], cut[1:]
    figures = sorted(base)
    if not figures or not others or any(f not in o for o in others for f in figures):
        return None
    q = level(rounds, first, last, len(figures) * len(others), spending)
    return {f: [verdict(interval(stats, base[f], o[f], q), min_effect) for o in others]
            for f in figures}


def decided(verdicts: dict[tuple[str, str], list[str]] | None) -> bool:
    return verdicts is not None and all(v != "inconclusive" for vs in verdicts.values()
                                        for v in vs)
