"""JAX's persistent compilation cache: what a run's folder holds, and what that proves.

The folder (`--cache-dir`, jax_compilation_cache_dir) holds one file per compiled program,
`jit_<function>-<key>-cache` (the program's matmul is `jit_matmul-...`); JAX writes one only
when its compile took at least `jax_persistent_cache_min_compile_time_secs` (default 1.0 s) and
it is at least `..._min_entry_size_bytes` (default 0) large. On a CPU a small matmul compiles
in tens of milliseconds, so with the default rule a cold process writes nothing and "warm" means
nothing: the look records the rule the run was under, and the proofs say so.
`-atime` files (the LRU eviction's access times) are rewritten by reads and left out.

The folder is the user's to plant things in: a link inside it is neither followed nor hashed,
an entry is hashed in chunks and only up to ENTRY_READ_LIMIT (a larger one is named by its size
and modification time: a 3 GB file is never read whole), at most MAX_ENTRIES are looked at. A
folder that is itself a link, or that this user cannot write, proves nothing either way: JAX
writes through the link into a folder we do not look at, or writes nothing at all, and the
proofs say so instead of "cold, nothing written". The rule's variables (ENV_VALUES) are checked
where the experiments file is (experiments/limits), so a bad value is one line naming it.
"""

from __future__ import annotations

import hashlib
import math
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.programs.caches import Caches
from orchestrator.records import RunDef

MIN_COMPILE_VAR = "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"
MIN_SIZE_VAR = "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"
DEFAULT_MIN_COMPILE_S, DEFAULT_MIN_SIZE = 1.0, 0
MATMUL_PREFIX = "jit_matmul-"
# environment variables that change what a cold or warm cache means (JAX's config reads them)
CACHE_ENV = ("JAX_COMPILATION_CACHE_DIR", "JAX_ENABLE_COMPILATION_CACHE", MIN_COMPILE_VAR,
             MIN_SIZE_VAR, "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES",
             "JAX_COMPILATION_CACHE_MAX_SIZE", "JAX_DEFAULT_MATMUL_PRECISION", "XLA_FLAGS")


ENTRY_READ_LIMIT = 256 << 20  # a compiled matmul is kilobytes to megabytes
MAX_ENTRIES = 10_000
_CHUNK = 1 << 20
_BOOLS = ("1", "0", "true", "false", "yes", "no", "on", "off", "y", "n", "t", "f")


def seconds(value: str) -> float:
    """A compile-time threshold: a finite number of seconds, as JAX's config reads it."""
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"expected a number of seconds (e.g. 0 or 1.5), got {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"expected a finite number of seconds, got {value!r}")
    return number


def whole(value: str) -> int:
    """A size or count: a whole number (JAX's config reads it with int())."""
    try:
        return int(value.strip(), 10)
    except ValueError:
        raise ValueError(f"expected a whole number, got {value!r}") from None


def flag(value: str) -> bool:
    if value.strip().lower() not in _BOOLS:
        raise ValueError(f"expected true or false (or 1, 0), got {value!r}")
    return value.strip().lower() in ("1", "true", "yes", "on", "y", "t")


# the variables whose values this module (and so the proofs) reads: their parsers
ENV_VALUES: dict[str, Callable[[str], object]] = {
    MIN_COMPILE_VAR: seconds, MIN_SIZE_VAR: whole, "JAX_COMPILATION_CACHE_MAX_SIZE": whole,
    "JAX_ENABLE_COMPILATION_CACHE": flag}


def rule(env: dict[str, str]) -> dict[str, Any]:
    """The admission rule a run is under (its environment, else JAX's defaults)."""
    return {"min_compile_time_s": seconds(env.get(MIN_COMPILE_VAR, str(DEFAULT_MIN_COMPILE_S))),
            "min_entry_size_bytes": whole(env.get(MIN_SIZE_VAR, str(DEFAULT_MIN_SIZE)))}


