"""The drift check (report/drift.py): a machine that slows as the sweep goes on is named; a
steady one, and too few processes, say nothing."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from orchestrator import dataset
from orchestrator.report import drift, tables

from . import fake_stores
from .fake_stores import spread

RNG = np.random.default_rng(29)


def _fig(tmp_path: Path, centres: list[float]) -> object:
    processes = [{"with sync": spread(c, 20, RNG), "no sync": spread(c / 2, 20, RNG)}
                 for c in centres]
    return tables.prepare(dataset.load(fake_stores.store(tmp_path / "s", processes)))


def test_theil_sen_and_mann_kendall_on_known_values() -> None:
    x = np.arange(6, dtype=float)
    y = 2 * x + np.array([0, 0, 0, 0, 0, 50.0])  # one wild point: the median slope holds
    assert drift.theil_sen(x, y) == pytest.approx(2.0)
    # a strictly increasing series of 10: S = 45, Var S = 125, z = 44/sqrt(125)
    assert drift.mann_kendall(np.arange(10.0)) == pytest.approx(8.1e-5, rel=0.05)
    assert drift.mann_kendall(np.array([1.0, 2, 1, 2, 1, 2])) > 0.5


def test_a_machine_slowing_through_the_sweep_is_warned(tmp_path: Path) -> None:
    # 12 processes of one target, each 3% slower than the one before (about +38% in all)
    found = drift.drift(_fig(tmp_path, [300e-6 * 1.03 ** k for k in range(12)]))
    assert found is not None and found.points == 12
    assert found.change == pytest.approx(1.03 ** 11 - 1, rel=0.1)
    assert found.p_value < 0.001
    (line,) = drift.warnings(_fig(tmp_path / "again", [300e-6 * 1.03 ** k for k in range(12)]))
    assert line.startswith("Drift: the process medians moved +3") and "12 processes" in line


def test_a_steady_machine_and_too_few_processes_say_nothing(tmp_path: Path) -> None:
    steady = [300e-6 * f for f in (1.01, 0.98, 1.02, 0.99, 1.0, 1.03, 0.97, 1.01, 0.99, 1.0)]
    found = drift.drift(_fig(tmp_path / "steady", steady))
    assert found is not None and found.p_value > 0.05
    assert drift.warnings(_fig(tmp_path / "steady2", steady)) == []
    few = _fig(tmp_path / "few", [300e-6 * 1.5 ** k for k in range(drift.MIN_POINTS - 1)])
    assert drift.drift(few) is None and drift.warnings(few) == []


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
    assert drift.theil_sen(x, y) == (float(np.median(slopes)) if slopes else 0.0)
    s = sum(np.sign(y[j] - y[i]) for i, j in pairs)
    var = n * (n - 1) * (2 * n + 5) / 18
    want = 1.0 if var == 0 or s == 0 else math.erfc((abs(s) - 1) / math.sqrt(var) / math.sqrt(2))
    assert drift.mann_kendall(y) == want
