"""The energy table: gross and net joules, idle power, the busy share, and
notes for blocks whose counter reads were not aligned or that were under 5 s. On a store of the
H200's real program output (test_state_report's), whose 2 s blocks predate the aligned reads,
and on the same with the `# energy` line bench_py now prints after its energy line."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from orchestrator import dataset
from orchestrator.data.store import Store
from orchestrator.report import energy
from orchestrator.report.tables import prepare

from .test_state_report import H200, HOST, _cuda, _record, _state, results  # noqa: F401


def _table(folder: Path) -> tuple[pd.DataFrame, list[str]]:
    table = energy.energy_table(prepare(dataset.load(folder)))
    return table.frame, table.notes


def test_old_blocks_are_gross_only_with_a_busy_share_from_kernel_time(
        results: Path) -> None:  # noqa: F811
    frame, notes = _table(results)
    rows = {r["matmuls"]: r for _, r in frame.iterrows()}
    # torch FP32: 35200 x its CUPTI median 55.360 µs over 2.001 s
    assert rows[35200]["busy"] == "97% (kernel time)"
    assert rows[44500]["busy"] == ""  # burn: no kernel time in this store
    assert rows[35200]["net J"] == "" and rows[35200]["idle W"] == ""
    assert any(n.startswith("**energy not aligned, idle not subtracted**") for n in notes)
    assert any(n.startswith("**short energy block**") and "2.0 s" in n for n in notes)


def test_an_aligned_block_shows_net_joules_idle_power_and_its_own_busy_share(
        tmp_path: Path, monkeypatch) -> None:
    log = (H200 / "torch_cuda_fp32.log").read_text().replace(
        "cuda 1024x1024 matmul energy (nvml): 1105.207 J, 35200 runs, 2.001s",
        "cuda 1024x1024 matmul energy (nvml): 2762.500 J, 88000 runs, 5.100s\n"
        "# energy cuda 1024x1024 matmul energy (nvml): idle 121.000 W over 1.000s, "
        "net 2145.400 J, busy 0.955")
    assert "# energy" in log
    folder = tmp_path / "results"
    (tmp_path / "e.yaml").write_text("version: 1\n")
    store = Store(folder)
    with store.writing():
        sweep, _ = store.begin_sweep(tmp_path / "e.yaml", HOST, [], new=True)
        _record(store, sweep, _cuda("torch"), log, _state(monkeypatch))
        store.end_sweep(sweep, "complete")
    frame, notes = _table(folder)
    (row,) = frame.to_dict("records")
    assert (row["joules"], row["net J"], row["idle W"], row["busy"]) == \
        ("2762.500", "2145.400", "121", "96%")
    assert row["J per matmul"] == "31.392 mJ" and row["net J per matmul"] == "24.380 mJ"
    assert notes == []


def test_energy_of_no_matmuls_is_a_question_mark_with_a_note() -> None:
    rows = pd.DataFrame([{"unit": "u", "line_no": 1, "method": "energy", "stat": stat,
                          "value_s": value, "runs": 0, "shape": "8x8", "framework": "torch",
                          "label": "cuda"} for stat, value in (("joules", 0.0), ("seconds", 0.0))])
    table = energy.energy_table(rows)
    assert table.frame.iloc[0]["J per matmul"] == "?"
    assert table.notes and "no per-matmul energy" in table.notes[0]
