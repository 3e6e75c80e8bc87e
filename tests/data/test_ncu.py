"""data/ncu.py on Nsight Compute's real CSV, captured on the H200 (tests/data/h200), and on the
broken forms a profile run may leave: no file, empty, cut short, a profiler error."""

from __future__ import annotations

import pytest

from orchestrator.data import ncu

from ..conftest import DATA

H200 = DATA / "h200"
TORCH = ncu.Where("torch", "cuda", "cuda", "1024x1024")
FP32_KERNEL = ("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x64x8_stage3_warpsize2x2x1_"
               "ffma_aligna4_alignc4_execute_kernel__5x_cublas")


def _by_stat(figures: list, kernel: str | None = None) -> dict[str, float]:
    return {f.stat: f.value for f in figures if kernel is None or f.kernel == kernel}


def test_torch_fp32_window_is_20_cublas_kernels() -> None:
    launches = ncu.read_launches((H200 / "ncu_window_torch_fp32.csv").read_text())
    assert len(launches) == 20
    assert {launch.name for launch in launches} == {FP32_KERNEL}
    assert launches[0].seconds == pytest.approx(57.760e-6)  # "57,760" ns: a thousands comma
    assert (launches[0].grid, launches[0].block) == ("(8, 16, 1)", "(128, 1, 1)")
    figures = ncu.read((H200 / "ncu_window_torch_fp32.csv").read_bytes(), 20, TORCH)
    assert {f.profiler for f in figures} == {"ncu"}
    assert {f.method for f in figures} == {"kernel_time"}
    kernel = f"{FP32_KERNEL} [grid (8, 16, 1) block (128, 1, 1)]"
    per_kernel = _by_stat(figures, kernel)
    assert per_kernel["kernel_min"] == pytest.approx(min(x.seconds for x in launches))
    assert 56.0e-6 < per_kernel["kernel_median"] < 58.0e-6  # the H200's 56.4-57.8 µs
    assert all(f.runs == 20 for f in figures)
    # one kernel per matmul: the per-matmul sum is that kernel
    per_matmul = _by_stat(figures, "")
    assert per_matmul == {"min": per_kernel["kernel_min"], "median": per_kernel["kernel_median"]}


def test_torch_tf32_window_names_the_tf32_kernel() -> None:
    figures = ncu.read((H200 / "ncu_window_torch_tf32.csv").read_bytes(), 20, TORCH)
    kernels = {f.kernel for f in figures if f.kernel}
    assert len(kernels) == 1 and "tf32" in kernels.pop()
    assert 12e-6 < _by_stat(figures, "")["median"] < 15e-6


def test_burn_output_mixed_with_stdout_keeps_every_kernel() -> None:
    """ncu writing to stdout: the program's lines and ==PROF== lines around the CSV rows."""
    burn = ncu.Where("burn", "cuda", "cuda", "1024x1024")
    figures = ncu.read((H200 / "ncu_burn_stdout_mixed.csv").read_bytes(), 3, burn)
    runs = {f.kernel.split(" [")[0]: f.runs for f in figures if f.stat == "kernel_min"}
    assert runs == {"matmul_entry_lhs_f32_lhs_size_1_rhs_f32_rhs_size_1_acc_f32_acc_size_4_"
                    "1f084696": 13, "full_kernel_c_f32_n_1_4f6f1775": 3,
                    "shared_sum_kernel_t_f32_n_4_6370997e": 3}
    # 19 launches do not divide into 3 matmuls: no per-matmul figure, not a wrong one
    assert not [f for f in figures if f.kernel == ""]
    assert {f.framework for f in figures} == {"burn"}


def test_per_matmul_sum_adds_each_matmuls_kernels() -> None:
    launches = [ncu.Launch(i, name, "(1, 1, 1)", "(32, 1, 1)", seconds) for i, (name, seconds)
                in enumerate([("mm", 10e-6), ("fill", 1e-6), ("mm", 12e-6), ("fill", 2e-6)])]
    figures = ncu.figures(launches, 2, TORCH)
    assert _by_stat(figures, "") == {"min": pytest.approx(11e-6), "median": pytest.approx(12.5e-6)}


@pytest.mark.parametrize(("value", "unit", "seconds"), [
    ("57,760", "ns", 57.76e-6), ("57.76", "us", 57.76e-6), ("57.76", "usecond", 57.76e-6),
    ("0.05776", "ms", 57.76e-6), ("1,000.5", "nsecond", 1000.5e-9), ("2", "s", 2.0)])
def test_units(value: str, unit: str, seconds: float) -> None:
    assert ncu._seconds(value, unit, 1) == pytest.approx(seconds)


def _csv_with_last_row(row: str) -> bytes:
    lines = (H200 / "ncu_window_torch_fp32.csv").read_text().splitlines()
    return "\n".join([*lines[:-1], row]).encode()


@pytest.mark.parametrize(("data", "why"), [
    (None, "wrote no CSV"),
    (b"", "empty"),
    (b"==PROF== Connected to process 1\n==ERROR== The application returned an error code (1).\n",
     "==ERROR== The application returned an error code (1)."),
    (b"==PROF== Connected to process 1\nhello\n", "no CSV header"),
    ((H200 / "ncu_window_torch_fp32.csv").read_bytes()[:1500], "fields (cut short?)"),
    (_csv_with_last_row('"19","592","python3.12","127.0.0.1","k","1","7","(1, 1, 1)",'
                        '"(1, 1, 1)","0","9.0","m","gpu__time_duration.sum","cycle","5"'),
     "unknown duration unit 'cycle'"),
    (b'"ID","Kernel Name","Block Size","Grid Size","Metric Name","Metric Unit",'
     b'"Metric Value"\n', "profiled no kernel"),
])
def test_broken_output_is_an_ncu_error_with_the_reason(data: bytes | None, why: str) -> None:
    with pytest.raises(ncu.NcuError, match=None) as caught:
        ncu.read(data, 20, TORCH)
    assert why in str(caught.value)
    assert "\n" not in str(caught.value)
