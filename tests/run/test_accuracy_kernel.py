"""The kernel that computed each accuracy result.

An accuracy run has no cache action, so it used to get no cache record and no autotune kernel.
On an autotuned device its cubecl store is now looked at before and after (nothing removed):
the record names the winner for the run's matmul, and the accuracy table shows it. The store is
the real H200 cubecl database (tests/data/h200/cubecl_env_cold), in a project-like tree.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from orchestrator.records import CacheState, RunDef
from orchestrator.report.tables import accuracy_rows, accuracy_table
from orchestrator.run import cache_record
from orchestrator.run.runner import prepare_cache

from ..conftest import PROJECT

FIXTURE = PROJECT / "tests" / "data" / "h200" / "cubecl_env_cold"
WINNER = "matmul_specialized_tma_mma"


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    crate = root / "bench_rust" / "exec-gpu"
    crate.mkdir(parents=True)
    (root / "bench_rust" / "Cargo.toml").write_text("[workspace]\n")
    (crate / "Cargo.toml").write_text("[package]\n")
    env = root / "bench_rust" / "target" / "environment"
    env.mkdir(parents=True)
    for name in ("default.db", "default.db-wal"):
        (env / name).write_bytes((FIXTURE / name).read_bytes())
    return root


def test_an_accuracy_run_records_the_autotune_winner(tmp_path: Path) -> None:
    root = _project(tmp_path)
    run = RunDef(experiment="accuracy", program="burn", device="cuda", mode="accuracy",
                 shape=(1024, 1024), reps=1, build="cuda", crate="exec-gpu", features=("cuda",))
    assert run.cache == CacheState.NONE
    info = prepare_cache(run, root)
    assert info is not None and info["action"] == "none" and "removed" not in info
    cache_record.finish(run, info)
    assert info["autotune"]["kernel"] == WINNER
    assert info["wrote"] is False
    assert (root / "bench_rust" / "target" / "environment" / "default.db").exists()
    # a timing run without a cache setting still gets no record (unchanged)
    mm = RunDef(experiment="methods", program="burn", device="cuda", mode="mm",
                shape=(1024, 1024), reps=1, build="cuda", crate="exec-gpu", features=("cuda",))
    assert prepare_cache(mm, root) is None


def test_the_accuracy_table_shows_the_kernel() -> None:
    base = {"method": "accuracy", "shape": "1024x1024", "op": "matmul", "value_s": 1e-3}
    fig = pd.DataFrame([
        {**base, "framework": "burn", "label": "cuda", "stat": "max_err_f64_ref",
         "autotune_kernel": WINNER},
        {**base, "framework": "torch", "label": "cpu", "stat": "max_err_f64_ref",
         "autotune_kernel": ""}])
    table = accuracy_table(accuracy_rows(fig)).frame
    assert list(table["autotune kernel"]) in ([WINNER, ""], ["", WINNER])
    without = accuracy_table(accuracy_rows(fig.assign(autotune_kernel=""))).frame
    assert "autotune kernel" not in without.columns
