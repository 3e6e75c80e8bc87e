"""report/sample_sets.py: a figure's samples grouped per (run, summary line), values no time
can be left out."""

from __future__ import annotations

import math

import pandas as pd

from orchestrator.report.sample_sets import sample_sets


def test_sample_sets_leave_out_values_no_time_can_be() -> None:
    samples = pd.DataFrame({"run_id": ["r"] * 4 + ["s"], "summary_line": [1, 1, 1, 1, 2],
                            "value_s": [1e-6, math.nan, -1.0, math.inf, math.nan]})
    sets = sample_sets(samples)
    assert [list(v) for v in sets.values()] == [[1e-6]]  # the set of only nan is gone


def test_sample_sets_are_grouped_in_order_of_first_appearance_rows_in_order() -> None:
    # as groupby(["run_id", "summary_line"], sort=False): a set's rows need not be together
    samples = pd.DataFrame({"run_id": ["b", "a", "b", "a", "b", "c"],
                            "summary_line": pd.array([7, 3, 7, 3, 9, 3], dtype="Int64"),
                            "value_s": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    sets = sample_sets(samples)
    assert [(k.replace("\x1f", " "), list(v)) for k, v in sets.items()] == [
        ("b 7", [1.0, 3.0]), ("a 3", [2.0, 4.0]), ("b 9", [5.0]), ("c 3", [6.0])]
