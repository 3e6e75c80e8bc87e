"""Start, wait for and kill one benchmark process; nothing else runs while it does.

Output goes to files (no pipe to drain, no thread) and the parent sleeps in the kernel until the
program exits or its timeout passes, waking only to look at two file sizes (every 2 s while they
do not grow, sooner while they grow fast): a program that floods its output is killed once it
passes RUNNING_LIMIT times OUTPUT_CAP, so it cannot fill the temp folder while it runs. Then the
whole process group is killed, which also reaps children a finished program left behind, and
what left the group (a `setsid` daemon, a double fork) is ended by its mark (run/leftovers).
Ctrl-C while the program starts is deferred (signals.deferred) until its group is known and the
ledger names it, so it cannot outlive the orchestrator.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from orchestrator import signals
from orchestrator.records import Outcome
from orchestrator.run import leftovers

OUTPUT_CAP = 32 * 1024 * 1024  # bytes of stdout/stderr kept per run
# a running program is killed once either file passes this many times OUTPUT_CAP: one that
# prints a little more than is kept still ends by itself (the cut is made when reading back),
# a flood is stopped before it fills the temp folder
RUNNING_LIMIT = 4
Look = Callable[[], "float | None"]  # seconds until the next look at the output; None: stop
# how often a running program's output sizes are looked at (two fstat calls): the first look
# after FIRST_LOOK_S, then half the time the present rate of growth needs to reach the limit,
# within LOOK_S; a quiet program wakes the parent once every 2 s
FIRST_LOOK_S = 0.2
LOOK_S = (0.02, 2.0)


def spawn(argv: list[str], env: dict[str, str], cwd: Path, timeout_s: float,
          ledger: Path | None = None) -> Outcome:
    """Run a process in its own group with output to files; kill the group on timeout, Ctrl-C
    or output over the cap. `ledger`: the results folder that writes down the running program
    (run/leftovers), so a later sweep can end it should this orchestrator be SIGKILLed."""
    token = leftovers.new_token()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        since, start = time.time(), time.perf_counter()
        proc, error = _start(argv, {**env, leftovers.MARK: token}, cwd, ledger, token,
                             out, err)
        if proc is None:
            return Outcome(None, False, 0.0, b"", error.encode())
        timed_out = over_cap = False
        try:
            watch = _Output(out, err)
            if not _wait_exit(proc, timeout_s, watch.next_look):
                over_cap = watch.next_look() is None
                timed_out = not over_cap
        finally:
            wall = time.perf_counter() - start
            _kill_group(proc)  # also reaps children a finished program left behind
            left = leftovers.end_descendants(token, since)
            if ledger is not None:
                leftovers.clear_ledger(ledger, token)
        (stdout, cut_out), (stderr, cut_err) = _read_back(out), _read_back(err)
    return Outcome(proc.returncode, timed_out, wall, stdout, stderr,
                   OUTPUT_CAP if cut_out else None, OUTPUT_CAP if cut_err else None,
                   over_cap, tuple(left))


def _start(argv: list[str], env: dict[str, str], cwd: Path, ledger: Path | None, token: str,
           out: IO[bytes], err: IO[bytes]) -> tuple[subprocess.Popen[bytes] | None, str]:
    """The started process, or None and why it could not start (a missing program, an
    environment the OS refuses: a NUL byte, a '=' in a name, text that is not encodable)."""
    proc: subprocess.Popen[bytes] | None = None
    error = ""
    with signals.deferred() as noted:
        try:
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=err, start_new_session=True)
        except (OSError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
            error = f"cannot start {argv[0]}: {exc}"
        if proc is not None and ledger is not None:
            try:
                leftovers.write_ledger(ledger, proc.pid, token)
            except OSError as exc:  # started, but not written down: it must not run unrecorded
                error = f"cannot write {ledger / leftovers.LEDGER}: {exc.strerror}"
                _kill_group(proc)
                proc = None
    if noted:  # Ctrl-C while it started: acted on now that its group is known
        if proc is not None:
            _kill_group(proc)
            if ledger is not None:
                leftovers.clear_ledger(ledger, token)
        raise KeyboardInterrupt
    return proc, error


class _Output:
    """When to look at a running program's output sizes again, and whether they passed the
    limit: soon while they grow fast, rarely while they do not."""

    def __init__(self, out: IO[bytes], err: IO[bytes]) -> None:
        self.files = (out, err)
        self.size, self.at = 0, time.monotonic()

    def next_look(self) -> float | None:
        """Seconds until the next look; None: over the limit (kill it)."""
        size = max(os.fstat(fh.fileno()).st_size for fh in self.files)
        limit, now = RUNNING_LIMIT * OUTPUT_CAP, time.monotonic()
        if size > limit:
            return None
        rate = (size - self.size) / max(now - self.at, 1e-3)
        self.size, self.at = size, now
        if rate <= 0:
            return LOOK_S[1]
        return min(LOOK_S[1], max(LOOK_S[0], (limit - size) / rate / 2))


def _read_back(fh: IO[bytes]) -> tuple[bytes, bool]:
    """What the program printed, cut at OUTPUT_CAP; (bytes, whether it was cut)."""
    fh.seek(0)
    # read what is there: read(n) allocates n bytes up front (32 MiB, every run)
    data = fh.read(min(os.fstat(fh.fileno()).st_size, OUTPUT_CAP + 1))
    return data[:OUTPUT_CAP], len(data) > OUTPUT_CAP


def _wait_exit(proc: subprocess.Popen[bytes], timeout_s: float,
               look: Look | None = None) -> bool:
    """Sleep in the kernel until `proc` exits (True), `timeout_s` passes or `look()` says so
    between sleeps as long as it asks for (False).

    `Popen.wait(timeout)` polls: it wakes up to 20 times a second while the program runs and
    notices the exit up to 50 ms late, which both disturbs the measured program and inflates
    `wall_s`. A pidfd (Linux) or a kqueue exit event (macOS) wakes us at the exit itself.
    """
    if hasattr(os, "pidfd_open"):
        try:
            fd = os.pidfd_open(proc.pid)
        except OSError:  # a kernel without pidfds (< 5.3): poll the old way
            return _poll_exit(proc, timeout_s, look)
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            if not _sliced(lambda s: bool(poller.poll(min(s * 1000, 2**31 - 1))), timeout_s,
                           look):
                return False
        finally:
            os.close(fd)
    elif hasattr(select, "kqueue"):
        queue = select.kqueue()
        try:
            event = select.kevent(proc.pid, select.KQ_FILTER_PROC,
                                  select.KQ_EV_ADD | select.KQ_EV_ONESHOT, select.KQ_NOTE_EXIT)
            queue.control([event], 0, 0)
            if not _sliced(lambda s: bool(queue.control(None, 1, s)), timeout_s, look):
                return False
        except ProcessLookupError:  # it exited before the event was added
            pass
        finally:
            queue.close()
    else:
        return _poll_exit(proc, timeout_s, look)
    proc.wait()  # it has exited: this only reaps it
    return True


def _sliced(sleep: Callable[[float], bool], timeout_s: float, look: Look | None) -> bool:
    """`sleep(s)` (True: it exited) until `timeout_s`, in slices `look()` chooses (None from it:
    stop now); without `look`, one sleep."""
    deadline = time.monotonic() + timeout_s
    wait = FIRST_LOOK_S
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        if sleep(left if look is None else min(left, wait)):
            return True
        if look is not None:
            chosen = look()
            if chosen is None:
                return False
            wait = chosen


def _poll_exit(proc: subprocess.Popen[bytes], timeout_s: float,
               look: Look | None = None) -> bool:
    def sleep(seconds: float) -> bool:
        try:
            proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True
    return _sliced(sleep, timeout_s, look)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
