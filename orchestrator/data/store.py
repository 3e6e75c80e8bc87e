"""The results store: one SQLite file that survives a crash at any point.

Why SQLite: every run is written in one transaction the moment it finishes, so a crash, a
Ctrl-C or a full disk leaves every earlier run intact and the file still opens; readers
(export, report) work while a sweep writes; it is in the standard library; raw output and the
accuracy arrays fit as BLOBs, so one file holds everything. An exclusive lock file keeps a second
orchestrator off a store in use (two sweeps at once would spoil each other's timings anyway).

`Store` is what a sweep and the readers use: its sweeps, starts and stops, builds, runs with
their figures, samples and arrays. How it is opened (migrations: an older format in place for
writing, a migrated temporary copy for reading; a newer one refused) is `store_file`'s, what
may lie in its folder `store_guard`'s; the tables and their migrations are `schema`'s.
"""
from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from orchestrator.data import schema
from orchestrator.data.store_file import DB_NAME, FORMAT_VERSION, READ_COPY_CAP, StoreFile
from orchestrator.records import BuildResult, ParseResult, RunRecord

__all__ = ["DB_NAME", "FORMAT_VERSION", "READ_COPY_CAP", "STATUS_WORDS", "Store", "SweepState"]

_RUN_COLUMNS = ("sweep_id", "run_id", "experiment", "role", "status", "reason", "expect_failure",
                "definition_json", "started_at", "ended_at", "wall_s", "returncode",
                "load_before_json", "load_after_json", "gate_json", "argv_json", "env_json", "cwd",
                "cache_json", "stdout", "stderr", "unknown_lines", "headers_json", "recorded_at",
                "state_json")
_BUILD_COLUMNS = ("sweep_id", "name", "key", "status", "binary", "seconds", "fresh",
                  "expect_failure", "error", "log", "at")
_SWEEP_COLUMNS = ("sweep_id", "started_at", "ended_at", "status", "config_path", "config_text",
                  "host_json", "argv_json")


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


# what each status a sweep can end in means, for the line that says a sweep is incomplete
STATUS_WORDS = {
    "running": "running (an orchestrator is writing it now)",
    "killed": "killed (its orchestrator died before ending it)",
    "interrupted": "interrupted (Ctrl-C or SIGTERM)",
    "stopped": "stopped by an error",
}


@dataclass(frozen=True)
class SweepState:
    """Where a sweep stands: its status and how many of its planned runs are recorded."""

    sweep_id: str
    status: str  # running | killed | interrupted | stopped | complete
    planned: int | None  # runs its latest start planned; None: not recorded (before format 3)
    finished: int  # of those, runs recorded (ok, failed or skipped); unplanned: every run
    ended_at: float | None

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    def progress(self) -> str:
        if self.planned is None:
            return (f"{self.finished} run{'s' * (self.finished != 1)} finished (how many were "
                    "planned was not recorded)")
        return f"{self.finished} of {self.planned} planned runs finished"

    def incomplete(self) -> str | None:
        """'sweep X is incomplete: killed (...), 3 of 6 planned runs finished', or None."""
        if self.complete:
            return None
        words = STATUS_WORDS.get(self.status) or (
            f"status {self.status!r} (not one this orchestrator writes)" if self.status
            else "no status recorded")  # a damaged or hand-edited sweeps row
        return f"sweep {self.sweep_id} is incomplete: {words}, {self.progress()}"


def _planned(text: str | None) -> set[str] | None:
    try:
        ids = json.loads(text) if text else None
    except ValueError:
        return None  # a damaged plan: counted as not recorded
    return set(map(str, ids)) if isinstance(ids, list) else None


