"""A new sweep axis is a parameter, not a field: its registry entry in orchestrator/axes.py
(with its column in the vocabulary) plus its experiments-file key, and nothing else.

The stand-in `batch` axis is added from this test alone: the plan sweeps it, the run's one line
names it, its run ids keep the old ones where it is unset, the dataset has its column and
compare's match key tells its points apart.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import StrictInt

from orchestrator import axes, vocabulary
from orchestrator.data import dataset
from orchestrator.data.store import Store
from orchestrator.experiments import config, plan
from orchestrator.records import RunRecord
from orchestrator.report.compare import match as compare_match
from orchestrator.report.compare import rows as compare_rows
from orchestrator.report.compare.sides import load_side
from orchestrator.run.sweep import parse_record

from .report.fake_stores import lines

BATCH = axes.Axis("batch", column="batch", compare="batch", key="batch")
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


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(axes, "AXES", (*axes.AXES, BATCH))
    monkeypatch.setattr(vocabulary, "COLUMNS", (*vocabulary.COLUMNS, COLUMN))


def _planned() -> list[plan.PlannedRun]:
    return plan.expand(BatchFile.model_validate(yaml.safe_load(FILE)), {}, 4)


def test_contract_axis_plan_and_describe(stand_in: None) -> None:
    planned = _planned()
    cpu = [p.run for p in planned if p.run.experiment == "cpu"]
    assert [r.params["batch"] for r in cpu] == [1, 2]
    assert [r.describe() for r in cpu] == ["cpu: torch cpu mm 256x256, threads 1, batch 1",
                                           "cpu: torch cpu mm 256x256, threads 1, batch 2"]
    assert len({r.run_id for r in cpu}) == 2
    plain = next(p.run for p in planned if p.run.experiment == "plain")
    assert plain.params["batch"] is None and plain.describe().endswith("threads 1")
    assert "batch" not in plain.definition()  # an unset new axis: stored as before


def test_contract_axis_leaves_old_run_ids_alone(stand_in: None,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    with_axis = next(p.run for p in _planned() if p.run.experiment == "plain")
    monkeypatch.setattr(axes, "AXES", tuple(a for a in axes.AXES if a is not BATCH))
    cfg = config.ExperimentsFile.model_validate(
        {**yaml.safe_load(FILE), "experiments": {"plain": yaml.safe_load(FILE)["experiments"][
            "plain"]}})
    without = plan.expand(cfg, {}, 4)[0].run
    assert without.run_id == with_axis.run_id and without.describe() == with_axis.describe()


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


def test_contract_axis_dataset_column(stand_in: None, tmp_path: Path) -> None:
    fig = dataset.load(_store(tmp_path / "a", 2.0)).figures
    assert str(fig["batch"].dtype) == "Int64"
    by_batch = fig[fig["experiment"] == "cpu"].groupby("batch")["value_s"].min()
    assert by_batch.to_dict() == pytest.approx({1: 1e-3, 2: 2e-3})
    assert fig.loc[fig["experiment"] == "plain", "batch"].isna().all()


def test_contract_axis_in_compare_key(stand_in: None, tmp_path: Path) -> None:
    assert "batch" in compare_rows.key_fields() and "batch" in compare_rows.wildcard_fields()
    a = compare_rows.measurements(load_side(str(_store(tmp_path / "a", 2.0))))
    b = compare_rows.measurements(load_side(str(_store(tmp_path / "b", 4.0))))
    pairs, only_a, only_b = compare_match.match(a, b)
    cpu = {(x["batch"], y["batch"]): y["value"] / x["value"] for x, y, _ in pairs
           if x["experiment"] == "cpu"}
    assert cpu == pytest.approx({("1", "1"): 1.0, ("2", "2"): 2.0})  # each point its partner
    assert not only_a and not only_b
