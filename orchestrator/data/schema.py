"""The results store's SQL schema, its figure columns, and the migrations between versions.

A figure's fields are named once, by `records.Figure`; `FIGURE_COLUMNS` (SQL name, SQL type,
dataset column) is derived from them and gives the figures table, its INSERT and the dataset's
figure columns. A new field is one line in `Figure`, its dataset column in the vocabulary (whose
dtype gives the SQL type), an entry in `_DATASET` here if its name differs, and a new format.

Versions (docs/results.md has them as a table): 1, the first store (docs/results/h200-2026-11-30
is one); 2 adds `samples.summary_line` (the line number of the summary line a sample set belongs
to, which the report used to rebuild by counting) and spells "no cache" in `figures.cache` as
'none' instead of NULL; 3 adds `sweep_starts`, one row per start of a sweep (new or resumed):
when, the experiments text it planned from and the run ids it planned, so a resume with an
edited file keeps both texts and a report can say how many planned runs an incomplete sweep
finished (a migrated sweep's one start is its `sweeps` row, its plan not recorded); 4 adds
`sweeps.host`, the name of the host a sweep ran on as `merge` (data/merge.py) recorded it (NULL:
a sweep this store's own orchestrator ran; older stores' sweeps are all such); 5 adds
`sweep_starts.seed`, the seed of the interleaved order each start planned with (NULL: file
order), filled for older starts from the `defaults.order` their recorded text asked for (the
default then was file order), and `stops`: per figure of a series run to a stopping target
(run/stopping.py), why it stopped, its achieved half-width and processes; 6 is one shape: the
figure columns `profiler` and `kernel` and the run column `state_json` were added to formats 2
to 5 in place (any store opened for writing was ALTERed), so a store of one of those formats
may lack them; format 6 has them all.

One format, one SQL shape (`shape`; tests/data/store_formats.json pins each): a new column or
table is a new VERSION and a step in `MIGRATIONS` that brings the format before it to the new
shape, never an ALTER when a store is opened. A step spells the SQL of its own format (not
`SCHEMA`, which is the newest format's), so the steps still hold after later formats.
`MIGRATIONS` is an ordered list of (from_version, function); `migrate` applies each in turn in
one transaction. Who migrates where is `store`'s business (a store opened for writing migrates
in place; one opened for reading migrates a temporary copy).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, fields

import yaml

from orchestrator import vocabulary
from orchestrator.records import Figure

VERSION = 6


@dataclass(frozen=True)
class Column:
    """One figure field as the store and the dataset name it."""

    name: str  # the Figure field and the SQL column
    sql: str  # SQL type
    dataset: str  # the dataset's column


# Where the dataset's name differs from the field's; the SQL type follows the dataset column's
# declared dtype (orchestrator/vocabulary.py), TEXT for everything but numbers.
_DATASET = {"value": "value_s"}
_SQL = {"Int64": "INTEGER", "float64": "REAL"}


def _column(name: str) -> Column:
    dataset = _DATASET.get(name, name)
    return Column(name, _SQL.get(vocabulary.dtypes().get(dataset, ""), "TEXT"), dataset)


FIGURE_COLUMNS = tuple(_column(f.name) for f in fields(Figure))
FIGURE_FIELDS = tuple(c.name for c in FIGURE_COLUMNS)
SAMPLE_FIELDS = ("label", "shape", "op", "method", "idx", "value", "summary_line")
START_COLUMNS = ("sweep_id", "started_at", "config_path", "config_text", "argv_json",
                 "planned_json", "seed")
_SWEEP_STARTS = """CREATE TABLE IF NOT EXISTS sweep_starts(
  sweep_id TEXT, started_at REAL, config_path TEXT, config_text TEXT, argv_json TEXT,
  planned_json TEXT, seed INTEGER);"""
STOP_COLUMNS = ("sweep_id", "experiment", "series", "label", "method", "reason", "half_width",
                "processes", "target", "at")
_STOPS = """CREATE TABLE IF NOT EXISTS stops(
  sweep_id TEXT, experiment TEXT, series TEXT, label TEXT, method TEXT, reason TEXT,
  half_width REAL, processes INTEGER, target REAL, at REAL,
  PRIMARY KEY(sweep_id, series, label, method));"""

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS sweeps(
  sweep_id TEXT PRIMARY KEY, started_at REAL, ended_at REAL, status TEXT,
  config_path TEXT, config_text TEXT, host_json TEXT, argv_json TEXT, host TEXT);
{_SWEEP_STARTS}
{_STOPS}
CREATE TABLE IF NOT EXISTS builds(
  sweep_id TEXT, name TEXT, key TEXT, status TEXT, binary TEXT, seconds REAL, fresh INTEGER,
  expect_failure INTEGER, error TEXT, log TEXT, at REAL, PRIMARY KEY(sweep_id, name));
CREATE TABLE IF NOT EXISTS runs(
  sweep_id TEXT, run_id TEXT, experiment TEXT, role TEXT, status TEXT, reason TEXT,
  expect_failure INTEGER, definition_json TEXT, started_at REAL, ended_at REAL, wall_s REAL,
  returncode INTEGER, load_before_json TEXT, load_after_json TEXT, gate_json TEXT,
  argv_json TEXT, env_json TEXT, cwd TEXT, cache_json TEXT, stdout BLOB, stderr BLOB,
  unknown_lines INTEGER, headers_json TEXT, recorded_at REAL, state_json TEXT,
  PRIMARY KEY(sweep_id, run_id));
CREATE TABLE IF NOT EXISTS artifacts(
  sweep_id TEXT, run_id TEXT, name TEXT, data BLOB, PRIMARY KEY(sweep_id, run_id, name));
CREATE TABLE IF NOT EXISTS figures(
  sweep_id TEXT, run_id TEXT, {", ".join(f"{c.name} {c.sql}" for c in FIGURE_COLUMNS)});
CREATE INDEX IF NOT EXISTS figures_run ON figures(sweep_id, run_id);
CREATE TABLE IF NOT EXISTS samples(
  sweep_id TEXT, run_id TEXT, label TEXT, shape TEXT, op TEXT, method TEXT, idx INTEGER,
  value REAL, summary_line INTEGER);
CREATE INDEX IF NOT EXISTS samples_run ON samples(sweep_id, run_id);
"""


