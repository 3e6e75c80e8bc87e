"""The ledger of the running program, a dead orchestrator's leftovers, the subreaper guard
(run/leftovers; the CLI cases are in tests/test_faults_processes.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from orchestrator.run import leftovers

from ..conftest import PROJECT


def dead_orchestrator(path: Path) -> None:
    """The entry as a SIGKILLed orchestrator left it: its writer (this test) marked gone."""
    entry = json.loads(path.read_text())
    entry["orchestrator"] = [1, 0.0]  # init, with a start time it never had
    path.write_text(json.dumps(entry))


def test_a_reused_pid_in_the_ledger_is_never_touched(tmp_path: Path) -> None:
    """The ledger names a pid that is now another program (other start time): left alone."""
    other = subprocess.Popen(["sleep", "300"])
    try:
        entry = {"pid": other.pid, "create_time": psutil.Process(other.pid).create_time() - 60,
                 "cmdline": ["sleep", "300"], "token": leftovers.new_token()}
        (tmp_path / leftovers.LEDGER).write_text(json.dumps(entry))
        said = leftovers.end_leftovers(tmp_path)
        assert said == "no leftover processes of the earlier sweep are running"
        assert other.poll() is None, "a process with a reused pid was killed"
        assert not (tmp_path / leftovers.LEDGER).exists()
    finally:
        other.kill()
        other.wait()


def test_leftovers_that_cannot_be_ended_refuse_the_sweep(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Root can end any process here, so the refusal is provoked in-process: kill() is made to
    do nothing, as it does for a process of another user (AccessDenied)."""
    survivor = subprocess.Popen(["sleep", "300"])
    try:
        leftovers.write_ledger(tmp_path, survivor.pid, token := leftovers.new_token())
        dead_orchestrator(tmp_path / leftovers.LEDGER)
        monkeypatch.setattr(psutil.Process, "kill", lambda self: None)
        monkeypatch.setattr(leftovers, "END_WAIT_S", 0.1)
        with pytest.raises(leftovers.LeftoverError) as info:
            leftovers.end_leftovers(tmp_path)
        assert info.value.exit_code == 2
        assert f"could not be ended: pid {survivor.pid} (sleep 300); end them" in str(info.value)
        assert (tmp_path / leftovers.LEDGER).exists()  # still named for the next attempt
    finally:
        survivor.kill()
        survivor.wait()
        leftovers.clear_ledger(tmp_path, token)


def test_subreaper_only_on_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patched:  # the Mac: libc is not even opened
        patched.setattr(leftovers.ctypes, "CDLL", lambda *a, **k: pytest.fail("prctl called"))
        assert leftovers.become_subreaper("darwin") is False
    probe = ("import ctypes; from orchestrator.run.leftovers import become_subreaper as b\n"
             "ok = b('linux'); libc = ctypes.CDLL(None); v = ctypes.c_int()\n"
             "libc.prctl(37, ctypes.byref(v), 0, 0, 0); print(ok, v.value)")  # 37: GET
    done = subprocess.run([sys.executable, "-c", probe], cwd=PROJECT, capture_output=True,
                          text=True, check=True)
    assert done.stdout.split() == ["True", "1"]


def test_the_subreaper_mark_lasts_the_sweep_only() -> None:
    """A process that runs a sweep and goes on (a test worker) is left as it was: one that kept
    the mark adopted its daemons' orphans and never reaped them (a test sshd's zombies)."""
    probe = ("import ctypes; from orchestrator.run.leftovers import subreaper\n"
             "libc = ctypes.CDLL(None); v = ctypes.c_int()\n"
             "def now(): libc.prctl(37, ctypes.byref(v), 0, 0, 0); return v.value\n"
             "with subreaper('linux') as ok: during = now()\n"
             "after = now(); libc.prctl(36, 1, 0, 0, 0)\n"
             "with subreaper('linux'): pass\n"
             "print(ok, during, after, now())")  # a mark set before is kept
    done = subprocess.run([sys.executable, "-c", probe], cwd=PROJECT, capture_output=True,
                          text=True, check=True)
    assert done.stdout.split() == ["True", "1", "0", "1"]
