"""Hostile inputs, provoked for real through the CLI: a store given as a
log, a file given as --results, a NULL sweep status, a label behind invalid UTF-8 bytes, an
absurd time. Each a clear line (or a warning), never a silent success or a traceback."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest

from orchestrator.cli import main

from .conftest import write
from .report.fake_stores import store

EXPERIMENTS = ("version: 1\ndefaults: {shape: [8, 8], reps: 2}\nexperiments:\n  x:\n"
               "    mode: mm\n    targets: [{program: torch, device: cpu}]\n")


@pytest.mark.parametrize("command", ["report", "compare", "parse"])
def test_a_store_given_as_a_log_is_refused_naming_its_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    folder = store(tmp_path / "r", [{"with sync": np.full(20, 1e-3)}])
    db = str(folder / "results.sqlite")
    argv = {"report": ["report", db, "--out", str(tmp_path / "out")],
            "compare": ["compare", db, str(folder), "--out", str(tmp_path / "out")],
            "parse": ["parse", db, "--csv", str(tmp_path / "x.csv")]}[command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "is an SQLite database (a results store?), not a captured log" in err
    assert f"({folder})" in err
    assert not (tmp_path / "out").exists() and not (tmp_path / "x.csv").exists()


def test_results_that_is_a_file_is_a_clear_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = write(tmp_path / "f", "mine\n")
    exp = write(tmp_path / "e.yaml", EXPERIMENTS)
    assert main(["run", str(exp), "--results", str(target), "--quiet",
                 "--python", sys.executable]) == 1  # as before: a results error
    err = capsys.readouterr().err
    assert "it is a file, not a folder" in err and "File exists" not in err
    assert target.read_text() == "mine\n"


def test_a_null_sweep_status_reads_as_not_recorded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = store(tmp_path / "r", [{"with sync": np.full(20, 1e-3)}])
    with sqlite3.connect(folder / "results.sqlite") as db:
        db.execute("UPDATE sweeps SET status = NULL")
    assert main(["report", str(folder), "--out", str(tmp_path / "out")]) == 0
    text = capsys.readouterr().out + (tmp_path / "out" / "report.md").read_text()
    assert "no status recorded" in text and "'None'" not in text


def test_a_label_behind_invalid_utf8_is_no_label(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "u.log"
    log.write_bytes(b"torch 2.15.0, threads 1\n\xff\xfecpu 256x256 matmul torch.mm, 20 runs: "
                    b"min 1.000ms median 1.000ms\n")
    assert main(["parse", str(log), "--csv", str(tmp_path / "u.csv")]) == 0
    assert "0 figures, 1 unknown lines kept out" in capsys.readouterr().err
    assert "\ufffd" not in (tmp_path / "u.csv").read_text(encoding="utf-8")


def test_an_absurd_time_is_flagged(tmp_path: Path) -> None:
    log = write(tmp_path / "big.log", "torch 2.15.0, threads 1\n"
                "cpu 256x256 matmul first call: 99999999999999999999 s\n")
    assert main(["report", str(log), "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "report.md").read_text()
    assert "**impossible time**" in report and "1e+20 s, longer than a day" in report


def _failed_only(folder: Path) -> Path:
    """A store whose only run printed its figures and then failed (exit status 1)."""
    from orchestrator.data.store import Store
    from orchestrator.records import RunDef, RunRecord, Status
    from orchestrator.run.sweep import parse_record

    from .report.fake_stores import lines
    config = write(folder.parent / f"{folder.name}.yaml", "version: 1\n")
    s = Store(folder)
    with s.writing():
        sweep, _ = s.begin_sweep(config, {}, [], new=True)
        run = RunDef(experiment="cpu", program="torch", device="cpu", mode="mm",
                     shape=(256, 256), reps=20, threads=1, process=1, processes=1)
        rec = RunRecord(run=run, stdout=lines({"with sync": np.full(20, 2e-3)}).encode(),
                        returncode=1)
        parsed = parse_record(rec)
        rec.status, rec.reason = Status.FAILED, "exited with status 1"
        s.record_run(sweep, rec, parsed)
        s.end_sweep(sweep, "complete")
    return folder


@pytest.mark.parametrize("damage", ["failed", "UPDATE figures SET value = 'abc'",
                                    "UPDATE figures SET value = NULL"])
def test_compare_with_a_side_that_cannot_give_figures_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str) -> None:
    a = store(tmp_path / "a", [{"with sync": np.full(20, 1e-3)}])
    if damage == "failed":
        b = _failed_only(tmp_path / "b")
    else:
        b = store(tmp_path / "b", [{"with sync": np.full(20, 2e-3)}])
        with sqlite3.connect(b / "results.sqlite") as db:
            db.execute(damage)
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"error: {a} and {b} have no figure in common (nothing measured the " \
                      "same thing on both sides)"
