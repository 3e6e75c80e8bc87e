"""The drift check (report/drift.py): a machine that slows as the sweep goes on is named; a
steady one, and too few processes, say nothing."""

from __future__ import annotations

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
