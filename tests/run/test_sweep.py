"""End to end at a small size: the real burn binaries and real PyTorch, through `run`."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.data import dataset

from ..conftest import write

SMALL = """\
version: 1
defaults: {shape: [64, 64], reps: 3, timeout_s: 300}
builds:
  template: {crate: exec-cpu}
  default: {crate: exec-gpu}
  x86-v4: {crate: exec-amx, features: [x86-v4]}
  cuda: {crate: exec-gpu, features: [cuda], requires: [cuda]}
experiments:
  cpu:
    mode: mm
    threads: [1, 2]
    targets:
      - {program: torch, device: cpu}
      - {program: burn, build: template, device: flex, threads: [1]}
      - {program: burn, build: default, device: flex}
  accuracy:
    mode: accuracy
    shapes: [[32, 32]]
    targets:
      - {program: torch, device: cpu}
      - {program: burn, build: template, device: flex}
      - {program: burn, build: x86-v4, device: flex}
  first-call:
    mode: mm
    processes: 2
    cache: [cold]
    targets:
      - {program: burn, build: cuda, device: cuda}
"""

pytestmark = [pytest.mark.cargo, pytest.mark.torch]


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory, burn_builds) -> tuple[Path, Path, int]:
    tmp = tmp_path_factory.mktemp("sweep")
    exp = write(tmp / "small.yaml", SMALL)
    code = main(["run", str(exp), "--results", str(tmp / "results"), "--quiet"])
    return exp, tmp / "results", code


def test_run_exits_zero_and_records_every_run(swept) -> None:
    _exp, results, code = swept
    assert code == 0
    data = dataset.load(results)
    runs = data.runs
    assert sorted(runs["status"].value_counts().items()) == [("ok", 8), ("skipped", 2)]
    skipped = runs[runs["status"] == "skipped"]
    assert set(skipped["reason"]) == {"needs an NVIDIA GPU (no /dev/nvidia0, no working "
                                      "nvidia-smi)"}
    assert data.host["cores_usable"] >= 1 and data.host["burn"] == "0.22.1"
    # the facts of the programs it ran, probed for real; JAX's not asked (no JAX target)
    assert data.host["torch"]["version"].startswith("2.") and data.host["torch"]["blas"]
    assert "jax" not in data.host and data.host["facts_not_probed"] == ["jax"]


def test_threads_are_the_ones_the_programs_report(swept) -> None:
    data = dataset.load(swept[1])
    f = data.figures
    sync = f[(f["method"] == "with_sync") & (f["stat"] == "min")]
    got = sorted(zip(sync["label"], sync["threads"], sync["threads_requested"], strict=True))
    assert got == [("cpu", 1, 1), ("cpu", 2, 2), ("flex", 1, 1), ("flex", 2, 2),
                   ("flex(template)", 1, 1)]
    assert (sync["value_s"] > 0).all() and (sync["runs"] == 3).all()
    assert set(sync["framework"]) == {"torch", "burn"}


def test_cpu_no_sync_equals_with_sync_and_samples_are_kept(swept) -> None:
    data = dataset.load(swept[1])
    samples = data.samples
    per_run = samples.groupby(["run_id", "method"]).size()
    assert (per_run == 3).all()
    assert {"no_sync", "with_sync", "readback"} <= set(samples["method"])


def test_accuracy_compares_dumped_arrays(swept) -> None:
    f = dataset.load(swept[1]).figures
    acc = f[f["method"] == "accuracy"]
    names = set(acc["method_text"])
    assert names == {"torch cpu", "burn flex(template)", "burn flex+x86-v4"}
    ref = acc[acc["stat"] == "max_abs_ref"]["value_s"]
    assert ref.nunique() <= 3 and (ref > 0.5).all()
    err = acc[acc["stat"] == "max_err_f64_ref"]["value_s"]
    assert (err < 1e-5).all() and (err > 0).all()
    torch_row = acc[(acc["method_text"] == "torch cpu") & (acc["stat"] == "max_diff_torch_cpu")]
    assert torch_row["value_s"].tolist() == [0.0]


def test_second_run_resumes_and_does_nothing(swept, capsys: pytest.CaptureFixture[str]) -> None:
    exp, results, _ = swept
    before = dataset.load(results).runs
    assert main(["run", str(exp), "--results", str(results)]) == 0
    err = capsys.readouterr().err
    assert "8 already done, 2 skipped" in err and "(resumed)" in err
    after = dataset.load(results).runs
    assert before["run_id"].tolist() == after["run_id"].tolist()


def test_export_writes_the_spec_columns(swept, tmp_path: Path) -> None:
    _exp, results, _ = swept
    out = tmp_path / "out.csv"
    assert main(["export", str(results), "--csv", str(out)]) == 0
    with out.open() as fh:
        header = next(csv.reader(fh))
    for col in ("run_id", "experiment", "framework", "label", "device", "shape", "op",
                "method", "stat", "value_s", "runs", "threads", "cache", "process", "warmup",
                "iteration", "load1_before", "load1_after", "status"):
        assert col in header
    assert (tmp_path / "out.samples.csv").stat().st_size > 100
    # interleaved by default, seed 0: the sweep's start recorded it, every row says it
    with out.open() as fh:
        assert {row["seed"] for row in csv.DictReader(fh)} == {"0"}
