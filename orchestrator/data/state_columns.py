"""The dataset's machine-state columns (`gpu_*`, `cpu_*`) from a run's stored `state_json`.

The runner keeps NVML's snapshots before and after each run and the CPU's frequency policy
(run/gpu_state.py, run/cpu_state.py) as JSON; these columns flatten what a reader of a figure
needs beside it. A run without a state (an older store, a skipped run, a captured log) or a
value its machine could not give has empty cells; `gpu_state_reason` says why the GPU ones are.
"""

from __future__ import annotations

import json
import math
from typing import Any

from orchestrator import vocabulary

# named, in order and with their dtypes, by the measurement vocabulary (orchestrator/vocabulary.py)
COLUMNS = vocabulary.column_keys("state")
# Columns that hold whole numbers (nullable Int64 in the DataFrame)
INT_COLUMNS = tuple(c for c in COLUMNS if vocabulary.dtypes()[c] == "Int64")

def reasons_text(names: list[str] | None) -> str:
    """'gpu_idle', 'sw_power_cap+hw_slowdown', 'none' (no reason set), '' (not read)."""
    if names is None:
        return ""
    return "+".join(map(str, names)) or "none"


# NVML's violation counters (run/gpu_state.VIOLATIONS) whose growth over the run is a column
VIOLATION_COLUMNS = {"gpu_below_app_clock_s": "total_app_clocks",
                     "gpu_below_base_clock_s": "total_base_clocks",
                     "gpu_low_utilization_s": "low_utilization",
                     "gpu_power_throttle_s": "power", "gpu_thermal_throttle_s": "thermal"}
_TEXT_COLUMNS = ("gpu_reasons_before", "gpu_reasons_after", "gpu_other_pids",
                 "gpu_state_reason", "cpu_governor", "cpu_boost")
_INT64 = 2**63 - 1


def columns(state_json: str | None) -> dict[str, Any]:
    """The state columns of one run; every column present, empty where nothing was read.
    A value of another type than its column's (a string clock, NaN power, a pstate past
    int64: an older store, a driver's odd answer, a hand edit) reads as empty, never raises."""
    try:
        state = json.loads(state_json or "null") or {}
    except ValueError:
        state = {}
    state = state if isinstance(state, dict) else {}
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    try:
        row.update(_gpu(state), **_cpu(state))
    except (AttributeError, TypeError, ValueError):  # a state of the wrong shape
        row["gpu_state_reason"] = "GPU state damaged (not read)"
    for col in COLUMNS:
        row[col] = _checked(col, row[col])
    return row


def _checked(col: str, value: Any) -> Any:
    if col in _TEXT_COLUMNS:
        return value if isinstance(value, str) else ""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if col in INT_COLUMNS:
        return value if isinstance(value, int) and abs(value) <= _INT64 else None
    return float(value) if math.isfinite(value) else None


def _gpu(state: dict[str, Any]) -> dict[str, Any]:
    before = (state.get("gpu_before") or {}).get("gpu")
    after = (state.get("gpu_after") or {}).get("gpu")
    if not before:
        why = (state.get("gpu_before") or {}).get("reason") or ("" if not state else
                                                                 "no GPU state recorded")
        return {"gpu_state_reason": why}
    delta = state.get("gpu_delta") or {}
    grown = delta.get("violations_s") or {}
    pids = sorted({*(before.get("other_pids") or []), *((after or {}).get("other_pids") or [])})
    counted = before.get("other_pids") is not None or (after or {}).get("other_pids") is not None
    missing = sorted({*before.get("missing", {}), *((after or {}).get("missing") or {})})
    return {
        "gpu_sm_clock_mhz": before.get("sm_clock_mhz"),
        "gpu_sm_clock_max_mhz": before.get("sm_clock_max_mhz"),
        "gpu_app_clock_mhz": before.get("sm_app_clock_mhz"),
        "gpu_mem_clock_mhz": before.get("mem_clock_mhz"),
        "gpu_pstate": before.get("pstate"),
        "gpu_temp_c": before.get("temp_c"),
        "gpu_temp_after_c": (after or {}).get("temp_c"),
        "gpu_power_w": before.get("power_w"),
        "gpu_power_limit_w": before.get("power_limit_w"),
        "gpu_reasons_before": reasons_text(before.get("reason_names")),
        "gpu_reasons_after": reasons_text((after or {}).get("reason_names")),
        "gpu_energy_j": _counted(delta.get("energy_j")),
        "gpu_throttle_s": delta.get("throttle_s"),
        **{column: _counted(grown.get(name)) for column, name in VIOLATION_COLUMNS.items()},
        **_sampled(state.get("gpu_during") or {}),
        "gpu_other_processes": len(pids) if counted else None,
        "gpu_other_pids": " ".join(map(str, pids)),
        "gpu_state_reason": "; ".join(
            ([f"not supported here: {', '.join(missing)}"] if missing else [])
            + ([f"NVML counter went backwards: {', '.join(map(str, delta['backwards']))}"]
               if delta.get("backwards") else [])),
    }


def _counted(value: Any) -> Any:
    """A counter's growth: a negative one (an older store's, recorded before run/gpu_state
    kept them out) measured nothing."""
    return None if isinstance(value, int | float) and value < 0 else value


def _sampled(during: dict[str, Any]) -> dict[str, Any]:
    """The SM clock NVML gave while the run ran (run/gpu_state.Sampler), min/max/count."""
    return {"gpu_sm_clock_run_min_mhz": during.get("sm_clock_min_mhz"),
            "gpu_sm_clock_run_max_mhz": during.get("sm_clock_max_mhz"),
            "gpu_sm_clock_samples": during.get("samples")}


def _cpu(state: dict[str, Any]) -> dict[str, Any]:
    cpu = state.get("cpu_before") or {}
    return {"cpu_governor": cpu.get("governor"), "cpu_freq_mhz": cpu.get("freq_mhz"),
            "cpu_boost": cpu.get("boost")}
