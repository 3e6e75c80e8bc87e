"""A staged first report: cargo builds in the background while the runs that are ready are
measured; once nothing else is ready `run` writes a partial report, and `report` replaces it.

cargo here is a fake on PATH that hands out the real binaries of build/bin, and only once the
partial report exists (so the order is proven, not timed); PyTorch and burn run for real."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.data import dataset
from orchestrator.programs.burn.cargo import Builder, build_key
from orchestrator.run import background, leftovers

from ..conftest import CPU_BUILDS, PROJECT, facts_probed_once, write

pytestmark = [pytest.mark.cargo, pytest.mark.torch]

TINY = """\
version: 1
defaults: {shape: [32, 32], reps: 2, timeout_s: 120, order: {interleave: false}}
builds:
  template: {crate: exec-cpu}
  default: {crate: exec-gpu}
experiments:
  cpu:
    mode: mm
    threads: [1]
    targets:
      - {program: torch, device: cpu}
      - {program: burn, build: template, device: flex}
      - {program: burn, build: default, device: flex}
      - {program: torch, device: cpu, threads: [2]}
"""

# The binary comes from REAL_BIN; exec-gpu's only once GATE (the partial report) exists.
FAKE_CARGO = """#!{python}
import json, os, shutil, sys, time
args = sys.argv[1:]
crate = args[args.index("-p") + 1]
if crate == "exec-gpu":
    deadline = time.time() + 120
    while not os.path.exists(os.environ["FAKE_GATE"]) and time.time() < deadline:
        with open(os.environ["FAKE_BEATS"], "a") as beats:  # alive, not paused
            beats.write(f"{{time.time()}}\\n")
        time.sleep(0.05)
    if not os.path.exists(os.environ["FAKE_GATE"]):
        sys.exit("error: no partial report was written while this build went on")
exe = os.path.join(args[args.index("--target-dir") + 1], "release", crate)
os.makedirs(os.path.dirname(exe), exist_ok=True)
shutil.copy2(os.path.join(os.environ["REAL_BIN"], crate, crate), exe)
print(json.dumps({{"reason": "compiler-artifact", "target": {{"name": crate}}, "executable": exe}}))
"""


@pytest.fixture
def clone(tmp_path: Path, burn_builds, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project without build/bin (every build needs cargo) and the fake cargo on PATH."""
    project = tmp_path / "clone"
    for part in ("bench_rust", "bench_py"):
        shutil.copytree(PROJECT / part, project / part, ignore=shutil.ignore_patterns("target"))
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "cargo").write_text(FAKE_CARGO.format(python=sys.executable))
    (tools / "cargo").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("REAL_BIN", str(PROJECT / "build" / "bin"))
    monkeypatch.setenv("FAKE_GATE", str(tmp_path / "report" / "report.md"))
    monkeypatch.setenv("FAKE_BEATS", str(tmp_path / "beats.txt"))
    monkeypatch.setattr("orchestrator.cli.PROJECT", project)
    facts_probed_once(monkeypatch)  # the order of builds and runs is judged, not the facts
    assert build_key(CPU_BUILDS["default"]) == "exec-gpu"
    return project


def test_runs_go_on_while_cargo_builds_and_a_partial_report_comes_first(
        clone: Path, tmp_path: Path) -> None:
    exp = write(tmp_path / "tiny.yaml", TINY)
    results, out = tmp_path / "results", tmp_path / "report"
    code = main(["run", str(exp), "--results", str(results), "--quiet",
                 "--partial-report", str(out)])
    assert code == 0  # the fake cargo gave default's binary only once a partial report was there
    # the sweep ended: its own report replaced the partial one
    ended = (out / "report.md").read_text()
    assert "Partial" not in ended and "partial" not in (out / "cpu_threads.csv").read_text()
    runs = dataset.load(results).runs  # in the order they started
    assert (runs["status"] == "ok").all() and len(runs) == 4
    # in plan order torch 1, template, default, torch 2: default's binary came only after the
    # partial report, so the later torch run went before it; template's cargo, paused while
    # torch 1 ran, finished in the gap after it or after torch 2 (either is the plan's order
    # among the runs that were ready)
    assert runs["build"].fillna("").tolist() in (["", "template", "", "default"],
                                                 ["", "", "template", "default"])
    _measured_with_the_build_paused(results, tmp_path / "beats.txt")
    assert main(["report", str(results), "--out", str(out)]) == 0
    final = (out / "report.md").read_text()
    assert "Partial" not in final and "incomplete" not in final
    assert not leftovers.SPARED and not leftovers.STARTING  # nothing of cargo's left spared


def test_a_stopped_sweep_kills_the_background_cargo(tmp_path: Path) -> None:
    """stop() ends the running cargo's whole group and no later build starts."""
    tools = tmp_path / "cargo"
    tools.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(120)\n")
    tools.chmod(0o755)
    project = tmp_path / "p"
    shutil.copytree(PROJECT / "bench_rust", project / "bench_rust",
                    ignore=shutil.ignore_patterns("target"))
    builds = background.BackgroundBuilds(Builder(project, cargo=str(tools)), CPU_BUILDS).start()
    deadline = time.monotonic() + 30
    while not builds.watch.pid and time.monotonic() < deadline:
        time.sleep(0.05)
    background_pid = builds.watch.pid
    assert background_pid
    builds.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(background_pid, 0)
    assert [r.status for r in builds.take()] == ["failed"]  # the killed one; no other began
    assert builds.left() == ["default", "x86-v4"]


def _measured_with_the_build_paused(results: Path, beats_file: Path) -> None:
    """While a run was measured the waiting cargo (default's) was stopped: none of its
    heartbeats fall inside a run, and those runs' records name the paused build."""
    import json
    import sqlite3

    with sqlite3.connect(results / "results.sqlite") as db:
        runs = db.execute("SELECT started_at, ended_at, gate_json FROM runs "
                          "ORDER BY started_at").fetchall()
    beats = [float(b) for b in beats_file.read_text().split()]
    # it did run between the runs (a beat every 50 ms until it is done: how many depends on how
    # fast the machine ran the rest; 9 and 10 were seen where 11 were once asked for)
    assert len(beats) >= 5
    paused = [json.loads(gate).get("builds_paused") or [] for _, _, gate in runs]
    assert all(set(p) <= {"template", "default"} for p in paused)
    waited = [(a, b) for (a, b, _), p in zip(runs, paused, strict=True) if "default" in p]
    assert len(waited) >= 2  # torch 1 and template ran while default was still building
    inside = [t for t in beats for a, b in waited if a + 0.1 < t < b - 0.1]
    assert not inside, f"the build ran during a measured run: {inside[:3]}"
