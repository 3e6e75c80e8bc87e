"""The machine's state through the real PyTorch program and the CLI, at a small size: a CPU run
records the CPU policy before and after, says why it has no GPU state, and `energy_s` reaches
bench_py as --energy (which, off CUDA, gives a note and no line, not a failure)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator import dataset

from ..conftest import PROJECT, write

pytestmark = pytest.mark.torch

MINI = """\
version: 1
experiments:
  cpu:
    mode: mm
    shapes: [[32, 32]]
    reps: 3
    energy_s: 0.2
    targets:
      - {program: torch, device: cpu}
"""


def test_a_real_cpu_run_keeps_its_state(tmp_path: Path) -> None:
    results = tmp_path / "results"
    done = subprocess.run([sys.executable, "-m", "orchestrator", "run",
                           str(write(tmp_path / "mini.yaml", MINI)), "--results", str(results)],
                          cwd=PROJECT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    db = sqlite3.connect(results / "results.sqlite")
    argv, state_json, stderr = db.execute("SELECT argv_json, state_json, stderr FROM runs"
                                          ).fetchone()
    host = json.loads(db.execute("SELECT host_json FROM sweeps").fetchone()[0])
    args = json.loads(argv)
    assert args[args.index("--energy") + 1] == "0.2"
    assert b"--energy: NVML reads NVIDIA GPUs only" in stderr
    state = json.loads(state_json)
    assert state["gpu_before"] == {"reason": "not an NVIDIA GPU run (device cpu)"}
    for when in ("cpu_before", "cpu_after"):
        assert state[when]["source"].startswith("sysfs")
        assert "governor" in state[when] and "missing" in state[when]
    assert host["cpu_state"]["source"].startswith("sysfs")
    # a torch-only file: torch's own facts probed for real, JAX's and burn's not asked
    assert host["torch"]["version"].startswith("2.") and host["torch"]["threads"] >= 1
    assert "jax" not in host and host["facts_not_probed"] == ["burn", "jax"]
    fig = dataset.load(results).figures
    assert not fig.empty and (fig["method"] != "energy").all()
    row = fig.iloc[0]
    assert row["gpu_state_reason"] == "not an NVIDIA GPU run (device cpu)"
    if state["cpu_before"]["freq_mhz"] is not None:
        assert row["cpu_freq_mhz"] == state["cpu_before"]["freq_mhz"]
    assert row["cpu_governor"] == (state["cpu_before"]["governor"] or "")
