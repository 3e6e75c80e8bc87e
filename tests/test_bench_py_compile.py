"""The PyTorch program's execution modes (`--exec`, docs/LINES.md "Execution modes"), for real
on the CPU: `compile` prints the exec header, the first call, its breakdown and the compile
cache's counters in the contract's forms, cold then warm through `--cache-dir` (Inductor's and
Triton's folders under it); the modes a device cannot run, and `--cache-dir` without a
compiled mode, are one `error:` line and exit 2. 32x32, 2 reps.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from .test_bench_py import DUR, classify

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "bench_py" / "exec_gpu.py"
EXTRA = {
    "exec_header": re.compile(r"torch exec (?P<mode>\S+)(?:, cache (?P<dir>.+))?"),
    "breakdown": re.compile(rf"cpu 32x32 matmul first call breakdown: dynamo trace (?P<dynamo>"
                            rf"{DUR}), inductor compile (?P<inductor>{DUR}), first run "
                            rf"(?P<run>{DUR})"),
    "cache": re.compile(r"cpu 32x32 matmul compile cache \(inductor\): fx graph hit (?P<hit>\d+) "
                        r"miss (?P<miss>\d+), aot autograd hit \d+ miss \d+, autotune "
                        r"benchmarked \d+"),
}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(PROGRAM), *args], capture_output=True,
                          text=True, encoding="utf-8", timeout=600, cwd=ROOT, check=False)


def _lines(proc: subprocess.CompletedProcess[str]) -> dict[str, re.Match[str]]:
    """Each stdout line's kind: the new forms here, every other one the contract's."""
    kinds: dict[str, re.Match[str]] = {}
    for line in proc.stdout.splitlines():
        found = next(((k, m) for k, p in EXTRA.items() if (m := p.fullmatch(line))), None)
        kind, match = found or classify(line)
        kinds.setdefault(kind, match)
    return kinds


@pytest.mark.torch
def test_compile_on_the_cpu_cold_then_warm(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    folder = tmp_path / "cc"
    args = ("--device", "cpu", "--shape", "32x32", "--reps", "2", "--exec", "compile",
            "--cache-dir", str(folder), "--threads", "1")
    cold = _run(*args)
    assert cold.returncode == 0, cold.stderr
    seen = _lines(cold)
    assert seen["exec_header"]["mode"] == "compile"
    assert seen["exec_header"]["dir"] == str(folder.resolve())
    assert seen["cache"]["miss"] == "1" and seen["cache"]["hit"] == "0"
    assert {"breakdown", "first_call_cpu", "summary"} <= set(seen)
    # Inductor wrote into the folder it was given (no C++ for a lone mm: extern BLAS call)
    assert any((folder / "inductor" / "fxgraph").rglob("*"))
    lines = cold.stdout.splitlines()
    at = [next(i for i, line in enumerate(lines) if words in line)
          for words in ("matmul first call: ", "first call breakdown: ", "compile cache ",
                        "matmul no sync, ")]
    assert at == sorted(at) and at[1] == at[0] + 1  # right after the first call, in order
    warm = _lines(_run(*args))
    assert warm["cache"]["hit"] == "1" and warm["cache"]["miss"] == "0"


@pytest.mark.parametrize(("args", "words"), [
    (("--device", "cpu", "--exec", "cudagraph"), "--exec cudagraph needs a CUDA device"),
    (("--device", "cpu", "--cache-dir", "x"), "--cache-dir is for the compiled modes"),
    (("--exec", "compile:fast"), "argument --exec: invalid choice"),
])
def test_refused_modes_are_one_error_line(args: tuple[str, ...], words: str) -> None:
    if "cudagraph" in args:
        pytest.importorskip("torch")
    proc = _run(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and words in proc.stderr, proc.stderr
