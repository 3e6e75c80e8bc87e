"""JAX's persistent compilation cache: what a run's folder holds, and what that proves.

The folder (`--cache-dir`, jax_compilation_cache_dir) holds one file per compiled program,
`jit_<function>-<key>-cache` (the program's matmul is `jit_matmul-...`); JAX writes one only
when its compile took at least `jax_persistent_cache_min_compile_time_secs` (default 1.0 s) and
it is at least `..._min_entry_size_bytes` (default 0) large. On a CPU a small matmul compiles
in tens of milliseconds, so with the default rule a cold process writes nothing and "warm" means
nothing: the look records the rule the run was under, and the proofs say so.
`-atime` files (the LRU eviction's access times) are rewritten by reads and left out.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

MIN_COMPILE_VAR = "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"
MIN_SIZE_VAR = "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"
DEFAULT_MIN_COMPILE_S, DEFAULT_MIN_SIZE = 1.0, 0
MATMUL_PREFIX = "jit_matmul-"
# environment variables that change what a cold or warm cache means (JAX's config reads them)
CACHE_ENV = ("JAX_COMPILATION_CACHE_DIR", "JAX_ENABLE_COMPILATION_CACHE", MIN_COMPILE_VAR,
             MIN_SIZE_VAR, "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES",
             "JAX_COMPILATION_CACHE_MAX_SIZE", "JAX_DEFAULT_MATMUL_PRECISION", "XLA_FLAGS")


def rule(env: dict[str, str]) -> dict[str, Any]:
    """The admission rule a run is under (its environment, else JAX's defaults)."""
    return {"min_compile_time_s": float(env.get(MIN_COMPILE_VAR, DEFAULT_MIN_COMPILE_S)),
            "min_entry_size_bytes": int(env.get(MIN_SIZE_VAR, DEFAULT_MIN_SIZE))}


def look(folder: Path, env: dict[str, str]) -> dict[str, Any]:
    """The entries (name -> SHA-256 of the content) and the rule: JSON-able, for the record."""
    entries: dict[str, str] = {}
    if folder.is_dir() and not folder.is_symlink():
        for path in sorted(folder.iterdir()):
            if path.is_file() and not path.name.endswith("-atime"):
                entries[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    matmul = [name for name in entries if name.startswith(MATMUL_PREFIX)]
    return {"folder": str(folder), "exists": folder.is_dir(), "entries": entries,
            "matmul": matmul, **rule(env)}


def _threshold(seen: dict[str, Any]) -> str:
    return (f"min compile time {seen['min_compile_time_s']:g} s, min entry size "
            f"{seen['min_entry_size_bytes']} B")


def cold_proof(before: dict[str, Any], after: dict[str, Any]) -> str:
    """Cold: no entry before (the folder was emptied); after, the matmul's entry written."""
    if before.get("entries"):
        return f"not cold: {before['folder']} held {len(before['entries'])} entries before"
    if not after.get("matmul"):
        return (f"cold, nothing written for the matmul ({_threshold(after)}: "
                "its compile took less)")
    return f"cold, compiled; {len(after['entries'])} entries written"


def warm_proof(before: dict[str, Any], after: dict[str, Any]) -> str:
    """Warm: the matmul's entry was there and is byte-identical after; nothing new written."""
    if not before.get("matmul"):
        return f"not proven warm: no jit_matmul entry before ({_threshold(before)})"
    kept = {n: before["entries"][n] for n in before["matmul"]}
    if any(after.get("entries", {}).get(n) != digest for n, digest in kept.items()):
        return "not warm: the jit_matmul entry changed"
    new = sorted(set(after.get("entries", {})) - set(before["entries"]))
    if new:
        return f"warm matmul entry, but {len(new)} new entries written"
    return "warm, compiled program read from the cache"
