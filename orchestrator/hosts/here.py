"""This machine's side of a host: `RESULTS/hosts/NAME/`, checked before every use (a real
folder of this user that nobody else may write, never a link), its `attach.json` read bounded
and validated and written as a new file renamed over its name, its `.lock` opened without
following a link, and a fetched store checked before it replaces the last good copy.

A planted link under RESULTS/hosts would otherwise have a fetch, a record or a lock written
wherever it points; a record of the wrong shape would crash the wait.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import sqlite3
import stat
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from orchestrator.experiments.messages import problems
from orchestrator.hosts.faults import HostError

ATTACH_MAX = 64 * 1024  # attach.json is ~300 bytes; a bigger file is not ours
_HEADER = b"SQLite format 3\x00"


def folder(results: Path, name: str) -> Path:
    return results / "hosts" / name


def _own_folder(name: str, path: Path) -> None:
    """HostError unless `path` is a real folder of this user that no other user may write."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise HostError(name, f"cannot use {path}: {exc.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        raise HostError(name, f"{path} is a symbolic link (to {os.readlink(path)}): the "
                              "orchestrator writes only into a real folder of its own; remove "
                              "the link")
    if not stat.S_ISDIR(st.st_mode):
        raise HostError(name, f"{path} is not a folder: remove it")
    if st.st_uid != os.geteuid():
        raise HostError(name, f"{path} belongs to uid {st.st_uid}, not to this user: remove it")
    if st.st_mode & stat.S_IWOTH:
        raise HostError(name, f"{path} is writable by other users (mode "
                              f"{stat.S_IMODE(st.st_mode):o}): chmod o-w it")


def checked_folder(results: Path, name: str) -> Path:
    """RESULTS/hosts/NAME, made if needed, after RESULTS/hosts and it pass `_own_folder`.
    Made one level at a time: `mkdir -p` would make NAME wherever a linked `hosts` points."""
    here = folder(results, name)
    try:
        results.mkdir(parents=True, exist_ok=True)
        for level in (here.parent, here):
            if not os.path.lexists(level):
                level.mkdir(mode=0o755, exist_ok=True)
            _own_folder(name, level)
    except OSError as exc:
        raise HostError(name, f"cannot make {here}: {exc.strerror}") from None
    return here


class Attached(BaseModel):
    """What `attach.json` records of a started sweep; every field checked, so a number where
    a pid's digits belong is one line, not a TypeError in the middle of a wait."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    host: str
    ssh: str
    workdir: str
    pid: str | None = None
    job: str | None = None
    lstart: str = ""
    token: str | None = None  # None: written by an orchestrator from before the token
    started_at: str = ""

    @field_validator("pid", "job")
    @classmethod
    def _digits(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[1-9]\d{0,9}", value):
            raise ValueError("expected a process or job id (digits)")
        return value

    @field_validator("token")
    @classmethod
    def _token(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[0-9a-f]{32}", value):
            raise ValueError("expected 32 hex digits")
        return value

    @field_validator("lstart", "started_at", "host", "ssh", "workdir")
    @classmethod
    def _short(cls, value: str) -> str:
        if len(value) > 4096 or "\n" in value:
            raise ValueError("expected one short line")
        return value


def read_attached(results: Path, name: str) -> Attached | None:
    """The record of a sweep started on `name`, None if there is none; HostError (one line,
    the record kept) when it is a link, too big or not a record of ours."""
    path = checked_folder(results, name) / "attach.json"
    remove = f"remove it once the sweep on {name} has ended"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        why = "a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise HostError(name, f"{path}: {why}; {remove}") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > ATTACH_MAX:
            raise HostError(name, f"{path}: not a record of a sweep (a plain file of at most "
                                  f"{ATTACH_MAX} bytes expected); {remove}")
        text = fh.read(ATTACH_MAX + 1)
    try:
        return Attached.model_validate_json(text)
    except ValidationError as exc:
        where, what = next(iter(problems(exc.errors())), ((), "not valid"))
        at = ".".join(str(p) for p in where)
        raise HostError(name, f"{path}: {at + ': ' if at else ''}{what}; {remove}") from None


def write_attached(results: Path, name: str, record: Attached | None) -> None:
    """Write (or with None remove) the record: a new file made beside it (exclusive, so a
    planted link is never written through) renamed over `attach.json`."""
    here = checked_folder(results, name)
    path = here / "attach.json"
    if record is None:
        path.unlink(missing_ok=True)  # unlink removes a link itself, never its target
        return
    fd, tmp = tempfile.mkstemp(prefix=".attach-", suffix=".tmp", dir=here)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(record.model_dump_json(indent=1))
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


@contextmanager
def host_lock(results: Path, name: str) -> Iterator[Path]:
    """One orchestrator attached to a host at a time; yields the checked folder."""
    here = checked_folder(results, name)
    lock = here / ".lock"
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        why = "a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise HostError(name, f"{lock}: {why}; remove it") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            raise HostError(name, f"{lock}: not a plain file of this user; remove it")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise HostError(name, f"another orchestrator here is attached to it ({here})"
                            ) from None
        _drop_leftovers(here)
        yield here
    finally:
        os.close(fd)


def _drop_leftovers(here: Path) -> None:
    """Temporaries of a fetch or record cut short (SIGKILL, power loss): under the lock no
    other orchestrator writes here, so each is a dead writer's; unlinked, never followed."""
    for pattern in (".fetch-*", ".attach-*.tmp"):
        for path in here.glob(pattern):
            path.unlink(missing_ok=True)


def store_problem(path: Path) -> str | None:
    """Why a fetched file is not an orchestrator's store (None when it is one): checked
    before it replaces the last good copy, so a banner or a foreign file never does."""
    with open(path, "rb") as fh:
        head = fh.read(len(_HEADER))
    if head != _HEADER:
        shown = head.decode("utf-8", "replace").splitlines()[0][:40] if head.strip() else ""
        return f"not an SQLite file (it begins {shown!r})" if shown else "not an SQLite file"
    try:
        with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
            checked = db.execute("PRAGMA quick_check").fetchone()
            if not checked or checked[0] != "ok":
                return f"a damaged SQLite file ({checked[0] if checked else 'no answer'})"
            db.execute("SELECT count(*) FROM sweeps").fetchone()
    except sqlite3.Error as exc:
        return f"not an orchestrator store ({exc})"
    return None
