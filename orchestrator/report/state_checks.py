"""Warnings from the machine's state around each run: GPU clocks, throttling, other processes,
the CPU governor; and the machine section's table of what was recorded.

The runner recorded NVML's view of the GPU before and after every GPU run and the CPU's
frequency policy (dataset columns `gpu_*`, `cpu_*`, data/state_columns.py). A run that started
with a clock-event reason other than `gpu_idle` or with its application clock lowered, one that
was throttled while it ran (a violation counter grew, or a reason stayed set after it), another
process on the GPU, or a governor other than `performance` (as pyperf's `system show` checks)
each gets one line naming the run and the numbers.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from orchestrator.report import clock_checks
from orchestrator.report.findings import Kind
from orchestrator.report.names import as_text, run_name
from orchestrator.report.tables import Table, empty

_AT_REST = ("", "none", "gpu_idle")  # reasons that say nothing held the clocks down


def _runs(rows: pd.DataFrame) -> list[pd.Series]:
    """One row per run that has GPU state (a results store; a log has none)."""
    if "gpu_reasons_before" not in rows or rows.empty:
        return []
    with_state = rows[_text(rows["gpu_reasons_before"]) != ""]
    return [row for _, row in with_state.drop_duplicates("run_id").iterrows()]


def _text(column: pd.Series) -> pd.Series:
    """A text column with '' for no value (a log's rows have NaN there)."""
    return column.astype(object).where(column.notna(), "").astype(str)


def _name(row: pd.Series) -> str:
    """'PyTorch cuda [tf32] (methods)': a TF32 run's label carries its arithmetic."""
    where = f" ({row['experiment']})" if as_text(row.get("experiment")) else ""
    return run_name(row, context=True) + where


def _int(value: Any) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def gpu_start(rows: pd.DataFrame) -> list[str]:
    """A run that began with its clocks held down: a reason other than idle, a lowered
    application clock."""
    out = []
    for row in _runs(rows):
        reasons = as_text(row["gpu_reasons_before"])
        app, top = _int(row["gpu_app_clock_mhz"]), _int(row["gpu_sm_clock_max_mhz"])
        found = []
        if reasons not in _AT_REST:
            found.append(f"clock-event reasons `{reasons}` set (SM "
                         f"{_int(row['gpu_sm_clock_mhz'])} of {top} MHz)")
        if app is not None and top is not None and app < top:
            found.append(f"application clock {app} MHz below the GPU's max {top} MHz "
                         "(`nvidia-smi -rac` resets it)")
        if found:
            out.append(Kind.GPU_CLOCK.says(f"{_name(row)}: " + "; ".join(found)
                                          + ". Its times are not the GPU's best."))
    return out


def gpu_throttle(rows: pd.DataFrame) -> list[str]:
    """Throttling while the run ran: power/thermal violation time grew, or a reason stayed."""
    out = []
    for row in _runs(rows):
        throttled = row["gpu_throttle_s"]
        after = as_text(row["gpu_reasons_after"])
        found = []
        if pd.notna(throttled) and throttled > 0:
            found.append(f"{throttled:.3g} s of power/thermal violation time during the run")
        if after not in _AT_REST:
            found.append(f"reasons `{after}` set when it ended")
        if found:
            temp = (f" ({_int(row['gpu_temp_c'])} → {_int(row['gpu_temp_after_c'])} °C)"
                    if pd.notna(row["gpu_temp_after_c"]) else "")
            out.append(Kind.GPU_THROTTLED.says(f"{_name(row)}: " + "; ".join(found)
                                              + f"{temp}. Later runs of it ran on lowered clocks."))
    return out


def gpu_others(rows: pd.DataFrame) -> list[str]:
    """Another process had the GPU when the run started or ended: it shared the GPU."""
    out = []
    for row in _runs(rows):
        count = _int(row["gpu_other_processes"])
        if count:
            out.append(Kind.GPU_SHARED.says(f"{_name(row)}: {count} other compute "
                       f"process{'es' * (count > 1)} (pid {as_text(row['gpu_other_pids'])}) "
                       "on the GPU before or after the run; its work shared the GPU with the "
                       "measured matmuls."))
    return out


def gpu_warnings(rows: pd.DataFrame) -> list[str]:
    """What NVML said about the GPU around these runs: table 1's and section 8's findings."""
    return (gpu_start(rows) + gpu_throttle(rows) + clock_checks.warnings(rows)
            + gpu_others(rows))


def cpu_governor(rows: pd.DataFrame, host: dict[str, Any]) -> list[str]:
    """A frequency governor other than `performance`: clocks follow the load (pyperf)."""
    seen: dict[str, list[str]] = {}
    if "cpu_governor" in rows:
        for governor, part in rows.groupby(_text(rows["cpu_governor"])):
            seen[governor] = list(dict.fromkeys(part["experiment"].astype(str)))
    sweep = ((host or {}).get("cpu_state") or {}).get("governor")
    if sweep and sweep not in seen:
        seen[sweep] = ["the sweep's start"]
    return [Kind.CPU_GOVERNOR.says(
                f"({', '.join(where)}): not `performance`, so the "
            "CPU's clock follows its load and CPU times (and GPU launch gaps) vary; "
            "`pyperf system tune` or `cpupower frequency-set -g performance` sets it.",
                named=f" `{governor}`", sep=" ")
            for governor, where in seen.items() if governor not in ("", "performance")]


def gpu_state_table(rows: pd.DataFrame) -> Table:
    """Per GPU run: the clocks, reasons, power, energy and others NVML gave around it."""
    title = "GPU state around each run (NVML)"
    runs = _runs(rows)
    if not runs:
        return empty("gpu_state", title, "no GPU state recorded (no GPU runs, NVML missing, "
                     "or data from before it was recorded)")
    frame = pd.DataFrame([{
        "run": _name(row),
        "SM MHz (max, app)": f"{_int(row['gpu_sm_clock_mhz'])} "
                             f"({_int(row['gpu_sm_clock_max_mhz'])}, "
                             f"{_int(row['gpu_app_clock_mhz'])})",
        "pstate": f"P{_int(row['gpu_pstate'])}" if pd.notna(row["gpu_pstate"]) else "",
        "°C before → after": f"{_int(row['gpu_temp_c'])} → {_int(row['gpu_temp_after_c'])}",
        "W before (limit)": _w(row["gpu_power_w"], row["gpu_power_limit_w"]),
        "reasons before → after": f"{as_text(row['gpu_reasons_before'])} → "
                                  f"{as_text(row['gpu_reasons_after'])}",
        "run energy J": _f(row["gpu_energy_j"], "{:.1f}"),
        "throttled s": _f(row["gpu_throttle_s"], "{:.3g}"),
        **clock_checks.cells(row),
        "other processes": as_text(_int(row["gpu_other_processes"])),
    } for row in runs])
    return Table("gpu_state", title, frame)


def _w(power: Any, limit: Any) -> str:
    if pd.isna(power):
        return ""
    return f"{power:.0f}" + (f" ({limit:.0f})" if pd.notna(limit) else "")


def _f(value: Any, fmt: str) -> str:
    return "" if value is None or pd.isna(value) else fmt.format(value)


def cpu_state_lines(host: dict[str, Any], rows: pd.DataFrame) -> list[str]:
    """The sweep's CPU policy in one line, and the range of frequencies the runs saw."""
    cpu = (host or {}).get("cpu_state") or {}
    if not cpu:
        return ["CPU frequency policy: not recorded (a captured log, or a sweep from before "
                "it was recorded)."]
    parts = [f"governor {cpu.get('governor') or 'not available'}",
             f"boost {cpu.get('boost') or 'not available'}", f"SMT {cpu.get('smt') or '?'}"]
    if cpu.get("min_mhz") or cpu.get("max_mhz"):
        parts.append(f"scaling {cpu.get('min_mhz')}–{cpu.get('max_mhz')} MHz")
    if cpu.get("speed_limit_pct") is not None:
        parts.append(f"CPU_Speed_Limit {cpu['speed_limit_pct']}%")
    freqs = rows["cpu_freq_mhz"].dropna() if "cpu_freq_mhz" in rows else pd.Series(dtype=float)
    if not freqs.empty:
        parts.append(f"frequency before the runs {freqs.min():.0f}–{freqs.max():.0f} MHz")
    why = "; ".join(f"{k}: {v}" for k, v in (cpu.get("missing") or {}).items())
    return [f"CPU frequency policy ({cpu.get('source')}): " + ", ".join(parts) + "."
            + (f" Not available: {why}." if why else "")]
