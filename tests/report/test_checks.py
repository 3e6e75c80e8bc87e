"""report/checks.py: odd times said per figure (a zero, a median below its min, not finite,
negative), and the spread check without a division by a zero min."""

from __future__ import annotations

import math

import pandas as pd

from orchestrator.report import checks


def _rows(values: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame([{"unit": "u", "line_no": 1, "label": "cpu", "method": "with_sync",
                          "stat": stat, "value_s": value, "framework": "torch", "device": "cpu",
                          "threads_key": 1} for stat, value in values.items()])


def test_odd_times_say_what_is_wrong_with_each_figure() -> None:
    assert checks.odd_times(_rows({"min": 1e-6, "median": 2e-6})) == []
    zero = checks.odd_times(_rows({"min": 0.0, "median": 1e-9}))
    assert zero == ["**impossible time**: PyTorch CPU at 1 thread with sync (line 1) min is "
                    "0.000ns, a zero time: shown as printed, no ratio against it."]
    inverted = checks.odd_times(_rows({"min": 2e-6, "median": 1e-6}))
    assert len(inverted) == 1 and inverted[0].startswith("**median below min**")
    assert "not a finite time" in checks.odd_times(_rows({"min": math.inf}))[0]
    assert "a negative time" in checks.odd_times(_rows({"value": -1.0}))[0]


def test_spread_check_of_a_zero_min_is_no_division() -> None:
    rows = _rows({"min": 0.0, "median": 1e-9}).assign(sample_key=None)
    assert checks.spread(rows, {}, checks.Thresholds()) == []
