"""The GPU state around a run: NVML's readings (a fake pynvml with the H200's real values), the
reasons' decoding, the counters' deltas, missing counters, and a run through the runner."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from orchestrator.experiments.plan import RunDef
from orchestrator.records import RunRecord
from orchestrator.run import gpu_state
from orchestrator.run.runner import RunContext, execute

from ..conftest import PROJECT
from .fake_nvml import PROBE, FakeNvml, NVMLError_LibraryNotFound


def test_reasons_decode_into_names() -> None:
    assert gpu_state.decode_reasons(PROBE["reasons"]) == ["gpu_idle"]
    assert gpu_state.decode_reasons(PROBE["reasons_after"]) == []
    every = gpu_state.decode_reasons(PROBE["supported_reasons"])  # 511: all nine
    assert every == ["gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown",
                     "sync_boost", "sw_thermal", "hw_thermal", "hw_power_brake",
                     "display_clock_setting"]
    assert gpu_state.decode_reasons(0x4 | 0x400) == ["sw_power_cap", "bit_10"]


def test_reason_bits_are_pynvmls_own_constants() -> None:
    consts = PROBE["reason_consts"]  # as the H200's pynvml has them
    names = {"gpu_idle": "GpuIdle", "applications_clocks_setting": "ApplicationsClocksSetting",
             "sw_power_cap": "SwPowerCap", "hw_slowdown": "HwSlowdown",
             "sync_boost": "SyncBoost", "sw_thermal": "SwThermalSlowdown",
             "hw_thermal": "HwThermalSlowdown", "hw_power_brake": "HwPowerBrakeSlowdown",
             "display_clock_setting": "DisplayClockSetting"}
    for name, bit in gpu_state.REASONS:
        assert consts[f"nvmlClocksEventReason{names[name]}"] == bit


def test_idle_snapshot_has_every_field_of_the_h200(nvml: FakeNvml) -> None:
    gpu = gpu_state.snapshot({})["gpu"]
    assert gpu["name"] == "NVIDIA H200" and gpu["index"] == 0
    assert (gpu["sm_clock_mhz"], gpu["sm_clock_max_mhz"], gpu["sm_app_clock_mhz"]) == \
        (345, 1980, 1980)
    assert (gpu["mem_clock_mhz"], gpu["mem_clock_max_mhz"], gpu["mem_app_clock_mhz"]) == \
        (3201, 3201, 3201)
    assert gpu["pstate"] == 0 and gpu["temp_c"] == 39
    assert gpu["power_w"] == pytest.approx(80.567) and gpu["power_limit_w"] == 700
    assert gpu["reasons"] == 1 and gpu["reason_names"] == ["gpu_idle"]
    assert gpu["energy_mj"] == 2435750
    assert gpu["violations_ns"]["low_utilization"] == 18661392192
    assert gpu["violations_ns"]["power"] == 0 and len(gpu["violations_ns"]) == 8
    assert gpu["other_pids"] == [] and gpu["missing"] == {}
    assert nvml.calls[0] == "nvmlInit" and nvml.calls[-1] == "nvmlShutdown"


def test_delta_gives_energy_and_throttled_time(nvml: FakeNvml) -> None:
    before = gpu_state.snapshot({})
    nvml.phase = "load"
    nvml.extra_violation_ns = {"power": 250_000_000, "thermal": 100_000_000,
                               "low_utilization": 5_000_000_000}
    after = gpu_state.snapshot({})
    assert after["gpu"]["sm_clock_mhz"] == 1980 and after["gpu"]["temp_c"] == 59
    assert after["gpu"]["power_w"] == pytest.approx(640.294)
    assert after["gpu"]["reason_names"] == []
    d = gpu_state.delta(before, after)
    assert d["energy_j"] == pytest.approx(sum(PROBE["energy_steps_mj"]) / 1000)  # ~1273 J
    # power and thermal overlap: the larger; low utilisation (idling) is no throttling
    assert d["throttle_s"] == pytest.approx(0.25)
    assert d["violations_s"]["low_utilization"] == pytest.approx(5.0)
    assert d["violations_s"]["reliability"] == 0


def test_unsupported_counters_are_empty_with_nvmls_reason(nvml: FakeNvml) -> None:
    nvml.unsupported = {"nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetViolationStatus",
                        "nvmlDeviceGetApplicationsClock"}
    before = gpu_state.snapshot({})
    gpu = before["gpu"]
    assert gpu["energy_mj"] is None and gpu["violations_ns"] == {}
    assert gpu["sm_app_clock_mhz"] is None and gpu["sm_clock_mhz"] == 345
    assert gpu["missing"]["energy_mj"] == "Not Supported"
    assert gpu["missing"]["violation_power"] == "Not Supported"
    d = gpu_state.delta(before, gpu_state.snapshot({}))
    assert d["energy_j"] is None and d["throttle_s"] is None


def test_other_processes_are_listed_but_not_ours(nvml: FakeNvml) -> None:
    nvml.procs = [PROBE["procs_during"][0]["pid"], os.getpid()]
    assert gpu_state.snapshot({})["gpu"]["other_pids"] == [466]
    assert gpu_state.snapshot({}, ours={466})["gpu"]["other_pids"] == []


def test_visible_devices_choose_the_gpu(nvml: FakeNvml) -> None:
    assert gpu_state.snapshot({"CUDA_VISIBLE_DEVICES": PROBE["uuid"][:12]})["gpu"]["index"] == 0
    assert gpu_state.snapshot({"CUDA_VISIBLE_DEVICES": "0,1"})["gpu"]["index"] == 0
    assert "NVML sees 1" in gpu_state.snapshot({"CUDA_VISIBLE_DEVICES": "3"})["reason"]
    assert "hides every GPU" in gpu_state.snapshot({"CUDA_VISIBLE_DEVICES": ""})["reason"]
    assert "no GPU with the UUID" in gpu_state.snapshot(
        {"CUDA_VISIBLE_DEVICES": "GPU-ffff"})["reason"]


def test_no_nvml_is_a_reason_not_a_failure(nvml: FakeNvml, monkeypatch) -> None:
    nvml.init_error = NVMLError_LibraryNotFound()
    assert gpu_state.snapshot({}) == {
        "reason": "NVML did not start: NVML Shared Library Not Found"}
    monkeypatch.setitem(sys.modules, "pynvml", None)  # not installed: import fails
    assert gpu_state.snapshot({}) == {
        "reason": "pynvml (the nvidia-ml-py package) is not installed"}
    d = gpu_state.delta({"reason": "x"}, {"reason": "x"})
    assert d["energy_j"] is None and d["reason"] == "x"


@pytest.mark.skipif(importlib.util.find_spec("pynvml") is None, reason="needs nvidia-ml-py")
def test_the_real_pynvml_on_this_machine() -> None:
    """The real library: on a machine without an NVIDIA driver NVML cannot start."""
    state = gpu_state.snapshot({})
    if Path("/dev/nvidia0").exists():
        assert state["gpu"]["sm_clock_max_mhz"] > 0
    else:
        assert state["reason"].startswith("NVML did not start")


def _fake_run(tmp_path: Path, device: str, crate: str) -> RunRecord:
    """One run, through the runner, of a fake burn program that prints one summary line."""
    program = tmp_path / "fake-bench"
    line = f"{device} 8x8 matmul with sync, 3 runs: min 1.000µs median 2.000µs"
    program.write_text(f"#!{sys.executable}\nprint({line!r})\n")
    program.chmod(0o755)
    run = RunDef(experiment="t", program="burn", device=device, mode="mm", shape=(8, 8), reps=3,
                 build="fake", crate=crate)
    ctx = RunContext(PROJECT, sys.executable, tmp_path / "scratch", {"fake": program})
    return execute(run, ctx)


def test_a_cuda_run_records_the_state_before_and_after(tmp_path: Path, nvml: FakeNvml) -> None:
    """Through the runner: snapshots around the spawn only, the delta stored with them."""
    calls_before = len(nvml.calls)
    rec = _fake_run(tmp_path, "cuda", "exec-gpu")
    assert rec.status == "ok", rec.reason
    assert rec.state is not None
    assert rec.state["gpu_before"]["gpu"]["reason_names"] == ["gpu_idle"]
    assert rec.state["gpu_after"]["gpu"]["energy_mj"] == PROBE["energy_mj"]
    assert rec.state["gpu_delta"]["energy_j"] == 0
    # one before, one after, and the SM-clock sampler's while it ran
    assert nvml.calls[calls_before:].count("nvmlInit") == 3
    during = rec.state["gpu_during"]
    assert during["samples"] >= 1 and "reason" not in during, during
    assert during["sm_clock_min_mhz"] == during["sm_clock_max_mhz"]  # the fake's one clock
    assert during["sm_clock_min_mhz"] == rec.state["gpu_before"]["gpu"]["sm_clock_mhz"]
    assert rec.state["cpu_before"]["source"] and rec.state["cpu_after"]["source"]


def test_a_cpu_run_says_why_it_has_no_gpu_state(tmp_path: Path, nvml: FakeNvml) -> None:
    rec = _fake_run(tmp_path, "flex", "exec-cpu")
    assert rec.state is not None
    assert rec.state["gpu_before"] == {"reason": "not an NVIDIA GPU run (device flex)"}
    assert "nvmlInit" not in nvml.calls
