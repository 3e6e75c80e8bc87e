"""Ratios between equals: burn is paired with the PyTorch run of its own arithmetic, a TF32 vs
FP32 pair is set apart and flagged; on the committed H200 store and on one made from real logs."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from orchestrator.data import dataset
from orchestrator.data.parse import parse_text
from orchestrator.data.store import Store
from orchestrator.records import RunDef, RunRecord
from orchestrator.report import ratios, tables
from orchestrator.report import writer as report
from orchestrator.report.sample_sets import sample_sets

from ..conftest import PROJECT

H200 = PROJECT / "docs" / "results" / "h200-2026-11-30"
LOGS = PROJECT / "tests" / "data" / "h200"
BURN_CUDA_ACCURACY = "6de1ebf79a34c59a"  # the H200 store's burn cuda accuracy run


def _h200_arrays(run_id: str) -> dict[str, bytes]:
    db = sqlite3.connect(f"file:{H200 / 'results.sqlite'}?mode=ro&immutable=1", uri=True)
    try:
        return {name: bytes(data) for name, data in db.execute(
            "SELECT name, data FROM artifacts WHERE run_id=?", (run_id,))}
    finally:
        db.close()


def _fig(folder: Path) -> tuple[pd.DataFrame, dict[Any, np.ndarray]]:
    data = dataset.load(folder)
    return tables.prepare(data), sample_sets(data.samples)


@pytest.fixture(scope="module")
def from_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of the real H200 logs: torch fp32, torch tf32, burn; and burn's accuracy run
    (the H200 store's real arrays, with burn's real headers)."""
    folder = tmp_path_factory.mktemp("logs") / "results"
    burn_log = (LOGS / "burn_cuda_energy.log").read_text()
    accuracy_out = "".join(burn_log.splitlines(keepends=True)[:2]) + \
        "cuda 256x256 matmul accuracy: wrote /tmp/acc\n"
    cuda = {"build": "cuda", "crate": "exec-gpu", "features": ("cuda",)}
    runs = [
        (RunDef("methods", "torch", "cuda", "mm", (1024, 1024), 20),
         (LOGS / "torch_cuda_fp32.log").read_text(), {}),
        (RunDef("methods", "torch", "cuda", "mm", (1024, 1024), 20, precision="tf32"),
         (LOGS / "torch_cuda_tf32.log").read_text(), {}),
        (RunDef("methods", "burn", "cuda", "mm", (1024, 1024), 20, **cuda), burn_log, {}),
        (RunDef("accuracy", "burn", "cuda", "accuracy", (256, 256), 20, **cuda), accuracy_out,
         _h200_arrays(BURN_CUDA_ACCURACY)),
    ]
    store = Store(folder)
    with store.writing():
        sweep, _ = store.begin_sweep(PROJECT / "experiments.yaml", {}, [], True)
        for i, (run, out, arrays) in enumerate(runs):
            rec = RunRecord(run=run, stdout=out.encode(), started_at=float(i),
                            artifacts=arrays)
            store.record_run(sweep, rec, parse_text(out))
        store.end_sweep(sweep, "done")
    return folder


def test_logs_store_records_printed_and_inferred_precision(from_logs: Path) -> None:
    f = dataset.load(from_logs).figures
    got = {(fw, p, s) for fw, p, s in zip(f["framework"], f["precision"],
                                          f["precision_source"], strict=True)}
    # torch printed both; burn said 'unknown' and its 256² accuracy arrays say TF32, which its
    # 1024² figures take with the shape they came from
    assert got == {("torch", "fp32", "printed"), ("torch", "tf32", "printed"),
                   ("burn", "tf32", "inferred"), ("burn", "tf32", "inferred at 256x256")}


