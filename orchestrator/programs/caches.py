"""A program's caches, one part of its `Program` (`Program.caches`): its cache strategy.

Where its on-disk cache lives (`home`, project-relative, or a rule of its own: `place`), which
runs read it (`devices`, and the execution modes that do on any device: `exec_modes`), what
may move it (files above the working folder, `overrides`; variables, `env`), whether a warm
series needs its priming run even when the folder is not empty (`prime_warm`), whether its
caches can be saved as one blob and loaded into empty folders (`artifacts`), how a run's
store looks (`look`) and what the looks before and after prove (`proof`: cold or warm), and
which devices' runs get a CUDA driver JIT cache folder of their own (`driver_devices`, and why:
`driver_why`). A program without an on-disk cache keeps the default: none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.records import RunDef

DRIVER_WHY = ("its CUDA kernels are not autotuned into a cache of its own: the driver JIT cache "
              "is recorded to show it")


@dataclass(frozen=True)
class Caches:
    """A program's cache strategy; subclasses say how its store looks and what that proves."""

    # devices whose runs autotune into the on-disk cache: a cache sweep means something there
    devices: tuple[str, ...] = ()
    # the cache's folder, project-relative ('bench_py', 'target', 'jax-cache'): a cold run
    # removes it, and only a folder of that name inside project/<first part>
    home: tuple[str, ...] = ()
    # the execution modes whose runs read and write it on every device (torch.compile's)
    exec_modes: tuple[str, ...] = ()
    # a warm series gets its priming run even when the folder is not empty: the folder holds
    # other runs' entries too (every mode and shape), so only a run of the same definition
    # puts this one's there
    prime_warm: bool = False
    # its cached runs can also save their caches as one blob of artifacts and load it into
    # emptied folders (torch.compile's mega-cache): a `cache: [mega]` series means something
    # (its priming run saves, its first process loads; `argv` says where); elsewhere the plan
    # refuses `mega` on a cached target
    artifacts: bool = False
    env: tuple[str, ...] = ()  # variables that change what cold or warm means (flagged)
    overrides: tuple[str, ...] = ()  # files above the working folder that may move it
    # devices whose runs go through the CUDA driver: each gets its own CUDA_CACHE_PATH
    driver_devices: tuple[str, ...] = ()
    # why a CUDA run with no on-disk cache of its own gets the driver JIT cache folder
    # (`<results>/driver-cache/<name>`); the run's record says it
    driver_why: str = DRIVER_WHY

    def cached(self, device: str, exec_mode: str | None = None) -> bool:
        """Does a run on `device` in `exec_mode` read the on-disk cache (so a cache sweep
        means something there)?"""
        return device in self.devices or (exec_mode is not None and exec_mode in self.exec_modes)

    def place(self, project: Path, cwd: Path) -> tuple[Path, Path, tuple[str, ...]]:
        """(its cache folder, the folder that must hold it, the names it must end with) for a
        run started in `cwd`: by default the project-relative `home`."""
        return project.joinpath(*self.home), project / self.home[0], self.home[1:]

    def argv(self, run: RunDef, home: Path) -> list[str]:
        """What a cached run's argv gains: the folder (and a mega-cache blob) it uses; none
        by default (a program that finds its cache by its environment)."""
        return []

    def look(self, run: RunDef, cache_dir: Path, env: dict[str, str]) -> Any:
        """What the on-disk cache holds for this run (JSON-able), when the program can tell."""
        return None

    def proof(self, cold: bool, before: Any, after: Any) -> str:
        """The cache state the run's store looks prove ('warm, no autotune', ...)."""
        return ""
