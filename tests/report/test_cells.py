"""report/cells.py: a time and an error as a table cell shows them."""

from __future__ import annotations

import math

import pandas as pd

from orchestrator.report.cells import duration, scientific


def test_durations_no_duration_can_hold_are_plain_seconds() -> None:
    assert [duration(v) for v in (0.0, 1e-6, -1e-6, math.inf, 1e300, 1e20)] == [
        "0.000ns", "1.000µs", "-1e-06 s", "inf s", "1e+300 s", "1e+20 s"]


def test_durations_in_rusts_form_and_no_value_as_an_empty_cell() -> None:
    assert [duration(v) for v in (651.666e-6, 3.6, None, math.nan, pd.NA)] == [
        "651.666µs", "3.600s", "", "", ""]


def test_errors_in_the_chapters_form_a_recorded_nan_as_nan() -> None:
    assert [scientific(v) for v in (2.008e-06, math.nan, None, pd.NA)] == [
        "2.008e-06", "nan", "", ""]
