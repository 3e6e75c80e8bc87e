"""cargo run as a process: in its own process group, killed whole when the build is stopped;
the binary it reports in its JSON messages; its first error, short enough for a table cell.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import IO

from orchestrator.programs import probe
from orchestrator.programs.build import Watch

ERROR_LINES = 30


def run_group(argv: list[str], cwd: Path, env: dict[str, str],
              watch: Watch | None = None) -> subprocess.CompletedProcess[str]:
    """`subprocess.run` with cargo in its own process group, and the whole group killed when
    this process stops (Ctrl-C, SIGTERM, any exception): `subprocess.run` kills only cargo,
    which leaves its rustc and build-script children running. `watch`: a sweep's (a build
    that outlives a killed orchestrator is then ended by the next sweep, like a run). The
    group is killed and the watch told before cargo is reaped, so neither that kill nor a
    pause the watch sends in between can reach a group that took cargo's pid (probe.py)."""
    if watch is not None:
        env = {**env, **watch.env()}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        # a Ctrl-C as it starts: none left
        with probe.started(argv, cwd=cwd, env=env, stdout=out, stderr=err) as proc:
            try:
                if watch is not None:
                    watch.started(proc.pid)
                probe.wait_exit(proc)
            finally:  # a child cargo left behind after it exited is ended too
                probe.kill_group(proc)
                if watch is not None:
                    watch.ended()
                probe.end_group(proc)
        stdout, stderr = (_text(fh) for fh in (out, err))
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def _text(fh: IO[bytes]) -> str:
    fh.seek(0)
    return fh.read().decode(errors="replace")


def executable(stdout: str, crate: str) -> str | None:
    """The binary cargo reported for `crate` in its JSON messages."""
    found = None
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and \
                msg.get("target", {}).get("name") == crate:
            found = msg["executable"]
    return found


def error_summary(stderr: str, returncode: int) -> str:
    """cargo's first error and what follows it, short enough for a table cell."""
    lines = stderr.splitlines()
    first = next((i for i, line in enumerate(lines) if line.lstrip().startswith("error")), None)
    chosen = lines[first:first + ERROR_LINES] if first is not None else lines[-ERROR_LINES:]
    text = "\n".join(chosen).strip()
    return text or f"cargo exited with status {returncode} and printed no error"
