"""A program's on-disk cache: where it is, removing it safely, and whether a run wrote it.

A program that names its own folder (`Program.cache_home`, project-relative: JAX's compilation
cache) has it there; burn's is cubecl's, found from the working folder:

cubecl keeps autotune results in `<dir>/target/environment/`, where `<dir>` is the outermost
folder holding a `Cargo.toml` on the way up from the process's working directory (see
bench_rust/README.md for the source lines). A cold run must remove exactly that folder and
nothing else: anything outside the project's `bench_rust/` tree, reached through a symlink, or not
named like the cache is refused before a single file is touched.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from orchestrator import programs
from orchestrator.data.records import RunDef
from orchestrator.errors import CacheSafetyError

CACHE_PARTS = ("target", "environment")
# cubecl-runtime 0.11.3 config/base.rs:65,69 looks for both spellings of each; on a
# case-insensitive disk they are one file, which is found either way
CONFIG_FILES = ("cubecl.toml", "burn.toml", "CubeCL.toml", "Burn.toml")


def cache_dir_for(cwd: Path) -> Path:
    """The folder cubecl will use for a process started in `cwd`."""
    cwd = Path(os.path.abspath(cwd))
    outermost = None
    for folder in (cwd, *cwd.parents):
        if (folder / "Cargo.toml").is_file():
            outermost = folder
    if outermost is None:
        raise CacheSafetyError(
            f"no Cargo.toml above {cwd}: cubecl would use a per-user cache, which the "
            "orchestrator never deletes; start burn programs inside bench_rust/")
    return outermost.joinpath(*CACHE_PARTS)


def cache_home(run: RunDef, project: Path, cwd: Path) -> tuple[Path, Path, tuple[str, ...]]:
    """(the run's cache folder, the folder it must lie in, the names it must end with): the
    program's own `cache_home` under the project, else cubecl's folder above `cwd`."""
    home = programs.get(run.program).cache_home
    if home:
        return project.joinpath(*home), project / home[0], home[1:]
    return cache_dir_for(cwd), project / "bench_rust", CACHE_PARTS


def config_override(cwd: Path) -> Path | None:
    """A cubecl/burn config file on the way up that may move the cache (we then refuse)."""
    for folder in (Path(os.path.abspath(cwd)), *Path(os.path.abspath(cwd)).parents):
        for name in CONFIG_FILES:
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
    `results.sqlite`, or its `.lock` holding 'pid N' (data/store.py); else None."""
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
                 owner: str = "burn") -> CacheContents:
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
