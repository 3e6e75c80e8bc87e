"""The figure columns of kernel time (`profiler`, `kernel`) in old stores: a version-1 store
(the committed H200 example) reads with them empty, and a format-5 store written before they
existed (formats 2 to 5 gained them in place) reads through its migration and gets them when a
sweep opens it (format 6: one shape)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from orchestrator.data import dataset, schema
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


def test_format_5_store_from_before_the_columns(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    run = RunDef(experiment="m", program="torch", device="cuda", mode="mm", shape=(1024, 1024),
                 reps=20)
    log = (DATA / "h200" / "torch_cuda_fp32.log").read_bytes()
    with Store(folder).writing() as store:
        sweep, _ = store.begin_sweep(write(tmp_path / "e.yaml", "version: 1\n"), {}, [], True)
    db = sqlite3.connect(folder / "results.sqlite")
    db.execute("ALTER TABLE figures DROP COLUMN kernel")
    db.execute("ALTER TABLE figures DROP COLUMN profiler")
    db.execute("UPDATE meta SET value='5' WHERE key='format_version'")
    db.commit()
    db.close()
    assert dataset.load(folder).figures.empty  # reads (a migrated copy), no KeyError
    # a sweep resumes it: migrated, the columns come back, and its first run is recorded
    with Store(folder).writing() as store:
        assert schema.version_of(store.db) == schema.VERSION
        store.record_run(sweep, RunRecord(run=run, stdout=log), parse_text(log.decode()))
    figures = dataset.load(folder).figures
    kernels = figures[figures["stat"] == "kernel_min"]
    assert list(kernels["profiler"]) == ["cupti"]
    assert kernels["kernel"].iloc[0].startswith("sm80_xmma_gemm_f32f32")
