"""A ledger is a file: copied, planted, emptied or made by another user, it must never make a
sweep end a process that is not its leftover (run/leftovers, run/cache_lock). Every case
starts a real victim process and checks it is still alive after `end_leftovers`."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from orchestrator.errors import CacheSafetyError
from orchestrator.run import cache_lock, leftovers

from ..conftest import PROJECT

NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The machine-wide folder's parent, private to the test (never the real /tmp one)."""
    place = tmp_path / "tmp"
    place.mkdir()
    monkeypatch.setattr(cache_lock, "ROOT", place)
    # the suite's own machine-wide folder (tests/conftest.py) must not take its place, here or
    # in an orchestrator the test starts
    monkeypatch.setenv(cache_lock.ROOT_ENV, str(place))
    return place


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder another user can reach (pytest's own are 0700 to root): as /tmp is."""
    place = Path(tempfile.mkdtemp(prefix="i29-hostile-", dir="/tmp"))
    place.chmod(0o777)
    yield place
    shutil.rmtree(place)


@pytest.fixture
def victim() -> Iterator[subprocess.Popen[bytes]]:
    """Another sweep's program: it carries a well-formed mark of its own."""
    env = {"PATH": os.environ["PATH"], leftovers.MARK: leftovers.new_token()}
    proc = subprocess.Popen(["sleep", "300"], env=env)
    _wait_exec(proc.pid)
    yield proc
    proc.kill()
    proc.wait()


def _wait_exec(pid: int) -> None:
    for _ in range(200):
        if psutil.Process(pid).cmdline() == ["sleep", "300"]:
            return
        time.sleep(0.005)


def _entry(proc: subprocess.Popen[bytes], token: str, **changes: object) -> dict[str, object]:
    """An entry naming `proc` exactly (pid, start time, command line) from a dead orchestrator."""
    entry: dict[str, object] = {
        "pid": proc.pid, "create_time": psutil.Process(proc.pid).create_time(),
        "cmdline": ["sleep", "300"], "token": token, "orchestrator": [1, 0.0]}
    entry.update(changes)
    return entry


def _plant(folder: Path, name: str, entry: dict[str, object], mode: int = 0o600) -> Path:
    path = folder / name
    path.write_text(json.dumps(entry))
    path.chmod(mode)
    return path


def _running_folder(root: Path) -> Path:
    return leftovers._registry(root)


@pytest.mark.parametrize("token", ["", "a", "0" * 31, "G" * 32])
def test_a_malformed_token_matches_no_marked_process(root: Path, tmp_path: Path, token: str,
                                                     victim: subprocess.Popen[bytes]) -> None:
    """An empty token was a substring of every marked environment: every live sweep's
    program was SIGKILLed. Now only a whole, well-formed `ORCHESTRATOR_RUN=<32 hex>` counts."""
    _plant(_running_folder(root), "x.json", _entry(victim, token, pid=2 ** 22 + 7))
    assert leftovers.marked(token) == []
    leftovers.end_leftovers(tmp_path)
    assert victim.poll() is None, "a process that is not this entry's was killed"


def test_a_token_that_prefixes_another_matches_nothing(root: Path, tmp_path: Path,
                                                       victim: subprocess.Popen[bytes]) -> None:
    full = psutil.Process(victim.pid).environ()[leftovers.MARK]
    assert leftovers.marked(full) and not leftovers.marked(full[:31])
    assert leftovers._scan(full[:-1] + ("0" if full[-1] != "0" else "1"))[0] == set()


def test_an_empty_cmdline_never_matches_by_pid(root: Path, tmp_path: Path,
                                               victim: subprocess.Popen[bytes]) -> None:
    """pid and start time alone (both world-readable in /proc) named any process."""
    _plant(tmp_path, leftovers.LEDGER, _entry(victim, leftovers.new_token(), cmdline=[]))
    assert leftovers.end_leftovers(tmp_path) == ("no leftover processes of the earlier sweep "
                                                 "are running")
    assert victim.poll() is None


def test_the_exact_entry_of_a_dead_orchestrator_is_still_ended(root: Path, tmp_path: Path,
                                                               victim: subprocess.Popen[bytes]
                                                               ) -> None:
    """The guards leave the real case working: a dead orchestrator's own program goes."""
    _plant(tmp_path, leftovers.LEDGER, _entry(victim, leftovers.new_token()))
    said = leftovers.end_leftovers(tmp_path)
    assert said == f"ended 1 leftover processes of an earlier sweep: pid {victim.pid} (sleep 300)"
    victim.wait(timeout=5)  # psutil's wait may have reaped it already: then the code is lost
    assert not psutil.pid_exists(victim.pid)


def test_a_copy_of_a_live_sweeps_folder_never_ends_its_program(root: Path,
                                                               tmp_path: Path) -> None:
    """A backup taken while a sweep runs holds its running.json; a sweep in the copy found
    the original's live program there and SIGKILLed it. A live orchestrator's program is its
    own, whichever folder names it."""
    results = tmp_path / "results"
    results.mkdir()
    live = ("import os, subprocess, sys, time\nfrom pathlib import Path\n"
            "from orchestrator.run import cache_lock, leftovers\n"
            "cache_lock.ROOT = Path(sys.argv[2])\nt = leftovers.new_token()\n"
            "p = subprocess.Popen(['sleep', '300'], env={'PATH': os.environ['PATH'], "
            "leftovers.MARK: t})\nleftovers.write_ledger(Path(sys.argv[1]), p.pid, t)\n"
            "print(p.pid, flush=True)\ntime.sleep(300)\n")
    boss = subprocess.Popen([sys.executable, "-c", live, str(results), str(root)], cwd=PROJECT,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert boss.stdout is not None
        program = psutil.Process(int(boss.stdout.readline()))
        copy = tmp_path / "backup"
        shutil.copytree(results, copy)
        assert json.loads((copy / leftovers.LEDGER).read_text())["pid"] == program.pid
        assert leftovers.end_leftovers(copy) is None
        assert program.is_running() and program.status() != psutil.STATUS_ZOMBIE
        assert not (copy / leftovers.LEDGER).exists()  # the copy's stale file, not the original
        assert (results / leftovers.LEDGER).exists()
        assert len(list(_running_folder(root).glob("*.json"))) == 1
    finally:
        boss.kill()
        boss.wait()
        for proc in psutil.Process().children(recursive=True):
            # another test's zombie child of this worker has no command line: not ours
            with contextlib.suppress(psutil.Error):
                if proc.cmdline() == ["sleep", "300"] and proc.ppid() in (1, boss.pid):
                    proc.kill()
        leftovers.end_leftovers(results)  # now a dead orchestrator's: ended by the real path


def test_a_lock_folder_others_may_write_is_refused(root: Path, tmp_path: Path) -> None:
    """Made by someone else with mode 0777 (or chmod-ed so): anyone could plant entries."""
    folder = root / f"orchestrator-{os.getuid()}-locks"
    folder.mkdir()
    folder.chmod(0o777)
    with pytest.raises(leftovers.LeftoverError) as info:
        leftovers.end_leftovers(tmp_path)
    assert info.value.exit_code == 2
    assert "writable by other users (mode 777)" in str(info.value)
    with (pytest.raises(CacheSafetyError, match="writable by other users"),
          cache_lock.held(tmp_path / "cache", tmp_path, root)):
        pass
    folder.chmod(0o700)
    (folder / "running").mkdir(mode=0o700)
    (folder / "running").chmod(0o733)
    with pytest.raises(leftovers.LeftoverError, match="running is writable by other users"):
        leftovers.end_leftovers(tmp_path)


def test_a_lock_folder_of_another_user_is_refused(shared: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_lock, "ROOT", shared)  # world-writable: another user came first
    monkeypatch.setenv(cache_lock.ROOT_ENV, str(shared))
    folder = shared / f"orchestrator-{os.getuid()}-locks"
    subprocess.run([*NOBODY, "mkdir", "-m", "700", str(folder)], check=True)
    with pytest.raises(leftovers.LeftoverError, match="is not a folder of this user"):
        leftovers.end_leftovers(tmp_path)


def test_an_entry_another_user_planted_names_nothing(root: Path, tmp_path: Path, shared: Path,
                                                     victim: subprocess.Popen[bytes]) -> None:
    """A second user writes an exact entry for one of root's processes (everything in it is
    world-readable in /proc); it reaches our folder (moved in, or left from a time the folder
    was open): ignored, as is an entry of ours that others may write."""
    running = _running_folder(root)
    drop = shared
    text = json.dumps(_entry(victim, leftovers.new_token()))
    subprocess.run([*NOBODY, sys.executable, "-c",
                    f"open({str(drop / 'e.json')!r}, 'w').write({text!r})"], check=True)
    assert (drop / "e.json").stat().st_uid != os.getuid()
    os.rename(drop / "e.json", running / "planted.json")
    _plant(running, "open.json", _entry(victim, leftovers.new_token()), mode=0o666)
    os.symlink(drop / "e2.json", running / "link.json")
    _plant(drop, "e2.json", _entry(victim, leftovers.new_token()))
    assert leftovers.end_leftovers(tmp_path) is None
    assert victim.poll() is None, "a process named by a planted entry was killed"


def test_the_ledgers_temporary_file_is_never_written_through(root: Path,
                                                             tmp_path: Path) -> None:
    """`.running.json.tmp` planted as a link to another file: that file is left as it was."""
    target = tmp_path / "precious"
    target.write_text("keep")
    os.symlink(target, tmp_path / f".{leftovers.LEDGER}.tmp")
    token = leftovers.new_token()
    leftovers.write_ledger(tmp_path, os.getpid(), token)
    assert target.read_text() == "keep"
    assert json.loads((tmp_path / leftovers.LEDGER).read_text())["token"] == token
    assert (tmp_path / leftovers.LEDGER).stat().st_mode & 0o777 == 0o600
    leftovers.clear_ledger(tmp_path, token)
