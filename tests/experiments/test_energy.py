"""`energy_s` of an experiment: validated, out of the run id at 0, `--energy` for both programs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

from orchestrator import programs
from orchestrator.errors import ConfigError
from orchestrator.experiments import config
from orchestrator.experiments.config import Capability
from orchestrator.experiments.plan import expand
from orchestrator.programs.base import Paths

from ..conftest import PROJECT, write

FILE = """\
version: 1
builds:
  cuda: {{crate: exec-gpu, features: [cuda]}}
experiments:
  methods:
    mode: mm
{energy}    targets:
      - {{program: torch, device: cuda}}
      - {{program: burn, build: cuda, device: cuda}}
"""
ALL_CAPS: dict[str, str | None] = dict.fromkeys(get_args(Capability))


def _runs(tmp_path: Path, energy: str) -> list:
    cfg = config.load(write(tmp_path / "e.yaml", FILE.format(energy=energy)))
    return [p.run for p in expand(cfg, ALL_CAPS, 4)]


def _argv(run) -> list[str]:
    paths = Paths(PROJECT, sys.executable, {"cuda": Path("/bin/exec-gpu")})
    return programs.get(run.program).argv(run, paths, None)


def test_energy_s_reaches_both_programs_as_an_argument(tmp_path: Path) -> None:
    for run in _runs(tmp_path, "    energy_s: 2\n"):
        assert run.energy_s == 2
        argv = _argv(run)
        assert argv[argv.index("--energy") + 1] == "2"


def test_no_energy_keeps_the_run_ids_and_passes_nothing(tmp_path: Path) -> None:
    without = _runs(tmp_path, "")
    zero = _runs(tmp_path, "    energy_s: 0\n")
    assert [r.run_id for r in without] == [r.run_id for r in zero]
    assert all(r.energy_s is None and "--energy" not in _argv(r) for r in zero)
    two = _runs(tmp_path, "    energy_s: 2\n")
    assert {r.run_id for r in two}.isdisjoint(r.run_id for r in without)  # another measurement


@pytest.mark.parametrize(("value", "words"), [
    ("-1", "greater than or equal to 0"), ("soon", "expected a valid number"),
    (".inf", "finite number")])
def test_a_bad_energy_s_is_a_located_error(tmp_path: Path, value: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        _runs(tmp_path, f"    energy_s: {value}\n")
    text = str(info.value)
    assert "experiments.methods.energy_s" in text and words in text, text
    assert "e.yaml:7 " in text  # the line of the key


def test_experiments_yaml_asks_energy_on_the_methods_experiment() -> None:
    cfg = config.load(PROJECT / "experiments.yaml")
    assert cfg.experiments["methods"].energy_s == 5  # >= 5 s: a counter step < 2%
    assert all(e.energy_s == 0 for n, e in cfg.experiments.items() if n != "methods")


def test_the_cli_error_for_a_bad_energy_s(tmp_path: Path) -> None:
    path = write(tmp_path / "e.yaml", FILE.format(energy="    energy_s: -1\n"))
    done = subprocess.run([sys.executable, "-m", "orchestrator", "plan", str(path)],
                          cwd=PROJECT, capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "energy_s" in done.stderr
