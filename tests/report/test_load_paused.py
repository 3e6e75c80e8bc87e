"""The load warning of a run measured while the sweep's own background builds were paused
(run/background.py): the 1-minute average still counts them, and the warning says so; the
paused builds are read from each run's gate record."""

from __future__ import annotations

import json

import pandas as pd

from orchestrator.report import checks, registry


def _rows(run_id: str, load: float) -> list[dict[str, object]]:
    return [{"run_id": run_id, "unit": run_id, "experiment": "cpu", "framework": "torch",
             "label": "cpu", "device": "cpu", "shape": "256x256", "threads": 2,
             "threads_key": 2, "threads_requested": 2, "build": "", "features": "",
             "method": "with_sync", "stat": "min", "value_s": 1e-3,
             "load1_before": load, "load1_after": load}]


def test_paused_builds_are_read_from_the_gate_records() -> None:
    runs = pd.DataFrame({"run_id": ["a", "b", "c", "d"],
                         "gate": [json.dumps({"builds_paused": ["template", "default"]}),
                                  json.dumps({"load1": 0.2}), None, "{not json"]})
    assert registry.paused_builds(runs) == {"a": ["template", "default"]}
    assert registry.paused_builds(pd.DataFrame({"run_id": []})) == {}


def test_the_load_warning_names_the_paused_builds() -> None:
    rows = pd.DataFrame(_rows("a", 2.1) + _rows("b", 2.3))
    th = checks.Thresholds(cores=2)
    warned = checks.load(rows, th, {"a": ["default", "template"]})
    assert len(warned) == 2
    a = next(w for w in warned if "2.10" in w)
    b = next(w for w in warned if "2.30" in w)
    assert "the sweep's own builds (default, template) were paused while it ran, but the " \
           "1-minute average still counts them" in a
    assert "paused" not in b  # an outside load: the plain warning
    assert checks.load(rows, th) == [w.replace(
        "; the sweep's own builds (default, template) were paused while it ran, but the "
        "1-minute average still counts them", "") for w in warned]
