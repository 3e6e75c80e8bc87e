"""A fact or probe command (`cargo --version`, `nvidia-smi`, a python -c probe) run bounded.

`subprocess.run(timeout=...)` kills only the command it started and then waits for its pipes
to close: a rustup proxy's real `cargo`, or any child holding stdout, keeps that wait going
past the timeout and outlives the orchestrator's SIGTERM. Here the command gets its own process
group, and the whole group is SIGKILLed at the timeout, on any exception (Ctrl-C, SIGTERM
turned into an exception) and once it exited (a child left behind), so nothing it started
outlives the call.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

from orchestrator import signals

_DRAIN_S = 2.0  # after the group is killed, its pipes close at once; never wait longer


def started(argv: list[str], **popen: object) -> subprocess.Popen[str]:
    """`subprocess.Popen(argv, **popen)` with its stdin empty, text pipes and a process group
    of its own. A Ctrl-C or SIGTERM inside Popen (the command already running, its group not
    yet ours to kill: a loaded machine runs the child before Popen returns) would leave it
    behind: it is noted, and acted on once the group is known (the group killed, then
    KeyboardInterrupt), as run/process.py starts a program. OSError as Popen raises it."""
    proc: subprocess.Popen[str] | None = None
    noted: list[int] = []
    try:
        with signals.deferred() as noted:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, errors="replace",
                                    start_new_session=True, **popen)  # type: ignore[call-overload]
    finally:
        if noted:  # the interrupt wins over an OSError of the same start
            if proc is not None:
                _kill_group(proc)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=_DRAIN_S)
            raise KeyboardInterrupt
    return proc


def stdout_of(argv: list[str], timeout: float, **popen: object) -> str | None:
    """The command's stdout when it exits 0 within `timeout` s; None when it cannot start,
    fails or hangs (its whole process group killed). `popen`: Popen's cwd, env."""
    return answer(argv, timeout, **popen)[0]


def answer(argv: list[str], timeout: float, **popen: object) -> tuple[str | None, bool]:
    """(`stdout_of`'s answer, whether the command hung: killed at `timeout`)."""
    try:
        proc = started(argv, **popen)
    except OSError:
        return None, False
    with proc:
        try:
            stdout, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=_DRAIN_S)
            return None, True
        except BaseException:
            _kill_group(proc)
            raise
        finally:
            _kill_group(proc)  # a child left behind by a command that exited
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=_DRAIN_S)
    return (stdout if proc.returncode == 0 else None), False


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
