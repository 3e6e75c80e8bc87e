"""Fault suite, issue 16: every line the contract allows renders; logs and arrays are read
bounded; numbers are numbers.

Each case goes through the command line (`cli`, from test_faults: a subprocess, no traceback
allowed on stderr), for a captured log and for a results store whose runs printed the same lines
(the fake program's FAULT=lines prints the LINES variable), bounded in time and memory.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest

from .test_faults import cli, fake, orchestrator, wait_for

__all__ = ["fake"]  # the module-scoped fixture, used by name below

BOUNDED = {"timeout": 60, "memory_mib": 1024}
SYNC = "cpu 8x8 matmul with sync, 3 runs: min 1.000µs median 2.000µs"


# ---- logs are read bounded (class 3) ---------------------------------------------------------


@pytest.mark.parametrize("command", ["parse", "report", "compare"])
def test_endless_or_huge_log_is_refused_with_one_line(tmp_path: Path, command: str) -> None:
    big = tmp_path / "big.log"
    with big.open("wb") as file:  # 10 GiB that take no disk: a sparse file
        file.truncate(10 * 2**30)
    good = tmp_path / "good.log"
    good.write_text(SYNC + "\n", encoding="utf-8")
    for log in (Path("/dev/zero"), big):
        argv = {"parse": ["parse", log, "--csv", tmp_path / "out.csv"],
                "report": ["report", log, "--out", tmp_path / "report"],
                "compare": ["compare", good, log, "--out", tmp_path / "cmp"]}[command]
        if command == "report" and log == Path("/dev/zero"):
            continue  # not a regular file: report takes it for a results folder (exit 2 too)
        code, err = cli(*argv, **BOUNDED)
        assert (code, err.count("\n")) == (2, 1), err
        assert err == (f"error: {log}: larger than the 64 MiB a captured log may be; give "
                       "parse/report/compare a log, or split this one\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.log", "good.log"]  # no output
    assert big.stat().st_size == 10 * 2**30 and good.read_text(encoding="utf-8") == SYNC + "\n"


def test_sigterm_while_reading_a_log_that_never_ends(tmp_path: Path) -> None:
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a writer that never finishes
    try:
        os.write(writer, (SYNC + "\n").encode())
        proc = orchestrator("parse", fifo, "--csv", tmp_path / "out.csv", memory_mib=1024)
        wait_for(lambda: _has_open(proc.pid, fifo), "parse to open the FIFO")
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        os.close(writer)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip() == "interrupted"
    assert not (tmp_path / "out.csv").exists()


def _has_open(pid: int, path: Path) -> bool:
    with contextlib.suppress(FileNotFoundError, PermissionError):
        folder = Path(f"/proc/{pid}/fd")
        return any(os.readlink(fd) == str(path) for fd in folder.iterdir())
    return False
