"""Where a command may write: only a new path, or a file it wrote before as that same output.

`export`, `parse` (a CSV, its samples CSV and its schema sidecar), `report` and `compare` (a
folder of files) write through here. A path is written only if nothing is there, or it is a
regular file of this user that this orchestrator wrote as that output and nobody changed since
(its SHA-256 is kept: in the CSV's sidecar, in a folder's manifest `.orchestrator-report.json`
or `.orchestrator-compare.json`, one per command, so both may share a folder); never a symlink,
a folder, another program's or user's file, or an input of the same command (the results store,
its lock and journals, a log being read: compared by resolved path and by inode, so a symlink
or hard link to the store is caught too). Everything else is one line (InputError) before a
byte is written. A folder is rendered into a staging folder inside it first and each file moved
into place, so a refusal found late still leaves the folder as it was; files that the previous
manifest lists, this write did not produce and nobody changed are removed (stale tables of an
earlier report), never anything else: the manifest keeps each file's identity (device, inode,
mtime), so a manifest planted or copied in names nothing we remove, and a manifest or sidecar,
like any file overwritten or removed as ours, must belong to this user: another user who may
write the folder cannot plant one naming our files. A staging folder a killed writer left (its
pid in the name, that process gone) is removed next time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from orchestrator.data.store import DB_NAME
from orchestrator.errors import InputError

MANIFEST = ".orchestrator-{}.json"  # per writer: .orchestrator-report.json
_STORE_FILES = (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", f"{DB_NAME}-journal", ".lock")
_ADVICE = "remove it or choose another path"


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass(frozen=True)
class Inputs:
    """What a command reads; none of it may be written."""

    paths: tuple[Path, ...] = ()

    @classmethod
    def of(cls, sources: Iterable[Path | str]) -> Inputs:
        """A results folder stands for its store files; a file (a log) for itself."""
        paths: list[Path] = []
        for source in sources:
            path = Path(source)
            paths += [path / n for n in _STORE_FILES] if path.is_dir() else [path]
        return cls(tuple(paths))

    def holds(self, path: Path) -> Path | None:
        """The input that `path` is (the same resolved path or the same file), if any."""
        real = os.path.realpath(path)
        ident = _identity(path)
        for source in self.paths:
            if os.path.realpath(source) == real or (ident and ident == _identity(source)):
                return source
        return None


NO_INPUTS = Inputs()


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def prepare_folder(folder: Path, flag: str) -> None:
    """Make `folder` (and its parents) or say in one line why that cannot be."""
    place = folder
    while not place.exists() and not place.is_symlink() and place != place.parent:
        place = place.parent
    if place.exists() and not place.is_dir():
        raise InputError(f"{flag}: {place} is a file, not a folder; choose another path")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{flag}: cannot create {folder}: {exc.strerror}; choose another "
                         "path") from None


def check_target(path: Path, flag: str, inputs: Inputs, ours: Callable[[Path], bool],
                 what: str) -> None:
    """Refuse to write `path` unless it is new or ours (see the module's docstring)."""
    source = inputs.holds(path)
    if source is not None:
        same = "" if Path(os.path.abspath(source)) == Path(os.path.abspath(path)) else \
            f" (the same file as {source})"
        raise InputError(f"{flag}: {path} is an input of this command{same}; not overwriting "
                         "it (choose another path)")
    if path.is_symlink():
        raise InputError(f"{flag}: {path} is a symlink; not writing through it ({_ADVICE})")
    if not path.exists():
        return
    if path.is_dir():
        raise InputError(f"{flag}: {path} is a folder, not a file; choose another path")
    if not path.is_file():
        raise InputError(f"{flag}: {path} exists and is not a regular file ({_ADVICE})")
    if (owner := path.lstat().st_uid) != os.geteuid():
        raise InputError(f"{flag}: {path} belongs to uid {owner}, not to this user; not "
                         f"overwriting it ({_ADVICE})")
    if not ours(path):
        raise InputError(f"{flag}: {path} exists and was not written by {what}; not "
                         f"overwriting it ({_ADVICE})")


def refuse_changed(path: Path, flag: str, digests: dict[str, str], what: str) -> None:
    """A file we wrote (listed with its digest) that someone changed since is theirs now."""
    sha = digests.get(path.name)
    if sha and path.is_file() and not path.is_symlink() and digest(path) != sha:
        raise InputError(f"{flag}: {path} was changed since {what} wrote it; not overwriting "
                         f"it ({_ADVICE})")


def replace_file(path: Path, flag: str, write: Callable[[Path], None]) -> None:
    """Write into a temporary file beside `path`, then rename it over: no half-written file,
    and a rename replaces a name, never writes through it."""
    tmp = stage_file(path, flag, write)
    try:
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"{flag}: cannot write {path}: {exc.strerror}") from None
    finally:
        tmp.unlink(missing_ok=True)


