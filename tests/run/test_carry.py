"""A GPU box without cargo or network: bundle here, unpack and run there (a copy, no cargo)."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.data import dataset
from orchestrator.experiments import config
from orchestrator.experiments.plan import expand
from orchestrator.run import carry

from ..conftest import PROJECT, write

MINI = """\
version: 1
defaults: {shape: [64, 64], reps: 3}
builds:
  template: {crate: exec-cpu}
experiments:
  cpu:
    mode: mm
    targets: [{program: torch, device: cpu}, {program: burn, build: template, device: flex}]
"""

pytestmark = [pytest.mark.cargo, pytest.mark.torch]


def test_bundle_then_run_offline_without_cargo(tmp_path: Path, burn_builds) -> None:
    exp = write(tmp_path / "mini.yaml", MINI)
    cfg = config.load(exp)
    planned = expand(cfg, {"torch": None}, 1)
    made = carry.bundle(PROJECT, cfg, planned, platform.python_version_tuple()[0] + "."
                        + platform.python_version_tuple()[1], "manylinux2014_x86_64")
    assert [b.status for b in made.builds] == ["ok"]
    names = {w.name.split("-")[0] for w in made.wheels}
    assert {"pydantic", "pydantic_core", "rich", "nvidia_ml_py"} <= names  # pynvml: GPU state

    # the other machine: the tracked tree plus the archive, and no cargo on PATH; the unpacked
    # wheels come first on PYTHONPATH, so their pydantic is the one imported
    there = tmp_path / "gpu-box"
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                           cwd=PROJECT, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        if (PROJECT / name).is_file():
            (there / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(PROJECT / name, there / name)
    (there / "build").mkdir()
    shutil.copy2(made.archive, there / "build" / "bundle.tar.xz")
    shutil.copy2(exp, there / "mini.yaml")
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ["HOME"], "PYTHON": sys.executable}
    done = subprocess.run(["bash", "scripts/run-offline.sh", "mini.yaml", "res"], cwd=there,
                          env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "build template: up to date" in done.stderr
    data = dataset.load(there / "res")
    assert sorted(data.runs["status"]) == ["ok", "ok"]


TORCH_ONLY = """\
version: 1
defaults: {shape: [32, 32], reps: 2}
experiments:
  cpu:
    mode: mm
    targets: [{program: torch, device: cpu}]
"""


@pytest.mark.torch
def test_a_torch_only_bundle_runs_offline(tmp_path: Path) -> None:
    """A plan of torch runs bundles no build/bin; run-offline.sh runs it."""
    there = tmp_path / "gpu-box"
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                           cwd=PROJECT, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        if (PROJECT / name).is_file() and not name.startswith("docs/results/"):
            (there / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(PROJECT / name, there / name)
    # a wheel is a zip: this one holds one module, so the unpacking path is the real one
    wheels = there / "build" / "wheels"
    wheels.mkdir(parents=True)
    wheel = wheels / "offline_probe-0-py3-none-any.whl"
    subprocess.run([sys.executable, "-c", "import sys, zipfile; zipfile.ZipFile(sys.argv[1], 'w')"
                    ".writestr('offline_probe.py', 'X = 1\\n')", str(wheel)], check=True)
    carry.pack(there, [], [wheel])  # what bundle packs for a plan without burn builds
    shutil.rmtree(wheels)
    write(there / "torch.yaml", TORCH_ONLY)
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ["HOME"], "PYTHON": sys.executable}
    done = subprocess.run(["bash", "scripts/run-offline.sh", "torch.yaml", "res"], cwd=there,
                          env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "no build/bin (a torch-only bundle)" in done.stderr
    assert (there / "build" / "offline-site" / "offline_probe.py").is_file()
    assert list(dataset.load(there / "res").runs["status"]) == ["ok"]
