"""The clock while a run ran. NVML's violation counters kept as their growth
over the run (dataset columns), the SM clock sampled in a bounded thread during the run, and
the report's warnings (a GPU below its application clock, a timed block below full clock).
A stand-in pynvml with the H200's real readings (fake_nvml); no GPU here."""

from __future__ import annotations

import json
import sys
import threading
import time

import pandas as pd
import pytest

from orchestrator.data import state_columns
from orchestrator.report import clock_checks
from orchestrator.run import gpu_state

from .fake_nvml import FakeNvml


def _state(nvml: FakeNvml, grown: dict[str, int]) -> dict:
    before = gpu_state.snapshot({})
    nvml.phase = "load"
    nvml.extra_violation_ns = grown
    after = gpu_state.snapshot({})
    return {"gpu_before": before, "gpu_after": after, "gpu_delta": gpu_state.delta(before, after),
            "gpu_during": {"sm_clock_min_mhz": 1755, "sm_clock_max_mhz": 1980, "samples": 12}}


def test_violation_growth_and_the_sampled_clock_are_columns(nvml: FakeNvml) -> None:
    state = _state(nvml, {"total_app_clocks": 5_100_000_000, "low_utilization": 4_600_000_000,
                          "power": 500_000_000, "total_base_clocks": 0})
    row = state_columns.columns(json.dumps(state))
    assert row["gpu_below_app_clock_s"] == pytest.approx(5.1)
    assert row["gpu_low_utilization_s"] == pytest.approx(4.6)
    assert row["gpu_power_throttle_s"] == pytest.approx(0.5)
    assert row["gpu_thermal_throttle_s"] == 0 and row["gpu_below_base_clock_s"] == 0
    assert (row["gpu_sm_clock_run_min_mhz"], row["gpu_sm_clock_run_max_mhz"],
            row["gpu_sm_clock_samples"]) == (1755, 1980, 12)
    # an older store (no growth recorded, no sampler): empty, never an error
    old = state_columns.columns(json.dumps({"gpu_before": state["gpu_before"]}))
    assert old["gpu_below_app_clock_s"] is None and old["gpu_sm_clock_run_min_mhz"] is None


def test_the_sampler_reads_the_sm_clock_while_the_run_runs(nvml: FakeNvml) -> None:
    sampler = gpu_state.Sampler({}, interval_s=0.01).start()
    time.sleep(0.1)
    nvml.phase = "load"  # the clock ramps to 1980 under load
    time.sleep(0.1)
    got = sampler.stop()
    assert got["samples"] >= 5 and "reason" not in got
    assert (got["sm_clock_min_mhz"], got["sm_clock_max_mhz"]) == (345, 1980)
    assert nvml.calls[-1] == "nvmlShutdown"


def test_a_hung_nvml_bounds_the_sampler(nvml: FakeNvml) -> None:
    release = threading.Event()
    nvml.nvmlDeviceGetClockInfo = lambda handle, kind: (release.wait(30), 1980)[1]
    sampler = gpu_state.Sampler({}, interval_s=0.01, timeout_s=0.3).start()
    started = time.monotonic()
    got = sampler.stop()
    assert time.monotonic() - started < 2
    assert "did not answer within 0.3 s" in got["reason"] and got["samples"] == 0
    # while it hangs, a snapshot and the next sampler say so at once
    assert "still blocked" in gpu_state.snapshot({}, timeout_s=0.3)["reason"]
    assert "not sampled" in gpu_state.Sampler({}).start().stop()["reason"]
    release.set()


def test_no_nvml_is_a_reason_not_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)
    got = gpu_state.Sampler({}, interval_s=0.01).start().stop()
    assert got["samples"] == 0 and "pynvml" in got["reason"]


def _row(**values: object) -> dict:
    return {"run_id": "r1", "experiment": "methods", "framework": "burn", "label": "cuda",
            "device": "cuda", "shape": "1024x1024", "build": "cuda", "precision": "",
            "threads": None, "cache": "warm", "process": 1, "method": "with_sync",
            "stat": "min", "value_s": 1e-4, "method_text": "", "gpu_app_clock_mhz": 1980,
            **values}


def test_below_the_application_clock_is_warned_with_its_causes() -> None:
    idle = pd.DataFrame([_row(gpu_below_app_clock_s=0.8, gpu_low_utilization_s=0.8,
                              gpu_power_throttle_s=0.0, gpu_thermal_throttle_s=0.0,
                              gpu_sm_clock_run_min_mhz=345, gpu_sm_clock_run_max_mhz=1980)])
    (line,) = clock_checks.below_app_clock(idle)
    assert "0.8 s (low utilization (idle) 0.8 s)" in line and "345–1980 MHz" in line
    assert "Counted while the GPU idled" in line
    capped = idle.assign(gpu_below_app_clock_s=5.1, gpu_power_throttle_s=0.5, run_id="r2")
    (line,) = clock_checks.below_app_clock(capped)
    assert "power cap 0.5 s" in line and "A busy GPU was held down" in line
    assert clock_checks.below_app_clock(idle.assign(gpu_below_app_clock_s=0.0)) == []


def test_a_timed_block_below_full_clock_is_warned() -> None:
    rows = pd.DataFrame([
        _row(framework="torch", method="sm_clock", stat="block_start", value_s=1980.0,
             method_text="with sync"),
        _row(framework="torch", method="sm_clock", stat="block_end", value_s=1980.0,
             method_text="with sync"),
        _row(framework="torch", method="sm_clock", stat="block_start", value_s=1410.0,
             method_text="cuda.Event time")])
    (line,) = clock_checks.block_clocks(rows)
    assert "cuda.Event time start 1410 MHz" in line and "with sync" not in line
    assert clock_checks.block_clocks(rows.iloc[:2]) == []
