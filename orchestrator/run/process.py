"""Start, wait for and kill one benchmark process; nothing else runs while it does.

Output goes to files (no pipe to drain, no thread) and the parent sleeps in the kernel until the
program exits or its timeout passes, waking only to look at two file sizes (every 2 s while they
do not grow, sooner while they grow fast): a program that floods its output is killed once it
passes RUNNING_LIMIT times OUTPUT_CAP, so it cannot fill the temp folder while it runs. Then the
whole process group is killed (only while the program is unreaped: its group id is still its
own, programs/probe.py), which also ends children a finished program left behind, and
what left the group (a `setsid` daemon, a double fork) is ended by its mark (run/leftovers).
Ctrl-C while the program starts is deferred (signals.deferred) until its group is known and the
ledger names it, so it cannot outlive the orchestrator.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO

from orchestrator import signals
from orchestrator.programs import probe
from orchestrator.records import Outcome
from orchestrator.run import leftovers

OUTPUT_CAP = 32 * 1024 * 1024  # bytes of stdout/stderr kept per run
# a running program is killed once either file passes this many times OUTPUT_CAP: one that
# prints a little more than is kept still ends by itself (the cut is made when reading back),
# a flood is stopped before it fills the temp folder
RUNNING_LIMIT = 4
# how often a running program's output sizes are looked at (two fstat calls): the first look
# after probe.FIRST_LOOK_S, then half the time the present rate of growth needs to reach the
# limit, within LOOK_S; a quiet program wakes the parent once every 2 s
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
            probe.OWNED.add(proc.pid)  # reaped by end_group alone
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


# the exit is waited for without reaping, so the group kill after it reaches only our group
# (programs/probe.py); the names stay for the tests and bench/figures/interference.py
_wait_exit = probe.wait_exit
_poll_exit = probe.poll_exit


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    probe.end_group(proc, reap_s=10)
