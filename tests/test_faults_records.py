"""Fault suite, records: what the store, `export` and `report` say is the truth about a sweep.

Provoked for real through the command line:
a sweep interrupted or SIGKILLed must read as incomplete (with how many planned runs finished)
in `report`, `export` and a comparison; a sweep left `running` by a dead orchestrator is marked
`killed` by the next `run`; a resume with an edited experiments file keeps both texts and says
what changed; an unknown `--sweep` and a `reparse` of a folder without a store are one line and
exit 2; a damaged row is skipped with a counted warning while everything else renders.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from .test_faults import (
    TORCH_CPU,
    Fake,
    cli,
    fake,  # noqa: F401 - the module's stand-in program, as a fixture here
    held_run,
    in_process,
    orchestrator,
    runs_of,
    statuses,
    write_yaml,
)

# six runs, one of them failing: the second is held in flight where a test stops the sweep
SIX = {
    "version": 1,
    "defaults": {"shape": [8, 8], "reps": 3, "timeout_s": 60},
    "experiments": {
        "first": {"mode": "mm", "threads": [1, 2], "targets": TORCH_CPU},
        "broken": {"mode": "mm", "env": {"FAULT": "exit3"}, "targets": TORCH_CPU},
        "second": {"mode": "mm", "threads": [1, 2, 3], "targets": TORCH_CPU},
    },
}


def one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sweeps_of(results: Path) -> dict[str, dict[str, Any]]:
    with contextlib.closing(sqlite3.connect(results / "results.sqlite")) as db:
        db.row_factory = sqlite3.Row
        return {r["sweep_id"]: dict(r) for r in db.execute("SELECT * FROM sweeps")}


def starts_of(results: Path, sweep_id: str) -> list[dict[str, Any]]:
    with contextlib.closing(sqlite3.connect(results / "results.sqlite")) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute(
            "SELECT * FROM sweep_starts WHERE sweep_id=? ORDER BY started_at", (sweep_id,))]


def stopped_sweep(tmp_path: Path, fake: Fake, sig: int,  # noqa: F811
                  held: int = 2) -> tuple[Path, Path, str]:
    """(experiments file, results, sweep id) of a sweep stopped by `sig` while its `held`-th
    run was in flight: `held - 1` runs finished of six planned."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    exp = write_yaml(tmp_path / "six.yaml", SIX)
    results = tmp_path / "results"
    before = set(fake.pids())
    fake.hold(len(before) + held)
    proc = orchestrator("run", exp, "--python", fake.path, "--results", results,
                        start_new_session=True)
    try:
        held_run(fake, before)
        code, err = in_process("report", results, "--out", tmp_path / "while-running")
        assert code == 0, err
        (sweep_id,) = sweeps_of(results)
        running = (f"warning: sweep {sweep_id} is incomplete: running (an orchestrator is "
                   f"writing it now), {held - 1} of 6 planned runs finished")
        assert running in err.splitlines(), err
        os.kill(proc.pid, sig)
        proc.communicate(timeout=30)
    finally:
        fake.hold(None)
        fake.kill_leftovers()  # a SIGKILLed orchestrator could not end its program
    assert proc.returncode == (-signal.SIGKILL if sig == signal.SIGKILL else 130)
    assert len(statuses(results)) == held - 1
    return exp, results, sweep_id


# the reading commands (report, export, compare, reparse) run in-process through `cli.main`: a
# subprocess of each would add only its start-up (pandas, matplotlib: about a second); every
# `run` is a process of its own, stopped by a real signal
def says_incomplete(results: Path, tmp_path: Path, line: str, *extra: str) -> None:
    """`report` and `export` of the sweep say `line`: on stderr, first in report.md, in the
    CSV's sidecar; the store's rows are all still there."""
    rows = runs_of(results)
    code, err = in_process("report", results, *extra, "--out", tmp_path / "report")
    assert code == 0 and f"warning: {line}" in err.splitlines(), err
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8").splitlines()
    assert report[:3] == ["# Timing report", "", f"**Warning: {line}.**"]
    code, err = in_process("export", results, *extra, "--csv", tmp_path / "x.csv")
    assert code == 0 and err.splitlines()[0] == f"warning: {line}", err
    meta = json.loads((tmp_path / "x.schema.json").read_text(encoding="utf-8"))
    assert meta["sweep"]["complete"] is False and meta["gaps"] == [line]
    assert runs_of(results) == rows


