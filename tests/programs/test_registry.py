"""A framework is one Program in the registry: a small extra one (a NumPy program that prints
the line contract), in a registry of the test's own, is planned, swept, parsed into the dataset
and reported through the interface alone, without any other module knowing its name. The
registry itself: discovered from the framework folders, never changed once built."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from orchestrator import axes, programs, vocabulary
from orchestrator.data import dataset
from orchestrator.errors import ConfigError
from orchestrator.experiments import config
from orchestrator.experiments import plan as plan_module
from orchestrator.programs import Paths, Program, registry
from orchestrator.records import Header, RunDef
from orchestrator.report import writer
from orchestrator.run.sweep import Sweep, plan

from ..conftest import PROJECT, write

# The benchmark program: real NumPy matmuls, timed, printed as docs/LINES.md says.
SCRIPT = '''
import argparse, time
import numpy as np
p = argparse.ArgumentParser()
for flag in ("--device", "--mode", "--shape", "--reps"):
    p.add_argument(flag)
p.add_argument("--samples", action="store_true")
a = p.parse_args()
m, n = (int(v) for v in a.shape.split("x"))
x, y = np.ones((m, n), np.float32), np.ones((n, m), np.float32)
times = []
for _ in range(int(a.reps)):
    start = time.perf_counter()
    (x @ y).sum()
    times.append(time.perf_counter() - start)
print(f"numpy {np.__version__}")
med = sorted(times)[len(times) // 2]
print(f"cpu {a.shape} matmul with sync, {a.reps} runs: min {min(times) * 1e6:.3f}µs "
      f"median {med * 1e6:.3f}µs")
if a.samples:
    print(f"# samples cpu {a.shape} matmul with sync: " + " ".join(repr(t) for t in times))
'''


class NumPy(Program):
    name = "numpy"
    title = "NumPy"
    devices = ("cpu",)
    device_needs: ClassVar[dict[str, tuple[str, ...]]] = {"cpu": ()}
    thread_vars = ("OPENBLAS_NUM_THREADS",)
    script: ClassVar[Path]

    def command(self, run: RunDef, paths: Paths) -> list[str]:
        return [paths.python, str(self.script)]

    def parse_header(self, line: str, line_no: int) -> Header | None:
        version = line.removeprefix("numpy ")
        return Header("numpy", version, None, line_no) if version[:1].isdigit() else None

    def facts(self, project: Path, python: str) -> dict[str, str]:
        return {"script": self.script.name}


@pytest.fixture
def numpy_program(tmp_path: Path) -> Iterator[NumPy]:
    NumPy.script = write(tmp_path / "bench_numpy.py", SCRIPT)
    program = NumPy()
    with programs.use(programs.default_registry().with_programs(program)):  # this test's own
        yield program


EXPERIMENTS = """\
version: 1
experiments:
  np:
    mode: mm
    targets: [{program: numpy, device: cpu}]
    shapes: [[16, 16]]
    reps: 7
    threads: [1]
"""


def no_framework_probed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The scripts torch's and JAX's facts would have run (each imports its framework): a
    sweep that runs neither asks neither."""
    asked: list[str] = []
    for name in ("torch", "jax"):
        module = sys.modules[type(programs.default_registry().get(name)).__module__]
        monkeypatch.setattr(module, "python_facts",
                            lambda python, script, name=name: asked.append(name) or {})
    return asked


