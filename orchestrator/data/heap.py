"""Hand the memory a finished phase freed back to the operating system, where the C library can.

A dataset's load builds ~100,000 figure rows and ~700,000 sample rows as Python lists before
they become frames; once the frames are made those lists are freed, but glibc's malloc keeps
the freed pages for reuse, so the process's resident size stays at the load's high-water mark
and the next phase (compare's second side, a report's plots) stacks on top of it: at the
figure limit `compare` peaked at 1,025 MiB (BENCHMARKS.md, figure 6). `malloc_trim(0)` returns
those pages. Elsewhere (macOS's libc, musl) there is no such call and this does nothing.
"""

from __future__ import annotations

import ctypes
import sys
from functools import cache


@cache
def _trim() -> object | None:
    if not sys.platform.startswith("linux"):
        return None
    try:  # glibc's soname, not ctypes.util.find_library: that runs ldconfig in a subprocess
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (musl: another soname, no malloc_trim)
        return None


def release() -> bool:
    """Return freed heap pages to the OS; True where the C library did. No `gc.collect()`:
    the rows a load frees go at once, by their reference counts, and a collection with pandas
    imported costs ~60 ms, a load's worth of a small store."""
    trim = _trim()
    if trim is None:
        return False
    trim(0)
    return True