def _digest(folder: Path, name: str) -> str | None:
    """SHA-256 of a plain file's content, read in chunks without following a link; past
    ENTRY_READ_LIMIT its size and modification time instead. None: not a plain file."""
    try:
        fd = os.open(folder / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        seen = os.fstat(fd)
        if not stat.S_ISREG(seen.st_mode):
            return None
        if seen.st_size > ENTRY_READ_LIMIT:
            return f"size {seen.st_size}, mtime {seen.st_mtime_ns} (not read: over the limit)"
        digest = hashlib.sha256()
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
        return digest.hexdigest()


def _entries(folder: Path) -> dict[str, str]:
    names: list[str] = []
    with os.scandir(folder) as listing:
        for entry in listing:
            if entry.is_file(follow_symlinks=False) and not entry.name.endswith("-atime"):
                names.append(entry.name)
            if len(names) >= MAX_ENTRIES:
                break
    return {name: digest for name in sorted(names)
            if (digest := _digest(folder, name)) is not None}


def _writable(folder: Path) -> bool:
    """Whether JAX could write entries there (the folder, or where it would be made)."""
    place = folder
    while not place.exists() and place != place.parent:
        place = place.parent
    return os.access(place, os.W_OK)


def look(folder: Path, env: dict[str, str]) -> dict[str, Any]:
    """The entries (name -> SHA-256 of the content) and the rule: JSON-able, for the record.
    `link`: where the folder leads when it is a link (its entries then not read);
    `writable`: whether JAX could write there."""
    entries: dict[str, str] = {}
    link = os.readlink(folder) if folder.is_symlink() else None
    if folder.is_dir() and link is None:
        try:
            entries = _entries(folder)
        except OSError:
            entries = {}
    matmul = [name for name in entries if name.startswith(MATMUL_PREFIX)]
    found = {"folder": str(folder), "exists": folder.is_dir(), "entries": entries,
             "matmul": matmul, "writable": _writable(folder), **rule(env)}
    if link is not None:
        found["link"] = link
    return found


def _unprovable(before: dict[str, Any], after: dict[str, Any]) -> str | None:
    """Why this folder proves nothing: a link (JAX wrote where we did not look)."""
    for seen in (before, after):
        if seen.get("link") is not None:
            return (f"not proven: {seen['folder']} is a link to {seen['link']} (JAX reads and "
                    "writes there; its entries are not looked at)")
    return None


def _threshold(seen: dict[str, Any]) -> str:
    return (f"min compile time {seen['min_compile_time_s']:g} s, min entry size "
            f"{seen['min_entry_size_bytes']} B")


def cold_proof(before: dict[str, Any], after: dict[str, Any]) -> str:
    """Cold: no entry before (the folder was emptied); after, the matmul's entry written."""
    if (why := _unprovable(before, after)) is not None:
        return why
    if before.get("entries"):
        return f"not cold: {before['folder']} held {len(before['entries'])} entries before"
    if not after.get("matmul") and not after.get("writable", True):
        return (f"cold, but nothing could be written: {after['folder']} is not writable (JAX "
                "kept no entry)")
    if not after.get("matmul"):
        return (f"cold, nothing written for the matmul ({_threshold(after)}: "
                "its compile took less)")
    return f"cold, compiled; {len(after['entries'])} entries written"


def warm_proof(before: dict[str, Any], after: dict[str, Any]) -> str:
    """Warm: the matmul's entry was there and is byte-identical after; nothing new written."""
    if (why := _unprovable(before, after)) is not None:
        return why
    if not before.get("matmul"):
        return f"not proven warm: no jit_matmul entry before ({_threshold(before)})"
    kept = {n: before["entries"][n] for n in before["matmul"]}
    if any(after.get("entries", {}).get(n) != digest for n, digest in kept.items()):
        return "not warm: the jit_matmul entry changed"
    new = sorted(set(after.get("entries", {})) - set(before["entries"]))
    if new:
        return f"warm matmul entry, but {len(new)} new entries written"
    return "warm, compiled program read from the cache"


@dataclass(frozen=True)
class JaxCaches(Caches):
    """JAX's compilation cache as its Program's part: its looks and proofs above."""

    def look(self, run: RunDef, cache_dir: Path, env: dict[str, str]) -> Any:
        return look(cache_dir, env)

    def proof(self, cold: bool, before: Any, after: Any) -> str:
        return (cold_proof if cold else warm_proof)(before, after)
