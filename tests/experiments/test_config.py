"""The experiments file: the real one validates; every kind of mistake names file, line, path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.errors import ConfigError
from orchestrator.experiments import config

from ..conftest import PROJECT, write

GOOD = """\
version: 1
builds:
  template: {crate: exec-cpu}
experiments:
  cpu:
    mode: mm
    threads: [1, auto]
    targets:
      - {program: torch, device: cpu}
      - {program: burn, build: template, device: flex}
"""


def test_project_experiments_file_is_valid() -> None:
    cfg = config.load(PROJECT / "experiments.yaml")
    assert set(cfg.experiments) == {"methods", "first-call", "jax-first-call", "cpu",
                                    "accuracy", "warmup", "failed-build", "sizes", "sizes-cpu",
                                    "compile", "compile-methods", "compile-sizes",
                                    "compile-accuracy"}
    assert len(cfg.experiments["sizes"].shapes or ()) == 13  # 64 ... 8192
    assert cfg.defaults.shape == (1024, 1024) and cfg.defaults.reps == 20
    assert cfg.builds["accelerate"].expect_failure
    assert cfg.experiments["accuracy"].shapes == ((256, 256), (1024, 1024))  # every timed shape


def test_defaults_and_shapes(tmp_path: Path) -> None:
    cfg = config.load(write(tmp_path / "e.yaml", GOOD + "    shapes: ['64x32', [8, 8]]\n"))
    exp = cfg.experiments["cpu"]
    assert exp.threads == (1, "auto")
    assert exp.shapes == ((64, 32), (8, 8))
    assert cfg.defaults.timeout_s == 600


def _error(tmp_path: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        config.load(write(tmp_path / "e.yaml", text))
    return info.value


@pytest.mark.parametrize(
    ("text", "line", "path", "words"),
    [
        (GOOD.replace("mode: mm", "mode: mm\n    treads: [1]"), 7, "experiments.cpu.treads",
         "unknown key"),
        (GOOD.replace("threads: [1, auto]", "threads: [1, many]"), 7,
         "experiments.cpu.threads[1]", "auto"),
        (GOOD.replace("threads: [1, auto]", "threads: [0]"), 7, "experiments.cpu.threads",
         "≥ 1"),
        (GOOD.replace("{program: torch, device: cpu}", "{program: torch, device: gpu}"), 9,
         "experiments.cpu.targets[0]", "unknown torch device 'gpu'"),
        (GOOD.replace("crate: exec-cpu", "crate: exec-tpu"), 3, "builds.template.crate",
         "exec-cpu"),
        (GOOD.replace("crate: exec-cpu}", "crate: exec-cpu, features: [cuda]}"), 3,
         "builds.template", "has no feature 'cuda'"),
        (GOOD.replace("build: template", "build: templat"), 10,
         "experiments.cpu.targets[1].build", "unknown build 'templat'"),
        (GOOD.replace("mode: mm", "mode: mm\n    cache: []"), 7, "experiments.cpu.cache",
         "at least 1"),
        (GOOD.replace("mode: mm", "mode: fast"), 6, "experiments.cpu.mode", "'mm'"),
        (GOOD.replace("version: 1", "version: 2"), 1, "version", "1"),
        (GOOD + "  cpu:\n    mode: mm\n", 11, "experiments.cpu", "duplicate key 'cpu'"),
        (GOOD.replace("targets:", "targets: [oops"), 9, "", "YAML syntax error"),
        (GOOD.replace("version: 1\n", ""), 1, "version", "required key is missing"),
        (GOOD.replace("mode: mm", "mode: warm"), 6, "experiments.cpu",
         "burn and jax program mode"),
    ],
)
def test_mistakes_name_line_path_and_expectation(tmp_path: Path, text: str, line: int,
                                                  path: str, words: str) -> None:
    err = _error(tmp_path, text)
    assert err.line == line, str(err)
    assert err.path == path, str(err)
    assert words in str(err)
    assert str(err).startswith(f"{tmp_path / 'e.yaml'}:{line}")


def test_missing_and_empty_files(tmp_path: Path) -> None:
    assert "file not found" in str(_missing(tmp_path / "nope.yaml"))
    err = _error(tmp_path, "")
    assert "empty" in str(err)
    err = _error(tmp_path, "- just\n- a list\n")
    assert "expected a mapping" in str(err)


def _missing(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        config.load(path)
    return info.value


def test_json_schema_lists_the_keys() -> None:
    schema = json.loads(config.json_schema())
    assert set(schema["properties"]) == {"version", "defaults", "builds", "experiments"}
    assert "Experiment" in schema["$defs"]


def test_committed_schema_is_current() -> None:
    """experiments.schema.json (named at the top of experiments.yaml for editors) is fresh:
    regenerate with `python -m orchestrator schema > experiments.schema.json`."""
    committed = (PROJECT / "experiments.schema.json").read_text()
    assert json.loads(committed) == json.loads(config.json_schema())
    assert (PROJECT / "experiments.yaml").read_text().startswith(
        "# yaml-language-server: $schema=experiments.schema.json")


def test_several_problems_are_each_named_the_first_is_the_errors_place(tmp_path: Path) -> None:
    text = GOOD.replace("mode: mm", "mode: fast\n    processes: 0").replace(
        "version: 1", "version: true")
    err = _error(tmp_path, text)
    assert (err.line, err.path) == (1, "version")
    assert str(err).splitlines()[1:] == [
        f"  {tmp_path / 'e.yaml'}:1 at version: expected 1 (got True)",
        f"  {tmp_path / 'e.yaml'}:6 at experiments.cpu.mode: expected 'mm', 'warm' or "
        "'accuracy' (got 'fast')",
        f"  {tmp_path / 'e.yaml'}:7 at experiments.cpu.processes: expected greater than or "
        "equal to 1 (got 0)",
    ]


def test_schema_names_the_maxima() -> None:
    props = json.loads(config.json_schema())["$defs"]["Experiment"]["properties"]
    assert (props["processes"]["maximum"], props["repeat"]["maximum"]) == (1000, 1000)
    assert props["timed_runs"]["maximum"] == 10_000
    assert "at most 1048576" in props["shapes"]["description"]
