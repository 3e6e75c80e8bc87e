"""Background builds paused while a run is measured (run/background.py): `paused()` stops
cargo's whole process group (cargo and its rustc-like children) and resumes it, and a cargo that
starts while a run is being measured is stopped at once. Real processes, a fake cargo."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import psutil
import pytest

from orchestrator.programs.burn.cargo import Builder
from orchestrator.run import background

from ..conftest import CPU_BUILDS, PROJECT

# a cargo that starts a child (as cargo starts rustc); the child beats into a file every 20 ms
# (a stopped group writes nothing) and both live until killed
FAKE_CARGO = """#!{python}
import subprocess, sys, time
beat = "import time\\nwhile True:\\n    open({beats!r}, 'a').write('.')\\n    time.sleep(0.02)"
child = subprocess.Popen([sys.executable, "-c", beat])
open({pid_file!r}, "w").write(str(child.pid))
time.sleep(3600)
"""


def _state(pid: int) -> str:
    return psutil.Process(pid).status()


def _until(what, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.fixture
def builds(tmp_path: Path):
    pid_file, beats = tmp_path / "child.pid", tmp_path / "beats"
    cargo = tmp_path / "cargo"
    cargo.write_text(FAKE_CARGO.format(python=sys.executable, pid_file=str(pid_file),
                                       beats=str(beats)))
    cargo.chmod(0o755)
    project = tmp_path / "p"
    shutil.copytree(PROJECT / "bench_rust", project / "bench_rust",
                    ignore=shutil.ignore_patterns("target"))
    made = background.BackgroundBuilds(Builder(project, cargo=str(cargo)), CPU_BUILDS)
    made.pid_file, made.beats = pid_file, beats  # type: ignore[attr-defined]
    yield made
    made.stop()


def _beats(builds) -> int:
    return builds.beats.stat().st_size if builds.beats.exists() else 0


def test_paused_stops_cargos_group_and_resumes_it(builds) -> None:
    builds.start()
    _until(lambda: builds.watch.pid and builds.pid_file.exists() and
           builds.pid_file.read_text())
    cargo, child = builds.watch.pid, int(builds.pid_file.read_text())
    with builds.paused() as waiting:
        assert waiting == list(CPU_BUILDS)  # the first one running, none finished
        _until(lambda: _state(cargo) == psutil.STATUS_STOPPED == _state(child))
        seen = _beats(builds)
        time.sleep(0.5)
        assert _beats(builds) == seen  # stopped: nothing done while the run is measured
    _until(lambda: _state(child) != psutil.STATUS_STOPPED)
    seen = _beats(builds)
    _until(lambda: _beats(builds) > seen + 3)  # and going again after it
    assert _state(cargo) != psutil.STATUS_STOPPED


def test_a_cargo_started_during_a_run_waits_for_its_end(builds) -> None:
    with builds.paused() as waiting:
        assert waiting == list(CPU_BUILDS)
        builds.start()  # the build thread starts cargo while a run is measured
        _until(lambda: builds.watch.pid)
        cargo = builds.watch.pid
        _until(lambda: _state(cargo) == psutil.STATUS_STOPPED)
        time.sleep(0.5)
        # stopped before its interpreter was up: it has started no rustc-like child
        assert not builds.pid_file.exists()
    _until(lambda: builds.pid_file.exists() and builds.pid_file.read_text())
    assert _state(cargo) != psutil.STATUS_STOPPED


def test_stop_kills_a_paused_build(builds) -> None:
    builds.start()
    _until(lambda: builds.watch.pid and builds.pid_file.exists() and
           builds.pid_file.read_text())
    cargo, child = builds.watch.pid, int(builds.pid_file.read_text())
    with builds.paused():
        _until(lambda: _state(cargo) == psutil.STATUS_STOPPED)
        builds.stop()  # Ctrl-C during a run: the stopped group dies all the same
    for pid in (cargo, child):
        _until(lambda pid=pid: not psutil.pid_exists(pid) or
               _state(pid) == psutil.STATUS_ZOMBIE)
    assert [r.status for r in builds.take()] == ["failed"]
