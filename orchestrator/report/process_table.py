"""Beyond the chapter: every time figure over its processes, median [95% interval].

The process is the unit of replication (stats/intervals.py): a figure of a target is the
geometric mean of its processes' medians (or single figures: a first call, a device init), its
interval from the processes: a t interval on their logs with p-1 degrees of freedom, a
two-level bootstrap from 10 processes with raw samples, none from one process (said so). A
store's processes are pooled over every run of the experiment that measured the same thing,
its cold repeats included; the cache label tells a cold first process from the warm ones. A
captured log records no cache, so there each process number is a figure of its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from orchestrator import vocabulary
from orchestrator.data import frame_records, identity
from orchestrator.report.cells import duration
from orchestrator.report.names import run_name
from orchestrator.report.tables import Table, empty, group_positions
from orchestrator.stats import intervals, power

SampleSets = dict[str, np.ndarray]
# a profiler's kernel time is a figure of its own: ncu with L2 warm and with L2 flushed (or
# CUPTI) measure different things, pooled they made one "6 processes" figure of two
# (the identity's host, sweep and variant first: data/identity.py, never pooled)
FIGURE = [*identity.APART, "experiment", "framework", "label", "device", "shape", "threads_key",
          "cache", "warmup", "iteration", "method", "profiler", "precision"]
TITLE = "Every time figure over its processes: median [95% interval], processes × reps"


def pooled(fig: pd.DataFrame, sets: SampleSets) -> list[dict[str, Any]]:
    """One record per figure: its identity, the `intervals.Estimate`, and a first row."""
    # every time of the matmul but the warm-up puzzle's timed runs (section 5 has those)
    methods = [m.key for m in vocabulary.methods() if m.time and m.section != "warm-up"]
    rows = fig[fig["method"].isin(methods) & fig["stat"].isin(["median", "value"])]
    rows = rows[rows["value_s"].notna()]
    if rows.empty:
        return []
    keys = [k for k in FIGURE if k in rows]
    if (rows["section"] != "").any():  # a captured log: no cache label, the process tells
        keys.append("process")
    # grouped once on the few columns the estimate needs, then plain lists per figure: a
    # DataFrame per figure (drop_duplicates, iloc) cost ~3 ms each (bench figure 6)
    cols = {c: rows[c].tolist() for c in ("unit", "process", "sample_key", "value_s", "runs")}
    stats = rows["stat"].tolist()
    found_rows: list[tuple[int, intervals.Estimate, list[str], int]] = []
    for positions in group_positions(rows, keys).values():
        seen: set[tuple[Any, Any]] = set()  # one value per process, the first kept
        units = []
        for i in positions:
            key = (cols["unit"][i], _hashable(cols["process"][i]))
            if key not in seen:
                seen.add(key)
                units.append(i)
        sample_keys = [cols["sample_key"][i] for i in units]
        samples = [sets.get(k) if isinstance(k, str) else None for k in sample_keys]
        found = intervals.estimate([float(cols["value_s"][i]) for i in units], samples)
        if found is None:
            continue
        reps = found.reps
        if not reps:
            runs = _max_runs([cols["runs"][i] for i in units]) \
                if stats[positions[0]] == "median" else 1
            reps = int(runs) if runs is not None else 1
        found_rows.append((units[0], found, [k for k in sample_keys if isinstance(k, str)],
                           reps))
    # each figure's first row, of the columns that name it (FIGURE, run_name's): all 75 made
    # records of 41,000 figures at 5000 runs cost 2 s
    named = [c for c in (*FIGURE, "process", "run_id") if c in rows]
    firsts = frame_records.records(rows[named].iloc[[f[0] for f in found_rows]])
    return [{"row": row, "estimate": e, "keys": k, "reps": r}
            for row, (_, e, k, r) in zip(firsts, found_rows, strict=True)]


def _hashable(value: Any) -> Any:
    """pd.NA as None: drop_duplicates took every missing process for one."""
    return None if value is None or value is pd.NA or (isinstance(value, float)
                                                        and np.isnan(value)) else value


def _max_runs(values: list[Any]) -> float | None:
    """The largest `runs` of a figure's processes (an Int64 column: ints or pd.NA)."""
    numbers = [float(v) for v in values if _hashable(v) is not None]
    return max(numbers) if numbers else None


def figures_table(fig: pd.DataFrame, sets: SampleSets) -> Table:
    figures = pooled(fig, sets)
    if not figures:
        return empty("figures", TITLE, "no time figures")
    records = []
    for item in figures:
        row, e = item["row"], item["estimate"]
        interval = "" if e.lo is None else \
            f" [{duration(e.lo)} – {duration(e.hi)}] (±{100 * (e.half_width or 0):.1f}%)"
        records.append({
            "experiment": row["experiment"], "run": run_name(row, context=True),
            "method": vocabulary.figure_words(row["method"], row.get("profiler")),
            "median [95% interval]": duration(e.value) + interval,
            "processes × reps": f"{e.processes} × {item['reps']}", "interval": e.method,
        })
    frame = pd.DataFrame(records)
    if (fig["section"] != "").any():  # a captured log: its sections are no experiments
        frame = frame.drop(columns="experiment")
    return Table("figures", TITLE, frame, notes=[
        "median: the geometric mean of the process medians; interval: from the processes "
        "(t on log process values with p-1 df; a two-level bootstrap from "
        f"{intervals.BOOTSTRAP_MIN_PROCESSES} processes with raw samples), never from one "
        "process's samples, which know nothing of the spread between processes."])


def processes_of(fig: pd.DataFrame, sets: SampleSets) -> dict[str, intervals.Estimate]:
    """sample key -> the estimate of the figure its summary line belongs to (2+ processes)."""
    out: dict[str, intervals.Estimate] = {}
    for item in pooled(fig, sets):
        e = item["estimate"]
        if e.processes < 2:
            continue
        out.update(dict.fromkeys(item["keys"], e))
    return out


def missed_targets(fig: pd.DataFrame) -> list[str]:
    """One line per figure of a stopping target that stopped without reaching it (the
    store's stops: run/stopping.py), with the reason and the half-width it reached."""
    if "stop_reason" not in fig:
        return []
    rows = fig[(fig["stop_reason"].astype(object).where(fig["stop_reason"].notna(), "")
                .astype(str) != "")
               & ~fig["stop_reason"].isin(["target met", "decided"]) & (fig["stat"] == "median")]
    lines = []
    keys = [k for k in FIGURE if k in rows]
    for _, part in rows.groupby(keys, sort=False, dropna=False):
        row = part.iloc[0]
        reached = f"±{100 * float(row['half_width']):.1f}%" if row["half_width"] else \
            "no interval"
        count = part["run_id"].nunique()
        more = power.processes_for(float(row["half_width"] or 0), count,
                                   float(row["stop_target"]))
        need = "" if more is None else ": over 1000 processes would reach it" \
            if more > power.MOST else f": ~{more} processes would reach it at that spread"
        # printed as the committed reports print it (the stopping target's YAML key's words)
        lines.append(f"Precision target missed: {row['experiment']} {run_name(row, context=True)}"
                     f" {vocabulary.figure_words(row['method'], row.get('profiler'))}: "
                     f"{reached} at "
                     f"{count} process{'es' if count != 1 else ''}, target "
                     f"±{100 * float(row['stop_target']):g}% ({row['stop_reason']}){need}")
    return lines
