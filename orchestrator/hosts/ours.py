"""Whether a process or Slurm job on a host is the sweep this orchestrator started there, and
a stop sent only to one that is: the same proof as for a local leftover (docs/safety.md).

A direct sweep is `sh WORKDIR/.hosts/run.sh TOKEN`, TOKEN 32 hex digits made at each start.
It is ours when its pid has the start time recorded at the start AND exactly that command
line; pid + start time alone never is (ps's start time has one-second resolution, and
`attach.json` may have been planted). The check and the kill run in one shell there, so no
reused pid slips in between. A Slurm job is ours when it is named `orchestrator-TOKEN` (given
after the user's options, so it wins), and scancel is given that name as well: it refuses any
other job.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from orchestrator.hosts import slurm
from orchestrator.hosts.faults import HostError, explain
from orchestrator.hosts.ssh import Transport

# the pid's start time and command line, blanks trimmed, equal to what was recorded ($2, $3)
_IS_OURS = ('test "$(ps -o lstart= -p "$1" | sed "s/^ *//;s/ *$//")" = "$2" && '
            'test "$(ps -ww -o args= -p "$1" | sed "s/^ *//;s/ *$//")" = "$3"')


@dataclass(frozen=True)
class Started:
    pid: str | None  # the run.sh process on the host (direct)
    job: str | None  # the Slurm job id
    lstart: str  # the pid's start time as ps says it (a reused pid is not ours)
    token: str  # in run.sh's command line, or the Slurm job's name


def new_token() -> str:
    return secrets.token_hex(16)


def run_sh(workdir: str) -> str:
    return f"{workdir.rstrip('/')}/.hosts/run.sh"


def command_line(workdir: str, token: str) -> str:
    """run.sh's command line as ps shows it (started as `sh PATH TOKEN`)."""
    return f"sh {run_sh(workdir)} {token}"


def job_name(token: str) -> str:
    return f"orchestrator-{token}"


def lstart(t: Transport, pid: str) -> str:
    """The start time of `pid` there, as recorded at the start ('' if it already ended)."""
    done = t.run(["ps", "-o", "lstart=", "-p", pid], check=False, what="ps")
    lines = done.stdout.decode(errors="replace").strip().splitlines()
    return lines[0].strip()[:200] if done.returncode == 0 and lines else ""


def running(t: Transport, workdir: str, s: Started) -> bool:
    """Whether our sweep still runs there (a lost connection raises HostError)."""
    if s.job:
        state, name = _job(t, s.job)
        return state in slurm.ACTIVE and name == job_name(s.token)
    return _if_ours(t, workdir, s, "") == 0


def stop(t: Transport, workdir: str, s: Started) -> None:
    """Ask our sweep to stop as on Ctrl-C (it keeps every finished run); anything else that
    has its pid or job id is left alone."""
    if s.job:
        state, name = _job(t, s.job)
        if name != job_name(s.token):
            return
        # a job still queued has no batch shell to signal: it is cancelled outright
        argv = ["scancel", f"--name={name}", s.job] if state == "PENDING" else \
            ["scancel", f"--name={name}", "--batch", "--signal=TERM", s.job]
        t.run(argv, check=False, what="scancel")
    elif s.pid:
        _if_ours(t, workdir, s, ' && kill -TERM "$1"')


def _if_ours(t: Transport, workdir: str, s: Started, then: str) -> int:
    if not s.pid or not s.lstart:
        return 1
    done = t.run(["sh", "-c", _IS_OURS + then, "sh", s.pid, s.lstart,
                  command_line(workdir, s.token)], check=False, what="ps")
    if done.returncode == 255:  # ssh's own failure: the connection, not the answer
        raise HostError(t.name, explain(done.returncode, done.stderr, "ps"))
    return done.returncode


def _job(t: Transport, job: str) -> tuple[str, str]:
    """(state, name) of a job squeue knows, else ('', '')."""
    done = t.run(["squeue", "-h", "-j", job, "-o", "%T|%j"], check=False, what="squeue")
    if done.returncode == 255:
        raise HostError(t.name, explain(done.returncode, done.stderr, "squeue"))
    lines = done.stdout.decode(errors="replace").strip().splitlines()
    state, _, name = (lines[-1] if lines else "").partition("|")
    return state.strip(), name.strip()
