"""burn's `# sm clock` lines (bench-core's smclock.rs, CUDA builds): one after each timed block,
as bench_py prints them, parsed as burn's `sm_clock` figures and judged by the report's block
check. On the exec-gpu binary's stdout captured on the H200 on 2026-12-03 by
scripts/h200/evidence34.sh (tests/data/h200/2026-12-03/burn-*.out, `--samples`, 1024² with
`--energy 5`): every block began and ended at the card's 1980 MHz application clock
(gpu.csv), so the check names none (a block below it: tests/run/test_gpu_clock_during.py)."""

from __future__ import annotations

import pytest

from orchestrator.data import dataset
from orchestrator.data.parse import parse_text
from orchestrator.report import clock_checks

from ..conftest import DATA

CAPTURES = DATA / "h200" / "2026-12-03"
BLOCKS = ["no sync", "with sync", "device time (profile_with flush)",
          "device time (profile_with flush, queued)", "device time (profile, no flush)",
          "+ sum().into_scalar()"]


def _parsed(name: str):
    return parse_text((CAPTURES / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize(("name", "blocks"), [("burn-1024.out", [*BLOCKS, "energy (nvml)"]),
                                               ("burn-256.out", BLOCKS)])
def test_every_timed_block_has_its_clock_line_parsed_as_burns(name: str,
                                                              blocks: list[str]) -> None:
    parsed = _parsed(name)
    assert not parsed.unknown, parsed.unknown  # every line of the capture is a known form
    clocks = [f for f in parsed.figures if f.method == "sm_clock"]
    assert {f.framework for f in clocks} == {"burn"}
    assert list(dict.fromkeys(f.method_text for f in clocks)) == blocks  # in the binary's order
    assert [f.stat for f in clocks] == ["block_start", "block_end"] * len(blocks)
    assert {f.value for f in clocks} == {1980.0}  # start and end of every block, full clock
    rows = dataset.from_parse(parsed, name).figures
    assert clock_checks.block_clocks(rows) == []


@pytest.mark.parametrize(("name", "waited"), [("burn-1024.out", 20), ("burn-256.out", 0)])
def test_the_queued_proof_beside_its_clock_line(name: str, waited: int) -> None:
    """1024²: the fillers held the stream in every run (36.8 µs, the kernel); 256²: in none (a
    256² matmul is shorter than its launch: no backlog builds, and the note names each run)."""
    parsed = _parsed(name)
    (proof,) = [f for f in parsed.figures if f.stat == "queued_waited"]
    assert (proof.value, proof.runs) == (waited, 20)
    err = (CAPTURES / name.replace(".out", ".err")).read_text(encoding="utf-8")
    assert ("in 20 of 20 runs the start event did not wait" in err) == (waited == 0)


def test_the_energy_block_of_the_capture() -> None:
    """`--energy 5` at 1024²: 2295.960 J gross over 5.098 s for 103200 matmuls, idle 125 W
    measured first, net 1658.687 J, busy 0.746 (runs × the held windows' median / DUR)."""
    parsed = _parsed("burn-1024.out")
    energy = {f.stat: f for f in parsed.figures if f.method == "energy"}
    assert {stat: f.value for stat, f in energy.items()} == {
        "joules": 2295.96, "seconds": 5.098, "idle_watts": 124.997, "idle_seconds": 1.1,
        "joules_net": 1658.687, "busy_fraction": 0.746}
    assert {f.runs for f in energy.values()} == {103200}
    net = energy["joules"].value - energy["idle_watts"].value * energy["seconds"].value
    assert energy["joules_net"].value == pytest.approx(net, abs=0.1)
    queued = next(f.value for f in parsed.figures
                  if f.method == "device_time_queued" and f.stat == "median")
    assert 103200 * queued / 5.098 == pytest.approx(0.746, abs=0.001)