def test_a_killed_sweep_reads_incomplete_and_the_next_run_new_marks_it_killed(
        tmp_path: Path, fake: Fake) -> None:  # noqa: F811
    exp, results, old = stopped_sweep(tmp_path, fake, signal.SIGKILL)
    assert sweeps_of(results)[old]["status"] == "running"  # nothing could end it
    killed = (f"sweep {old} is incomplete: killed (its orchestrator died before ending it), "
              "1 of 6 planned runs finished")
    says_incomplete(results, tmp_path / "before", killed)
    assert sweeps_of(results)[old]["status"] == "running"  # reading changes nothing
    code, err = cli("run", exp, "--python", fake.path, "--results", results, "--new", "--quiet")
    assert code == 1, err  # the 'broken' run fails
    assert (f"sweep {old} was left running by an orchestrator that died: marked killed "
            "(1 of 6 planned runs finished)") in err.splitlines(), err
    sweeps = sweeps_of(results)
    (new,) = set(sweeps) - {old}
    assert sweeps[old]["status"] == "killed" and sweeps[new]["status"] == "complete"
    with contextlib.closing(sqlite3.connect(results / "results.sqlite")) as db:
        (last_run,), = db.execute("SELECT max(recorded_at) FROM runs WHERE sweep_id=?", (old,))
    assert sweeps[old]["ended_at"] == last_run  # it ended with its last recorded run
    says_incomplete(results, tmp_path / "after", killed, "--sweep", old)
    code, err = in_process("report", results, "--out", tmp_path / "latest")
    assert code == 0 and "warning" not in err, err  # the new sweep is whole


def test_a_sweep_killed_before_any_run_finished_still_reports(tmp_path: Path,
                                                               fake: Fake) -> None:  # noqa: F811
    _exp, results, sweep_id = stopped_sweep(tmp_path, fake, signal.SIGKILL, held=1)
    assert statuses(results) == {}
    says_incomplete(results, tmp_path, f"sweep {sweep_id} is incomplete: killed (its "
                    "orchestrator died before ending it), 0 of 6 planned runs finished")


def test_a_resumed_killed_or_interrupted_sweep_says_what_it_was(tmp_path: Path,
                                                                fake: Fake) -> None:  # noqa: F811
    exp, results, sweep_id = stopped_sweep(tmp_path, fake, signal.SIGKILL)
    code, err = cli("run", exp, "--python", fake.path, "--results", results, "--quiet")
    assert code == 1 and "(resumed)" in err, err
    assert (f"resuming sweep {sweep_id}, killed (its orchestrator died before ending it): "
            "1 of 6 planned runs finished") in err.splitlines(), err
    assert sweeps_of(results)[sweep_id]["status"] == "complete"
    assert len(starts_of(results, sweep_id)) == 2  # each start of the sweep is kept

    exp, results, sweep_id = stopped_sweep(tmp_path / "term", fake, signal.SIGTERM)
    assert sweeps_of(results)[sweep_id]["status"] == "interrupted"
    says_incomplete(results, tmp_path / "term", f"sweep {sweep_id} is incomplete: interrupted "
                    "(Ctrl-C or SIGTERM), 1 of 6 planned runs finished")
    code, err = cli("run", exp, "--python", fake.path, "--results", results, "--quiet")
    assert code == 1, err
    assert (f"resuming sweep {sweep_id}, interrupted: 1 of 6 planned runs finished"
            in err.splitlines()), err


def test_compare_and_side_by_side_say_a_side_is_incomplete(tmp_path: Path,
                                                            fake: Fake) -> None:  # noqa: F811
    _exp, results, sweep_id = stopped_sweep(tmp_path, fake, signal.SIGTERM)
    whole = tmp_path / "whole"
    code, err = cli("run", tmp_path / "six.yaml", "--python", fake.path, "--results", whole,
                    "--quiet")
    assert code == 1, err
    code, err = in_process("report", whole, results, "--out", tmp_path / "sides")
    assert code == 0, err
    text = (tmp_path / "sides" / "report.md").read_text(encoding="utf-8")
    assert (f"- **Warning: B**: sweep {sweep_id} is incomplete: interrupted (Ctrl-C or "
            "SIGTERM), 1 of 6 planned runs finished.") in text
    assert "**Warning: A**" not in text
    code, err = in_process("compare", whole, results, "--out", tmp_path / "cmp")
    assert code == 0, err
    compared = "\n".join(p.read_text(encoding="utf-8") for p in (tmp_path / "cmp").iterdir()
                         if p.suffix in (".md", ".csv"))
    assert "incomplete: interrupted (Ctrl-C or SIGTERM), 1 of 6 planned runs finished" in compared


EDITS = [  # (what the file becomes, the line `run` prints on resume)
    (lambda doc: {**doc, "experiments": {
        "first": {**doc["experiments"]["first"], "threads": [1]},
        "second": doc["experiments"]["second"],
        "third": {"mode": "mm", "targets": TORCH_CPU}}},
     "experiments first edited; third added; broken removed"),
    (lambda doc: {**doc, "defaults": {**doc["defaults"], "reps": 4}}, "defaults edited"),
    (lambda doc: {**doc, "experiments": {**doc["experiments"], "second": {
        **doc["experiments"]["second"], "title": "renamed"}}}, "experiments second edited"),
]


