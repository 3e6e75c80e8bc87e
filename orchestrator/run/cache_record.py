"""A run's cache record: what it found, what it left, and what that proves.

Before the process starts (`begin`): cubecl's folder as files and bytes, what the program's store
holds for this run's matmul (its program's `caches.look`), the CUDA driver cache folder
(run/driver_cache), and the run's own environment settings that change what cold or warm mean.
After it (`finish`): the same again, `wrote` (the store's contents changed, never file times),
`proof` (the one line the dataset's `cache_proof` shows) and `autotune` (what autotune chose for
the matmul: winner, its autotune median, candidates measured).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from orchestrator import programs
from orchestrator.records import CacheState, RunDef
from orchestrator.run.cache import CacheContents
from orchestrator.run.driver_cache import DISABLED, DRIVER_ENV, NAMED


def env_overrides(run: RunDef) -> dict[str, str]:
    """The run's environment settings (defaults/experiment `env`) that change cache meaning."""
    watched = (*programs.get(run.program).caches.env, *DRIVER_ENV)
    return {k: v for k, v in run.env if k in watched}


def begin(run: RunDef, path: Path, info: dict[str, Any]) -> dict[str, Any]:
    """Add the state found before the process (the cache action has been applied)."""
    # the state the process starts in (priming: cold); a profile run starts from what its
    # measured run left, so warm whatever that one was (its cache is never emptied)
    info["state"] = CacheState.WARM.value if run.profile else run.cache.value
    info["before"] = asdict(CacheContents.of(path))
    info["store_before"] = programs.get(run.program).caches.look(run, path, dict(run.env))
    overrides = env_overrides(run)
    if overrides:
        info["env"] = overrides
    return info


def _driver_text(driver: dict[str, Any] | None) -> str | None:
    if driver is None:
        return None
    held = driver["before"]["files"]
    if driver["kind"] == DISABLED:
        return "driver cache disabled (experiment env)"
    if driver["kind"] == NAMED:
        return f"driver cache from the experiment env held {held} files"
    if driver["kind"] == "cold series" and held == 0:
        return "driver cache new and empty"
    if held == 0:
        return "driver cache empty"
    return f"driver cache held {held} files ({driver['kind']})"


def proof(run: RunDef, info: dict[str, Any]) -> str:
    """One line: the cubecl store's proof, the driver cache's state, settings that change it."""
    parts = []
    before, after = info.get("store_before"), info.get("store_after")
    if before is not None and after is not None and run.cache != CacheState.NONE:
        cold = run.cache == CacheState.COLD and not run.profile  # a profile run is never cold
        parts.append(programs.get(run.program).caches.proof(cold, before, after))
    driver = _driver_text(info.get("driver_cache"))
    if driver:
        parts.append(driver)
    parts += [f"env sets {k}={v}" for k, v in info.get("env", {}).items()]
    return "; ".join(p for p in parts if p)


def autotune(look: dict[str, Any] | None) -> dict[str, Any] | None:
    """What autotune chose for the run's matmul, from the store after the run."""
    if not look or look.get("winner") is None:
        return None
    return {"kernel": look["winner"], "median_s": look["winner_median_s"],
            "measured": look["measured"], "candidates": look["candidates"], "key": look["key"]}


def finish(run: RunDef, info: dict[str, Any]) -> None:
    """Add what the process left; `wrote` from the store's digest where it could be read."""
    if "path" in info:
        path = Path(info["path"])
        after = CacheContents.of(path)
        info["after"] = asdict(after)
        look = programs.get(run.program).caches.look(run, path, dict(run.env))
        info["store_after"] = look
        before = info.get("store_before")
        readable = isinstance(look, dict) and isinstance(before, dict) and \
            look.get("exists") and not look.get("error") and not before.get("error")
        if readable:
            info["wrote"] = (before.get("autotune_digest"), before.get("sessions")) != \
                (look.get("autotune_digest"), look.get("sessions"))
        else:  # no database (a fake program, another layout): files and bytes
            info["wrote"] = after.written_since(CacheContents(**info["before"]))
        info["autotune"] = autotune(look if isinstance(look, dict) else None)
    info["proof"] = proof(run, info)
