"""Proof of a burn run's autotune-cache state, read from cubecl's store (cubecl_store).

A warm run is *proven* warm when, before it, the store holds the matmul entry for this device,
tuner and shape, and, after it, that entry is byte-identical and no new session row was written
(cubecl writes a session only when a process stored a tune). `wrote` compares content digests,
never file times: Turso's lock file gets a new mtime even from a read-only process
(/work/brief/cubecl-findings.md, Q1). The entry's winner is what autotune chose.

Key facts (cubecl 0.11.3): namespace `autotune/<version>/<device id>/<tuner>`, the plain matmul's
tuner is `burn_cubecl-kernel-matmul-tune-base`; m, n, k are anchored by the autotune level
(cubecl-runtime tune/util.rs `anchor`, no max/min for matmul: cubek-matmul tune_key.rs).
bench_rust multiplies a [M, N] by b [N, M]: the key is m = M, n = M, k = N.
"""

from __future__ import annotations

import fnmatch
import hashlib
import math
from pathlib import Path
from typing import Any

from orchestrator.programs.burn import cubecl_store as store

MATMUL_TUNER = "burn_cubecl-kernel-matmul-tune-base"
# device id = device-<type_id>-<index_id>-<client name>; CUDA's is checked on the H200 fixture,
# wgpu's client names are cubecl-wgpu runtime.rs:618-620 (type id depends on the adapter kind)
DEVICE_IDS = {"cuda": "device-0-0-cuda", "metal": "device-*-0-wgpu<msl>",
              "vulkan": "device-*-0-wgpu<spirv>"}
LEVELS = {"minimal": 0, "0": 0, "balanced": 1, "1": 1, "extensive": 2, "2": 2, "full": 3, "3": 3}
_FACTOR = {0: 1.25, 1: 1.0, 2: 0.75}
# environment variables that change what a cold or warm cubecl cache means (cubecl-runtime
# config/base.rs, cubecl-environment): no cache, another key, another tune, another file
CACHE_ENV = ("CUBECL_AUTOTUNE_CACHE", "CUBECL_AUTOTUNE_LEVEL", "CUBECL_AUTOTUNE_SHORT_CIRCUIT",
             "CUBECL_AUTOTUNE_BENCH_ADAPTIVE", "CUBECL_ENVIRONMENT", "CUBECL_THROUGHPUT_CACHE")


def anchor(x: int, level: int = 1) -> int:
    """cubecl's `anchor(x, None, None, None)` at an autotune level (1 = balanced, default)."""
    if level == 3:
        return x
    base = max(2 * _FACTOR[level], 1.1)
    # round before ceil: log(1024, 2) may come out a hair above 10 in floating point
    exp = math.ceil(round(math.log(x, base), 9))
    return math.ceil(round(base ** exp, 6))


def matmul_key(shape: tuple[int, int], env: dict[str, str]) -> tuple[int, int, int]:
    """(m, n, k) as stored for bench_rust's a [M, N] @ b [N, M] under this environment."""
    level = LEVELS.get(env.get("CUBECL_AUTOTUNE_LEVEL", "balanced").lower(), 1)
    rows, inner = shape
    return anchor(rows, level), anchor(rows, level), anchor(inner, level)


def describe_key(device: str, key: tuple[int, int, int]) -> str:
    m, n, k = key
    return f"{DEVICE_IDS.get(device, device)} {MATMUL_TUNER} m={m} n={n} k={k} F32"


def database(env_dir: Path, env: dict[str, str]) -> Path:
    """The database file cubecl uses in `env_dir` (`CUBECL_ENVIRONMENT` renames it)."""
    return env_dir / f"{env.get('CUBECL_ENVIRONMENT') or 'default'}.db"


def look(env_dir: Path, device: str, shape: tuple[int, int], env: dict[str, str]) -> dict[str, Any]:
    """What the store holds for this run's matmul: JSON-able, for the run's cache record."""
    key = matmul_key(shape, env)
    db = database(env_dir, env)
    seen: dict[str, Any] = {"database": str(db), "key": describe_key(device, key),
                            "exists": db.is_file(), "error": None, "autotune_digest": None,
                            "sessions": 0, "entries": 0, "entry_digest": None}
    if not db.is_file():
        return seen
    try:
        rows = store.read_rows(db, store.AUTOTUNE)
        seen["sessions"] = len(store.read_rows(db, store.SESSIONS))
        seen["autotune_digest"] = store.content_digest(db)
    except store.StoreError as err:
        seen["error"] = str(err)
        return seen
    seen["entries"] = len(rows)
    pattern = f"{store.AUTOTUNE}*/{DEVICE_IDS.get(device, device)}/{MATMUL_TUNER}"
    mine = [(row, store.decode_entry(*row)) for row in rows
            if fnmatch.fnmatchcase(row[0], pattern)]
    wanted = store.matmul_entries([entry for _, entry in mine], *key)
    if wanted:
        entry = wanted[0]
        raw = next(row for row, e in mine if e is entry)
        seen["entry_digest"] = hashlib.sha256(raw[1] + b"\0" + raw[2]).hexdigest()
        median = entry["winner_median_ns"]
        seen.update(winner=entry["winner"], measured=entry["measured"],
                    candidates=len(entry["results"]),
                    winner_median_s=None if median is None else median / 1e9)
    return seen


def wrote(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Did the run change the store's contents (autotune rows or sessions)?"""
    return (before.get("autotune_digest"), before.get("sessions")) != \
        (after.get("autotune_digest"), after.get("sessions"))


def warm_proof(before: dict[str, Any], after: dict[str, Any]) -> str:
    """'warm, no autotune' only when the store proves it; else what is missing or changed."""
    if before.get("error"):
        return f"not proven warm: store unreadable before ({before['error']})"
    if before.get("entry_digest") is None:
        return f"not proven warm: no entry for {before['key']}"
    if after.get("error"):
        return f"not proven warm: store unreadable after ({after['error']})"
    if after.get("entry_digest") != before["entry_digest"]:
        return f"not warm: the entry for {before['key']} changed"
    new = after.get("sessions", 0) - before.get("sessions", 0)
    if new > 0:
        return f"warm matmul entry, but {new} new session row(s): the run stored another tune"
    return "warm, no autotune"


def cold_proof(before: dict[str, Any], after: dict[str, Any]) -> str:
    """A cold run found no database (it was removed) and, after it, the entry it tuned."""
    if before.get("exists"):
        return f"not cold: {before['database']} existed before the run"
    if after.get("entry_digest") is None:
        return f"cold, but no entry for {after['key']} after the run"
    return "cold, autotuned"
