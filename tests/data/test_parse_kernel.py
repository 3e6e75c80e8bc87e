"""The parser's kernel-time and launch-gap-free forms (docs/LINES.md, "Beyond the chapter's
methods"), on bench_py's real CUDA output captured on the H200 and on the name forms the
contract allows."""

from __future__ import annotations

import pytest

from orchestrator.data.parse import parse_text

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
