"""Run until decided, simulated: a look after every round under each way of spending α.

Part of bench/calibration.py (`--looks`). For each committed A/A family, each group of its
steady figures (the clocks of one target at one point: what `precision_target: {decide:
true}` stops together) runs rounds of variants a and b: one log process value each a round,
normal (or t3) with the figure's spread, b shifted by the change for every figure of the
group (a change to a target moves all its clocks). From the pilot on, after every round the
rule of run/deciding.py judges each figure's paired interval (per-round log ratios, rounds − 1
df) at its look's level, and the group stops at the first look where every figure is
decided, else at the last round. Scored at the stop: a group with any false verdict (the
rule's promise: at most 5%), the false share among verdicts, power (changed figures given the
right verdict), groups decided, and rounds used.

Ways: `obrien-fleming`, `pocock` (Lan-DeMets spending over rounds / max rounds),
`bonferroni` (α/K a look) from stats/sequential.py, each with α/m a figure; `peek` is the
fixed-n level α/m at every look (no care for the looks: the reference that inflates).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from orchestrator.stats import sequential

WAYS = ("obrien-fleming", "pocock", "bonferroni", "peek")
ALPHA = 0.05


def levels(way: str, pilot: int, rounds: int, figures: int) -> dict[int, float]:
    """The nominal level q_n of each look (after n rounds), α/figures spent by `way`."""
    if way == "peek":
        return {n: ALPHA / figures for n in range(pilot, rounds + 1)}
    return sequential.look_levels(pilot, rounds, ALPHA / figures, way)


def look_verdicts(x: np.ndarray, q: float, edge: float) -> np.ndarray:
    """run/deciding.look's verdicts on the per-round log ratios x (runs × figures × rounds) at
    level q: +1 slower, −1 faster, 0 same, 9 inconclusive."""
    k = x.shape[2]
    d, se = x.mean(axis=2), x.std(axis=2, ddof=1) / math.sqrt(k)
    # as run/deciding.interval: a look spending below MIN_LEVEL cannot decide
    half = stats.t.isf(q / 2, k - 1) * se if k > 1 and q >= 1e-12 else np.inf
    lo, hi = d - half, d + half
    v = np.full(d.shape, 9)
    v[lo > edge], v[hi < -edge] = 1, -1
    v[(lo >= -edge) & (hi <= edge)] = 0
    return v


def run_group(spread: np.ndarray, shift: float, way: str, n: int, rng: np.random.Generator,
              pilot: int, rounds: int, min_effect: float, noise: str) -> dict[str, np.ndarray]:
    """n simulated runs of one group (its figures' spreads) until decided; per run: the
    verdicts at the stop (n × m: +1, −1, 0, 9) and the rounds used."""
    m = len(spread)
    size = (n, m, rounds)
    if noise == "t3":
        za, zb = (rng.standard_t(3, size=size) / math.sqrt(3) for _ in range(2))
    else:
        za, zb = rng.standard_normal(size), rng.standard_normal(size)
    diffs = (zb - za) * spread[None, :, None] + shift
    edge = math.log1p(min_effect)
    q = levels(way, pilot, rounds, m)
    final = np.full((n, m), 9)
    used = np.full(n, rounds)
    open_ = np.ones(n, dtype=bool)
    for k in range(pilot, rounds + 1):
        v = look_verdicts(diffs[:, :, :k], q[k], edge)
        stop = open_ & ((v != 9).all(axis=1) | (k == rounds))
        final[stop], used[stop] = v[stop], k
        open_ &= ~stop
    return {"verdicts": final, "rounds": used}


def simulate(spreads: np.ndarray, groups: np.ndarray, change: float, way: str, n: int,
             rng: np.random.Generator, pilot: int = 3, rounds: int = 10,
             min_effect: float = 0.05, noise: str = "normal") -> dict[str, float]:
    """Every group of one family, n runs each: the rates above, over groups and runs."""
    edge = math.log1p(min_effect)
    shift = math.log1p(change)
    truth = 1 if shift > edge + 1e-12 else 0
    any_false = false_share = right = figures = decided = used = 0.0
    count = 0
    for g in np.unique(groups):
        r = run_group(spreads[groups == g], shift, way, n, rng, pilot, rounds, min_effect,
                      noise)
        v = r["verdicts"]
        given = v != 9
        false = given & (v != truth)
        any_false += false.any(axis=1).sum()
        false_share += np.where(given.any(axis=1), false.sum(1) / np.maximum(given.sum(1), 1),
                                0).sum()
        right += (v == truth).sum()
        figures += v.size
        decided += given.all(axis=1).sum()
        used += r["rounds"].sum()
        count += n
    return {"any_false": any_false / count, "false_share": false_share / count,
            "power": right / figures if change else math.nan, "decided": decided / count,
            "rounds": used / count}


def table(families: list, changes: tuple[float, ...], n: int, seed: int, pilot: int,
          rounds: int, noise: str) -> list[dict[str, object]]:
    rng = np.random.default_rng(seed)
    out = []
    for fam in families:
        steady = fam.steady
        for way in WAYS:
            for change in changes:
                r = simulate(fam.spread[steady], fam.groups[steady], change, way, n, rng,
                             pilot, rounds, noise=noise)
                out.append({"family": fam.name, "groups": len(np.unique(fam.groups[steady])),
                            "way": way, "change": change, **r})
    return out


def markdown(rows: list[dict[str, object]], change_name) -> str:  # noqa: ANN001
    def pct(x: object) -> str:
        return "" if math.isnan(float(x)) else f"{100 * float(x):.1f}%"  # type: ignore[arg-type]

    lines = ["| store (groups) | looks | change | groups with a false verdict | false among "
             "verdicts | power | groups decided | rounds used |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['family']} ({r['groups']}) | {r['way']} | "
                     f"{change_name(r['change'])} | {pct(r['any_false'])} | "
                     f"{pct(r['false_share'])} | {pct(r['power'])} | {pct(r['decided'])} | "
                     f"{float(r['rounds']):.1f} |")  # type: ignore[arg-type]
    return "\n".join(lines)
