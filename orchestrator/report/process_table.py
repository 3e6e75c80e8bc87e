"""Beyond the chapter: every time figure over its processes, median [95% interval].

The process is the unit of replication (report/intervals.py): a figure of a target is the
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
from orchestrator.report import intervals
from orchestrator.report.names import run_name
from orchestrator.report.tables import Table, duration, empty

SampleSets = dict[str, np.ndarray]
FIGURE = ["experiment", "framework", "label", "device", "shape", "threads_key", "cache",
          "warmup", "iteration", "method", "precision"]
TITLE = "Every time figure over its processes: median [95% interval], processes × reps"


def pooled(fig: pd.DataFrame, sets: SampleSets) -> list[dict[str, Any]]:
    """One record per figure: its identity, the `intervals.Estimate`, and a first row."""
    # every time of the matmul but the warm-up puzzle's timed runs (section 5 has those)
    methods = [m.key for m in vocabulary.METHODS if m.time and m.section != "warm-up"]
    rows = fig[fig["method"].isin(methods) & fig["stat"].isin(["median", "value"])]
    rows = rows[rows["value_s"].notna()]
    if rows.empty:
        return []
    keys = [k for k in FIGURE if k in rows]
    if (rows["section"] != "").any():  # a captured log: no cache label, the process tells
        keys.append("process")
    out = []
    for _, part in rows.groupby(keys, sort=False, dropna=False):
        units = part.drop_duplicates(["unit", "process"])  # one value per process
        samples = [sets.get(k) if isinstance(k, str) else None for k in units["sample_key"]]
        found = intervals.estimate(units["value_s"].astype(float).tolist(), samples)
        if found is not None:
            runs = pd.to_numeric(units["runs"], errors="coerce").max() \
                if part["stat"].iloc[0] == "median" else 1
            out.append({"row": units.iloc[0], "estimate": found,
                        "keys": [k for k in units["sample_key"] if isinstance(k, str)],
                        "reps": found.reps or (int(runs) if pd.notna(runs) else 1)})
    return out


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
            "method": vocabulary.words(row["method"]),
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
    """One line per figure of a precision target that stopped without reaching it (the
    store's stops: run/stopping.py), with the reason and the half-width it reached."""
    if "stop_reason" not in fig:
        return []
    rows = fig[(fig["stop_reason"].astype(object).where(fig["stop_reason"].notna(), "")
                .astype(str) != "")
               & (fig["stop_reason"] != "target met") & (fig["stat"] == "median")]
    lines = []
    keys = [k for k in FIGURE if k in rows]
    for _, part in rows.groupby(keys, sort=False, dropna=False):
        row = part.iloc[0]
        reached = f"±{100 * float(row['half_width']):.1f}%" if row["half_width"] else \
            "no interval"
        lines.append(f"Precision target missed: {row['experiment']} {run_name(row, context=True)}"
                     f" {vocabulary.words(row['method'])}: {reached} at "
                     f"{part['run_id'].nunique()} processes, target "
                     f"±{100 * float(row['stop_target']):g}% ({row['stop_reason']})")
    return lines
