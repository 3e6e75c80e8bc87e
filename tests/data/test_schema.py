"""Store formats and their migrations: one SQL shape per format, pinned (tests/data/
store_formats.json); every older shape (a format-2 to 5 store from before a column was added
in place included) migrates to the current one; every older store opens, keeps its data, and
reading never changes the file (the committed docs/results/h200-2026-11-30 store is version 1,
docs/results/h200-2026-12-01 version 2)."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import shutil
import sqlite3
from dataclasses import fields
from pathlib import Path

import pytest

from orchestrator.data import dataset, schema
from orchestrator.data.parse import parse_text
from orchestrator.data.store import Store
from orchestrator.errors import StoreError
from orchestrator.records import Figure, RunDef, RunRecord

from ..conftest import PROJECT

H200 = PROJECT / "docs" / "results" / "h200-2026-11-30"
TABLES = ("sweeps", "builds", "runs", "artifacts", "figures", "samples")
FORMATS_FILE = PROJECT / "tests" / "data" / "store_formats.json"
FORMATS = json.loads(FORMATS_FILE.read_text(encoding="utf-8"))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _counts(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as db:
        return {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def _version(path: Path) -> str:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT value FROM meta WHERE key='format_version'").fetchone()[0]


def test_the_figure_columns_are_the_figure_fields() -> None:
    assert tuple(f.name for f in fields(Figure)) == schema.FIGURE_FIELDS
    assert [c.dataset for c in schema.FIGURE_COLUMNS if c.dataset != c.name] == ["value_s"]
    assert set(c.dataset for c in schema.FIGURE_COLUMNS) <= set(dataset.COLUMNS)


def test_reading_a_version_1_store_leaves_its_file_alone() -> None:
    store_file = H200 / "results.sqlite"
    assert _version(store_file) == "1"  # the committed example stays a version-1 store
    before = _digest(store_file)
    data = dataset.load(H200)
    assert _digest(store_file) == before and _version(store_file) == "1"
    # every sample set is linked to a summary line of its own run, label, shape and method
    assert data.samples["summary_line"].notna().all()
    mins = data.figures[data.figures["stat"] == "min"]
    summaries = set(zip(mins["run_id"], mins["label"], mins["shape"], mins["method"],
                        mins["line_no"], strict=True))
    linked = set(zip(data.samples["run_id"], data.samples["label"], data.samples["shape"],
                     data.samples["method"], data.samples["summary_line"], strict=True))
    assert linked <= summaries and len(linked) == len(data.samples.groupby(
        ["run_id", "summary_line"]))


def test_writing_migrates_a_version_1_store_in_place_keeping_everything(tmp_path: Path) -> None:
    folder = tmp_path / "h200"
    folder.mkdir()
    shutil.copy2(H200 / "results.sqlite", folder / "results.sqlite")
    counts = _counts(folder / "results.sqlite")
    read_before = dataset.load(folder)  # through a migrated temporary copy
    with Store(folder).writing():
        pass
    assert _version(folder / "results.sqlite") == str(schema.VERSION)
    assert _counts(folder / "results.sqlite") == counts
    with sqlite3.connect(folder / "results.sqlite") as db:
        assert db.execute("SELECT count(*) FROM figures WHERE cache IS NULL").fetchone()[0] == 0
    after = dataset.load(folder)
    assert after.figures.equals(read_before.figures)
    assert after.samples.equals(read_before.samples)


def test_a_newer_store_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with store.writing():
        pass
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE meta SET value=? WHERE key='format_version'",
                   (str(schema.VERSION + 1),))
    for opening in (store.reading, store.writing):
        with pytest.raises(StoreError, match=f"has format {schema.VERSION + 1}; this "
                           f"orchestrator reads format {schema.VERSION}"), opening():
            pass


def test_a_new_store_links_samples_to_their_summary_line(tmp_path: Path) -> None:
    out = ("flex 8x8 matmul with sync, 3 runs: min 1.000µs median 2.000µs\n"
           "flex 8x8 matmul no sync, 3 runs: min 1.000µs median 2.000µs\n"
           "# samples flex 8x8 matmul no sync: 1e-06 2e-06 3e-06\n")
    run = RunDef(experiment="t", program="burn", device="flex", mode="mm", shape=(8, 8), reps=3,
                 build="b", crate="exec-cpu")
    store = Store(tmp_path)
    with store.writing():
        sweep, _ = store.begin_sweep(PROJECT / "experiments.yaml", {}, [], False)
        store.record_run(sweep, RunRecord(run=run, stdout=out.encode()), parse_text(out))
        rows = store.query("SELECT summary_line, idx FROM samples ORDER BY idx")
    assert [(r["summary_line"], r["idx"]) for r in rows] == [(2, 0), (2, 1), (2, 2)]
    assert _version(store.path) == str(schema.VERSION)


def test_the_csv_export_says_its_schema_version(tmp_path: Path) -> None:
    figures, samples = dataset.export_csv(dataset.load(H200), tmp_path / "x.csv")
    meta = json.loads((tmp_path / "x.schema.json").read_text())
    assert meta["schema_version"] == schema.VERSION == 6
    assert meta["figures"] == {"file": figures.name, "columns": dataset.COLUMNS}
    assert meta["samples"]["file"] == samples.name
    assert samples.read_text().splitlines()[0].split(",") == meta["samples"]["columns"]


@pytest.mark.parametrize("example", ["h200-2026-11-30", "h200-2026-12-01"])
def test_every_older_sweep_gets_its_one_start_and_reads_complete(tmp_path: Path,
                                                                 example: str) -> None:
    committed = PROJECT / "docs" / "results" / example / "results.sqlite"
    before = _digest(committed)
    data = dataset.load(committed.parent)  # through a migrated copy: the file is unchanged
    assert _digest(committed) == before
    assert data.sweep is not None and data.sweep.complete and data.gaps() == []
    assert data.sweep.planned is None  # a plan recorded only from format 3 on
    folder = tmp_path / example
    folder.mkdir()
    shutil.copy2(committed, folder / "results.sqlite")
    with Store(folder).writing() as store:  # migrated in place
        (sweep,) = store.sweeps()
        (start,) = store.config_texts(sweep["sweep_id"])
        row = store.query("SELECT started_at, config_text FROM sweeps")[0]
    assert (start["started_at"], start["config_text"]) == (row["started_at"], row["config_text"])
    assert start["planned_json"] is None
    assert _version(folder / "results.sqlite") == str(schema.VERSION)


ORDERED = """version: 1
defaults: {order: {interleave: true, seed: 7}}
experiments: {e: {mode: mm, targets: [{program: torch, device: cpu}]}}
"""


def test_format_5_records_each_starts_order_seed_and_migrates_older_starts(
        tmp_path: Path) -> None:
    """sweep_starts.seed: the seed a start planned with (NULL: file order); a format-4 start
    gets the seed its own text asked for, and the file order that was the default then."""
    store = Store(tmp_path)
    with store.writing():
        asked, _ = store.begin_sweep(PROJECT / "experiments.yaml", {}, [], True, ORDERED)
        plain, _ = store.begin_sweep(PROJECT / "experiments.yaml", {}, [], True, "version: 1")
    with sqlite3.connect(store.path) as db:  # back to format 4, as its code wrote it
        db.execute("ALTER TABLE sweep_starts DROP COLUMN seed")
        db.execute("UPDATE meta SET value='4' WHERE key='format_version'")
    with store.writing():
        seeds = {s: [r["seed"] for r in store.config_texts(s)] for s in (asked, plain)}
    assert seeds == {asked: [7], plain: [None]}
    assert _version(store.path) == str(schema.VERSION)
    assert schema.recorded_seed("defaults: {order: {seed: 3}}") is None  # file order then
    assert schema.recorded_seed("[not, a, mapping") is None
    # a text beyond the experiments file's 1 MiB is not parsed (file order)
    asked_text = "defaults: {order: {interleave: true, seed: 3}}\n"
    assert schema.recorded_seed(asked_text) == 3
    assert schema.recorded_seed(asked_text + "#" * schema.RECORDED_TEXT_BYTES) is None
    # a new start records the seed it is given; the dataset says the latest start's
    out = "flex 8x8 matmul with sync, 3 runs: min 1.000µs median 2.000µs\n"
    run = RunDef(experiment="e", program="burn", device="flex", mode="mm", shape=(8, 8), reps=3,
                 build="b", crate="exec-cpu")
    with store.writing():
        sweep, _ = store.begin_sweep(PROJECT / "experiments.yaml", {}, [], False, ORDERED,
                                     seed=7)
        store.record_run(sweep, RunRecord(run=run, stdout=out.encode()), parse_text(out))
    assert list(dataset.load(tmp_path).figures["seed"]) == ["7", "7"]  # min, median
    assert set(dataset.load(H200).figures["seed"]) == {""}  # format 1: file order


# ---- one format, one shape ----------------------------------------------------------------------


def _fresh_shape(tmp_path: Path) -> dict[str, list[str]]:
    with Store(tmp_path / "fresh").writing() as store:
        return schema.shape(store.db)


def _shape_change(pinned: dict[str, list[str]], found: dict[str, list[str]]) -> str:
    """'figures: + graph_nodes INTEGER; runs: - state_json TEXT': what differs, table by table."""
    parts = []
    for name in sorted(set(pinned) | set(found)):
        was, now = pinned.get(name, []), found.get(name, [])
        if was != now:
            added = [f"+ {c}" for c in now if c not in was]
            gone = [f"- {c}" for c in was if c not in now]
            parts.append(f"{name}: {', '.join(added + gone) or 'columns reordered'}")
    return "; ".join(parts)


def test_a_new_store_has_the_pinned_shape_of_its_format(tmp_path: Path) -> None:
    """The fingerprint: a Figure field, a run column or a table added (or changed) without a
    new format fails here, saying what to do."""
    version = schema.VERSION
    found, pinned = _fresh_shape(tmp_path), FORMATS["formats"].get(str(version))
    assert pinned is not None, (
        f"schema.VERSION is {version} but {FORMATS_FILE.name} pins no shape for it: pin a new "
        f"store's shape (schema.shape) under \"{version}\"")
    change = _shape_change(pinned, found)
    assert not change, (
        f"a new store's SQL shape is not format {version}'s as pinned in {FORMATS_FILE.name} "
        f"({change}). One format has one shape: bump VERSION in orchestrator/data/schema.py to "
        f"{version + 1}, add a step ({version}, _v{version}_to_v{version + 1}) to "
        f"schema.MIGRATIONS that brings a format-{version} store to the new shape (spelling "
        f"its own SQL), pin the new shape as \"{version + 1}\" in {FORMATS_FILE.name} (keep "
        f"\"{version}\"), and give the format its row in docs/results.md's format table")


def test_every_format_is_pinned_migrated_and_in_the_docs_table() -> None:
    assert sorted(map(int, FORMATS["formats"])) == list(range(1, schema.VERSION + 1))
    assert [v for v, _step in schema.MIGRATIONS] == list(range(1, schema.VERSION))
    text = (PROJECT / "docs" / "results.md").read_text(encoding="utf-8")
    table = text.split("| format | ", 1)[1].split("\n\n", 1)[0]
    assert re.findall(r"^\| (\d+) \|", table, re.MULTILINE) == [
        str(v) for v in range(1, schema.VERSION + 1)]


def _older_shapes() -> list[tuple[int, str, dict[str, list[str]]]]:
    """Every pinned older format's shape, and for the formats that gained columns in place
    each shape without some of them (a store written before they were added)."""
    added = FORMATS["in_place"]
    groups = [[tuple(c.split()) for c in group] for group in added["added together"]]
    out = []
    for version, pinned in FORMATS["formats"].items():
        if int(version) == schema.VERSION:
            continue
        out.append((int(version), "as pinned", pinned))
        if int(version) not in added["formats"]:
            continue
        for n in range(1, len(groups) + 1):
            for lacking in itertools.combinations(groups, n):
                gone = {column for group in lacking for column in group}
                shape = {t: [c for c in cols if (t, c.split()[0]) not in gone]
                         for t, cols in pinned.items()}
                out.append((int(version), "without " + ", ".join(c for _t, c in sorted(gone)),
                            shape))
    return out


def _create(db: sqlite3.Connection, shape: dict[str, list[str]]) -> None:
    """An empty store of a pinned shape."""
    for name, cols in shape.items():
        if name.startswith("index "):
            db.execute(f"CREATE INDEX {name.split()[1]} ON {cols[0]}({', '.join(cols[1:])})")
            continue
        keys = sorted((c for c in cols if " pk" in c), key=lambda c: int(c.rsplit("pk", 1)[1]))
        body = [" ".join(c.split()[:2]) for c in cols]
        if keys:
            body.append(f"PRIMARY KEY({', '.join(k.split()[0] for k in keys)})")
        db.execute(f"CREATE TABLE {name}({', '.join(body)})")


@pytest.mark.parametrize(("version", "variant", "shape"), _older_shapes(),
                         ids=lambda v: v if isinstance(v, str) else None)
def test_every_older_shape_migrates_to_the_current_one(tmp_path: Path, version: int,
                                                       variant: str,
                                                       shape: dict[str, list[str]]) -> None:
    db = sqlite3.connect(tmp_path / "old.sqlite", isolation_level=None)
    _create(db, shape)
    db.execute("INSERT INTO meta VALUES('format_version', ?)", (str(version),))
    assert schema.shape(db) == shape
    schema.migrate(db, version)
    assert schema.version_of(db) == schema.VERSION
    assert schema.shape(db) == FORMATS["formats"][str(schema.VERSION)]


def test_every_committed_store_reads_with_the_current_shape() -> None:
    """Older ones through a migrated copy, current ones as they are: one shape either way."""
    current = FORMATS["formats"][str(schema.VERSION)]
    for path in sorted((PROJECT / "docs" / "results").rglob("results.sqlite")):
        with Store(path.parent).reading() as store:
            assert schema.shape(store.db) == current, path
