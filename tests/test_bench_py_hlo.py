"""JAX's accuracy kernel: what computed the product, read from the compiled module
(bench_core/hlo.py) and printed as `# kernel ... accuracy kernel (xla)`; on cuda also the
kernels CUPTI saw, as torch prints them. Every module is captured from the real JAX: the CPU
ones in tests/data/jax from this box's (`hlo_cpu_*`, each file's first line says how), the CUDA
ones on the H200 by scripts/h200/evidence34.sh (tests/data/h200/2026-12-03/jax-hlo-1024-*.txt,
jax 0.11.2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from orchestrator.data import dataset, parse
from orchestrator.report import tables

from .conftest import needs_jax
from .test_bench_py import _load_program

_load_program()  # bench_py/ on sys.path
from bench_core import hlo  # noqa: E402

PROJECT = Path(__file__).resolve().parents[1]
MODULES = PROJECT / "tests" / "data" / "jax"
H200 = PROJECT / "tests" / "data" / "h200" / "2026-12-03"
PROGRAM = PROJECT / "bench_py" / "exec_jax.py"


def _ops(path: Path) -> list[tuple[str, int]]:
    return hlo.dot_ops(path.read_text(encoding="utf-8"))


def test_the_cpu_module_names_ynnpack_and_the_dots_precision() -> None:
    assert _ops(MODULES / "hlo_cpu_256_default.txt") == [
        ("__ynn_fusion (f32 x f32 -> f32, precision default)", 1)]
    assert _ops(MODULES / "hlo_cpu_256_highest.txt") == [
        ("__ynn_fusion (f32 x f32 -> f32, precision highest)", 1)]


def test_the_h200_modules_name_cublaslt_its_precision_and_selected_algorithm() -> None:
    """jax 0.11.2 on the H200 at 1024²: both precisions are one cuBLASLt call (not the
    `__cublas$gemm` XLA's own tests print), told apart by the operand precision and the
    algorithm cuBLAS's autotuning selected (1: the TF32 kernel, 2: the SIMT sgemm with its
    split-K reduce, as CUPTI saw them in jax-acc-1024-*.out)."""
    for precision, selected in (("default", 1), ("highest", 2)):
        assert _ops(H200 / f"jax-hlo-1024-{precision}.txt") == [
            (f"__cublas$lt$matmul (f32 x f32 -> f32, precision {precision}, "
             f"selected algorithm {selected})", 1)]


def test_plain_dots_algorithms_and_other_custom_calls() -> None:
    """A module of this box's JAX holding the other forms (the file's first line): dots fused
    into YNN at a mixed operand precision and with an algorithm, an int32 dot XLA emits itself
    (`dot`), and custom calls that are no matmul (TopK, LAPACK's potrf), left out."""
    assert _ops(MODULES / "hlo_cpu_8_forms.txt") == [  # the module's order: fused ones first
        ("__ynn_fusion (f32 x f32 -> f32, precision default)", 1),
        ("__ynn_fusion (f32 x f32 -> f32, precision default, algorithm dot_bf16_bf16_f32)", 1),
        ("__ynn_fusion (f32 x f32 -> f32, precision high,highest)", 1),
        ("dot (s32 x s32 -> s32, precision high,highest)", 1)]
    empty = "HloModule empty\nENTRY %e () -> f32[] {\n  ROOT %c = f32[] constant(0)\n}"
    assert hlo.dot_ops(empty) == []
    assert hlo.backend_config('x, backend_config={"a":{"b":1}}, y') == {"a": {"b": 1}}
    assert hlo.backend_config("backend_config={not json}") == {}
    # the escaped string older XLA printed the config as (not captured: jax 0.10 and 0.11
    # print it inline, as above)
    assert hlo.backend_config('backend_config="{\\"a\\":[1]}"') == {"a": [1]}


def _accuracy(tmp_path: Path, *extra: str) -> str:
    done = subprocess.run([sys.executable, str(PROGRAM), "--device", "cpu", "--mode", "accuracy",
                           "--shape", "64x32", "--out", str(tmp_path / "arrays"), *extra],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow  # the real JAX program (a process and a compile each)
@needs_jax
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
