"""The report's section 5. The warm-up puzzle."""

from __future__ import annotations

import pandas as pd

from orchestrator.report import cache_report, checks, plots, timing_tables
from orchestrator.report.cells import duration
from orchestrator.report.checks import Thresholds, above, quotient_text
from orchestrator.report.findings import Kind
from orchestrator.report.registry import (
    CompareSection,
    Context,
    Section,
    SideTable,
    method_section,
    section,
)
from orchestrator.report.tables import ordered


@section("warmup", number="5", select=lambda ctx: timing_tables.warmup_rows(ctx.fig),
         plot=("warmup.png", plots.draw_warmup),
         side_by_side=(SideTable("warmup", "The warm-up puzzle",
                                 lambda rows, d: timing_tables.warmup_table(rows),
                                 ("cache", "warm-up")),),
         compare=CompareSection("warm-up", 4, method_section("warm-up")))
def _warmup(ctx: Context, rows: pd.DataFrame) -> Section:
    th = ctx.th
    return Section(
        "The warm-up puzzle",
        "burn: one warm-up without sync (result dropped, or kept alive unread), then timed "
        "runs that each end with a sync, on a cold and on a warm autotune cache.",
        [timing_tables.warmup_table(rows)],
        checks.odd_times(rows)
        + warmup_first_run(rows, th) + checks.load(rows, th, ctx.paused)
        + cache_report.unproven_warnings(rows), rows=rows)


# ---- its checks -----------------------------------------------------------------------------


def warmup_first_run(rows: pd.DataFrame, th: Thresholds) -> list[str]:
    """Timed run 0 far above run 1: the warm-up did not do the work it was meant to."""
    out = []
    for unit, label, cache, warmup in ordered(rows, ["unit", "label", "cache", "warmup"]):
        mine = rows[(rows["unit"] == unit) & (rows["label"] == label) &
                    (rows["cache"] == cache) & (rows["warmup"] == warmup)]
        by_run = dict(zip(mine["iteration"], mine["value_s"], strict=True))
        first, second = by_run.get(0), by_run.get(1)
        if not above(first, second, th.first_run):
            continue
        name = f"{label}, " if label else ""
        times = quotient_text(first, second, 0)
        out.append(Kind.SWALLOWED_SETUP.says(f"{name}{cache or '?'} cache, warm-up "
                   f"{warmup or '?'}: run 0 took {duration(first)}, {times}× run 1 "
                   f"({duration(second)}); the warm-up without sync left autotune/compilation "
                   "to the first timed run."))
    return out
