"""Precision as an axis of the experiments file: tf32 only for torch on CUDA, a clear error else."""

from __future__ import annotations

import json
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
from .test_plan import file_order

FILE = """\
version: 1
builds:
  cuda: {crate: exec-gpu, features: [cuda]}
experiments:
  methods:
    mode: mm
    targets:
      - {program: torch, device: cuda}
      - {program: torch, device: cuda, precision: fp32}
      - {program: torch, device: cuda, precision: tf32}
      - {program: burn, build: cuda, device: cuda}
      - {program: torch, device: cpu}
"""
ALL_CAPS: dict[str, str | None] = dict.fromkeys(get_args(Capability))


def _error(tmp_path: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        config.load(write(tmp_path / "e.yaml", text))
    return info.value


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("{program: torch, device: cpu, precision: tf32}",
         "torch on cpu computes only fp32 ('tf32' needs device cuda)"),
        ("{program: torch, device: mps, precision: tf32}", "torch on mps computes only fp32"),
        ("{program: torch, device: auto, precision: tf32}", "needs device cuda"),
        ("{program: torch, device: cuda, precision: bf16}",
         "expected 'fp32', 'tf32', 'default' or 'highest' (got 'bf16')"),
        ("{program: burn, build: cuda, device: cuda, precision: tf32}",
         "a burn target takes no 'precision': burn's arithmetic is chosen by cubecl's autotune"),
        ("{program: burn, build: cuda, device: cuda, precision: fp32}", "takes no 'precision'"),
    ],
)
def test_a_wrong_precision_names_file_line_and_path(tmp_path: Path, target: str,
                                                    words: str) -> None:
    err = _error(tmp_path, FILE.replace("{program: torch, device: cpu}", target))
    assert (err.line, err.path) == (12, "experiments.methods.targets[4].precision"), str(err)
    assert words in str(err), str(err)
    assert str(err).startswith(f"{tmp_path / 'e.yaml'}:12")


def test_a_wrong_device_is_reported_before_the_precision(tmp_path: Path) -> None:
    err = _error(tmp_path, FILE.replace("device: cpu}", "device: gpu, precision: tf32}"))
    assert err.path == "experiments.methods.targets[4]" and "unknown torch device" in str(err)


def test_the_plan_carries_tf32_and_the_default_is_todays_run(tmp_path: Path) -> None:
    cfg = file_order(config.load(write(tmp_path / "e.yaml", FILE)))  # runs by position
    runs = [p.run for p in expand(cfg, ALL_CAPS, 8)]
    # an explicit fp32 is the default: the same run, the same id, planned once (twice, the
    # second would replace the first's record)
    assert [r.precision for r in runs] == [None, "tf32", None, None]
    assert len({r.run_id for r in runs}) == 4
    assert runs[1].describe() == "methods: torch cuda mm 1024x1024, tf32"
    assert "fp32" not in runs[0].describe()


def test_argv_passes_precision_to_torch_only(tmp_path: Path) -> None:
    cfg = file_order(config.load(write(tmp_path / "e.yaml", FILE)))  # runs by position
    runs = [p.run for p in expand(cfg, ALL_CAPS, 8)]
    paths = Paths(PROJECT, "python", {"cuda": Path("/bin/exec-gpu")})
    argvs = [programs.get(r.program).argv(r, paths, None) for r in runs]
    tails = [a[a.index("--precision"):][:2] if "--precision" in a else [] for a in argvs]
    assert tails == [["--precision", "fp32"], ["--precision", "tf32"], [], ["--precision", "fp32"]]


def test_tf32_is_hashed_and_old_definitions_still_load() -> None:
    cfg = config.load(PROJECT / "experiments.yaml")
    planned = expand(cfg, ALL_CAPS, 8)
    tf32 = [p.run for p in planned if p.run.precision == "tf32"]
    assert {r.experiment for r in tf32} == {"methods", "first-call", "accuracy", "sizes",
                                            "compile", "compile-methods", "compile-accuracy"}
    assert all(r.program == "torch" and r.device == "cuda" for r in tf32)
    twins = {r.run_id for r in (p.run for p in planned) if r.precision is None}
    assert not twins & {r.run_id for r in tf32}  # tf32 is a new run, not the fp32 one
    # a stored definition from before the field (no 'precision' key) is the default run
    fp32 = next(p.run for p in planned if p.run.device == "cuda" and p.run.program == "torch"
                and p.run.precision is None)
    old = json.loads(json.dumps(fp32.definition()))
    del old["precision"]
    assert type(fp32).from_definition(old) == fp32
