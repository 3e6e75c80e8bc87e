"""The profiler's side of the cache state: ncu's cache state in its words and figures, the
L2-flushed variant (`ncu_flushed`: --cache-control all), and the autotune state of profile runs.

No GPU and no Nsight Compute here: a fake `ncu` on PATH writes the CSV the real ncu wrote on
the H200 (tests/data/h200) and runs the program it was given; the burn program is the fake of
test_cache_proof, which writes the real H200 cubecl database.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from orchestrator import vocabulary
from orchestrator.data import dataset
from orchestrator.errors import ConfigError
from orchestrator.experiments import config
from orchestrator.experiments.plan import expand
from orchestrator.records import Role, RunDef, Status, classify
from orchestrator.report import profile_report
from orchestrator.report.tables import prepare
from orchestrator.run import profile, sweep
from orchestrator.run.runner import RunContext, execute

from ..conftest import DATA, PROJECT, write
from ..test_faults import project_copy, runs_of  # noqa: F401 (a fixture)
from .test_cache_proof import GPU, WINNER, _sweep
from .test_profile import EXPERIMENTS, fake_ncu  # noqa: F401 (a fixture)

H200 = DATA / "h200"
# runs the program it was given (after the options and --log-file FILE), writes the real CSV
RUNNING_NCU = f"""#!{sys.executable}
import shutil, subprocess, sys
args = sys.argv[1:]
at = args.index("--log-file")
shutil.copy({str(H200 / "ncu_window_torch_fp32.csv")!r}, args[at + 1])
sys.exit(subprocess.run(args[at + 2:]).returncode)
"""


def test_the_profilers_words_say_their_cache_state() -> None:
    words = {p.key: p.words for p in vocabulary.PROFILERS}
    assert words["ncu"] == "ncu, L2 warm (--cache-control none)"
    assert words["ncu_flushed"] == "ncu, L2 flushed (--cache-control all)"
    rows = {row[2] for row in vocabulary.clocks()}
    assert "kernel time (ncu, L2 warm (--cache-control none))" in rows
    assert "kernel time (ncu, L2 flushed (--cache-control all))" in rows
    assert set(vocabulary.profile_profilers()) == {"ncu", "ncu_flushed"}


def test_each_variant_is_a_profile_run_after_its_measured_run(tmp_path: Path) -> None:
    text = EXPERIMENTS.replace("profile: [ncu]\n    targets:\n      - {program: torch, "
                               "device: cuda}\n      - {program: torch, device: cpu}",
                               "profile: [ncu, ncu_flushed]\n    targets:\n      - {program: "
                               "torch, device: cuda}\n      - {program: torch, device: cpu}")
    assert text != EXPERIMENTS
    cfg = config.load(write(tmp_path / "e.yaml", text))
    planned = expand(cfg, {"cuda": None, "ncu": "Nsight Compute (ncu) is not on PATH"}, 4)
    runs = [(p.run.device, p.run.profile, p.skip_reason) for p in planned
            if p.run.experiment == "methods"]
    assert runs == [("cuda", None, None),
                    ("cuda", "ncu", "Nsight Compute (ncu) is not on PATH"),
                    ("cuda", "ncu_flushed", "Nsight Compute (ncu) is not on PATH"),
                    ("cpu", None, None)]
    measured, warm, flushed = (p.run for p in planned[:3])
    assert warm.profile_of == flushed.profile_of == measured.run_id
    assert len({measured.run_id, warm.run_id, flushed.run_id}) == 3


def test_an_unknown_variant_is_refused_with_its_path(tmp_path: Path) -> None:
    bad = EXPERIMENTS.replace("profile: [ncu]", "profile: [ncu_cold]", 1)
    with pytest.raises(ConfigError) as caught:
        config.load(write(tmp_path / "e.yaml", bad))
    text = str(caught.value)
    assert "experiments.methods.profile" in text and "'ncu_flushed'" in text


@pytest.mark.parametrize(("variant", "control"), [("ncu", "none"), ("ncu_flushed", "all")])
def test_a_variant_runs_ncu_with_its_cache_control_and_names_its_figures(
        tmp_path: Path, fake_ncu: Path, variant: str, control: str) -> None:  # noqa: F811
    run = RunDef(experiment="t", program="torch", device="cuda", mode="mm", shape=(1024, 1024),
                 reps=20, profile=variant,
                 env=(("FAKE_NCU_MODE", "ok"), ("FAKE_NCU_ARGS", str(fake_ncu))))
    rec = execute(run, RunContext(PROJECT, sys.executable, tmp_path / "scratch", {}),
                  role=Role.PROFILE)
    parsed = sweep.parse_record(rec)
    rec.status, rec.reason = classify(rec, parsed)
    parsed = profile.add_figures(rec, parsed)
    assert rec.status == Status.OK, rec.reason
    args = json.loads(fake_ncu.read_text())
    assert args[args.index("--cache-control") + 1] == control
    assert args[args.index("--clock-control") + 1] == "none"  # always
    ncu_figs = [f for f in parsed.figures if f.profiler == variant]
    assert {f.stat for f in ncu_figs} == {"kernel_min", "kernel_median", "min", "median"}
    assert {f.method_text for f in ncu_figs} == {f"kernel time ({variant})"}


def test_profile_runs_record_the_autotune_state_and_the_report_shows_it(
        tmp_path: Path, project_copy: tuple[Path, dict],  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    root, env = project_copy
    bin_dir = tmp_path / "ncu-bin"
    bin_dir.mkdir()
    write(bin_dir / "ncu", RUNNING_NCU).chmod(0o755)
    env = {**env, "PATH": f"{bin_dir}:{env['PATH']}"}
    _sweep(root, env, tmp_path, {
        "methods": {"mode": "mm", "cache": ["warm"], "profile": ["ncu", "ncu_flushed"],
                    "reps": 20, "targets": [GPU]}}, monkeypatch)  # 20: the CSV's launches
    profiled = [r for r in runs_of(root / "results").values() if r["role"] == "profile"]
    assert len(profiled) == 2
    for row in profiled:
        assert row["status"] == "ok", row["reason"]
        cache = json.loads(row["cache_json"])
        # never emptied, recorded as found: warm, the measured run's tune
        assert cache["action"] == "none" and cache["state"] == "warm"
        assert cache["proof"].startswith("warm, no autotune"), cache["proof"]
        assert cache["autotune"]["kernel"] == WINNER
    shown = profile_report.profile_table(prepare(dataset.load(root / "results"))).frame
    assert list(shown["profiler"]) == ["ncu, L2 warm (--cache-control none)",
                                       "ncu, L2 flushed (--cache-control all)"]
    assert set(shown["autotune kernel"]) == {WINNER}
    assert all(p.startswith("warm, no autotune") for p in shown["cache proof"])
    assert all(shown["min"] != "")
