"""Fault suite: every line the contract allows renders; logs and arrays are read
bounded; numbers are numbers.

Each case goes through the command line (`cli`, from test_faults: a subprocess, no traceback
allowed on stderr), for a captured log and for a results store whose runs printed the same lines
(the fake program's FAULT=lines prints the LINES variable), bounded in time and memory.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import signal
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from .test_faults import (
    TORCH_CPU,
    Fake,
    cli,
    fake,
    in_process,
    orchestrator,
    runs_of,
    wait_for,
    write_yaml,
)

__all__ = ["fake"]  # the module-scoped fixture, used by name below

BOUNDED = {"timeout": 60, "memory_mib": 1024}
SYNC = "cpu 8x8 matmul with sync, 3 runs: min 1.000µs median 2.000µs"


# ---- logs are read bounded (class 3) ---------------------------------------------------------


def test_a_log_of_more_figures_than_memory_allows_is_one_line(tmp_path: Path) -> None:
    """3 MiB of valid lines under the size cap, 100,002 figures: its dataset would take ~400 MiB
    (a 12 MiB log of them took over 1 GiB): refused at the figure cap, not a MemoryError."""
    log = tmp_path / "many.log"
    log.write_text((SYNC + "\n") * 50_001, encoding="utf-8")
    code, err = cli("parse", log, "--csv", tmp_path / "out.csv", **BOUNDED)
    assert (code, err) == (2, "error: many.log: 100002 figures and 0 sample values, more than "
                              "the 100000 and 1000000 a captured log may hold; split the log\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many.log"]


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
        code, err = cli(*argv, **BOUNDED)
        assert (code, err.count("\n")) == (2, 1), err
        assert err == (f"error: {log}: larger than the 16 MiB a captured log may be; give "
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


# ---- every line the contract allows renders (class 2) ----------------------------------------

def _summary(label: str, method: str, low: str, mid: str, runs: int = 3) -> str:
    return f"{label} 8x8 matmul {method}, {runs} runs: min {low} median {mid}"


def _program(framework: str, label: str, low: str, mid: str, samples: str) -> list[str]:
    """What one program prints, every duration `low` or `mid`, every sample set `samples`."""
    methods = ["no sync", "with sync"] + (["cuda.Event time", "+ sum().item()",
                                           "cuda.Event time (queued)", "kernel time (cupti)"]
                                          if framework == "torch" and label == "cuda" else
                                          ["device time (profile_with flush)",
                                           "+ sum().into_scalar()"] if label == "cuda" else [])
    lines = [f"### {framework} {label} threads 1", f"{label}: device init {low}",
             f"{label} 8x8 matmul first call: returned {low}, after sync {mid}"
             if label == "cuda" else f"{label} 8x8 matmul first call: {low}"]
    for method in methods:
        lines += [_summary(label, method, low, mid), f"# samples {label} 8x8 matmul {method}: "
                  f"{samples}"]
    return lines


def odd_log(low: str, mid: str, samples: str) -> str:
    """A log of both frameworks on the CPU and CUDA, burn at 1 and 8 threads, a warm-up, energy
    and accuracy, where the timings are `low` and `mid` (0.000ns, inverted, absurd, ...)."""
    lines = []
    for framework, label in (("torch", "cpu"), ("burn", "flex"), ("torch", "cuda"),
                             ("burn", "cuda")):
        lines += _program(framework, label, low, mid, samples)
    lines += ["### burn threads 8", _summary("flex", "with sync", mid, low),
              "# kernel cuda 8x8 matmul kernel time (cupti): 3 launches, "
              f"min {low} median {mid}: k",
              f"cuda 8x8 matmul energy (nvml): 0.000 J, 0 runs, {low}",
              f"cuda 8x8 matmul energy (nvml): 1.000 J, 3 runs, {low}",
              "cuda 8x8 matmul device time (profile, no flush): 0 of 0 read as no time",
              "### burn cuda warm cache warm-up dropped", "cuda: device init 1.000ms",
              f"warm-up dropped, timed run 0: after sync {low}",
              f"warm-up dropped, timed run 1: after sync {mid}",
              "### accuracy", "torch cpu  max|x - f64 ref| = nan   max|x - torch cpu| = inf",
              "burn flex  max|x - f64 ref| = 0", "max |ref| = 0"]
    return "\n".join(lines) + "\n"


ZERO, ABSURD = "0.000ns", "99999999999999999999.999s"
ODD = {  # name: (min, median, samples of every summary line)
    "zero min": (ZERO, "1.000ns", "1e-09 0 1e-09"),
    "all zero": (ZERO, ZERO, "0 0 0"),
    "equal": ("1.000µs", "1.000µs", "1e-06 1e-06 1e-06"),
    "inverted": ("2.000µs", "1.000µs", "2e-06"),
    "absurd": (ABSURD, ZERO, "1e300 0 1e-300"),
    "absurd median": ("1.000µs", ABSURD, "1e-06 1e20"),
    "odd samples": ("1.000µs", "2.000µs", "nan inf -1e-06 ５ 1_000"),  # unknown lines
}
# lines that are no figure at all: counted as unknown, the rest of the log still renders
UNKNOWN = ["cuda 8x8 matmul device time (profile, no flush): 21 of 20 read as no time",
           "# samples cpu 8x8 matmul with sync: nan inf", "# samples cpu 8x8 matmul with sync: -1",
           "cuda 8x8 matmul energy (nvml): nan J, 3 runs, 1.000s"]


def _renders(source: Path, out: Path) -> str:
    """`report SOURCE` exits 0 and writes report.md; its text."""
    code, err = cli("report", source, "--out", out, **BOUNDED)
    assert code == 0, err
    return (out / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", list(ODD))
def test_odd_but_allowed_lines_render_from_a_log(tmp_path: Path, name: str) -> None:
    log = tmp_path / "odd.log"
    log.write_text(odd_log(*ODD[name]) + "\n".join(UNKNOWN) + "\n", encoding="utf-8")
    before = log.read_bytes()
    if name == "zero min":  # the issue's own line, bounded through `python -m orchestrator`
        report = _renders(log, tmp_path / "report")
    else:
        code, err = in_process("report", log, "--out", tmp_path / "report")
        assert code == 0, err
        report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    if name in ("zero min", "all zero", "absurd"):
        assert "**impossible time**" in report and "a zero time" in report
    if name == "inverted":
        assert "**median below min**" in report
    assert "**not a number**: torch cpu is nan" in report  # the accuracy row of nan
    assert "| torch cpu | nan | inf |" in report
    # the other readers of the same log in this process: a subprocess each would only add
    # start-up time (the log is small; `report` above ran bounded, as a user would)
    code, err = in_process("parse", log, "--csv", tmp_path / "odd.csv")
    assert code == 0 and "unknown lines kept out" in err, err
    unknown = int(err.split(" unknown lines")[0].rsplit(", ", 1)[1])
    assert unknown >= len(UNKNOWN)  # each impossible line counted, none dropped silently
    other = tmp_path / "other.log"
    other.write_text(odd_log("1.000µs", "2.000µs", "1e-06 2e-06 3e-06"), encoding="utf-8")
    for a, b in ((log, other), (other, log), (log, log)):
        code, err = in_process("compare", a, b, "--out", tmp_path / "cmp")
        assert code == 0, err
    code, err = in_process("report", log, other, "--out", tmp_path / "both")  # side by side
    assert code == 0, err
    assert log.read_bytes() == before


def test_odd_but_allowed_lines_render_from_a_store(tmp_path: Path, fake: Fake) -> None:
    """The same lines printed by programs of a sweep: report, export and compare of the store."""
    experiments = {f"odd-{i}": {"mode": "mm", "targets": TORCH_CPU,
                                "env": {"FAULT": "lines", "LINES": odd_log(*values)}}
                   for i, values in enumerate(ODD.values())}
    experiments["unknown"] = {"mode": "mm", "targets": TORCH_CPU,
                              "env": {"FAULT": "lines", "LINES": SYNC + "\n" + "\n".join(UNKNOWN)
                                      + "\n\x1b[32m" + SYNC.replace("with", "no") + "\x1b[0m\n"}}
    exp = write_yaml(tmp_path / "odd.yaml", {
        "version": 1, "defaults": {"shape": [8, 8], "reps": 3, "timeout_s": 60},
        "experiments": experiments})
    results = tmp_path / "results"
    code, err = cli("run", exp, "--python", fake.path, "--results", results, "--quiet")
    assert code == 0, err
    runs = {row["experiment"]: row for row in runs_of(results).values()}
    assert {row["status"] for row in runs.values()} == {"ok"}
    assert runs["unknown"]["unknown_lines"] == len(UNKNOWN)  # the coloured line was read
    store = (results / "results.sqlite").read_bytes()
    report = _renders(results, tmp_path / "report")
    assert "**impossible time**" in report and "**median below min**" in report
    code, err = cli("export", results, "--csv", tmp_path / "all.csv", **BOUNDED)
    assert code == 0, err
    assert "no_sync" in (tmp_path / "all.csv").read_text(encoding="utf-8")
    code, err = cli("compare", results, results, "--out", tmp_path / "cmp", **BOUNDED)
    assert code == 0, err
    assert (results / "results.sqlite").read_bytes() == store


# ---- arrays are read bounded (class 3) -------------------------------------------------------

def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(2**20):
            digest.update(chunk)
    return digest.hexdigest()


def test_stored_arrays_of_the_wrong_size_are_refused_with_a_warning(tmp_path: Path,
                                                                    fake: Fake) -> None:
    """A store whose accuracy run kept a 600 MB c.npy (from before the runner bounded what it
    keeps, or edited), one whose header claims 100000x100000, one that is no .npy: export and
    report read each header first, leave those runs out with a warning, and go on."""
    exp = write_yaml(tmp_path / "acc.yaml", {"version": 1, "experiments": {
        name: {"mode": "accuracy", "shapes": [[8, 8]], "env": {"FAULT": "arrays", "N": name},
               "targets": TORCH_CPU} for name in ("good", "huge", "claims", "junk")}})
    results = tmp_path / "results"
    code, err = cli("run", exp, "--python", fake.path, "--results", results, "--quiet")
    assert code == 0, err
    runs = {row["experiment"]: run_id for run_id, row in runs_of(results).items()}
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False,
                                                  "shape": (100_000, 100_000)})
    a = np.sin(np.arange(64, dtype=np.float32)).reshape(8, 8)
    with contextlib.closing(sqlite3.connect(results / "results.sqlite")) as db, db:
        for name, data in (("a.npy", _npy(a)), ("b.npy", _npy(a.T.copy())),
                           ("c.npy", _npy(a @ a.T))):
            db.execute("UPDATE artifacts SET data=? WHERE run_id IN (?, ?, ?) AND name=?",
                       (data, runs["good"], runs["huge"], runs["claims"], name))
        db.execute("UPDATE artifacts SET data=CAST(? || zeroblob(600000000) AS BLOB) WHERE "
                   "run_id=? AND name='c.npy'", (_npy(a)[:128], runs["huge"]))
        db.execute("UPDATE artifacts SET data=? WHERE run_id=? AND name='c.npy'",
                   (header.getvalue() + b"\0" * 256, runs["claims"]))
    before = _digest(results / "results.sqlite")
    code, err = cli("export", results, "--csv", tmp_path / "acc.csv", **BOUNDED)
    assert code == 0, err
    assert "3 damaged array rows skipped" in err, err
    assert "c.npy: a 100000x100000 array, not the 8x8 of this 8x8 run" in err
    assert "c.npy: 600000128 bytes stored, its header says 384" in err
    assert "a.npy: .npy format 32.115, not an array numpy saves" in err  # the stand-in
    csv = (tmp_path / "acc.csv").read_text(encoding="utf-8")
    assert "max_err_f64_ref" in csv  # the good run's accuracy rows are there
    report = _renders(results, tmp_path / "report")
    assert "3 damaged array rows skipped" in report and "| torch cpu |" in report
    assert _digest(results / "results.sqlite") == before
