"""Variants of builds (`variants: {b: {builds: {template: template-b}}}`): each variant's
targets use its build, in the same rounds; a wrong swap is one line naming its YAML path. The
real A/B of two cargo builds is tests/run/test_build_variants.py."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from orchestrator.errors import ConfigError
from orchestrator.experiments import config
from orchestrator.experiments.config import Build, Capability
from orchestrator.experiments.plan import builds_needed, expand
from orchestrator.programs.burn.cargo import build_key

from ..conftest import write

FILE = """\
version: 1
builds:
  template: {crate: exec-cpu}
  template-b: {crate: exec-cpu, env: {AB_SIDE: b}}
  default: {crate: exec-gpu}
experiments:
  ab:
    mode: mm
    processes: 2
    threads: [1]
    variants:
      a: {}
      b:
        builds: {%s: %s}
    targets:
      - {program: burn, build: template, device: flex}
      - {program: torch, device: cpu}
"""


def test_each_variant_runs_its_build_in_the_same_rounds(tmp_path: Path) -> None:
    cfg = config.load(write(tmp_path / "e.yaml", FILE % ("template", "template-b")))
    planned = expand(cfg, dict.fromkeys(get_args(Capability)), 2)
    burn = [p.run for p in planned if p.run.program == "burn"]
    assert sorted((r.variant, r.build, r.process) for r in burn) == [
        ("a", "template", 1), ("a", "template", 2), ("b", "template-b", 1),
        ("b", "template-b", 2)]
    assert len({r.run_id for r in burn}) == 4 and len({r.series_id for r in burn}) == 2
    # the torch target is in both variants, unchanged but for its variant
    assert sorted(p.run.variant for p in planned if p.run.program == "torch") == [
        "a", "a", "b", "b"]
    # rounds: every process 1 (of both variants) before any process 2
    assert [p.run.process for p in planned] == [1, 1, 1, 1, 2, 2, 2, 2]
    assert list(builds_needed(cfg, planned)) in (["template", "template-b"],
                                                 ["template-b", "template"])


def test_two_builds_differing_only_in_their_environment_keep_two_binaries() -> None:
    plain, other = Build(crate="exec-cpu"), Build(crate="exec-cpu", env={"AB_SIDE": "b"})
    assert build_key(plain) == "exec-cpu"  # the name every existing build keeps
    assert build_key(other).startswith("exec-cpu+env-") and build_key(other) != build_key(plain)
    assert build_key(Build(crate="exec-cpu", env={"AB_SIDE": "c"})) != build_key(other)


@pytest.mark.parametrize(("old", "new", "words"), [
    ("default", "template-b", "no target of experiment 'ab' uses build 'default' (its "
     "builds: template)"),
    ("template", "templat-b", "unknown build 'templat-b' (known: template, template-b, "
     "default)"),
    ("template", "template", "build 'template' is swapped for itself"),
])
def test_a_wrong_swap_is_one_line_naming_its_path(tmp_path: Path, old: str, new: str,
                                                  words: str) -> None:
    with pytest.raises(ConfigError) as info:
        config.load(write(tmp_path / "e.yaml", FILE % (old, new)))
    text = str(info.value)
    assert text.count("\n") == 0, text
    assert f"e.yaml:14 at experiments.ab.variants.b.builds.{old}: {words}" in text, text
