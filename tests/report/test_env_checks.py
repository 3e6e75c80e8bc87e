"""A store made with CUDA_LAUNCH_BLOCKING=1 reports the failed queued
proof and the variable, and no premise-based explanation for that figure.

The store is built through the store API from bench_py's real H200 output
(tests/data/h200/torch_cuda_fp32.log) with its queued line as a blocked run printed it (the
issue's 94.7 µs) and the proof line made by bench_py's own `queued_proof_line`: the path a sweep
takes, minus the GPU.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from bench_py.bench_core.queued import queued_proof_line
from orchestrator.data import dataset
from orchestrator.data.parse import parse_text
from orchestrator.data.store import Store
from orchestrator.records import Context, Role, RunDef, RunRecord
from orchestrator.report import clocks, env_checks, writer
from orchestrator.report.tables import prepare

from ..conftest import DATA, PROJECT, write

_QUEUED = re.compile(r"^(# samples )?cuda 1024x1024 matmul cuda\.Event time \(queued\).*\n",
                     re.MULTILINE)


def _log(waited_flags: list[bool], blocked: bool) -> str:
    text = (DATA / "h200" / "torch_cuda_fp32.log").read_text()
    queued = ("cuda 1024x1024 matmul cuda.Event time (queued), 20 runs: min 94.700µs median "
              "95.100µs\n" if blocked else
              "cuda 1024x1024 matmul cuda.Event time (queued), 20 runs: min 57.888µs median "
              "58.256µs\n")
    proof = queued_proof_line("cuda", "1024x1024", waited_flags) + "\n"
    first = _QUEUED.search(text)
    assert first is not None
    return text[:first.start()] + queued + proof + _QUEUED.sub("", text[first.start():])


def _store(tmp: Path, env: dict[str, str], log: str,
           *more: tuple[str, dict[str, str], str]) -> Path:
    """A store of one run per (experiment, env, log): `methods` first, then `more`."""
    folder = tmp / "results"
    with Store(folder).writing() as store:
        sweep, _ = store.begin_sweep(write(tmp / "e.yaml", "version: 1\n"), {}, [], True)
        for experiment, run_env, text in [("methods", env, log), *more]:
            run = RunDef(experiment=experiment, program="torch", device="cuda", mode="mm",
                         shape=(1024, 1024), reps=20, env=tuple(run_env.items()))
            parsed = parse_text(text, Context(framework="torch"))
            assert not parsed.unknown
            store.record_run(sweep, RunRecord(run=run, stdout=text.encode(),
                                              role=Role.MEASURE), parsed)
    return folder


@pytest.fixture()
def blocked(tmp_path: Path) -> Path:
    # with CUDA_LAUNCH_BLOCKING=1 every launch returns after its kernel: the spin is over
    # before the start event is queued, so start.query() is True in every run
    return _store(tmp_path, {"CUDA_LAUNCH_BLOCKING": "1"}, _log([True] * 20, blocked=True))


def test_the_proof_is_a_dataset_figure_and_the_env_a_column(blocked: Path) -> None:
    fig = dataset.load(blocked).figures
    proof = fig[(fig["method"] == "device_time_queued") & (fig["stat"] == "queued_waited")]
    assert list(proof["value_s"]) == [0.0] and list(proof["runs"]) == [20]
    assert set(fig["measure_env"]) == {"CUDA_LAUNCH_BLOCKING=1"}


def test_blocking_store_reports_the_failed_proof_and_the_variable(blocked: Path,
                                                                   tmp_path: Path) -> None:
    data = dataset.load(blocked)
    selected = clocks.select(prepare(data))
    table = clocks.clock_tables(selected)[0].frame
    row = table[table["clock"].str.startswith("device time queued")].iloc[0]
    assert row["clock"] == "device time queued (proof failed)"
    assert row["min"] == "94.700µs"
    assert "start event waited in 0 of 20 runs; CUDA_LAUNCH_BLOCKING=1 was set" in \
        row["what it holds"]
    writer.write(data, tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    assert "**queued proof failed** in methods: PyTorch cuda 1024x1024" in md
    assert "**environment changes the measurement**: CUDA_LAUNCH_BLOCKING=1" in md
    assert "docs.nvidia.com/cuda/cuda-programming-guide" in md  # the source, named
    # the method's premise is never given as the reason for this figure
    assert "the stream was held before the start event, so no launch gap is inside" not in md
    excess = [w for w in clocks.device_time_excess(selected) if "device time queued" in w]
    assert len(excess) == 1 and "its proof failed" in excess[0]


def test_a_held_stream_keeps_its_plain_label(tmp_path: Path) -> None:
    folder = _store(tmp_path, {}, _log([False] * 20, blocked=False))
    data = dataset.load(folder)
    selected = clocks.select(prepare(data))
    table = clocks.clock_tables(selected)[0].frame
    assert "device time queued" in set(table["clock"])
    assert env_checks.queued_proof(selected.rows) == []
    assert env_checks.environment(prepare(data)) == []
    assert set(data.figures["measure_env"]) == {""}


def test_a_partly_failed_proof_counts_the_runs(tmp_path: Path) -> None:
    folder = _store(tmp_path, {"CUBECL_AUTOTUNE_LEVEL": "full"},
                    _log([False] * 17 + [True] * 3, blocked=False))
    fig = prepare(dataset.load(folder))
    warnings = env_checks.queued_proof(clocks.select(fig).rows)
    assert len(warnings) == 1 and "waited in 17 of 20 runs;" in warnings[0]
    assert "was set" not in warnings[0]  # CUBECL_* does not break this proof
    env = env_checks.environment(fig)
    assert len(env) == 1 and env[0].startswith(
        "**environment changes the measurement**: CUBECL_AUTOTUNE_LEVEL=full was set in methods")


def test_a_failed_proof_in_another_experiment_is_still_reported(tmp_path: Path) -> None:
    """As on the H200 (scripts/h200/evidence.sh): the clocks section shows one experiment per
    target (here the held one), the blocked run is another experiment's: its failed proof is
    still a warning of the report, named by experiment; the held one gets none."""
    folder = _store(tmp_path, {}, _log([False] * 20, blocked=False),
                    ("queued-blocking", {"CUDA_LAUNCH_BLOCKING": "1"},
                     _log([True] * 20, blocked=True)))
    warnings = env_checks.queued_proof(prepare(dataset.load(folder)))
    assert len(warnings) == 1 and warnings[0].startswith(
        "**queued proof failed** in queued-blocking: PyTorch cuda 1024x1024"), warnings
    writer.write(dataset.load(folder), tmp_path / "report")
    assert warnings[0] in (tmp_path / "report" / "report.md").read_text()


def test_a_later_process_whose_proof_failed_fails_the_target(tmp_path: Path) -> None:
    """Three processes of one target: the first two held, the third's start event never waited
    (as a run under CUDA_LAUNCH_BLOCKING=1 prints it). The target's proof is every run's: it
    fails, in the clocks table and the warnings, and names the short run; before, the first
    row alone was read and the third process passed unsaid."""
    folder = tmp_path / "results"
    logs = [_log([False] * 20, blocked=False), _log([False] * 20, blocked=False),
            _log([True] * 20, blocked=True)]
    with Store(folder).writing() as store:
        sweep, _ = store.begin_sweep(write(tmp_path / "e.yaml", "version: 1\n"), {}, [], True)
        for process, text in enumerate(logs, start=1):
            run = RunDef(experiment="methods", program="torch", device="cuda", mode="mm",
                         shape=(1024, 1024), reps=20, processes=3, process=process)
            store.record_run(sweep, RunRecord(run=run, stdout=text.encode(), role=Role.MEASURE),
                             parse_text(text, Context(framework="torch")))
    fig = prepare(dataset.load(folder))
    found = env_checks.proof(fig)
    assert found is not None and found.failed
    assert (found.waited, found.runs, found.printed, found.short) == (40, 60, 3, 1)
    (warning,) = env_checks.queued_proof(fig)  # the report's warnings read every run
    assert "start event waited in 40 of 60 runs (short in 1 of the 3 runs that printed it)" \
        in warning
    # the clocks table shows one run per clock (the first process, whose proof held): its
    # label is that run's; the warning above is what names the third
    selected = clocks.select(fig)
    table = clocks.clock_tables(selected)[0].frame
    assert "device time queued" in set(table["clock"])
    assert env_checks.queued_proof(selected.rows) == []
    # the first two alone held: no failure
    held = env_checks.proof(fig[fig["run_id"] != fig["run_id"].iloc[-1]])
    assert held is not None and not held.failed and held.runs == 40


def test_the_h200_blocked_store_reports_its_failed_proof_and_variable(tmp_path: Path) -> None:
    """The real thing: docs/results/h200-2026-12-02/evidence, PyTorch on the H200 with and
    without CUDA_LAUNCH_BLOCKING=1 at 256² and 1024² (a private copy of its store). The
    blocked runs printed 0 of 20: the report names the variable and the failed proof of each,
    and the method's premise explains only figures whose proof held."""
    folder = tmp_path / "evidence"
    folder.mkdir()
    store = PROJECT / "docs" / "results" / "h200-2026-12-02" / "evidence"
    shutil.copyfile(store / "results.sqlite", folder / "results.sqlite")
    data = dataset.load(folder)
    proofs = data.figures[(data.figures["method"] == "device_time_queued")
                          & (data.figures["stat"] == "queued_waited")]
    assert sorted(zip(proofs["experiment"], proofs["value_s"], strict=True)) == [
        ("queued-blocking", 0.0), ("queued-blocking", 0.0),
        ("queued-normal", 20.0), ("queued-normal", 20.0)]
    writer.write(data, tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    assert "**environment changes the measurement**: CUDA_LAUNCH_BLOCKING=1 was set in " \
        "queued-blocking" in md
    for shape in ("256x256", "1024x1024"):
        assert (f"**queued proof failed** in queued-blocking: PyTorch cuda {shape}: device time "
                "queued: start event waited in 0 of 20 runs; CUDA_LAUNCH_BLOCKING=1 was set") in md
    assert "queued proof failed** in queued-normal" not in md
    # the premise ("the stream was held") only beside a held run's figure: 9.632µs is the
    # held 256² min; the blocked ones (45 µs, 82 µs) are never explained by it
    premise = [line for line in md.splitlines()
               if "the stream was held before the start event" in line]
    blocked = {f"{v * 1e6:.3f}µs" for v in data.figures[
        (data.figures["experiment"] == "queued-blocking")
        & (data.figures["method"] == "device_time_queued")
        & (data.figures["stat"] == "min")]["value_s"]}
    assert premise and not [line for line in premise if any(b in line for b in blocked)]


def _old_format_log() -> str:
    """The blocked run as the code of 2026-12-01 printed it: the queued figure, its proof on
    stderr only (not in the stdout a store parses)."""
    text = _log([True] * 20, blocked=True)
    kept = [line for line in text.splitlines(keepends=True)
            if "start event waited in" not in line]
    assert len(kept) == len(text.splitlines()) - 1  # the proof line, and only it, is gone
    return "".join(kept)


def test_an_old_blocked_store_names_the_variable_and_no_premise(tmp_path: Path) -> None:
    """No proof printed and CUDA_LAUNCH_BLOCKING=1 recorded: the report says
    the variable defeats the method, never that the held stream kept the launch gap out."""
    folder = _store(tmp_path, {"CUDA_LAUNCH_BLOCKING": "1"}, _old_format_log())
    data = dataset.load(folder)
    assert not (data.figures["stat"] == "queued_waited").any()  # no proof in the store
    selected = clocks.select(prepare(data))
    row = clocks.clock_tables(selected)[0].frame.set_index("clock")
    assert row.loc["device time queued (CUDA_LAUNCH_BLOCKING=1)", "what it holds"] == (
        "not the launch-gap-free time: CUDA_LAUNCH_BLOCKING=1 defeats the held stream")
    (excess,) = [w for w in clocks.device_time_excess(selected) if "device time queued" in w]
    assert "CUDA_LAUNCH_BLOCKING=1 was set, which defeats the held stream, so the launch gap " \
        "may be inside" in excess
    writer.write(data, tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    assert "**environment changes the measurement**: CUDA_LAUNCH_BLOCKING=1" in md
    assert "so no launch gap is inside" not in md and "the stream was held" not in md


def test_no_proof_printed_gives_no_premise_explanation(tmp_path: Path) -> None:
    # the same queued figure with nothing set: still no proof, so no premise
    folder = _store(tmp_path, {}, _old_format_log())
    selected = clocks.select(prepare(dataset.load(folder)))
    (excess,) = [w for w in clocks.device_time_excess(selected) if "device time queued" in w]
    assert "no proof that the stream was held was printed" in excess
    assert "so no launch gap is inside" not in excess


def test_reparse_reads_back_an_old_proof_said_on_stderr(tmp_path: Path) -> None:
    """The code of 2026-12-01 said a failed queued proof on stderr only (its
    `queued_note`, here as it wrote it); the store keeps stderr, and `reparse` reads it back
    as the proof line it stands for: the report then says the proof failed."""
    from orchestrator.cli import main

    stdout = _old_format_log()
    note = ("cuda.Event time (queued): in 20 of 20 runs the GPU had reached the start event "
            "before the end event was queued (the spin ended too soon); those runs may hold "
            "part of the launch gap\n")
    folder = tmp_path / "results"
    with Store(folder).writing() as store:
        sweep, _ = store.begin_sweep(write(tmp_path / "e.yaml", "version: 1\n"), {}, [], True)
        run = RunDef(experiment="methods", program="torch", device="cuda", mode="mm",
                     shape=(1024, 1024), reps=20, env=(("CUDA_LAUNCH_BLOCKING", "1"),))
        store.record_run(sweep, RunRecord(run=run, stdout=stdout.encode(),
                                          stderr=note.encode(), role=Role.MEASURE),
                         parse_text(stdout, Context(framework="torch")))
    assert not (dataset.load(folder).figures["stat"] == "queued_waited").any()
    assert main(["reparse", str(folder)]) == 0
    fig = dataset.load(folder).figures
    proof = fig[fig["stat"] == "queued_waited"]
    assert list(proof["value_s"]) == [0.0] and list(proof["runs"]) == [20]
    selected = clocks.select(prepare(dataset.load(folder)))
    (excess,) = [w for w in clocks.device_time_excess(selected) if "device time queued" in w]
    assert "its proof failed (start event waited in 0 of 20 runs; CUDA_LAUNCH_BLOCKING=1 was " \
        "set)" in excess
    with Store(folder).reading() as store:  # the raw output is kept as it was
        (row,) = store.query("SELECT stdout FROM runs")
    assert bytes(row["stdout"]).decode() == stdout