def test_burn_tf32_pairs_with_torch_tf32_and_the_fp32_pair_is_set_apart(from_logs: Path) -> None:
    fig, sets = _fig(from_logs)
    plain = ratios.ratio_table(ratios.pairs(fig, sets)).frame
    assert set(plain["PyTorch"]) == {"PyTorch cuda [tf32]"}
    assert set(plain["burn"]) == {"burn cuda [tf32]"} and set(plain["arithmetic"]) == {"tf32"}
    device = plain[plain["method"] == "device time"].iloc[0]
    # burn's profile_with flush against torch's TF32 cuda.Event: far from the 1.2x of FP32
    assert float(device["min ratio"].rstrip("×")) > 2.5
    apart = ratios.mixed_ratio_table(ratios.pairs(fig, sets)).frame
    assert set(apart["arithmetic"]) == {"TF32 vs FP32"}
    assert set(apart["PyTorch"]) == {"PyTorch cuda"}
    (note,) = ratios.arithmetic_checks(ratios.pairs(fig, sets))
    assert note.startswith("**different arithmetic**: burn cuda [tf32] (TF32) / PyTorch cuda "
                           "(FP32): ")
    assert "no PyTorch TF32 run" not in note  # it has one, and is paired with it


def test_h200_headline_ratio_is_flagged_not_plain(tmp_path: Path) -> None:
    fig, sets = _fig(H200)
    plain = ratios.ratio_table(ratios.pairs(fig, sets)).frame
    assert not plain["burn"].str.contains("cuda").any()  # only the CPU builds, fp32 both
    assert set(plain["arithmetic"]) == {"fp32"}
    apart = ratios.mixed_ratio_table(ratios.pairs(fig, sets)).frame
    device = apart[apart["method"] == "device time"]
    assert device[["arithmetic", "burn", "PyTorch", "min ratio"]].values.tolist() == [
        ["TF32 vs FP32", "burn cuda [tf32]", "PyTorch cuda", "1.20×"]]
    (note,) = ratios.arithmetic_checks(ratios.pairs(fig, sets))
    assert "no PyTorch TF32 run to pair it with" in note
    report.write(dataset.load(H200), tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "| burn cuda [tf32] | 7.720e-03 |" in text
    assert ("tf32 (inferred: max err 7.72e-3 = TF32 rounding of the inputs 7.72e-3)" in text)
    assert "| torch cuda | 3.787e-06 |" in text
    assert "fp32 (inferred: max err 3.79e-6 at f32 level" in text
    assert "Set apart: burn / PyTorch of different arithmetic" in text
    assert "**different arithmetic**" in text


def test_logs_without_precision_pair_as_before() -> None:
    """The chapter's own logs never printed their arithmetic: the pairs stay plain."""
    parsed = parse_text((PROJECT / "tests" / "data" / "chapter_listings.log").read_text())
    data = dataset.from_parse(parsed, "chapter.log")
    fig, sets = tables.prepare(data), sample_sets(data.samples)
    assert ratios.mixed_ratio_table(ratios.pairs(fig, sets)).frame.empty
    assert ratios.arithmetic_checks(ratios.pairs(fig, sets)) == []
    assert "arithmetic" not in ratios.ratio_table(ratios.pairs(fig, sets)).frame


def test_numpy_arrays_of_the_fixture_are_real() -> None:
    arrays = _h200_arrays(BURN_CUDA_ACCURACY)
    assert {k: np.load(io.BytesIO(v)).shape for k, v in arrays.items()} == {
        "a.npy": (256, 256), "b.npy": (256, 256), "c.npy": (256, 256)}


def test_one_label_over_two_arithmetics_is_split_by_what_each_run_says() -> None:
    """JAX's `precision: highest` prints FP32; its default prints `unknown` on a GPU (TF32 by
    evidence only): without an accuracy run both were 'cuda', one column of table 1 over two
    computations (seen on the H200, 2026-12-03). Each says its own now; a label that holds one
    arithmetic (a TF32 torch run beside an FP32 one, a chapter log's unknowns) is as before."""
    import pandas as pd

    from orchestrator.report import arithmetic
    fig = pd.DataFrame({
        "framework": ["jax", "jax", "torch", "torch", "burn", "burn"],
        "device": ["cuda"] * 6,
        "label": ["cuda", "cuda", "cuda", "cuda", "cuda", "flex"],
        "precision": ["", "fp32", "fp32", "tf32", "", ""]})
    assert arithmetic.tag_labels(fig).tolist() == [
        "cuda [arithmetic unknown]", "cuda [fp32]", "cuda", "cuda [tf32]", "cuda", "flex"]
