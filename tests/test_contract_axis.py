"""A new sweep axis is a parameter, not a field: its registry entry in orchestrator/axes.py
(with its column in the vocabulary, and how it reaches a program: argv, env) plus its
experiments-file key, and the programs that take it say so (`Program.accepts`).

The stand-in `batch` axis is added from this test alone, in a registry of its own (the
default one is never changed): the plan sweeps it, the run's one line
names it, its run ids keep the old ones where it is unset, the dataset has its column and
compare's match key tells its points apart; through a real `run`, its value reaches a stand-in
program's argv and environment (the program echoes them: the test writes none of its output),
and a target whose program does not take it is refused in one line naming its YAML path.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
import yaml
from pydantic import StrictInt

from orchestrator import axes, programs, vocabulary
from orchestrator.cli import main
from orchestrator.data import dataset
from orchestrator.data.store import Store
from orchestrator.experiments import config, plan
from orchestrator.programs import Paths, Program
from orchestrator.programs.torch import Torch
from orchestrator.records import RunDef, RunRecord
from orchestrator.report.compare import match as compare_match
from orchestrator.report.compare import rows as compare_rows
from orchestrator.report.compare.sides import load_side
from orchestrator.run.sweep import parse_record

from .report.fake_stores import lines

BATCH = axes.Axis("batch", column="batch", compare="batch", key="batch",
                  argv=axes.flag("--batch"), env=axes.variable("BATCH_SIZE"))
COLUMN = vocabulary.Column("batch", "Int64", "a stand-in: matrices per call", "run")


class BatchExperiment(config.Experiment):
    """The experiments-file key of the stand-in axis: a list of values to sweep."""

    batch: tuple[StrictInt, ...] | None = None


class BatchFile(config.ExperimentsFile):
    experiments: dict[str, BatchExperiment]  # type: ignore[assignment]


FILE = """
version: 1
defaults: {order: {interleave: false}}
experiments:
  cpu:
    mode: mm
    shapes: [[256, 256]]
    targets: [{program: torch, device: cpu, threads: [1]}]
    batch: [1, 2]
  plain:
    mode: mm
    shapes: [[256, 256]]
    targets: [{program: torch, device: cpu, threads: [1]}]
"""


class BatchTorch(Torch):
    """PyTorch's program, as it would be if it took the stand-in axis (programs say so)."""

    accepts = (*Torch.accepts, "batch")


@pytest.fixture
def stand_in() -> Iterator[programs.Registry]:
    """This test's registry: the default one with the axis, its column and a torch taking it."""
    mine = (programs.default_registry().with_axes(BATCH).with_columns(COLUMN)
            .with_programs(BatchTorch()))
    with programs.use(mine):
        yield mine


# a stand-in program: echoes its argv and its BATCH_SIZE as lines, then one timing line
ECHO = """\
import os
import sys

for part in sys.argv[1:]:
    print("# argv", part)
print("# env BATCH_SIZE", os.environ.get("BATCH_SIZE", "unset"))
print("cpu 64x64 matmul with sync, 3 runs: min 1.000ms median 1.000ms")
"""


class Echo(Program):
    """A stand-in framework that takes the stand-in axis."""

    name = "echo"
    title = "Echo"
    devices = ("cpu",)
    device_needs: ClassVar[dict[str, tuple[str, ...]]] = {"cpu": ()}
    accepts = ("batch",)
    script: ClassVar[Path]

    def command(self, run: RunDef, paths: Paths) -> list[str]:
        return [sys.executable, str(self.script)]


