"""The PyTorch program's execution modes (`--exec`, docs/LINES.md "Execution modes"), for real
on the CPU: `compile` prints the exec header, the first call, its breakdown and the compile
cache's counters in the contract's forms, cold then warm through `--cache-dir` (Inductor's and
Triton's folders under it); the mega-cache saved by one process and loaded by another into
empty folders (FX graph hit), a blob another user could have planted refused; the modes a device
cannot run, and `--cache-dir` without a compiled mode, are one `error:` line and exit 2. 32x32,
2 reps.
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
    "artifacts": re.compile(rf"cpu 32x32 matmul compile cache artifacts: (?P<verb>loaded|saved) "
                            rf"(?P<bytes>\d+) bytes in {DUR}, entries (?P<entries>.+)"),
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


@pytest.mark.torch
def test_mega_cache_saved_by_one_process_warms_another(tmp_path: Path) -> None:
    """torch.compiler.save_cache_artifacts after a cold compile; a new process with empty
    Inductor/Triton folders loads the blob and its compile hits the FX graph cache."""
    pytest.importorskip("torch")
    blob = tmp_path / "mega" / "blob.bin"
    args = ("--device", "cpu", "--shape", "32x32", "--reps", "2", "--exec", "compile",
            "--threads", "1")
    cold = _run(*args, "--cache-dir", str(tmp_path / "a"), "--save-cache-artifacts", str(blob))
    assert cold.returncode == 0, cold.stderr
    saved = _lines(cold)["artifacts"]
    assert saved["verb"] == "saved" and int(saved["bytes"]) == blob.stat().st_size > 1000
    assert "inductor 1" in saved["entries"]
    assert not list(blob.parent.glob(".*tmp"))  # written beside, renamed over
    fresh = tmp_path / "b"
    warm = _run(*args, "--cache-dir", str(fresh), "--load-cache-artifacts", str(blob))
    assert warm.returncode == 0, warm.stderr
    seen = _lines(warm)
    assert seen["artifacts"]["verb"] == "loaded"
    assert seen["artifacts"]["bytes"] == saved["bytes"]
    assert seen["cache"]["hit"] == "1" and seen["cache"]["miss"] == "0"
    assert any((fresh / "inductor" / "fxgraph").rglob("*"))  # the load filled the folder
    lines = warm.stdout.splitlines()
    at = [i for i, line in enumerate(lines) if "compile cache" in line]
    assert "artifacts" in lines[at[-1]] and at[-1] == at[0] + 1


# Inductor's mm autotune with real candidates on a CPU: a constant weight (freezing) makes its
# C++ GEMM template a candidate beside ATen's extern mm; bench_core's feedback saver gets torch's
# own ChoiceCaller objects, as it does from Triton templates and cuBLAS on CUDA
AUTOTUNE = """
import os, sys
os.environ["TORCHINDUCTOR_CACHE_DIR"] = sys.argv[1]
sys.path.insert(0, sys.argv[2])
import torch
import torch._inductor.config as config
from torch._inductor import select_algorithm
from bench_core import compiled
config.freezing = True
config.max_autotune_gemm_backends = "CPP,ATEN"
seen = compiled.Autotune()
select_algorithm.add_feedback_saver(seen)
class Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(64, 64))
    def forward(self, x):
        return x @ self.w
with torch.no_grad():
    torch.compile(Linear().eval(), mode="max-autotune", fullgraph=True)(torch.randn(64, 64))
print(sorted(type(c).__name__ for c in seen.timings))
print(seen.line("cpu 64x64 matmul"))
"""


@pytest.mark.torch
def test_the_autotune_winner_from_real_candidates_parses(tmp_path: Path) -> None:
    """No CUDA max-autotune log exists in the repository (no GPU here): the winner's words and
    the line come from torch's real candidates on the CPU instead, then the parser reads them."""
    pytest.importorskip("torch")
    from orchestrator.data import parse

    proc = subprocess.run([sys.executable, "-c", AUTOTUNE, str(tmp_path / "inductor"),
                           str(ROOT / "bench_py")], capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    kinds, line = proc.stdout.splitlines()[-2:]
    if line == "None":
        pytest.skip(f"Inductor's C++ GEMM template is no candidate on this CPU ({kinds})")
    assert "ExternKernelCaller" in kinds and kinds.count("'") >= 4  # two candidates or more
    match = re.fullmatch(rf"# kernel cpu 64x64 matmul autotune \(inductor\): (\d+) candidates: "
                         rf"(\S+) \((template|extern), {DUR}\)(: .+)?", line)
    assert match is not None, line
    result = parse.parse_text(line + "\n")
    assert result.unknown == []
    [fig] = result.figures
    assert (fig.method, fig.stat, fig.value) == ("compile_autotune", "candidates",
                                                 float(match.group(1)))
    assert fig.kernel.startswith(f"{match.group(2)} ({match.group(3)}, ")


@pytest.mark.torch
def test_a_blob_others_could_write_is_never_unpickled(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    folder = tmp_path / "mega"
    folder.mkdir()
    blob = folder / "blob.bin"
    blob.write_bytes(b"not a pickle of ours")
    blob.chmod(0o666)
    base = ("--device", "cpu", "--shape", "8x8", "--reps", "1", "--exec", "compile")
    proc = _run(*base, "--load-cache-artifacts", str(blob))
    assert proc.returncode == 1 and proc.stdout == ""  # refused before torch is imported
    assert "is writable by others (mode 666" in proc.stderr, proc.stderr
    link = folder / "link.bin"
    link.symlink_to(blob)
    proc = _run(*base, "--load-cache-artifacts", str(link))
    assert proc.returncode == 1 and "is a symlink" in proc.stderr, proc.stderr


@pytest.mark.torch
def test_a_failed_saving_process_leaves_no_older_blob(tmp_path: Path) -> None:
    """The blob to save is removed as the process starts: one that fails before its save
    leaves none behind, so a mega run never loads an earlier sweep's blob as this one's."""
    pytest.importorskip("torch")
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"an earlier process's blob")
    proc = _run("--device", "mps", "--exec", "compile", "--save-cache-artifacts", str(blob))
    assert proc.returncode != 0 and not blob.exists(), proc.stderr


@pytest.mark.parametrize(("args", "words"), [
    (("--device", "cpu", "--exec", "cudagraph"), "--exec cudagraph needs a CUDA device"),
    (("--device", "cpu", "--cache-dir", "x"), "--cache-dir is for the compiled modes"),
    (("--device", "cpu", "--load-cache-artifacts", "x"),
     "--load-cache-artifacts is for the compiled modes"),
    (("--exec", "compile:fast"), "argument --exec: invalid choice"),
])
def test_refused_modes_are_one_error_line(args: tuple[str, ...], words: str) -> None:
    if "cudagraph" in args:
        pytest.importorskip("torch")
    proc = _run(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and words in proc.stderr, proc.stderr
