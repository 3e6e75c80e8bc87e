"""The report's section 6. Spread, confidence and ratios: every figure over its processes, the raw
samples' spread, the candidate / reference ratios.
"""

from __future__ import annotations

import pandas as pd

from orchestrator.report import drift, process_table, ratios
from orchestrator.report.registry import Context, Section, section


@section("statistics", number="6", select=lambda ctx: ctx.fig)
def _statistics(ctx: Context, fig: pd.DataFrame) -> Section:
    sets = ctx.sets
    pairs = ratios.pairs(fig, sets)  # paired (and bootstrapped) once: both tables and checks
    return Section(
        "Beyond the chapter: spread, confidence and ratios",
        "Every time figure over its processes, the unit of replication (median [95% "
        "interval] from the processes, processes × reps); then from the raw samples of each "
        "process: each median with its 95% confidence interval (order statistics), and burn / "
        "PyTorch time ratios of the same measurement with a bootstrap 95% interval of the "
        "median ratio (fixed seed).",
        [process_table.figures_table(fig, sets), ratios.spread_table(fig, sets),
         ratios.ratio_table(pairs),
         *(t for t in [ratios.mixed_ratio_table(pairs)] if not t.frame.empty)],
        ratios.arithmetic_checks(pairs) + drift.warnings(fig)
        + process_table.missed_targets(fig))
