"""A build marked `expect_failure` that builds: reported as a measured build, not as a failure.

The chapter's accelerate build failed offline; on a networked Mac it may build. Then its run
is an ordinary measured build in the CPU table, under its own name, with a note beside the
table and in the list of skipped and failed runs, and it is no row of that list.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from orchestrator.cli import main
from orchestrator.data import dataset
from orchestrator.report import writer as report

from ..conftest import write
from .test_writer import Store, csv, section


def _write(tmp_path: Path, accelerate_status: str) -> str:
    s = Store()
    default = s.run("b-default", "cpu", "burn", "flex", "cpu", build="default", threads=8,
                    threads_requested=8)
    s.summary(default, "with_sync", 4e-3)
    # failed-build names no threads: the count is the one the program reported
    accelerate = s.run("b-acc", "failed-build", "burn", "flex+accelerate", "cpu",
                       build="accelerate", threads=8, expect_failure=True,
                       status=accelerate_status,
                       reason="" if accelerate_status == "ok" else "build accelerate failed")
    if accelerate_status == "ok":
        s.summary(accelerate, "with_sync", 2e-3)
    else:
        s.add(accelerate, "", "", float("nan"))
    report.write(s.dataset({}), tmp_path)
    return (tmp_path / "report.md").read_text(encoding="utf-8")


NOTE = ("**expected to fail, but ran**: burn cpu (build accelerate) (failed-build); its build "
        "worked on this machine, so its figures are measured ones, shown as "
        "'burn Flex + accelerate'.")


def test_an_expected_failure_that_builds_is_a_measured_build(tmp_path: Path) -> None:
    md = _write(tmp_path, "ok")
    t = csv(tmp_path, "cpu_threads", "build")
    assert t["8 threads"].to_dict() == {"burn Flex, default features": "4.000ms",
                                        "burn Flex + accelerate": "2.000ms"}
    assert NOTE in section(md, "3. CPU builds")  # beside its figures
    assert NOTE in section(md, "7. Runs skipped")
    assert not (tmp_path / "failures.csv").exists()  # no run failed or was skipped
    assert "- Runs skipped or failed: none (every run succeeded)." in section(md, "Findings")


def test_an_expected_failure_that_fails_is_listed_and_not_measured(tmp_path: Path) -> None:
    md = _write(tmp_path, "failed")
    t = csv(tmp_path, "cpu_threads", "build")
    assert list(t.index) == ["burn Flex, default features"]
    assert "expected to fail, but ran" not in md
    failures = pd.read_csv(tmp_path / "failures.csv", dtype=str, keep_default_na=False)
    assert failures[["status", "run", "expected"]].values.tolist() == [
        ["failed", "burn cpu (build accelerate)", "yes"]]


# A real build in accelerate's place: exec-amx with x86-v4 builds here, accelerate cannot.
SMALL = """\
version: 1
defaults: {shape: [64, 64], reps: 3, timeout_s: 300}
builds:
  x86-v4: {crate: exec-amx, features: [x86-v4], expect_failure: true}
experiments:
  failed-build:
    mode: mm
    targets:
      - {program: burn, build: x86-v4, device: flex}
"""


@pytest.mark.cargo
def test_a_real_sweep_reports_the_build_that_worked(tmp_path: Path, burn_builds) -> None:
    exp = write(tmp_path / "small.yaml", SMALL)
    assert main(["run", str(exp), "--results", str(tmp_path / "results"), "--quiet"]) == 0
    data = dataset.load(tmp_path / "results")
    assert set(data.figures["status"]) == {"ok"}
    report.write(data, tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    t = csv(tmp_path / "report", "cpu_threads", "build")
    assert list(t.index) == ["burn Flex + x86-v4"]
    assert t.iloc[0, 0].endswith(("ns", "µs", "ms")), t  # a measured duration
    note = ("**expected to fail, but ran**: burn cpu (build x86-v4) (failed-build); its build "
            "worked on this machine, so its figures are measured ones, shown as "
            "'burn Flex + x86-v4'.")
    assert note in section(md, "3. CPU builds") and note in section(md, "7. Runs skipped")