# the tables every store of a format has, in the order a message names them: those of format 1,
# then each with the format that added it (_v2_to_v3, _v4_to_v5)
TABLES = ("sweeps", "runs", "figures", "samples", "builds", "artifacts", "meta")
TABLES_SINCE = {"sweep_starts": 3, "stops": 5}


def missing_parts(db: sqlite3.Connection, version: int) -> list[str]:
    """What a store that says format `version` lacks of that format's shape: tables (any
    format), then, for the current format, columns (`runs.state_json`); empty when whole. A
    cut copy or a hand-made file is then one line, never 'no such table' from a query."""
    have = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    wanted = [*TABLES, *(t for t, since in TABLES_SINCE.items() if version >= since)]
    missing = [f"table {t}" for t in wanted if t not in have]
    if missing or version != VERSION:
        return missing
    for table, columns in _current_columns().items():
        missing += [f"column {table}.{c}" for c in columns if c not in column_names(db, table)]
    return missing


def _current_columns() -> dict[str, list[str]]:
    """Each table's columns in the current format, from SCHEMA itself."""
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        db.executescript(SCHEMA)
        return {table: [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
                for table in (*TABLES, *TABLES_SINCE)}


def insert(table: str, columns: tuple[str, ...], verb: str = "INSERT") -> str:
    """An INSERT that names its columns: a new column never shifts the others."""
    return f"{verb} INTO {table}({', '.join(columns)}) VALUES({', '.join('?' * len(columns))})"


def shape(db: sqlite3.Connection) -> dict[str, list[str]]:
    """The store's SQL shape, what one format pins: each table's columns in order as 'name
    TYPE' (' pkN' for the N-th primary-key column), each index as 'index NAME' -> its table
    and columns. Not the column defaults: a migration's ALTER gives old rows a value where a
    new store's INSERT names every column, and what a store holds is the same."""
    out: dict[str, list[str]] = {}
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name "
                               "NOT LIKE 'sqlite_%' ORDER BY name").fetchall():
        out[table] = [f"{name} {sql_type}" + (f" pk{pk}" if pk else "")
                      for _cid, name, sql_type, _null, _default, pk
                      in db.execute(f"PRAGMA table_info({table})")]
    for name, table in db.execute("SELECT name, tbl_name FROM sqlite_master WHERE type='index' "
                                  "AND sql IS NOT NULL ORDER BY name").fetchall():
        out[f"index {name}"] = [table, *(row[2] for row in
                                         db.execute(f"PRAGMA index_info({name})"))]
    return out


def column_names(db: sqlite3.Connection, table: str) -> set[str]:
    """The columns `table` has in this store (an older or migrated one may lack some)."""
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def version_of(db: sqlite3.Connection) -> int | None:
    """The store's format version; None for an empty file (no meta table yet)."""
    has_meta = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
                          ).fetchone()
    row = db.execute("SELECT value FROM meta WHERE key='format_version'").fetchone() \
        if has_meta else None
    return int(row[0]) if row else None


def _v1_to_v2(db: sqlite3.Connection) -> None:
    """Link every sample set to its summary line, as the report's counting did: per run, the
    n-th sample set of a (label, shape, method) belongs to the n-th `min` figure of the same
    keys (a set starts where idx restarts at 0)."""
    db.execute("ALTER TABLE samples ADD COLUMN summary_line INTEGER")
    summary: dict[tuple[object, ...], list[int]] = {}
    for row in db.execute("SELECT sweep_id, run_id, label, shape, method, line_no FROM figures "
                          "WHERE stat='min' ORDER BY rowid"):
        summary.setdefault(tuple(row[:5]), []).append(row[5])
    seen: dict[tuple[object, ...], int] = {}
    links: list[tuple[int | None, int]] = []
    line: int | None = None
    for rowid, *keys, idx in db.execute("SELECT rowid, sweep_id, run_id, label, shape, method, "
                                        "idx FROM samples ORDER BY rowid").fetchall():
        key = tuple(keys)
        if idx == 0 or idx is None:  # a new set
            occurrence = seen.get(key, 0)
            seen[key] = occurrence + 1
            lines = summary.get(key, [])
            line = lines[occurrence] if occurrence < len(lines) else None
        links.append((line, rowid))
    db.executemany("UPDATE samples SET summary_line=? WHERE rowid=?", links)
    db.execute("UPDATE figures SET cache='none' WHERE cache IS NULL OR cache=''")


