"""burn's `# sm clock` lines (bench-core's smclock.rs, CUDA builds): one after each timed block,
as bench_py prints them, parsed as burn's `sm_clock` figures and judged by the report's block
check. The log is HAND-WRITTEN (tests/data/h200/HANDWRITTEN-burn-sm-clock-1024.out: the
2026-12-02 H200 capture with the lines put where the binary prints them, values made up) until
scripts/h200/evidence34.sh's burn-1024.out, from the binary itself, replaces it."""

from __future__ import annotations

from pathlib import Path

from orchestrator.data import dataset
from orchestrator.data.parse import parse_text
from orchestrator.report import clock_checks

LOG = Path(__file__).parent / "h200" / "HANDWRITTEN-burn-sm-clock-1024.out"
BLOCKS = ["no sync", "with sync", "device time (profile_with flush)",
          "device time (profile_with flush, queued)", "device time (profile, no flush)",
          "+ sum().into_scalar()", "energy (nvml)"]


def _parsed():
    first, text = LOG.read_text(encoding="utf-8").split("\n", 1)
    assert first.startswith("# HAND-WRITTEN")  # never mistaken for a capture
    return parse_text(text)


def test_every_timed_block_has_its_clock_line_parsed_as_burns() -> None:
    parsed = _parsed()
    assert not parsed.unknown, parsed.unknown
    clocks = [f for f in parsed.figures if f.method == "sm_clock"]
    assert {f.framework for f in clocks} == {"burn"}
    assert list(dict.fromkeys(f.method_text for f in clocks)) == BLOCKS
    assert [f.stat for f in clocks[:2]] == ["block_start", "block_end"]
    energy = [f.value for f in clocks if f.method_text == "energy (nvml)"]
    assert energy == [1980.0, 1755.0]


def test_the_report_names_burns_block_that_ended_below_full_clock() -> None:
    rows = dataset.from_parse(_parsed(), "burn.log").figures
    (line,) = clock_checks.block_clocks(rows)
    assert "energy (nvml) end 1755 MHz" in line and "(application clock 1980 MHz)" in line
    assert "with sync" not in line
