"""stats/trend.py: Theil-Sen's slope and the Mann-Kendall test on known values and against
their pairwise definitions."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from orchestrator.stats.trend import mann_kendall, theil_sen


def test_theil_sen_and_mann_kendall_on_known_values() -> None:
    x = np.arange(6, dtype=float)
    y = 2 * x + np.array([0, 0, 0, 0, 0, 50.0])  # one wild point: the median slope holds
    assert theil_sen(x, y) == pytest.approx(2.0)
    # a strictly increasing series of 10: S = 45, Var S = 125, z = 44/sqrt(125)
    assert mann_kendall(np.arange(10.0)) == pytest.approx(8.1e-5, rel=0.05)
    assert mann_kendall(np.array([1.0, 2, 1, 2, 1, 2])) > 0.5


@pytest.mark.parametrize("seed", range(30))
def test_slope_and_trend_are_their_pairwise_definitions_exactly(seed: int) -> None:
    """Every pair (i < j) as the docstrings define them, against the row-at-a-time arrays:
    equal x skipped, ties, no pairs at all."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 90))
    y = rng.normal(0, 0.05, n) + 0.002 * np.arange(n) * rng.normal()
    y = np.round(y, 2) if seed % 4 == 0 else y
    x = rng.integers(0, 8, n).astype(float) if seed % 3 == 0 else np.arange(n, dtype=float)
    pairs = list(itertools.combinations(range(n), 2))
    slopes = [(y[j] - y[i]) / (x[j] - x[i]) for i, j in pairs if x[j] != x[i]]
    assert theil_sen(x, y) == (float(np.median(slopes)) if slopes else 0.0)
    s = sum(np.sign(y[j] - y[i]) for i, j in pairs)
    var = n * (n - 1) * (2 * n + 5) / 18
    want = 1.0 if var == 0 or s == 0 else math.erfc((abs(s) - 1) / math.sqrt(var) / math.sqrt(2))
    assert mann_kendall(y) == want
