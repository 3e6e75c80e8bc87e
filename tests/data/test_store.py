"""The results store: runs written whole, sweeps resumed, one writer at a time, clear errors."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.data.parse import parse_text
from orchestrator.data.store import Store, SweepState
from orchestrator.errors import InputError, StoreBusyError, StoreError
from orchestrator.records import RunDef, RunRecord

from ..conftest import PROJECT

OUT = ("flex: device init 1.000ms\n"
       "flex 8x8 matmul with sync, 3 runs: min 1.000µs median 2.000µs\n"
       "# samples flex 8x8 matmul with sync: 1e-06 2e-06 3e-06\n").encode()


def _record(exp: str = "t", status: str = "ok") -> RunRecord:
    run = RunDef(experiment=exp, program="burn", device="flex", mode="mm", shape=(8, 8), reps=3,
                 build="b", crate="exec-cpu")
    return RunRecord(run=run, status=status, stdout=OUT, stderr=b"err", started_at=1.0,
                     artifacts={"c.npy": b"\x93NUMPY"})


def test_write_read_and_resume(tmp_path: Path) -> None:
    store = Store(tmp_path / "results")
    with store.writing():
        sweep, resumed = store.begin_sweep(PROJECT / "experiments.yaml", {"os": "x"}, [], False)
        assert not resumed
        rec = _record()
        store.record_run(sweep, rec, parse_text(OUT.decode()))
        store.record_run(sweep, rec, parse_text(OUT.decode()))  # rewritten, not doubled
        store.end_sweep(sweep, "interrupted")
    with store.reading():
        assert store.finished_runs(sweep) == {rec.run_id: "ok"}
        figures = store.query("SELECT method, stat, value FROM figures")
        assert [(f["method"], f["stat"]) for f in figures] == [
            ("device_init", "value"), ("with_sync", "min"), ("with_sync", "median")]
        samples = store.query("SELECT value FROM samples ORDER BY idx")
        assert [s["value"] for s in samples] == [1e-06, 2e-06, 3e-06]
        raw = store.query("SELECT stdout, stderr FROM runs")[0]
        assert raw["stdout"] == OUT and raw["stderr"] == b"err"
        assert store.query("SELECT data FROM artifacts")[0]["data"] == b"\x93NUMPY"
    with store.writing():
        again, resumed = store.begin_sweep(PROJECT / "experiments.yaml", {}, [], False)
        assert (again, resumed) == (sweep, True)
        fresh, resumed = store.begin_sweep(PROJECT / "experiments.yaml", {}, [], True)
        assert fresh != sweep and not resumed


def test_second_writer_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from orchestrator.data.store import Store\n"
         f"s = Store(Path({str(folder)!r}))\n"
         "with s.writing():\n    print('holding', flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE, text=True, cwd=PROJECT)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        with pytest.raises(StoreBusyError, match=f"in use by another orchestrator \\(pid "
                                                   f"{holder.pid}\\)"), Store(folder).writing():
            pass
    finally:
        holder.kill()
        holder.wait()
    with Store(folder).writing():  # the lock dies with its holder
        pass


def test_a_store_linked_from_another_folder_shares_its_lock(tmp_path: Path) -> None:
    """`b/results.sqlite` a symlink to `a/results.sqlite`: two orchestrators, one per folder,
    would both write the one store (each locking its own folder's `.lock`). The lock is the
    real file's, so the second is refused, and a reader through the link sees the live sweep."""
    real, linked = tmp_path / "a", tmp_path / "b"
    with Store(real).writing():
        pass
    linked.mkdir()
    (linked / "results.sqlite").symlink_to(real / "results.sqlite")
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from orchestrator.data.store import Store\n"
         f"s = Store(Path({str(real)!r}))\n"
         "with s.writing():\n"
         f"    s.begin_sweep(Path({str(PROJECT / 'experiments.yaml')!r}), {{}}, [], False)\n"
         "    print('holding', flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE, text=True, cwd=PROJECT)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        with pytest.raises(StoreBusyError, match=f"\\(pid {holder.pid}\\)"), \
                Store(linked).writing():
            pass
        assert not (linked / ".lock").exists()
        with Store(linked).reading() as store:
            sweep = store.latest_sweep()
            assert sweep is not None and store.sweep_state(sweep).status == "running"
    finally:
        holder.kill()
        holder.wait()
    with Store(linked).writing():  # the holder is gone: the link's writer takes the real lock
        assert (real / ".lock").read_text() == f"pid {os.getpid()}"


def test_unusable_results_folder_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "results"
    blocker.write_text("a file where the results folder should be")
    with pytest.raises(StoreError, match=f"cannot use results folder {blocker}"), \
            Store(blocker).writing():
        pass
    assert blocker.read_text().startswith("a file")


def test_read_only_database_keeps_earlier_runs(tmp_path: Path) -> None:
    store = Store(tmp_path / "results")
    with store.writing():
        sweep, _ = store.begin_sweep(PROJECT / "experiments.yaml", {}, [], False)
        store.record_run(sweep, _record("first"), None)
    with store.writing():
        # stand-in for a full disk: the next write fails inside its transaction
        store.db.execute("PRAGMA query_only=1")
        with pytest.raises(StoreError, match="earlier results are intact"):
            store.record_run(sweep, _record("second"), None)
    with store.reading():
        assert [r["experiment"] for r in store.query("SELECT experiment FROM runs")] == ["first"]


def test_ctrl_c_during_a_write_waits_for_the_commit(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path / "results")
    write_parsed = Store._write_parsed

    def ctrl_c_mid_write(*args: object) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # between the run's row and its figures
        write_parsed(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "_write_parsed", staticmethod(ctrl_c_mid_write))
    with store.writing():
        sweep, _ = store.begin_sweep(PROJECT / "experiments.yaml", {}, [], False)
        rec = _record()
        with pytest.raises(KeyboardInterrupt):
            store.record_run(sweep, rec, parse_text(OUT.decode()))
        store.end_sweep(sweep, "interrupted")  # no transaction was left open
        assert store.finished_runs(sweep) == {rec.run_id: "ok"}
        assert len(store.query("SELECT * FROM figures")) == 3


def test_missing_store_and_newer_format(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no results store"), Store(tmp_path).reading():
        pass
    store = Store(tmp_path / "r")
    with store.writing():
        pass
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE meta SET value='99' WHERE key='format_version'")
    with pytest.raises(StoreError, match="format 99"), store.reading():
        pass


def test_every_start_keeps_its_text_and_plan(tmp_path: Path) -> None:
    store = Store(tmp_path / "results")
    rec = _record()
    with store.writing():
        sweep, _ = store.begin_sweep(PROJECT / "experiments.yaml", {}, [], False,
                                     config_text="first", planned=[rec.run_id, "other"])
        store.record_run(sweep, rec, None)
        store.end_sweep(sweep, "interrupted")
        again, resumed = store.begin_sweep(PROJECT / "experiments.yaml", {}, [], False,
                                           config_text="second", planned=[rec.run_id])
        assert (again, resumed) == (sweep, True)
        starts = store.config_texts(sweep)
    assert [s["config_text"] for s in starts] == ["first", "second"]
    with store.reading():  # the latest start's plan counts; the sweep is running no more
        state = store.sweep_state(sweep)
        assert store.query("SELECT config_text FROM sweeps")[0]["config_text"] == "first"
    assert (state.status, state.planned, state.finished) == ("killed", 1, 1)
    assert state.incomplete() == (f"sweep {sweep} is incomplete: killed (its orchestrator died "
                                  "before ending it), 1 of 1 planned runs finished")


def test_a_sweep_left_running_is_marked_killed_at_its_last_run(tmp_path: Path) -> None:
    store = Store(tmp_path / "results")
    with store.writing():
        sweep, _ = store.begin_sweep(PROJECT / "experiments.yaml", {}, [], False,
                                     planned=["a", "b"])
        store.record_run(sweep, _record(), None)
        (last,) = [r["recorded_at"] for r in store.query("SELECT recorded_at FROM runs")]
        assert store.sweep_state(sweep).status == "running"  # this process holds the lock
    with store.writing():  # as the next `run`: whoever left it running is gone
        (dead,) = store.close_dead_sweeps()
        assert store.close_dead_sweeps() == []
        row = store.query("SELECT status, ended_at FROM sweeps")[0]
    assert (dead.sweep_id, dead.status, dead.progress()) == (sweep, "killed",
                                                            "0 of 2 planned runs finished")
    assert row == {"status": "killed", "ended_at": last}


def test_complete_and_unplanned_sweeps(tmp_path: Path) -> None:
    store = Store(tmp_path / "results")
    with store.writing():
        sweep, _ = store.begin_sweep(PROJECT / "experiments.yaml", {}, [], False)
        store.record_run(sweep, _record(), None)
        store.end_sweep(sweep, "stopped")
        stopped = store.sweep_state(sweep)
        store.end_sweep(sweep, "complete")
        complete = store.sweep_state(sweep)
    assert stopped.incomplete() == (f"sweep {sweep} is incomplete: stopped by an error, 1 run "
                                    "finished (how many were planned was not recorded)")
    assert complete.complete and complete.incomplete() is None


@pytest.mark.parametrize(("status", "words"), [
    ("killed", "killed (its orchestrator died before ending it)"),
    (None, "no status recorded"),
    ("great", "status 'great' (not one this orchestrator writes)"),
])
def test_an_incomplete_sweep_says_its_status_in_words(status: str | None, words: str) -> None:
    state = SweepState("S", status, 6, 1, None)  # type: ignore[arg-type] - a damaged row's NULL
    assert state.incomplete() == f"sweep S is incomplete: {words}, 1 of 6 planned runs finished"


@pytest.mark.parametrize("number", ["0", "-1", "1"])
def test_a_wrong_format_number_is_named_not_blamed_on_the_temporary_folder(
        tmp_path: Path, number: str) -> None:
    """A current store whose format says 0, -1 or 1 failed inside the
    migration and was reported as the temporary folder's fault ('set TMPDIR')."""
    store = Store(tmp_path / "r")
    with store.writing():
        pass
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE meta SET value=? WHERE key='format_version'", (number,))
    want = "which no orchestrator ever wrote" if number != "1" else \
        "says format 1, but its tables are not format 1's"
    for opening in (store.reading, store.writing):
        with pytest.raises(InputError, match=want) as caught, opening():
            pass
        assert "TMPDIR" not in str(caught.value) and "temporary" not in str(caught.value)