class Store(StoreFile):
    """A results folder: `results.sqlite` plus its lock file."""

    # sweeps -----------------------------------------------------------------------------
    def latest_sweep(self) -> str | None:
        row = self.db.execute(
            "SELECT sweep_id FROM sweeps ORDER BY started_at DESC LIMIT 1").fetchone()
        return row[0] if row else None

    def begin_sweep(self, config_path: Path, host: dict[str, Any], argv: list[str],
                    new: bool, config_text: str | None = None,
                    planned: list[str] | None = None,
                    seed: int | None = None) -> tuple[str, bool]:
        """(sweep id, resumed): continue the latest sweep unless `new`. `config_text` is the
        experiments file as it was read for planning (default: read `config_path` now);
        `planned` the run ids planned from it, `seed` the interleaved order's seed (None: file
        order). Every start, new or resumed, is a row of `sweep_starts`, so a resume with an
        edited file keeps both texts."""
        text = config_path.read_text(encoding="utf-8") if config_text is None else config_text
        latest = None if new else self.latest_sweep()
        with self._transaction() as db:
            if latest is not None:
                db.execute("UPDATE sweeps SET status='running', ended_at=NULL WHERE sweep_id=?",
                           (latest,))
                sweep_id = latest
            else:
                sweep_id = time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
                db.execute(schema.insert("sweeps", _SWEEP_COLUMNS),
                           (sweep_id, time.time(), None, "running", str(config_path), text,
                            _json(host), _json(argv)))
            db.execute(schema.insert("sweep_starts", schema.START_COLUMNS),
                       (sweep_id, time.time(), str(config_path), text, _json(argv),
                        None if planned is None else _json(planned), seed))
        return sweep_id, latest is not None

    def set_host(self, sweep_id: str, host: dict[str, Any]) -> None:
        """The sweep's host facts replaced (a resume adds the facts of programs it runs that
        its first start did not)."""
        with self._transaction() as db:
            db.execute("UPDATE sweeps SET host_json=? WHERE sweep_id=?", (_json(host), sweep_id))

    def record_stops(self, sweep_id: str, rows: list[tuple[Any, ...]]) -> None:
        """Why each figure of a series stopped (schema.STOP_COLUMNS after sweep_id), replacing
        an earlier look's record of the same figure."""
        with self._transaction() as db:
            db.executemany(schema.insert("stops", schema.STOP_COLUMNS, "INSERT OR REPLACE"),
                           [(sweep_id, *row) for row in rows])

    def stops(self, sweep_id: str) -> list[dict[str, Any]]:
        return self.query("SELECT * FROM stops WHERE sweep_id=? ORDER BY rowid", (sweep_id,))

    def drop_planned(self, sweep_id: str, run_ids: set[str]) -> None:
        """Runs a stopping target made unneeded leave the latest start's plan: the sweep is
        complete without them (a resume plans them again and the stopping rule drops them)."""
        starts = self.config_texts(sweep_id)
        if not starts or starts[-1]["planned_json"] is None:
            return
        kept = [r for r in json.loads(starts[-1]["planned_json"]) if r not in run_ids]
        with self._transaction() as db:
            db.execute("UPDATE sweep_starts SET planned_json=? WHERE rowid=(SELECT max(rowid) "
                       "FROM sweep_starts WHERE sweep_id=?)", (_json(kept), sweep_id))

    def end_sweep(self, sweep_id: str, status: str) -> None:
        with self._transaction() as db:
            db.execute("UPDATE sweeps SET status=?, ended_at=? WHERE sweep_id=?",
                       (status, time.time(), sweep_id))

    def close_dead_sweeps(self) -> list[SweepState]:
        """Mark `killed` every sweep still `running`: called holding the lock, so no
        orchestrator is running on this store and each of them died without ending its sweep
        (SIGKILL, a crash, a power cut). Its end is its last recorded run (else its last start)."""
        dead = [row[0] for row in self.db.execute(
            "SELECT sweep_id FROM sweeps WHERE status='running'")]
        with self._transaction() as db:
            for sweep_id in dead:
                db.execute(
                    "UPDATE sweeps SET status='killed', ended_at=coalesce("
                    "(SELECT max(recorded_at) FROM runs WHERE sweep_id=?1), "
                    "(SELECT max(started_at) FROM sweep_starts WHERE sweep_id=?1), started_at) "
                    "WHERE sweep_id=?1", (sweep_id,))
        return [self.sweep_state(sweep_id) for sweep_id in dead]

    def sweeps(self) -> list[dict[str, Any]]:
        cur = self.db.execute("SELECT sweep_id, started_at, ended_at, status, config_path, "
                              "host_json, host FROM sweeps ORDER BY started_at")
        return [dict(zip([c[0] for c in cur.description], row, strict=True)) for row in cur]

    def config_texts(self, sweep_id: str) -> list[dict[str, Any]]:
        """Each start of the sweep, oldest first: when, the experiments text, the plan, the
        order's seed."""
        return self.query("SELECT started_at, config_path, config_text, planned_json, seed "
                          "FROM sweep_starts WHERE sweep_id=? ORDER BY started_at, rowid",
                          (sweep_id,))

    def sweep_state(self, sweep_id: str) -> SweepState:
        """Where a sweep stands. A sweep marked `running` whose folder no orchestrator holds
        is told as `killed`: its orchestrator died (reading changes nothing; the next `run`
        marks it)."""
        row = self.db.execute("SELECT status, ended_at FROM sweeps WHERE sweep_id=?",
                              (sweep_id,)).fetchone()
        status, ended_at = row if row else ("unknown", None)
        if status == "running" and not self._in_use():
            status = "killed"
        starts = self.config_texts(sweep_id)
        recorded = {r[0] for r in self.db.execute("SELECT run_id FROM runs WHERE sweep_id=? "
                                                  "AND role != 'priming'", (sweep_id,))}
        planned = _planned(starts[-1]["planned_json"]) if starts else None
        finished = len(recorded & planned) if planned is not None else len(recorded)
        status = "" if status is None else str(status)  # NULL: "no status recorded"
        return SweepState(sweep_id, status, None if planned is None else len(planned),
                          finished, ended_at)


    def finished_runs(self, sweep_id: str) -> dict[str, str]:
        """run id -> status of every run that ran to an end (ok or failed)."""
        rows = self.db.execute("SELECT run_id, status FROM runs WHERE sweep_id=? AND "
                               "status IN ('ok','failed')", (sweep_id,))
        return dict(rows.fetchall())

    # records ----------------------------------------------------------------------------
    def record_build(self, sweep_id: str, result: BuildResult) -> None:
        with self._transaction() as db:
            db.execute(schema.insert("builds", _BUILD_COLUMNS, "INSERT OR REPLACE"),
                       (sweep_id, result.name, result.key, result.status,
                        str(result.binary) if result.binary else None, result.seconds,
                        int(result.fresh), int(result.expect_failure), result.error,
                        result.log, time.time()))

    def record_run(self, sweep_id: str, rec: RunRecord, parsed: ParseResult | None) -> None:
        """Write one run, its parsed figures, samples and arrays, atomically."""
        run_id = rec.run_id
        with self._transaction() as db:
            for table in ("runs", "figures", "samples", "artifacts"):
                db.execute(f"DELETE FROM {table} WHERE sweep_id=? AND run_id=?",
                           (sweep_id, run_id))
            db.execute(
                schema.insert("runs", _RUN_COLUMNS),
                (sweep_id, run_id, rec.run.experiment, rec.role, rec.status, rec.reason,
                 int(rec.expect_failure), _json(rec.run.definition()), rec.started_at,
                 rec.ended_at,
                 rec.wall_s, rec.returncode, _json(rec.load_before), _json(rec.load_after),
                 _json(rec.gate), _json(rec.argv), _json(rec.env), rec.cwd, _json(rec.cache),
                 rec.stdout, rec.stderr, len(parsed.unknown) if parsed else 0,
                 _json([asdict(h) for h in parsed.headers] if parsed else []), time.time(),
                 _json(rec.state)))
            if parsed is not None:
                self._write_parsed(db, sweep_id, run_id, parsed)
            db.executemany(schema.insert("artifacts", ("sweep_id", "run_id", "name", "data")),
                           [(sweep_id, run_id, n, d) for n, d in rec.artifacts.items()])

    def replace_parsed(self, sweep_id: str, run_id: str, parsed: ParseResult) -> None:
        """Swap a run's figures for a newer parser's reading of the same raw output."""
        with self._transaction() as db:
            for table in ("figures", "samples"):
                db.execute(f"DELETE FROM {table} WHERE sweep_id=? AND run_id=?",
                           (sweep_id, run_id))
            self._write_parsed(db, sweep_id, run_id, parsed)
            db.execute("UPDATE runs SET unknown_lines=? WHERE sweep_id=? AND run_id=?",
                       (len(parsed.unknown), sweep_id, run_id))

    @staticmethod
    def _write_parsed(db: sqlite3.Connection, sweep_id: str, run_id: str,
                      parsed: ParseResult) -> None:
        db.executemany(
            schema.insert("figures", ("sweep_id", "run_id", *schema.FIGURE_FIELDS)),
            [(sweep_id, run_id, *(getattr(f, k) for k in schema.FIGURE_FIELDS))
             for f in parsed.figures])
        db.executemany(
            schema.insert("samples", ("sweep_id", "run_id", *schema.SAMPLE_FIELDS)),
            [(sweep_id, run_id, s.label, s.shape, s.op, s.method, i, v, s.summary_line)
             for s in parsed.samples for i, v in enumerate(s.values)])

    def replace_sweep(self, sweep_id: str, rows: dict[str, list[dict[str, Any]]]) -> None:
        """Swap every row of one sweep for `rows` (table -> rows), atomically."""
        self.replace_sweeps([(sweep_id, lambda: rows)])

    def replace_sweeps(self, sweeps: list[tuple[str, Callable[[], dict[str, list[dict[
            str, Any]]]]]]) -> None:
        """Swap every row of each sweep for the rows its reader gives (table -> rows), all in
        one transaction: `merge`'s write, whole or not at all; one sweep's rows held at a time.
        Columns this store lacks are not written (a source can only be older or as new)."""
        with self._transaction() as db:
            for sweep_id, read in sweeps:
                for table, table_rows in read().items():
                    have = schema.column_names(db, table)
                    db.execute(f"DELETE FROM {table} WHERE sweep_id=?", (sweep_id,))
                    for row in table_rows:
                        cols = tuple(c for c in row if c in have)
                        db.execute(schema.insert(table, cols), tuple(row[c] for c in cols))

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        cur = self.db.execute(sql, params)
        names = [c[0] for c in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur]

    def cursor(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """The rows as tuples, one at a time: a reader of many rows (a sweep's samples) holds
        only what it keeps of them, not a dict per row."""
        return self.db.execute(sql, params)