@pytest.fixture
def echo(stand_in: programs.Registry, tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    script = tmp_path / "echo.py"
    script.write_text(ECHO, encoding="utf-8")
    monkeypatch.setattr(Echo, "script", script, raising=False)
    monkeypatch.setattr(config, "ExperimentsFile", BatchFile)  # the file knows the key
    with programs.use(stand_in.with_programs(Echo())):
        yield


RUN_FILE = """
version: 1
defaults: {shape: [64, 64], reps: 3, timeout_s: 60, order: {interleave: false}}
experiments:
  echo:
    mode: mm
    batch: [1, 4]
    targets: [{program: echo, device: cpu}]
"""


def _echoed(results: Path) -> dict[int, tuple[list[str], str]]:
    """Per batch value: what the program printed of its argv and its BATCH_SIZE, from the
    store (plain sqlite3)."""
    with sqlite3.connect(results / "results.sqlite") as db:
        rows = db.execute("SELECT definition_json, stdout FROM runs").fetchall()
    found = {}
    for definition, stdout in rows:
        text = stdout.decode() if isinstance(stdout, bytes) else stdout
        argv = [line.removeprefix("# argv ") for line in text.splitlines()
                if line.startswith("# argv ")]
        env = next(line.split()[-1] for line in text.splitlines() if line.startswith("# env"))
        found[json.loads(definition)["batch"]] = (argv, env)
    return found


def test_contract_axis_reaches_the_program(echo: None, tmp_path: Path) -> None:
    exp = tmp_path / "echo.yaml"
    exp.write_text(RUN_FILE, encoding="utf-8")
    results = tmp_path / "results"
    assert main(["run", str(exp), "--results", str(results), "--quiet"]) == 0
    echoed = _echoed(results)
    assert sorted(echoed) == [1, 4]
    for batch, (argv, env) in echoed.items():
        assert argv[argv.index("--batch") + 1] == str(batch) and argv.count("--batch") == 1
        assert env == str(batch)
    statuses = dataset.load(results).runs["status"].tolist()
    assert statuses == ["ok", "ok"]


def test_contract_axis_refused_where_the_program_takes_none(
        echo: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exp = tmp_path / "jax.yaml"
    exp.write_text(RUN_FILE.replace("{program: echo, device: cpu}",
                                    "{program: echo, device: cpu}, {program: jax, device: cpu}"),
                   encoding="utf-8")
    assert main(["plan", str(exp)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: experiments.echo.batch: targets[1] is jax, which takes no 'batch' "
                   "(it takes none); put it on the targets whose program takes it"]


def _planned() -> list[plan.PlannedRun]:
    return plan.expand(BatchFile.model_validate(yaml.safe_load(FILE)), {}, 4)


def test_contract_axis_plan_and_describe(stand_in: programs.Registry) -> None:
    planned = _planned()
    cpu = [p.run for p in planned if p.run.experiment == "cpu"]
    assert [r.params["batch"] for r in cpu] == [1, 2]
    assert [r.describe() for r in cpu] == ["cpu: torch cpu mm 256x256, threads 1, batch 1",
                                           "cpu: torch cpu mm 256x256, threads 1, batch 2"]
    assert len({r.run_id for r in cpu}) == 2
    plain = next(p.run for p in planned if p.run.experiment == "plain")
    assert plain.params["batch"] is None and plain.describe().endswith("threads 1")
    assert "batch" not in plain.definition()  # an unset new axis: stored as before


def test_contract_axis_leaves_old_run_ids_alone(stand_in: programs.Registry) -> None:
    with_axis = next(p.run for p in _planned() if p.run.experiment == "plain")
    cfg = config.ExperimentsFile.model_validate(
        {**yaml.safe_load(FILE), "experiments": {"plain": yaml.safe_load(FILE)["experiments"][
            "plain"]}})
    with programs.use(stand_in.without_axes("batch")):  # the registry before the axis
        without = plan.expand(cfg, {}, 4)[0].run
        assert (without.run_id, without.describe()) == (with_axis.run_id, with_axis.describe())


def _store(folder: Path, slow_batch: float) -> Path:
    """The stand-in's plan measured (printed lines made here): batch 2 `slow_batch`× batch 1."""
    cfg = folder.parent / f"{folder.name}.yaml"
    cfg.write_text(FILE, encoding="utf-8")
    s = Store(folder)
    with s.writing():
        sweep, _ = s.begin_sweep(cfg, {"cores_usable": 2}, [], new=True)
        for p in _planned():
            value = 1e-3 * (slow_batch if p.run.params["batch"] == 2 else 1.0)
            rec = RunRecord(run=p.run, stdout=lines({"with sync": value}).encode())
            s.record_run(sweep, rec, parse_record(rec))
        s.end_sweep(sweep, "complete")
    return folder


def test_contract_axis_dataset_column(stand_in: programs.Registry, tmp_path: Path) -> None:
    fig = dataset.load(_store(tmp_path / "a", 2.0)).figures
    assert str(fig["batch"].dtype) == "Int64"
    by_batch = fig[fig["experiment"] == "cpu"].groupby("batch")["value_s"].min()
    assert by_batch.to_dict() == pytest.approx({1: 1e-3, 2: 2e-3})
    assert fig.loc[fig["experiment"] == "plain", "batch"].isna().all()


def test_contract_axis_in_compare_key(stand_in: programs.Registry, tmp_path: Path) -> None:
    assert "batch" in compare_rows.key_fields() and "batch" in compare_rows.wildcard_fields()
    a = compare_rows.measurements(load_side(str(_store(tmp_path / "a", 2.0))))
    b = compare_rows.measurements(load_side(str(_store(tmp_path / "b", 4.0))))
    pairs, only_a, only_b = compare_match.match(a, b)
    cpu = {(x["batch"], y["batch"]): y["value"] / x["value"] for x, y, _ in pairs
           if x["experiment"] == "cpu"}
    assert cpu == pytest.approx({("1", "1"): 1.0, ("2", "2"): 2.0})  # each point its partner
    assert not only_a and not only_b
