"""The report's section 6b. How cost grows: time, throughput and % of peak per size, the cost
model.
"""

from __future__ import annotations

import pandas as pd

from orchestrator.report import sizes_plot, sizes_report
from orchestrator.report.registry import Context, Section, SideTable, section


@section("sizes", number="6b", select=lambda ctx: sizes_report.with_peaks(ctx.fig, ctx.data.host),
         plot=("sizes.png", sizes_plot.draw),
         side_by_side=(SideTable("sizes", "How cost grows: time, TFLOP/s and % of peak "
                                 "per size", lambda rows, d: sizes_report.summary_table(rows),
                                 ("target", "size")),))
def _sizes(ctx: Context, rows: pd.DataFrame) -> Section:
    host = ctx.data.host
    return Section(
        "Beyond the chapter: how cost grows",
        "Per target, the matmul's time at each size (the smallest min over its runs) by three "
        "clocks: the kernels' own time, the queued device time, with sync; throughput "
        "2·M·N·M / t from the first of them measured (basis), % of the device's peak for the "
        "run's arithmetic (the peaks table, each number with its source; 'peak unknown' where "
        "none is known), and at least the three f32 matrices moved once, 4·(2·M·N + M·M) "
        "bytes. Then where the launch gap equals the kernel time, where burn / PyTorch crosses "
        "1, and the cost model t ≈ a + b·n³ fitted per target, with where it stops holding.",
        sizes_report.size_tables(rows, host), sizes_report.findings(rows), rows=rows)
