"""How cost grows (report section 6b): the peaks table, the cost model, the H200 store and a
real CPU size sweep of this box through `run`."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.data import dataset
from orchestrator.report import peaks, sizes, sizes_report, tables

from ..conftest import PROJECT, facts_once, write

H200 = PROJECT / "docs" / "results" / "h200-2026-12-01"

# ---- the peaks table -------------------------------------------------------------------------


def test_h200_sxm_is_the_datasheets_dense_figures() -> None:
    peak = peaks.gpu_peak("NVIDIA H200", power_limit_w=700.0)
    assert peak.device == "NVIDIA H200 SXM"
    assert (peak.fp32, peak.tf32, peak.bandwidth) == (67e12, 494.5e12, 4.8e12)
    assert "datasheet" in peak.source and "sparsity" in peak.source
    assert peak.flops("tf32") == 494.5e12 and peak.flops("") is None


def test_the_h100_sxm_board_by_its_nvml_name_and_no_other_h100() -> None:
    # 'NVIDIA H100 80GB HBM3' is what NVML named the lent H100 (docs/results/h100-*/)
    peak = peaks.gpu_peak("NVIDIA H100 80GB HBM3", power_limit_w=700.0)
    assert (peak.device, peak.fp32, peak.tf32, peak.bandwidth) == (
        "NVIDIA H100 SXM", 67e12, 494.5e12, 3.35e12)
    assert "datasheet" in peak.source
    for other in ("NVIDIA H100 PCIe", "NVIDIA H100 NVL"):
        assert peaks.gpu_peak(other, 350.0).fp32 is None


def test_an_h200_of_unknown_board_and_an_unknown_gpu_say_peak_unknown() -> None:
    for peak in (peaks.gpu_peak("NVIDIA H200", power_limit_w=None),
                 peaks.gpu_peak("NVIDIA GeForce RTX 9090", 450.0),
                 peaks.gpu_peak("Apple M2 Max", gpu_cores=None)):
        assert peak.fp32 is None and peak.tf32 is None and peak.bandwidth is None
        assert peak.source.startswith("peak unknown: ")
    assert sizes.percent(1e12, None) == "peak unknown"


def test_m2_max_derived_from_its_gpu_cores() -> None:
    peak = peaks.gpu_peak("Apple M2 Max", gpu_cores=38)
    assert peak.fp32 == pytest.approx(13.6e12, rel=1e-3) and peak.bandwidth == 400e9
    assert peak.tf32 is None and "not published by Apple" in peak.source


def test_a_cpu_peak_is_computed_from_the_detected_facts_and_says_so() -> None:
    host = {"arch": "x86_64", "cpu_model": "Xeon", "cpu_flags": ["fma", "avx2", "avx512f"]}
    peak = peaks.cpu_peak(host, threads=16, freq_mhz=2100.0)
    assert peak.fp32 == 16 * 16 * 2 * 2 * 2100e6  # 2.15 TFLOP/s
    assert "computed from the detected facts" in peak.source and "assumed" in peak.source
    avx2 = peaks.cpu_peak({**host, "cpu_flags": ["fma", "avx2"]}, 1, 3000.0)
    assert avx2.fp32 == 8 * 2 * 2 * 3000e6
    assert peaks.cpu_peak({**host, "arch": "arm64"}, 8, 3000.0).fp32 is None
    assert peaks.cpu_peak({**host, "cpu_flags": []}, 8, 3000.0).fp32 is None
    assert peaks.device_peak("tpu", host).source.startswith("peak unknown")


def test_throughput_model_of_a_shape() -> None:
    assert sizes.flop("1024x1024") == 2 * 1024 ** 3
    assert sizes.flop("64x32") == 2 * 64 * 32 * 64  # a is MxN, b NxM
    assert sizes.bytes_moved("1024x1024") == 3 * 4 * 1024 * 1024
    assert sizes.flop("accuracy") is None
    assert sizes.tflops("1024x1024", 55.5e-6) == pytest.approx(38.7e12, rel=1e-3)


# ---- the cost model --------------------------------------------------------------------------


def test_cost_model_recovers_a_known_law_and_says_where_it_stops() -> None:
    n = [64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0]
    a, b = 20e-6, 5e-12
    t = [a + b * x ** 3 for x in n]
    fit = sizes.fit_cost(n, t)
    assert fit is not None
    assert fit.a == pytest.approx(a, rel=1e-6) and fit.b == pytest.approx(b, rel=1e-6)
    assert fit.outside() == []
    # a size that falls off the law (a cache cliff: 3x slower at 2048) is named
    t[-1] *= 3
    off = sizes.fit_cost(n, t)
    assert off is not None and 2048.0 in off.outside()
    text = sizes.fit_text("x", [f"{int(v)}x{int(v)}" for v in n], off)
    assert "stops holding at 2048" in text
    assert sizes.fit_cost(n[:2], t[:2]) is None
    assert "needs 3 sizes" in sizes.fit_text("x", ["64x64"], None)


def test_crossing_interpolates_in_log_log() -> None:
    assert sizes.crossing([64.0, 256.0], [4.0, 0.25]) == pytest.approx(128.0)
    assert sizes.crossing([64.0, 256.0], [4.0, 2.0]) is None


def _size_row(framework: str, shape: str, **clocks: float) -> dict[str, object]:
    n = float(shape.split("x")[0])
    row = {"framework": framework, "label": "cuda [tf32]", "device": "cuda",
           "threads_key": float("nan"), "shape": shape, "n": n, "kernel_time": float("nan"),
           "device_time_queued": float("nan"), "with_sync": float("nan"), "arithmetic": "tf32",
           **clocks}
    return row


def test_a_pair_is_read_on_a_clock_both_sides_measured() -> None:
    """burn's size sweep has its queued device time only (no profile runs), PyTorch's its
    CUPTI kernel time too: the pair is read on the queued clock at every size (crossing at
    n ≈ 512 here), the kernel clock where both have it (one size) beside it, never burn's
    queued against PyTorch's kernel."""
    import pandas as pd
    rows = pd.DataFrame([
        _size_row("burn", "256x256", device_time_queued=20e-6),
        _size_row("burn", "1024x1024", device_time_queued=30e-6, kernel_time=28e-6),
        _size_row("burn", "4096x4096", device_time_queued=1e-3),
        _size_row("torch", "256x256", device_time_queued=40e-6, kernel_time=4e-6),
        _size_row("torch", "1024x1024", device_time_queued=15e-6, kernel_time=12e-6),
        _size_row("torch", "4096x4096", device_time_queued=0.5e-3, kernel_time=0.4e-3)])
    lines = [x for x in sizes_report.crossover_findings(rows) if x.startswith("burn")]
    assert lines == ["burn cuda [tf32] / PyTorch cuda [tf32] on cuda (queued): 256x256 0.50×, "
                     "1024x1024 2.00×, 4096x4096 2.00×; crosses 1 at n ≈ 512; on the kernel "
                     "clock, where both have it: 1024x1024 2.33×."]
    # no clock in common: no line, rather than a ratio of two different clocks
    apart = rows.assign(kernel_time=[float("nan")] * 3 + [4e-6, 12e-6, 0.4e-3],
                        device_time_queued=[20e-6, 30e-6, 1e-3] + [float("nan")] * 3)
    assert not [x for x in sizes_report.crossover_findings(apart) if x.startswith("burn")]


