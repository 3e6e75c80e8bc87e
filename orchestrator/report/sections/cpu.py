"""The report's section 3. CPU builds and threads: table 3 and the CPU builds' first calls."""

from __future__ import annotations

import pandas as pd

from orchestrator import vocabulary
from orchestrator.report import (
    checks,
    plots,
    state_checks,
    tables,
    timing_tables,
)
from orchestrator.report.registry import (
    CompareSection,
    Context,
    Section,
    SideTable,
    section,
)


@section("cpu", lambda ctx: timing_tables.cpu_figures(ctx.fig),
         plot=("cpu_threads.png", plots.draw_cpu),
         side_by_side=(SideTable("cpu_threads", "3. CPU builds and threads (min, with sync)",
                                 lambda cpu, d: timing_tables.cpu_table(cpu, d.host),
                                 ("build",)),
                       SideTable("cpu_first_call", "3. CPU builds: first call",
                                 lambda cpu, d: timing_tables.cpu_first_call_table(cpu),
                                 ("build",))),
         compare=CompareSection("CPU", 3, lambda row: row["device"] == "cpu"))
def _cpu(ctx: Context, cpu: pd.DataFrame) -> Section:
    fig, sets, host, th = ctx.fig, ctx.sets, ctx.data.host, ctx.th
    rows = cpu[cpu["method"].isin(vocabulary.method_keys(table1=True))]
    return Section(
        "3. CPU builds and threads",
        "Minimum time of `with sync` (else `no sync`) per build and thread count; the BLAS "
        "PyTorch's build uses, when the host facts recorded it.",
        [timing_tables.cpu_table(cpu, host), timing_tables.cpu_first_call_table(cpu)],
        checks.odd_times(cpu)
        + checks.cpu_sync(rows, th) + checks.thread_mismatch(fig) + checks.thread_gain(
            timing_tables.cpu_rows(cpu, vocabulary.cpu_methods()), th)
        + checks.spread(rows, sets, th) + checks.load(rows, th, ctx.paused)
        + tables.unexpected_successes(rows)  # beside its figures
        + state_checks.cpu_governor(rows, host), rows=cpu)
