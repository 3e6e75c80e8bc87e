"""Prepare a sweep for a machine with a GPU but no cargo and no network.

`bundle` builds every burn build the plan needs there (capabilities this machine lacks, such as
`cuda`, are assumed present) into `build/bin/`, and downloads the wheels the orchestrator needs
beyond what such a machine usually has (pydantic, rich) for its Python into `build/wheels/`.
Copy the project with those two folders; `scripts/run-offline.sh` installs the wheels without a
network and runs the sweep with the carried binaries, which `run` finds up to date by their stamp.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .build import Builder, BuildResult
from .config import ExperimentsFile
from .errors import OrchestratorError
from .plan import PlannedRun, builds_needed

# What the orchestrator imports that a bare GPU box (torch, pandas, numpy, psutil, PyYAML) lacks.
OFFLINE_PACKAGES = ("pydantic", "rich")


@dataclass(frozen=True)
class Bundle:
    builds: list[BuildResult]
    wheels: list[Path]


def download_wheels(dest: Path, python_version: str, platform: str) -> list[Path]:
    """Wheels for another interpreter (e.g. 3.12 on manylinux x86-64), dependencies included."""
    dest.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:",
            "--python-version", python_version, "--platform", platform,
            "--implementation", "cp", "-d", str(dest), *OFFLINE_PACKAGES]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no error text"]
        raise OrchestratorError(f"pip download failed: {tail[0]}")
    return sorted(dest.glob("*.whl"))


def bundle(project: Path, config: ExperimentsFile, planned: list[PlannedRun],
           python_version: str, platform: str) -> Bundle:
    builder = Builder(project)
    results = [builder.build(name, build)
               for name, build in builds_needed(config, planned).items()]
    wheels = download_wheels(project / "build" / "wheels", python_version, platform)
    return Bundle(results, wheels)
