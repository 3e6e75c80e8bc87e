"""The machine's state in the dataset and the report, on a results store built here: the H200's
real program output (tests/data/h200/) with NVML readings through the fake pynvml (the H200's
values), a provoked busy GPU and throttle, and the 2-core box's loaded CPU sweep."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from orchestrator import dataset
from orchestrator.data.store import Store
from orchestrator.records import RunDef, RunRecord
from orchestrator.report import writer as report
from orchestrator.run import gpu_state
from orchestrator.run.sweep import parse_record

from ..run.fake_nvml import FakeNvml

H200 = Path(__file__).parent.parent / "data" / "h200"
CPU_STATE = {"source": "sysfs", "governor": "powersave", "freq_mhz": 1200.0, "min_mhz": 800.0,
             "max_mhz": 3500.0, "boost": "on", "smt": "on", "missing": {}}
HOST = {"cores_usable": 2, "cores_logical": 2, "cpu_model": "Test CPU", "cpu_state": CPU_STATE}


def _state(monkeypatch, busy: bool = False, throttle: bool = False,
           lowered: bool = False) -> dict[str, Any]:
    """NVML before and after a run, as the runner keeps them."""
    fake = FakeNvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    if busy:  # another process keeps the GPU busy: its clock is up, not idle
        fake.procs = [466]
        fake.values.update(reasons=0, clock_sm=1980)
    if lowered:
        fake.values["appclock_sm"] = 1500
    before = gpu_state.snapshot({})
    fake.phase = "load"
    if throttle:
        fake.extra_violation_ns = {"power": 120_000_000}
        fake.values["reasons_after"] = 4  # sw_power_cap
    after = gpu_state.snapshot({})
    return {"gpu_before": before, "gpu_after": after, "gpu_delta": gpu_state.delta(before, after),
            "cpu_before": CPU_STATE, "cpu_after": CPU_STATE}


def _record(store: Store, sweep: str, run: RunDef, stdout: str, state: dict[str, Any],
            load: float = 0.3) -> None:
    rec = RunRecord(run=run, stdout=stdout.encode(), state=state,
                    load_before={"load1": load}, load_after={"load1": load})
    store.record_run(sweep, rec, parse_record(rec))


def _cuda(program: str, **kw: Any) -> RunDef:
    build = {"build": "cuda", "crate": "exec-gpu", "features": ("cuda",)} \
        if program == "burn" else {}
    return RunDef(experiment="methods", program=program, device="cuda", mode="mm",
                  shape=(1024, 1024), reps=20, energy_s=2, **build, **kw)


@pytest.fixture
def results(tmp_path: Path, monkeypatch) -> Path:
    folder = tmp_path / "results"
    config = tmp_path / "e.yaml"
    config.write_text("version: 1\n")
    store = Store(folder)
    with store.writing():
        sweep, _ = store.begin_sweep(config, HOST, [], new=True)
        _record(store, sweep, _cuda("torch"), (H200 / "torch_cuda_fp32.log").read_text(),
                _state(monkeypatch))
        _record(store, sweep, _cuda("torch", precision="tf32"),
                (H200 / "torch_cuda_tf32.log").read_text(),
                _state(monkeypatch, throttle=True, lowered=True))
        _record(store, sweep, _cuda("burn"), (H200 / "burn_cuda_energy.log").read_text(),
                _state(monkeypatch, busy=True))
        # the 2-core box: PyTorch at 1 and 2 threads while another job ran (load 2.9)
        for threads, ms in ((1, "13.800ms"), (2, "22.000ms")):
            run = RunDef(experiment="cpu", program="torch", device="cpu", mode="mm",
                         shape=(1024, 1024), reps=20, threads=threads)
            _record(store, sweep, run, f"torch 2.11.0, threads {threads}\n"
                    f"cpu 1024x1024 matmul with sync, 20 runs: min {ms} median {ms}\n",
                    {"cpu_before": CPU_STATE, "gpu_before": {"reason": "not a GPU run"}},
                    load=2.9)
        store.end_sweep(sweep, "complete")
    return folder


def test_dataset_has_the_state_columns(results: Path) -> None:
    fig = dataset.load(results).figures
    energy = fig[(fig["method"] == "energy") & (fig["stat"] == "joules")]
    assert sorted(energy["value_s"]) == [739.883, 944.982, 1105.207]
    first = fig[fig["method"] == "with_sync"].iloc[0]  # torch fp32, the idle H200
    assert (first["gpu_sm_clock_mhz"], first["gpu_sm_clock_max_mhz"],
            first["gpu_app_clock_mhz"], first["gpu_pstate"]) == (345, 1980, 1980, 0)
    assert (first["gpu_temp_c"], first["gpu_temp_after_c"]) == (39, 59)
    assert first["gpu_power_w"] == pytest.approx(80.567)
    assert (first["gpu_reasons_before"], first["gpu_reasons_after"]) == ("gpu_idle", "none")
    assert first["gpu_energy_j"] == pytest.approx(1272.993)  # the probe's 20 real steps
    assert first["gpu_throttle_s"] == 0 and first["gpu_other_processes"] == 0
    assert (first["cpu_governor"], first["cpu_freq_mhz"], first["cpu_boost"]) == \
        ("powersave", 1200.0, "on")
    burn = fig[(fig["framework"] == "burn")].iloc[0]
    assert burn["gpu_other_processes"] == 1 and burn["gpu_other_pids"] == "466"
    cpu = fig[fig["device"] == "cpu"].iloc[0]
    assert pd.isna(cpu["gpu_sm_clock_mhz"]) and cpu["gpu_state_reason"] == "not a GPU run"


def _section(md: str, title: str) -> str:
    start = md.index(f"## {title}")
    end = md.find("\n## ", start + 1)
    return md[start:end if end > 0 else None]


def test_report_warns_of_the_gpu_and_cpu_state(results: Path, tmp_path: Path) -> None:
    data = dataset.load(results)
    report.write(data, tmp_path / "r")
    md = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    methods = _section(md, "1. Timing methods")
    assert "**another process on the GPU**: burn cuda, warm cache" not in methods  # no cache
    assert "**another process on the GPU**: burn cuda (methods): 1 other compute process " \
           "(pid 466)" in methods
    # the fp32 run was at rest: a GPU warning here is the tf32 run's (where it has a column)
    for line in methods.splitlines():
        assert "**GPU" not in line or "1500 MHz" in line or "0.12 s" in line, line
    cpu = _section(md, "3. CPU builds")
    assert "**CPU governor `powersave`** (cpu): not `performance`" in cpu
    assert "**under load**: PyTorch CPU at 1 thread (cpu) ran at a 1-minute load of 2.90 " \
           "before and 2.90 after (threshold 1 (0.5 × 2 cores))" in cpu
    assert "**threads without effect**: PyTorch CPU is 0.63× faster at 2 threads than at 1: " \
           "the machine was under load" in cpu and "BLAS with its own" not in cpu
    machine = _section(md, "8. The machine around the runs")
    # the tf32 run's own warnings
    assert "**GPU not at full clock when the run started**: PyTorch cuda" in machine
    assert "application clock 1500 MHz below the GPU's max 1980 MHz" in machine
    assert "**GPU throttled during the run**: PyTorch cuda" in machine
    assert "0.12 s of power/thermal violation time during the run; reasons `sw_power_cap` " \
           "set when it ended (39 → 59 °C)" in machine
    assert machine.count("**GPU") == 2 and machine.count("**another process") == 1
    sections = md[md.index("\n## 1. "):]  # the findings at the top count the kinds once more
    assert sections.count("**another process on the GPU**") == 2  # methods and machine
    assert "- **another process on the GPU** × 2, first in" in md
    assert "CPU frequency policy (sysfs): governor powersave, boost on, SMT on, scaling " \
           "800.0–3500.0 MHz, frequency before the runs 1200–1200 MHz." in machine
    assert "| PyTorch cuda (methods) | 345 (1980, 1980) | P0 | 39 → 59 | 81 (700) | " \
           "gpu_idle → none | 1273.0 | 0 | 0 |" in machine
    assert "Warning thresholds: load above 1 (0.5 × 2 cores)" in md


def test_report_energy_table(results: Path, tmp_path: Path) -> None:
    report.write(dataset.load(results), tmp_path / "r")
    energy = pd.read_csv(tmp_path / "r" / "energy.csv")
    rows = {r["matmuls"]: r for _, r in energy.iterrows()}
    assert [rows[n]["framework"].split(" [")[0] for n in (35200, 99300, 44500)] == \
        ["PyTorch cuda", "PyTorch cuda", "burn cuda"]
    fp32 = rows[35200]
    assert fp32["J per matmul"] == "31.398 mJ" and fp32["GFLOP/J"] == 68.4
    assert fp32["mean power W"] == 552
    assert rows[99300]["GFLOP/J"] == 288.2  # tf32: 2·1024³·99300 / 739.883 J
    assert rows[44500]["J per matmul"] == "21.236 mJ"
