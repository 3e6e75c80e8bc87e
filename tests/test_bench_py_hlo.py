"""JAX's accuracy kernel (issue 24): what computed the product, read from the compiled module
(bench_core/hlo.py) and printed as `# kernel ... accuracy kernel (xla)`; on cuda also the
kernels CUPTI saw, as torch prints them. The CPU modules in tests/data/jax were captured from
this box's JAX (`hlo_cpu_*`); the CUDA ones are HAND-WRITTEN in XLA's printed form (named so)
until scripts/h200/evidence34.sh's capture replaces them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from orchestrator.data import dataset, parse
from orchestrator.report import tables

from .test_bench_py import _load_program

_load_program()  # bench_py/ on sys.path
from bench_core import hlo  # noqa: E402

PROJECT = Path(__file__).resolve().parents[1]
MODULES = PROJECT / "tests" / "data" / "jax"
PROGRAM = PROJECT / "bench_py" / "exec_jax.py"
jax_missing = subprocess.run([sys.executable, "-c", "import jax"], capture_output=True,
                             check=False).returncode != 0


def _ops(name: str) -> list[tuple[str, int]]:
    return hlo.dot_ops((MODULES / name).read_text(encoding="utf-8"))


def test_the_cpu_module_names_ynnpack_and_the_dots_precision() -> None:
    assert _ops("hlo_cpu_256_default.txt") == [
        ("__ynn_fusion (f32 x f32 -> f32, precision default)", 1)]
    assert _ops("hlo_cpu_256_highest.txt") == [
        ("__ynn_fusion (f32 x f32 -> f32, precision highest)", 1)]


def test_a_cublas_custom_call_names_its_target_and_precision_config() -> None:
    """HAND-WRITTEN module (see the file's first line)."""
    assert _ops("HANDWRITTEN_hlo_cuda_1024_default.txt") == [
        ("__cublas$gemm (f32 x f32 -> f32, precision default, selected algorithm -1)", 1)]


def test_a_triton_gemm_fusion_names_its_tiles_and_the_fused_dots_precision() -> None:
    """HAND-WRITTEN module (see the file's first line)."""
    assert _ops("HANDWRITTEN_hlo_cuda_1024_triton.txt") == [
        ("__triton_gemm (block 64x128x32, split_k 1, num_stages 4, num_warps 4, "
         "f32 x f32 -> f32, precision highest)", 1)]


def test_plain_dots_algorithms_and_the_quoted_config_form() -> None:
    text = (MODULES / "HANDWRITTEN_hlo_forms.txt").read_text(encoding="utf-8")
    assert hlo.dot_ops(text) == [  # in the module's order: the fused computation comes first
        ("dot in a kOutput (bf16 x bf16 -> f32, precision default, algorithm dot_bf16_bf16_f32)",
         1),
        ("dot (f32 x f32 -> f32, precision high,highest)", 2),
        ("__cublas$lt$matmul (f32 x f32 -> f32, precision highest, algorithm dot_tf32_tf32_f32)",
         1)]
    empty = "HloModule empty\nENTRY %e () -> f32[] {\n  ROOT %c = f32[] constant(0)\n}"
    assert hlo.dot_ops(empty) == []
    assert hlo.backend_config('x, backend_config={"a":{"b":1}}, y') == {"a": {"b": 1}}
    assert hlo.backend_config("backend_config={not json}") == {}


def _accuracy(tmp_path: Path, *extra: str) -> str:
    done = subprocess.run([sys.executable, str(PROGRAM), "--device", "cpu", "--mode", "accuracy",
                           "--shape", "64x32", "--out", str(tmp_path / "arrays"), *extra],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow  # the real JAX program (a process and a compile each)
@pytest.mark.skipif(jax_missing, reason="JAX is not installed for this Python")
@pytest.mark.parametrize("precision", ["default", "highest"])
def test_the_real_jax_program_names_what_computed_its_product(tmp_path: Path,
                                                          precision: str) -> None:
    """The real exec_jax.py on the CPU: the `accuracy kernel (xla)` line between the headers
    and `wrote`, parsed into an `accuracy_kernel` figure with its column `kernel`, which the
    accuracy table shows."""
    out = _accuracy(tmp_path, "--precision", precision)
    lines = out.splitlines()
    (line,) = [ln for ln in lines if ln.startswith("# kernel ")]
    assert lines.index(line) == len(lines) - 2 and "accuracy: wrote" in lines[-1]
    assert line == ("# kernel cpu 64x32 matmul accuracy kernel (xla): 1 op: __ynn_fusion "
                    f"(f32 x f32 -> f32, precision {precision})")
    parsed = parse.parse_text(out)
    assert not parsed.unknown
    (fig,) = parsed.figures
    assert (fig.framework, fig.method, fig.stat, fig.value, fig.runs, fig.profiler) == (
        "jax", "accuracy_kernel", "kernel_ops", 1.0, 1, "")
    assert fig.kernel == line.split(": ", 2)[2]
    rows = tables.accuracy_rows(dataset.from_parse(parsed, "jax.log").figures)
    errors = rows.iloc[[0]].assign(method="accuracy", stat="max_err_f64_ref", value_s=1e-6,
                                   kernel="")
    table = tables.accuracy_table(pd.concat([rows, errors], ignore_index=True))
    assert table.frame["kernel"].tolist() == [fig.kernel]


@pytest.mark.slow  # the real JAX, in this process
def test_jax_accuracy_product_under_the_profiler_names_its_kernels(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The real JAX profiler around a CPU product records no GPU kernel: the product, and a
    note; given the trace a GPU writes (a `/device:GPU:0` stream event), torch's line."""
    jax = pytest.importorskip("jax")
    import numpy as np
    from bench_core import jax_profile

    dev = SimpleNamespace(label="cuda")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    c = jax_profile.accuracy_product_cupti(jax, dev, "2x3", lambda: jax.numpy.matmul(a, a.T))
    assert np.array_equal(np.asarray(c), a @ a.T)
    out, err = capsys.readouterr()
    assert out == "" and "the profiler recorded no device kernel" in err
    name = "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x128x32_cublas"
    trace = {"traceEvents": [
        {"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "/device:GPU:0"}},
        {"ph": "M", "name": "thread_name", "pid": 7, "tid": 1, "args": {"name": "Stream #13"}},
        {"ph": "X", "pid": 7, "tid": 1, "name": name, "ts": 100.0, "dur": 5.12}]}
    monkeypatch.setattr(jax_profile, "_perfetto_trace", lambda folder: trace)
    jax_profile.accuracy_product_cupti(jax, dev, "2x3", lambda: jax.numpy.matmul(a, a.T))
    assert capsys.readouterr().out == (
        "# kernel cuda 2x3 matmul accuracy kernel time (cupti): 1 launches, min 5.120µs "
        f"median 5.120µs: {name}\n")
