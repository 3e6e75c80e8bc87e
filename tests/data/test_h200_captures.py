"""The programs' new lines as the H200 printed them (2026-12-02, scripts/h200/remake.sh's and
scripts/h200/burn-energy.sh's captures in tests/data/h200/2026-12-02): burn's queued proof and
backend, bench_py's SM clock per block, both programs' aligned energy, the accuracy kernel, and
ncu with L2 warm and flushed. Each parser is held
to what the real programs printed, not to lines written after the contract."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from orchestrator.data import ncu
from orchestrator.data.parse import parse_text

CAPTURES = Path(__file__).parent / "h200" / "2026-12-02"


def _parsed(name: str):
    parsed = parse_text((CAPTURES / name).read_text(encoding="utf-8"))
    return parsed


@pytest.mark.parametrize("name, waited", [("burn-1024.out", 20), ("burn-256.out", 0),
                                          ("burn-1024-blocking.out", 0)])
def test_burns_queued_proof_as_the_card_printed_it(name: str, waited: int) -> None:
    parsed = _parsed(name)
    (proof,) = [f for f in parsed.figures if f.stat == "queued_waited"]
    # 1024²: the filler held the stream in every run; 256² and CUDA_LAUNCH_BLOCKING=1: in none
    # (a 256² kernel is shorter than its launch, so no backlog builds: the proof says so)
    assert (proof.framework, proof.value, proof.runs) == ("burn", waited, 20)
    (head,) = [h for h in parsed.headers if h.kind == "burn_backend"]
    assert head.facts["compiler"] == "nvrtc"


def test_the_held_window_is_the_kernel_and_the_failed_one_holds_launch_gaps() -> None:
    def median(name: str) -> float:
        return next(f.value for f in _parsed(name).figures
                    if f.method == "device_time_queued" and f.stat == "median")
    held, blocked = median("burn-1024.out"), median("burn-1024-blocking.out")
    assert 30e-6 < held < 45e-6 < 100e-6 < blocked  # 37.0 µs vs 153.9 µs


@pytest.mark.parametrize("name", ["torch_fp32.log", "torch_tf32.log"])
def test_sm_clock_per_block_and_aligned_energy(name: str) -> None:
    parsed = _parsed(name)
    assert not parsed.unknown, parsed.unknown
    clocks = [f for f in parsed.figures if f.method == "sm_clock"]
    assert len(clocks) >= 10 and {f.value for f in clocks} == {1980.0}
    energy = {f.stat: f.value for f in parsed.figures if f.method == "energy"}
    assert 100 < energy["idle_watts"] < 150  # the H200's idle draw, measured first
    assert 0 < energy["joules_net"] < energy["joules"]
    # FP32 keeps the GPU busy; TF32's 12 µs kernels leave it launch-bound
    assert energy["busy_fraction"] > 0.9 if "fp32" in name else energy["busy_fraction"] < 0.6


@pytest.mark.parametrize("name, kernel", [("acc_1024x1024.log", "ffma"),
                                          ("acc_256x256.log", "ffma")])
def test_the_accuracy_kernel_is_named(name: str, kernel: str) -> None:
    found = [f for f in _parsed(name).figures if f.method == "accuracy_kernel"]
    assert found and all(kernel in str(f.kernel) for f in found)


def test_ncu_flushed_is_slower_than_warm_l2() -> None:
    def median(name: str) -> float:
        launches = ncu.read_launches((CAPTURES / name).read_text(encoding="utf-8"))
        return statistics.median(launch.seconds for launch in launches)
    assert median("ncu_all.csv") > median("ncu_none.csv")


# burn's energy block (scripts/h200/burn-energy.sh, two calls on the card): idle power first,
# every NVML counter read aligned to an update, and the busy share from the queued windows that
# held. `-first` is the first call's binary, which gave a busy share only where every run held
# (12 of 20 did there); the second call's binary takes the median of the held windows.
@pytest.mark.parametrize("name, waited, busy", [("burn-energy-1024.out", 20, 0.802),
                                                ("burn-energy-1024-first.out", 12, None),
                                                ("burn-energy-256.out", 0, None)])
def test_burns_energy_block_is_aligned_and_net_of_idle_power(
        name: str, waited: int, busy: float | None) -> None:
    parsed = _parsed(name)
    assert not parsed.unknown, parsed.unknown
    energy = {f.stat: f for f in parsed.figures if f.method == "energy"}
    assert {"joules", "seconds", "idle_watts", "idle_seconds", "joules_net"} <= set(energy)
    idle, seconds = energy["idle_watts"].value, energy["seconds"].value
    assert 100 < idle < 150  # the H200 at rest, measured just before the block
    assert 1.0 <= energy["idle_seconds"].value < 1.2  # whole counter steps past 1 s
    assert 5.0 <= seconds < 5.2  # --energy 5, ended at the next counter update
    # net = gross less idle power over the block (DUR is printed to the ms: ±0.5 ms x ~120 W)
    gross, net = energy["joules"].value, energy["joules_net"].value
    assert net == pytest.approx(gross - idle * seconds, abs=0.1)
    assert 0 < net < gross
    (proof,) = [f for f in parsed.figures if f.stat == "queued_waited"]
    assert proof.value == waited
    if busy is None:
        assert "busy_fraction" not in energy
        return
    assert energy["busy_fraction"].value == pytest.approx(busy)
    # busy = runs x the held windows' median / the block (all 20 held: the printed median)
    queued = next(f.value for f in parsed.figures
                  if f.method == "device_time_queued" and f.stat == "median")
    runs = energy["joules"].runs
    assert busy == pytest.approx(runs * queued / seconds, abs=0.001)


def test_burns_aligned_block_in_the_energy_table() -> None:
    """The report of the capture: burn's row has idle power, net joules and its own busy share,
    and no `energy not aligned` note (burn's blocks had one until this capture)."""
    from orchestrator.data.dataset import from_parse
    from orchestrator.report import energy as energy_report
    from orchestrator.report.tables import prepare

    data = from_parse(_parsed("burn-energy-1024.out"), "burn-energy-1024.out")
    table = energy_report.energy_table(prepare(data))
    (row,) = table.frame.to_dict("records")
    assert (row["joules"], row["net J"], row["idle W"], row["busy"]) == \
        ("2321.514", "1729.116", "116", "80%")
    assert table.notes == []
