"""Start, wait for and kill one benchmark process; nothing else runs while it does.

Output goes to files (no pipe to drain, no thread) and the parent only sleeps in the kernel
until the program exits or its timeout passes; then the whole process group is killed, which
also reaps children a finished program left behind. Ctrl-C while the program starts is
deferred (signals.deferred) until its group is known, so it cannot outlive the orchestrator.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from orchestrator import signals
from orchestrator.data.records import Outcome

OUTPUT_CAP = 32 * 1024 * 1024  # bytes of stdout/stderr kept per run


def spawn(argv: list[str], env: dict[str, str], cwd: Path, timeout_s: float) -> Outcome:
    """Run a process in its own group with output to files; kill the group on timeout/Ctrl-C."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        with signals.deferred() as noted:
            try:
                proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                    argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                    start_new_session=True)
            except OSError as exc:
                proc, error = None, f"cannot start {argv[0]}: {exc}"
        if noted:  # Ctrl-C while it started: acted on now that its group is known
            if proc is not None:
                _kill_group(proc)
            raise KeyboardInterrupt
        if proc is None:
            return Outcome(None, False, 0.0, b"", error.encode())
        timed_out = False
        try:
            timed_out = not _wait_exit(proc, timeout_s)
        finally:
            wall = time.perf_counter() - start
            _kill_group(proc)  # also reaps children a finished program left behind
        outcome = []
        for fh in (out, err):
            fh.seek(0)
            # read what is there: read(n) allocates n bytes up front (32 MiB, every run)
            data = fh.read(min(os.fstat(fh.fileno()).st_size, OUTPUT_CAP + 1))
            outcome.append((data[:OUTPUT_CAP], len(data) > OUTPUT_CAP))
    (stdout, cut_out), (stderr, cut_err) = outcome
    return Outcome(proc.returncode, timed_out, wall, stdout, stderr,
                   OUTPUT_CAP if cut_out or cut_err else None)


def _wait_exit(proc: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """Sleep in the kernel until `proc` exits (True) or `timeout_s` passes (False).

    `Popen.wait(timeout)` polls: it wakes up to 20 times a second while the program runs and
    notices the exit up to 50 ms late, which both disturbs the measured program and inflates
    `wall_s`. A pidfd (Linux) or a kqueue exit event (macOS) wakes us exactly once, at the exit.
    """
    if hasattr(os, "pidfd_open"):
        try:
            fd = os.pidfd_open(proc.pid)
        except OSError:  # a kernel without pidfds (< 5.3): poll the old way
            return _poll_exit(proc, timeout_s)
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            if not poller.poll(min(timeout_s * 1000, 2**31 - 1)):  # ms, as poll() takes
                return False
        finally:
            os.close(fd)
    elif hasattr(select, "kqueue"):
        queue = select.kqueue()
        try:
            event = select.kevent(proc.pid, select.KQ_FILTER_PROC,
                                  select.KQ_EV_ADD | select.KQ_EV_ONESHOT, select.KQ_NOTE_EXIT)
            if not queue.control([event], 1, timeout_s):
                return False
        except ProcessLookupError:  # it exited before the event was added
            pass
        finally:
            queue.close()
    else:
        return _poll_exit(proc, timeout_s)
    proc.wait()  # it has exited: this only reaps it
    return True


def _poll_exit(proc: subprocess.Popen[bytes], timeout_s: float) -> bool:
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return False
    return True


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
