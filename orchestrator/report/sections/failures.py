"""The report's section 7. Runs skipped or failed."""

from __future__ import annotations

import pandas as pd

from orchestrator.report import tables
from orchestrator.report.registry import Context, Section, section


@section("failures", number="7", select=lambda ctx: ctx.data.figures)
def _failures(ctx: Context, figures: pd.DataFrame) -> Section:
    return Section("Runs skipped or failed",
                   "Runs that measured nothing, with the reason recorded for them.",
                   [tables.failures_table(figures)], tables.unexpected_successes(figures),
                   rows=figures)
