"""Nothing a run starts outlives it: the ledger of the running program, leftovers, descendants.

Three ways a program's processes could outlive their run, and what answers each:

- the orchestrator is SIGKILLed (or the machine's OOM killer picks it) while a program runs:
  nothing can end the program then, so the running program is written down before it is waited
  for (`<results>/running.json`: pid, start time, command line, the run's mark) and crossed out
  after; the next sweep in that folder (a resume or `--new`) ends what the ledger names, but only
  processes whose pid, start time and command line still match, or that carry the run's mark:
  a pid the system gave to another program since is never touched;
- a program starts a daemon (`setsid`, a double fork) that leaves the process group the run's
  kill ends: on Linux the orchestrator is a child subreaper while its sweep runs (and only
  then), so such orphans become its children
  (not init's) and `end_descendants` finds them; everywhere, each run's processes carry the
  mark `ORCHESTRATOR_RUN=<token>` in their environment, which a daemon keeps;
- the mark is the one variable a program gets that its record's `env` does not list: it names
  the run's processes, it changes nothing they do.

What is never ended, whatever a ledger says (a ledger is a file anyone with the folder could
copy or plant): a process whose orchestrator is alive (a copy of a results folder names the
original sweep's program), a process without the entry's exact 32-hex-digit token as a whole
environment entry (never a substring: an empty token would match every marked process), a pid
whose start time and non-empty command line differ, and anything an entry names that is not a
plain file of this user writable by nobody else, in a folder of this user writable by nobody
else (another user could otherwise name a process of ours).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import stat
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from orchestrator.errors import CacheSafetyError, OrchestratorError
from orchestrator.programs import probe
from orchestrator.run import cache_lock

MARK = "ORCHESTRATOR_RUN"
# A build's cargo running in the background while runs go on (run/background.py) is our child
# but no run's leftover: its pid is spared, and so is a child born after a build began to start
# (its pid not known yet); each build carries its own mark and ends its own processes.
SPARED: set[int] = set()
STARTING: dict[str, float] = {}  # build token -> when it began to start
LEDGER = "running.json"
PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
PR_GET_CHILD_SUBREAPER = 37
END_WAIT_S = 5.0  # SIGKILL is not refusable: a process still there after this cannot be ended
TOKEN = re.compile(r"[0-9a-f]{32}")  # new_token's form; anything else names nothing
ENTRY_MAX = 1 << 20  # an entry is a few hundred bytes; a bigger file is not one


class LeftoverError(OrchestratorError):
    """Leftovers of an earlier sweep that could not be ended: measuring beside them is wrong."""

    exit_code = 2


def new_token() -> str:
    return uuid.uuid4().hex


def become_subreaper(platform: str = sys.platform) -> bool:
    """Make orphaned descendants our children (Linux prctl); False where there is no such thing
    (macOS, or a kernel that refuses): the mark alone finds them there."""
    return _prctl(platform, PR_SET_CHILD_SUBREAPER, 1)


@contextlib.contextmanager
def subreaper(platform: str = sys.platform) -> Iterator[bool]:
    """The subreaper mark for a sweep's runs only, put back as it was after: a process that
    runs a sweep and goes on (a test, a notebook) would otherwise adopt every orphan of its
    descendants for good, and nothing there reaps them (a daemon it started, such as a test's
    sshd, then leaves unreaped zombies of its sessions' children)."""
    before = _subreaper_now(platform)
    set_ = become_subreaper(platform)
    try:
        yield set_
    finally:
        if set_ and before == 0:
            _prctl(platform, PR_SET_CHILD_SUBREAPER, 0)


def _subreaper_now(platform: str) -> int | None:
    """The mark as it is now (1 or 0), or None where it cannot be read."""
    value = ctypes.c_int()
    return value.value if _prctl(platform, PR_GET_CHILD_SUBREAPER, ctypes.byref(value)) else None


def _prctl(platform: str, option: int, arg: Any) -> bool:
    """libc's prctl(option, arg) succeeded; False off Linux or where libc has none."""
    if not platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


@dataclass(frozen=True)
class Entry:
    """One program the ledger names."""

    pid: int
    create_time: float
    cmdline: tuple[str, ...]
    token: str
    orchestrator_pid: int = 0  # the orchestrator that started it, and its start time
    orchestrator_started: float = 0.0

    def matches(self, proc: psutil.Process) -> bool:
        """The same process, not a later one that got its pid."""
        if not self.cmdline:  # would match any process with that pid and start time
            return False
        with contextlib.suppress(psutil.Error):
            return (abs(proc.create_time() - self.create_time) < 0.01
                    and tuple(proc.cmdline()) == self.cmdline)
        return False

    def owner_alive(self) -> bool:
        """Its orchestrator still runs: the program is that orchestrator's own, never a
        leftover (a copied results folder's ledger names a live sweep's program)."""
        with contextlib.suppress(psutil.Error):
            boss = psutil.Process(self.orchestrator_pid)
            return abs(boss.create_time() - self.orchestrator_started) < 0.01 and _running(boss)
        return False


def _registry(root: Path | None = None) -> Path:
    """The machine-wide copy of every running program's entry (one file per run): a sweep in
    another results folder finds a dead orchestrator's leftovers too."""
    folder = cache_lock.private_folder(root) / "running"
    folder.mkdir(mode=0o700, exist_ok=True)
    cache_lock.refuse_shared(folder)
    return folder


def _me() -> list[float]:
    return [os.getpid(), psutil.Process().create_time()]


def write_ledger(folder: Path | None, pid: int, token: str) -> None:
    """Write the running program down (atomically) before it is waited for: in the results
    folder, and machine-wide (best effort: the results folder's copy is the one that must be).
    A background build (folder None) is written machine-wide only: the folder's is the run's."""
    try:
        proc = psutil.Process(pid)
        entry = {"pid": pid, "create_time": proc.create_time(), "cmdline": _cmdline(proc)}
    except psutil.Error:  # it has already exited: its group is killed in a moment anyway
        entry = {"pid": pid, "create_time": 0.0, "cmdline": []}
    entry.update(token=token, orchestrator=_me(), results=str(folder))
    text = json.dumps(entry).encode()
    if folder is not None:
        tmp = folder / f".{LEDGER}.tmp"
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()  # a link planted there goes, never what it points to
        write_new(tmp, text)
        tmp.replace(folder / LEDGER)
    with contextlib.suppress(OSError, CacheSafetyError):
        write_new(_registry() / f"{token}.json", text)


def write_new(path: Path, data: bytes) -> None:
    """Create `path` (never through a link, never an existing file), 0600, and write it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def _cmdline(proc: psutil.Process) -> list[str]:
    """Its command line; Popen returns once exec has closed the error pipe, an instant before
    the kernel has set the new arguments up, so an empty one is read again (100 ms at most)."""
    for _ in range(100):
        if cmdline := proc.cmdline():
            return cmdline
        time.sleep(0.001)
    return []


def clear_ledger(folder: Path | None, token: str | None = None) -> None:
    if folder is not None:
        with contextlib.suppress(FileNotFoundError):
            (folder / LEDGER).unlink()
    if token is not None:
        with contextlib.suppress(OSError, CacheSafetyError):
            (_registry() / f"{token}.json").unlink()


def _read_entry(path: Path) -> Entry | None:
    """The entry, or None: missing, torn, malformed, or not a plain file of this user that
    nobody else may write (then it names nothing we could safely end)."""
    try:
        raw = json.loads(_read_own(path))
        boss = raw.get("orchestrator") or [0, 0.0]
        cmdline = raw["cmdline"]
        if (not isinstance(raw["token"], str) or not TOKEN.fullmatch(raw["token"])
                or not isinstance(cmdline, list) or not all(isinstance(a, str) for a in cmdline)):
            return None
        return Entry(int(raw["pid"]), float(raw["create_time"]), tuple(cmdline),
                     raw["token"], int(boss[0]), float(boss[1]))
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def _read_own(path: Path) -> bytes:
    """A small plain file of this user, writable by nobody else; OSError otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as file:
        seen = os.fstat(fd)
        if (not stat.S_ISREG(seen.st_mode) or seen.st_uid != os.getuid()
                or seen.st_mode & (stat.S_IWGRP | stat.S_IWOTH) or seen.st_size > ENTRY_MAX):
            raise OSError(f"{path} is not this user's own entry")
        return file.read(ENTRY_MAX + 1)


def _dead_orchestrators() -> list[tuple[Path, Entry]]:
    """Machine-wide entries whose orchestrator is gone (a live one's program is its own)."""
    try:
        paths = sorted(_registry().glob("*.json"))
    except CacheSafetyError as exc:  # another user could have planted entries there
        raise LeftoverError(f"cannot trust the machine-wide ledger: {exc}") from None
    except OSError:
        return []
    found = []
    for path in paths:
        entry = _read_entry(path)
        if entry is not None and not entry.owner_alive():
            found.append((path, entry))
    return found


def marked(token: str) -> list[psutil.Process]:
    """Every process whose environment carries this run's mark (ours, so readable); none for
    a token that new_token could not have made."""
    if not TOKEN.fullmatch(token):
        return []
    return [proc for pid in _scan(token)[0] if (proc := _process(pid)) is not None]


def _scan(token: str) -> tuple[set[int], set[int]]:
    """(pids with the mark, pids whose parent is this process). Linux reads /proc directly
    (about 1 ms for a hundred processes, where psutil's environ() takes 30: this runs after
    every run); elsewhere psutil."""
    needle = f"\0{MARK}={token}\0".encode()  # one whole entry, never a substring of one
    me = os.getpid()
    with_mark, children = set(), set()
    if not Path("/proc/self/environ").exists():
        for proc in psutil.process_iter():
            with contextlib.suppress(psutil.Error):
                if proc.pid != me and proc.environ().get(MARK) == token:
                    with_mark.add(proc.pid)
                if proc.ppid() == me:
                    children.add(proc.pid)
        return with_mark, children
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            if needle in b"\0" + Path(f"/proc/{name}/environ").read_bytes() + b"\0":
                with_mark.add(int(name))
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == me:  # fields: state, ppid, ...
            children.add(int(name))
    return with_mark, children


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.Error:
        return None


def _describe(procs: list[psutil.Process], names: dict[int, str]) -> str:
    return ", ".join(f"pid {p.pid} ({names.get(p.pid, '?')})" for p in procs)


def _end(procs: list[psutil.Process]) -> tuple[dict[int, str], list[psutil.Process]]:
    """SIGKILL them all; (pid -> command line, the ones still alive after END_WAIT_S)."""
    names = {}
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            names[proc.pid] = " ".join(proc.cmdline())[:120] or proc.name()
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            proc.kill()
    _gone, alive = psutil.wait_procs(procs, timeout=END_WAIT_S)
    return names, [p for p in alive if _running(p)]


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:
        return True


def end_leftovers(folder: Path) -> str | None:
    """End what the ledger of `folder` names, and what any dead orchestrator's machine-wide
    entry names; what was found, in words (None: nothing was written down).

    Call only with the results folder's lock held: its ledger is then a dead orchestrator's.
    Raises LeftoverError naming the pids that could not be ended."""
    own = _read_entry(folder / LEDGER)
    if own is not None and own.owner_alive():  # a copy of a live sweep's folder: not ours
        with contextlib.suppress(FileNotFoundError):
            (folder / LEDGER).unlink()  # this copy's file only; the live sweep keeps its own
        own = None
    entries = [(path, e) for path, e in _dead_orchestrators() if own is None or
               e.token != own.token]
    if own is None and not entries:
        return None
    procs: dict[int, psutil.Process] = {}
    for entry in [own, *(e for _path, e in entries)]:
        if entry is not None:
            procs.update(_processes_of(entry))
    found = sorted(procs.values(), key=lambda p: p.pid)
    names, alive = _end(found) if found else ({}, [])
    if alive:
        raise LeftoverError(
            f"leftover processes of an earlier sweep could not be ended: "
            f"{_describe(alive, names)}; end them (kill -9) and run again")
    if own is not None:
        clear_ledger(folder, own.token)
    for path, _entry in entries:
        with contextlib.suppress(OSError):
            path.unlink()
    if not found:
        return "no leftover processes of the earlier sweep are running" if own else None
    return f"ended {len(found)} leftover processes of an earlier sweep: {_describe(found, names)}"


def _processes_of(entry: Entry) -> dict[int, psutil.Process]:
    """The entry's program (if pid, start time and command line still match) and every process
    with its run's mark."""
    procs = {p.pid: p for p in marked(entry.token)}
    with contextlib.suppress(psutil.Error):
        leader = psutil.Process(entry.pid)
        if entry.matches(leader) and _running(leader):
            procs.setdefault(leader.pid, leader)
    return procs


def end_descendants(token: str, since: float, ours: bool = True) -> list[str]:
    """End what a finished run left running outside its process group: every process with its
    mark, and (`ours`) our children started since `since` (orphans reparented to us, the
    subreaper) with all of theirs, but not a background build's (SPARED). Returns 'pid N
    (command)' for each one ended."""
    with_mark, children = _scan(token)
    # a child a Popen of ours waits for (a fact command or cargo of another thread) is no orphan
    children = children - SPARED - probe.OWNED if ours else set()
    found: dict[int, psutil.Process] = {}
    for pid in with_mark:
        if (proc := _process(pid)) is not None:
            found[pid] = proc
    for pid in children - with_mark:
        proc = _process(pid)
        with contextlib.suppress(psutil.Error):
            born = proc.create_time() if proc is not None else 0.0
            if proc is not None and born >= since - 0.01 and _running(proc) and \
                    not any(born >= t - 0.01 for t in STARTING.values()):
                found[pid] = proc
                found.update((p.pid, p) for p in proc.children(recursive=True))
    procs = sorted(found.values(), key=lambda p: p.pid)
    names = _end(procs)[0] if procs else {}
    if children:
        _reap_orphans(psutil.Process(), since)
    return [f"pid {p.pid} ({names.get(p.pid, '?')})" for p in procs]


def _reap_orphans(me: psutil.Process, since: float) -> None:
    """Orphans reparented to us are our zombies once dead: wait for them, and only them (a
    zombie child started during the run; the run's own process was reaped by its Popen)."""
    with contextlib.suppress(psutil.Error):
        for child in me.children():
            with contextlib.suppress(psutil.Error, ChildProcessError):
                if child.pid in SPARED or child.pid in probe.OWNED:  # its Popen reaps it
                    continue
                if child.status() == psutil.STATUS_ZOMBIE and child.create_time() >= since - 0.01:
                    os.waitpid(child.pid, os.WNOHANG)


class Watch:
    """programs.cargo.Watch for a sweep's builds: each cargo is written down in the results
    folder's ledger like a run, and what it leaves running is ended after it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.token, self.since = new_token(), time.time()

    def env(self) -> dict[str, str]:
        self.token, self.since = new_token(), time.time()
        return {MARK: self.token}

    def started(self, pid: int) -> None:
        write_ledger(self.folder, pid, self.token)  # (cargo is probe.OWNED: its Popen reaps it)

    def ended(self) -> None:
        end_descendants(self.token, self.since)
        clear_ledger(self.folder, self.token)
