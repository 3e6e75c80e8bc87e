"""One orchestrator at a time on one burn cache folder, machine-wide.

Two sweeps in different results folders of one project share cubecl's cache folder
(`bench_rust/target/environment`): a cold run of one would delete it while the other's warm run
uses it. So a run that uses or deletes the cache holds an exclusive flock, from the cache action
until its record is taken, on a lock file named by the folder's real path in one fixed place of
the machine (`/tmp/orchestrator-<uid>-locks/`): every orchestrator of the user that would use that
folder finds the same file, whatever its results folder or its TMPDIR, and nothing is written
into the project tree (whose `target/` may be a symlink the cache checks refuse).

A second orchestrator waits at most WAIT_S (the other's run may be about to end), then its run
fails with the holder named. It does not wait longer: the other run may take its whole timeout,
and a run measured beside another sweep's program is spoiled anyway (the README's one sweep at a
time); `--retry-failed` runs it again later.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from orchestrator.errors import CacheSafetyError

WAIT_S = 5.0
POLL_S = 0.1
ROOT = Path("/tmp")
# where the folder goes instead, for the test suite only: each pytest worker gets one of its own,
# so a test that SIGKILLs an orchestrator leaves its entries where no other worker's sweep (nor
# another clone's) ends them; everything one test starts inherits it and finds the same files
ROOT_ENV = "ORCHESTRATOR_TEST_LOCKS_ROOT"


def machine_root() -> Path:
    """The machine-wide place: /tmp, unless the test suite names another."""
    return Path(os.environ.get(ROOT_ENV) or ROOT)


def lock_path(cache: Path, root: Path | None = None) -> Path:
    root = root or machine_root()
    real = os.path.realpath(cache)
    key = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return root / f"orchestrator-{os.getuid()}-locks" / f"cubecl-cache-{key}.lock"


def private_folder(root: Path | None = None) -> Path:
    """This user's folder of machine-wide orchestrator files (made 0700); CacheSafetyError
    when the name is taken by something else (a symlink, another user's folder). Raises
    OSError when it cannot be made."""
    folder = (root or machine_root()) / f"orchestrator-{os.getuid()}-locks"
    folder.mkdir(mode=0o700, exist_ok=True)
    refuse_shared(folder)
    return folder


def refuse_shared(folder: Path) -> None:
    """CacheSafetyError unless `folder` is a real folder (not a link) of this user that nobody
    else may write: another user who can plant an entry there could name any process."""
    seen = folder.lstat()
    if not stat.S_ISDIR(seen.st_mode) or seen.st_uid != os.getuid():
        raise CacheSafetyError(f"{folder} is not a folder of this user: remove it")
    if seen.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CacheSafetyError(f"{folder} is writable by other users (mode "
                               f"{stat.S_IMODE(seen.st_mode):o}): remove it or chmod 700 it")


@contextlib.contextmanager
def held(cache: Path, results: Path | None, root: Path | None = None,
         owner: str = "the program") -> Iterator[None]:
    """Hold the cache folder's lock for the block; CacheSafetyError when another orchestrator
    holds it past WAIT_S or the lock file cannot be ours (a symlink, not a plain file).
    `owner`: whose cache it is, for the messages (the program's title)."""
    path = lock_path(cache, root)
    try:
        private_folder(root)
        # never through a symlink, never truncating: the file may be another orchestrator's
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise CacheSafetyError(f"cannot lock {owner}'s cache {cache}: {path}: "
                               f"{exc.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise CacheSafetyError(f"cannot lock {owner}'s cache {cache}: {path} is not a file")
        _acquire(fd, cache, path, owner)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}, results {results or '?'}, cache {cache}".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # releases the flock


def _acquire(fd: int, cache: Path, path: Path, owner: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                holder = os.pread(fd, 400, 0).decode("utf-8", "replace").strip() or "unknown"
                raise CacheSafetyError(
                    f"{owner}'s cache {cache} is in use by another orchestrator ({holder}); "
                    f"waited {WAIT_S:g} s: run one sweep at a time (--retry-failed runs this "
                    "again)") from None
            time.sleep(POLL_S)
