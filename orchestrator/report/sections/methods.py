"""The report's section 1. Timing methods on the accelerator: table 1, the energy table, and what
to mind about them.
"""

from __future__ import annotations

import pandas as pd

from orchestrator.report import (
    checks,
    energy,
    env_checks,
    plots,
    state_checks,
    timing_tables,
)
from orchestrator.report.registry import (
    CompareSection,
    Context,
    Section,
    SideTable,
    section,
)


@section("methods", lambda ctx: timing_tables.methods_rows(ctx.fig),
         plot=("methods.png", plots.draw_methods),
         side_by_side=(SideTable("methods", "1. Timing methods on the accelerator",
                                 lambda rows, d: timing_tables.methods_table(rows),
                                 ("method",)),),
         compare=CompareSection("methods", 1, lambda row: True))
def _methods(ctx: Context, rows: pd.DataFrame) -> Section:
    fig, sets, th = ctx.fig, ctx.sets, ctx.th
    return Section(
        "1. Timing methods on the accelerator",
        "Each method timed the same matmul in one process (first call excluded): min and "
        "median of the timed runs, and the 1-minute load average around the runs.",
        [timing_tables.methods_table(rows), energy.energy_table(fig)],
        checks.unknown_methods(fig) + env_checks.environment(fig) + env_checks.queued_proof(fig)
        + checks.odd_times(rows)
        + checks.call_overhead(rows, th) + checks.no_time(rows) + checks.short_window(rows, th)
        + checks.spread(rows, sets, th)
        + checks.load(rows, th, ctx.paused) + state_checks.gpu_warnings(rows), rows=rows)