@pytest.mark.parametrize("count", [13, 32, 200, 1666])
def test_sizes_png_labels_at_most_tick_sizes_sizes_and_says_how_many(count: int) -> None:
    """A label per size was 1,666 rotated labels at 5000 runs (6 s of drawing a panel); above
    TICK_SIZES the axis labels that many, evenly on the log axis, and says of how many."""
    import pandas as pd

    from orchestrator.report import sizes_plot
    sides = [64 + 8 * i for i in range(count)]
    rows = pd.DataFrame([{**_size_row("torch", f"{n}x{n}", kernel_time=1e-5 * (1 + n / 1e3),
                                      with_sync=2e-5), "time_s": 1e-5 * (1 + n / 1e3),
                          "basis": "kernel", "peak_flops": 67e12, "peak_bw": 4.8e12,
                          "peak_name": "NVIDIA H200 SXM"} for n in sides])
    figure = sizes_plot.draw(rows, {})
    assert not isinstance(figure, str)
    (ax,) = figure.axes
    labels = [t.get_text() for t in ax.get_xticklabels()]
    cap = sizes_plot.TICK_SIZES
    assert labels[0] == "64"
    assert len(labels) == count if count <= cap else cap // 2 < len(labels) <= cap
    assert set(labels) <= {str(n) for n in sides}
    note = f"{len(labels)} of the {count} sizes labelled"
    assert (note in ax.get_xlabel()) == (count > sizes_plot.TICK_SIZES)


