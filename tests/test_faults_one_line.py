"""Tracebacks where one line is due: compare with a side whose only run
failed, report of more sides than it has letters, a store whose meta names a format but holds
none of its tables. Each through the CLI (in this process: the reading commands), each one
line, nothing written."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.data.store import Store
from orchestrator.records import RunDef, RunRecord

from .conftest import PROJECT
from .test_faults import cli, in_process

LOG = PROJECT / "tests" / "data" / "chapter_listings.log"


def _failed_only(folder: Path) -> Path:
    run = RunDef(experiment="t", program="burn", device="flex", mode="mm", shape=(8, 8),
                 reps=3, build="b", crate="exec-cpu")
    store = Store(folder)
    with store.writing():
        sweep, _ = store.begin_sweep(PROJECT / "experiments.yaml", {"os": "x"}, [], False)
        store.record_run(sweep, RunRecord(run=run, status="failed", stdout=b"", stderr=b"boom",
                                          started_at=1.0), None)
        store.end_sweep(sweep, "complete")
    return folder


def test_compare_with_a_side_whose_only_run_failed_is_one_line(tmp_path: Path) -> None:
    failed = _failed_only(tmp_path / "failed")
    for a, b in ((failed, LOG), (LOG, failed)):
        code, err = in_process("compare", a, b, "--out", tmp_path / "cmp")
        assert (code, err) == (2, f"error: {a} and {b} have no figure in common (nothing "
                                  "measured the same thing on both sides)\n")
    assert not (tmp_path / "cmp").exists()


def test_report_of_more_sides_than_letters_is_one_line(tmp_path: Path) -> None:
    code, err = in_process("report", *[LOG] * 27, "--out", tmp_path / "report")
    assert (code, err) == (2, "error: report: at most 26 sides side by side (one letter each), "
                              "27 given; report them in groups\n")
    assert not (tmp_path / "report").exists()


def test_a_store_that_names_a_format_but_has_no_tables_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "cut"
    folder.mkdir()
    with sqlite3.connect(folder / "results.sqlite") as db:
        db.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
        db.execute("INSERT INTO meta VALUES('format_version', '3')")
    for argv in (["report", folder, "--out", tmp_path / "report"],
                 ["export", folder, "--csv", tmp_path / "out.csv"],
                 ["compare", folder, LOG, "--out", tmp_path / "cmp"]):
        code, err = in_process(*argv)
        assert (code, err) == (2, f"error: {folder / 'results.sqlite'} is damaged: it says "
                                  "format 3 but has no table sweeps, table runs, table figures, "
                                  "table samples, table builds, table artifacts, table "
                                  "sweep_starts; not a store "
                                  "this orchestrator can read\n"), argv
    with sqlite3.connect(folder / "results.sqlite") as db:
        db.execute("UPDATE meta SET value='three'")
    code, err = in_process("export", folder, "--csv", tmp_path / "out.csv")
    assert (code, err.count("\n"), "format_version is not a number" in err) == (2, 1, True), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut"]


def test_report_and_compare_into_a_full_disk_are_one_line(tmp_path: Path) -> None:
    """A 200 KiB tmpfs in a private mount namespace (nothing else sees it): savefig's OSError
    was a traceback; now one line, and no staging folder is left in --out."""
    mount = tmp_path / "full"
    mount.mkdir()
    script = ('mount -t tmpfs -o size=200k tmpfs "$0" && mkdir "$0/c" && '
              'mount -t tmpfs -o size=8k tmpfs "$0/c" && "$1" -m orchestrator report "$2" '
              '--out "$0/r"; echo "rc=$?"; "$1" -m orchestrator compare "$2" "$2" --out "$0/c"; '
              'echo "rc=$?"; ls -A "$0/r" "$0/c"')
    done = subprocess.run(["unshare", "-m", "sh", "-c", script, str(mount), sys.executable,
                           str(LOG)], cwd=PROJECT, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines() == [
        f"error: --out: cannot write into {mount}/r: No space left on device",
        f"error: --out: cannot write into {mount}/c: No space left on device"], done.stderr
    assert done.stdout.split() == ["rc=2", "rc=2", f"{mount}/c:", f"{mount}/r:"], done.stdout


def _cut(folder: Path, drop: str) -> Path:
    """A whole format-6 store (one sweep, one run), then one of its parts dropped."""
    _failed_only(folder)
    with contextlib.closing(sqlite3.connect(folder / "results.sqlite")) as db:
        db.execute(drop)
        db.commit()
    return folder


@pytest.mark.parametrize(("drop", "named"), [
    ("DROP TABLE samples", "table samples"), ("DROP TABLE stops", "table stops"),
    ("DROP TABLE sweep_starts", "table sweep_starts"),
    ("ALTER TABLE runs DROP COLUMN state_json", "column runs.state_json")])
def test_a_format_6_store_lacking_a_table_is_one_line_from_every_command(
        tmp_path: Path, drop: str, named: str) -> None:
    """It said format 6 but lacked `samples`, `stops` or `sweep_starts`: 'no such table' from
    export, report, compare, run and merge. Now one line naming the store and what it lacks,
    and the store is left as it was."""
    folder = _cut(tmp_path / "cut", drop)
    store = folder / "results.sqlite"
    before = store.read_bytes()
    said = (f"error: {store} is damaged: it says format 6 but has no {named}; not a store this "
            "orchestrator can read\n")
    for argv in (["report", folder, "--out", tmp_path / "report"],
                 ["export", folder, "--csv", tmp_path / "out.csv"],
                 ["compare", folder, LOG, "--out", tmp_path / "cmp"],
                 ["merge", tmp_path / "merged", folder]):
        assert in_process(*argv) == (2, said), argv
    code, err = cli("run", PROJECT / "experiments.yaml", "--only", "methods", "--results", folder)
    assert (code, err.splitlines()[-1:]) == (2, [said.strip()]), err
    assert store.read_bytes() == before
    # nothing written by the readers (merge's output store is data/merge.py's: all or nothing)
    assert not {"report", "out.csv", "cmp"} & {p.name for p in tmp_path.iterdir()}


def test_export_of_a_file_says_it_is_not_a_results_folder(tmp_path: Path) -> None:
    """`export notadir` said `cannot open notadir/results.sqlite-wal: Not a directory`."""
    plain = tmp_path / "notadir"
    plain.write_text("a file")
    assert in_process("export", plain, "--csv", tmp_path / "o.csv") == (
        2, f"error: {plain} is a file, not a results folder: name the folder a sweep wrote "
           "(it holds results.sqlite)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notadir"]