def _v2_to_v3(db: sqlite3.Connection) -> None:
    """Each sweep's one known start: its `sweeps` row (text and argv as first recorded)."""
    db.execute("""CREATE TABLE IF NOT EXISTS sweep_starts(
  sweep_id TEXT, started_at REAL, config_path TEXT, config_text TEXT, argv_json TEXT,
  planned_json TEXT);""")  # as format 3 made it
    db.execute("INSERT INTO sweep_starts(sweep_id, started_at, config_path, config_text, "
               "argv_json, planned_json) SELECT sweep_id, started_at, config_path, config_text, "
               "argv_json, NULL FROM sweeps")


def _v3_to_v4(db: sqlite3.Connection) -> None:
    """Every sweep of an older store is its own orchestrator's: no merged host."""
    db.execute("ALTER TABLE sweeps ADD COLUMN host TEXT")


# the largest experiments text a sweep can have planned from (experiments/limits.py's
# MAX_FILE_BYTES; data may not import experiments): a longer recorded text is not parsed
RECORDED_TEXT_BYTES = 2**20


def recorded_seed(config_text: str | None) -> int | None:
    """The order seed a start's experiments text asked for as format 4 read it: the seed
    under `defaults.order` with `interleave: true`, else None (file order, the default then;
    a text that does not read as such a mapping planned in file order too). A text over
    RECORDED_TEXT_BYTES is no experiments file the orchestrator read: not parsed (a 7.5 MB
    text took `export` 57.5 s and 1.1 GiB), file order."""
    if config_text is None or len(config_text) > RECORDED_TEXT_BYTES:
        return None
    try:
        data = yaml.safe_load(config_text or "")
    except (yaml.YAMLError, RecursionError):
        return None
    order = data.get("defaults", {}).get("order") if isinstance(data, dict) and isinstance(
        data.get("defaults"), dict) else None
    if not isinstance(order, dict) or order.get("interleave") is not True:
        return None
    seed = order.get("seed", 0)
    return seed if type(seed) is int else None


def _v4_to_v5(db: sqlite3.Connection) -> None:
    """Each start's order seed, from the text it planned from; the stops table (no sweep
    of an older store stopped at a stopping target: empty)."""
    db.execute("""CREATE TABLE IF NOT EXISTS stops(
  sweep_id TEXT, experiment TEXT, series TEXT, label TEXT, method TEXT, reason TEXT,
  half_width REAL, processes INTEGER, target REAL, at REAL,
  PRIMARY KEY(sweep_id, series, label, method));""")  # as format 5 made it
    db.execute("ALTER TABLE sweep_starts ADD COLUMN seed INTEGER")
    # one text at a time, and only those within the bound are read out of SQLite at all
    seeds = [(recorded_seed(text), rowid) for rowid, text in db.execute(
        "SELECT rowid, CASE WHEN length(CAST(config_text AS BLOB)) <= ? THEN config_text END "
        "FROM sweep_starts", (RECORDED_TEXT_BYTES,))]
    db.executemany("UPDATE sweep_starts SET seed=? WHERE rowid=?", seeds)


# The columns formats 2 to 5 gained in place, as they were added: a store of one of those
# formats has any of them (none, some or all), '' in the old rows of a text column.
_ADDED_IN_PLACE = {"figures": (("profiler", "TEXT DEFAULT ''"), ("kernel", "TEXT DEFAULT ''")),
                   "runs": (("state_json", "TEXT"),)}  # the machine around the run, JSON


def _v5_to_v6(db: sqlite3.Connection) -> None:
    """Every shape formats 2 to 5 had as one: the columns they gained in place, where a store
    lacks them (NULL in its old rows; '' for a text figure column, as the ALTER had it)."""
    for table, columns in _ADDED_IN_PLACE.items():
        have = column_names(db, table)
        for name, sql in columns:
            if name not in have:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {sql}")


MIGRATIONS: list[tuple[int, Callable[[sqlite3.Connection], None]]] = [
    (1, _v1_to_v2), (2, _v2_to_v3), (3, _v3_to_v4), (4, _v4_to_v5), (5, _v5_to_v6)]


def migrate(db: sqlite3.Connection, found: int) -> None:
    """Bring a store of version `found` to VERSION, in one transaction (all or nothing)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        for from_version, step in MIGRATIONS:
            if from_version >= found:
                step(db)
        db.execute("UPDATE meta SET value=? WHERE key='format_version'", (str(VERSION),))
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
