"""Faults of hosts, each one clear line while the other hosts go on and what was fetched is
kept: an unreachable host, a refused key, no Python there, no cargo there, a full disk; and a
hosts file with a mistake named by file, line and YAML path (exit 2, nothing started)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.hosts import remote

from .conftest import SshServer, hosts_yaml, tiny

pytestmark = pytest.mark.torch


def test_each_broken_host_is_one_line_and_the_good_one_goes_on(
        tmp_path: Path, sshd: SshServer, capfd: pytest.CaptureFixture[str]) -> None:
    hosts = hosts_yaml(tmp_path / "hosts.yaml", sshd, {
        "good": {}, "gone": {"ssh": "unreachable"}, "locked": {"ssh": "refused"},
        "nopy": {"python": "/nonexistent/python3"},
        "nocargo": {"setup": "setup.sh", "cargo": "/nonexistent/cargo"}})
    results = tmp_path / "results"
    code = main(["run", str(tiny(tmp_path / "tiny.yaml")), "--hosts", str(hosts), "--results",
                 str(results), "--poll", "0.3"])
    err = capfd.readouterr().err
    assert code == 1, err
    assert "host gone: unreachable: connection refused (no sshd on that port?) (connect)" in err
    assert "host locked: the key was refused (ssh: Permission denied)" in err
    assert "host nopy: no Python '/nonexistent/python3' there (set 'python:')" in err
    assert "host nocargo: no cargo there for setup.sh" in err
    assert "host good: sweep complete; store fetched" in err
    assert "Traceback" not in err
    with sqlite3.connect(results / "results.sqlite") as db:
        assert db.execute("SELECT host FROM sweeps").fetchall() == [("good",)]


def test_a_full_disk_there_is_refused_before_the_push(tmp_path: Path, sshd: SshServer,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capfd: pytest.CaptureFixture[str]) -> None:
    # the real df of the test host, against a threshold no disk here reaches
    monkeypatch.setattr(remote, "MIN_FREE_MIB", 2**40)
    hosts = hosts_yaml(tmp_path / "hosts.yaml", sshd, {"full": {}})
    code = main(["run", str(tiny(tmp_path / "tiny.yaml")), "--hosts", str(hosts), "--results",
                 str(tmp_path / "results")])
    err = capfd.readouterr().err
    assert code == 1
    assert "host full: its disk is full: " in err and "MiB free in" in err
    assert not (tmp_path / "remote-full" / "orchestrator").exists()  # nothing pushed


@pytest.mark.parametrize(("text", "said"), [
    ("version: 1\nhosts:\n  box:\n    ssh: box\n",
     "hosts.yaml:4 at hosts.box.workdir: required key is missing"),
    ("version: 1\nhosts:\n  box:\n    ssh: box\n    workdir: /w\n    place: slurmm\n",
     "hosts.yaml:6 at hosts.box.place: "),
    ("version: 1\nhosts:\n  box:\n    ssh: box\n    workdir: /w\n    slurm: {time: soon}\n",
     "hosts.yaml:6 at hosts.box.slurm.time: expected Slurm's --time"),
    ("version: 1\nhosts:\n  box:\n    ssh: box\n    workdir: /w\n    typo: 1\n",
     "hosts.yaml:6 at hosts.box.typo: "),
    ("version: 1\nhosts:\n  box:\n    ssh: box\n    workdir: ~/bench\n",
     "hosts.yaml:5 at hosts.box.workdir: expected an absolute path on the host"),
    ("version: 1\nhosts:\n  b/x:\n    ssh: box\n    workdir: /w\n",
     "hosts.yaml:3 at hosts: "),
    # ssh takes an ssh:// address, rsync would read it as a host named 'ssh'
    ("version: 1\nhosts:\n  box:\n    ssh: ssh://me@box:2222\n    workdir: /w\n",
     "hosts.yaml:4 at hosts.box.ssh: an ssh:// address is not taken (rsync would read it as a "
     "host named 'ssh'): write user@host, the port in ssh_options"),
])
def test_a_bad_hosts_file_names_file_line_and_path(tmp_path: Path, text: str, said: str,
                                                   capfd: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "hosts.yaml").write_text(text)
    code = main(["run", str(tiny(tmp_path / "tiny.yaml")), "--hosts",
                 str(tmp_path / "hosts.yaml"), "--results", str(tmp_path / "results")])
    err = capfd.readouterr().err
    assert code == 2 and said in err, err
    assert "Traceback" not in err and not (tmp_path / "results").exists()
