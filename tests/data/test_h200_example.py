"""The first committed H200 sweep (docs/results/h200-2026-11-30, format 1) reads back, and the
report says what it showed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from orchestrator.data import dataset
from orchestrator.report import writer as report

from ..conftest import PROJECT

H200 = PROJECT / "docs" / "results" / "h200-2026-11-30"


def test_h200_store_has_the_whole_chapter() -> None:
    data = dataset.load(H200)
    runs = data.runs
    measured = runs[runs["role"] == "measure"]
    assert sorted(measured["status"].value_counts().items()) == [("failed", 1), ("ok", 23),
                                                                 ("skipped", 15)]
    assert runs[runs["role"] == "priming"]["experiment"].tolist() == ["methods"]
    assert data.host["gpus"][0]["name"] == "NVIDIA H200"
    f = data.figures
    cold = f[(f["experiment"] == "first-call") & (f["framework"] == "burn")
             & (f["method"] == "first_call_after_sync")]
    by_process = dict(zip(cold["process"], cold["value_s"], strict=True))
    assert by_process[1] > 5 * by_process[2] > 1.0  # cold autotune, then kernel compilation
    assert set(cold["cache"]) == {"cold", "warm"}


def test_cold_runs_removed_and_rewrote_the_cache_folder() -> None:
    data = dataset.load(H200)
    runs = data.runs
    cold = runs[(runs["experiment"] == "first-call") & (runs["cache"] == "cold")
                & (runs["status"] == "ok")]
    record = json.loads(cold["cache_record"].iloc[0])
    assert record["path"].endswith("bench_rust/target/environment")
    assert record["action"] == "delete" and record["wrote"] is True
    assert record["removed"]["files"] >= 1  # the methods experiment had filled it


def test_report_flags_what_the_h200_showed(tmp_path: Path) -> None:
    report.write(dataset.load(H200), tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "**call overhead**: burn cuda [tf32] no sync" in text  # its arithmetic: inferred
    assert "**profile window too short**: burn cuda [tf32] device time without flush" in text
    assert "**inaccurate**: burn cuda [tf32] is 7.720e-03" in text  # TF32, inferred
    assert "this build computes in TF32 (inferred" in text
    assert "| PyTorch CPU | 16.075ms | 1.304ms | mkl |" in text


def test_reparse_rebuilds_the_same_figures_from_raw_output(tmp_path: Path) -> None:
    import shutil

    from orchestrator.cli import main

    shutil.copy(H200 / "results.sqlite", tmp_path / "results.sqlite")
    (tmp_path / "results.sqlite").chmod(0o644)
    before = dataset.load(tmp_path).figures
    assert main(["reparse", str(tmp_path)]) == 0
    after = dataset.load(tmp_path).figures
    key = ["run_id", "method", "stat", "label"]
    assert len(after) == len(before) > 200
    assert np.array_equal(after.sort_values(key)["value_s"].to_numpy(float),
                          before.sort_values(key)["value_s"].to_numpy(float), equal_nan=True)
