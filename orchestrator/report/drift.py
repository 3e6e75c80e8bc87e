"""A drift check after the sweep: did the machine get faster or slower as the sweep went on?

Interleaving (experiments/order.py) turns drift into noise that every target shares instead of
differences between targets; this check shows what it turned into noise. Each process of a
steady-state figure (a median; first calls and device inits are other questions) with at least
two processes gives one residual, the log of its median less the mean log of its figure's
processes, so that figures of any size can be pooled. A run's residuals are averaged into one
point per process, in the order the processes ran (the store records runs as they end). The
slope is Theil-Sen's (the median of the pairwise slopes: robust to a few odd processes), its
significance the Mann-Kendall trend test (both in stats/trend.py). Too few points (< MIN_POINTS)
say nothing rather than guess; a captured log (one program run) has no order of processes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from orchestrator import vocabulary
from orchestrator.report.process_table import FIGURE
from orchestrator.stats.trend import mann_kendall, theil_sen

ALPHA = 0.05
MIN_POINTS = 6  # below this a trend test has almost no power (n = 4: p ≥ 0.08 at best)


@dataclass(frozen=True)
class Drift:
    slope: float  # Theil-Sen slope of the log residuals per process
    change: float  # exp(slope · (n − 1)) − 1: the drift over the sweep, as a ratio minus one
    p_value: float  # Mann-Kendall, two-sided
    points: int


def residuals(fig: pd.DataFrame) -> pd.Series:
    """One point per process in run order: the mean log residual of its steady figures."""
    rows = fig[fig["method"].isin(vocabulary.method_keys(table1=True)) & (fig["stat"] == "median")
               & fig["value_s"].notna()]
    if rows.empty or (rows["section"] != "").any():  # a log: one run, no process order
        return pd.Series(dtype=float)
    keys = [k for k in FIGURE if k in rows]
    rows = rows[rows["value_s"].astype(float) > 0].drop_duplicates(["unit", *keys])
    logs = np.log(rows["value_s"].astype(float))
    centre = logs.groupby([rows[k] for k in keys], dropna=False).transform("mean")
    counts = logs.groupby([rows[k] for k in keys], dropna=False).transform("size")
    resid = (logs - centre)[counts >= 2]
    order = rows.loc[resid.index, "order"]
    first = order.groupby(rows.loc[resid.index, "unit"]).min()
    points = resid.groupby(rows.loc[resid.index, "unit"]).mean()
    return points.loc[first.sort_values().index]


def drift(fig: pd.DataFrame) -> Drift | None:
    """The sweep's drift, None with fewer than MIN_POINTS processes to order."""
    y = residuals(fig).to_numpy(dtype=float)
    n = len(y)
    if n < MIN_POINTS:
        return None
    slope = theil_sen(np.arange(n, dtype=float), y)
    return Drift(slope, math.expm1(slope * (n - 1)), mann_kendall(y), n)


def warnings(fig: pd.DataFrame) -> list[str]:
    """A warning when the drift is significant (Mann-Kendall p < ALPHA)."""
    found = drift(fig)
    if found is None or found.p_value >= ALPHA:
        return []
    return [f"Drift: the process medians moved {100 * found.change:+.1f}% over the sweep's "
            f"{found.points} processes in run order (Theil-Sen slope of each process's "
            "median against its figure's; Mann-Kendall p = "
            f"{found.p_value:.2g}). Interleaving shares it among the targets; a sweep in file "
            "order would read it as differences between them."]
