"""An accuracy run's arrays, taken into the record, bounded by what the run's shape allows.

A program that writes a multi-GB `.npy` (or a link to /dev/zero) must give a failed run with the
reason, not a MemoryError for the whole sweep: each array is at most the run's largest matrix
(`a` [M, N], `b` [N, M], `c` [M, M]) in float64 (the programs write float32: twice the slack)
plus a header, only plain files are read (no symlink is followed), and at most MAX_ARRAYS.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_ARRAYS = 16
HEADER_SLACK = 64 * 1024  # an .npy header is 128 bytes or a few KiB; generous
ITEM_BYTES = 8  # float64: twice what the programs write


def array_cap(shape: tuple[int, int]) -> int:
    m, n = shape
    return ITEM_BYTES * max(m * n, m * m) + HEADER_SLACK


def read_arrays(folder: Path, shape: tuple[int, int]) -> tuple[dict[str, bytes], str]:
    """({name: bytes}, '') or ({}, why the arrays were refused)."""
    paths = sorted(folder.glob("*.npy"))
    if len(paths) > MAX_ARRAYS:
        return {}, f"wrote {len(paths)} .npy arrays, more than the {MAX_ARRAYS} kept per run"
    cap = array_cap(shape)
    arrays = {}
    for path in paths:
        data, problem = _read_bounded(path, cap, shape)
        if problem:
            return {}, problem
        arrays[path.name] = data
    return arrays, ""


def _read_bounded(path: Path, cap: int, shape: tuple[int, int]) -> tuple[bytes, str]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        return b"", f"cannot read array {path.name}: {exc.strerror}"
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return b"", f"array {path.name} is not a plain file"
        if st.st_size > cap:
            return b"", (f"array {path.name} is {_size(st.st_size)}, over the {_size(cap)} a "
                         f"{shape[0]}x{shape[1]} run's arrays may take (not kept)")
        data = fh.read(cap + 1)
    if len(data) > cap:  # it grew after the stat (a process of the run still writing)
        return b"", f"array {path.name} grew past {_size(cap)} while read (not kept)"
    return data, ""


def read_plain(path: Path, cap: int) -> tuple[bytes | None, str]:
    """(bytes, '') of a plain file of at most `cap` bytes by its real size; (None, '') when
    there is none; (None, why) for a link, a FIFO or a device (never opened for reading to
    the end: O_NONBLOCK, so a FIFO without writer cannot hang), or a file past `cap`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        if path.is_symlink():
            return None, "is a symbolic link (not followed)"
        return None, f"cannot be read: {exc.strerror}"
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, "is not a plain file (not read)"
        if st.st_size > cap:
            return None, f"is {_size(st.st_size)}, over the {_size(cap)} kept"
        data = fh.read(cap + 1)
    if len(data) > cap:  # it grew after the stat
        return None, f"grew past the {_size(cap)} kept while read"
    return data, ""


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"