def test_contract_framework_is_planned_swept_and_in_the_dataset(
        tmp_path: Path, numpy_program: NumPy, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = no_framework_probed(monkeypatch)  # only the NumPy program runs
    # the schema of this test's registry names it; the committed one, the default's, never
    def enum(schema: str) -> list[str]:
        return list(json.loads(schema)["$defs"]["Target"]["properties"]["program"]["enum"])

    assert enum(config.json_schema()) == ["torch", "burn", "jax"]
    assert enum(config.json_schema(programs.active())) == ["torch", "burn", "jax", "numpy"]
    exp = write(tmp_path / "experiments.yaml", EXPERIMENTS)
    _cfg, planned = plan(exp)
    assert [(p.run.program, p.run.device, p.skip_reason) for p in planned] == [
        ("numpy", "cpu", None)]
    summary = Sweep(PROJECT, tmp_path / "results", sys.executable, show=False).run(exp)
    assert summary.exit_code == 0, summary.failures
    data = dataset.load(tmp_path / "results")
    run = data.runs.iloc[0]
    assert (run["framework"], run["status"]) == ("numpy", "ok")
    figures = data.figures
    assert set(zip(figures["framework"], figures["method"], figures["stat"], strict=True)) == {
        ("numpy", "with_sync", "min"), ("numpy", "with_sync", "median")}
    assert (figures["threads"] == 1).all()
    assert len(data.samples) == 7 and (data.samples["summary_line"] == 2).all()
    assert data.host["numpy"] == {"script": "bench_numpy.py"}
    # the facts of the program it ran; the others' not asked, and said so
    assert asked == [] and not {"torch", "burn", "jax"} & set(data.host)
    assert data.host["facts_not_probed"] == ["torch", "burn", "jax"]
    writer.write(data, tmp_path / "report")
    cpu = (tmp_path / "report" / "cpu_threads.csv").read_text()
    assert "NumPy cpu" in cpu  # the report names it by its title


def test_an_unregistered_program_is_a_clear_config_error(tmp_path: Path) -> None:
    exp = write(tmp_path / "experiments.yaml", EXPERIMENTS)
    with pytest.raises(ConfigError, match=r"expected 'torch', 'burn' or 'jax' \(got 'numpy'\)"):
        config.load(exp)


def test_the_default_registry_is_discovered_in_place_order() -> None:
    """The framework folders of orchestrator/programs/, each its Program, ordered by `place`:
    the report's and compare's order of frameworks."""
    found = registry.discover()
    assert found.names() == programs.default_registry().names() == ("torch", "burn", "jax")
    assert [p.place for p in found.programs] == sorted(p.place for p in found.programs)
    assert found.axes == axes.AXES and found.columns == vocabulary.COLUMNS
    assert found.methods == vocabulary.METHODS and found.sections is None  # report/sections/
    assert found.get("torch") is not programs.default_registry().get("torch")  # built anew


def test_a_registry_of_ones_own_leaves_the_default_alone(tmp_path: Path) -> None:
    """A registry is never changed: `with_programs` makes another, `use` makes it the active
    one inside its block only (nested ones too), and what is read from it follows."""
    default = programs.default_registry()
    mine = default.with_programs(NumPy())
    other = mine.with_axes(axes.Axis("batch", key="batch"))
    assert default.names() == ("torch", "burn", "jax") and "batch" not in axes.names()
    with programs.use(mine):
        assert programs.names() == ("torch", "burn", "jax", "numpy")
        assert programs.get("numpy") is mine.get("numpy")
        with programs.use(other):
            assert axes.names()[-1] == "batch"
        assert "batch" not in axes.names()
        config.load(write(tmp_path / "experiments.yaml", EXPERIMENTS))  # numpy: known here
    assert programs.names() == ("torch", "burn", "jax") and programs.active() is default
    with pytest.raises(KeyError, match="no program 'numpy'"):
        programs.get("numpy")
    # a replaced program keeps its place: the reference stays first
    swapped = default.with_programs(type(default.get("torch"))())
    assert swapped.names() == default.names() and swapped.get("torch") is not default.get("torch")


def test_a_loaded_file_and_plan_read_the_registry_they_are_given(tmp_path: Path) -> None:
    """`config.load(..., registry=)` and `plan.expand(..., registry=)`: the same file is valid
    against a registry that has its program and refused against the default."""
    exp = write(tmp_path / "experiments.yaml", EXPERIMENTS)
    NumPy.script = write(tmp_path / "bench_numpy.py", SCRIPT)
    mine = programs.default_registry().with_programs(NumPy())
    cfg = config.load(exp, registry=mine)
    planned = plan_module.expand(cfg, {}, 2, registry=mine)
    assert [(p.run.program, p.skip_reason) for p in planned] == [("numpy", None)]
    with pytest.raises(ConfigError, match="got 'numpy'"):
        config.load(exp)
