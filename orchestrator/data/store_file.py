"""Opening a results store: for a sweep (created if needed, the lock held, an older format
migrated in place in one transaction) or for reading (read-only; an older format read through a
migrated copy in the temporary folder, at most READ_COPY_CAP, so a reader never changes a file
such as the committed docs/results/h200-2026-11-30 store); a store newer than this code is
refused; every write one transaction, a Ctrl-C acted on once it is committed. `Store`
(data/store.py) is what a sweep and the readers use.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Self

from orchestrator import signals
from orchestrator.data import schema
from orchestrator.data.store_guard import DB_NAME, StoreGuard, connect_reader
from orchestrator.errors import InputError, StoreBusyError, StoreError

FORMAT_VERSION = schema.VERSION
# reading an older format migrates a copy of the store in the temporary folder: at most this big
READ_COPY_CAP = 256 * 2**20


def _connect(path: Path, durable: bool = True) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={'FULL' if durable else 'OFF'}")
    return db


class StoreFile(StoreGuard):
    """A results store opened, behind its folder's guards (store_guard.StoreGuard)."""

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError("store is not open")
        return self._db

    @contextmanager
    def writing(self) -> Iterator[Self]:
        """Open for a sweep: create if needed, hold the lock until closed."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except FileExistsError:  # mkdir's own words, "File exists", name no culprit
            raise StoreError(f"cannot use results folder {self.folder}: it is a file, not a "
                             "folder; choose another --results folder") from None
        except OSError as exc:
            raise StoreError(f"cannot use results folder {self.folder}: {exc.strerror}") from None
        had_lock = os.path.lexists(self.lock_path)
        lock = self._open_lock()
        try:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                lock.seek(0)
                owner = lock.read().strip() or "unknown"
                raise StoreBusyError(
                    f"{self.path} is in use by another orchestrator ({owner}); wait for it to "
                    "finish or give this sweep its own --results folder") from None
            try:
                self._refuse_foreign()  # before the lock file or the store is written
            except InputError:
                if not had_lock:  # the folder is left as it was found
                    self.lock_path.unlink(missing_ok=True)
                raise
            lock.seek(0)
            lock.truncate()
            lock.write(f"pid {os.getpid()}")
            lock.flush()
            with self._connected(create=True):
                yield self
        finally:
            lock.close()

    @contextmanager
    def reading(self) -> Iterator[Self]:
        if self.folder.exists() and not self.folder.is_dir():  # said before any file beside
            raise InputError(f"{self.folder} is a file, not a results folder: name the folder "
                             "a sweep wrote (it holds results.sqlite)")
        self._refuse_foreign()  # before SQLite's WAL switch writes the file's header
        if not self.path.exists():
            # a wrong folder name is the user's input, like a wrong file name: exit 2
            raise InputError(f"no results store at {self.path} (run a sweep first, or name the "
                             "results folder)")
        with self._connected(create=False):
            yield self

    @contextmanager
    def _connected(self, create: bool) -> Iterator[None]:
        """Open the file; an older format is migrated in place when writing, and into a
        temporary copy when reading, so reading a store (the committed docs/results/h200-2026-11-30
        included) never changes its file."""
        with tempfile.TemporaryDirectory(prefix="orchestrator-store-") as scratch, \
                contextlib.nullcontext() if create else self._tidied():
            try:
                self._db = self._open(create, Path(scratch))
            except sqlite3.Error as exc:
                raise StoreError(f"cannot open {self.path}: {exc}") from None
            try:
                yield
            finally:
                self._db.close()
                self._db = None

    def _open(self, create: bool, scratch: Path) -> sqlite3.Connection:
        db = _connect(self.path, self.durable) if create else connect_reader(self.path)
        try:
            version = schema.version_of(db)
        except ValueError:
            db.close()
            raise InputError(f"{self.path} is damaged: its format_version is not a number; "
                             "not a store this orchestrator can read") from None
        if version is not None and version < 1:  # formats begin at 1: no migration from here
            db.close()
            raise InputError(f"{self.path} says format {version}, which no orchestrator ever "
                             f"wrote (formats 1 to {FORMAT_VERSION}); not a store this "
                             "orchestrator can read")
        self._refuse_tableless(db, version)
        if version is None and create:
            db.executescript(schema.SCHEMA)
            db.execute("INSERT OR IGNORE INTO meta VALUES('format_version', ?)",
                       (str(FORMAT_VERSION),))
            version = FORMAT_VERSION
        if version is None or version > FORMAT_VERSION:
            db.close()
            raise StoreError(f"{self.path} has format {version}; this orchestrator reads "
                             f"format {FORMAT_VERSION}")
        if version < FORMAT_VERSION and not create:
            self._refuse_big_copy(db, version)
            return self._migrated_copy(db, version, scratch)
        if version < FORMAT_VERSION:  # a store of the current format has its one shape
            try:
                schema.migrate(db, version)
            except sqlite3.Error as exc:
                db.close()
                if _space_or_io(exc):
                    raise
                raise InputError(f"{self.path} says format {version}, but its tables are not "
                                 f"format {version}'s: migrating it failed ({exc}); damaged "
                                 "or not a store this orchestrator wrote") from None
        return db

    def _migrated_copy(self, db: sqlite3.Connection, version: int,
                       scratch: Path) -> sqlite3.Connection:
        """An older store read through a migrated copy in the temporary folder: a full or
        unwritable TMPDIR is said as such, not blamed on the store."""
        try:
            copy = _connect(scratch / DB_NAME)
            db.backup(copy)
        except (sqlite3.Error, OSError) as exc:
            db.close()
            raise self._scratch_refused(version, scratch, exc) from None
        db.close()
        try:
            schema.migrate(copy, version)
        except OSError as exc:
            raise self._scratch_refused(version, scratch, exc) from None
        except sqlite3.Error as exc:
            if _space_or_io(exc):
                raise self._scratch_refused(version, scratch, exc) from None
            # the copy was made: what failed is the store's own shape, not the temporary folder
            raise InputError(f"{self.path} says format {version}, but its tables are not "
                             f"format {version}'s: migrating it failed ({exc}); damaged or "
                             "not a store this orchestrator wrote") from None
        return copy

    def _scratch_refused(self, version: int, scratch: Path, exc: BaseException) -> StoreError:
        return StoreError(f"cannot read {self.path} (format {version}, read through a "
                          f"migrated copy): the temporary folder {scratch.parent} refused "
                          f"the copy ({exc}); free space there or set TMPDIR to another "
                          "folder")

    def _refuse_big_copy(self, db: sqlite3.Connection, version: int) -> None:
        """Reading an older store migrates a copy of it in the temporary folder: past
        READ_COPY_CAP that copy (and its migration, several times the store: a 500 MB format-1
        store took 6.5 GB and 4.4 GB of memory, then failed) is refused up front, in one line."""
        size = sum(p.stat().st_size for p in (self.path, self.path.with_name(DB_NAME + "-wal"))
                   if p.exists())
        if size > READ_COPY_CAP:
            db.close()
            raise InputError(
                f"{self.path} is format {version} and {size / 2**20:.0f} MiB: reading it would "
                f"migrate a copy in the temporary folder, refused above "
                f"{READ_COPY_CAP // 2**20} MiB; migrate it in place once with "
                f"`python -m orchestrator reparse {self.folder}` (it writes the store)")

    def _refuse_tableless(self, db: sqlite3.Connection, version: int | None) -> None:
        """A meta table that names a format, but not that format's tables (or, for the
        current format, columns): a cut copy, a hand-made file. One line naming the store and
        what it lacks, not 'no such table' from deep in a query of export, report, compare, run
        or merge."""
        if version is None:
            return
        if missing := schema.missing_parts(db, version):
            db.close()
            raise InputError(f"{self.path} is damaged: it says format {version} but has no "
                             f"{', '.join(missing)}; not a store this orchestrator can read")

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        # Ctrl-C between the last INSERT and COMMIT would drop a finished run: it is acted on
        # the moment the write is done.
        with signals.deferred() as noted, self._sqlite_errors():
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                if self.db.in_transaction:  # SQLite already rolled back after a full disk
                    self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        if noted:
            raise KeyboardInterrupt

    @contextmanager
    def _sqlite_errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write {self.path}: {exc} (earlier results are intact)"
                             ) from None


def _space_or_io(exc: sqlite3.Error) -> bool:
    """A full or failing disk (the temporary folder's), not a store's shape."""
    words = str(exc).lower()
    return "disk" in words or "full" in words or "i/o" in words or "readonly" in words