# ---- the H200 store --------------------------------------------------------------------------


def test_the_h200_store_gives_each_target_its_throughput_and_percent_of_peak() -> None:
    data = dataset.load(H200)
    rows = sizes_report.with_peaks(tables.prepare(data), data.host)
    torch = rows[(rows["framework"] == "torch") & (rows["label"] == "cuda")]
    # 1024² FP32 on cuBLAS: CUPTI's kernel min 55.5 µs = 38.7 TFLOP/s, 58% of 67
    assert list(torch["basis"]) == ["kernel"]
    assert torch["time_s"].iloc[0] == pytest.approx(55.5e-6, rel=0.01)
    table = sizes_report.target_table(torch, data.host)
    assert table.frame.loc[0, "TFLOP/s"] == "38.7" and table.frame.loc[0, "% of peak"] == "57.7%"
    tf32 = rows[rows["label"] == "cuda [tf32]"]
    assert set(tf32["peak_flops"]) == {494.5e12}  # TF32 runs against the TF32 peak
    lines = sizes_report.findings(rows)
    assert any("burn cuda [tf32] / PyTorch cuda [tf32] on cuda" in x for x in lines)
    assert any("no cost model" in x and "1 (1024x1024)" in x for x in lines)


# ---- a real CPU size sweep of this box ------------------------------------------------------

SWEEP = """\
version: 1
defaults: {reps: 5, timeout_s: 300}
builds:
  default: {crate: exec-gpu}
experiments:
  sizes-cpu:
    mode: mm
    shapes: [[32, 32], [64, 64], [128, 128], [256, 256]]
    threads: [1]
    targets:
      - {program: torch, device: cpu}
      - {program: burn, build: default, device: flex}
"""


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory, burn_builds) -> Path:
    tmp = tmp_path_factory.mktemp("sizes")
    exp = write(tmp / "sizes.yaml", SWEEP)
    with facts_once():  # judged on the figures' growth; torch's facts probed once a session
        assert main(["run", str(exp), "--results", str(tmp / "results"), "--quiet"]) == 0
    assert main(["report", str(tmp / "results"), "--out", str(tmp / "report")]) == 0
    return tmp


