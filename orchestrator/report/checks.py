"""Measurement warnings that several sections share: figures that cannot mean what their label
says (impossible times), a wide spread, runs under load; the thresholds; the pieces every
section's checks use (a target in words, a quotient, a figure of a run).

Each check reads the prepared figures (tables.prepare) and returns one Markdown line per
finding, naming the figure, the numbers that gave it away and why it matters. The report puts
them under the table they concern. Thresholds are parameters (`Thresholds`), never hidden. A
check of one section lives in that section's module (report/sections/).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from orchestrator import vocabulary
from orchestrator.data import frame_records
from orchestrator.report.cells import duration
from orchestrator.report.findings import Kind
from orchestrator.report.names import column_name, cpu_build_name, threads_column
from orchestrator.report.section import Thresholds  # re-exported
from orchestrator.report.tables import group_positions
from orchestrator.stats.spread import iqr, ratio

SampleSets = dict[str, np.ndarray]
def below(a: float | None, b: float | None, limit: float) -> bool:
    """a / b < limit, for a ratio that means something (spread.ratio)."""
    quotient = ratio(a, b)
    return quotient is not None and quotient < limit


def above(a: float | None, b: float | None, limit: float) -> bool:
    """a / b > limit, for a ratio that means something."""
    quotient = ratio(a, b)
    return quotient is not None and quotient > limit


def percent(a: float, b: float) -> str:
    """a as a share of b: '42%', '0.5%', '?%' where there is no ratio."""
    quotient = ratio(a, b)
    if quotient is None:
        return "?%"
    share = 100 * quotient
    return f"{share:.2g}%" if share < 1 else f"{share:.0f}%"


def quotient_text(a: float, b: float, digits: int = 2) -> str:
    """a / b as '2.34' ('?' where there is no ratio)."""
    quotient = ratio(a, b)
    return "?" if quotient is None else f"{quotient:.{digits}f}"


def target(row: pd.Series) -> str:
    """The figure's target in words: a CPU build at its threads, else framework and label."""
    if row["device"] == "cpu":
        return cpu_target(row)
    return column_name(row["framework"], row["label"])


class Run(NamedTuple):
    """One program run's rows of one device (and shape) as the checks read them, in one
    pass: its first row, each (method, stat)'s first value, the loads around it, its run
    ids. A frame per run and a mask per figure asked were a 5000-run report's seconds."""

    row: dict[str, Any]  # the first row: what the warning names
    stats: dict[tuple[Any, Any], Any]
    load_before: float  # the highest, NaN where none was recorded
    load_after: float
    run_ids: list[Any]

    def stat(self, method: str, stat: str) -> float | None:
        """The first figure of `method` and `stat` among the run's rows, None where none."""
        found = self.stats.get((method, stat), _NONE)
        return None if found is _NONE else float(found)


_NONE = object()
_RUN_KEYS = ["unit", "framework", "label", "shape", "threads_key"]
# what the checks over runs read of a row (target, cpu_target, load's experiment)
_RUN_FIELDS = ["device", "experiment", "method", "stat", "value_s", "load1_before",
               "load1_after", "run_id"]


def per_run(rows: pd.DataFrame) -> list[Run]:
    """Each program run and device (and shape): its rows read once, column by column (a
    missing thread count is a key of its own, as in `split`)."""
    if rows.empty:
        return []
    fields = [*_RUN_KEYS, *(c for c in _RUN_FIELDS if c not in _RUN_KEYS)]
    cols = {c: rows[c].tolist() for c in fields}  # no dict per row
    method, stat, value, run_id = (cols[c] for c in ("method", "stat", "value_s", "run_id"))
    out = []
    for positions in group_positions(rows, _RUN_KEYS).values():
        stats: dict[tuple[Any, Any], Any] = {}
        for i in positions:
            stats.setdefault((method[i], stat[i]), value[i])
        before, after = (max((float(cols[c][i]) for i in positions if pd.notna(cols[c][i])),
                             default=math.nan) for c in ("load1_before", "load1_after"))
        first = {c: cols[c][positions[0]] for c in fields}
        out.append(Run(first, stats, before, after,
                       list(dict.fromkeys(run_id[i] for i in positions))))
    return out


# ---- figures no timing can mean -------------------------------------------------------------

# a printed time past a day is no measurement: the programs time milliseconds to minutes, a
# run's timeout is far below it; such a figure is a damaged, edited or overflowed line
MAX_PLAUSIBLE_S = 86_400.0
_ABSURD = "longer than a day, no timing a run can take (a damaged or edited line?)"


