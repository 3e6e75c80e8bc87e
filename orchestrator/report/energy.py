"""Energy per matmul: joules from each program's NVML block, per framework and precision.

Each program's `--energy` block runs matmuls back to back for a few seconds and reads NVML's
total-energy counter around them (`LABEL SHAPE OP energy (nvml): J J, N runs, DUR`, dataset
method `energy`, stats `joules` and `seconds`). The counter moves every ~100 ms on the H200,
so a 2 s block spans ~20 updates: one 75 µs matmul is far below what it can resolve, N of them
are not. J per matmul = J / N; GFLOP/J = 2·M·N·M·N_matmuls / J / 1e9 (a is M×N, b is N×M);
mean power = J / s. The block's energy is the whole GPU's, idle power included.
"""

from __future__ import annotations

import pandas as pd

from orchestrator.report.names import as_text, column_name
from orchestrator.report.spread import ratio
from orchestrator.report.tables import Table, empty, split


def _flop(shape: str) -> float | None:
    """2·M·N·M of 'MxN'."""
    try:
        m, n = (int(v) for v in shape.split("x"))
    except ValueError:
        return None
    return 2.0 * m * n * m


def _per_matmul(joules: float | None) -> str:
    if joules is None:
        return "?"  # no matmuls counted: no share of the block's energy
    return f"{joules * 1e3:.3f} mJ" if joules < 1 else f"{joules:.3f} J"


def _number(value: float | None, digits: int) -> str:
    return "?" if value is None else f"{value:.{digits}f}"


def energy_rows(fig: pd.DataFrame) -> pd.DataFrame:
    return fig[fig["method"] == "energy"]


def energy_table(fig: pd.DataFrame) -> Table:
    """One row per energy block: framework (and precision), matmuls, time, J, J/matmul,
    GFLOP/J, mean power."""
    title = "Energy per matmul (NVML)"
    rows = energy_rows(fig)
    if rows.empty:
        return empty("energy", title, "no energy block in this data (experiment key "
                     "`energy_s`; CUDA with NVML only)")
    has_precision = "precision" in rows and rows["precision"].notna().any() and \
        rows["precision"].dropna().astype(str).ne("").any()
    out = []
    # one energy line each, grouped in one pass (a mask per line was quadratic in the runs)
    for mine in split(rows, ["unit", "line_no"]).values():
        first = mine.iloc[0]
        stats = dict(zip(mine["stat"], mine["value_s"], strict=True))
        joules, seconds = stats.get("joules"), stats.get("seconds")
        if joules is None or pd.isna(first["runs"]):
            continue
        matmuls, flop = int(first["runs"]), _flop(str(first["shape"]))
        row = {"framework": column_name(first["framework"], first["label"])}
        if has_precision:
            row["precision"] = as_text(first["precision"])
        row.update({
            "shape": first["shape"], "matmuls": matmuls,
            "seconds": f"{seconds:.3f}" if seconds is not None else "",
            "joules": f"{joules:.3f}",
            # a zero count, zero joules or a zero block time gives '?', not a division by zero
            "J per matmul": _per_matmul(ratio(joules, matmuls)),
            "GFLOP/J": _number(ratio(flop * matmuls / 1e9, joules), 1) if flop else "",
            "mean power W": _number(ratio(joules, seconds), 0)})
        out.append(row)
    if not out:
        return empty("energy", title, "the energy lines hold no joules")
    odd = [f"{r['framework']} {r['shape']}" for r in out if "?" in r.values()]
    notes = [f"**no per-matmul energy**: {', '.join(odd)}: a block of 0 matmuls, 0 J or 0 s "
             "(as printed) gives no share, shown as '?'."] if odd else []
    return Table("energy", title, pd.DataFrame(out), notes=notes)
