"""The report's section 2. First call across processes: table 2, the cold spread, priming runs, the
first call taken apart.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from orchestrator import vocabulary
from orchestrator.data import frame_records
from orchestrator.report import cache_report, checks, first_call_breakdown, plots, timing_tables
from orchestrator.report.cells import duration
from orchestrator.report.checks import Thresholds, above, quotient_text, target
from orchestrator.report.findings import Kind
from orchestrator.report.registry import CompareSection, Context, Section, SideTable, section


@section("first_call", number="2", select=lambda ctx: timing_tables.first_call_rows(ctx.fig),
         plot=("first_call.png", plots.draw_first_call),
         side_by_side=(SideTable("first_call", "First call across processes",
                                 lambda rows, d: timing_tables.first_call_table(rows),
                                 ("framework", "process")),),
         compare=CompareSection("first call", 2,
                                lambda row: vocabulary.is_first_call(row["method"])))
def _first_call(ctx: Context, rows: pd.DataFrame) -> Section:
    fig, th, data = ctx.fig, ctx.th, ctx.data
    # the spread only where a cold series was repeated; priming runs where there were any
    spread, priming = cache_report.cold_spread_table(rows), cache_report.priming_table(data)
    breakdown = first_call_breakdown.breakdown_table(fig)  # jax: only where it was printed
    return Section(
        "First call across processes",
        "The first matmul of each process: when the call returned and when a sync after it "
        "returned. For burn, process 1 starts from a cold autotune cache, process 2 finds it "
        "warm.", [timing_tables.first_call_table(rows),
                  *(t for t in (spread, priming, breakdown) if not t.frame.empty)],
        checks.odd_times(rows)
        + first_call_cost(fig[fig["device"] != "cpu"], th)
        + checks.load(rows, th, ctx.paused)
        + cache_report.unproven_warnings(rows) + cache_report.settings_warnings(data),
        rows=rows)


# ---- its checks -----------------------------------------------------------------------------


def first_call_cost(fig: pd.DataFrame, th: Thresholds) -> list[str]:
    """A first call far slower than a steady one paid for autotune or compilation."""
    steady = fig[(fig["method"] == "with_sync") & (fig["stat"] == "min")]
    # Only asynchronous devices: a CPU first call pays allocation and thread start-up, which is
    # no autotune and does not leak into the timed runs.
    firsts = fig[fig["method"] == "first_call_after_sync"]
    if firsts.empty:
        return []
    # each target's steady minima and each run's `first call returned` figures, read once: a
    # mask of all figures per first call was quadratic in the runs (bench figure 6)
    targets: dict[tuple[Any, ...], list[tuple[Any, Any, float]]] = {}
    for key, experiment, unit, value in zip(
            steady[["framework", "label", "shape"]].itertuples(index=False, name=None),
            steady["experiment"].tolist(), steady["unit"].tolist(), steady["value_s"].tolist(),
            strict=True):
        targets.setdefault(key, []).append((experiment, unit, value))
    returned = _returned(fig)
    out = []
    for row in frame_records.records(firsts):  # plain records: a pd.Series per row costs ~0.1 ms
        # the steady figure of the same run, else of the same experiment: never another
        # experiment's minimum (its reps, its process, its cache state are not this call's).
        # A captured log's "experiments" are its sections (the chapter's listings, one
        # program's output), so there the other listings' minimum stays the reference.
        ref = targets.get((row["framework"], row["label"], row["shape"]), [])
        if not str(row["unit"]).startswith("log:"):
            ref = [r for r in ref if r[0] == row["experiment"]]
        if any(r[1] == row["unit"] for r in ref):
            ref = [r for r in ref if r[1] == row["unit"]]
        values = [r[2] for r in ref if not pd.isna(r[2])]
        least = min(values) if values else float("nan")
        if not ref or not above(row["value_s"], least, th.first_run):
            continue
        out.append(_first_call_text(returned, row, float(least)))
    return out


Returned = dict[tuple[Any, Any], list[tuple[Any, float]]]  # (unit, label) -> (process, value)


def _returned(fig: pd.DataFrame) -> Returned:
    """Each run's `first call returned` figures by label, in order, with their process."""
    rows = fig[fig["method"] == "first_call_returned"]
    out: Returned = {}
    for unit, label, process, value in zip(rows["unit"].tolist(), rows["label"].tolist(),
                                           rows["process"].tolist(), rows["value_s"].tolist(),
                                           strict=True):
        out.setdefault((unit, label), []).append((process, value))
    return out


def _first_call_text(returned: Returned, row: dict[str, Any], steady: float) -> str:
    where = f" process {row['process']}" if pd.notna(row["process"]) else ""
    cache = f", {row['cache']} cache" if row["cache"] else ""
    text = (f"{target(row)}{where}{cache}: {duration(row['value_s'])} is "
            f"{quotient_text(row['value_s'], steady, 0)}× the with-sync min {duration(steady)}")
    # One process has one first call per device: the returned figure of the same run (a
    # missing process matches any, as `==` filled with NA's own answer did)
    found = [value for process, value in returned.get((row["unit"], row["label"]), [])
             if pd.isna(row["process"]) or (pd.notna(process) and process == row["process"])]
    if found:
        back = float(found[0])
        paid = "inside the call" if back > row["value_s"] / 2 else "at the sync"
        text += f"; the call returned after {duration(back)}, so the cost was paid {paid}"
    return Kind.FIRST_CALL.says(
        text + ". A timing that includes a first call measures setup, not the matmul.")
