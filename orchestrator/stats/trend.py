"""A trend in a series of points: Theil-Sen's slope and the Mann-Kendall test.

Theil-Sen's slope is the median of the pairwise slopes (robust to a few odd points); the
Mann-Kendall test gives a monotonic trend's two-sided p-value (S = Σ sign(y_j − y_i),
Var S = n(n−1)(2n+5)/18, normal approximation with continuity correction). The report's drift
check (report/drift.py) runs both on the processes of a sweep in run order.
"""

from __future__ import annotations

import math

import numpy as np


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
