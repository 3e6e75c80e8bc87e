"""A command in a process group of its own, waited for and ended so that a kill reaches only
its group: fact and probe commands (`cargo --version`, `nvidia-smi`, a python -c probe) run
bounded, cargo's builds and the measured programs (run/process.py) started and ended here.

`subprocess.run(timeout=...)` kills only the command it started and then waits for its pipes
to close: a rustup proxy's real `cargo`, or any child holding stdout, keeps that wait going
past the timeout and outlives the orchestrator's SIGTERM. Here the command gets its own process
group, its output goes to files (a child still holding them cannot stall the wait), and the
whole group is SIGKILLed at the timeout, on any exception (Ctrl-C, SIGTERM turned into an
exception) and once it exited (a child left behind), so nothing it started outlives the call.

A group is signalled only while its leader is our child and not yet reaped: a zombie keeps its
pid, so the group id `pid` cannot be anyone else's. Once reaped, that pid may be handed to
another program that leads its own group (a shell's job, a daemon, another user's sweep), and
`killpg(pid)` would end that program instead (docs/safety.md). So the exit is waited for
without reaping (a pidfd, kqueue or `waitid(WNOWAIT)`), the group killed, and only then the
leader reaped.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import IO

from orchestrator import signals

_DRAIN_S = 2.0  # after the group is killed, its members die at once; never wait longer
OUTPUT_MAX = 16 << 20  # of a fact or probe command's stdout (they print a few lines)
Look = Callable[[], "float | None"]  # seconds until the next look; None: stop waiting now
FIRST_LOOK_S = 0.2  # the first look() of a wait that has one
_POLL_S = 0.05  # the fallback's sleep between two looks at a child (Popen.wait's own 50 ms)
# pids of the children started here, until their Popen has reaped them: no one else may end or
# reap them (run/leftovers ends a finished run's orphans: a fact command or cargo that another
# thread runs meanwhile is none of them, and a reap there would leave its Popen an exit code
# of 0 and its group id free for another program)
OWNED: set[int] = set()


def started(argv: list[str], **popen: object) -> subprocess.Popen[str]:
    """`subprocess.Popen(argv, **popen)` with its stdin empty, text pipes (unless `popen` names
    stdout/stderr) and a process group of its own. A Ctrl-C or SIGTERM inside Popen (the
    command already running, its group not yet ours to kill: a loaded machine runs the child
    before Popen returns) would leave it behind: it is noted, and acted on once the group is
    known (the group killed, then KeyboardInterrupt), as run/process.py starts a program.
    OSError as Popen raises it."""
    proc: subprocess.Popen[str] | None = None
    noted: list[int] = []
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **popen}
    try:
        with signals.deferred() as noted:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, text=True, errors="replace",
                                    start_new_session=True, **pipes)  # type: ignore[call-overload]
            OWNED.add(proc.pid)
    finally:
        if noted:  # the interrupt wins over an OSError of the same start
            if proc is not None:
                end_group(proc)
            raise KeyboardInterrupt
    return proc


def stdout_of(argv: list[str], timeout: float, **popen: object) -> str | None:
    """The command's stdout when it exits 0 within `timeout` s; None when it cannot start,
    fails or hangs (its whole process group killed). `popen`: Popen's cwd, env."""
    return answer(argv, timeout, **popen)[0]


def answer(argv: list[str], timeout: float, **popen: object) -> tuple[str | None, bool]:
    """(`stdout_of`'s answer, whether the command hung: killed at `timeout`)."""
    with tempfile.TemporaryFile() as out:
        try:
            proc = started(argv, stdout=out, stderr=subprocess.DEVNULL, **popen)
        except OSError:
            return None, False
        with proc:
            try:
                hung = not wait_exit(proc, timeout)
            finally:
                end_group(proc)  # at the timeout, on Ctrl-C, and a child left behind
        if hung or proc.returncode != 0:
            return None, hung
        out.seek(0)
        return out.read(OUTPUT_MAX).decode(errors="replace"), False


