"""The results store: one SQLite file that survives a crash at any point.

Why SQLite: every run is written in one transaction the moment it finishes, so a crash, a
Ctrl-C or a full disk leaves every earlier run intact and the file still opens; readers
(export, report) work while a sweep writes; it is in the standard library; raw output and the
accuracy arrays fit as BLOBs, so one file holds everything. An exclusive lock file keeps a second
orchestrator off a store in use (two sweeps at once would spoil each other's timings anyway).

The tables and their migrations are `schema`'s. A store of an older format is migrated in place
when opened for writing (one transaction), and read through a migrated temporary copy (SQLite's
backup API) when opened for reading, so `export` or `report` never change a file such as the
committed docs/results/h200-2026-11-30 store; a store newer than this code is refused.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import sqlite3
import stat
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from orchestrator import signals
from orchestrator.data import schema
from orchestrator.errors import InputError, StoreBusyError, StoreError
from orchestrator.records import BuildResult, ParseResult, RunRecord

FORMAT_VERSION = schema.VERSION
DB_NAME = "results.sqlite"
# reading an older format migrates a copy of the store in the temporary folder: at most this big
READ_COPY_CAP = 256 * 2**20
_LOCK_TEXT = re.compile(rb"(pid \d+)?\s*")  # what writing() puts into .lock
_RUN_COLUMNS = ("sweep_id", "run_id", "experiment", "role", "status", "reason", "expect_failure",
                "definition_json", "started_at", "ended_at", "wall_s", "returncode",
                "load_before_json", "load_after_json", "gate_json", "argv_json", "env_json", "cwd",
                "cache_json", "stdout", "stderr", "unknown_lines", "headers_json", "recorded_at",
                "state_json")
_BUILD_COLUMNS = ("sweep_id", "name", "key", "status", "binary", "seconds", "fresh",
                  "expect_failure", "error", "log", "at")
_SWEEP_COLUMNS = ("sweep_id", "started_at", "ended_at", "status", "config_path", "config_text",
                  "host_json", "argv_json")


def _connect(path: Path, durable: bool = True) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={'FULL' if durable else 'OFF'}")
    return db


def _connect_reader(path: Path) -> sqlite3.Connection:
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


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


# what each status a sweep can end in means, for the line that says a sweep is incomplete
STATUS_WORDS = {
    "running": "running (an orchestrator is writing it now)",
    "killed": "killed (its orchestrator died before ending it)",
    "interrupted": "interrupted (Ctrl-C or SIGTERM)",
    "stopped": "stopped by an error",
}


@dataclass(frozen=True)
class SweepState:
    """Where a sweep stands: its status and how many of its planned runs are recorded."""

    sweep_id: str
    status: str  # running | killed | interrupted | stopped | complete
    planned: int | None  # runs its latest start planned; None: not recorded (before format 3)
    finished: int  # of those, runs recorded (ok, failed or skipped); unplanned: every run
    ended_at: float | None

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    def progress(self) -> str:
        if self.planned is None:
            return (f"{self.finished} run{'s' * (self.finished != 1)} finished (how many were "
                    "planned was not recorded)")
        return f"{self.finished} of {self.planned} planned runs finished"

    def incomplete(self) -> str | None:
        """'sweep X is incomplete: killed (...), 3 of 6 planned runs finished', or None."""
        if self.complete:
            return None
        words = STATUS_WORDS.get(self.status) or (
            f"status {self.status!r} (not one this orchestrator writes)" if self.status
            else "no status recorded")  # a damaged or hand-edited sweeps row
        return f"sweep {self.sweep_id} is incomplete: {words}, {self.progress()}"


def _planned(text: str | None) -> set[str] | None:
    try:
        ids = json.loads(text) if text else None
    except ValueError:
        return None  # a damaged plan: counted as not recorded
    return set(map(str, ids)) if isinstance(ids, list) else None


class Store:
    """A results folder: `results.sqlite` plus its lock file."""

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

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError("store is not open")
        return self._db

    @contextmanager
    def writing(self) -> Iterator[Store]:
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
            with self._tidied(), closing(_connect_reader(self.path)) as db:
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

    @contextmanager
    def reading(self) -> Iterator[Store]:
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
        db = _connect(self.path, self.durable) if create else _connect_reader(self.path)
        try:
            version = schema.version_of(db)
        except ValueError:
            db.close()
            raise InputError(f"{self.path} is damaged: its format_version is not a number; "
                             "not a store this orchestrator can read") from None
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
        if version < FORMAT_VERSION:
            schema.migrate(db, version)
        elif create:  # a format-2 store from before a run or figure column was added
            schema.add_run_columns(db)
            schema.add_figure_columns(db)
        return db

    def _migrated_copy(self, db: sqlite3.Connection, version: int,
                       scratch: Path) -> sqlite3.Connection:
        """An older store read through a migrated copy in the temporary folder: a full or
        unwritable TMPDIR is said as such, not blamed on the store."""
        try:
            copy = _connect(scratch / DB_NAME)
            db.backup(copy)
            schema.migrate(copy, version)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot read {self.path} (format {version}, read through a "
                             f"migrated copy): the temporary folder {scratch.parent} refused "
                             f"the copy ({exc}); free space there or set TMPDIR to another "
                             "folder") from None
        finally:
            db.close()
        return copy

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
        """A meta table that names a format, but not the tables every format has (a cut
        copy, a hand-made file): one line, not 'no such table' from deep in a query."""
        if version is None:
            return
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        missing = [t for t in ("sweeps", "runs", "figures") if t not in tables]
        if missing:
            db.close()
            raise InputError(f"{self.path} is damaged: it says format {version} but has no "
                             f"table {', '.join(missing)}; not a store this orchestrator can read")

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

    # sweeps -----------------------------------------------------------------------------
    def latest_sweep(self) -> str | None:
        row = self.db.execute(
            "SELECT sweep_id FROM sweeps ORDER BY started_at DESC LIMIT 1").fetchone()
        return row[0] if row else None

    def begin_sweep(self, config_path: Path, host: dict[str, Any], argv: list[str],
                    new: bool, config_text: str | None = None,
                    planned: list[str] | None = None,
                    seed: int | None = None) -> tuple[str, bool]:
        """(sweep id, resumed): continue the latest sweep unless `new`. `config_text` is the
        experiments file as it was read for planning (default: read `config_path` now);
        `planned` the run ids planned from it, `seed` the interleaved order's seed (None: file
        order). Every start, new or resumed, is a row of `sweep_starts`, so a resume with an
        edited file keeps both texts."""
        text = config_path.read_text(encoding="utf-8") if config_text is None else config_text
        latest = None if new else self.latest_sweep()
        with self._transaction() as db:
            if latest is not None:
                db.execute("UPDATE sweeps SET status='running', ended_at=NULL WHERE sweep_id=?",
                           (latest,))
                sweep_id = latest
            else:
                sweep_id = time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
                db.execute(schema.insert("sweeps", _SWEEP_COLUMNS),
                           (sweep_id, time.time(), None, "running", str(config_path), text,
                            _json(host), _json(argv)))
            db.execute(schema.insert("sweep_starts", schema.START_COLUMNS),
                       (sweep_id, time.time(), str(config_path), text, _json(argv),
                        None if planned is None else _json(planned), seed))
        return sweep_id, latest is not None

    def record_stops(self, sweep_id: str, rows: list[tuple[Any, ...]]) -> None:
        """Why each figure of a series stopped (schema.STOP_COLUMNS after sweep_id), replacing
        an earlier look's record of the same figure."""
        with self._transaction() as db:
            db.executemany(schema.insert("stops", schema.STOP_COLUMNS, "INSERT OR REPLACE"),
                           [(sweep_id, *row) for row in rows])

    def stops(self, sweep_id: str) -> list[dict[str, Any]]:
        return self.query("SELECT * FROM stops WHERE sweep_id=? ORDER BY rowid", (sweep_id,))

    def drop_planned(self, sweep_id: str, run_ids: set[str]) -> None:
        """Runs a precision target made unneeded leave the latest start's plan: the sweep is
        complete without them (a resume plans them again and the stopping rule drops them)."""
        starts = self.config_texts(sweep_id)
        if not starts or starts[-1]["planned_json"] is None:
            return
        kept = [r for r in json.loads(starts[-1]["planned_json"]) if r not in run_ids]
        with self._transaction() as db:
            db.execute("UPDATE sweep_starts SET planned_json=? WHERE rowid=(SELECT max(rowid) "
                       "FROM sweep_starts WHERE sweep_id=?)", (_json(kept), sweep_id))

    def end_sweep(self, sweep_id: str, status: str) -> None:
        with self._transaction() as db:
            db.execute("UPDATE sweeps SET status=?, ended_at=? WHERE sweep_id=?",
                       (status, time.time(), sweep_id))

    def close_dead_sweeps(self) -> list[SweepState]:
        """Mark `killed` every sweep still `running`: called holding the lock, so no
        orchestrator is running on this store and each of them died without ending its sweep
        (SIGKILL, a crash, a power cut). Its end is its last recorded run (else its last start)."""
        dead = [row[0] for row in self.db.execute(
            "SELECT sweep_id FROM sweeps WHERE status='running'")]
        with self._transaction() as db:
            for sweep_id in dead:
                db.execute(
                    "UPDATE sweeps SET status='killed', ended_at=coalesce("
                    "(SELECT max(recorded_at) FROM runs WHERE sweep_id=?1), "
                    "(SELECT max(started_at) FROM sweep_starts WHERE sweep_id=?1), started_at) "
                    "WHERE sweep_id=?1", (sweep_id,))
        return [self.sweep_state(sweep_id) for sweep_id in dead]

    def sweeps(self) -> list[dict[str, Any]]:
        cur = self.db.execute("SELECT sweep_id, started_at, ended_at, status, config_path, "
                              "host_json, host FROM sweeps ORDER BY started_at")
        return [dict(zip([c[0] for c in cur.description], row, strict=True)) for row in cur]

    def config_texts(self, sweep_id: str) -> list[dict[str, Any]]:
        """Each start of the sweep, oldest first: when, the experiments text, the plan, the
        order's seed."""
        return self.query("SELECT started_at, config_path, config_text, planned_json, seed "
                          "FROM sweep_starts WHERE sweep_id=? ORDER BY started_at, rowid",
                          (sweep_id,))

    def sweep_state(self, sweep_id: str) -> SweepState:
        """Where a sweep stands. A sweep marked `running` whose folder no orchestrator holds
        is told as `killed`: its orchestrator died (reading changes nothing; the next `run`
        marks it)."""
        row = self.db.execute("SELECT status, ended_at FROM sweeps WHERE sweep_id=?",
                              (sweep_id,)).fetchone()
        status, ended_at = row if row else ("unknown", None)
        if status == "running" and not self._in_use():
            status = "killed"
        starts = self.config_texts(sweep_id)
        recorded = {r[0] for r in self.db.execute("SELECT run_id FROM runs WHERE sweep_id=? "
                                                  "AND role != 'priming'", (sweep_id,))}
        planned = _planned(starts[-1]["planned_json"]) if starts else None
        finished = len(recorded & planned) if planned is not None else len(recorded)
        status = "" if status is None else str(status)  # NULL: "no status recorded"
        return SweepState(sweep_id, status, None if planned is None else len(planned),
                          finished, ended_at)

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

    def finished_runs(self, sweep_id: str) -> dict[str, str]:
        """run id -> status of every run that ran to an end (ok or failed)."""
        rows = self.db.execute("SELECT run_id, status FROM runs WHERE sweep_id=? AND "
                               "status IN ('ok','failed')", (sweep_id,))
        return dict(rows.fetchall())

    # records ----------------------------------------------------------------------------
    def record_build(self, sweep_id: str, result: BuildResult) -> None:
        with self._transaction() as db:
            db.execute(schema.insert("builds", _BUILD_COLUMNS, "INSERT OR REPLACE"),
                       (sweep_id, result.name, result.key, result.status,
                        str(result.binary) if result.binary else None, result.seconds,
                        int(result.fresh), int(result.expect_failure), result.error,
                        result.log, time.time()))

    def record_run(self, sweep_id: str, rec: RunRecord, parsed: ParseResult | None) -> None:
        """Write one run, its parsed figures, samples and arrays, atomically."""
        run_id = rec.run_id
        with self._transaction() as db:
            for table in ("runs", "figures", "samples", "artifacts"):
                db.execute(f"DELETE FROM {table} WHERE sweep_id=? AND run_id=?",
                           (sweep_id, run_id))
            db.execute(
                schema.insert("runs", _RUN_COLUMNS),
                (sweep_id, run_id, rec.run.experiment, rec.role, rec.status, rec.reason,
                 int(rec.expect_failure), _json(rec.run.definition()), rec.started_at,
                 rec.ended_at,
                 rec.wall_s, rec.returncode, _json(rec.load_before), _json(rec.load_after),
                 _json(rec.gate), _json(rec.argv), _json(rec.env), rec.cwd, _json(rec.cache),
                 rec.stdout, rec.stderr, len(parsed.unknown) if parsed else 0,
                 _json([asdict(h) for h in parsed.headers] if parsed else []), time.time(),
                 _json(rec.state)))
            if parsed is not None:
                self._write_parsed(db, sweep_id, run_id, parsed)
            db.executemany(schema.insert("artifacts", ("sweep_id", "run_id", "name", "data")),
                           [(sweep_id, run_id, n, d) for n, d in rec.artifacts.items()])

    def replace_parsed(self, sweep_id: str, run_id: str, parsed: ParseResult) -> None:
        """Swap a run's figures for a newer parser's reading of the same raw output."""
        with self._transaction() as db:
            for table in ("figures", "samples"):
                db.execute(f"DELETE FROM {table} WHERE sweep_id=? AND run_id=?",
                           (sweep_id, run_id))
            self._write_parsed(db, sweep_id, run_id, parsed)
            db.execute("UPDATE runs SET unknown_lines=? WHERE sweep_id=? AND run_id=?",
                       (len(parsed.unknown), sweep_id, run_id))

    @staticmethod
    def _write_parsed(db: sqlite3.Connection, sweep_id: str, run_id: str,
                      parsed: ParseResult) -> None:
        db.executemany(
            schema.insert("figures", ("sweep_id", "run_id", *schema.FIGURE_FIELDS)),
            [(sweep_id, run_id, *(getattr(f, k) for k in schema.FIGURE_FIELDS))
             for f in parsed.figures])
        db.executemany(
            schema.insert("samples", ("sweep_id", "run_id", *schema.SAMPLE_FIELDS)),
            [(sweep_id, run_id, s.label, s.shape, s.op, s.method, i, v, s.summary_line)
             for s in parsed.samples for i, v in enumerate(s.values)])

    def replace_sweep(self, sweep_id: str, rows: dict[str, list[dict[str, Any]]]) -> None:
        """Swap every row of one sweep for `rows` (table -> rows), atomically: `merge`'s write.
        Columns this store lacks are not written (a source can only be older or as new)."""
        with self._transaction() as db:
            for table, table_rows in rows.items():
                have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
                db.execute(f"DELETE FROM {table} WHERE sweep_id=?", (sweep_id,))
                for row in table_rows:
                    cols = tuple(c for c in row if c in have)
                    db.execute(schema.insert(table, cols), tuple(row[c] for c in cols))

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        cur = self.db.execute(sql, params)
        names = [c[0] for c in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur]

    def cursor(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """The rows as tuples, one at a time: a reader of many rows (a sweep's samples) holds
        only what it keeps of them, not a dict per row."""
        return self.db.execute(sql, params)
