"""The figure columns of kernel time (`profiler`, `kernel`) in old stores: a version-1 store
(the committed H200 example) reads with them empty, and a format-2 store written before they
existed gets them when a sweep opens it (and reads without them before that)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from orchestrator.data import dataset
from orchestrator.data.parse import parse_text
from orchestrator.data.store import Store
from orchestrator.records import RunDef, RunRecord

from ..conftest import DATA, PROJECT, write


def test_version_1_store_reads_with_empty_kernel_columns() -> None:
    data = dataset.load(PROJECT / "docs" / "results" / "h200-2026-11-30")
    assert not data.figures.empty
    assert set(data.figures["profiler"].fillna("")) == {""}
    assert set(data.figures["kernel"].fillna("")) == {""}
    assert set(data.figures["profile_of"].fillna("")) == {""}


def test_format_2_store_from_before_the_columns(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    run = RunDef(experiment="m", program="torch", device="cuda", mode="mm", shape=(1024, 1024),
                 reps=20)
    log = (DATA / "h200" / "torch_cuda_fp32.log").read_bytes()
    with Store(folder).writing() as store:
        sweep, _ = store.begin_sweep(write(tmp_path / "e.yaml", "version: 1\n"), {}, [], True)
    db = sqlite3.connect(folder / "results.sqlite")
    db.execute("ALTER TABLE figures DROP COLUMN kernel")
    db.execute("ALTER TABLE figures DROP COLUMN profiler")
    db.commit()
    db.close()
    assert dataset.load(folder).figures.empty  # reads, no KeyError
    with Store(folder).writing() as store:  # a sweep resumes it: the columns come back
        store.record_run(sweep, RunRecord(run=run, stdout=log), parse_text(log.decode()))
    figures = dataset.load(folder).figures
    kernels = figures[figures["stat"] == "kernel_min"]
    assert list(kernels["profiler"]) == ["cupti"]
    assert kernels["kernel"].iloc[0].startswith("sm80_xmma_gemm_f32f32")
