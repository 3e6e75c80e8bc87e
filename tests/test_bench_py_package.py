"""bench_py as a package (`bench_py/bench_core/`): standalone, and the same program under each
of the ways a GPU box starts it (script path, `python -m exec_gpu`, `python -m bench_core`).

The imports are read from the sources (ast), so a module that reached into the orchestrator or
a package the GPU machine's own Python may lack fails here, not on the H200.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH_PY = ROOT / "bench_py"
PACKAGE = BENCH_PY / "bench_core"
# what a bare GPU machine's Python brings, besides the standard library (pynvml: optional)
ALLOWED = {"torch", "numpy", "pynvml", "jax", "bench_core"}
# the Rust twin's modules (bench_rust/bench-core/src/*.rs) that have a Python module of that name
MIRRORED = {"args", "bench", "energy", "format", "smclock", "window"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_the_programs_import_only_the_stdlib_torch_numpy_and_their_package() -> None:
    sources = [*PACKAGE.glob("*.py"), BENCH_PY / "exec_gpu.py", BENCH_PY / "exec_jax.py"]
    assert len(sources) >= 10
    for path in sources:
        foreign = {name for name in _imports(path)
                   if name not in sys.stdlib_module_names and name not in ALLOWED}
        assert not foreign, f"{path.relative_to(ROOT)} imports {sorted(foreign)}"


def test_each_module_says_its_role_and_the_rust_twins_have_a_namesake() -> None:
    for path in PACKAGE.glob("*.py"):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        assert doc and len(doc) > 40, f"{path.name} has no docstring saying its role"
    rust = {p.stem for p in (ROOT / "bench_rust" / "bench-core" / "src").glob("*.rs")}
    python = {p.stem for p in PACKAGE.glob("*.py")}
    assert rust & python >= MIRRORED
    # the package's own table of modules names every module it has
    table = ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8")))
    assert table is not None
    for stem in python - {"__main__"}:
        assert f"``{stem}``" in table, f"bench_core/__init__ does not name {stem}"


_SUMMARY = re.compile(r"^cpu 8x8 matmul (?P<method>[^,]+), 2 runs: min \S+ median \S+$")


@pytest.mark.torch
@pytest.mark.parametrize("how", ["script", "-m exec_gpu", "-m bench_core"])
def test_every_entry_point_runs_the_same_program(how: str, tmp_path: Path) -> None:
    """From another folder by path, and from bench_py/ as a module: the same lines."""
    pytest.importorskip("torch", reason="the real program needs torch")
    args = ["--device", "cpu", "--shape", "8x8", "--reps", "2"]
    if how == "script":
        command, cwd = [sys.executable, str(BENCH_PY / "exec_gpu.py"), *args], tmp_path
    else:
        command, cwd = [sys.executable, *how.split(), *args], BENCH_PY
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("torch ") and lines[2] == "torch precision fp32"
    methods = [m["method"] for line in lines if (m := _SUMMARY.match(line))]
    assert methods == ["no sync", "with sync", "+ sum().item()", "benchmark.Timer"]


def test_a_bad_argument_is_one_error_line_and_status_2(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(BENCH_PY / "exec_gpu.py"), "--reps", "0"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: argument --reps: expected a positive integer, got '0'"]
    assert not (BENCH_PY / "exec_gpu.pyc").exists()
