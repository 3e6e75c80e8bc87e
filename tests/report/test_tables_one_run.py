"""Each kernels-table row from one named run,
table notes rendered, the headline ratio on kernel time with its interval, and table 1 / the
ratios table of the chapter's experiments only, paired like with like.

docs/results/h200-2026-12-01 (the methods run's 20 launches beside a first-call run's 5) and
docs/results/h200-2026-12-02-chapter (the same store also holds the `sizes` sweep, 64²-8192²);
every expected number is read from the store's own dataset.csv, not through the code under test.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from orchestrator.data import dataset
from orchestrator.data.durations import format_duration
from orchestrator.report import writer
from orchestrator.report.checks import Thresholds
from orchestrator.report.sample_sets import sample_sets
from orchestrator.report.sections import Section, build_sections
from orchestrator.report.tables import Table, prepare

from ..conftest import PROJECT

RESULTS = PROJECT / "docs" / "results"


def _sections(folder: Path) -> tuple[dataset.Dataset, list[Section]]:
    data = dataset.load(folder)
    fig = prepare(data)
    return data, build_sections(data, fig, sample_sets(data.samples), Thresholds())


@pytest.fixture(scope="module")
def h200() -> tuple[dataset.Dataset, list[Section]]:
    return _sections(RESULTS / "h200-2026-12-01")


@pytest.fixture(scope="module")
def chapter() -> tuple[dataset.Dataset, list[Section]]:
    return _sections(RESULTS / "h200-2026-12-02-chapter")


def _table(sections: list[Section], name: str) -> Table:
    found = [t for s in sections for t in s.tables if t.name == name]
    assert len(found) == 1, name
    return found[0]


def _csv(folder: str) -> pd.DataFrame:
    return pd.read_csv(RESULTS / folder / "dataset.csv", low_memory=False)


def test_every_kernel_row_is_one_named_run(h200) -> None:
    _data, sections = h200
    kernels = _table(sections, "kernels").frame
    csv = _csv("h200-2026-12-01")
    for _, row in kernels.iterrows():
        run_id = row["measured in"].rsplit(" ", 1)[1]
        mine = csv[(csv["run_id"] == run_id) & (csv["method"] == "kernel_time")]
        assert not mine.empty, row["measured in"]
        stats = dict(zip(mine["stat"], mine["value_s"], strict=True))
        assert row["min"] == format_duration(stats["kernel_min"]), row.to_dict()
        assert row["median"] == format_duration(stats["kernel_median"]), row.to_dict()
        assert row["launches"] == str(int(mine["runs"].iloc[0]))
    # PyTorch FP32's CUPTI row: the methods run's 20 launches, as its clocks table says
    cupti = kernels[(kernels["run"] == "PyTorch cuda") & (kernels["profiler"] == "CUPTI")]
    assert list(cupti["measured in"]) == ["methods, run 3ef5d5af2f582a80"]
    assert list(cupti["min"]) == ["55.519µs"]  # not the first-call run's 55.775µs
    clock = _table(sections, "clocks_torch_cuda_1024x1024").frame.set_index("clock")
    assert clock.loc["kernel time (CUPTI)", "min"] == "55.519µs"


def test_table_notes_are_rendered_under_their_tables(h200) -> None:
    data, sections = h200
    text = writer.render(data, sections, [], Thresholds().for_host(data.host))
    spread = text.index("| 30.648s / 32.480s / 35.004s")
    note = text.index("Note: Each cell: min / median / max over the cold series", spread)
    assert note < text.index("CSV: `cold_spread.csv`", spread)
    for table in (t for s in sections for t in s.tables if t.missing is None):
        for line in table.notes:
            assert f"Note: {line}" in text, (table.name, line)


def test_the_headline_ratio_is_kernel_time_with_its_interval(h200) -> None:
    _data, sections = h200
    ratios = _table(sections, "ratios").frame
    cuda = ratios[ratios["burn"] == "burn cuda [tf32]"]
    first = cuda.iloc[0]
    assert first["method"] == "kernel time (ncu / ncu)"
    csv = _csv("h200-2026-12-01")
    ncu = csv[(csv["profiler"] == "ncu") & (csv["stat"] == "median") & csv["kernel"].isna()]
    burn = float(ncu[ncu["framework"] == "burn"]["value_s"].iloc[0])
    torch = float(ncu[(ncu["framework"] == "torch") & (ncu["precision"] == "tf32")]["value_s"]
                  .iloc[0])
    assert first["median ratio"] == f"{burn / torch:.2f}×"  # 2.66×, the ncu medians
    low, high = (float(x.rstrip("×")) for x in first["median ratio 95% CI"].split(" – "))
    assert low <= burn / torch <= high and high - low < 0.1
    assert list(cuda["method"])[:2] == ["kernel time (ncu / ncu)", "device time queued"]
    kernel = _table(sections, "kernel_ratio").frame
    assert kernel["median ratio 95% CI"].str.contains(" – ").all()
    spread = _table(sections, "spread").frame
    assert {"device time queued", "kernel time (ncu)", "kernel time (CUPTI)"} <= set(
        spread["method"])


def test_table_one_and_the_ratios_are_the_chapters_experiments(chapter) -> None:
    _data, sections = chapter
    methods = _table(sections, "methods").frame
    csv = _csv("h200-2026-12-02-chapter")
    swept = set(csv[csv["experiment"] == "sizes"]["shape"].dropna()) - {"1024x1024"}
    assert swept  # the store does hold the size sweep's 64²-8192² CUDA runs
    assert not [c for c in methods.columns if any(s in c for s in swept)], list(methods.columns)
    ratios = _table(sections, "ratios").frame
    assert {"experiment", "shape"} <= set(ratios.columns)
    cuda = ratios[ratios["PyTorch"].str.contains("cuda")]
    assert set(cuda["experiment"]) == {"methods"} and set(cuda["shape"]) == {"1024x1024"}
    # like with like: one row per candidate, reference and method
    assert not ratios.duplicated(["experiment", "shape", "burn" if "burn" in ratios else
                                  "candidate", "PyTorch", "method"]).any()
