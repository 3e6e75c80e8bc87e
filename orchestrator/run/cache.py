"""A program's on-disk cache: where it is, removing it safely, and whether a run wrote it.

Where the folder is, is the program's rule (`Program.caches.place`: a project-relative
`home`, or a rule of its own, as cubecl's above the working folder in programs/burn/).
A cold run must remove exactly that folder and nothing else: anything outside the folder the
program names, reached through a symlink, or not named like the cache is refused before a
single file is touched.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from orchestrator import programs
from orchestrator.errors import CacheSafetyError
from orchestrator.programs.burn import CACHE_PARTS, cache_dir_for
from orchestrator.records import RunDef

__all__ = ["CACHE_PARTS", "CacheContents", "cache_dir_for", "cache_home", "check_removable",
           "config_override", "remove_cache"]



def cache_home(run: RunDef, project: Path, cwd: Path) -> tuple[Path, Path, tuple[str, ...]]:
    """(the run's cache folder, the folder it must lie in, the names it must end with): the
    program's own rule (Program.caches.place: its `home`, or cubecl's above `cwd`)."""
    return programs.get(run.program).caches.place(project, cwd)


def config_override(cwd: Path, names: tuple[str, ...] | None = None) -> Path | None:
    """A config file on the way up that may move the cache (we then refuse): `names` are the
    program's `caches.overrides`; None: every registered program's."""
    if names is None:
        names = tuple(n for p in programs.active().programs for n in p.caches.overrides)
    for folder in (Path(os.path.abspath(cwd)), *Path(os.path.abspath(cwd)).parents):
        for name in names:
            if (folder / name).is_file():
                return folder / name
    return None


@dataclass(frozen=True)
class CacheContents:
    """What the cache folder holds: the record's before/after/removed."""

    path: str
    exists: bool
    files: int
    bytes: int
    newest_mtime: float

    @classmethod
    def of(cls, path: Path) -> CacheContents:
        files = total = 0
        newest = 0.0
        if path.is_dir() and not path.is_symlink():
            for root, _dirs, names in os.walk(path):
                for name in names:
                    st = os.lstat(os.path.join(root, name))
                    files += 1
                    total += st.st_size
                    newest = max(newest, st.st_mtime)
        return cls(str(path), path.is_dir(), files, total, newest)

    def written_since(self, before: CacheContents) -> bool:
        """Did the folder's files change (count or bytes)? File times are left out: Turso's
        lock file gets a new mtime from a process that only reads (cubecl_proof). Where the
        store can be read, its content digest decides instead (cache_record)."""
        return (self.files, self.bytes) != (before.files, before.bytes)


def check_removable(path: Path, rust_dir: Path, parts: tuple[str, ...] = CACHE_PARTS) -> Path:
    """The resolved cache folder if it is safe to remove; CacheSafetyError otherwise. `rust_dir`
    is the folder it must lie in (bench_rust/ for cubecl's), `parts` the names it ends with."""
    rust_root = Path(os.path.realpath(rust_dir))
    literal = Path(os.path.abspath(path))
    if tuple(literal.parts[-len(parts):]) != parts:
        raise CacheSafetyError(f"refusing to remove {path}: not a '{'/'.join(parts)}' "
                               "cache folder")
    # Any symlink on the way (the cache itself, target/, or a parent) could lead outside.
    for part in (literal, *literal.parents):
        if part.is_symlink():
            raise CacheSafetyError(f"refusing to remove {path}: {part} is a symlink")
    resolved = Path(os.path.realpath(literal))
    if resolved == rust_root or rust_root not in resolved.parents:
        raise CacheSafetyError(f"refusing to remove {path}: it resolves to {resolved}, "
                               f"outside {rust_root}")
    if resolved.exists() and not resolved.is_dir():
        raise CacheSafetyError(f"refusing to remove {path}: not a folder")
    store = _results_store_in(resolved)
    if store is not None:  # a --results folder inside the cache: never delete a store
        raise CacheSafetyError(f"refusing to remove {path}: it holds a results store ({store})")
    return resolved


def _results_store_in(folder: Path) -> Path | None:
    """A results store's file anywhere under `folder` (symlinks not followed): its
    `results.sqlite`, or its `.lock` holding 'pid N' (data/store_guard.py); else None."""
    if not folder.is_dir():
        return None
    for root, _dirs, names in os.walk(folder):
        if "results.sqlite" in names:
            return Path(root) / "results.sqlite"
        if ".lock" in names and _store_lock(Path(root) / ".lock"):
            return Path(root) / ".lock"
    return None


def _store_lock(path: Path) -> bool:
    try:
        return path.read_bytes()[:4] == b"pid "
    except OSError:
        return False


def remove_cache(path: Path, rust_dir: Path, parts: tuple[str, ...] = CACHE_PARTS,
                 owner: str = "the program") -> CacheContents:
    """Remove a cache folder; returns what was there (files, bytes) for the record. `owner`:
    whose cache it is, for the reason of a failed run (the program's title)."""
    resolved = check_removable(path, rust_dir, parts)
    before = CacheContents.of(resolved)
    if resolved.exists():
        _rmtree(resolved, owner)
    return before


def _rmtree(folder: Path, owner: str) -> None:
    """shutil.rmtree, its error naming the whole path of what could not be removed (an
    immutable or busy file): CacheSafetyError, a failed run with that reason."""
    def failed(_func: object, path: str, exc: BaseException) -> None:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CacheSafetyError(f"cannot empty {owner}'s cache {folder}: {path}: {why} "
                               "(the run did not start)")

    if sys.version_info >= (3, 12):
        shutil.rmtree(folder, onexc=failed)
    else:  # 3.11: onerror, with (type, value, traceback)
        shutil.rmtree(folder, onerror=lambda f, p, info: failed(f, p, info[1]))
