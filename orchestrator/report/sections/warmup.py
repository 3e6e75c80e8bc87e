"""The report's section 5. The warm-up puzzle."""

from __future__ import annotations

import pandas as pd

from orchestrator.report import (
    cache_report,
    checks,
    plots,
    timing_tables,
)
from orchestrator.report.registry import (
    CompareSection,
    Context,
    Section,
    SideTable,
    method_section,
    section,
)


@section("warmup", lambda ctx: timing_tables.warmup_rows(ctx.fig),
         plot=("warmup.png", plots.draw_warmup),
         side_by_side=(SideTable("warmup", "5. The warm-up puzzle",
                                 lambda rows, d: timing_tables.warmup_table(rows),
                                 ("cache", "warm-up")),),
         compare=CompareSection("warm-up", 4, method_section("warm-up")))
def _warmup(ctx: Context, rows: pd.DataFrame) -> Section:
    th = ctx.th
    return Section(
        "5. The warm-up puzzle",
        "burn: one warm-up without sync (result dropped, or kept alive unread), then timed "
        "runs that each end with a sync, on a cold and on a warm autotune cache.",
        [timing_tables.warmup_table(rows)],
        checks.odd_times(rows)
        + checks.warmup_first_run(rows, th) + checks.load(rows, th, ctx.paused)
        + cache_report.unproven_warnings(rows), rows=rows)
