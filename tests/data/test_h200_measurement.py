"""The second H200 sweep (docs/results/h200-2026-12-01, 2026-12-01): what each clock measured, the
arithmetic of every GPU run, caches proven, the GPU's state, and a provoked shared-GPU warning.

These are the measurement's done-criteria checked on the committed real store, so that a
change to the parser, the dataset or the report that loses one of them fails here.
"""

from __future__ import annotations

import pandas as pd
import pytest

from orchestrator.data import dataset
from orchestrator.report import writer as report

from ..conftest import PROJECT

H200 = PROJECT / "docs" / "results" / "h200-2026-12-01"
SHARED = H200 / "shared-gpu"


@pytest.fixture(scope="module")
def figures() -> pd.DataFrame:
    return dataset.load(H200).figures


def _one(f: pd.DataFrame, **where: object) -> float:
    rows = f
    for column, value in where.items():
        rows = rows[rows[column] == value]
    assert len(rows) == 1, (where, rows[["run_id", "method", "stat", "value_s"]])
    return float(rows["value_s"].iloc[0])


def _methods(f: pd.DataFrame) -> pd.DataFrame:
    return f[(f["experiment"] == "methods") & (f["device"] == "cuda")]


def test_every_gpu_run_has_its_arithmetic(figures: pd.DataFrame) -> None:
    gpu = figures[(figures["device"] == "cuda") & (figures["status"] == "ok")]
    assert set(gpu["precision"]) == {"fp32", "tf32"}
    burn = gpu[gpu["framework"] == "burn"]
    # the store's accuracy runs were 256² only: its 1024² figures say where their label is from
    assert set(burn["precision"]) == {"tf32"}
    assert set(burn["precision_source"]) <= {"inferred", "inferred at 256x256"}
    assert set(burn[burn["shape"] == "1024x1024"]["precision_source"]) == {"inferred at 256x256"}
    torch = gpu[gpu["framework"] == "torch"]
    assert set(torch["precision_source"]) == {"printed"}


def test_queued_device_time_is_within_5_percent_of_the_kernel_time(figures: pd.DataFrame) -> None:
    m = _methods(figures)
    torch = m[(m["framework"] == "torch") & (m["precision"] == "fp32") & (m["role"] == "measure")]
    queued = _one(torch, method="device_time_queued", stat="min")
    cupti = _one(torch[torch["profiler"] == "cupti"], method="kernel_time", stat="min")
    event = _one(torch, method="device_time", stat="min")
    assert abs(queued / cupti - 1) < 0.05 < event / cupti - 1  # the chapter's Event holds the gap
    burn = m[m["framework"] == "burn"]
    queued = _one(burn[burn["role"] == "measure"], method="device_time_queued", stat="min")
    ncu = _one(burn[burn["profiler"] == "ncu"], method="kernel_time", stat="min")
    assert abs(queued / ncu - 1) < 0.05
    kernels = burn[(burn["profiler"] == "ncu") & (burn["stat"] == "kernel_min")]
    assert kernels["kernel"].str.startswith("matmul_entry_").all() and len(kernels) == 1


def test_burn_autotune_choice_and_cold_runs_match_the_priming_cost(figures: pd.DataFrame) -> None:
    burn = figures[(figures["framework"] == "burn") & (figures["device"] == "cuda")
                   & (figures["experiment"] != "accuracy")]
    tuned = burn[burn["role"] != "profile"]  # a profile run under ncu keeps no cache record
    assert set(tuned["autotune_kernel"]) == {"matmul_specialized_tma_mma"}
    first = burn[(burn["method"] == "first_call_after_sync") & (burn["experiment"] == "first-call")]
    cold = first[first["cache"] == "cold"]["value_s"]
    assert len(cold) == 3
    primed = _one(burn[burn["role"] == "priming"], method="first_call_after_sync")
    assert cold.min() > 0.8 * primed and cold.max() < 1.2 * primed  # both find no cache at all
    assert (first[first["cache"] == "warm"]["value_s"] < 0.1 * cold.min()).all()
    warm = burn[(burn["cache"] == "warm") & (burn["role"] == "measure")]
    assert warm["cache_proof"].str.startswith("warm, no autotune").all()


def test_every_gpu_run_has_the_gpu_state_and_energy(figures: pd.DataFrame) -> None:
    gpu = figures[(figures["device"] == "cuda") & (figures["status"] == "ok")]
    assert (gpu["gpu_sm_clock_max_mhz"] == 1980).all()
    assert gpu["gpu_energy_j"].notna().all() and (gpu["gpu_other_processes"] == 0).all()
    energy = _methods(figures)
    joules = energy[(energy["method"] == "energy") & (energy["stat"] == "joules")]
    assert set(zip(joules["framework"], joules["precision"], strict=True)) == {
        ("torch", "fp32"), ("torch", "tf32"), ("burn", "tf32")}


def test_report_pairs_equal_arithmetic_and_flags_the_rest(tmp_path: object) -> None:
    out = tmp_path / "r"  # type: ignore[operator]
    report.write(dataset.load(H200), out)
    ratios = pd.read_csv(out / "ratios.csv")
    cuda = ratios[ratios["burn"].str.contains("cuda")]
    assert not cuda.empty and (cuda["PyTorch"] == "PyTorch cuda [tf32]").all()
    mixed = pd.read_csv(out / "ratios_mixed.csv")
    assert set(mixed["arithmetic"]) == {"TF32 vs FP32"}
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "What each clock measured: burn cuda [tf32]" in text
    assert "30% above the kernel time" in text  # PyTorch FP32's Event holds the launch gap


def test_the_provoked_shared_gpu_run_is_flagged(tmp_path: object) -> None:
    data = dataset.load(SHARED)
    assert (data.figures["gpu_other_processes"] >= 1).all()
    out = tmp_path / "r"  # type: ignore[operator]
    report.write(data, out)
    assert "**another process on the GPU**" in (out / "report.md").read_text(encoding="utf-8")
