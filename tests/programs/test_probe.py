"""A fact command that hangs: `cargo --version` behind a proxy whose child
holds stdout. Bounded by its timeout, its whole process group killed, also when the
orchestrator is stopped by SIGTERM while it waits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.run import detect

from ..conftest import dead_within, write

# a proxy (like rustup's) whose real child keeps stdout open and never answers
HANGING = """#!/bin/sh
sleep 300 &
echo $! > "$PIDS/child"
echo $$ > "$PIDS/proxy"
wait
"""


@pytest.fixture
def hanging_cargo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    write(bin_dir / "cargo", HANGING).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("PIDS", str(tmp_path))
    return tmp_path


def _pid(folder: Path, name: str) -> int:
    deadline = time.monotonic() + 10
    while not (folder / name).is_file() or not (folder / name).read_text().strip():
        assert time.monotonic() < deadline, f"no {name} pid"
        time.sleep(0.05)
    return int((folder / name).read_text())


def test_a_hanging_fact_command_is_bounded_and_its_child_killed(hanging_cargo: Path) -> None:
    started = time.monotonic()
    assert detect.quiet(["cargo", "--version"], timeout=1) is None
    assert time.monotonic() - started < 5  # subprocess.run waited on the child's pipe
    assert dead_within(_pid(hanging_cargo, "child"), 5)
    assert dead_within(_pid(hanging_cargo, "proxy"), 5)


def test_its_child_does_not_outlive_sigterm(hanging_cargo: Path) -> None:
    script = ("import signal, sys\n"
              "def stop(*_):\n    raise KeyboardInterrupt\n"
              "signal.signal(signal.SIGTERM, stop)\n"
              "from orchestrator.run import detect\n"
              "detect.quiet(['cargo', '--version'], timeout=120)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).parents[2],
                            env=os.environ.copy(), stderr=subprocess.DEVNULL)
    child = _pid(hanging_cargo, "child")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) != 0
    assert dead_within(child, 5)


def test_a_ctrl_c_while_it_starts_kills_its_group(hanging_cargo: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The signal lands inside Popen, the command already running (a loaded machine runs the
    child before the parent returns): it is acted on once the group is known, the group
    killed, never left behind (at load 10 the SIGTERM test above once found the child alive)."""
    from orchestrator.programs import probe

    real = subprocess.Popen

    def started_then_interrupted(*args: object, **kwargs: object) -> subprocess.Popen[str]:
        proc = real(*args, **kwargs)  # type: ignore[call-overload]
        _pid(hanging_cargo, "child")  # the command's child is running
        os.kill(os.getpid(), signal.SIGINT)  # its handler runs here, inside "Popen"
        return proc

    monkeypatch.setattr(probe.subprocess, "Popen", started_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        probe.stdout_of(["cargo", "--version"], timeout=120)
    assert dead_within(_pid(hanging_cargo, "child"), 5)
    assert dead_within(_pid(hanging_cargo, "proxy"), 5)
