"""The CUDA driver's compute (JIT) cache: one `CUDA_CACHE_PATH` per cold series, recorded.

docs/CACHES.md (H200 experiment): cubecl-cuda loads PTX with `cuModuleLoadData`, so the driver
compiles every autotune candidate to SASS unless its own cache holds it. A cubecl-cold run over a
warm driver cache is half-warm (15-17 s instead of 26-30 s); a fresh, empty `CUDA_CACHE_PATH`
reproduces what a new user sees (c6 ≈ c1), while `CUDA_CACHE_DISABLE=1` would also make every
later process pay the JIT, which a new user's second run does not. So:

- a cold series (its first process removes cubecl's cache) gets a new, empty folder
  `<results>/driver-cache/<run id of its first process>`, and its later processes use it too;
- warm burn series share `<results>/driver-cache/warm`, which their priming run fills;
- a program's CUDA runs outside any cache sweep get its own `<results>/driver-cache/<program>`
  (`Program.caches.driver_why` says why: precompiled SASS should leave it empty); the record
  shows whether it did.

The orchestrator's own CUDA_CACHE_* never reach a program (runner.PASS_THROUGH leaves them out);
an experiment's `env` may still set them on purpose, which the cache record flags.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from orchestrator.errors import CacheSafetyError
from orchestrator.run.cache import CacheContents

DRIVER_ENV = ("CUDA_CACHE_PATH", "CUDA_CACHE_DISABLE", "CUDA_CACHE_MAXSIZE")
WARM = "warm"
NAMED, DISABLED = "experiment env", "disabled by the experiment env"
WHY = {
    NAMED: "the experiment's env sets CUDA_CACHE_PATH: the driver cache is that folder, as "
           "found (not emptied for a cold series)",
    DISABLED: "the experiment's env sets CUDA_CACHE_DISABLE: the driver JIT cache is off",
    "cold series": "docs/CACHES.md: a warm driver JIT cache makes a cubecl-cold first call "
                   "half-warm (H200: 15-17 s vs 26-30 s); a new empty CUDA_CACHE_PATH is what "
                   "a new user has",
    WARM: "docs/CACHES.md: warm series share one driver JIT cache, filled by their priming run",
}


def folder(root: Path, cold_series: str | None, cached: bool,
           program: str = "") -> tuple[Path, str]:
    """(folder, kind) for a run: its cold series' own, the shared warm one, or its program's
    own (kind = the program's name)."""
    if cold_series is not None:
        return root / cold_series, "cold series"
    return (root / WARM, WARM) if cached else (root / program, program)


def named(env: dict[str, str]) -> dict[str, Any] | None:
    """The driver cache an experiment's `env` chose (CUDA_CACHE_PATH, CUDA_CACHE_DISABLE): the
    record describes that one, never a folder of ours the program did not use; it is read,
    not made nor emptied (it is the experiment's). None when the env sets neither."""
    if env.get("CUDA_CACHE_DISABLE", "0") not in ("", "0"):
        return {"path": None, "kind": DISABLED, "why": WHY[DISABLED],
                "before": {"files": 0, "bytes": 0}}
    if "CUDA_CACHE_PATH" not in env:
        return None
    path = Path(env["CUDA_CACHE_PATH"])
    return {"path": str(path.absolute()), "kind": NAMED, "why": WHY[NAMED],
            "before": _contents(path)}


def _contents(path: Path) -> dict[str, Any]:
    seen = CacheContents.of(path)
    return {"files": seen.files, "bytes": seen.bytes}


def prepare(root: Path, cold_series: str | None, first: bool, cached: bool,
            program: tuple[str, str] = ("", "")) -> dict[str, Any]:
    """Make the run's driver cache folder (emptied for a cold series' first process);
    `program`: its name and why its own folder (Program.caches.driver_why)."""
    path, kind = folder(root, cold_series, cached, program[0])
    for part in (path, *path.parents):
        if part == root.parent:
            break
        if part.is_symlink():
            raise CacheSafetyError(f"refusing to use driver cache {path}: {part} is a symlink")
    if first and kind == "cold series" and path.exists():
        shutil.rmtree(path)  # a resumed or retried series starts cold again
    path.mkdir(parents=True, exist_ok=True)
    return {"path": str(path.absolute()), "kind": kind, "why": WHY.get(kind, program[1]),
            "before": _contents(path)}


def finish(info: dict[str, Any]) -> None:
    """Add what the folder holds after the run."""
    empty = {"files": 0, "bytes": 0}
    info["after"] = _contents(Path(info["path"])) if info["path"] else empty


def overrides(env: dict[str, str]) -> dict[str, str]:
    """The run's own CUDA_CACHE_* settings (an experiment's `env`)."""
    return {k: env[k] for k in DRIVER_ENV if k in env}