def kill_group(proc: subprocess.Popen[str] | subprocess.Popen[bytes]) -> None:
    """SIGKILL to `proc`'s whole group, only while `proc` is unreaped (its group id is then
    still its own); a reaped leader's group is left alone (its pid may be another's now)."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def end_group(proc: subprocess.Popen[str] | subprocess.Popen[bytes],
              reap_s: float = _DRAIN_S) -> None:
    """`kill_group`, then reap the leader (within `reap_s`: one stuck in the kernel is left)."""
    kill_group(proc)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=reap_s)
    if proc.returncode is not None:
        OWNED.discard(proc.pid)


def wait_exit(proc: subprocess.Popen[str] | subprocess.Popen[bytes], timeout_s: float = math.inf,
              look: Look | None = None) -> bool:
    """Sleep in the kernel until `proc` exits (True), `timeout_s` passes or `look()` says so
    between sleeps as long as it asks for (False). The exit is NOT reaped: `end_group` does
    that after the group is killed, while its id is still ours.

    `Popen.wait(timeout)` polls: it wakes up to 20 times a second while the program runs and
    notices the exit up to 50 ms late, which both disturbs the measured program and inflates
    its wall time. A pidfd (Linux) or a kqueue exit event (macOS) wakes us at the exit itself.
    """
    if proc.returncode is not None:
        return True
    if hasattr(os, "pidfd_open"):
        try:
            fd = os.pidfd_open(proc.pid)
        except OSError:  # a kernel without pidfds (< 5.3): poll the old way
            return poll_exit(proc, timeout_s, look)
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            return _sliced(lambda s: bool(poller.poll(min(s * 1000, 2**31 - 1))), timeout_s,
                           look)
        finally:
            os.close(fd)
    if hasattr(select, "kqueue"):
        queue = select.kqueue()
        try:
            event = select.kevent(proc.pid, select.KQ_FILTER_PROC,
                                  select.KQ_EV_ADD | select.KQ_EV_ONESHOT, select.KQ_NOTE_EXIT)
            queue.control([event], 0, 0)
            return _sliced(lambda s: bool(queue.control(None, 1, min(s, 1e6))), timeout_s, look)
        except ProcessLookupError:  # it exited before the event was added
            return True
        finally:
            queue.close()
    return poll_exit(proc, timeout_s, look)


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


def poll_exit(proc: subprocess.Popen[str] | subprocess.Popen[bytes], timeout_s: float = math.inf,
              look: Look | None = None) -> bool:
    """`wait_exit` without pidfds or kqueue: `waitid(WNOWAIT)` every 50 ms, nothing reaped."""
    def sleep(seconds: float) -> bool:
        until = time.monotonic() + seconds
        while True:
            if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
            left = until - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(_POLL_S, left))
    return _sliced(sleep, timeout_s, look)


def answers(commands: list[list[str]], timeout: float) -> list[tuple[str | None, bool]]:
    """`answer` for each command, all started at once and bounded by one `timeout` in all:
    several that hang cost it once, not once each. Every group is ended on any exit."""
    with contextlib.ExitStack() as stack:
        procs: list[tuple[subprocess.Popen[str] | None, IO[bytes]]] = []
        try:
            for argv in commands:
                out = stack.enter_context(tempfile.TemporaryFile())
                try:
                    proc = started(argv, stdout=out, stderr=subprocess.DEVNULL)
                except OSError:
                    proc = None
                procs.append((proc, out))
            deadline = time.monotonic() + timeout
            hung = [proc is not None and not wait_exit(proc, max(1e-3, deadline - time.monotonic()))
                    for proc, _out in procs]
        finally:
            for proc, _out in procs:
                if proc is not None:
                    end_group(proc)
        found: list[tuple[str | None, bool]] = []
        for (proc, out), stuck in zip(procs, hung, strict=True):
            if proc is None or stuck or proc.returncode != 0:
                found.append((None, stuck))
                continue
            out.seek(0)
            found.append((out.read(OUTPUT_MAX).decode(errors="replace"), False))
        return found
