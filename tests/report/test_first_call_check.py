"""The first-call check divides by the same run's (else the same
experiment's) with-sync minimum, never by another experiment's."""

from __future__ import annotations

import pandas as pd

from orchestrator.report import checks
from orchestrator.report.sections.first_call import first_call_cost


def _row(experiment: str, unit: str, method: str, stat: str, value: float) -> dict[str, object]:
    return {"experiment": experiment, "unit": unit, "framework": "torch", "label": "cuda",
            "shape": "1024x1024", "method": method, "stat": stat, "value_s": value,
            "device": "cuda", "process": 1, "cache": "", "runs": 20}


def test_first_call_is_compared_with_its_own_runs_steady_figure() -> None:
    fig = pd.DataFrame([
        _row("methods", "m", "with_sync", "min", 50e-6),  # 20 reps: the smaller minimum
        _row("first-call", "f", "with_sync", "min", 60e-6),  # its own 5 reps
        _row("first-call", "f", "first_call_after_sync", "value", 0.0868),
    ])
    warnings = first_call_cost(fig, checks.Thresholds())
    assert len(warnings) == 1
    assert "the with-sync min 60.000µs" in warnings[0] and "1447×" in warnings[0]


def test_no_steady_figure_in_the_experiment_means_no_ratio() -> None:
    fig = pd.DataFrame([
        _row("methods", "m", "with_sync", "min", 50e-6),
        _row("first-call", "f", "first_call_after_sync", "value", 0.0868),
    ])
    assert first_call_cost(fig, checks.Thresholds()) == []