@pytest.mark.parametrize(("edit", "said"), EDITS)
def test_a_resume_with_an_edited_file_keeps_both_texts_and_says_what_changed(
        tmp_path: Path, fake: Fake, edit: Any, said: str) -> None:  # noqa: F811
    exp, results, sweep_id = stopped_sweep(tmp_path, fake, signal.SIGTERM)
    first_text = exp.read_text(encoding="utf-8")
    write_yaml(exp, edit(SIX))
    edited_text = exp.read_text(encoding="utf-8")
    code, err = cli("run", exp, "--python", fake.path, "--results", results, "--quiet")
    assert code in (0, 1) and "(resumed)" in err, err
    lines = [line for line in err.splitlines() if line.startswith("experiments file changed")]
    assert len(lines) == 1, err
    assert lines[0].startswith("experiments file changed since this sweep began (")
    assert lines[0].endswith(f": {said}; both texts are kept"), lines[0]
    assert sweeps_of(results)[sweep_id]["config_text"] == first_text  # as it began
    assert [s["config_text"] for s in starts_of(results, sweep_id)] == [first_text, edited_text]


def test_a_comment_only_edit_says_no_experiment_changed(tmp_path: Path,
                                                        fake: Fake) -> None:  # noqa: F811
    exp, results, _sweep = stopped_sweep(tmp_path, fake, signal.SIGTERM)
    exp.write_text("# a note\n" + exp.read_text(encoding="utf-8"), encoding="utf-8")
    code, err = cli("run", exp, "--python", fake.path, "--results", results, "--quiet")
    assert code == 1, err
    assert ("experiments file changed since this sweep began (1 line differs): no experiment "
            "changed; both texts are kept") in err.splitlines(), err


# a store with one finished sweep, copied for each case ---------------------------------------
@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory, fake: Fake) -> Path:  # noqa: F811
    tmp = tmp_path_factory.mktemp("finished")
    exp = write_yaml(tmp / "three.yaml", {
        "version": 1, "defaults": {"shape": [8, 8], "reps": 3},
        "experiments": {"plain": {"mode": "mm", "threads": [1, 2, 3], "targets": TORCH_CPU}}})
    code, err = cli("run", exp, "--python", fake.path, "--results", tmp / "R", "--quiet")
    assert code == 0, err
    return tmp / "R"


@pytest.fixture
def results(finished: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "R"
    shutil.copytree(finished, copy)
    return copy


@pytest.mark.parametrize("command", ["export", "report"])
def test_an_unknown_sweep_is_one_line_naming_the_known_ones(results: Path, tmp_path: Path,
                                                            command: str) -> None:
    (sweep_id,) = sweeps_of(results)
    before = digest(results / "results.sqlite")
    out = ["--csv", tmp_path / "x.csv"] if command == "export" else ["--out", tmp_path / "rep"]
    code, err = in_process(command, results, "--sweep", "nope", *out)
    assert code == 2
    assert one_line(err) == (f"error: --sweep nope: no such sweep in {results / 'results.sqlite'}"
                             f" (its sweeps: {sweep_id})")
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "rep").exists()
    assert digest(results / "results.sqlite") == before


@pytest.mark.parametrize("where", ["missing", "empty folder", "nested/missing"])
def test_reparse_without_a_store_creates_nothing(tmp_path: Path, where: str) -> None:
    folder = tmp_path / where
    if where == "empty folder":
        folder.mkdir()
    code, err = in_process("reparse", folder)
    assert code == 2
    assert one_line(err) == (f"error: no results store at {folder / 'results.sqlite'} (nothing "
                             "to parse again; name the results folder of a sweep)")
    assert list(tmp_path.iterdir()) == ([folder] if where == "empty folder" else [])
    assert not folder.exists() or list(folder.iterdir()) == []


