"""The profile runs (Nsight Compute) in one table: per run its cache state (ncu's
`--cache-control`, in the profiler's words: L2 warm or flushed), the kernel time per matmul it
measured, and what autotune had chosen when it ran (burn: cubecl's store, read before and after
the profile run as for a measured run; `cache proof` says whether the profile run found the
measured run's tune, or autotuned again under the profiler).
"""

from __future__ import annotations

import pandas as pd

from orchestrator import vocabulary
from orchestrator.report.cache_report import cells
from orchestrator.report.cells import duration
from orchestrator.report.names import column_name
from orchestrator.report.tables import Table, empty, ordered


def _words(profiler: str) -> str:
    entry = vocabulary.profile_profilers().get(profiler)
    return entry.words if entry is not None else profiler


def profile_table(fig: pd.DataFrame) -> Table:
    """One row per profile run: target, shape, profiler (cache state), min, median, autotune."""
    title = "Profile runs: cache state and autotune state"
    if "role" not in fig or "profiler" not in fig:
        return empty("profile_runs", title, "no profile run in this data")
    rows = fig[(fig["role"] == "profile") & (fig["method"] == "kernel_time")]
    if rows.empty:
        return empty("profile_runs", title, "no profile run with a kernel time")
    per_matmul = rows["kernel"].fillna("").astype(str) == "" if "kernel" in rows else True
    records = []
    for unit, in ordered(rows, ["unit"]):
        mine = rows[rows["unit"] == unit]
        first = mine.iloc[0]
        # the per-matmul figures ('' where ncu's launches did not divide into --reps)
        whole = mine[per_matmul[mine.index]] if not isinstance(per_matmul, bool) else mine
        stats = dict(zip(whole["stat"], whole["value_s"], strict=False))
        record = {"run": column_name(first["framework"], first["label"]),
                  "shape": first["shape"], "profiler": _words(str(first["profiler"])),
                  "min": duration(stats.get("min")), "median": duration(stats.get("median"))}
        every = fig[fig["unit"] == unit]  # the run's other rows carry its cache columns too
        autotune = cells(every) if "autotune_kernel" in every else {}
        record["autotune kernel"] = autotune.get("autotune kernel") or ""
        record["cache proof"] = autotune.get("cache proof") or ""
        records.append(record)
    return Table("profile_runs", title, pd.DataFrame(records))
