"""One matched figure judged (report/compare/judging.py), with no matching and no section
registry: the caller names the figure's section and words; the verdict rule at its bounds."""

from __future__ import annotations

from typing import Any

import numpy as np

from orchestrator.report.compare.judging import finish, judged_row, verdict


def _figure(values: list[float], precision: str = "fp32") -> dict[str, Any]:
    """A matched figure as report/compare/rows.py pools one: a value per process, each
    process's samples (20 reps, 1% apart)."""
    rng = np.random.default_rng(len(values))
    sets = [v * (1 + 0.01 * rng.standard_normal(20)) for v in values]
    return {"method": "with_sync", "stat": "median", "value": float(np.median(values)),
            "min": min(values), "values": values, "sample_sets": sets, "shape": "256x256",
            "precision": precision, "device": "cpu", "threads": 1}


def test_verdict_rule_at_its_bounds() -> None:
    assert verdict(1 / 1.05, 1.05, 0.05) == "same"
    assert verdict(1.0501, 1.2, 0.05) == "slower"
    assert verdict(0.5, 0.95, 0.05) == "faster"
    assert verdict(0.99, 1.06, 0.05) == "inconclusive"


def test_a_figure_twice_as_slow_is_slower_under_the_section_and_words_given() -> None:
    a = _figure([1.0e-3, 1.01e-3, 0.99e-3, 1.0e-3])
    b = _figure([2.0e-3, 2.02e-3, 1.98e-3, 2.0e-3])
    row = judged_row("methods", "a figure in words", a, b, "", 0.05)
    assert (row.section, row.figure, row.basis) == ("methods", "a figure in words",
                                                     "processes 4/4, reps 20/20")
    assert row.ratio is not None and abs(row.ratio - 2.0) < 1e-9
    assert row.verdict == ""  # the verdict waits for the family's correction
    assert finish([row]) == 0.95  # one figure: its own family, at 95%
    assert row.verdict == "slower" and row.lo is not None and row.hi is not None
    assert 1.05 < row.lo < 2.0 < row.hi


def test_two_arithmetics_are_set_apart_without_a_verdict() -> None:
    a = _figure([1.0e-3, 1.01e-3, 0.99e-3, 1.0e-3])
    b = _figure([2.0e-3, 2.02e-3, 1.98e-3, 2.0e-3], precision="tf32")
    row = judged_row("methods", "apart", a, b, "", 0.05)
    assert row.apart == "precision fp32 vs tf32" and row.verdict == ""
    assert row.p_value is None and row.ratio is not None
