"""The first call taken apart, per process: JAX's (jit's trace and lower, XLA compile, first
run), torch.compile's (Dynamo trace, Inductor compile, first run; the mm autotune's candidates
and winner, the compile caches' hits) and a CUDA graph's (warm-up, capture, first replay).

A program that prints a `first call breakdown` line (docs/LINES.md) gives three figures per
process; this table sets them beside the process, its cache state and the cache proof, CPU and
accelerator alike (on a CPU a compiled first call is a compile too). Only the columns some row
fills are shown, and the table only when some run printed the line, so reports of the other
frameworks (and JAX-only ones) are unchanged.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from orchestrator import vocabulary
from orchestrator.report import cache_report
from orchestrator.report.cells import duration
from orchestrator.report.tables import Table, empty, framework_name, ordered

TITLE = "First call taken apart (trace and lower, compile, first run)"
AUTOTUNE, CACHES = "autotune (candidates: winner)", "compile caches"
_NOTES = {
    "first_call_lower": "JAX: `jax.jit(f).lower(a, b)`, `.compile()`, then the compiled call "
                        "until `block_until_ready`; a warm compilation cache shortens the "
                        "compile.",
    "first_call_dynamo": "A compiled mode: Dynamo's trace (and guards), then AOTAutograd and "
                         "Inductor (autotuning, Triton or C++ compiles; a warm FX graph cache "
                         "skips them), then the first run to its sync; `compile caches` are "
                         "the compiler's own counters (FX graph, AOTAutograd hits/misses, autotune "
                         "benchmarks run).",
    "first_call_graph_warmup": "CUDA graph: eager warm-up calls on a side stream, the capture, "
                               "the first replay to its sync.",
}


MEGA_NOTE = ("`mega-cache loaded`/`saved`: the compiler's caches as one blob of cache "
             "artifacts (the mega-cache); cache `mega` is a process whose cache "
             "folders were emptied, then filled from the blob its priming run (a cold compile) "
             "saved: its FX graph hits say whether the blob made it warm.")


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
        record.update(_compile_cells(fig[fig["unit"] == unit]))
        record["cache proof"] = cache_report.cells(mine)["cache proof"]
        records.append(record)
    table = pd.DataFrame(records)
    shown = [c for c in table.columns if c in ("experiment", "framework", "device", "process",
                                                "cache", "cache proof") or (table[c] != "").any()]
    notes = [text for method, text in _NOTES.items() if (rows["method"] == method).any()]
    if (fig["method"] == "compile_artifacts").any():
        notes.append(MEGA_NOTE)
    return Table("first_call_breakdown", TITLE, table[shown], notes=notes)


def _compile_cells(mine: pd.DataFrame) -> dict[str, Any]:
    """torch.compile's autotune winner and cache counters of one run ('' where none)."""
    tuned = mine[mine["method"] == "compile_autotune"]
    winner = ""
    if len(tuned):
        winner = f"{int(tuned['value_s'].iloc[0])}: {tuned['kernel'].iloc[0]}"
    counts = mine[mine["method"] == "compile_cache"]
    found = dict(zip(counts["stat"], counts["value_s"], strict=True))
    caches = ""
    if found:
        caches = (f"FX graph hit {int(found.get('fxgraph_cache_hit', 0))} miss "
                  f"{int(found.get('fxgraph_cache_miss', 0))}, AOTAutograd hit "
                  f"{int(found.get('autograd_cache_hit', 0))}, autotune benchmarked "
                  f"{int(found.get('autotune_benchmarked', 0))}")
    blob = mine[mine["method"] == "compile_artifacts"]
    sizes = dict(zip(blob["stat"], blob["value_s"], strict=True))
    for verb in ("loaded", "saved"):  # the mega-cache blob, where the run loaded or saved one
        if f"{verb}_bytes" in sizes:
            caches += (f"{'; ' if caches else ''}mega-cache {verb} "
                       f"{int(sizes[f'{verb}_bytes'])} bytes "
                       f"({int(sizes.get(f'{verb}_entries', 0))} entries)")
    return {AUTOTUNE: winner, CACHES: caches}
