"""Measurement warnings that several sections share: figures that cannot mean what their label
says (impossible times), a wide spread, runs under load; the thresholds; the pieces every
section's checks use (a target in words, a quotient, a figure of a run).

Each check reads the prepared figures (tables.prepare) and returns one Markdown line per
finding, naming the figure, the numbers that gave it away and why it matters. The report puts
them under the table they concern. Thresholds are parameters (`Thresholds`), never hidden. A
check of one section lives in that section's module (report/sections/).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from orchestrator import vocabulary
from orchestrator.report.findings import Kind
from orchestrator.report.names import column_name, cpu_build_name, threads_column
from orchestrator.report.spread import iqr, ratio
from orchestrator.report.tables import duration, group_positions, split

SampleSets = dict[str, np.ndarray]
UNKNOWN_CORES_LOAD = 4.0  # the load threshold where the data does not say how many cores ran it


@dataclass(frozen=True)
class Thresholds:
    """When a figure earns a warning."""

    # 1-minute load above which a run counts as taken under load: `load1` if given, else
    # `load_per_core` × the cores the runs could use (`cores`, from the host facts: `for_host`)
    load1: float | None = None
    load_per_core: float = 0.5
    cores: int | None = None
    spread: float = 1.5  # median / min above this is a wide spread
    call_overhead: float = 0.2  # no-sync min below this fraction of with-sync min: not the work
    cpu_sync: float = 0.05  # relative difference allowed between CPU no sync and with sync
    first_run: float = 10.0  # first run / steady run above this swallowed autotune or compile
    thread_gain: float = 1.2  # more threads giving less than this speed-up: threads don't reach
    accuracy: float = 1e-4  # max|x - f64 ref| / max |ref| above this is more than rounding

    def for_host(self, host: dict[str, Any] | None) -> Thresholds:
        """These thresholds with the core count of the machine the data came from."""
        cores = (host or {}).get("cores_usable") or (host or {}).get("cores_logical")
        return replace(self, cores=int(cores)) if cores and self.cores is None else self

    @property
    def load_limit(self) -> float:
        if self.load1 is not None:
            return self.load1
        return self.load_per_core * self.cores if self.cores else UNKNOWN_CORES_LOAD

    def load_words(self) -> str:
        """'1 (0.5 × 2 cores)': the load threshold and where it comes from."""
        if self.load1 is None and self.cores:
            return f"{self.load_limit:g} ({self.load_per_core:g} × {self.cores} cores)"
        return f"{self.load_limit:g}" + ("" if self.load1 is not None else " (cores unknown)")


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


def stat_value(rows: pd.DataFrame, method: str, stat: str) -> float | None:
    """The first figure of `method` and `stat` among the rows, None where there is none."""
    found = rows[(rows["method"] == method) & (rows["stat"] == stat)]
    return float(found["value_s"].iloc[0]) if not found.empty else None


def per_run(rows: pd.DataFrame) -> list[tuple[pd.DataFrame, pd.Series]]:
    """The rows of each program run and device (and shape), with a representative row."""
    keys = ["unit", "framework", "label", "shape", "threads_key"]
    # one pass (a missing thread count is a key of its own); a mask per run was quadratic
    return [(mine, mine.iloc[0]) for mine in split(rows, keys).values()]


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
    for _, row in rows[rows["stat"] == "min"].iterrows():
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
    for mine, row in per_run(rows):
        before, after = mine["load1_before"].max(), mine["load1_after"].max()
        worst = max(v for v in (before, after, -1.0) if pd.notna(v))
        if worst <= th.load_limit:
            continue
        where = f" ({row['experiment']})" if row["experiment"] else ""
        stopped = sorted({b for rid in mine["run_id"].unique()
                          for b in (paused or {}).get(str(rid), [])})
        own = (f"; the sweep's own builds ({', '.join(stopped)}) were paused while it ran, "
               "but the 1-minute average still counts them") if stopped else ""
        out.append(Kind.UNDER_LOAD.says(f"{target(row)}{where} ran at a 1-minute load of "
                   f"{_num(before)} before and {_num(after)} after (threshold "
                   f"{th.load_words()}){own}; minima hold up better than medians."))
    return out


def paused_builds(runs: pd.DataFrame) -> dict[str, list[str]]:
    """Run id -> the background builds paused while it was measured (the run's gate record,
    `builds_paused`); runs of older stores or without builds are left out."""
    out: dict[str, list[str]] = {}
    if "gate" not in runs:
        return out
    for rid, gate in zip(runs["run_id"], runs["gate"], strict=True):
        try:
            names = (json.loads(gate) if isinstance(gate, str) else None) or {}
        except ValueError:
            continue
        found = names.get("builds_paused") if isinstance(names, dict) else None
        if isinstance(found, list) and found:
            out[str(rid)] = [str(b) for b in found]
    return out


def _num(value: float) -> str:
    return "?" if pd.isna(value) else f"{float(value):.2f}"


# ---- CPU ------------------------------------------------------------------------------------


def cpu_target(row: pd.Series) -> str:
    threads = f" at {threads_column(int(row['threads_key']))}" if pd.notna(row["threads_key"]) \
        else ""
    return cpu_build_name(row["framework"], row["label"]) + threads
