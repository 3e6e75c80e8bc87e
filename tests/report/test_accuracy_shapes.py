"""The accuracy table says which shape each row is: a build measured at several
shapes has a row per shape, and without a shape column the chapter's README read JAX's TF32
errors at swapped shapes. On the committed H200 sweep that measured accuracy at 256² and 1024²
(docs/results/h200-2026-12-02-chapter): its exported dataset.csv holds both shapes (the store
kept in git lacks the 1024² arrays, 126 MB), and the table is built from that CSV's rows; the
expected numbers are read from the same CSV, not through the code under test."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from orchestrator.report import tables
from orchestrator.report.tables import prepare

from ..conftest import PROJECT

FOLDER = PROJECT / "docs" / "results" / "h200-2026-12-02-chapter"


def _rows() -> pd.DataFrame:
    figures = pd.read_csv(FOLDER / "dataset.csv", low_memory=False)
    return tables.accuracy_rows(prepare(SimpleNamespace(figures=figures)))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return tables.accuracy_table(_rows()).frame


def _csv_errors() -> dict[tuple[str, str, str], float]:
    """(framework, precision, shape) -> max_err_f64_ref of its cuda runs, from the CSV."""
    csv = pd.read_csv(FOLDER / "dataset.csv", low_memory=False)
    rows = csv[(csv["method"] == "accuracy") & (csv["stat"] == "max_err_f64_ref")
               & (csv["device"] == "cuda")]
    return {(str(r.framework), str(r.precision), str(r.shape)): float(r.value_s)
            for r in rows.itertuples()}


def test_several_shapes_give_a_shape_column(table: pd.DataFrame) -> None:
    assert list(table.columns[:2]) == ["build", "shape"]
    assert set(table["shape"]) == {"256x256", "1024x1024"}
    # one row per build and shape: no build's two answers on rows that read alike
    assert not table.duplicated(["build", "shape"]).any()


def test_each_row_carries_its_own_shapes_error(table: pd.DataFrame) -> None:
    errors = _csv_errors()
    jax_tf32 = {shape: err for (fw, precision, shape), err in errors.items()
                if fw == "jax" and precision == "tf32"}
    assert len(jax_tf32) == 2  # the README's claim: 1.232e-2 at 1024², 7.720e-3 at 256²
    for shape, err in jax_tf32.items():
        row = table[(table["build"] == "jax cuda [tf32]") & (table["shape"] == shape)]
        assert len(row) == 1, shape
        assert float(row["max|x - f64 ref|"].iloc[0]) == pytest.approx(err, rel=1e-3)
    big = table[(table["build"] == "jax cuda [tf32]") & (table["shape"] == "1024x1024")]
    assert big["max|x - f64 ref|"].iloc[0] == "1.232e-02"


def test_one_shape_keeps_the_chapters_columns() -> None:
    rows = _rows()
    one = tables.accuracy_table(rows[rows["shape"] == "256x256"]).frame
    assert "shape" not in one.columns and one.columns[0] == "build"
