"""This machine's side of a host (orchestrator/hosts/here.py), with the real sshd: a linked
RESULTS/hosts or RESULTS/hosts/NAME is never followed, nor a planted
`attach.tmp` or `.lock` (item 5); attach.json of the wrong shape or size, and a remote
`.hosts/rc` of 5000 digits, are one line each (item 7); a hosts file whose workdir changed
while a sweep ran never drops that sweep's record (item 17)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.hosts.here import host_lock

from .conftest import SshServer, hosts_yaml, runs_in, tiny

pytestmark = pytest.mark.torch


def _run(tmp_path: Path, sshd: SshServer, *extra: str, processes: int = 1,
         hosts: dict[str, dict[str, object]] | None = None) -> int:
    exp = tiny(tmp_path / "tiny.yaml", processes=processes)
    hosts_file = hosts_yaml(tmp_path / "hosts.yaml", sshd, hosts or {"box": {}})
    return main(["run", str(exp), "--hosts", str(hosts_file), "--results",
                 str(tmp_path / "results"), "--poll", "0.3", *extra])


def _wait_for(path: Path, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.3)
    assert path.exists(), f"{path} never came"


@pytest.mark.parametrize("linked", ["hosts", "hosts/box"])
def test_a_linked_hosts_folder_is_never_written_through(
        tmp_path: Path, sshd: SshServer, linked: str,
        capfd: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other"
    (other / "box").mkdir(parents=True)
    for d in (other, other / "box"):
        (d / "results.sqlite").write_bytes(b"another results folder's store")
    (tmp_path / "results" / linked).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "results" / linked).symlink_to(other)
    assert _run(tmp_path, sshd) == 1
    err = capfd.readouterr().err
    assert f"{tmp_path / 'results' / linked} is a symbolic link (to {other})" in err, err
    assert sorted(p.name for p in other.rglob("*")) == ["box", "results.sqlite",
                                                        "results.sqlite"]
    assert (other / "results.sqlite").read_bytes() == b"another results folder's store"
    assert (other / "box" / "results.sqlite").read_bytes() == b"another results folder's store"
    assert not (tmp_path / "remote-box").exists()  # refused before the host was touched
    assert "Traceback" not in err


def test_planted_links_for_attach_tmp_and_lock_are_never_written_through(
        tmp_path: Path, sshd: SshServer, capfd: pytest.CaptureFixture[str]) -> None:
    here = tmp_path / "results" / "hosts" / "box"
    here.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file")
    (here / ".lock").symlink_to(tmp_path / "made-by-the-lock")
    assert _run(tmp_path, sshd, "--detach") == 1
    assert f"{here / '.lock'}: a symbolic link; remove it" in capfd.readouterr().err
    assert not (tmp_path / "made-by-the-lock").exists()

    (here / ".lock").unlink()
    (here / "attach.tmp").symlink_to(victim)
    assert _run(tmp_path, sshd, "--detach") == 0
    assert victim.read_text() == "the user's file"
    assert json.loads((here / "attach.json").read_text())["token"]
    assert not (here / "attach.json").is_symlink()
    assert _run(tmp_path, sshd) == 0  # re-attached, waited on, fetched
    assert runs_in(here / "results.sqlite") == 1


@pytest.mark.parametrize(("record", "said"), [
    ({"pid": 2152}, "attach.json: pid: "),
    ({"pid": "1; rm -rf /"}, "attach.json: pid: expected a process or job id (digits)"),
    ({"token": ["a"]}, "attach.json: token: "),
    ({"workdir": None}, "attach.json: workdir: "),
    ("x" * 100_000, "attach.json: not a record of a sweep (a plain file of at most 65536 "
                    "bytes expected)"),
    ("{not json", "attach.json: "),
    ({"token": None}, "attach.json was written by an older orchestrator and has no token: "
                      "its sweep cannot be proven ours, so it is neither waited on nor stopped"),
])
def test_an_attach_json_of_the_wrong_shape_is_one_line_and_kept(
        tmp_path: Path, sshd: SshServer, record: dict[str, object] | str, said: str,
        capfd: pytest.CaptureFixture[str]) -> None:
    here = tmp_path / "results" / "hosts" / "box"
    here.mkdir(parents=True)
    if isinstance(record, dict):
        record = json.dumps({"host": "box", "ssh": "testhost", "workdir": str(tmp_path / "w"),
                             "pid": "1", "lstart": "then", "token": "0" * 32, **record})
    (here / "attach.json").write_text(record)
    assert _run(tmp_path, sshd) == 1
    err = capfd.readouterr().err
    assert f"host box: {here / said}" in err, err
    assert "remove it once the sweep on box has ended" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert (here / "attach.json").read_text() == record  # kept as it was


def test_temporaries_of_a_killed_fetch_are_removed_under_the_lock(tmp_path: Path) -> None:
    here = tmp_path / "results" / "hosts" / "box"
    here.mkdir(parents=True)
    (here / ".fetch-x1y2").write_bytes(b"half a store" * 1000)
    (here / ".attach-abc.tmp").write_text("{")
    (here / ".fetch-link").symlink_to(tmp_path / "victim")
    (tmp_path / "victim").write_text("the user's file")
    (here / "results.sqlite").write_text("the last good copy")
    with host_lock(tmp_path / "results", "box"):
        assert sorted(p.name for p in here.iterdir()) == [".lock", "results.sqlite"]
    assert (tmp_path / "victim").read_text() == "the user's file"


def test_a_remote_rc_of_5000_digits_is_one_line_and_the_store_is_merged(
        tmp_path: Path, sshd: SshServer, capfd: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, sshd, "--detach") == 0
    token = json.loads((tmp_path / "results/hosts/box/attach.json").read_text())["token"]
    rc = tmp_path / "remote-box" / ".hosts" / f"rc.{token}"
    _wait_for(rc)
    rc.write_text("1" * 5000 + "\n")
    assert _run(tmp_path, sshd) == 1
    err = capfd.readouterr().err
    assert f"host box: its .hosts/rc.{token} holds no exit code ('1111111111111111'...); " \
           "store fetched" in err, err
    assert runs_in(tmp_path / "results" / "results.sqlite") == 1  # merged all the same


def test_a_changed_workdir_keeps_the_record_until_the_old_results_are_fetched(
        tmp_path: Path, sshd: SshServer, capfd: pytest.CaptureFixture[str]) -> None:
    old = str(tmp_path / "remote-box")
    assert _run(tmp_path, sshd, "--detach", processes=2) == 0
    record = tmp_path / "results" / "hosts" / "box" / "attach.json"
    kept = record.read_text()
    capfd.readouterr()
    assert _run(tmp_path, sshd, hosts={"box": {"workdir": str(tmp_path / "moved")}}) == 1
    err = capfd.readouterr().err
    assert f"host box: its sweep was started in {old}, but the hosts file now says workdir " \
           f"{tmp_path / 'moved'}: set workdir back to {old}" in err, err
    assert record.read_text() == kept and not (tmp_path / "moved").exists()
    assert _run(tmp_path, sshd) == 0  # the workdir set back: waited on, fetched, merged
    assert "host box: sweep complete; store fetched" in capfd.readouterr().err
    assert runs_in(tmp_path / "results" / "results.sqlite") == 2
    assert not record.exists()


def test_one_bad_host_is_one_line_while_the_others_are_merged(
        tmp_path: Path, sshd: SshServer, capfd: pytest.CaptureFixture[str]) -> None:
    # 'bad': an earlier fetched copy that is a foreign SQLite file, and a record of the wrong
    # shape; 'good' runs. Then the local store busy: every host ran, none could be merged.
    bad = tmp_path / "results" / "hosts" / "bad"
    bad.mkdir(parents=True)
    with sqlite3.connect(bad / "results.sqlite") as db:
        db.execute("CREATE TABLE notes (text)")
    (bad / "attach.json").write_text('{"host": "bad"}')
    hosts = {"good": {}, "bad": {}}
    assert _run(tmp_path, sshd, hosts=hosts) == 1
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("host bad:")]
    assert len(lines) == 1 and "attach.json: ssh: " in lines[0], err
    assert f"not merged into {tmp_path / 'results'}: " in lines[0]
    assert "host good: sweep complete; store fetched" in err
    assert "merged " in err and "Traceback" not in err
    with sqlite3.connect(tmp_path / "results" / "results.sqlite") as db:
        assert db.execute("SELECT host FROM sweeps").fetchall() == [("good",)]

    # 'bad' now holds a copy of good's store: the same sweep id from another host
    shutil.copy(tmp_path / "results" / "hosts" / "good" / "results.sqlite", bad)
    assert _run(tmp_path, sshd, hosts=hosts) == 1
    err = capfd.readouterr().err
    assert "host good: sweep complete; store fetched" in err and "Traceback" not in err
    (line,) = [line for line in err.splitlines() if line.startswith("host bad:")]
    assert "not merged into" in line and "good" in line.split("not merged into")[1], err
    with sqlite3.connect(tmp_path / "results" / "results.sqlite") as db:
        assert db.execute("SELECT host FROM sweeps").fetchall() == [("good",)]

    (bad / "attach.json").unlink()
    (bad / "results.sqlite").unlink()
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, sys, time; f = open(sys.argv[1], 'r+'); "
        "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(600)"),
        str(tmp_path / "results" / ".lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert _run(tmp_path, sshd, hosts=hosts) == 1
        err = capfd.readouterr().err
    finally:
        holder.kill()
        holder.wait()
    for name in hosts:
        assert f"host {name}: sweep complete; store fetched; not merged into " in err, err
    assert "is in use by another orchestrator" in err and "Traceback" not in err
