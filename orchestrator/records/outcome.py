"""What a run and a build came to: the process's `Outcome`, the `RunRecord` kept about a run,
`classify` (the one place that decides whether a run failed and why), `BuildResult`."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.records.parsed import ParseResult
from orchestrator.records.runs import Role, RunDef, Status

STDERR_TAIL = 2000  # bytes of stderr a failed run's reason may quote from
PANIC_TAIL = 64 * 1024  # bytes of stderr searched for a Rust panic (a backtrace follows it)


@dataclass
class Outcome:
    """What one process did, as the process module saw it."""

    returncode: int | None
    timed_out: bool
    wall_s: float
    stdout: bytes
    stderr: bytes
    truncated_at: int | None = None  # the byte count stdout was cut at, when it was
    # stderr cut at this byte count: its tail (the reason's source) is lost, the figures are not
    stderr_truncated_at: int | None = None
    over_cap: bool = False  # killed while running: its output had passed the cap
    # processes the run left outside its group (a daemon), ended after it: 'pid N (command)'
    left_running: tuple[str, ...] = ()


@dataclass
class RunRecord:
    """Everything kept about one run, measured or not."""

    run: RunDef
    role: Role = Role.MEASURE
    status: Status = Status.OK
    reason: str = ""
    started_at: float = 0.0
    ended_at: float = 0.0
    wall_s: float | None = None
    returncode: int | None = None
    load_before: dict[str, float] | None = None
    load_after: dict[str, float] | None = None
    gate: dict[str, Any] | None = None
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    cache: dict[str, Any] | None = None  # what was done to burn's cache folder, and found
    # the machine around the run (run/gpu_state, run/cpu_state): gpu_before/_after/_delta,
    # cpu_before/_after; None: no process ran
    state: dict[str, Any] | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    artifacts: dict[str, bytes] = field(default_factory=dict)
    expect_failure: bool = False
    outcome: Outcome | None = field(default=None, repr=False)  # None: no process ran
    # what the orchestrator would not take from the run, and why (arrays over their cap): a
    # failure that classify reports
    refused: str = ""

    @property
    def run_id(self) -> str:
        return self.run.run_id + ("-prime" if self.role == Role.PRIMING else "")

    def stderr_tail(self) -> str:
        return self.stderr[-STDERR_TAIL:].decode("utf-8", "replace").strip()


def classify(rec: RunRecord, parsed: ParseResult | None = None) -> tuple[Status, str]:
    """Whether a run failed, and why: the one place that decides.

    A record without a process (skipped, failed build, unsafe cache, no scratch folder) keeps
    what was decided when it was made. Otherwise, in this order: the process's own faults
    (timeout, not started, signal, exit status, output cut, nothing printed, a partial last
    line), then what it produced: an accuracy run must dump its arrays, any other run must
    print a figure (checked once `parsed` is given). The reason ends with stderr's last line.
    """
    outcome = rec.outcome
    if outcome is None:
        return rec.status, rec.reason
    failure = _process_failure(outcome, rec.run.timeout_s) or _product_failure(rec, parsed)
    if failure is None:
        return Status.OK, ""
    why = stderr_reason(rec.stderr)
    return Status.FAILED, failure + (f": {why}" if why else "")


PANIC = "panicked at "
WHAT = "what():"  # std::terminate's line for an uncaught C++ exception


def stderr_reason(stderr: bytes) -> str:
    """The line of stderr that says why: a Rust panic's own line and message (`thread 'main'
    panicked at src/x.rs:3:5:` then the message; older Rust: one line; the first panic, the
    cause of any that follow), not the backtrace hint or the backtrace printed after it; a C++
    exception's `what():` (torch's c10::Error, before its frames); otherwise the last line."""
    tail = stderr[-PANIC_TAIL:].decode("utf-8", "replace")
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    for at, line in enumerate(lines):
        if line.startswith("thread '") and PANIC in line:
            follows = lines[at + 1] if at + 1 < len(lines) else ""
            if line.endswith(":") and follows and not follows.startswith("note:"):
                return f"{line} {follows}"
            return line
    for line in lines:
        if line.startswith(WHAT):
            return line
    last = stderr[-STDERR_TAIL:].decode("utf-8", "replace").strip()
    return last.splitlines()[-1] if last else ""


def _process_failure(outcome: Outcome, timeout_s: float) -> str | None:
    if outcome.over_cap:  # before the signal: the SIGKILL was ours, for this reason
        return (f"output cut at {outcome.truncated_at or outcome.stderr_truncated_at} bytes "
                "(the rest is lost): still printing at several times that, process group "
                "killed")
    if outcome.timed_out:
        return f"timed out after {timeout_s:g} s (process group killed)"
    if outcome.returncode is None:
        return "did not start"
    if outcome.returncode < 0:
        try:
            name = signal.Signals(-outcome.returncode).name
        except ValueError:
            name = str(-outcome.returncode)
        return f"killed by signal {name}"
    if outcome.returncode != 0:
        return f"exited with status {outcome.returncode}"
    # stdout only: the figures after the cut are lost; a cut stderr loses none (the runner
    # notes it in the record's state)
    if outcome.truncated_at is not None:
        return f"output cut at {outcome.truncated_at} bytes (the rest is lost)"
    if not outcome.stdout.strip():
        return "printed nothing"
    if not outcome.stdout.endswith(b"\n"):
        return "output ends in a partial line"
    return None


def _product_failure(rec: RunRecord, parsed: ParseResult | None) -> str | None:
    if rec.refused:
        return rec.refused
    if rec.run.mode == "accuracy":
        return None if rec.artifacts else "wrote no .npy arrays"
    if parsed is not None and not parsed.figures:
        return f"printed no figures ({len(parsed.unknown)} unknown lines)"
    return None


@dataclass(frozen=True)
class BuildResult:
    """One cargo build of a sweep: found up to date, built, or failed with cargo's error."""

    name: str
    key: str
    status: Status  # ok | failed
    binary: Path | None
    seconds: float
    fresh: bool  # True: the stamp matched, cargo did not run
    error: str = ""
    log: str = ""
    expect_failure: bool = False

    @property
    def outcome(self) -> str:
        """'up to date', 'built in 4.2 s', 'failed' or 'failed (expected)', for people."""
        if self.status == Status.OK:
            return "up to date" if self.fresh else f"built in {self.seconds:.1f} s"
        return "failed (expected)" if self.expect_failure else "failed"
