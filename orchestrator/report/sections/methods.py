"""The report's section 1. Timing methods on the accelerator: table 1, the energy table, and what
to mind about them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from orchestrator import vocabulary
from orchestrator.report import checks, energy, env_checks, plots, state_checks, timing_tables
from orchestrator.report.cells import duration
from orchestrator.report.checks import Thresholds, below, per_run, percent, target
from orchestrator.report.findings import Kind
from orchestrator.report.registry import CompareSection, Context, Section, SideTable, section


@section("methods", number="1", select=lambda ctx: timing_tables.methods_rows(ctx.fig),
         plot=("methods.png", plots.draw_methods),
         side_by_side=(SideTable("methods", "Timing methods on the accelerator",
                                 lambda rows, d: timing_tables.methods_table(rows),
                                 ("method",)),),
         compare=CompareSection("methods", 1, lambda row: True))
def _methods(ctx: Context, rows: pd.DataFrame) -> Section:
    fig, sets, th = ctx.fig, ctx.sets, ctx.th
    return Section(
        "Timing methods on the accelerator",
        "Each method timed the same matmul in one process (first call excluded): min and "
        "median of the timed runs, and the 1-minute load average around the runs.",
        [timing_tables.methods_table(rows), energy.energy_table(fig)],
        unknown_methods(fig) + env_checks.environment(fig) + env_checks.queued_proof(fig)
        + checks.odd_times(rows)
        + call_overhead(rows, th) + no_time(rows) + short_window(rows, th)
        + checks.spread(rows, sets, th)
        + checks.load(rows, th, ctx.paused) + state_checks.gpu_warnings(rows), rows=rows)


# ---- its checks -----------------------------------------------------------------------------


def unknown_methods(fig: pd.DataFrame) -> list[str]:
    """Figures of a method the measurement vocabulary lacks (a program's new line, a store
    from a newer orchestrator): no table shows them, so the report counts them here rather
    than letting them vanish from table 1."""
    if fig.empty:
        return []
    rows = fig[(fig["method"] != "") & ~fig["method"].isin([m.key for m in vocabulary.methods()])]
    out = []
    for method, mine in rows.groupby("method", sort=False):
        count = len(mine)
        who = ", ".join(sorted(set(map(str, mine["framework"]))))
        out.append(Kind.UNKNOWN_METHOD.says(f"{count} figure{'s' * (count != 1)} of "
                   f"method `{method}` ({who}) {'is' if count == 1 else 'are'} in no table: "
                   "orchestrator/vocabulary.py has no entry for it."))
    return out


def call_overhead(rows: pd.DataFrame, th: Thresholds) -> list[str]:
    """On an asynchronous device a clock read without sync measures issuing the work."""
    out = []
    for run in per_run(rows[rows["device"] != "cpu"]):
        row = run.row
        no_sync, synced = run.stat("no_sync", "min"), run.stat("with_sync", "min")
        if not below(no_sync, synced, th.call_overhead):
            continue
        out.append(Kind.CALL_OVERHEAD.says(f"{target(row)} no sync (min {duration(no_sync)}) is "
                   f"{percent(no_sync, synced)} of with sync (min {duration(synced)}): the clock "
                   "was read before the device finished, so it timed issuing the work, not "
                   "the matmul."))
    return out


def no_time(rows: pd.DataFrame) -> list[str]:
    """A profile window that closed before the queued work ran read no time at all."""
    out = []
    counts = rows[(rows["stat"] == "no_time_count") & (rows["value_s"] > 0)
                  & (rows["value_s"] < np.inf)]
    for _, row in counts.iterrows():
        of = f" of {int(row['runs'])}" if pd.notna(row["runs"]) else ""
        out.append(Kind.PROFILE_NO_TIME.says(f"{target(row)} {vocabulary.words(row['method'])}: "
                   f"{int(row['value_s'])}{of} runs read as no time; the work was still "
                   "queued when the profile window closed (use ProfileOptions flush)."))
    return out


def short_window(rows: pd.DataFrame, th: Thresholds) -> list[str]:
    """A profile without flush that did read a time, but far less than the flushed one: the
    window closed on the enqueue, not on the matmul (seen on CUDA: 1.2 µs against 90 µs)."""
    out = []
    for run in per_run(rows[rows["device"] != "cpu"]):
        row = run.row
        unflushed = run.stat("device_time_no_flush", "min")
        flushed = run.stat("device_time", "min")
        if not below(unflushed, flushed, th.call_overhead):
            continue
        out.append(Kind.PROFILE_WINDOW.says(f"{target(row)} device time without flush "
                   f"(min {duration(unflushed)}) is {percent(unflushed, flushed)} of device time "
                   f"with flush (min {duration(flushed)}): the window closed before the queued "
                   "matmul ran, so it timed the enqueue (use ProfileOptions flush)."))
    return out
