"""What one dataset may hold (dataset.READ_FIGURES, READ_SAMPLES): a store's sweep past it is
refused by every reader (report, compare, export) in one line that names the limit and the way
out, before a row is read, the store's bytes unchanged and nothing written (at the plan's
MAX_RUNS a report would have needed some 22 GiB). The limit holds whatever the plan lets a
sweep run; BENCHMARKS.md has the cost at it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from orchestrator import cli
from orchestrator.data import dataset
from orchestrator.data.store import Store
from orchestrator.records import RunDef, RunRecord
from orchestrator.run.sweep import parse_record

from ..conftest import write


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _store(folder: Path, lines: int, samples: int = 0) -> Path:
    """One torch cpu run printing `lines` summary lines (min and median: two figures each),
    each at a shape of its own, the first with `samples` raw samples."""
    out = ["torch 2.15.0, threads 1"]
    for i in range(lines):
        m = 64 + i
        out.append(f"cpu {m}x{m} matmul with sync, 20 runs: min 1.000ms median 1.100ms")
        if i == 0 and samples:
            out.append(f"# samples cpu {m}x{m} matmul with sync: "
                       + " ".join("0.001" for _ in range(samples)))
    store = Store(folder)
    with store.writing():
        sweep, _ = store.begin_sweep(write(folder.parent / f"{folder.name}.yaml",
                                           "version: 1\n"), {}, [], True)
        run = RunDef(experiment="cpu", program="torch", device="cpu", mode="mm",
                     shape=(64, 64), reps=20, threads=1)
        record = RunRecord(run=run, stdout=("\n".join(out) + "\n").encode())
        store.record_run(sweep, record, parse_record(record))
        store.end_sweep(sweep, "complete")
    return folder


def _refused(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
             figures: int, samples: int) -> None:
    """report, compare and export of `folder` each refused, in the one line, and nothing
    written: not the store, not their outputs."""
    before = _digest(folder / "results.sqlite")
    for args, out in ((["report", str(folder), "--out"], tmp_path / "r"),
                      (["compare", str(folder), str(folder), "--out"], tmp_path / "c"),
                      (["export", str(folder), "--csv"], tmp_path / "e.csv")):
        assert cli.main([*args, str(out)]) == 2, args
        err = capsys.readouterr().err
        assert f"holds {figures} figures and {samples} sample values, more than the " \
               f"{dataset.READ_FIGURES} and {dataset.READ_SAMPLES} a report, compare or " \
               "export reads" in " ".join(err.split()), err
        assert "--only NAME --results" in " ".join(err.split()) and "Traceback" not in err
        assert not out.exists() or not any(out.iterdir() if out.is_dir() else [out]), out
    assert _digest(folder / "results.sqlite") == before


def test_a_sweep_past_the_figure_limit_is_refused_by_every_reader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder = _store(tmp_path / "big", lines=6)  # 12 figures
    monkeypatch.setattr(dataset, "READ_FIGURES", 11)
    _refused(folder, tmp_path, capsys, figures=12, samples=0)
    monkeypatch.setattr(dataset, "READ_FIGURES", 12)  # at the limit: read as ever
    assert cli.main(["report", str(folder), "--out", str(tmp_path / "r")]) == 0
    assert (tmp_path / "r" / "report.md").is_file()


def test_a_sweep_past_the_sample_limit_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder = _store(tmp_path / "big", lines=1, samples=30)
    monkeypatch.setattr(dataset, "READ_SAMPLES", 29)
    _refused(folder, tmp_path, capsys, figures=2, samples=30)


@pytest.mark.slow
def test_a_sweep_past_the_real_limit_is_refused(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """At the limit itself: one run printing 50,001 summary lines, 100,002 figures (3.7 MB of
    output, inside a run's output cap): report, compare and export each refuse it."""
    lines = dataset.READ_FIGURES // 2 + 1
    folder = _store(tmp_path / "big", lines=lines)
    _refused(folder, tmp_path, capsys, figures=2 * lines, samples=0)
