"""exec_jax.py's `kernel time (cupti)` block (bench_core/jax_profile.py): the real JAX profiler
around the matmuls, read as the perfetto trace a GPU writes."""

from __future__ import annotations

import argparse
from types import SimpleNamespace

import pytest

from .test_bench_py import _load_program

_load_program()  # bench_py/ on sys.path

SIMT = "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(Params)"
REDUCE = "void cublasLt::splitKreduce_kernel<32, 16, int, float>(Params)"


def _gpu_trace(launches: list[tuple[str, float, float]]) -> dict[str, object]:
    """A JAX profiler trace with the launches (name, start µs, duration µs) on a GPU stream."""
    return {"traceEvents": [
        {"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "/device:GPU:0"}},
        {"ph": "M", "name": "thread_name", "pid": 7, "tid": 1, "args": {"name": "Stream #13"}},
        *({"ph": "X", "pid": 7, "tid": 1, "name": name, "ts": start, "dur": dur}
          for name, start, dur in launches)]}


@pytest.mark.slow  # the real JAX, in this process
def test_the_kernel_lines_are_in_the_summarys_unit(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Two matmuls of two kernels each (JAX's `highest` on the H200: the SIMT sgemm and its
    split-K reduce): the per-matmul summary and one `# kernel` line per kernel, both in µs, the
    kernels' medians adding up to the matmul's. JAX's own copy of the line printed µs / 1e3 as
    ns: `min 0.000ns median 0.000ns` under a 12.225µs summary (the H200 capture of 2026-12-02,
    tests/data/jax/h200_cuda_mm_default.log)."""
    jax = pytest.importorskip("jax")
    import numpy as np
    from bench_core import jax_profile

    trace = _gpu_trace([(SIMT, 100.0, 48.767), (REDUCE, 150.0, 4.8),
                        (SIMT, 200.0, 49.985), (REDUCE, 251.0, 5.024)])
    monkeypatch.setattr(jax_profile, "_perfetto_trace", lambda folder: trace)
    a = np.ones((2, 3), dtype=np.float32)
    args = argparse.Namespace(reps=2, samples=False, dump_kernels=None, precision="highest")
    jax_profile.kernel_time_block(jax, SimpleNamespace(label="cuda"),
                                  lambda x, y: jax.numpy.matmul(x, y.T), a, a, args)
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "cuda 2x3 matmul kernel time (cupti), 2 runs: min 53.567µs median 54.288µs",
        f"# kernel cuda 2x3 matmul kernel time (cupti): 2 launches, min 48.767µs median "
        f"49.376µs: {SIMT}",
        f"# kernel cuda 2x3 matmul kernel time (cupti): 2 launches, min 4.800µs median "
        f"4.912µs: {REDUCE}"], err
