"""The commands a sweep asks for facts as it begins (`rustc --version`, `cargo --version`,
`git`, `ncu --version`): asked at once, bounded by one timeout in all, and one that did not
answer remembered, so it costs its timeout once, not at every sweep start.

A hung `cargo --version` (a rustup proxy waiting on a network toolchain, a wrapper stuck on a
lock) stalled every sweep start 20 s, each hung command once more. Now they run side by side
(programs/probe.answers), and a command that hung is written down, per user and machine, with
the identity of its executable (device, inode, size, mtime): the next sweep starts do not ask
it again, record it as unknown and say why, until that executable changes or a day has passed.
The note lives in this user's private machine-wide folder (run/cache_lock: a real folder of
ours nobody else may write), is written new and renamed over its name and read bounded, never
through a link; a note that cannot be read or written only means the command is asked.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import time
from pathlib import Path
from typing import Any

from orchestrator.errors import CacheSafetyError
from orchestrator.programs import probe
from orchestrator.run import cache_lock, leftovers

NOTE = "facts-hung.json"
NOTE_MAX = 64 * 1024  # bytes read of the note (a few entries of ~200 bytes)
REMEMBER_S = 24 * 3600  # a hung verdict is kept this long, then the command is asked again


def _exe_identity(argv: list[str]) -> list[int] | None:
    """(device, inode, size, mtime) of the executable `argv[0]` names on PATH, None if none."""
    found = shutil.which(argv[0])
    if found is None:
        return None
    with contextlib.suppress(OSError):
        st = os.stat(found)
        return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]
    return None


def _note_path() -> Path | None:
    with contextlib.suppress(OSError, CacheSafetyError):
        return cache_lock.private_folder() / NOTE
    return None


def _read_note(path: Path | None) -> dict[str, Any]:
    """The remembered hung commands ({} when none, or the note is not a plain file of ours)."""
    if path is None:
        return {}
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return {}
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            return {}
        try:
            found = json.loads(fh.read(NOTE_MAX))
        except ValueError:
            return {}
    return found if isinstance(found, dict) else {}


def _write_note(path: Path | None, note: dict[str, Any]) -> None:
    if path is None:
        return
    tmp = path.with_name(f".{NOTE}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        tmp.unlink(missing_ok=True)  # a link planted there goes, never what it points to
        leftovers.write_new(tmp, json.dumps(note).encode())
        os.replace(tmp, path)
    with contextlib.suppress(OSError):
        tmp.unlink(missing_ok=True)


def _remembered(entry: Any, exe: list[int] | None, now: float) -> float | None:
    """When the command hung, if that verdict still holds (same executable, within a day)."""
    if not isinstance(entry, dict) or exe is None or entry.get("exe") != exe:
        return None
    at = entry.get("at")
    if not isinstance(at, (int, float)) or not 0 <= now - at < REMEMBER_S:
        return None
    return float(at)


def ask(commands: dict[str, list[str]], timeout: float
        ) -> tuple[dict[str, str | None], dict[str, float | None]]:
    """Each command's stripped stdout (None: missing, failed, hung or remembered as hung) and
    the commands that hung: None, now; or when an earlier sweep start found it hung (then it
    was not asked)."""
    note_path = _note_path()
    note, now = _read_note(note_path), time.time()
    exes = {key: _exe_identity(argv) for key, argv in commands.items()}
    answers: dict[str, str | None] = {}
    hung: dict[str, float | None] = {}
    asked: list[str] = []
    for key, argv in commands.items():
        line = " ".join(argv)
        at = _remembered(note.get(line), exes[key], now)
        if exes[key] is None or at is not None:
            answers[key] = None
            if at is not None:
                hung[line] = at
        else:
            asked.append(key)
    changed = False
    for key, (out, stuck) in zip(asked, probe.answers([commands[k] for k in asked], timeout),
                                 strict=True):
        answers[key] = out.strip() if out is not None else None
        line = " ".join(commands[key])
        if stuck:
            hung[line] = None
            note[line] = {"exe": exes[key], "at": now}
            changed = True
        elif note.pop(line, None) is not None:  # it answers (or fails) now: forgotten
            changed = True
    if changed:
        _write_note(note_path, {line: entry for line, entry in note.items()
                                if isinstance(entry, dict) and
                                _remembered(entry, entry.get("exe"), now) is not None})
    return answers, hung