def stage_file(path: Path, flag: str, write: Callable[[Path], None]) -> Path:
    """`path`'s content written whole into a new temporary file beside it (the caller renames
    it over `path`, or removes it): a full disk fails here, before any name is replaced."""
    _remove_dead_files(path)
    try:
        # the writer's pid in the name: what a SIGKILL leaves, the next write removes
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}-", dir=path.parent)
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp's 0600 would outlive the rename
        os.close(fd)
    except OSError as exc:
        raise InputError(f"{flag}: cannot write into {path.parent}: {exc.strerror}; choose "
                         "another path") from None
    try:
        write(Path(tmp))
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(f"{flag}: cannot write {path}: {exc.strerror}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def listed(digests: dict[str, str]) -> Callable[[Path], bool]:
    """A file is ours if a record of what we wrote names it with its current digest."""
    return lambda path: digests.get(path.name) == digest(path)


# ---- folders: report, compare ------------------------------------------------------------------


def manifest_name(what: str) -> str:
    return MANIFEST.format(what)


def read_manifest(folder: Path, flag: str, what: str) -> dict[str, str] | None:
    """Name -> SHA-256 of the files our last write put into `folder`; None: no manifest."""
    path = folder / manifest_name(what)
    if not path.exists() and not path.is_symlink():
        return None
    try:
        # another user's manifest (planted in a folder others may write) names nothing ours
        if path.is_symlink() or not path.is_file() or path.lstat().st_uid != os.geteuid():
            raise ValueError
        data = json.loads(path.read_text(encoding="utf-8"))
        files = data["files"]
        if data.get("written_by") != what or not isinstance(files, dict):
            raise ValueError
        return {str(k): str(v) for k, v in files.items()}
    except (OSError, ValueError, KeyError, TypeError):
        raise InputError(f"{flag}: {path} is not a manifest {what} wrote; not writing into "
                         f"{folder} ({_ADVICE})") from None


def write_folder(out: Path, flag: str, what: str, inputs: Inputs,
                 render: Callable[[Path], list[Path]],
                 legacy: Callable[[Path], bool] = lambda path: False) -> list[Path]:
    """Render into a staging folder inside `out`, check every file against what is there,
    move them into place, drop our stale files, write the manifest. `legacy` recognises a
    file an orchestrator from before manifests wrote (only asked when there is none)."""
    source = inputs.holds(out)
    if source is not None or (out.exists() and not out.is_dir()):
        why = "it is an input of this command" if source else "it is not a folder"
        raise InputError(f"{flag} {out}: {why}; choose another path")
    prepare_folder(out, flag)
    old = read_manifest(out, flag, what)
    old_ids = _identities(out / manifest_name(what)) if old is not None else {}
    # a write cut between its renames left its files listed as pending: they are ours too
    pending, pending_ids = _pending(out / manifest_name(what)) if old is not None else ({}, {})
    earlier = listed(old) if old is not None else legacy

    def ours(path: Path) -> bool:
        return earlier(path) or (path.name in pending and pending[path.name] == digest(path))

    _remove_dead_stages(out)
    try:
        stage = Path(tempfile.mkdtemp(prefix=f"{_STAGE}{os.getpid()}-", dir=out))
    except OSError as exc:
        raise InputError(f"{flag}: cannot write into {out}: {exc.strerror}") from None
    try:
        try:
            names = [p.name for p in render(stage)]
        except OSError as exc:  # a full disk while a plot or table is saved: one line
            raise InputError(f"{flag}: cannot write into {out}: {exc.strerror or exc}") from None
        for name in names:
            if inputs.holds(out / name) is None and not (
                    name in pending and (out / name).is_file() and ours(out / name)):
                refuse_changed(out / name, flag, old or {}, what)
            check_target(out / name, flag, inputs, ours, what)
        check_target(out / manifest_name(what), flag, inputs, lambda p: old is not None, what)
        new = {name: digest(stage / name) for name in names}
        # a rename keeps a file's device, inode and mtime: its identity is known before it
        new_ids = {name: _file_id(stage / name) for name in names}
        stale = {**{k: v for k, v in pending.items() if k not in (old or {})}, **(old or {})}
        stale_ids = {**pending_ids, **old_ids}
        try:
            # first the manifest says what is about to land: a write cut between its renames
            # leaves files the next write knows as its own, not as "changed since"
            _write_manifest(out, flag, what, old or {}, old_ids, (new, new_ids))
            for name in names:
                os.replace(stage / name, out / name)
            _remove_stale(out, stale, stale_ids, new, inputs)
            _write_manifest(out, flag, what, new, new_ids)
        except OSError as exc:
            raise InputError(f"{flag}: cannot write into {out}: {exc.strerror}") from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return [out / name for name in names]


def _write_manifest(out: Path, flag: str, what: str, files: dict[str, str],
                    ids: dict[str, list[int]],
                    pending: tuple[dict[str, str], dict[str, list[int]]] | None = None) -> None:
    manifest: dict[str, object] = {"written_by": what, "files": files, "identities": ids}
    if pending is not None:
        manifest["pending"] = {"files": pending[0], "identities": pending[1]}
    replace_file(out / manifest_name(what), flag, lambda p: p.write_text(
        json.dumps(manifest, indent=2) + "\n", encoding="utf-8"))


def _pending(manifest: Path) -> tuple[dict[str, str], dict[str, list[int]]]:
    """The files a cut write was moving into place, with their digests and identities."""
    try:
        found = json.loads(manifest.read_text(encoding="utf-8")).get("pending")
        files, ids = found["files"], found.get("identities", {})
        if not isinstance(files, dict) or not isinstance(ids, dict):
            return {}, {}
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return {}, {}
    return ({str(k): str(v) for k, v in files.items()},
            {str(k): v for k, v in ids.items()
             if isinstance(v, list) and len(v) == 3 and all(type(n) is int for n in v)})


def _remove_stale(out: Path, old: dict[str, str], ids: dict[str, list[int]],
                  new: dict[str, str], inputs: Inputs) -> None:
    """Files our last write listed that this one did not produce, if nobody changed them and
    they are the very files it wrote: the manifest keeps each one's (device, inode, mtime);
    a manifest planted or copied from another folder names files with other identities, so
    nothing it names is removed (a manifest from before identities removes nothing)."""
    for name, sha in old.items():
        path = out / name
        if name in new or Path(name).name != name or name in (".", "..") or \
                re.fullmatch(r"\.orchestrator-.*\.json", name):
            continue
        if path.is_symlink() or not path.is_file() or inputs.holds(path) is not None or \
                path.lstat().st_uid != os.geteuid():
            continue
        if ids.get(name) == _file_id(path) and digest(path) == sha:
            path.unlink()


def _file_id(path: Path) -> list[int]:
    st = path.lstat()
    return [st.st_dev, st.st_ino, st.st_mtime_ns]


def _identities(manifest: Path) -> dict[str, list[int]]:
    """The (device, inode, mtime) the manifest recorded per file; {} when it has none."""
    try:
        found = json.loads(manifest.read_text(encoding="utf-8")).get("identities")
    except (OSError, ValueError, AttributeError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {str(k): v for k, v in found.items()
            if isinstance(v, list) and len(v) == 3 and all(type(n) is int for n in v)}


_STAGE = ".orchestrator-stage-"  # + the writer's pid: a staging folder left by a killed one


def _remove_dead_stages(out: Path) -> None:
    """Staging folders a killed report/compare left in `out`: only our own name, a real
    folder of this user, whose writer (the pid in its name) is gone; removed without
    following a link."""
    for entry in _dead_writers(out, _STAGE, folder=True):
        shutil.rmtree(entry, ignore_errors=True)


def _remove_dead_files(path: Path) -> None:
    """Temporary files a killed export left beside `path` (`.e.csv.<pid>-XXXXXXXX`, full
    size): only that name's, plain files of this user whose writer is gone."""
    for entry in _dead_writers(path.parent, f".{path.name}.", folder=False):
        with contextlib.suppress(OSError):
            os.unlink(entry)


def _dead_writers(place: Path, prefix: str, folder: bool) -> list[str]:
    """Entries of `place` named `prefix<pid>-XXXXXXXX` (mkstemp's suffix), of the kind asked
    (never a link), of this user, whose writer pid is not alive."""
    found: list[str] = []
    with contextlib.suppress(OSError), os.scandir(place) as listing:
        for entry in listing:
            named = re.fullmatch(re.escape(prefix) + r"([0-9]{1,10})-[A-Za-z0-9_]{8}",
                                 entry.name)
            if named is None or entry.is_symlink():
                continue
            kind = entry.is_dir(follow_symlinks=False) if folder else \
                entry.is_file(follow_symlinks=False)
            if kind and entry.stat(follow_symlinks=False).st_uid == os.getuid() and \
                    not _alive(int(named.group(1))):
                found.append(entry.path)
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return pid != 0
