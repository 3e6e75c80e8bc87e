"""Defer Ctrl-C and SIGTERM over the few steps that must not be cut in half.

Blocking the signals (pthread_sigmask) would be inherited by a program started inside the
block, and only holds for the calling thread: a process-directed signal may then land on any
other thread and still interrupt the main one. Swapping the Python-level handlers instead works
whatever the threads, since Python runs handlers in the main thread; the caller acts on what was
noted once the step is done.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def deferred() -> Iterator[list[int]]:
    """Note SIGINT/SIGTERM instead of raising them for the length of the block."""
    noted: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield noted  # signal handlers belong to the main thread; there is nothing to defer
        return
    previous = {sig: signal.signal(sig, lambda signum, _frame: noted.append(signum))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield noted
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
