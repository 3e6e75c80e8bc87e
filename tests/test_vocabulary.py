"""The measurement vocabulary (orchestrator/vocabulary.py) is the one list of methods, stats and
dataset columns: the programs and the parser name only its methods, the docs' data dictionary
equals it, a figure of a method it lacks is a counted warning, and adding a method or a column
is its catalogue entry (plus the program's line) with no other edit: the stand-ins below show up
in the progress line, table 1, the clocks, the process table, compare and the CSV export."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pandas as pd
import pytest

from orchestrator import programs, vocabulary
from orchestrator.data import dataset, line_forms, schema
from orchestrator.data.parse import parse_text
from orchestrator.programs.torch import Torch
from orchestrator.records import Context
from orchestrator.report import clocks, process_table, timing_tables, writer
from orchestrator.report.compare import verdicts as compare
from orchestrator.report.compare.sides import load_side
from orchestrator.report.tables import prepare
from orchestrator.run import progress

from .conftest import PROJECT, write

# the files that may hold the data dictionary (README.md today; docs/ pages when it moves)
DICTIONARY_FILES = [PROJECT / "README.md", *sorted((PROJECT / "docs").glob("*.md"))]
STAND_IN = vocabulary.Method(
    "graph_time", "graph time", "a stand-in: the matmul replayed from a captured graph",
    "methods", table1=True, clock="a stand-in clock", time=True, throughput=True, headline=True)
PRINTED = "cuda graph time"  # the stand-in program line's METHOD


def _log(path: Path, scale: float = 1.0) -> Path:
    lines = ["### torch cuda", "torch 2.15.0, threads 8",
             "cuda 1024x1024 matmul with sync, 20 runs: min 100µs median 110µs",
             "cuda 1024x1024 matmul cuda.Event time (queued), 20 runs: min 30µs median 31µs",
             f"cuda 1024x1024 matmul {PRINTED}, 20 runs: min {20 * scale:.0f}µs "
             f"median {22 * scale:.0f}µs"]
    return write(path, "\n".join(lines) + "\n")


class GraphTorch(Torch):
    """PyTorch's program as it would be if it printed the new method's line."""

    methods: ClassVar[dict[str, str]] = {**Torch.methods, PRINTED: STAND_IN.key}


@pytest.fixture
def program_line() -> Iterator[programs.Registry]:
    """The program's line of a new method: torch prints `cuda graph time` (in a registry of
    this test's own: the default one is never changed)."""
    mine = programs.default_registry().with_programs(GraphTorch())
    with programs.use(mine):
        yield mine


@pytest.fixture
def stand_in(program_line: programs.Registry) -> Iterator[None]:
    """The catalogue entry of the new method, added to that registry."""
    with programs.use(program_line.with_methods(STAND_IN)):
        yield


def _figures(path: Path) -> pd.DataFrame:
    parsed = parse_text(path.read_text(), Context(framework="torch"))
    return prepare(dataset.from_parse(parsed, str(path)))


# ---- one list ---------------------------------------------------------------------------------


def test_every_method_a_program_or_the_parser_names_is_in_the_vocabulary() -> None:
    known = {m.key for m in vocabulary.METHODS}
    for program in programs.active().programs:
        assert set(program.methods.values()) <= known, program.name
    parsed = {method for _n, _p, methods in line_forms.VALUE_FORMS for method, _t in methods}
    assert parsed <= known
    assert set(vocabulary.printed_methods().values()) <= known


def test_each_word_is_spelled_once() -> None:
    for entries in (vocabulary.METHODS, vocabulary.STATS, vocabulary.COLUMNS):
        keys = [e.key for e in entries]
        assert len(keys) == len(set(keys))
    spelled = [m.words for m in vocabulary.METHODS]
    assert len(spelled) == len(set(spelled))
    assert vocabulary.words("device_time_queued") == "device time queued"  # clocks and compare
    assert vocabulary.words("some_new_thing") == "some new thing"  # unknown: its key as words


def test_every_stored_figure_field_is_a_dataset_column_whose_dtype_gives_its_sql_type() -> None:
    assert {c.dataset for c in schema.FIGURE_COLUMNS} <= set(vocabulary.column_keys())
    assert vocabulary.column_keys() == dataset.COLUMNS
    sql = {c.name: c.sql for c in schema.FIGURE_COLUMNS}
    assert (sql["value"], sql["runs"], sql["line_no"], sql["method"], sql["cache"]) == \
        ("REAL", "INTEGER", "INTEGER", "TEXT", "TEXT")


def test_declared_dtypes_leave_no_pandas_warning_on_an_empty_text_column() -> None:
    frame = dataset.typed(pd.DataFrame([{"run_id": "r", "value_s": None}],
                                       columns=["run_id", "value_s", "cache_proof", "runs"]))
    assert str(frame["value_s"].dtype) == "float64" and str(frame["runs"].dtype) == "Int64"
    assert str(frame["cache_proof"].dtype) == "str"  # pandas alone: float64
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        assert frame["cache_proof"].fillna("").eq("").all()


# ---- the docs' data dictionary ------------------------------------------------------------------


def _dictionary() -> str:
    """The paragraph that lists the dataset's methods and stats, wherever the docs keep it."""
    for path in DICTIONARY_FILES:
        text = path.read_text(encoding="utf-8")
        start = text.find("`method` is one of")
        if start >= 0:
            return text[start:text.find("\n\n", start)]
    raise AssertionError("no data dictionary ('`method` is one of ...') in README.md or docs/")


