"""A detached remote sweep: started and recorded, re-attached by `run` again, fetched; a lost
connection loses nothing; Ctrl-C here stops the sweep there cleanly."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.cli import main

from .conftest import PROJECT, SshServer, hosts_yaml, runs_in, tiny

pytestmark = pytest.mark.torch


def test_detach_then_run_again_reattaches_and_fetches(tmp_path: Path, sshd: SshServer,
                                                      capfd: pytest.CaptureFixture[str]) -> None:
    exp = tiny(tmp_path / "tiny.yaml", processes=3)
    hosts = hosts_yaml(tmp_path / "hosts.yaml", sshd, {"box": {}})
    results = tmp_path / "results"
    argv = ["run", str(exp), "--hosts", str(hosts), "--results", str(results), "--poll", "0.3"]
    assert main([*argv, "--detach"]) == 0
    attached = json.loads((results / "hosts" / "box" / "attach.json").read_text())
    assert attached["pid"] and attached["lstart"] and attached["job"] is None
    assert "running detached (pid" in capfd.readouterr().err
    assert sshd.ssh("kill", "-0", attached["pid"]).returncode == 0  # it runs there, detached

    # the connection is lost (a wrong port): one line, and the record of the sweep is kept
    hosts_yaml(tmp_path / "hosts.yaml", sshd, {"box": {"ssh": "unreachable"}})
    assert main(argv) == 1
    assert "host box: unreachable: connection refused" in capfd.readouterr().err
    assert (results / "hosts" / "box" / "attach.json").is_file()

    hosts_yaml(tmp_path / "hosts.yaml", sshd, {"box": {}})
    assert main(argv) == 0
    err = capfd.readouterr().err
    # re-attached, or found ended if its three runs were done by now
    assert f"(pid {attached['pid']}, started {attached['started_at']})" in err
    assert "host box: sweep complete; store fetched" in err
    assert not (results / "hosts" / "box" / "attach.json").exists()
    assert runs_in(results / "hosts" / "box" / "results.sqlite") == 3
    assert runs_in(results / "results.sqlite") == 3  # merged


def test_ctrl_c_here_stops_the_sweep_there(tmp_path: Path, sshd: SshServer) -> None:
    exp = tiny(tmp_path / "long.yaml", processes=40)
    hosts = hosts_yaml(tmp_path / "hosts.yaml", sshd, {"box": {}})
    results = tmp_path / "results"
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "run", str(exp), "--hosts",
                             str(hosts), "--results", str(results), "--poll", "0.3"],
                            cwd=PROJECT, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    remote_store = tmp_path / "remote-box" / "results" / "results.sqlite"
    deadline = time.monotonic() + 120
    while runs_in(remote_store) < 1 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.3)
    assert runs_in(remote_store) >= 1, "the remote sweep recorded no run"
    pid = json.loads((results / "hosts" / "box" / "attach.json").read_text())["pid"]
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "stopping its sweep" in err and "sweep stopped (finished runs kept" in err
    assert not _runs_there(sshd, pid), _process_chain(sshd, pid)  # nothing left running there
    with sqlite3.connect(results / "hosts" / "box" / "results.sqlite") as db:
        (status,) = db.execute("SELECT status FROM sweeps").fetchone()
        (done,) = db.execute("SELECT count(*) FROM runs WHERE status='ok'").fetchone()
    assert status == "interrupted" and 1 <= done < 40
    left = subprocess.run(["pgrep", "-f", str(tmp_path / "remote-box")], capture_output=True)
    assert left.returncode == 1, left.stdout  # no orchestrator or program of it left


def _runs_there(sshd: SshServer, pid: str) -> bool:
    """Whether `pid` runs on the host: a zombie does not (it has exited and waits for its
    parent to reap it: init reaps on its own schedule, about every 2 s on a Firecracker VM's,
    so `kill -0` right after the stop saw one alive)."""
    state = sshd.ssh("ps", "-o", "stat=", "-p", pid)
    return state.returncode == 0 and not state.stdout.strip().startswith("Z")


def _process_chain(sshd: SshServer, pid: str) -> str:
    """The process and its parents as ps shows them there (pid, parent, state, command)."""
    lines = []
    while pid not in ("", "0") and len(lines) < 12:
        shown = sshd.ssh("ps", "-o", "pid=,ppid=,stat=,args=", "-p", pid).stdout.strip()
        lines.append(shown[:160] or f"{pid}: gone")
        pid = shown.split()[1] if len(shown.split()) > 1 else ""
    return f"still there: {' <- '.join(lines)} (this test runs as pid {os.getpid()})"
