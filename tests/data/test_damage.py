"""Damaged store rows: each problem named, the warning counted (data/damage.py)."""

from __future__ import annotations

import json

from orchestrator.data import damage
from orchestrator.records import RunDef

RUN = RunDef(experiment="t", program="torch", device="cpu", mode="mm", shape=(8, 8), reps=3)
GOOD = {"run_id": "r", "experiment": "t", "role": "measure", "status": "ok",
        "definition_json": json.dumps(RUN.definition()), "stdout": b"", "wall_s": 1.5,
        "returncode": 0, "state_json": None}


def test_a_readable_run_has_no_problem() -> None:
    assert damage.run_problem(GOOD) is None


def test_each_damage_of_a_run_is_named() -> None:
    cases = {"definition_json": ("[1, 2]", "definition_json is not a run definition (not an "
                                           "object)"),
             "wall_s": ("slow", "wall_s is str, not a number"),
             "returncode": (True, "returncode is bool, not a number"),
             "experiment": (None, "experiment is NULL"),
             "state_json": ("{", "state_json is not JSON")}
    for column, (value, problem) in cases.items():
        assert damage.run_problem({**GOOD, column: value}) == problem, column
    reps = json.dumps({**RUN.definition(), "reps": "3"})
    assert damage.run_problem({**GOOD, "definition_json": reps}) == \
        "definition_json's reps is '3'"


def test_figure_and_sample_rows() -> None:
    figure = {"run_id": "r", "method": "with_sync", "stat": "min", "value": 1e-6, "runs": 3}
    assert damage.figure_problem(figure) is None
    assert damage.figure_problem({**figure, "runs": 2.5}) == "runs is float, not integer"
    assert damage.figure_problem({**figure, "runs": 2**63}) == \
        f"runs is {2**63}, beyond a 64-bit integer"
    assert damage.sample_problem({"run_id": "r", "value": None}) == "value is NULL"


def test_the_warning_counts_and_names_the_first_few() -> None:
    found = damage.Damage()
    assert not found and found.lines() == []
    for i in range(5):
        found.add("run", f"sweep s run {i}", "status is NULL")
    found.add("figure", "sweep s figure row 9", "value is str, not real")
    assert found.lines() == [
        "5 damaged run rows skipped: sweep s run 0: status is NULL; sweep s run 1: status is "
        "NULL; sweep s run 2: status is NULL; and 2 more",
        "1 damaged figure row skipped: sweep s figure row 9: value is str, not real"]
