"""The report's section 4. Same numbers from every build: the accuracy table."""

from __future__ import annotations

import pandas as pd

from orchestrator.report import (
    checks,
    tables,
)
from orchestrator.report.registry import (
    CompareSection,
    Context,
    Section,
    SideTable,
    method_section,
    section,
)


@section("accuracy", lambda ctx: tables.accuracy_rows(ctx.fig),
         side_by_side=(SideTable("accuracy", "4. Same numbers from every build",
                                 lambda rows, d: tables.accuracy_table(rows), ("build", "shape")),),
         compare=CompareSection("accuracy", 5, method_section("accuracy"), verdicts=False))
def _accuracy(ctx: Context, rows: pd.DataFrame) -> Section:
    th = ctx.th
    notes = checks.bitwise_summary(rows) + checks.accuracy(rows, th)
    max_ref = tables.global_max_ref(rows)
    if max_ref:
        notes.insert(0, f"max |ref| = {max_ref} (one value for all builds, as printed).")
    return Section(
        "4. Same numbers from every build",
        "c = a @ b with a = sin(k), b = cos(k) in every build, against a float64 reference "
        "computed from the build's own f32 inputs, and against torch cpu.",
        [tables.accuracy_table(rows)], notes, rows=rows)
