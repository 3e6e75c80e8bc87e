"""The torch program's execution-mode lines (docs/LINES.md, "Execution modes"): the first call
taken apart (torch.compile's and a CUDA graph's), Inductor's autotune winner and the compile
caches' counters, parsed into their methods and stats; JAX's breakdown keeps its own."""

from __future__ import annotations

import pytest

from orchestrator.data import parse

LOG = "\n".join([
    'torch 2.11.0+cu130, threads 16',
    'torch BLAS_INFO=mkl',
    'torch precision fp32',
    'torch exec compile:max-autotune, cache /x/bench_py/target/torch-compile-cache',
    'cuda: device init 249.598µs',
    'cuda 1024x1024 matmul first call: returned 41.200s, after sync 41.201s',
    'cuda 1024x1024 matmul first call breakdown: dynamo trace 266.556ms, inductor '
    'compile 40.123s, first run 811.000ms',
    '# kernel cuda 1024x1024 matmul autotune (inductor): 19 candidates: triton_mm_7 '
    "(template, 28.512µs): ACC_TYPE='tl.float32', ALLOW_TF32=False, BLOCK_K=32",
    'cuda 1024x1024 matmul compile cache (inductor): fx graph hit 0 miss 1, aot '
    'autograd hit 0 miss 1, autotune benchmarked 1',
    'cuda 1024x1024 matmul with sync, 3 runs: min 55.965µs median 59.993µs',
    'cuda 256x256 matmul first call breakdown: warm-up 1.000ms, graph capture '
    '2.000ms, first replay 30.000µs',
    'cpu 32x32 matmul first call breakdown: trace and lower 10.000ms, compile '
    '20.000ms, first run 1.000ms',
]) + "\n"


def _figures() -> list:
    result = parse.parse_text(LOG)
    assert result.unknown == []
    return result.figures


def _values(method: str) -> dict[str, float]:
    return {f.stat: f.value for f in _figures() if f.method == method}


def test_compiled_first_call_taken_apart() -> None:
    found = {(f.method, f.shape): f.value for f in _figures() if f.stat == "value"}
    assert found[("first_call_dynamo", "1024x1024")] == pytest.approx(0.266556)
    assert found[("first_call_inductor", "1024x1024")] == pytest.approx(40.123)
    assert found[("first_call_run", "1024x1024")] == pytest.approx(0.811)
    assert found[("first_call_graph_warmup", "256x256")] == pytest.approx(0.001)
    assert found[("first_call_capture", "256x256")] == pytest.approx(0.002)
    assert found[("first_call_replay", "256x256")] == pytest.approx(30e-6)
    # JAX's form is still its own three methods
    assert found[("first_call_lower", "32x32")] == pytest.approx(0.01)
    assert found[("first_call_compile", "32x32")] == pytest.approx(0.02)


def test_autotune_winner_and_cache_counters() -> None:
    tuned = next(f for f in _figures() if f.method == "compile_autotune")
    assert (tuned.stat, tuned.value, tuned.runs) == ("candidates", 19.0, 19)
    assert tuned.kernel.startswith("triton_mm_7 (template, 28.512µs): ")
    assert "ALLOW_TF32=False" in tuned.kernel and tuned.framework == "torch"
    assert _values("compile_cache") == {"fxgraph_cache_hit": 0.0, "fxgraph_cache_miss": 1.0,
                                        "autograd_cache_hit": 0.0, "autograd_cache_miss": 1.0,
                                        "autotune_benchmarked": 1.0}


# the mega-cache lines as the real program printed them (torch 2.15.0 CPU, 32x32)
ARTIFACTS = ("cpu 32x32 matmul compile cache artifacts: saved 163692 bytes in 4.367ms, entries "
             "aot_autograd 1, inductor 1\n"
             "cpu 32x32 matmul compile cache artifacts: loaded 163692 bytes in 1.023ms, entries "
             "aot_autograd 1, inductor 1\n"
             "cpu 32x32 matmul compile cache artifacts: loaded 20 bytes in 1.000ms, entries none\n")


def test_mega_cache_lines_give_size_time_and_entries() -> None:
    result = parse.parse_text(ARTIFACTS)
    assert result.unknown == []
    found = [(f.method, f.stat, f.value) for f in result.figures]
    assert found == [
        ("compile_artifacts", "saved_bytes", 163692.0), ("compile_artifacts", "save_s", 0.004367),
        ("compile_artifacts", "saved_entries", 2.0),
        ("compile_artifacts", "loaded_bytes", 163692.0), ("compile_artifacts", "load_s", 0.001023),
        ("compile_artifacts", "loaded_entries", 2.0),
        ("compile_artifacts", "loaded_bytes", 20.0), ("compile_artifacts", "load_s", 0.001),
        ("compile_artifacts", "loaded_entries", 0.0)]
    # under its program's header the figures are that program's
    headed = parse.parse_text("torch 2.15.0+cu132, threads 1\n" + ARTIFACTS)
    assert {f.framework for f in headed.figures} == {"torch"}


def test_exec_header_is_a_torch_header() -> None:
    headers = parse.parse_text(LOG).headers
    mine = next(h for h in headers if h.kind == "torch_exec")
    assert mine.facts == {"exec": "compile:max-autotune",
                          "cache": "/x/bench_py/target/torch-compile-cache"}


@pytest.mark.parametrize("line", [
    "cuda 64x64 matmul compile cache (inductor): fx graph hit x miss 1, aot autograd hit 0 "
    "miss 1, autotune benchmarked 1",
    "# kernel cuda 64x64 matmul autotune (inductor): many candidates: triton_mm_7",
    "cuda 64x64 matmul first call breakdown: dynamo trace 1.000ms, first run 1.000ms",
    "cpu 32x32 matmul compile cache artifacts: kept 20 bytes in 1.000ms, entries none",
    "cpu 32x32 matmul compile cache artifacts: loaded 20 bytes in 1.000ms, entries inductor",
])
def test_a_broken_line_is_unknown_not_a_figure(line: str) -> None:
    result = parse.parse_text(line + "\n")
    assert result.figures == [] and len(result.unknown) == 1
