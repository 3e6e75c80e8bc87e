"""Warnings about the GPU's clock while a run ran: NVML's violation counters
kept as their growth over the run (`gpu_below_app_clock_s` and its causes, data/state_columns),
the SM clock the orchestrator sampled during the run (`gpu_sm_clock_run_min_mhz`/`_max_mhz`),
and the SM clock each program read at the start and end of each timed block (method `sm_clock`:
torch, burn and JAX on CUDA).

A run whose clocks were below the application clock for some of it gets one line with the
seconds and the causes NVML counted: `low utilization` is the GPU idling (device init, a
compile, the gaps between blocks), anything else (power, thermal) held a busy GPU down. A timed
block that began or ended below the run's application clock gets one line per run naming the
blocks and clocks: its figures were not taken at full clock.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from orchestrator.data import frame_records
from orchestrator.report.findings import Kind
from orchestrator.report.names import as_text, run_name

BELOW_S = 0.05  # NVML counts in ns; less than this is the counters' own granularity at rest
_CAUSES = (("gpu_low_utilization_s", "low utilization (idle)"),
           ("gpu_power_throttle_s", "power cap"), ("gpu_thermal_throttle_s", "thermal"))


def _number(row: pd.Series, column: str) -> float | None:
    value = row.get(column)
    return None if value is None or pd.isna(value) else float(value)


def _name(row: pd.Series) -> str:
    where = f" ({row['experiment']})" if as_text(row.get("experiment")) else ""
    return run_name(row, context=True) + where


def _runs(rows: pd.DataFrame, column: str) -> list[dict[str, Any]]:
    if column not in rows or rows.empty:
        return []
    have = rows[rows[column].notna()]
    return run_records(have.drop_duplicates("run_id"))


# what a run's line reads besides its `gpu_*` columns (run_name, the experiment)
RUN_FIELDS = ["run_id", "experiment", "framework", "label", "device", "process", "cache",
              "threads_key"]


def run_records(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """One row per run as a plain record of the columns a GPU state line reads (here and in
    state_checks): a pd.Series per run and check (iterrows) was seconds at 5000 runs."""
    return frame_records.records(rows[[c for c in rows if c in RUN_FIELDS or c.startswith("gpu_")]])


def below_app_clock(rows: pd.DataFrame) -> list[str]:
    """Runs whose clocks were below the application clock for part of the run."""
    out = []
    for row in _runs(rows, "gpu_below_app_clock_s"):
        below = _number(row, "gpu_below_app_clock_s")
        if below is None or below < BELOW_S:
            continue
        causes = [f"{words} {value:.3g} s" for column, words in _CAUSES
                  if (value := _number(row, column)) is not None and value >= BELOW_S]
        low, high = _number(row, "gpu_sm_clock_run_min_mhz"), \
            _number(row, "gpu_sm_clock_run_max_mhz")
        sampled = (f"; SM clock sampled during the run {low:.0f}–{high:.0f} MHz"
                   if low is not None and high is not None else "")
        busy = [c for c in causes if not c.startswith("low utilization")]
        out.append(Kind.BELOW_APP_CLOCK.says(
            f"{_name(row)}: {below:.3g} s" + (f" ({', '.join(causes)})" if causes else "")
            + sampled + (". A busy GPU was held down: its figures ran on lowered clocks."
                         if busy else ". Counted while the GPU idled; the timed blocks' own "
                         "SM clocks say whether a figure ran below it.")))
    return out


def block_clocks(rows: pd.DataFrame) -> list[str]:
    """Timed blocks (the programs' `# sm clock` lines) that began or ended below the run's
    application clock (or, where it is unknown, the highest clock any block of it read)."""
    if "method" not in rows:
        return []
    blocks = rows[rows["method"] == "sm_clock"]
    out = []
    for _, mine in blocks.groupby("run_id", sort=False):
        first = mine.iloc[0]
        app = _number(first, "gpu_app_clock_mhz")
        top = app if app is not None else float(mine["value_s"].max())
        slow = [f"{row['method_text']} {row['stat'].replace('block_', '')} "
                f"{float(row['value_s']):.0f} MHz" for _, row in mine.iterrows()
                if float(row["value_s"]) < top]
        if slow:
            out.append(Kind.BLOCK_BELOW_CLOCK.says(
                f"{_name(first)}: {'; '.join(slow)} (application clock {top:.0f} MHz): those "
                "figures were not all taken at full clock."))
    return out


def warnings(rows: pd.DataFrame) -> list[str]:
    return below_app_clock(rows) + block_clocks(rows)


def cells(row: pd.Series) -> dict[str, Any]:
    """The GPU state table's cells of the clock during the run."""
    below = _number(row, "gpu_below_app_clock_s")
    low, high = _number(row, "gpu_sm_clock_run_min_mhz"), _number(row, "gpu_sm_clock_run_max_mhz")
    return {"below app clock s": "" if below is None else f"{below:.3g}",
            "SM MHz during (min–max)": "" if low is None or high is None
            else f"{low:.0f}–{high:.0f}"}
