"""What may lie in a results folder, and who holds it: the guards of a store's file.

The lock file (`.lock`, of the store's real file: a `results.sqlite` that links to another
folder's store is locked where that store is) is only ever ours: a plain file holding `pid N`,
never written through a link. A file that is not SQLite, another program's database, or SQLite's
side files (`-wal`, `-shm`, `-journal`) that are links or hard links are refused before anything
writes. A reader's `-wal`/`-shm` pair is removed by the last reader out (`_tidied`). `StoreFile`
(data/store_file.py) opens the store behind these guards.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import sqlite3
import stat
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import IO

from orchestrator.data import schema
from orchestrator.errors import InputError, StoreError

DB_NAME = "results.sqlite"
_LOCK_TEXT = re.compile(rb"(pid \d+)?\s*")  # what writing() puts into .lock


def connect_reader(path: Path) -> sqlite3.Connection:
    """A read-only connection: a reader never writes the store (no WAL switch, no journal,
    the file's bytes stay as they are). On a read-only file system (a mounted backup, a
    read-only checkout) SQLite cannot make a WAL store's `-shm`: the file is then opened as
    immutable, which nothing can change there anyway."""
    uri = path.absolute().as_uri()
    try:
        db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=30, isolation_level=None)
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError:
        if not _read_only_fs(path):
            raise
    return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None)


def _inode(path: Path) -> int | None:
    try:
        return os.lstat(path).st_ino
    except OSError:
        return None


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


class StoreGuard:
    """A results folder's guards: its lock file, what lies beside its store, its readers."""

    def __init__(self, folder: Path, durable: bool = True) -> None:
        """`durable=False` skips the fsync of each commit: only for measuring what that fsync
        costs (bench/); a sweep's store is always durable."""
        self.folder = folder
        self.durable = durable
        self.path = folder / DB_NAME
        self._db: sqlite3.Connection | None = None

    @property
    def lock_path(self) -> Path:
        """The lock of the store's real file: a `results.sqlite` that is a symlink to another
        folder's store is locked where that store is, so two orchestrators never write one
        store at once whichever path each was given (a link to nothing: this folder's)."""
        real = Path(os.path.realpath(self.path))
        return real.with_name(".lock") if real.parent.is_dir() else self.folder / ".lock"

    def _open_lock(self) -> IO[str]:
        """The lock file, never through a symlink and only if it is ours: a plain file, not
        linked elsewhere, empty or holding 'pid N' (a symlink or a hard link to a user's file
        would be truncated and rewritten)."""
        path = self.lock_path
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK |
                         os.O_CLOEXEC, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise InputError(f"{path} is a symlink, not this orchestrator's lock file; "
                                 "remove it (or choose another --results folder)") from None
            if exc.errno == errno.EISDIR:
                raise InputError(f"{path} is not a regular file, not this orchestrator's lock "
                                 "file; move it away (or choose another --results folder)"
                                 ) from None
            raise StoreError(f"cannot use results folder {self.folder}: {exc.strerror}"
                             ) from None
        st = os.fstat(fd)
        why = None
        if not stat.S_ISREG(st.st_mode):
            why = "not a regular file"
        elif st.st_nlink != 1:
            why = f"a file with {st.st_nlink} names (a hard link)"
        elif st.st_size > 64 or not _LOCK_TEXT.fullmatch(os.pread(fd, 64, 0)):
            why = "a file this orchestrator did not write"
        if why is not None:
            os.close(fd)
            raise InputError(f"{path} is {why}, not this orchestrator's lock file; not touching "
                             "it: move it away (or choose another --results folder)")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "r+", encoding="utf-8")

    def _refuse_foreign(self) -> None:
        """Before anything writes the file: one that is not SQLite, or another program's SQLite
        database (tables, but no format_version in a meta table), is not a results store;
        SQLite's own files beside it must be plain files of its own (not links elsewhere)."""
        for suffix in ("-wal", "-shm", "-journal"):
            side = self.path.with_name(self.path.name + suffix)
            try:
                st = os.lstat(side)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise StoreError(f"cannot open {side}: {exc.strerror}") from None
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 0:
                continue  # unlinked as it was looked at: the last reader out tidied the pair
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                kind = "a symlink" if stat.S_ISLNK(st.st_mode) else \
                    "not a plain file" if not stat.S_ISREG(st.st_mode) else "a hard link"
                raise InputError(f"{side} is {kind}, not SQLite's own file of this store; not "
                                 "touching it: move it away or choose another results folder")
        advice = "not touching it: move it away or choose another results folder"
        try:
            st = os.stat(self.path)  # a symlink to a store is a store; a FIFO would block
        except FileNotFoundError:
            if os.path.lexists(self.path):  # SQLite would create the link's target
                raise InputError(f"{self.path} is a symlink to nothing; {advice}") from None
            return
        except OSError as exc:
            raise StoreError(f"cannot open {self.path}: {exc.strerror}") from None
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{self.path} is not a plain file (a folder, FIFO or device), not a "
                             f"results store; {advice}")
        try:
            with self.path.open("rb") as fh:
                head = fh.read(16)
        except OSError as exc:
            raise StoreError(f"cannot open {self.path}: {exc.strerror}") from None
        if not head:
            return  # an empty file is an empty database: a new store
        if head != b"SQLite format 3\x00":
            raise InputError(f"{self.path} is not a results store (not an SQLite database); "
                             f"{advice}")
        try:
            with self._tidied(), closing(connect_reader(self.path)) as db:
                tables = [r[0] for r in db.execute(
                    "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
                version = schema.version_of(db) if "meta" in tables else None
        except ValueError:
            raise InputError(f"{self.path} is damaged: its format_version is not a number; "
                             "not a store this orchestrator can read") from None
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.path}: {exc}") from None
        if tables and version is None:
            shown = ", ".join(tables[:4]) + (", ..." if len(tables) > 4 else "")
            raise InputError(f"{self.path} is another program's SQLite database (tables "
                             f"{shown}; no orchestrator format_version), not a results store; "
                             f"{advice}")

    @contextmanager
    def _tidied(self) -> Iterator[None]:
        """A read-only connection to a WAL store makes an empty `-wal` and a `-shm` beside it
        and cannot remove them when it closes (a writer's last close does). Readers overlap
        (a report while an export runs): each holds a shared flock on the store's own file
        from before it connects until after it closes (SQLite's locks are fcntl locks, which
        flock does not meet; the writer's lock is the `.lock` file), and the one that can turn
        it exclusive as it leaves is the last one out: it removes the pair when empty and no
        orchestrator holds the folder. A pair lying there when a reader came while no other
        was in (left by a crash) is left as found, unless it was replaced meanwhile. (A lock
        on the `-wal` itself left a window: a reader between connecting and locking was not
        seen, and its pair could be removed under it or left behind.)"""
        wal = self.path.with_name(self.path.name + "-wal")
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            yield
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                alone = True  # nobody reading: a pair there now is lying (or the writer's)
            except OSError:
                alone = False  # other readers in: their pair, the last of us removes it
            fcntl.flock(fd, fcntl.LOCK_SH)  # downgrades, or waits out a leaving tidier
            before = _inode(wal) if alone else None
            yield
        finally:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # OSError: a reader still in
                with contextlib.suppress(OSError):
                    self._tidy(wal, before)
            except OSError:
                pass
            finally:
                os.close(fd)

    def _tidy(self, wal: Path, before: int | None) -> None:
        st = os.lstat(wal)
        if st.st_size or not stat.S_ISREG(st.st_mode):
            return
        if before is not None and st.st_ino == before:
            return  # found lying there while nobody read: left as found
        sides = [wal, self.path.with_name(self.path.name + "-shm")]
        self._in_use(lambda: [side.unlink(missing_ok=True) for side in sides])

    def _in_use(self, meanwhile: Callable[[], object] = lambda: None) -> bool:
        """Whether an orchestrator holds this folder's lock now: a shared lock taken and
        dropped at once on a read-only descriptor (no lock file: none ever held it).
        `meanwhile` runs while that shared lock is held (no writer can begin then)."""
        try:
            fd = os.open(self.lock_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            meanwhile()
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            meanwhile()
        except OSError:
            return True
        finally:
            os.close(fd)  # drops the probe's lock
        return False
