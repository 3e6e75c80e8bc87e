"""JAX's default f32 matmul on the H200 is TF32, told from its `highest` twin by the arrays.

docs/results/h200-2026-12-02/methods-accuracy holds the H200's JAX cuda accuracy runs at the
default precision (the program printed `jax precision unknown`) and at `precision: highest`
(printed fp32). XLA converts f32 to TF32 rounding to nearest with ties away from zero (PTX
cvt.rna); cuBLAS's TF32 (torch, burn) ties to even. Both are TF32, and the report must say so,
label the run `cuda [tf32]` and pair it only with PyTorch's TF32 run.
"""

from __future__ import annotations

import io
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from orchestrator.data import accuracy, dataset
from orchestrator.report import clocks, tables

from ..conftest import PROJECT

STORE = PROJECT / "docs" / "results" / "h200-2026-12-02" / "methods-accuracy"
RUNS = {"jax default": "cab8a89fad1ed9c9", "jax highest": "6c5599c868ca5423"}


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the store: a reader of a WAL store makes its -shm file beside it, and the
    committed folder must stay as it is (tests/data/test_store_readonly)."""
    folder = tmp_path_factory.mktemp("store")
    shutil.copy2(STORE / "results.sqlite", folder / "results.sqlite")
    return folder


def _arrays(store: Path, run_id: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    db = sqlite3.connect(f"file:{store / 'results.sqlite'}?mode=ro", uri=True)
    try:
        found = {name: np.load(io.BytesIO(data)) for name, data in db.execute(
            "SELECT name, data FROM artifacts WHERE run_id=? AND name LIKE '%.npy'", (run_id,))}
    finally:
        db.close()
    return found["a.npy"], found["b.npy"], found["c.npy"]


def test_jax_default_is_tf32_rounded_ties_away(copy: Path) -> None:
    a, b, c = _arrays(copy, RUNS["jax default"])
    found = accuracy.infer_precision(a, b, c)
    assert found.precision == "tf32"
    assert found.from_tf32 < 1e-6  # c is the ties-away TF32 product, to f32 rounding
    assert found.evidence() == "max err 7.72e-3 = TF32 rounding of the inputs 7.72e-3"
    # ties to even alone misses by one TF32 step on the tied elements: not TF32 by that rule
    even = accuracy.infer_precision(a, b, c, rounding="even")
    assert even.precision == "" and 4e-4 < even.from_tf32 < 5e-4


def test_jax_highest_is_fp32(copy: Path) -> None:
    found = accuracy.infer_precision(*_arrays(copy, RUNS["jax highest"]))
    assert found.precision == "fp32" and found.max_err < 2e-6


@pytest.fixture(scope="module")
def rows(copy: Path) -> object:
    return tables.prepare(dataset.load(copy))


def test_the_accuracy_table_names_both_jax_cuda_runs(rows: object) -> None:
    table = tables.accuracy_table(tables.accuracy_rows(rows)).frame
    jax = dict(zip(table["build"], table["arithmetic"], strict=True))
    assert jax["jax cuda [tf32]"] == ("tf32 (inferred: max err 7.72e-3 = TF32 rounding of the "
                                      "inputs 7.72e-3)")
    assert jax["jax cuda"] == "fp32 (printed)"


def test_jax_kernel_ratios_pair_equal_arithmetic(rows: object) -> None:
    frame = clocks.kernel_ratio_table(clocks.select(rows), "jax").frame
    cupti = frame[frame["JAX kernel time"].str.endswith("(cupti)")
                  & frame["PyTorch kernel time"].str.endswith("(cupti)")]
    got = dict(zip(cupti["device"], cupti["ratio of min"], strict=True))
    # TF32 with TF32 (11.8 vs 12.7 µs), FP32 with FP32 (53.8 vs 55.4 µs): not 0.22
    assert got == {"cuda [tf32]": "0.94", "cuda": "0.97"}
