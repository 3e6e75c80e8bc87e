"""NVML answering oddly: a call that blocks is bounded, values of an
unexpected type are kept out when stored and tolerated when read (a store that already holds
them exports, reports and compares)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from orchestrator.cli import main
from orchestrator.data import state_columns
from orchestrator.run import gpu_state

from ..report.fake_stores import store
from .fake_nvml import FakeNvml


def test_a_blocking_nvml_call_is_bounded_and_not_repeated(nvml: FakeNvml) -> None:
    release = threading.Event()
    plain = nvml.nvmlDeviceGetPowerUsage
    nvml.nvmlDeviceGetPowerUsage = lambda handle: (release.wait(30), plain(handle))[1]
    started = time.monotonic()
    state = gpu_state.snapshot({}, timeout_s=0.5)
    assert "did not answer within 0.5 s" in state["reason"] and "gpu" not in state
    # while it hangs, the next snapshot says so at once rather than piling up threads
    assert "still blocked" in gpu_state.snapshot({}, timeout_s=0.5)["reason"]
    assert time.monotonic() - started < 5
    release.set()
    deadline = time.monotonic() + 10
    while any(t.is_alive() for t in gpu_state._hung) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gpu_state.snapshot({})["gpu"]["power_w"] == pytest.approx(80.567)


ODD = {"nvmlDeviceGetClockInfo": "1980", "nvmlDeviceGetPowerUsage": float("nan"),
       "nvmlDeviceGetPerformanceState": 2**70, "nvmlDeviceGetTemperature": True}


def test_odd_nvml_values_are_kept_out_with_the_reason(nvml: FakeNvml) -> None:
    for name, value in ODD.items():
        setattr(nvml, name, lambda *args, value=value: value)
    gpu = gpu_state.snapshot({})["gpu"]
    for field in ("sm_clock_mhz", "mem_clock_mhz", "power_w", "pstate", "temp_c"):
        assert gpu[field] is None, field
    assert gpu["missing"]["sm_clock_mhz"] == \
        "NVML gave '1980' (str), not a whole number in 0..100000"
    assert "nan (float)" in gpu["missing"]["power_w"]
    assert gpu["sm_clock_max_mhz"] == 1980  # the fields NVML answered well are kept
    columns = state_columns.columns(json.dumps({"gpu_before": {"gpu": gpu}}))
    assert columns["gpu_sm_clock_mhz"] is None and columns["gpu_sm_clock_max_mhz"] == 1980
    assert "sm_clock_mhz" in columns["gpu_state_reason"]


DAMAGED_STATES = [
    {"gpu_before": {"gpu": {"sm_clock_mhz": "1980", "power_w": float("nan"),
                            "pstate": 2**70, "reason_names": [1, None], "other_pids": ["x"],
                            "missing": {}}}},
    {"gpu_before": {"gpu": {"sm_clock_mhz": [1], "missing": "x"}}, "cpu_before": "odd"},
    {"gpu_before": "odd"},
    [1, 2],
]


@pytest.mark.parametrize("state", DAMAGED_STATES)
def test_a_store_holding_odd_nvml_values_exports_reports_and_compares(
        tmp_path: Path, state: object) -> None:
    folder = store(tmp_path / "r", [{"with sync": np.full(20, 1e-3)}])
    with sqlite3.connect(folder / "results.sqlite") as db:
        db.execute("UPDATE runs SET state_json = ?", (json.dumps(state),))
    assert main(["export", str(folder), "--csv", str(tmp_path / "x.csv")]) == 0
    assert main(["report", str(folder), "--out", str(tmp_path / "rep")]) == 0
    other = store(tmp_path / "o", [{"with sync": np.full(20, 2e-3)}])
    assert main(["compare", str(folder), str(other), "--out", str(tmp_path / "cmp")]) == 0
    header, row = (tmp_path / "x.csv").read_text().splitlines()[:2]
    cells = dict(zip(header.split(","), row.split(","), strict=False))
    assert cells["gpu_sm_clock_mhz"] == "" and cells["gpu_pstate"] == ""


def test_a_counter_that_went_backwards_is_not_energy(nvml: FakeNvml) -> None:
    """A driver reload (or a reset GPU) between the snapshots: the energy counter read
    9,000,000 mJ less after the run, stored as `gpu_energy_j = -9000`; a violation counter
    likewise. Now neither is stored, and the row's reason names the counter."""
    power = nvml.values["violation_POWER"]
    nvml.values = {**nvml.values, "energy_mj": 20_000_000,
                   "violation_POWER": {**power, "violation_time": 6_000_000_000}}
    before = gpu_state.snapshot({})
    nvml.values = {**nvml.values, "energy_mj": 11_000_000 - sum(nvml.values["energy_steps_mj"]),
                   "violation_POWER": {**power, "violation_time": 1_000_000_000}}
    nvml.phase = "load"
    after = gpu_state.snapshot({})
    assert after["gpu"]["energy_mj"] == 11_000_000
    d = gpu_state.delta(before, after)
    assert d["energy_j"] is None and d["backwards"] == ["energy", "power"]
    assert "power" not in d["violations_s"] and d["violations_s"]["thermal"] == 0
    state = json.dumps({"gpu_before": before, "gpu_after": after, "gpu_delta": d})
    row = state_columns.columns(state)
    assert row["gpu_energy_j"] is None
    assert "NVML counter went backwards: energy, power" in row["gpu_state_reason"]
    # an older store recorded the negative delta: read as no energy
    old = json.dumps({"gpu_before": before, "gpu_delta": {"energy_j": -9000.0,
                                                          "violations_s": {"power": -5.0}}})
    assert state_columns.columns(old)["gpu_energy_j"] is None
