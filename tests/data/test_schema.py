"""Store format 4 and its migrations: every version-1 and version-2 store opens, keeps its data,
and reading never changes the file (the committed docs/results/h200-2026-11-30 store is version
1, docs/results/h200-2026-12-01 version 2)."""

from __future__ import annotations

import hashlib
import json
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
        db.execute("UPDATE meta SET value='6' WHERE key='format_version'")
    for opening in (store.reading, store.writing):
        with pytest.raises(StoreError, match="has format 6; this orchestrator reads format 5"), \
                opening():
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
    assert _version(store.path) == "5"


def test_the_csv_export_says_its_schema_version(tmp_path: Path) -> None:
    figures, samples = dataset.export_csv(dataset.load(H200), tmp_path / "x.csv")
    meta = json.loads((tmp_path / "x.schema.json").read_text())
    assert meta["schema_version"] == schema.VERSION == 5
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
    assert _version(store.path) == "5"
    assert schema.recorded_seed("defaults: {order: {seed: 3}}") is None  # file order then
    assert schema.recorded_seed("[not, a, mapping") is None
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