@pytest.mark.cargo
@pytest.mark.torch
def test_a_real_cpu_size_sweep_gets_its_tables_fit_and_plot(swept: Path) -> None:
    report = swept / "report"
    md = (report / "report.md").read_text(encoding="utf-8")
    assert "## 6b. Beyond the chapter: how cost grows" in md
    assert "![6b. Beyond the chapter: how cost grows](sizes.png)" in md
    for name in ("sizes_pytorch_cpu_1_thread.csv", "sizes_burn_flex_1_thread.csv"):
        with (report / name).open(encoding="utf-8") as f:
            got = list(csv.DictReader(f))
        assert [r["size"] for r in got] == ["32x32", "64x64", "128x128", "256x256"]
        rates = [float(r["TFLOP/s"]) for r in got]
        assert all(r > 0 for r in rates) and rates[-1] > rates[0]  # more work, more throughput
        assert all(r["basis"] == "with sync" for r in got)
        # this box's CPU is x86-64 with FMA: a computed peak, a number, not "peak unknown"
        if "avx2" in Path("/proc/cpuinfo").read_text():
            assert all(r["% of peak"].endswith("%") for r in got)
    assert (report / "sizes.png").stat().st_size > 15_000
    assert "PyTorch cpu, 1 thread: t ≈ " in md and "burn flex, 1 thread: t ≈ " in md
    assert "burn flex / PyTorch cpu on cpu, 1 thread (with sync): 32x32 " in md



# ---- compare and `report A B` carry the throughput -------------------------------------------


def test_compare_and_side_by_side_carry_tflops(tmp_path: Path) -> None:
    chapter = PROJECT / "tests" / "data" / "chapter_listings.log"
    assert main(["compare", str(chapter), str(H200), "--out", str(tmp_path / "c")]) == 0
    with (tmp_path / "c" / "compare.csv").open(encoding="utf-8") as f:
        got = list(csv.DictReader(f))
    cpu = next(r for r in got if r["figure"] == "torch cpu 1 thread with sync")
    # 2·1024³ flop over each side's median with sync
    assert float(cpu["a_tflops"]) == pytest.approx(2 * 1024 ** 3 / float(cpu["a"]) / 1e12)
    assert float(cpu["b_tflops"]) == pytest.approx(2 * 1024 ** 3 / float(cpu["b"]) / 1e12)
    first = next(r for r in got if "first call" in r["figure"])
    assert first["a_tflops"] == "" and first["b_tflops"] == ""  # not a steady matmul
    assert "TFLOP/s A / B" in (tmp_path / "c" / "compare.md").read_text(encoding="utf-8")
    assert main(["report", str(chapter), str(H200), "--out", str(tmp_path / "s")]) == 0
    with (tmp_path / "s" / "sizes.csv").open(encoding="utf-8") as f:
        rows = {(r["target"], r["size"]): r for r in csv.DictReader(f)}
    torch = rows[("PyTorch cuda", "1024x1024")]
    assert torch["A: time"] == "" and torch["B: TFLOP/s"] == "38.7"
    assert rows[("PyTorch mps", "1024x1024")]["A: % of peak"] == "peak unknown"


def test_a_compare_csv_from_before_the_throughput_columns_is_still_ours(tmp_path: Path) -> None:
    from orchestrator.report.compare import output as compare_output
    old = tmp_path / "compare.csv"
    old.write_text(",".join(compare_output.LEGACY_FIELDS) + "\n", encoding="utf-8")
    assert compare_output._ours(old)
    # the header of 2026-12-03, with TFLOP/s and without % of peak
    old.write_text(",".join(compare_output.CSV_FIELDS[:-2]) + "\n", encoding="utf-8")
    assert compare_output._ours(old) and "a_tflops" in old.read_text()
    old.write_text("section,figure\n", encoding="utf-8")
    assert not compare_output._ours(old)


def test_a_gpu_target_of_unknown_arithmetic_has_no_percent_of_peak() -> None:
    """On an NVIDIA GPU the peak depends on the arithmetic (FP32 67, TF32 494.5 TFLOP/s on the
    H200): JAX's default without an accuracy run (TF32 in fact) read 272.9% of the FP32 peak
    (seen 2026-12-03). Unknown there is 'arithmetic unknown'; on a device with one f32
    arithmetic (a CPU, an Apple GPU) unknown is FP32."""
    h200 = peaks.gpu_peak("NVIDIA H200", power_limit_w=700.0)
    cpu = peaks.cpu_peak({"arch": "x86_64", "cpu_flags": ["fma", "avx2"]}, 1, 3000.0)
    assert sizes.arithmetic("", h200) == "" and sizes.arithmetic("tf32", h200) == "tf32"
    assert sizes.arithmetic("", cpu) == "fp32" and sizes.arithmetic(None, cpu) == "fp32"
    assert sizes.percent_text(183e12, h200, "") == "arithmetic unknown"
    assert sizes.percent_text(183e12, h200, "tf32") == "37.0%"
    assert sizes.percent_text(1e9, peaks.Peak.unknown("tpu", "no entry"), "") == "peak unknown"


