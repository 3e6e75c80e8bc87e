"""`precision_target:` of an experiment: validated with one clear line naming its path, and
planned to its process limit (the sweep stops early: tests/run/test_stopping.py)."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from orchestrator.errors import ConfigError
from orchestrator.experiments import config
from orchestrator.experiments.config import Capability
from orchestrator.experiments.plan import expand

from ..conftest import write

FILE = """\
version: 1
experiments:
  cpu:
    mode: mm
    threads: [1, 2]
    precision_target: %s
    targets:
      - {program: torch, device: cpu}
"""


def _load(tmp_path: Path, rule: str) -> config.ExperimentsFile:
    return config.load(write(tmp_path / "e.yaml", FILE % rule))


def test_a_target_plans_its_process_limit_in_rounds(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "{target: 0.02, min_processes: 3, max_processes: 5, pilot: 4}")
    rule = cfg.experiments["cpu"].precision_target
    assert rule is not None and (rule.first_look, rule.budget_s) == (4, 300)
    runs = [p.run for p in expand(cfg, dict.fromkeys(get_args(Capability)), 2)]
    assert sorted((r.threads, r.process) for r in runs) == [
        (t, k) for t in (1, 2) for k in range(1, 6)]
    assert {r.processes for r in runs} == {5}
    assert [r.process for r in runs] == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]  # rounds
    assert len({r.series_id for r in runs}) == 2
    assert _load(tmp_path, "{target: 0.1}").experiments["cpu"].precision_target.first_look == 3


@pytest.mark.parametrize(("rule", "line", "words"), [
    ("{target: 0}", 6, "greater than 0"),
    ("{target: 2}", 6, "less than 1"),
    ("{min_processes: 3}", 6, "target"),
    ("{target: 0.02, min_processes: 5, max_processes: 4}", 6,
     "min_processes (5) is above max_processes (4)"),
    ("{target: 0.02, pilot: 30}", 6, "pilot (30) is above max_processes (20)"),
    ("{target: 0.02, pilot: 0}", 6, "greater than or equal to 1"),
    ("{target: 0.02, budget: 5}", 6, "budget"),
])
def test_a_wrong_target_is_one_line_naming_its_path(tmp_path: Path, rule: str, line: int,
                                                    words: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, rule)
    text = str(info.value)
    assert "experiments.cpu.precision_target" in text and words in text, text
    assert f":{line}" in text, text


@pytest.mark.parametrize(("extra", "words"), [
    ("    processes: 3\n", "either 'processes' or 'precision_target'"),
    ("    cache: [cold, warm]\n", "a cold series"),
    ("    repeat: 2\n", "a cold series"),
    ("    cache: [warm, mega]\n", "a mega series"),
])
def test_a_target_beside_a_count_or_a_cache_series_is_refused(tmp_path: Path, extra: str,
                                                              words: str) -> None:
    text = (FILE % "{target: 0.02}").replace("    mode: mm\n", "    mode: mm\n" + extra)
    with pytest.raises(ConfigError) as info:
        config.load(write(tmp_path / "e.yaml", text))
    assert "experiments.cpu" in str(info.value) and words in str(info.value), str(info.value)


TARGETS = """\
version: 1
builds:
  cuda: {crate: exec-gpu, features: [cuda]}
experiments:
  gpu:
    mode: %s
    cache: [%s]
    processes: 2
    targets:
      - {program: torch, device: cuda}
      - program: burn
        build: cuda
        device: cuda
        precision_target: {target: 0.02, max_processes: 4}
"""


def test_a_target_has_its_own_rule_beside_the_experiments_count(tmp_path: Path) -> None:
    cfg = config.load(write(tmp_path / "e.yaml", TARGETS % ("mm", "warm")))
    planned = expand(cfg, dict.fromkeys(get_args(Capability)), 2)
    torch = [p for p in planned if p.run.program == "torch"]
    burn = [p for p in planned if p.run.program == "burn"]
    assert [p.run.process for p in torch] == [1, 2] and {p.rule for p in torch} == {None}
    assert [p.run.process for p in burn] == [1, 2, 3, 4]
    assert {p.rule_scope for p in burn} == {"gpu.targets[1]"}
    assert {p.rule.target for p in burn if p.rule} == {0.02}
    # a warm series without a cold run in its experiment takes rounds: its first process
    # ensures the cache (its priming), the later ones are warm, all one series
    assert [p.run.cache_action for p in burn] == ["ensure", "none", "none", "none"]
    assert len({p.run.series_id for p in burn}) == 1
    rounds = [p.run.process for p in planned]
    assert rounds == sorted(rounds)


@pytest.mark.parametrize(("mode", "cache", "words"), [
    ("warm", "warm", "precision_target needs mode 'mm'"),
    ("mm", "cold", "a cold series (cache: [cold], repeat) runs whole"),
])
def test_a_targets_rule_where_rounds_cannot_be_is_one_line(tmp_path: Path, mode: str,
                                                          cache: str, words: str) -> None:
    text = TARGETS % (mode, cache)
    if mode == "warm":  # the warm-up puzzle is burn's: torch's target would be refused first
        text = text.replace("      - {program: torch, device: cuda}\n", "")
    with pytest.raises(ConfigError) as info:
        config.load(write(tmp_path / "e.yaml", text))
    text = str(info.value)
    assert text.count("\n") == 0, text  # one line
    target = 0 if mode == "warm" else 1
    assert f"experiments.gpu.targets[{target}].precision_target" in text and words in text, text
    assert f"e.yaml:{14 - (mode == 'warm')}" in text, text
