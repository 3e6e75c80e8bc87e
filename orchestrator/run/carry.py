"""Prepare a sweep for a machine with a GPU but no cargo and no network.

`bundle` builds every burn build the plan needs there (capabilities this machine lacks, such as
`cuda`, are assumed present) into `build/bin/`, downloads the wheels the orchestrator needs beyond
what such a machine usually has (pydantic, rich) for its Python into `build/wheels/`, and packs
both into one `build/bundle.tar.xz` (a CUDA binary of burn is ~75 MB; xz makes it a fraction).
Copy the project with that archive; `scripts/run-offline.sh` unpacks it, makes the wheels
importable without pip or a network, and runs the sweep with the carried binaries, which `run`
finds up to date by their stamp.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from orchestrator import programs
from orchestrator.errors import OrchestratorError
from orchestrator.experiments.config import ExperimentsFile
from orchestrator.experiments.plan import PlannedRun, builds_needed
from orchestrator.records import BuildResult

# What the orchestrator imports that a bare GPU box (torch, pandas, numpy, psutil, PyYAML) lacks;
# nvidia-ml-py (pynvml, the GPU state around each run) too, in case its Python has none.
OFFLINE_PACKAGES = ("pydantic", "rich", "nvidia-ml-py")


@dataclass(frozen=True)
class Bundle:
    builds: list[BuildResult]
    wheels: list[Path]
    archive: Path


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
    builder = programs.builders(project)
    results = [builder.build(name, build)
               for name, build in builds_needed(config, planned).items()]
    wheels = download_wheels(project / "build" / "wheels", python_version, platform)
    archive = pack(project, [r.binary.parent for r in results if r.binary is not None], wheels)
    return Bundle(results, wheels, archive)


def pack(project: Path, bin_dirs: list[Path], wheels: list[Path]) -> Path:
    """One archive with paths relative to the project; only the builds this plan needs."""
    archive = project / "build" / "bundle.tar.xz"
    # a new file of our own beside it (never a fixed name a link could be planted at), renamed
    # over: the rename replaces the name, whatever it was, and writes through nothing
    fd, name = tempfile.mkstemp(prefix=".bundle.", suffix=".tmp", dir=archive.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:xz", preset=6) as tar:
            for path in [*bin_dirs, *wheels]:
                tar.add(path, arcname=str(path.relative_to(project)))
        os.chmod(tmp, 0o644)
        tmp.replace(archive)
    finally:
        tmp.unlink(missing_ok=True)
    return archive
