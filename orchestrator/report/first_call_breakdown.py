"""The first call taken apart (JAX: jit's trace and lower, XLA compile, first run), per process.

A program that prints the `first call breakdown` line (docs/LINES.md) gives three figures per
process; this table sets them beside the process, its cache state and the cache proof, CPU and
accelerator alike (on a CPU JAX's first call is a compile too). Shown under section 2 only when
some run printed the line, so reports of the other frameworks are unchanged.
"""

from __future__ import annotations

import pandas as pd

from orchestrator import vocabulary
from orchestrator.report import cache_report
from orchestrator.report.tables import Table, duration, empty, framework_name, ordered

TITLE = "First call taken apart (trace and lower, compile, first run)"


def breakdown_table(fig: pd.DataFrame) -> Table:
    methods = vocabulary.breakdown_columns()  # method -> its column's words
    rows = fig[fig["method"].isin(list(methods))]
    if rows.empty:
        return empty("first_call_breakdown", TITLE, "no first-call breakdown in this data")
    records = []
    keys = ["unit", "experiment", "framework", "label", "process", "cache"]
    for unit, experiment, framework, label, process, cache in ordered(rows, keys):
        mine = rows[rows["unit"] == unit]
        record = {"experiment": experiment, "framework": framework_name(framework),
                  "device": label, "process": "" if pd.isna(process) else str(process),
                  "cache": cache}
        for method, column in methods.items():
            values = mine.loc[mine["method"] == method, "value_s"]
            record[column] = duration(values.iloc[0]) if len(values) else ""
        record["cache proof"] = cache_report.cells(mine)["cache proof"]
        records.append(record)
    return Table("first_call_breakdown", TITLE, pd.DataFrame(records), notes=[
        "JAX: `jax.jit(f).lower(a, b)`, `.compile()`, then the compiled call until "
        "`block_until_ready`; a warm compilation cache shortens the compile."])
