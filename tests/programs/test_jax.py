"""JAX's Program and its program: parsing its captured output, its headers, its cache proofs.

The logs in tests/data/jax/ were printed by bench_py/exec_jax.py on this box's JAX CPU wheel
(jax 0.10.2; the cache folder path replaced by /tmp/jax-cache). The cache proofs run on a real
compilation cache that the real program fills (the admission threshold set to 0: on a CPU a
small matmul compiles in tens of milliseconds, under JAX's default 1 s, and nothing is written).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator import programs
from orchestrator.data.parse import parse_text
from orchestrator.programs.jax import cache

from ..conftest import needs_jax

PROJECT = Path(__file__).resolve().parents[2]
LOGS = PROJECT / "tests" / "data" / "jax"
PROGRAM = PROJECT / "bench_py" / "exec_jax.py"


def _figures(name: str) -> dict[tuple[str, str], float]:
    result = parse_text((LOGS / name).read_text(encoding="utf-8"))
    assert not result.unknown, result.unknown
    assert {f.framework for f in result.figures} == {"jax"}
    return {(f.method, f.stat): f.value for f in result.figures}


def test_captured_mm_log_reads_every_line_as_jax() -> None:
    figures = _figures("cpu_mm_threads1.log")
    assert figures[("first_call_lower", "value")] == pytest.approx(0.182286)
    assert figures[("first_call_compile", "value")] == pytest.approx(0.088973)
    assert figures[("first_call_run", "value")] == pytest.approx(0.016103)
    assert figures[("first_call_returned", "value")] == pytest.approx(0.287340)
    assert figures[("no_sync", "min")] == pytest.approx(62.282e-6)
    assert figures[("readback", "median")] == pytest.approx(1.065e-3)
    assert {m for m, _ in figures} >= {"device_init", "with_sync", "first_call_after_sync"}


def test_captured_headers_give_threads_precision_and_cache() -> None:
    result = parse_text((LOGS / "cpu_mm_threads1.log").read_text(encoding="utf-8"))
    kinds = {h.kind: h for h in result.headers}
    assert kinds["jax"].version == "0.10.2" and kinds["jax"].threads == 1
    assert kinds["jax_precision"].precision == "fp32"
    assert "jax_cache" in kinds
    assert {f.threads for f in result.figures} == {1}


def test_captured_warm_and_accuracy_logs() -> None:
    warm = parse_text((LOGS / "cpu_warm.log").read_text(encoding="utf-8"))
    assert not warm.unknown
    assert [f.iteration for f in warm.figures if f.method == "warmup_timed_run"] == [1, 2, 3]
    assert {f.framework for f in warm.figures} == {"jax"}
    acc = parse_text((LOGS / "cpu_accuracy.log").read_text(encoding="utf-8"))
    assert not acc.unknown and next(h.kind for h in acc.headers) == "jax"


def test_cuda_default_precision_is_unknown_for_the_arrays_to_decide() -> None:
    header = programs.get("jax").parse_header(
        "jax precision unknown (default: XLA may compute f32 dots in TF32 on sm >= 80)", 3)
    assert header is not None and header.precision == "unknown"


def _run_program(cache_dir: Path, env_min: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": env_min}
    done = subprocess.run([sys.executable, str(PROGRAM), "--device", "cpu", "--shape", "32x32",
                           "--reps", "2", "--cache-dir", str(cache_dir)], capture_output=True,
                          text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow  # the real JAX program, run for real (as the JAX sweep: tests/test_jax_sweep)
@needs_jax
def test_cold_then_warm_cache_proven_from_real_entries(tmp_path: Path) -> None:
    folder = tmp_path / "jax-cache"
    env = {cache.MIN_COMPILE_VAR: "0"}
    before = cache.look(folder, env)
    out = _run_program(folder, "0")
    assert f"jax cache {folder}, min compile time 0 s, min entry size 0 B" in out
    filled = cache.look(folder, env)
    assert cache.cold_proof(before, filled).startswith("cold, compiled;")
    _run_program(folder, "0")
    again = cache.look(folder, env)
    assert cache.warm_proof(filled, again) == "warm, compiled program read from the cache"
    # the same folder emptied by hand is not warm
    for path in folder.iterdir():
        path.unlink()
    assert cache.warm_proof(cache.look(folder, env), again).startswith("not proven warm")


@pytest.mark.slow  # the real JAX program, run for real (as the JAX sweep: tests/test_jax_sweep)
@needs_jax
def test_default_threshold_writes_nothing_and_the_proof_says_why(tmp_path: Path) -> None:
    folder = tmp_path / "jax-cache"
    before = cache.look(folder, {})
    out = _run_program(folder, "1.0")
    assert "min compile time 1 s" in out
    after = cache.look(folder, {})
    assert after["entries"] == {}
    assert cache.cold_proof(before, after) == (
        "cold, nothing written for the matmul (min compile time 1 s, min entry size 0 B: "
        "its compile took less)")


def test_a_changed_entry_is_not_warm() -> None:
    before = {"folder": "f", "entries": {"jit_matmul-1-cache": "a"}, "matmul":
              ["jit_matmul-1-cache"], "min_compile_time_s": 0.0, "min_entry_size_bytes": 0}
    changed = {**before, "entries": {"jit_matmul-1-cache": "b"}}
    grown = {**before, "entries": {"jit_matmul-1-cache": "a", "jit_other-2-cache": "c"}}
    assert cache.warm_proof(before, changed) == "not warm: the jit_matmul entry changed"
    assert cache.warm_proof(before, grown) == "warm matmul entry, but 1 new entries written"
    assert cache.cold_proof(before, before).startswith("not cold:")


def _captured(name: str):
    """A log captured on the H200 by scripts/h200/jax.sh, less its first '# CAPTURED' line."""
    text = (LOGS / name).read_text(encoding="utf-8")
    return parse_text(text.split("\n", 1)[1])


def test_h200_default_precision_is_the_tf32_kernel_by_cupti() -> None:
    """On the H200 JAX's default f32 matmul ran cuBLAS's TF32 kernel (its name says
    tf32f32), 12.2 µs by CUPTI; `highest` ran an SIMT sgemm of 53.5 µs, printed fp32."""
    default = _captured("h200_cuda_mm_default.log")
    assert not default.unknown, default.unknown
    figures = {(f.method, f.stat): f for f in default.figures}
    assert figures[("kernel_time", "min")].value == pytest.approx(12.225e-6)
    assert figures[("kernel_time", "min")].profiler == "cupti"
    assert figures[("first_call_compile", "value")].value == pytest.approx(1.133)
    assert figures[("with_sync", "min")].value == pytest.approx(90.276e-6)
    kinds = {h.kind: h for h in default.headers}
    assert kinds["jax"].version == "0.11.2" and kinds["jax_precision"].precision == "unknown"
    assert "tf32f32" in (LOGS / "h200_cuda_mm_default.log").read_text(encoding="utf-8")
    highest = _captured("h200_cuda_mm_highest.log")
    assert not highest.unknown, highest.unknown
    kinds = {h.kind: h for h in highest.headers}
    assert kinds["jax_precision"].precision == "fp32"
    kernel = next(f for f in highest.figures if (f.method, f.stat) == ("kernel_time", "min"))
    assert kernel.value == pytest.approx(53.471e-6)
