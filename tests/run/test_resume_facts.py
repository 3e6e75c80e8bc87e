"""A sweep records the own facts of the programs its plan runs (torch's and JAX's each import
the framework: ~2 s of CPU), names the others as not probed, and a resume that runs more
programs (a wider `--only`) adds their facts to the sweep's, asking none twice."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator import programs
from orchestrator.data import dataset
from orchestrator.run import machine
from orchestrator.run.sweep import Sweep

from ..conftest import PROJECT, write
from ..programs.test_registry import SCRIPT, NumPy, no_framework_probed

TWO = """\
version: 1
experiments:
  np:
    mode: mm
    targets: [{program: numpy, device: cpu}]
    shapes: [[8, 8]]
    reps: 3
    threads: [1]
  np2:
    mode: mm
    targets: [{program: numpy2, device: cpu}]
    shapes: [[8, 8]]
    reps: 3
    threads: [1]
"""


class Counted(NumPy):
    """The NumPy stand-in, its facts counted."""

    asked: list[str]

    def facts(self, project: Path, python: str) -> dict[str, str]:
        Counted.asked.append(self.name)
        return {"script": self.script.name, "name": self.name}


class Second(Counted):
    name = "numpy2"
    title = "NumPy too"


@pytest.fixture
def two_programs(tmp_path: Path) -> Iterator[None]:
    NumPy.script = write(tmp_path / "bench_numpy.py", SCRIPT)
    Counted.asked = []
    both = programs.default_registry().with_programs(Counted()).with_programs(Second())
    with programs.use(both):
        yield


def test_a_resume_with_a_wider_only_adds_the_facts_of_the_programs_it_runs(
        tmp_path: Path, two_programs: None, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = no_framework_probed(monkeypatch)
    exp = write(tmp_path / "two.yaml", TWO)
    sweep = Sweep(PROJECT, tmp_path / "results", sys.executable, show=False)
    assert sweep.run(exp, only=["np"]).exit_code == 0
    first = dataset.load(tmp_path / "results").host
    assert first["numpy"]["name"] == "numpy" and "numpy2" not in first
    assert first["facts_not_probed"] == ["torch", "burn", "jax", "numpy2"]

    summary = sweep.run(exp)  # resumed, now with numpy2's runs
    assert summary.resumed and summary.exit_code == 0 and summary.counts["already done"] == 1
    host = dataset.load(tmp_path / "results").host
    assert host["numpy2"] == {"script": "bench_numpy.py", "name": "numpy2"}
    assert host["facts_not_probed"] == ["torch", "burn", "jax"]
    # numpy's recorded facts kept, not asked again; the machine's stay the first start's
    assert Counted.asked == ["numpy", "numpy2"] and asked == []
    assert {k: v for k, v in host.items() if k not in ("numpy2", "facts_not_probed")} == \
        {k: v for k, v in first.items() if k != "facts_not_probed"}

    assert sweep.run(exp).counts["already done"] == 2  # nothing new: nothing asked, kept
    assert Counted.asked == ["numpy", "numpy2"]
    assert dataset.load(tmp_path / "results").host == host


def test_the_facts_asked_and_how_a_resume_widens_them() -> None:
    assert machine.to_probe({"torch", "jax"}, None) == {"torch", "jax"}  # a new sweep
    recorded = {"os": "Linux", "torch": {"version": "2.15.0"}, "facts_not_probed": ["burn", "jax"]}
    assert machine.to_probe({"torch", "jax"}, recorded) == {"jax"}
    # an older sweep asked every program then known: only one added since is asked
    assert machine.to_probe({"torch", "burn"}, {"torch": {}, "burn": "0.22.1"}) == set()
    probed = {"os": "Linux (later)", "jax": {"version": "0.9"}, "facts_not_probed": ["torch"]}
    assert machine.widened(recorded, probed) == {
        "os": "Linux", "torch": {"version": "2.15.0"}, "jax": {"version": "0.9"},
        "facts_not_probed": ["burn"]}
    assert machine.widened(recorded, {"os": "Linux", "facts_not_probed": ["jax"]}) is None
