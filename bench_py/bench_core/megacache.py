"""torch.compile's mega-cache: every compile cache of a process as one portable blob.

``torch.compiler.save_cache_artifacts()`` (PyTorch 2.6+) serializes what this process's
compiles put into the modular caches (Inductor's FX graph cache, AOTAutograd's, the autotune
results, Triton's kernels, PGO), ``load_cache_artifacts(blob)`` writes them into another
process's caches before it compiles: a warm start on a machine whose cache folders are empty.

``--save-cache-artifacts FILE`` saves the blob after the first call (written beside FILE, then
renamed over it; never through a link); ``--load-cache-artifacts FILE`` loads it before the
compile. The blob is a pickle, so it is read only from a regular file of this user that no one
else may write, in a folder likewise (a planted blob would run another user's code). One line
each (docs/LINES.md), after the first call's compile cache line::

    cpu 256x256 matmul compile cache artifacts: loaded 163631 bytes in 262.257ms, entries ...
    cpu 256x256 matmul compile cache artifacts: saved 163631 bytes in 1.204ms, entries ...

(entries: ``TYPE COUNT`` per artifact type torch names, ``inductor 1, aot_autograd 1``, or
``none``).
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import BenchError
from . import format as fmt

METHOD = "compile cache artifacts"
MAX_BLOB = 1 << 30  # a max-autotune blob on CUDA holds Triton's cubins: MBs, not GBs


@dataclass(frozen=True)
class Artifacts:
    """Where the first call's compile caches come from (the blob read, checked, before any
    device work) and go to (None: not asked)."""

    load: Path | None = None
    save: Path | None = None
    blob: bytes = b""

    @classmethod
    def of(cls, load: Path | None, save: Path | None) -> Artifacts:
        """The blob to load read now; the one to save removed now (a link itself, never what
        it names), so a process that fails before its save leaves none to be taken for it."""
        blob = read_blob(load) if load is not None else b""
        if save is not None:
            try:
                save.unlink(missing_ok=True)
            except IsADirectoryError:
                raise BenchError(f"--save-cache-artifacts {save}: a folder") from None
        return cls(load, save, blob)


def _entries(info: Any) -> str:
    """`inductor 1, aot_autograd 1` from a CacheInfo (its artifact keys by type); `none`."""
    found = getattr(info, "artifacts", None) or {}
    words = [f"{kind} {len(keys)}" for kind, keys in sorted(found.items()) if keys]
    return ", ".join(words) or "none"


def _line(head: str, verb: str, size: int, ns: int, info: Any) -> str:
    return (f"{head} {METHOD}: {verb} {size} bytes in {fmt.format_duration_ns(ns)}, "
            f"entries {_entries(info)}")


def _ours(path: Path, what: str) -> os.stat_result:
    """lstat of `path`, refused unless it is this user's and no one else may write it."""
    try:
        st = path.lstat()
    except OSError as exc:
        raise BenchError(f"--load-cache-artifacts {path}: {exc.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        raise BenchError(f"--load-cache-artifacts: {what} {path} is a symlink (refused: the "
                         "blob is a pickle)")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise BenchError(f"--load-cache-artifacts: {what} {path} belongs to uid {st.st_uid}, "
                         "not this user (refused: the blob is a pickle)")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise BenchError(f"--load-cache-artifacts: {what} {path} is writable by others "
                         f"(mode {stat.S_IMODE(st.st_mode):o}; refused: the blob is a pickle)")
    return st


def read_blob(path: Path) -> bytes:
    """The blob's bytes, after the checks that keep another user's pickle out."""
    _ours(path.parent, "folder")
    st = _ours(path, "file")
    if not stat.S_ISREG(st.st_mode):
        raise BenchError(f"--load-cache-artifacts {path}: not a regular file")
    if st.st_size > MAX_BLOB:
        raise BenchError(f"--load-cache-artifacts {path}: {st.st_size} bytes, more than the "
                         f"{MAX_BLOB} a blob may be")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as file:
        return file.read(MAX_BLOB + 1)


def load(artifacts: Artifacts, head: str) -> str:
    """Fill the compile caches from the blob read from `artifacts.load`, before the compile:
    its line."""
    import torch

    t0 = time.perf_counter_ns()
    info = torch.compiler.load_cache_artifacts(artifacts.blob)
    spent = time.perf_counter_ns() - t0
    if info is None:  # torch could not read it (another version's blob): said, not fatal
        fmt.note(f"torch could not load the cache artifacts in {artifacts.load}: the compile "
                 "runs cold")
    return _line(head, "loaded", len(artifacts.blob), spent, info)


def save(path: Path, head: str) -> str | None:
    """Write the blob of this process's compiles to `path`: its line (None: nothing saved)."""
    import torch

    t0 = time.perf_counter_ns()
    got = torch.compiler.save_cache_artifacts()
    spent = time.perf_counter_ns() - t0
    if got is None:
        fmt.note(f"torch saved no cache artifacts (caches off?): {path} not written")
        return None
    blob, info = got
    _write(path, blob)
    return _line(head, "saved", len(blob), spent, info)


def _write(path: Path, blob: bytes) -> None:
    """A temporary file beside `path` (created new, never through a link), renamed over it."""
    folder = path.parent
    if folder.is_symlink():
        raise BenchError(f"--save-cache-artifacts {path}: its folder is a symlink")
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)  # never group-writable: see _ours
    temporary = folder / f".{path.name}.{os.getpid()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temporary, flags, 0o644)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(blob)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
