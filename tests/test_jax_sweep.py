"""The real JAX CPU program through the orchestrator: plan, run, dataset, report with JAX rows.

A small sweep (32x32, 2 reps): an mm run at one thread (and torch's, for the ratios), a
first-call series of two processes from an emptied compilation cache (admission threshold 0,
recorded), and an accuracy run; then the dataset's JAX rows, the cache proofs and the
report's breakdown table are checked.
"""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import needs_jax

PROJECT = Path(__file__).resolve().parent.parent
EXPERIMENTS = """\
version: 1
defaults: {shape: [32, 32], reps: 2}
experiments:
  jax-mm:
    mode: mm
    threads: [1]
    targets: [{program: jax, device: cpu}, {program: torch, device: cpu}]
  jax-first:
    mode: mm
    processes: 2
    cache: [cold]
    env: {JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS: "0"}
    targets: [{program: jax, device: cpu}]
  jax-acc:
    mode: accuracy
    shapes: [[16, 16]]
    targets: [{program: jax, device: cpu}]
"""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], cwd=PROJECT,
                          capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.slow  # the real JAX program, end to end (21 s: a fifth of the quick loop's time)
@needs_jax
def test_jax_cpu_sweep_has_jax_rows_cache_proofs_and_breakdown(tmp_path: Path) -> None:
    exp = tmp_path / "jax.yaml"
    exp.write_text(EXPERIMENTS, encoding="utf-8")
    plan = _cli("plan", str(exp))
    assert plan.returncode == 0, plan.stderr
    # jax and torch mm, two processes, accuracy
    assert "5 run, 0 skip" in plan.stdout + plan.stderr
    results = tmp_path / "results"
    done = _cli("run", str(exp), "--results", str(results))
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "data.csv"
    assert _cli("export", str(results), "--csv", str(out)).returncode == 0
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    jax_rows = [r for r in rows if r["framework"] == "jax"]
    assert {r["method"] for r in jax_rows} >= {
        "no_sync", "with_sync", "readback", "first_call_lower", "first_call_compile",
        "first_call_run", "accuracy"}
    one_thread = {r["threads"] for r in jax_rows if r["experiment"] == "jax-mm"}
    assert one_thread == {"1"}
    proofs = {r["process"]: r["cache_proof"] for r in jax_rows
              if r["experiment"] == "jax-first" and r["method"] == "first_call_compile"}
    assert proofs["1"].startswith("cold, compiled;"), proofs
    assert proofs["2"].startswith("warm, compiled program read from the cache"), proofs
    report = _cli("report", str(results), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    text = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    # the breakdown (the first-call section's one table here: its heading is the section's)
    assert "| process | cache | trace and lower | compile | first run | cache proof |" in text
    assert "CSV: `first_call_breakdown.csv`" in text
    assert "| jax-first | JAX | cpu | 2 | warm |" in text
    assert "dispatches asynchronously on the CPU too" in text
    # the ratios in roles: JAX, the candidate, against PyTorch, the reference
    assert "JAX / PyTorch: time ratios (above 1: JAX is slower)" in text
    assert "JAX: 0.10" in text or "JAX: 0." in text  # its version among the report's facts
