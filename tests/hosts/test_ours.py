"""A process on a host is our sweep only with its token and command line (orchestrator/hosts/
ours.py), through the real sshd: an attach.json naming an unrelated process's pid and start
time is neither waited on nor stopped; our own detached sweep is found,
and stopped, only with its own token."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.hosts import ours
from orchestrator.hosts.model import HostsFile
from orchestrator.hosts.ssh import Transport

from .conftest import SshServer, hosts_yaml, runs_in, tiny

pytestmark = pytest.mark.torch


def _transport(sshd: SshServer) -> Transport:
    hosts = HostsFile.model_validate({"hosts": {"box": {
        "ssh": "testhost", "ssh_options": sshd.options(), "workdir": "/nowhere"}}})
    return Transport("box", hosts.hosts["box"])


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)  # the test sshd's host is this machine
    except ProcessLookupError:
        return False
    return True


def test_an_unrelated_process_named_in_attach_json_is_never_stopped(
        tmp_path: Path, sshd: SshServer, capfd: pytest.CaptureFixture[str]) -> None:
    # (ssh joins its arguments into one line for the host's shell: one string)
    started = sshd.ssh("setsid nohup sleep 1000 >/dev/null 2>&1 </dev/null & echo $!")
    pid = started.stdout.split()[-1]
    try:
        t = _transport(sshd)
        lstart = ours.lstart(t, pid)
        assert lstart  # the process runs, with a start time as ps says it
        workdir = str(tmp_path / "remote-box")
        planted = ours.Started(pid, None, lstart, "0" * 32)
        assert not ours.running(t, workdir, planted)  # pid + start time alone: not ours
        ours.stop(t, workdir, planted)
        time.sleep(0.3)
        assert _alive(pid), "a process that only shares pid and start time was killed"

        # the whole command: attach.json planted with that pid and start time
        results = tmp_path / "results"
        (results / "hosts" / "box").mkdir(parents=True)
        (results / "hosts" / "box" / "attach.json").write_text(json.dumps({
            "host": "box", "ssh": "testhost", "workdir": workdir, "pid": pid, "job": None,
            "lstart": lstart, "token": "0" * 32, "started_at": "then"}))
        hosts = hosts_yaml(tmp_path / "hosts.yaml", sshd, {"box": {}})
        code = main(["run", str(tiny(tmp_path / "tiny.yaml")), "--hosts", str(hosts),
                     "--results", str(results), "--poll", "0.3"])
        err = capfd.readouterr().err
        assert code == 1, err
        assert "stopping" not in err and "no store there (the sweep never began)" in err
        assert "re-attached" not in err
        assert f"host box: its sweep (pid {pid}, started then) no longer runs there" in err
        assert _alive(pid)
    finally:
        if _alive(pid):
            os.kill(int(pid), signal.SIGKILL)


def test_our_sweep_is_found_and_stopped_only_with_its_own_token(
        tmp_path: Path, sshd: SshServer) -> None:
    exp = tiny(tmp_path / "long.yaml", processes=40)
    hosts = hosts_yaml(tmp_path / "hosts.yaml", sshd, {"box": {}})
    results = tmp_path / "results"
    assert main(["run", str(exp), "--hosts", str(hosts), "--results", str(results),
                 "--detach"]) == 0
    record = json.loads((results / "hosts" / "box" / "attach.json").read_text())
    workdir = record["workdir"]
    mine = ours.Started(record["pid"], None, record["lstart"], record["token"])
    other = ours.Started(record["pid"], None, record["lstart"], "f" * 32)
    t = _transport(sshd)
    assert ours.running(t, workdir, mine)
    assert not ours.running(t, workdir, other)  # same pid, same start: another command line
    assert not ours.running(t, "/elsewhere", mine)  # run.sh of another work folder
    ours.stop(t, workdir, other)
    time.sleep(1)
    assert ours.running(t, workdir, mine), "a wrong token stopped the sweep"
    remote = tmp_path / "remote-box" / "results" / "results.sqlite"
    deadline = time.monotonic() + 120
    while runs_in(remote) < 1 and time.monotonic() < deadline:
        time.sleep(0.3)
    ours.stop(t, workdir, mine)
    deadline = time.monotonic() + 120
    while ours.running(t, workdir, mine) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert not ours.running(t, workdir, mine)
    assert (tmp_path / "remote-box" / ".hosts" / f"rc.{mine.token}").read_text().strip() == "130"
