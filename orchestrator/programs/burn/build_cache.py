"""The build cache's folders and files: used only if nobody else can have put them there.

The cache (`programs/burn/cargo.py`) holds binaries that a sweep runs and cargo's target folder
that cargo builds from: a file planted there by another user is that user's code run as us. So,
as the machine-wide lock folder is checked (run/cache_lock.py), every folder of the cache is
checked before use: the cache folder itself must be this user's and writable by nobody else,
and no folder above it may let another user replace it (writable by others without the sticky
bit, or owned by another user than us or root); each folder below it (`bin/`, `bin/<hash>/`,
`bin/<hash>/<key>/`, `cargo-target/`) must in addition be a real folder, not a link. A file is
read only when it is a plain file of this user that nobody else may write, opened without
following a link, and read to a bound; files are written new (exclusive, beside their name) and
renamed over it. What fails these checks is refused with the reason, never followed.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from orchestrator.errors import CacheSafetyError

READ_LIMIT = 8 << 20  # a stamp or a kept failure (cargo's error and log): far below this


def _others_may_write(seen: os.stat_result) -> bool:
    """Whether another user may write there: anyone, or a group that is not this user's own
    private group (a umask of 002 makes folders group-writable for the user's own group)."""
    if seen.st_mode & stat.S_IWOTH:
        return True
    return bool(seen.st_mode & stat.S_IWGRP) and not _private_group(seen.st_gid)


def _private_group(gid: int) -> bool:
    """The group is this user's alone: no other member, no other user's primary group."""
    try:
        me = pwd.getpwuid(os.getuid()).pw_name
        members = set(grp.getgrgid(gid).gr_mem) - {me}
    except KeyError:
        return False
    return not members and all(u.pw_gid != gid or u.pw_uid == os.getuid()
                               for u in pwd.getpwall())


def _mine(seen: os.stat_result, what: Path, kind: str) -> None:
    if seen.st_uid != os.getuid():
        raise CacheSafetyError(f"{what} is not a {kind} of this user (owner uid {seen.st_uid})")
    if _others_may_write(seen):
        raise CacheSafetyError(f"{what} is writable by other users (mode "
                               f"{stat.S_IMODE(seen.st_mode):o})")


def check_root(root: Path) -> None:
    """CacheSafetyError unless the cache folder `root` (which may not exist yet) and the
    folders above it are safe: above, nobody but us or root owns one, and none is writable by
    others without the sticky bit (/tmp is fine; a 0777 folder is not: another user could
    swap our folder for theirs); the folder itself, once it exists, ours and 0700-like."""
    absolute = Path(os.path.abspath(root))
    real = Path(os.path.realpath(root))
    for top in {absolute.parent, real.parent}:
        for folder in (top, *top.parents):
            try:
                seen = folder.stat()
            except OSError:
                continue  # not made yet: made by us below
            if seen.st_uid not in (0, os.getuid()):
                raise CacheSafetyError(f"{folder} (above the build cache {root}) belongs to "
                                       f"another user (uid {seen.st_uid})")
            if _others_may_write(seen) and not seen.st_mode & stat.S_ISVTX:
                raise CacheSafetyError(
                    f"{folder} (above the build cache {root}) is writable by other users "
                    f"(mode {stat.S_IMODE(seen.st_mode):o}, no sticky bit): another user "
                    "could replace the cache")
    try:
        seen = real.stat()
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(seen.st_mode):
        raise CacheSafetyError(f"the build cache {root} is not a folder")
    _mine(seen, root, "folder")


def folder(root: Path, *parts: str, make: bool = False) -> Path:
    """`root/parts...` after checking each folder below `root` (a real folder of ours that
    nobody else may write); with `make`, missing ones are made 0700. CacheSafetyError when one
    fails; FileNotFoundError when one is missing and not to be made."""
    path = root
    for part in parts:
        path = path / part
        if make:
            with contextlib.suppress(FileExistsError):
                os.mkdir(path, 0o700)
        seen = path.lstat()
        if stat.S_ISLNK(seen.st_mode) or not stat.S_ISDIR(seen.st_mode):
            raise CacheSafetyError(f"{path} in the build cache is not a folder (a link or a "
                                   "file): not followed")
        _mine(seen, path, "folder")
    return path


def open_file(path: Path) -> int:
    """A read-only descriptor of `path`, a plain file of ours nobody else may write, opened
    without following a link. CacheSafetyError when it is not; OSError when it cannot open."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == 40:  # ELOOP: a link
            raise CacheSafetyError(f"{path} in the build cache is a link: not followed") from None
        raise
    try:
        seen = os.fstat(fd)
        if not stat.S_ISREG(seen.st_mode):
            raise CacheSafetyError(f"{path} in the build cache is not a plain file")
        _mine(seen, path, "file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_text(path: Path) -> str:
    """The text of a small file of ours (open_file), at most READ_LIMIT bytes."""
    fd = open_file(path)
    with os.fdopen(fd, "rb") as file:
        data = file.read(READ_LIMIT + 1)
    if len(data) > READ_LIMIT:
        raise CacheSafetyError(f"{path} in the build cache is over {READ_LIMIT >> 20} MiB")
    return data.decode("utf-8", "replace")


def replace_file(path: Path, write: Callable[[Path], object]) -> None:
    """Write a new file of our own beside `path` (mkstemp: exclusive, never a name a link was
    planted at), then rename it over `path`: nothing is ever written through a symlink."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.chmod(tmp, 0o755 if path.suffix != ".json" else 0o644)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
