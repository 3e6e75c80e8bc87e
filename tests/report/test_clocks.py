"""The report's "what each clock measured" tables and the device-time check, from a store
built through the store API out of bench_py's and burn's real H200 output and ncu's real CSVs
(tests/data/h200): the path a sweep on the H200 takes, minus the GPU."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from orchestrator.data import dataset
from orchestrator.data.parse import parse_text
from orchestrator.data.store import Store
from orchestrator.records import Context, Role, RunDef, RunRecord
from orchestrator.report import clocks, writer
from orchestrator.report.tables import prepare
from orchestrator.run import profile

from ..conftest import DATA, write

H200 = DATA / "h200"


def _record(store: Store, sweep: str, run: RunDef, log: str, csv: str | None = None) -> None:
    text = (H200 / log).read_bytes()
    parsed = parse_text(text.decode(), Context(framework=run.program))
    rec = RunRecord(run=run, stdout=text, role=Role.PROFILE if csv else Role.MEASURE)
    if csv is not None:
        rec.artifacts = {profile.ARTIFACT: (H200 / csv).read_bytes()}
        parsed = profile.add_figures(rec, parsed)
    store.record_run(sweep, rec, parsed)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("clocks")
    folder = tmp / "results"
    torch = RunDef(experiment="methods", program="torch", device="cuda", mode="mm",
                   shape=(1024, 1024), reps=20)
    burn = RunDef(experiment="methods", program="burn", device="cuda", mode="mm",
                  shape=(1024, 1024), reps=20, build="cuda", crate="exec-gpu",
                  features=("cuda",))
    with Store(folder).writing() as store:
        sweep, _ = store.begin_sweep(write(tmp / "e.yaml", "version: 1\n"), {}, [], True)
        _record(store, sweep, torch, "torch_cuda_fp32.log")
        # the profile run: the program's figures (kept, never chapter figures) and ncu's
        _record(store, sweep, replace(torch, profile="ncu"), "torch_cuda_fp32.log",
                "ncu_window_torch_fp32.csv")
        _record(store, sweep, burn, "burn_cuda_energy.log")
        _record(store, sweep, replace(burn, profile="ncu"), "burn_cuda_energy.log",
                "ncu_burn_stdout_mixed.csv")
    return folder


def _cells(table) -> dict[str, tuple[str, str]]:
    return {r["clock"]: (r["min"], r["median"]) for _, r in table.frame.iterrows()}


def test_torch_table_decomposes_the_device_time(results: Path) -> None:
    data = dataset.load(results)
    tables = {t.name: t for t in clocks.clock_tables(clocks.select(prepare(data)))}
    torch = _cells(tables["clocks_torch_cuda_1024x1024"])
    assert torch["no sync"] == ("11.749µs", "13.945µs")
    assert torch["with sync"] == ("71.142µs", "74.180µs")
    assert torch["device time"] == ("68.096µs", "69.280µs")
    assert torch["device time queued"] == ("57.888µs", "58.256µs")
    assert torch["read-back"] == ("83.699µs", "87.140µs")
    assert torch["kernel time (CUPTI)"] == ("55.295µs", "55.360µs")
    # ncu's words say its cache state: L2 as the timed runs had it
    assert torch["kernel time (ncu, L2 warm (--cache-control none))"] == ("56.448µs", "56.576µs")
    assert torch["= launch gap"] == ("12.801µs", "13.920µs")  # 68.096 - 55.295 (CUPTI)
    assert torch["= queued gap"] == ("2.593µs", "2.896µs")
    assert torch["= sync overhead"] == ("3.046µs", "4.900µs")
    assert torch["= read-back extra"] == ("12.557µs", "12.960µs")
    kernels = clocks.kernel_table(clocks.select(prepare(data))).frame
    torch_kernels = kernels[kernels["run"] == "PyTorch cuda"]
    assert list(torch_kernels["profiler"]) == ["CUPTI", "ncu"]
    assert list(torch_kernels["launches"]) == ["20", "20"]
    assert torch_kernels["kernel"].iloc[1].endswith("[grid (8, 16, 1) block (128, 1, 1)]")
    assert torch_kernels["kernel"].iloc[0].startswith("sm80_xmma_gemm_f32f32_f32f32_f32_nn")


def test_burn_table_names_its_kernels_and_says_why_no_per_matmul_time(results: Path) -> None:
    data = dataset.load(results)
    by_name = {t.name: t for t in clocks.clock_tables(clocks.select(prepare(data)))}
    table = by_name["clocks_burn_cuda_1024x1024"]
    assert _cells(table)["device time"] == ("92.320µs", "96.112µs")
    assert "kernel time (ncu, L2 warm (--cache-control none))" not in _cells(table)
    kernels = clocks.kernel_table(clocks.select(prepare(data))).frame
    burn = kernels[kernels["run"] == "burn cuda"]
    assert [k.split("_f32")[0] for k in burn["kernel"]] == [
        "matmul_entry_lhs", "full_kernel_c", "shared_sum_kernel_t"]
    assert list(burn["launches"]) == ["13", "3", "3"]
    assert clocks.undivided(clocks.select(prepare(data))) == [
        "burn cuda 1024x1024: ncu's launches do not divide evenly into --reps matmuls, so no "
        "per-matmul kernel time from ncu (its kernels are listed one by one)."]


def test_device_time_check_says_why(results: Path) -> None:
    warnings = clocks.device_time_excess(clocks.select(prepare(dataset.load(results))))
    assert len(warnings) == 1  # torch's device time; the queued one is within 5% of CUPTI
    # (burn's 92 µs device time has no per-matmul kernel time here to be compared with)
    assert warnings[0].startswith("PyTorch cuda 1024x1024: device time min 68.096µs is 23% "
                                  "above the kernel time 55.295µs (CUPTI)")
    assert "recorded on an idle stream" in warnings[0]


def test_profile_runs_program_figures_stay_out_of_chapter_tables(results: Path) -> None:
    data = dataset.load(results)
    fig = prepare(data)
    assert set(fig[fig["role"] == "profile"]["profiler"]) == {"ncu"}
    raw = data.figures
    profile_rows = raw[raw["role"] == "profile"]
    assert {"device_time", "with_sync"} <= set(profile_rows["method"])  # kept in the dataset
    measured = raw[raw["role"] == "measure"]["run_id"].unique()
    assert set(profile_rows["profile_of"]) <= set(measured)


def test_report_shows_the_tables(results: Path, tmp_path: Path) -> None:
    writer.write(dataset.load(results), tmp_path)
    report = (tmp_path / "report.md").read_text()
    assert "What each clock measured: PyTorch cuda 1024x1024" in report
    assert "| = launch gap | 12.801µs | 13.920µs |" in report
    assert "### Kernels each framework ran" in report and "matmul_entry_lhs_f32" in report
    csv = pd.read_csv(tmp_path / "clocks_torch_cuda_1024x1024.csv")
    assert list(csv.columns) == ["clock", "min", "median", "what it holds"]


def test_kernel_ratio_needs_both_frameworks(results: Path) -> None:
    table = clocks.kernel_ratio_table(clocks.select(prepare(dataset.load(results))))
    assert table.missing  # burn has no per-matmul ncu time in this capture
    fig = prepare(dataset.load(results))
    burn = fig[(fig["framework"] == "torch") & (fig["method"] == "kernel_time")
               & (fig["profiler"] == "ncu") & (fig["kernel"] == "")].copy()
    burn["framework"] = "burn"
    burn["value_s"] = burn["value_s"] * 0.5
    table = clocks.kernel_ratio_table(clocks.select(pd.concat([fig, burn], ignore_index=True)))
    ratios = set(zip(table.frame["ratio of median"], table.frame["PyTorch kernel time"],
                     strict=True))
    assert ("0.50", "56.576µs (ncu)") in ratios


def test_failures_table_names_a_skipped_profile_run(tmp_path: Path) -> None:
    run = RunDef(experiment="methods", program="torch", device="cuda", mode="mm",
                 shape=(1024, 1024), reps=20, profile="ncu")
    folder = tmp_path / "results"
    with Store(folder).writing() as store:
        sweep, _ = store.begin_sweep(write(tmp_path / "e.yaml", "version: 1\n"), {}, [], True)
        store.record_run(sweep, RunRecord(run=run, role=Role.PROFILE, status="skipped",
                                          reason="Nsight Compute (ncu) is not on PATH"), None)
    writer.write(dataset.load(folder), tmp_path / "report")
    report = (tmp_path / "report" / "report.md").read_text()
    assert "torch cuda (profile run, ncu)" in report
    assert "Nsight Compute (ncu) is not on PATH" in report


def test_compare_leaves_out_profile_runs(results: Path) -> None:
    from orchestrator.report.compare import rows as compare_rows
    from orchestrator.report.compare import sides as compare_sides

    side = compare_sides.load_side(str(results))
    rows = compare_rows.measurements(side)
    assert set(rows["run_id"]) == set(side.data.figures[side.data.figures["role"] == "measure"]
                                      ["run_id"])