# damaged rows: (SQL on the copy, the kind of row, what the warning says of it) ------------------
FIRST_RUN = "(SELECT min(rowid) FROM runs)"
FIRST_FIGURE = "(SELECT min(rowid) FROM figures WHERE stat='min')"
DAMAGE = [
    (f"UPDATE runs SET definition_json='{{not json' WHERE rowid={FIRST_RUN}", "run",
     "definition_json is not JSON"),
    (f"UPDATE runs SET definition_json=json_remove(definition_json, '$.mode') "
     f"WHERE rowid={FIRST_RUN}", "run", "definition_json is not a run definition (TypeError"),
    (f"UPDATE runs SET definition_json=json_set(definition_json, '$.shape', json('[\"x\", 8]'))"
     f" WHERE rowid={FIRST_RUN}", "run", "definition_json's shape is ['x', 8]"),
    (f"UPDATE runs SET definition_json=json_set(definition_json, '$.threads', 'many') "
     f"WHERE rowid={FIRST_RUN}", "run", "definition_json's threads is 'many'"),
    (f"UPDATE runs SET role='boss' WHERE rowid={FIRST_RUN}", "run",
     "role 'boss' is not one of measure, priming, profile"),
    (f"UPDATE runs SET status='great' WHERE rowid={FIRST_RUN}", "run",
     "status 'great' is not one of ok, failed, skipped"),
    (f"UPDATE runs SET status=NULL WHERE rowid={FIRST_RUN}", "run", "status is NULL"),
    (f"UPDATE runs SET load_before_json='{{' WHERE rowid={FIRST_RUN}", "run",
     "load_before_json is not JSON"),
    (f"UPDATE runs SET stdout='now text' WHERE rowid={FIRST_RUN}", "run", "stdout is not bytes"),
    (f"UPDATE figures SET value='fast' WHERE rowid={FIRST_FIGURE}", "figure",
     "value is str, not real"),
    (f"UPDATE figures SET runs='many' WHERE rowid={FIRST_FIGURE}", "figure",
     "runs is str, not integer"),
    (f"UPDATE figures SET runs=99999999999999999999 WHERE rowid={FIRST_FIGURE}", "figure",
     "runs is float, not integer"),
    (f"UPDATE figures SET method=NULL WHERE rowid={FIRST_FIGURE}", "figure", "method is NULL"),
    (f"UPDATE figures SET label=x'00ff' WHERE rowid={FIRST_FIGURE}", "figure",
     "label is bytes, not text"),
    ("UPDATE samples SET value='x' WHERE rowid=(SELECT min(rowid) FROM samples)", "sample",
     "value is str, not real"),
    ("UPDATE sweeps SET host_json='nope'", "sweep", "host_json is not a JSON object"),
]


REPARSE_READS = ("definition_json", "role", "status", "stdout")  # the columns reparse reads


def damage(results: Path, sql: str) -> str | None:
    """Apply `sql`; the run id of the first run (the one most cases damage)."""
    with contextlib.closing(sqlite3.connect(results / "results.sqlite")) as db:
        run_id = db.execute(f"SELECT run_id FROM runs WHERE rowid={FIRST_RUN}").fetchone()[0]
        db.execute(sql)
        db.commit()
    return run_id


@pytest.mark.parametrize(("sql", "kind", "problem"), DAMAGE, ids=[d[2][:40] for d in DAMAGE])
def test_a_damaged_row_is_skipped_with_a_counted_warning(results: Path, tmp_path: Path,
                                                         sql: str, kind: str,
                                                         problem: str) -> None:
    # in this process: 16 damages x 3 commands, each a subprocess would add only start-up time
    # (the deleted-run case below goes through `python -m orchestrator` as a user would)
    run_id = damage(results, sql)
    (sweep_id,) = sweeps_of(results)
    before = digest(results / "results.sqlite")
    code, err = in_process("export", results, "--csv", tmp_path / "x.csv")
    assert code == 0, err
    (warning,) = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert warning.startswith(f"warning: 1 damaged {kind} row skipped: sweep {sweep_id}"), err
    assert problem in warning, warning
    if kind == "run":
        assert f"sweep {sweep_id} run {run_id}: {problem}" in warning
    csv = (tmp_path / "x.csv").read_text(encoding="utf-8")
    others = set(runs_of(results)) - ({run_id} if kind == "run" else set())
    assert all(r in csv for r in others) and (kind != "run" or run_id not in csv)
    code, err = in_process("report", results, "--out", tmp_path / "rep")
    assert code == 0 and warning in err.splitlines(), err
    text = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert f"**Warning: {warning.removeprefix('warning: ')}.**" in text
    assert "Runs skipped or failed" in text  # every section still renders
    assert digest(results / "results.sqlite") == before  # reading changed nothing
    code, err = in_process("reparse", results)
    assert code == 0, err
    parsed_again = int(err.splitlines()[-1].split(": ")[1].split()[0])
    if kind == "run" and problem.startswith(REPARSE_READS):
        assert warning in err.splitlines() and parsed_again == 2, err
    else:
        assert parsed_again == 3, err


def test_figures_of_a_deleted_run_are_counted_damaged(results: Path, tmp_path: Path) -> None:
    run_id = damage(results, f"DELETE FROM runs WHERE rowid={FIRST_RUN}")
    code, err = cli("export", results, "--csv", tmp_path / "x.csv", timeout=60, memory_mib=1024)
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert [w.split(": ")[1] for w in warnings] == ["3 damaged figure rows skipped",
                                                    "3 damaged sample rows skipped"], err
    assert f"its run {run_id} is not in the sweep" in warnings[0]
