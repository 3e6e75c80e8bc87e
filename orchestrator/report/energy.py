"""Energy per matmul: joules from each program's NVML block, per framework and precision.

Each program's `--energy` block runs matmuls back to back for a few seconds and reads NVML's
total-energy counter around them (`LABEL SHAPE OP energy (nvml): J J, N runs, DUR`, dataset
method `energy`, stats `joules` and `seconds`). The counter moves every ~100 ms on the H200,
so a 2 s block spans ~20 updates: one 75 µs matmul is far below what it can resolve, N of them
are not. J per matmul = J / N; GFLOP/J = 2·M·N·M·N_matmuls / J / 1e9 (a is M×N, b is N×M);
mean power = J / s. The block's energy is the whole GPU's, idle power included (gross).

Where the program printed its `# energy` line (both programs print it: every counter
read aligned to one of NVML's updates, blocks of >= 5 s), the idle power measured just before
the block, the net joules (gross less idle power times the block's time) and net J per matmul
are shown beside the gross ones, and the busy share (runs x one matmul's kernel time / the
block's time). A block that prints no busy share (burn's where its queued proof failed) gets it
from its target's kernel time (ncu's profile run, else CUPTI), marked `(kernel time)`. Blocks
without that line (older stores) read the counter at arbitrary moments: their idle and net
cells are empty and a note says so; a block under 5 s gets a note too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pandas as pd

from orchestrator.data import frame_records
from orchestrator.report.findings import Kind
from orchestrator.report.names import as_text, column_name
from orchestrator.report.tables import Table, empty, group_positions
from orchestrator.stats.spread import ratio


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


MIN_BLOCK_S = 5.0  # a ~100 ms counter step is over 2% of a shorter block
# what a block's row reads: its figure, its target and arithmetic
_FIELDS = ["stat", "value_s", "runs", "shape", "framework", "label", "precision"]


def energy_rows(fig: pd.DataFrame) -> pd.DataFrame:
    return fig[fig["method"] == "energy"]


Medians = dict[tuple[str, str, str, str], float]  # (framework, label, shape, profiler) -> s


def _kernel_medians(fig: pd.DataFrame) -> Medians:
    """Each target's per-matmul kernel time (median, the first row with a value) by profiler,
    read in one pass: a mask of all figures per energy block was quadratic in the runs (bench
    figure 6: 28 s of a 5000-run report)."""
    mine = fig[(fig["method"] == "kernel_time") & (fig["stat"] == "median")]
    if "kernel" in mine:
        mine = mine[mine["kernel"].fillna("").astype(str) == ""]
    out: Medians = {}
    if "profiler" not in mine:
        return out
    keys = mine[["framework", "label", "shape", "profiler"]].itertuples(index=False, name=None)
    for key, value in zip(keys, mine["value_s"].tolist(), strict=True):
        if not pd.isna(value):
            out.setdefault(key, float(value))
    return out


def _kernel_median(medians: Medians, first: dict[str, Any]) -> float | None:
    """One matmul's kernel time (median) of the energy block's target: ncu's, else CUPTI's."""
    for profiler in ("ncu", "cupti"):
        found = medians.get((first["framework"], first["label"], first["shape"], profiler))
        if found is not None:
            return found
    return None


def _busy(stats: dict, medians: Callable[[], Medians], first: dict[str, Any], matmuls: int,
          seconds: float | None) -> str:
    printed = stats.get("busy_fraction")
    if printed is not None and not pd.isna(printed):
        return f"{printed:.0%}"
    kernel = _kernel_median(medians(), first)
    share = ratio(kernel * matmuls, seconds) if kernel is not None else None
    return "" if share is None else f"{share:.0%} (kernel time)"


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
    out: list[dict[str, object]] = []
    medians = functools.cache(lambda: _kernel_medians(fig))  # read once, where a block needs it
    unaligned: list[str] = []
    short: list[str] = []
    # one energy line each, grouped in one pass (a mask per line was quadratic in the runs),
    # its rows as plain records (a frame per line was seconds at 5000 runs)
    records = frame_records.records(rows[[c for c in _FIELDS if c in rows]])
    for positions in group_positions(rows, ["unit", "line_no"]).values():
        mine = [records[i] for i in positions]
        first = mine[0]
        stats = {r["stat"]: r["value_s"] for r in mine}
        joules, seconds = stats.get("joules"), stats.get("seconds")
        if joules is None or pd.isna(first["runs"]):
            continue
        matmuls, flop = int(first["runs"]), _flop(str(first["shape"]))
        row = {"framework": column_name(first["framework"], first["label"])}
        if has_precision:
            row["precision"] = as_text(first["precision"])
        net, idle = stats.get("joules_net"), stats.get("idle_watts")
        row.update({
            "shape": first["shape"], "matmuls": matmuls,
            "seconds": f"{seconds:.3f}" if seconds is not None else "",
            "joules": f"{joules:.3f}",
            # a zero count, zero joules or a zero block time gives '?', not a division by zero
            "J per matmul": _per_matmul(ratio(joules, matmuls)),
            "GFLOP/J": _number(ratio(flop * matmuls / 1e9, joules), 1) if flop else "",
            "mean power W": _number(ratio(joules, seconds), 0),
            "idle W": "" if idle is None else f"{idle:.0f}",
            "net J": "" if net is None else f"{net:.3f}",
            "net J per matmul": "" if net is None else _per_matmul(ratio(net, matmuls)),
            "busy": _busy(stats, medians, first, matmuls, seconds)})
        if net is None:
            unaligned.append(f"{row['framework']} {row['shape']}")
        if seconds is not None and seconds < MIN_BLOCK_S:
            short.append(f"{row['framework']} {row['shape']} ({seconds:.1f} s)")
        out.append(row)
    if not out:
        return empty("energy", title, "the energy lines hold no joules")
    odd = [f"{r['framework']} {r['shape']}" for r in out if "?" in r.values()]
    notes = [Kind.NO_MATMUL_ENERGY.says(f"{', '.join(odd)}: a block of 0 matmuls, 0 J or 0 s "
             "(as printed) gives no share, shown as '?'.")] if odd else []
    if unaligned:
        notes.append(Kind.ENERGY_NOT_ALIGNED.says(
            f"{', '.join(unaligned)}: the program read NVML's counter (updated every ~100 ms) "
            "at arbitrary moments and measured no idle power, so its joules are gross only."))
    if short:
        notes.append(Kind.SHORT_ENERGY_BLOCK.says(
            f"{', '.join(short)}: under {MIN_BLOCK_S:g} s, one ~100 ms counter step is over 2% "
            "of it."))
    return Table("energy", title, pd.DataFrame(out), notes=notes)
