"""The process table (report/process_table.py) on the H200's own store (docs/results/h200, a
private copy): each profiler's kernel time is a figure of its own (ncu with L2 warm, ncu with
L2 flushed and CUPTI measure different things; pooled, they made one "6 × 20" figure of two,
burn TF32 ±19.4%), and section 6 names each missed stopping target once, with the profiler
whose figure it is; a profile run's rows get no stop reason (the rule judged measured runs)."""

from __future__ import annotations

import shutil

import pytest

from orchestrator.data import dataset
from orchestrator.report import process_table
from orchestrator.report.tables import prepare
from orchestrator.report.writer import sample_sets

from ..conftest import PROJECT

STORE = PROJECT / "docs" / "results" / "h200" / "results.sqlite"


@pytest.fixture(scope="module")
def h200(tmp_path_factory: pytest.TempPathFactory) -> dataset.Dataset:
    folder = tmp_path_factory.mktemp("h200")
    shutil.copyfile(STORE, folder / "results.sqlite")  # never a reader of the committed one
    return dataset.load(folder)


def test_each_profilers_kernel_time_is_a_figure_of_its_own(h200: dataset.Dataset) -> None:
    frame = process_table.figures_table(prepare(h200), sample_sets(h200.samples)).frame
    kernel = frame[frame["method"].str.startswith("kernel time")
                   & (frame["experiment"] == "methods")]
    burn = kernel[kernel["run"] == "burn cuda [tf32], warm cache"]
    assert list(burn["method"]) == ["kernel time (ncu, L2 warm (--cache-control none))",
                                    "kernel time (ncu, L2 flushed (--cache-control all))"]
    assert list(burn["processes × reps"]) == ["3 × 20", "3 × 20"]
    assert burn["median [95% interval]"].iloc[0].startswith("36.133µs")
    assert burn["median [95% interval]"].iloc[1].startswith("41.934µs")
    # no figure pools two profilers' processes: every methods kernel time has its three
    assert set(kernel["processes × reps"]) == {"3 × 20"}
    assert (kernel["method"] != "kernel time").all()


def test_missed_targets_once_each_and_no_stop_on_profile_runs(h200: dataset.Dataset) -> None:
    fig = prepare(h200)
    lines = process_table.missed_targets(fig)
    assert len(lines) == len(set(lines)) == 21
    assert "methods PyTorch cuda [tf32] kernel time (CUPTI): ±8.8% at 3 processes" in \
        " ".join(lines)
    figures = h200.figures
    profiled = figures["profile_of"].notna() & (figures["profile_of"] != "")
    assert profiled.any() and (figures.loc[profiled, "stop_reason"] == "").all()
    # every measured kernel time of the series the rule judged keeps its own stop (a JAX cold
    # priming process is outside its warm series)
    measured = figures[~profiled & (figures["method"] == "kernel_time")
                       & (figures["experiment"] == "methods") & (figures["cache"] != "cold")]
    assert len(measured) and (measured["stop_reason"] != "").all()
