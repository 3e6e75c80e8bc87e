"""One host's side (orchestrator/hosts/remote.py, ssh.py) through the real sshd: a workdir
that holds the user's files is refused with nothing overwritten, and a store there is never
resumed; a shell that prints a banner before every command still pushes,
probes its Python, runs and fetches, and a fetched copy that is not a store never replaces the
last good one (item 16); sbatch's answer is a job id only when it is one (item 17)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.hosts.faults import HostError
from orchestrator.hosts.here import store_problem
from orchestrator.hosts.model import HostsFile
from orchestrator.hosts.remote import MARKER, RUN_SH, Remote
from orchestrator.hosts.ssh import OUTPUT_MAX, Transport

from .conftest import PROJECT, SshServer, hosts_yaml, runs_in, tiny

pytestmark = pytest.mark.torch
STORE = PROJECT / "docs" / "results" / "h200" / "results.sqlite"  # a committed real store


def _run(tmp_path: Path, sshd: SshServer, hosts: dict[str, dict[str, object]]) -> int:
    return main(["run", str(tiny(tmp_path / "tiny.yaml")), "--hosts",
                 str(hosts_yaml(tmp_path / "hosts.yaml", sshd, hosts)), "--results",
                 str(tmp_path / "results"), "--poll", "0.3"])


def test_a_workdir_of_the_users_is_refused_and_nothing_in_it_overwritten(
        tmp_path: Path, sshd: SshServer, capfd: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "remote-box"
    (work / "scripts").mkdir(parents=True)
    (work / "setup.sh").write_text("the user's own setup.sh")
    (work / "scripts" / "mine.sh").write_text("the user's script")
    (work / "results").mkdir()
    shutil.copy(STORE, work / "results")
    before = {p: p.read_bytes() for p in work.rglob("*") if p.is_file()}
    assert _run(tmp_path, sshd, {"box": {}}) == 1
    err = capfd.readouterr().err
    assert f"host box: its workdir {work} holds files the orchestrator did not put there " \
           "(" in err and f"no {MARKER} of an earlier push: name an empty or new folder" in err
    assert {p: p.read_bytes() for p in work.rglob("*") if p.is_file()} == before
    assert not (work / ".hosts").exists() and not (work / "orchestrator").exists()


def test_a_workdir_others_may_write_is_refused(tmp_path: Path, sshd: SshServer,
                                              capfd: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "remote-box"
    work.mkdir()
    work.chmod(0o777)
    assert _run(tmp_path, sshd, {"box": {}}) == 1
    assert f"host box: its workdir {work} belongs to another user or is writable by others: " \
           "name a folder of your own" in capfd.readouterr().err
    assert list(work.iterdir()) == []


def test_a_marked_workdir_is_pushed_to_again_and_its_store_resumed(
        tmp_path: Path, sshd: SshServer, capfd: pytest.CaptureFixture[str]) -> None:
    # a folder an orchestrator from before the marker pushed to: its run.sh says so
    work = tmp_path / "remote-box"
    (work / ".hosts").mkdir(parents=True)
    (work / ".hosts" / "run.sh").write_text(RUN_SH)
    (work / "setup.sh").write_text("pushed by an earlier orchestrator")
    assert _run(tmp_path, sshd, {"box": {}}) == 0
    assert (work / MARKER).is_file()
    assert _run(tmp_path, sshd, {"box": {}}) == 0  # marked by that push: ours
    with sqlite3.connect(tmp_path / "remote-box" / "results" / "results.sqlite") as db:
        assert db.execute("SELECT count(*) FROM sweeps").fetchone() == (1,)  # resumed
    assert "Traceback" not in capfd.readouterr().err


def test_a_second_orchestrator_is_refused_while_a_sweep_runs_in_the_workdir(
        tmp_path: Path, sshd: SshServer, capfd: pytest.CaptureFixture[str]) -> None:
    """Two results folders given one hosts file (two terminals): the second pushed into the
    work folder while the first's sweep ran there (its code replaced mid-sweep), truncated its
    run.log, removed its .hosts/rc, and, its own sweep refused by the store's lock there,
    said "sweep complete" with exit 0 and merged the first's sweep as its own. Now it is
    refused in one line, nothing written there, and each sweep's exit code and log are its
    own."""
    hosts = hosts_yaml(tmp_path / "hosts.yaml", sshd, {"box": {}})
    exp = tiny(tmp_path / "tiny.yaml", processes=4)
    first, second = ([
        "run", str(exp), "--hosts", str(hosts), "--results", str(tmp_path / r), "--poll", "0.3"]
        for r in ("R1", "R2"))
    assert main([*first, "--detach"]) == 0
    token = json.loads((tmp_path / "R1/hosts/box/attach.json").read_text())["token"]
    work = tmp_path / "remote-box"
    before = {p: p.stat().st_mtime_ns for p in work.rglob("*") if p.is_file() and
              "results" not in p.parts and p.name != f"run.{token}.log"}
    assert main(second) == 1
    err = capfd.readouterr().err
    assert "host box: another orchestrator's sweep runs in its workdir " in err, err
    assert "(pid " in err and "nothing was written there" in err
    assert not (tmp_path / "R2" / "hosts" / "box" / "attach.json").exists()
    assert {p: p.stat().st_mtime_ns for p in before} == before  # not pushed to
    assert main(first) == 0  # the first re-attaches, and its own exit code says it ended
    assert "host box: sweep complete; store fetched" in capfd.readouterr().err
    assert (work / ".hosts" / f"rc.{token}").read_text().strip() == "0"
    assert "sweep" in (work / ".hosts" / f"run.{token}.log").read_text()
    assert not (work / ".hosts" / "running").exists()
    assert main(second) == 0  # the work folder is free again: its store resumed there
    assert runs_in(tmp_path / "R2" / "results.sqlite") == 4


def test_a_shell_that_prints_a_banner_still_runs_and_fetches(
        tmp_path: Path, sshd: SshServer, capfd: pytest.CaptureFixture[str]) -> None:
    shown = subprocess.run(["ssh", *sshd.options(), "bannerhost", "echo", "hi"],
                           capture_output=True, text=True, timeout=60, check=False).stdout
    assert shown == "Welcome to the test cluster\nhi\n"  # the banner is there
    assert _run(tmp_path, sshd, {"cluster": {"ssh": "bannerhost"}}) == 0
    err = capfd.readouterr().err
    assert "by rsync past the shell's banner (relay)" in err
    assert "host cluster: sweep complete; store fetched" in err, err
    fetched = tmp_path / "results" / "hosts" / "cluster" / "results.sqlite"
    assert store_problem(fetched) is None and runs_in(fetched) == 1
    assert runs_in(tmp_path / "results" / "results.sqlite") == 1


def test_rsync_pushes_through_a_shell_that_prints_a_banner(tmp_path: Path,
                                                           sshd: SshServer) -> None:
    """rsync's protocol read the banner as its version ("protocol incompatibility"), so such
    a host was pushed to by tar, every file every time. Through the relay (hosts/relay.py) rsync
    sees only what follows the mark: the files arrive whole, and a second push moves only the
    changed one (rsync's --itemize-changes would list it; here its bytes and the untouched
    file's inode say so)."""
    hosts = HostsFile.model_validate({"hosts": {"box": {
        "ssh": "bannerhost", "ssh_options": sshd.options(), "workdir": str(tmp_path)}}})
    t = Transport("box", hosts.hosts["box"])
    here, there = tmp_path / "here", tmp_path / "there"
    (here / "pkg").mkdir(parents=True)
    (here / "pkg" / "a.py").write_bytes(bytes(range(256)) * 400)
    (here / "b.txt").write_text("unchanged\n")
    assert t.push(here, ["pkg/a.py", "b.txt"], str(there)) == \
        "rsync past the shell's banner (relay)"
    assert (there / "pkg" / "a.py").read_bytes() == (here / "pkg" / "a.py").read_bytes()
    kept = (there / "b.txt").stat().st_ino
    (here / "pkg" / "a.py").write_text("changed\n")
    t.push(here, ["pkg/a.py", "b.txt"], str(there))
    assert (there / "pkg" / "a.py").read_text() == "changed\n"
    assert (there / "b.txt").stat().st_ino == kept  # not sent again: rsync, not tar


@pytest.mark.parametrize("push", ["tar", "auto"])
def test_a_push_never_writes_through_a_link_in_the_workdir(tmp_path: Path, sshd: SshServer,
                                                           push: str) -> None:
    """A folder of the work folder replaced by a link to the user's own folder (`scripts ->
    ~/mine`): tar's push wrote the project's files through it, over the user's files of the
    same names (rsync replaced the link). Each folder is now a member of the archive before
    its files, and tar, like rsync, replaces the link with a folder."""
    hosts = HostsFile.model_validate({"hosts": {"box": {
        "ssh": "testhost", "ssh_options": sshd.options(), "workdir": str(tmp_path),
        "push": push}}})
    t = Transport("box", hosts.hosts["box"])
    here, there, mine = tmp_path / "here", tmp_path / "there", tmp_path / "mine"
    (here / "scripts" / "sub").mkdir(parents=True)
    (here / "scripts" / "sub" / "run.sh").write_text("pushed\n")
    (mine / "sub").mkdir(parents=True)
    (mine / "sub" / "run.sh").write_text("the user's own\n")
    there.mkdir()
    (there / "scripts").symlink_to(mine)
    assert t.push(here, ["scripts/sub/run.sh"], str(there)).startswith(
        "tar" if push == "tar" else "rsync")
    assert (mine / "sub" / "run.sh").read_text() == "the user's own\n"
    assert (there / "scripts" / "sub" / "run.sh").read_text() == "pushed\n"
    assert not (there / "scripts").is_symlink()


def test_the_relay_refuses_a_stream_without_the_mark() -> None:
    from orchestrator.hosts import relay
    got = subprocess.run([sys.executable, "-m", "orchestrator.hosts.relay", "MARK", "sh", "-c",
                          "echo a banner; echo no mark"], capture_output=True, cwd=PROJECT,
                         check=False)
    assert got.returncode == relay.PROTOCOL_ERROR and got.stdout == b""
    assert b"printed no output mark" in got.stderr
    got = subprocess.run([sys.executable, "-m", "orchestrator.hosts.relay", "MARK", "sh", "-c",
                          "echo a banner; echo MARK; printf 'proto\\0data'"],
                         capture_output=True, cwd=PROJECT, check=False)
    assert (got.returncode, got.stdout) == (0, b"proto\0data")
    # a shell that prints its banner and then hangs: no mark in time, ssh ended, one line
    assert relay.relay(b"MARK\n", ["sh", "-c", "echo a banner; exec sleep 60"],
                       mark_timeout_s=0.5) == relay.PROTOCOL_ERROR


def test_a_fetched_copy_that_is_not_a_store_never_replaces_the_last_good_one(
        tmp_path: Path, sshd: SshServer) -> None:
    hosts = HostsFile.model_validate({"hosts": {"box": {
        "ssh": "bannerhost", "ssh_options": sshd.options(), "workdir": str(tmp_path)}}})
    t = Transport("box", hosts.hosts["box"])
    good = tmp_path / "here" / "results.sqlite"
    good.parent.mkdir()
    shutil.copy(STORE, good)
    kept = good.read_bytes()
    (tmp_path / "notastore.txt").write_text("a text file, not SQLite\n")
    with pytest.raises(HostError, match="the fetched copy of .*notastore.txt is not an SQLite "
                                        r"file \(it begins 'a text file, not'\); the last good "
                                        "copy .* is kept"):
        t.fetch(str(tmp_path / "notastore.txt"), good, check=store_problem)
    assert good.read_bytes() == kept and sorted(p.name for p in good.parent.iterdir()) == [
        "results.sqlite"]  # no temporary left
    t.fetch(str(STORE), good, check=store_problem)
    assert good.read_bytes() == kept  # the banner cut off: the very bytes of the store


@pytest.mark.parametrize(("said", "job"), [
    ("12345\n", "12345"), ("12345;cluster\n", "12345"),
    ("Welcome to the cluster\n\n777\n", "777"),  # a banner the mark did not cut (stderr)
    ("", None), ("Submitted batch job 12\n", None), ("sbatch: error: no partition\n", None),
    ("0\n", None), ("12 13\n", None),
])
def test_only_a_job_id_from_sbatch_is_taken_as_one(said: str, job: str | None) -> None:
    hosts = HostsFile.model_validate({"hosts": {"c": {"ssh": "c", "workdir": "/w"}}})
    remote = Remote("c", hosts.hosts["c"], PROJECT)
    if job is not None:
        assert remote._job_id(said, "a" * 32) == job
        return
    with pytest.raises(HostError, match=r"host c: sbatch printed no job id \(.*\): look for a "
                                        f"job named orchestrator-{'a' * 32} there"):
        remote._job_id(said, "a" * 32)


def test_a_host_that_floods_its_output_is_read_bounded(tmp_path: Path, sshd: SshServer) -> None:
    hosts = HostsFile.model_validate({"hosts": {"box": {
        "ssh": "testhost", "ssh_options": sshd.options(), "workdir": str(tmp_path)}}})
    done = Transport("box", hosts.hosts["box"]).run(
        ["sh", "-c", "head -c 50000000 /dev/zero; head -c 5000000 /dev/zero >&2"])
    assert done.returncode == 0
    assert len(done.stdout) < OUTPUT_MAX and len(done.stderr) == 1 << 16