def _dictionary_columns() -> list[str]:
    """The columns the data dictionary's table names, in its order (docs/results.md)."""
    for path in DICTIONARY_FILES:
        text = path.read_text(encoding="utf-8")
        if "## Data dictionary" in text:
            table = text.split("## Data dictionary", 1)[1].split("\n#", 1)[0]
            return re.findall(r"^\| `([a-z_0-9]+)` \|", table, re.MULTILINE)
    raise AssertionError("no '## Data dictionary' table in README.md or docs/")


def test_the_docs_data_dictionary_equals_the_vocabulary() -> None:
    text = _dictionary()
    methods, _, stats = re.sub(r"\s+", " ", text).partition("`stat` is")
    listed = re.findall(r"`([a-z0-9_]+)`", methods.removeprefix("`method`"))
    assert sorted(listed) == sorted(m.key for m in vocabulary.METHODS)
    named = set(re.findall(r"`([a-z0-9_]+)`", stats))
    assert {s.key for s in vocabulary.STATS} <= named
    assert _dictionary_columns() == [c.key for c in vocabulary.COLUMNS]


# ---- a method the vocabulary lacks --------------------------------------------------------------


def test_a_figure_of_an_unknown_method_is_a_counted_warning(program_line: programs.Registry,
                                                            tmp_path: Path) -> None:
    log = _log(tmp_path / "a.log")
    parsed = parse_text(log.read_text(), Context(framework="torch"))
    assert {f.method for f in parsed.figures} == {"with_sync", "device_time_queued", STAND_IN.key}
    out = tmp_path / "report"
    writer.write(dataset.from_parse(parsed, str(log)), out)
    report = (out / "report.md").read_text()
    assert ("**method not in the vocabulary**: 2 figures of method `graph_time` (torch) are "
            "in no table: orchestrator/vocabulary.py has no entry for it.") in report
    assert "graph time" not in report


# ---- contracts: a new method, a new column ------------------------------------------------------


def test_contract_method_is_its_catalogue_entry_plus_the_programs_line(
        stand_in: None, tmp_path: Path) -> None:
    fig = _figures(_log(tmp_path / "a.log"))
    # the progress line a person watching the sweep sees
    parsed = parse_text(_log(tmp_path / "p.log").read_text(), Context(framework="torch"))
    assert "graph time 20.000µs" in progress.headline(parsed)
    table1 = timing_tables.methods_table(timing_tables.methods_rows(fig)).frame
    assert list(table1["method"])[:2] == ["with sync", "graph time"]
    assert "20.000µs" in table1[table1["method"] == "graph time"].iloc[0].tolist()
    (clock,) = clocks.clock_tables(clocks.select(fig))
    row = clock.frame[clock.frame["clock"] == "graph time"].iloc[0]
    assert (row["min"], row["what it holds"]) == ("20.000µs", "a stand-in clock")
    pooled = process_table.figures_table(fig, {}).frame
    assert "graph time" in set(pooled["method"])
    result = compare.compare(load_side(str(_log(tmp_path / "a.log"))),
                             load_side(str(_log(tmp_path / "b.log", scale=2.0))))
    (graph,) = [r for r in result.rows if r.figure.endswith("graph time")]
    assert graph.section == "methods" and graph.ratio == pytest.approx(2.0)
    assert graph.a_tflops is not None  # a throughput method: TFLOP/s beside it
    report = tmp_path / "report"
    writer.write(dataset.from_parse(parse_text(_log(tmp_path / "c.log").read_text(),
                                               Context(framework="torch")), "c.log"), report)
    assert "method not in the vocabulary" not in (report / "report.md").read_text()


def test_contract_column_is_its_catalogue_entry(tmp_path: Path) -> None:
    column = vocabulary.Column("graph_nodes", "Int64", "a stand-in: nodes of the graph", "run")
    log = _log(tmp_path / "a.log")
    # this test's own registry: the default one is never changed
    with programs.use(programs.default_registry().with_columns(column)):
        data = dataset.from_parse(parse_text(log.read_text(), Context(framework="torch")),
                                  "a.log")
        figures, _samples = dataset.export_csv(data, tmp_path / "out.csv")
    assert list(data.figures.columns)[-1] == "graph_nodes"
    assert str(data.figures["graph_nodes"].dtype) == "Int64"
    sidecar = tmp_path / "out.schema.json"
    last = vocabulary.COLUMNS[-1].key  # the catalogue's own last column, then the stand-in
    assert figures.read_text().splitlines()[0].endswith(f",{last},graph_nodes")
    assert json.loads(sidecar.read_text())["figures"]["columns"][-1] == "graph_nodes"


def test_contract_method_enters_the_ratio_table_by_its_catalogue_rank(
        program_line: programs.Registry, tmp_path: Path) -> None:
    """The ratio table's methods and their order are the catalogue's `ratio` ranks: a method
    beyond table 1 with a rank is paired like the kernel and queued device times."""
    from orchestrator.report import ratios

    assert ratios.ratio_methods() == ["kernel_time", "device_time_queued", "with_sync",
                                      "device_time", "readback"]
    entry = vocabulary.Method(STAND_IN.key, STAND_IN.words, STAND_IN.description, "methods",
                              ratio=6, time=True)
    with programs.use(program_line.with_methods(entry)):
        assert ratios.ratio_methods()[-2:] == ["readback", "graph_time"]
        rows = ratios.ratio_rows(_figures(_log(tmp_path / "a.log")))
    assert {"graph_time", "device_time_queued", "with_sync"} <= set(rows["method"])
