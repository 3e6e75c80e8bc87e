"""Issue 24: docs/results/README.md's figures checked against the H200 sweep's own CSV.

Each claim of the README's tables is read from the committed docs/results/h200/dataset.csv here,
rounded the way the README writes it, so an edited README or a re-made sweep that no longer
says the same fails.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from ..conftest import PROJECT

RESULTS = PROJECT / "docs" / "results"


@pytest.fixture(scope="module")
def csv() -> pd.DataFrame:
    return pd.read_csv(RESULTS / "h200" / "dataset.csv", low_memory=False)


@pytest.fixture(scope="module")
def readme() -> str:
    return (RESULTS / "README.md").read_text()


def _row(readme: str, head: str) -> list[str]:
    for line in readme.splitlines():
        if line.startswith(f"| {head}"):
            cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))  # `\|` is a cell's own
            return [cell.strip() for cell in cells][1:]
    raise AssertionError(f"no README row starting {head!r}")


def _us(value: float) -> str:
    us = value * 1e6
    return f"{us:.2f} µs" if us < 10 else f"{us:.1f} µs"


def test_the_clock_table_is_the_csv_minimum(csv: pd.DataFrame, readme: str) -> None:
    m = csv[(csv["experiment"] == "methods") & (csv["device"] == "cuda")
            & (csv["shape"] == "1024x1024") & (csv["role"] == "measure") & (csv["stat"] == "min")]
    sides = [m[(m["framework"] == "torch") & (m["precision"] == "fp32")],
             m[(m["framework"] == "torch") & (m["precision"] == "tf32")],
             m[m["framework"] == "burn"]]
    for head, method in (("no sync", "no_sync"), ("with sync", "with_sync"),
                         ("device time, as the chapter", "device_time"),
                         ("device time, launch gap kept out", "device_time_queued"),
                         ("read-back", "readback")):
        cells = _row(readme, head)
        for cell, side in zip(cells, sides, strict=True):
            value = side[side["method"] == method]["value_s"]
            assert len(value) == 1, (head, cell)
            assert cell == _us(float(value.iloc[0])), (head, cell, float(value.iloc[0]))


def test_the_cold_series_is_written_in_run_order(csv: pd.DataFrame, readme: str) -> None:
    cold = csv[(csv["experiment"] == "first-call") & (csv["framework"] == "burn")
               & (csv["cache"] == "cold") & (csv["method"] == "first_call_after_sync")]
    in_order = ", ".join(f"{v:.1f}" for v in cold["value_s"])  # the CSV keeps run order
    cell = _row(readme, "burn first call after sync")[0]
    assert "in run order" in readme and cell.startswith(f"{in_order} s;"), (cell, in_order)
    warm = csv[(csv["experiment"] == "first-call") & (csv["framework"] == "burn")
               & (csv["cache"] == "warm") & (csv["method"] == "first_call_after_sync")]
    low, high = warm["value_s"].min(), warm["value_s"].max()
    assert f"{low:.2f}-{high:.2f} s" in cell
    priming = csv[(csv["role"] == "priming") & (csv["method"] == "first_call_after_sync")]
    assert f"{float(priming['value_s'].iloc[0]):.1f} s" in cell


def test_the_accuracy_row_is_the_csv(csv: pd.DataFrame, readme: str) -> None:
    cell = _row(readme, "max\\|x - f64 ref\\|")[0]
    numbers = re.findall(r"[0-9.]+e-[0-9]+", cell)
    assert len(numbers) == 5, cell
    errors = csv[csv["stat"] == "max_err_f64_ref"]["value_s"].astype(float)
    for text in numbers:
        assert any(f"{e:.2e}".replace("e-0", "e-") == text for e in errors), text
