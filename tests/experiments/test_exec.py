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


MEGA = FILE.replace("cache: [cold]", "cache: [cold, mega]").replace(
    '[eager, compile, "compile:max-autotune", cudagraph]', "[eager, compile]")


def test_a_mega_series_is_emptied_first_and_keeps_its_label() -> None:
    """cache: [mega]: process 1 finds the folder emptied (it loads the artifacts its priming
    run saves), later ones keep the label, so no run is a cold series' warm one twice."""
    planned = plan.expand(_load(MEGA), CAPS, 4)
    seen = [(p.run.params["exec"], p.run.process, p.run.cache, p.run.cache_action)
            for p in planned]
    assert seen == [(None, 1, "none", "none"), (None, 2, "none", "none"),
                    ("compile", 1, "cold", "delete"), ("compile", 2, "warm", "none"),
                    ("compile", 1, "mega", "delete"), ("compile", 2, "mega", "none")]
    assert len({p.run.run_id for p in planned}) == len(planned)
    first, later = planned[4], planned[5]
    assert first.cold_series == first.run.run_id == later.cold_series  # its own driver cache
    assert later.run.series_id == first.run.run_id
    assert first.run.describe() == "first: torch cuda mm 1024x1024, compile, mega cache, " \
        "process 1/2"


def test_argv_saves_the_blob_a_cold_compile_makes_and_mega_loads_it() -> None:
    from orchestrator import programs
    from orchestrator.programs.base import Paths
    from orchestrator.run.sweep import _priming_run

    torch = programs.get("torch")
    paths = Paths(PROJECT, "python", {})
    runs = [p.run for p in plan.expand(_load(MEGA), CAPS, 4)]
    cold, warm, mega, mega_later = (torch.argv(r, paths, None) for r in runs[2:])
    blob = cold[cold.index("--save-cache-artifacts") + 1]
    assert blob.endswith(f"bench_py/target/torch-mega-cache/{runs[2].run_id}.bin")
    assert mega[mega.index("--load-cache-artifacts") + 1] == blob
    assert not any("artifacts" in a for a in warm + mega_later)
    # the mega series' priming run is the cold first process of its definition: it saves
    priming = _priming_run(runs[4], CacheState.COLD)
    assert (priming.cache, priming.cache_action) == ("cold", "delete")
    assert priming.run_id == runs[2].run_id  # stored apart: a priming record is `ID-prime`


@pytest.mark.parametrize(("target", "words"), [
    ("{program: burn, build: cuda, device: cuda}", "targets[0] is burn on cuda, whose cache has"),
    ("{program: jax, device: cpu}", "targets[0] is jax on cpu"),
])
def test_mega_on_a_cache_without_artifacts_names_the_key(target: str, words: str) -> None:
    text = f"""
version: 1
builds: {{cuda: {{crate: exec-gpu, features: [cuda]}}}}
experiments:
  e: {{mode: mm, cache: [mega], targets: [{target}]}}
"""
    with pytest.raises(InputError, match=r"experiments\.e\.cache: 'mega'") as caught:
        plan.expand(_load(text), {**CAPS, "jax": None}, 4)
    assert words in str(caught.value)


def test_mega_on_targets_without_a_cache_means_none() -> None:
    text = MEGA.replace("device: cuda, exec: [eager, compile]", "device: cpu")
    assert {r.cache for r in _runs(text)} == {CacheState.NONE}


def test_interleaved_a_mega_series_keeps_warm_series_whole() -> None:
    """A mega series empties the folder every compiled run shares, as a cold one does: with
    it in the experiment, a warm series' processes stay together (never split by a mega
    series' emptying between its priming and its later processes)."""
    text = MEGA.replace("cache: [cold, mega]", "cache: [warm, mega]").replace(
        "defaults: {order: {interleave: false}}", "defaults: {order: {interleave: true, seed: 1}}")
    runs = [r for r in _runs(text) if r.params["exec"] == "compile"]
    states = [(r.cache, r.process) for r in runs]
    # seed 1 put the mega series between them when only a cold series counted
    warm = states.index(("warm", 1))
    assert states[warm + 1] == ("warm", 2), states
    mega = states.index(("mega", 1))
    assert states[mega + 1] == ("mega", 2), states