def odd_times(rows: pd.DataFrame) -> list[str]:
    """Times the line contract allows but no measurement can mean: zero (`0.000ns`: below the
    clock's resolution, or a timer that did not run), not finite or negative (a store from
    before the parser refused them), longer than a day (`first call: 1e+20 s`), a median
    below its own minimum. They stay in the tables as
    printed; a ratio against one of them is left out ('?'), never divided by zero."""
    timed = rows[rows["stat"].isin(vocabulary.time_stats())] if not rows.empty else rows
    out: list[str] = []
    if timed.empty:
        return out
    # plain lists and row positions, one pass per grouping: a DataFrame per printed figure
    # (groupby's iteration) cost ~0.3 ms each, 3.7 s of a 500-run report (bench figure 6)
    numbers = pd.to_numeric(timed["value_s"], errors="coerce").tolist()
    stat_of = timed["stat"].tolist()
    for positions in group_positions(timed, ["unit", "line_no", "label", "method",
                                             "stat"]).values():
        value = numbers[positions[0]]
        what = ("not a finite time" if pd.isna(value) or not np.isfinite(value) else
                "a negative time" if value < 0 else "a zero time" if value == 0 else
                _ABSURD if value > MAX_PLAUSIBLE_S else "")
        if what:
            row = timed.iloc[positions[0]]
            out.append(Kind.IMPOSSIBLE_TIME.says(f"{_figure(row)} {row['stat']} is "
                       f"{duration(value) or value}, {what}: shown as printed, no ratio "
                       "against it."))
    for positions in group_positions(timed, ["unit", "line_no", "label", "method"]).values():
        stats = {stat_of[i]: numbers[i] for i in positions}
        low, mid = stats.get("min"), stats.get("median")
        if low is not None and mid is not None and mid < low:
            out.append(Kind.MEDIAN_BELOW_MIN.says(
                f"{_figure(timed.iloc[positions[0]])}: median {duration(mid)} < min "
                f"{duration(low)}; no program computes that, so the line was edited or the "
                "program is broken."))
    return out


def _figure(row: pd.Series) -> str:
    """'torch cpu at 1 thread with sync (line 3)': one printed figure."""
    method = vocabulary.words(row["method"])
    line = f" (line {int(row['line_no'])})" if pd.notna(row.get("line_no")) else ""
    return f"{target(row)} {method}{line}"


# ---- timing methods -------------------------------------------------------------------------


def spread(rows: pd.DataFrame, sets: SampleSets, th: Thresholds) -> list[str]:
    """A median far above the minimum: the runs disagree, so the median is not one number."""
    out = []
    keys = ["unit", "label", "method", "sample_key"]
    medians = rows[rows["stat"] == "median"]
    first: dict[tuple[Any, ...], float] = {}  # each min's median, found once, not by a mask
    for key, value in zip(medians[keys].itertuples(index=False, name=None),
                          medians["value_s"].tolist(), strict=True):
        first.setdefault(key, value)
    mins = rows[rows["stat"] == "min"]
    fields = [*keys, *(c for c in ("value_s", "device", "framework", "label", "threads_key")
                       if c in mins and c not in keys)]
    for row in frame_records.records(mins[fields]):
        key = tuple(row[k] for k in keys)
        if any(pd.isna(v) for v in key):  # a missing field equals nothing, as `==` had it
            continue
        found = first.get(key)
        if found is None or not above(found, row["value_s"], th.spread):
            continue
        med = float(found)
        text = (f"{target(row)} {vocabulary.words(row['method'])}"
                f": median {duration(med)} is {quotient_text(med, row['value_s'])}× the min "
                f"{duration(row['value_s'])}")
        values = sets.get(row["sample_key"])
        if values is not None and len(values) > 1:
            spread_iqr = iqr(values)
            text += f"; IQR {duration(spread_iqr)} ({percent(spread_iqr, med)} of the median)"
        out.append(Kind.WIDE_SPREAD.says(text + "."))
    return out


def load(rows: pd.DataFrame, th: Thresholds,
         paused: Mapping[str, list[str]] | None = None) -> list[str]:
    """Runs taken while other work shared the machine: their medians say more about it.
    `paused` (run id -> builds, `paused_builds`): the sweep's own background builds, stopped
    while that run was measured, which the 1-minute average still counts for a while."""
    out = []
    for run in per_run(rows):
        row, before, after = run.row, run.load_before, run.load_after
        worst = max(v for v in (before, after, -1.0) if pd.notna(v))
        if worst <= th.load_limit:
            continue
        where = f" ({row['experiment']})" if row["experiment"] else ""
        stopped = sorted({b for rid in run.run_ids for b in (paused or {}).get(str(rid), [])})
        own = (f"; the sweep's own builds ({', '.join(stopped)}) were paused while it ran, "
               "but the 1-minute average still counts them") if stopped else ""
        out.append(Kind.UNDER_LOAD.says(f"{target(row)}{where} ran at a 1-minute load of "
                   f"{_num(before)} before and {_num(after)} after (threshold "
                   f"{th.load_words()}){own}; minima hold up better than medians."))
    return out


def _num(value: float) -> str:
    return "?" if pd.isna(value) else f"{float(value):.2f}"


# ---- CPU ------------------------------------------------------------------------------------


def cpu_target(row: pd.Series) -> str:
    threads = f" at {threads_column(int(row['threads_key']))}" if pd.notna(row["threads_key"]) \
        else ""
    return cpu_build_name(row["framework"], row["label"]) + threads
