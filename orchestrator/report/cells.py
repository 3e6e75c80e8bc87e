"""How one value is written in a table cell, a leaf of the report: a time in Rust's `{:.3?}`
form (`651.666µs`, as the chapter prints it), an error as `2.008e-06`. Tables, plots' bar labels
and the opening's sentences write their numbers with these.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from orchestrator.data.durations import format_duration

_YEAR = 365 * 86400.0  # longer than any timed run: printed in plain seconds


def duration(value: Any) -> str:
    """A time cell: Rust's `{:.3?}` form, '' for no value; what no Duration can hold (negative,
    nan, inf, beyond a year: an edited line or a broken timer) as plain seconds, `-1e-06 s`."""
    if value is None or pd.isna(value):
        return ""
    seconds = float(value)
    return format_duration(seconds) if 0 <= seconds < _YEAR else f"{seconds:.3g} s"


def scientific(value: Any) -> str:
    """An error cell, `2.008e-06`; a recorded nan (a build whose c holds nan) reads `nan`."""
    return "" if value is None or value is pd.NA else f"{float(value):.3e}"