NCU = PROJECT / "docs" / "results" / "h200-sizes-ncu-2026-12-03"


def test_burn_faster_than_fp32_can_be_is_said_and_its_kernel_ratios_are_set_apart() -> None:
    """The H200's size sweep under ncu (2026-12-03): burn's f32 matmul, arithmetic unrecorded,
    ran 69.0 TFLOP/s at 4096² (FP32's peak 67): a finding says it cannot be plain FP32, and
    every burn / PyTorch FP32 kernel-time ratio reads 'unknown arithmetic vs FP32', as the time
    ratios' arithmetic column does; PyTorch FP32 (51.3 TFLOP/s) gets no such line."""
    from orchestrator.report import clocks
    data = dataset.load(NCU)
    fig = tables.prepare(data)
    lines = sizes_report.findings(sizes_report.with_peaks(fig, data.host))
    above = [x for x in lines if "faster than FP32 can be" in x]
    assert len(above) == 1 and "burn cuda 4096x4096 at 69.0 TFLOP/s" in above[0]
    frame = clocks.kernel_ratio_table(clocks.select(fig)).frame
    assert set(frame["arithmetic"]) == {"unknown arithmetic vs FP32"}
    assert len(frame) == 6  # three sizes, ncu and CUPTI on PyTorch's side


def test_one_arithmetic_on_both_sides_is_named_once() -> None:
    from orchestrator.report import clocks
    data = dataset.load(H200)
    frame = clocks.kernel_ratio_table(clocks.select(tables.prepare(data))).frame
    assert set(frame["arithmetic"]) == {"TF32"} and set(frame["device"]) == {"cuda [tf32]"}


AA = PROJECT / "docs" / "results" / "h200-aa-2026-12-03"


def test_compare_gives_each_sides_percent_of_its_peak(tmp_path: Path) -> None:
    """The H200 A/A stores: a figure's TFLOP/s as % of the peak of its arithmetic (FP32 67,
    TF32 494.5 on the H200 SXM; JAX's default is TF32 by the name of its cuBLAS kernel), nothing
    where the arithmetic is unknown (burn: its own kernels' names say none), and no throughput
    at all for burn's device time without flush (1706 TFLOP/s before)."""
    assert main(["compare", str(AA / "a"), str(AA / "b"), "--out", str(tmp_path)]) == 0
    with (tmp_path / "compare.csv").open(encoding="utf-8") as f:
        got = {r["figure"]: r for r in csv.DictReader(f)}
    for figure, peak in (("torch cuda kernel time", 67.0), ("torch cuda TF32 kernel time", 494.5),
                         ("jax cuda warm cache kernel time", 67.0),
                         ("jax cuda TF32 warm cache kernel time", 494.5)):
        row = got[figure]
        for side in "ab":
            assert float(row[f"{side}_peak_pct"]) == pytest.approx(
                100 * float(row[f"{side}_tflops"]) / peak)
    assert 50 < float(got["torch cuda kernel time"]["a_peak_pct"]) < 65  # 38.5 of 67
    burn = got["burn cuda warm cache device time queued"]
    assert burn["a_tflops"] != "" and burn["a_peak_pct"] == ""
    assert got["burn cuda warm cache device time without flush"]["a_tflops"] == ""
    assert "% of peak A / B" in (tmp_path / "compare.md").read_text(encoding="utf-8")
