"""The `exec` axis: a torch target's execution modes, one run each; eager keeps the
run id it always had; a mode the device cannot run is an error that names the target's key;
only a compiled mode gets a cache sweep (torch has no on-disk cache of its own in eager)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from orchestrator.errors import InputError
from orchestrator.experiments import config, plan
from orchestrator.records import CacheState

from ..conftest import PROJECT

CAPS = {"cuda": None, "torch": None, "linux": None, "x86_64": None, "ncu": "no ncu"}
FILE = """
version: 1
defaults: {order: {interleave: false}}
experiments:
  first:
    mode: mm
    processes: 2
    cache: [cold]
    targets:
      - {program: torch, device: cuda, exec: [eager, compile, "compile:max-autotune", cudagraph]}
"""


def _load(text: str) -> config.ExperimentsFile:
    return config.ExperimentsFile.model_validate(yaml.safe_load(text))


def _runs(text: str) -> list:
    return [p.run for p in plan.expand(_load(text), CAPS, 4)]


def test_each_mode_is_a_run_and_only_compiled_modes_get_the_cache_series() -> None:
    runs = _runs(FILE)
    seen = [(r.params["exec"], r.process, r.cache) for r in runs]
    assert seen == [(None, 1, CacheState.NONE), (None, 2, CacheState.NONE),
                    ("compile", 1, CacheState.COLD), ("compile", 2, CacheState.WARM),
                    ("compile:max-autotune", 1, CacheState.COLD),
                    ("compile:max-autotune", 2, CacheState.WARM),
                    ("cudagraph", 1, CacheState.NONE), ("cudagraph", 2, CacheState.NONE)]
    assert runs[2].describe() == "first: torch cuda mm 1024x1024, compile, cold cache, process 1/2"
    assert len({r.run_id for r in runs}) == len(runs)


def test_eager_keeps_the_run_id_and_stored_definition_of_a_target_without_exec() -> None:
    plain = _runs(FILE.replace(', exec: [eager, compile, "compile:max-autotune", cudagraph]', ""))
    eager = [r for r in _runs(FILE) if r.params["exec"] is None]
    assert [r.run_id for r in eager] == [r.run_id for r in plain]
    assert "exec" not in eager[0].definition()
    assert "exec" in _runs(FILE)[2].definition()


def test_argv_names_the_mode_and_a_compiled_cache_sweep_its_folder() -> None:
    from orchestrator import programs
    from orchestrator.programs.base import Paths

    torch = programs.get("torch")
    paths = Paths(PROJECT, "python", {})
    runs = _runs(FILE)
    assert "--exec" not in torch.argv(runs[0], paths, None)
    cold = torch.argv(runs[2], paths, None)
    assert cold[cold.index("--exec") + 1] == "compile"
    assert cold[cold.index("--cache-dir") + 1].endswith("bench_py/target/torch-compile-cache")
    graph = torch.argv(runs[6], paths, None)
    assert graph[graph.index("--exec") + 1] == "cudagraph" and "--cache-dir" not in graph


@pytest.mark.parametrize(("target", "words"), [
    ("{program: torch, device: cpu, exec: [cudagraph]}", "'cudagraph' needs device cuda"),
    ("{program: torch, device: mps, exec: [compile]}", "torch on mps runs eager"),
    ("{program: jax, device: cpu, exec: [compile]}", "a jax target takes no 'exec'"),
    ("{program: torch, device: cpu, exec: []}", "expected at least one mode"),
])
def test_a_mode_the_device_cannot_run_names_the_key(target: str, words: str,
                                                    tmp_path: Path) -> None:
    path = tmp_path / "e.yaml"
    path.write_text(f"version: 1\nexperiments:\n  e:\n    mode: mm\n    targets:\n"
                    f"      - {target}\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        config.load(path)
    assert "e.yaml:6 at experiments.e.targets[0].exec: " in str(err.value), str(err.value)
    assert words in str(err.value)


def test_the_default_file_has_the_compile_experiments_with_cuda_skipped_here() -> None:
    cfg = config.load(PROJECT / "experiments.yaml")
    no_gpu = {**CAPS, "cuda": "needs an NVIDIA GPU"}
    planned = plan.expand(cfg, no_gpu, 2, ["compile", "compile-methods", "compile-sizes"])
    modes = {(p.run.device, p.run.params["exec"]) for p in planned}
    assert {("cpu", "compile"), ("cpu", "compile:max-autotune"), ("cuda", "cudagraph"),
            ("cuda", "compile:max-autotune")} <= modes
    assert all(p.skip_reason == "needs an NVIDIA GPU" for p in planned if p.run.device == "cuda")
    assert all(p.skip_reason is None for p in planned if p.run.device == "cpu")
    sizes = {p.run.shape for p in planned if p.run.experiment == "compile-sizes"}
    assert (1024, 1024) in sizes and len(sizes) >= 3
