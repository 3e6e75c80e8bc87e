"""The parser's kernel-time and launch-gap-free forms (docs/LINES.md, "Beyond the chapter's
methods"), on bench_py's real CUDA output captured on the H200 and on the name forms the
contract allows."""

from __future__ import annotations

import pandas as pd
import pytest

from orchestrator.data import dataset
from orchestrator.data.parse import parse_text
from orchestrator.report import tables

from ..conftest import DATA

H200 = DATA / "h200"


@pytest.mark.parametrize(("log", "queued", "kernel", "name_part"), [
    ("torch_cuda_fp32.log", (57.888e-6, 58.256e-6), (55.295e-6, 55.360e-6), "ffma"),
    ("torch_cuda_tf32.log", (14.784e-6, 15.136e-6), (12.545e-6, 12.704e-6), "tf32"),
])
def test_real_torch_cuda_output(log: str, queued: tuple[float, float],
                                kernel: tuple[float, float], name_part: str) -> None:
    parsed = parse_text((H200 / log).read_text())
    assert parsed.unknown == []  # every line of the real output is a known form
    q = {f.stat: f.value for f in parsed.figures if f.method == "device_time_queued"}
    assert q == {"min": pytest.approx(queued[0]), "median": pytest.approx(queued[1])}
    k = [f for f in parsed.figures if f.method == "kernel_time"]
    assert {f.profiler for f in k} == {"cupti"} and {f.framework for f in k} == {"torch"}
    per_matmul = {f.stat: f.value for f in k if f.kernel == ""}
    assert per_matmul == {"min": pytest.approx(kernel[0]), "median": pytest.approx(kernel[1])}
    per_kernel = [f for f in k if f.kernel]
    assert {f.stat for f in per_kernel} == {"kernel_min", "kernel_median"}
    assert len({f.kernel for f in per_kernel}) == 1 and name_part in per_kernel[0].kernel
    assert {f.runs for f in per_kernel} == {20}
    # the samples of both new summary lines are linked to their summary line
    lines = {f.line_no for f in parsed.figures if f.method in ("kernel_time",
                                                               "device_time_queued")
             and f.stat == "min"}
    assert lines <= {s.summary_line for s in parsed.samples}


def test_kernel_names_with_spaces_brackets_and_colons() -> None:
    name = "void gemm<float, 128>(Params: a, b) [clone]: tail"
    parsed = parse_text("torch 2.11.0, threads 4\n"
                        "# kernel cuda 64x64 matmul kernel time (cupti): 3 launches, "
                        f"min 1.000µs median 1.500µs: {name}\n")
    assert parsed.unknown == []
    assert [(f.stat, f.value, f.kernel, f.runs, f.profiler) for f in parsed.figures] == [
        ("kernel_min", pytest.approx(1e-6), name, 3, "cupti"),
        ("kernel_median", pytest.approx(1.5e-6), name, 3, "cupti")]


def test_burn_queued_device_time() -> None:
    parsed = parse_text("cuda 1024x1024 matmul device time (profile_with flush, queued), 20 "
                        "runs: min 40.100µs median 41.000µs\n")
    assert [(f.method, f.framework, f.profiler) for f in parsed.figures] == [
        ("device_time_queued", "burn", "")] * 2


@pytest.mark.parametrize("line", [
    "# kernel cuda 64x64 matmul kernel time (cupti): 3 launches, min 1.000µs median 1.500µs:",
    "# kernel cuda 64x64 matmul kernel time (cupti): x launches, min 1.000µs median 1.500µs: k",
    "# kernel cuda 64x64 matmul no sync: 3 launches, min 1.000µs median 1.500µs: k",
    "# kernel cuda 64x64 matmul kernel time (cupti): 3 launches, min 1.000µs: k",
])
def test_broken_kernel_lines_are_unknown(line: str) -> None:
    parsed = parse_text(line + "\n")
    assert parsed.figures == [] and len(parsed.unknown) == 1


def _kernel_cell(text: str) -> str:
    """The accuracy table's `kernel` cell of a log's one build (an error row added to it)."""
    rows = tables.accuracy_rows(dataset.from_parse(parse_text(text), "jax.log").figures)
    errors = rows.iloc[[0]].assign(method="accuracy", stat="max_err_f64_ref", value_s=1e-3,
                                   kernel="")
    (cell,) = tables.accuracy_table(pd.concat([rows, errors], ignore_index=True)).frame["kernel"]
    return str(cell)


def test_real_jax_cpu_accuracy_names_the_compiled_modules_op() -> None:
    """exec_jax.py's accuracy mode on this box's JAX (tests/data/jax/cpu_accuracy_xla.log)."""
    text = (DATA / "jax" / "cpu_accuracy_xla.log").read_text(encoding="utf-8").split("\n", 1)[1]
    parsed = parse_text(text)
    assert parsed.unknown == []
    (fig,) = parsed.figures
    name = "__ynn_fusion (f32 x f32 -> f32, precision default)"
    assert (fig.framework, fig.method, fig.stat, fig.value, fig.runs, fig.kernel, fig.profiler) \
        == ("jax", "accuracy_kernel", "kernel_ops", 1.0, 1, name, "")
    assert fig.method_text == "accuracy kernel (xla)"
    assert _kernel_cell(text) == name


def test_the_cuda_lines_parse_into_one_kernel_cell() -> None:
    """On cuda the op (HAND-WRITTEN here: the H200 capture replaces it) and then CUPTI's kernel
    (the name JAX 0.11.2's default f32 matmul ran on the H200, tests/data/jax), in that order."""
    text = ("jax 0.11.2, threads 16\n"
            "jax precision unknown (default: XLA may compute f32 dots in TF32 on sm >= 80)\n"
            "jax cache off\n"
            "# kernel cuda 256x256 matmul accuracy kernel (xla): 1 op: __cublas$gemm (f32 x f32 "
            "-> f32, precision default, selected algorithm -1)\n"
            "# kernel cuda 256x256 matmul accuracy kernel time (cupti): 1 launches, min 5.120µs "
            "median 5.120µs: sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x128x32_"
            "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas\n"
            "cuda 256x256 matmul accuracy: wrote /tmp/a\n")
    parsed = parse_text(text)
    assert not parsed.unknown
    assert [(f.method, f.stat, f.profiler) for f in parsed.figures] == [
        ("accuracy_kernel", "kernel_ops", ""), ("accuracy_kernel", "kernel_min", "cupti"),
        ("accuracy_kernel", "kernel_median", "cupti")]
    cell = _kernel_cell(text)
    assert cell.startswith("__cublas$gemm (f32 x f32 -> f32, precision default") \
        and cell.endswith(" + sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x128x32_"
                          "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas")


def test_a_kernel_ops_line_of_another_method_is_unknown() -> None:
    parsed = parse_text("# kernel cpu 8x8 matmul kernel time (cupti): 1 op: x\n"
                        "# kernel cpu 8x8 matmul accuracy kernel (xla): one op: x\n")
    assert len(parsed.unknown) == 2 and not parsed.figures
