"""A drift check after the sweep: did the machine get faster or slower as the sweep went on?

Interleaving (spec/order.py) turns drift into noise that every target shares instead of
differences between targets; this check shows what it turned into noise. Each process of a
steady-state figure (a median; first calls and device inits are other questions) with at least
two processes gives one residual, the log of its median less the mean log of its figure's
processes, so that figures of any size can be pooled. A run's residuals are averaged into one
point per process, in the order the processes ran (the store records runs as they end). The
slope is Theil-Sen's (the median of the pairwise slopes: robust to a few odd processes), its
significance the Mann-Kendall trend test (S = Σ sign(y_j − y_i), Var S = n(n−1)(2n+5)/18,
normal approximation with continuity correction; two-sided). Too few points (< MIN_POINTS)
say nothing rather than guess; a captured log (one program run) has no order of processes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from orchestrator import vocabulary
from orchestrator.report.process_table import FIGURE

ALPHA = 0.05
MIN_POINTS = 6  # below this a trend test has almost no power (n = 4: p ≥ 0.08 at best)


@dataclass(frozen=True)
class Drift:
    slope: float  # Theil-Sen slope of the log residuals per process
    change: float  # exp(slope · (n − 1)) − 1: the drift over the sweep, as a ratio minus one
    p_value: float  # Mann-Kendall, two-sided
    points: int


def theil_sen(x: np.ndarray, y: np.ndarray) -> float:
    """The median of the slopes of every pair of points with different x."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    # a row of pairs (i, j > i) at a time into one array: a Python float per pair was 12.5
    # million objects (~400 MB) and 6 s for a sweep of 5000 processes
    slopes = np.empty(len(x) * (len(x) - 1) // 2)
    filled = 0
    for i in range(len(x) - 1):
        dx, dy = x[i + 1:] - x[i], y[i + 1:] - y[i]
        apart = dx != 0
        row = dy[apart] / dx[apart]
        slopes[filled:filled + len(row)] = row
        filled += len(row)
    return float(np.median(slopes[:filled])) if filled else 0.0


def mann_kendall(y: np.ndarray) -> float:
    """Two-sided p-value of a monotonic trend in y (in order), normal approximation."""
    y = np.asarray(y, dtype=float)
    n = len(y)
    s = float(sum(np.sign(y[i + 1:] - y[i]).sum() for i in range(n - 1)))  # a row at a time
    var = n * (n - 1) * (2 * n + 5) / 18
    if var == 0 or s == 0:
        return 1.0
    z = (abs(s) - 1) / math.sqrt(var)
    return float(math.erfc(z / math.sqrt(2)))


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
