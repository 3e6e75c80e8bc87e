"""The report's section 2. First call across processes: table 2, the cold spread, priming runs, the
first call taken apart.
"""

from __future__ import annotations

import pandas as pd

from orchestrator import vocabulary
from orchestrator.report import (
    cache_report,
    checks,
    first_call_breakdown,
    plots,
    timing_tables,
)
from orchestrator.report.registry import (
    CompareSection,
    Context,
    Section,
    SideTable,
    section,
)


@section("first_call", lambda ctx: timing_tables.first_call_rows(ctx.fig),
         plot=("first_call.png", plots.draw_first_call),
         side_by_side=(SideTable("first_call", "2. First call across processes",
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
        "2. First call across processes",
        "The first matmul of each process: when the call returned and when a sync after it "
        "returned. For burn, process 1 starts from a cold autotune cache, process 2 finds it "
        "warm.", [timing_tables.first_call_table(rows),
                  *(t for t in (spread, priming, breakdown) if not t.frame.empty)],
        checks.odd_times(rows)
        + checks.first_call_cost(fig[fig["device"] != "cpu"], th)
        + checks.load(rows, th, ctx.paused)
        + cache_report.unproven_warnings(rows) + cache_report.settings_warnings(data),
        rows=rows)
