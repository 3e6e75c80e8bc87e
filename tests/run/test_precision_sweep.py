"""The arithmetic of real runs: bench_py and a burn Flex build through `run`, read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.data import dataset
from orchestrator.data.store import Store

from ..conftest import facts_probed_once, write

SMALL = """\
version: 1
defaults: {shape: [32, 32], reps: 2, timeout_s: 300}
builds: {template: {crate: exec-cpu}}
experiments:
  cpu:
    mode: mm
    targets: [{program: torch, device: cpu, precision: fp32},
              {program: burn, build: template, device: flex}]
  accuracy: {mode: accuracy, shapes: [[32, 32]],
             targets: [{program: torch, device: cpu},
                       {program: burn, build: template, device: flex}]}
"""


@pytest.mark.cargo
@pytest.mark.torch
def test_real_programs_print_their_arithmetic(tmp_path: Path, burn_builds,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    facts_probed_once(monkeypatch)  # the programs' printed arithmetic is judged, not the facts
    exp = write(tmp_path / "p.yaml", SMALL)
    results = tmp_path / "results"
    assert main(["run", str(exp), "--results", str(results), "--quiet"]) == 0
    data = dataset.load(results)
    assert len(data.runs) == 4 and set(data.runs["status"]) == {"ok"}
    with Store(results).reading() as store:
        argvs = [json.loads(r["argv_json"]) for r in store.query("SELECT argv_json FROM runs")]
    assert sorted("--precision" in a for a in argvs) == [False, False, True, True]  # torch's
    assert all(a[a.index("--precision") + 1] == "fp32" for a in argvs if "--precision" in a)
    f = data.figures
    # both programs said fp32 in their header (torch: TF32 off; burn Flex: the gemm crate)
    assert set(zip(f["framework"], f["precision"], f["precision_source"], strict=True)) == {
        ("torch", "fp32", "printed"), ("burn", "fp32", "printed")}
    acc = f[(f["method"] == "accuracy") & (f["stat"] == "max_diff_tf32_product")]
    assert len(acc) == 2 and (acc["value_s"] > 1e-4).all()  # not TF32 products: f32 ones
