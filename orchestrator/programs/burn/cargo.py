"""Build the burn benchmark crates with cargo, once per crate and feature set.

All builds share one cargo target folder, kept in the user's cache folder so that it outlives a
clone (`$ORCHESTRATOR_BUILD_CACHE`, else `$XDG_CACHE_HOME/orchestrator` or
`~/.cache/orchestrator`, then `cargo-target/`): dependencies compiled for one feature set, or by
another clone, are reused; cargo's own fingerprints tell features, sources and paths apart. The
binary's path comes from cargo's JSON messages, and each build's binary is copied to its own
folder (`build/bin/<crate>[+features]/`) with a stamp of the sources it was built from, so two
feature sets of one crate never overwrite each other, an up-to-date build costs a hash and no
cargo, and a machine without cargo (the GPU box) can run binaries built elsewhere. A copy goes
to the cache's `bin/<source hash>/`, keyed by that hash: a second clone of the same sources
takes it without cargo, one at another commit never sees it. cubecl's autotune cache
(bench_rust/target/environment, deleted by cold runs: run/cache.py) is never the target folder.
cargo runs in its own process group, killed whole if the build is stopped (`run_group`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from orchestrator.programs import probe
from orchestrator.records import BuildResult, Status


class Build(Protocol):
    """What a build needs from the experiments file's `builds` entry (spec.config.Build)."""

    @property
    def crate(self) -> str: ...
    @property
    def features(self) -> tuple[str, ...]: ...
    @property
    def env(self) -> dict[str, str]: ...
    @property
    def expect_failure(self) -> bool: ...

class Watch(Protocol):
    """What a sweep does around each process it starts (run/leftovers.Watch): a mark for its
    environment, the process written down once started, and once it is done, what it left
    running ended and the entry crossed out."""

    def env(self) -> dict[str, str]: ...
    def started(self, pid: int) -> None: ...
    def ended(self) -> None: ...


STAMP_VERSION = 1
ERROR_LINES = 30
CACHE_ENV = "ORCHESTRATOR_BUILD_CACHE"  # the build cache's folder (cargo-target/, bin/)


def cache_root() -> Path:
    """The build cache: `$ORCHESTRATOR_BUILD_CACHE`, else the user's cache folder's."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen:
        return Path(chosen).expanduser().absolute()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "orchestrator"


def target_dir_problem(target: Path, rust_dir: Path) -> str | None:
    """Why `target` must not be cargo's target folder: inside bench_rust/target, cubecl's
    autotune cache that cold runs delete, binaries and cache would be one folder."""
    cubecl = (rust_dir / "target").resolve()
    resolved = target.resolve()
    if resolved == cubecl or cubecl in resolved.parents or resolved in cubecl.parents:
        return (f"{CACHE_ENV} puts cargo's target folder at {target}, which holds or is inside "
                f"{cubecl} (cubecl's autotune cache, deleted by cold runs): choose another folder")
    return None


def build_key(build: Build) -> str:
    """The build's folder name: crate and features, and a hash of its cargo environment when
    it has one (two builds that differ only there, an A/B of two builds, keep two binaries;
    a build without one keeps the name it always had)."""
    key = "+".join([build.crate, *sorted(build.features)])
    if not build.env:
        return key
    blob = json.dumps(sorted(build.env.items()), separators=(",", ":"))
    return f"{key}+env-{hashlib.sha256(blob.encode()).hexdigest()[:12]}"


def source_hash(rust_dir: Path) -> str:
    """Hash of every source file of the workspace (the cargo target folder excluded)."""
    digest = hashlib.sha256()
    for path in sorted(rust_dir.rglob("*")):
        rel = path.relative_to(rust_dir)
        if rel.parts[0] == "target" or any(p.startswith(".") for p in rel.parts):
            continue
        if path.is_file():
            digest.update(str(rel).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class Builder:
    """Builds for one project tree; remembers the source hash for the whole sweep."""

    def __init__(self, project: Path, cargo: str | None = None,
                 watch: Watch | None = None, cache: Path | None = None) -> None:
        self.project = project
        self.watch = watch
        self.rust_dir = project / "bench_rust"
        self.cache = cache or cache_root()
        self.target_dir = self.cache / "cargo-target"
        self.bin_root = project / "build" / "bin"
        self.cargo = cargo or shutil.which("cargo")
        self._hash: str | None = None

    @property
    def sources(self) -> str:
        if self._hash is None:
            self._hash = source_hash(self.rust_dir)
        return self._hash

    def binary_path(self, build: Build) -> Path:
        return self.bin_root / build_key(build) / build.crate

    def cached_path(self, build: Build) -> Path:
        """Where the build cache keeps this build's binary for these sources."""
        return self.cache / "bin" / self.sources[:32] / build_key(build) / build.crate

    def _stamp(self, build: Build) -> dict[str, object]:
        return {"version": STAMP_VERSION, "crate": build.crate,
                "features": sorted(build.features), "sources": self.sources,
                "env": dict(sorted(build.env.items()))}

    def is_fresh(self, build: Build, binary: Path | None = None) -> bool:
        binary = binary or self.binary_path(build)
        stamp = binary.parent / "stamp.json"
        if not (binary.exists() and stamp.exists()):
            return False
        try:
            return json.loads(stamp.read_text()) == self._stamp(build)
        except ValueError:
            return False

    def build(self, name: str, build: Build) -> BuildResult:
        """Build (or find up to date) one build; a failure is a result, not an exception."""
        key = build_key(build)
        start = time.perf_counter()
        if self.is_fresh(build):
            self._seed_cache(build)
        if self.is_fresh(build) or self._from_cache(build):
            return BuildResult(name, key, Status.OK, self.binary_path(build),
                               time.perf_counter() - start, fresh=True,
                               expect_failure=build.expect_failure)
        if build.expect_failure and (kept := self._kept_failure(name, build)) is not None:
            return kept
        if self.cargo is None:
            return self._failed(name, build, start, "cargo not found and no up-to-date binary in "
                                f"{self.binary_path(build).parent}: build on a machine with cargo "
                                "(`python -m orchestrator build`) and copy build/bin here")
        if (problem := target_dir_problem(self.target_dir, self.rust_dir)) is not None:
            return self._failed(name, build, start, problem)
        argv = self.cargo_argv(build)
        try:
            done = run_group(argv, self.rust_dir, {**os.environ, **build.env}, self.watch)
        except (OSError, ValueError) as exc:
            return self._failed(name, build, start, f"cannot start cargo: {exc}")
        log = f"$ {' '.join(argv)}\n{done.stderr}"
        executable = _executable(done.stdout, build.crate)
        if done.returncode != 0 or executable is None:
            failed = self._failed(name, build, start,
                                  _error_summary(done.stderr, done.returncode), log)
            if build.expect_failure:
                self._keep_failure(build, failed)
            return failed
        self._install(build, Path(executable))
        return BuildResult(name, key, Status.OK, self.binary_path(build),
                           time.perf_counter() - start, fresh=False, log=log,
                           expect_failure=build.expect_failure)

    def cargo_argv(self, build: Build) -> list[str]:
        # --timings: cargo writes an HTML breakdown of every unit's time into the target
        # folder's cargo-timings/ (where a build's minutes went; BENCHMARKS.md reads them)
        argv = [str(self.cargo), "build", "--release", "-p", build.crate,
                "--target-dir", str(self.target_dir), "--timings",
                "--message-format", "json-render-diagnostics"]
        if build.features:
            argv += ["--features", ",".join(sorted(build.features))]
        return argv

    def _install(self, build: Build, executable: Path) -> None:
        self._copy(build, executable, self.binary_path(build))
        with contextlib.suppress(OSError):  # the cache is a convenience: a full disk is no error
            self._copy(build, executable, self.cached_path(build))

    def _keep_failure(self, build: Build, failed: BuildResult) -> None:
        """An expected failure (the chapter's accelerate build) is kept for these sources:
        the next clone records the same error without compiling the whole stack again."""
        kept = {"stamp": self._stamp(build), "error": failed.error, "log": failed.log}
        path = self.cached_path(build).parent / "failed.json"
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(kept))

    def _kept_failure(self, name: str, build: Build) -> BuildResult | None:
        try:
            kept = json.loads((self.cached_path(build).parent / "failed.json").read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(kept, dict) or kept.get("stamp") != self._stamp(build):
            return None
        return BuildResult(name, build_key(build), Status.FAILED, None, 0.0, fresh=True,
                           error=str(kept.get("error", "")),
                           log=f"(kept from an earlier build of these sources in "
                               f"{self.cached_path(build).parent})\n{kept.get('log', '')}",
                           expect_failure=True)

    def _seed_cache(self, build: Build) -> None:
        """An up-to-date build/bin binary the cache lacks (built before the cache existed, or
        copied in) goes there too, so that the next clone finds it."""
        if not self.is_fresh(build, self.cached_path(build)):
            with contextlib.suppress(OSError):
                self._copy(build, self.binary_path(build), self.cached_path(build))

    def _from_cache(self, build: Build) -> bool:
        """Install the cache's binary of these sources, if it has an intact one."""
        cached = self.cached_path(build)
        if not self.is_fresh(build, cached):
            return False
        try:
            self._copy(build, cached, self.binary_path(build))
        except OSError:
            return False
        return True

    def _copy(self, build: Build, executable: Path, binary: Path) -> None:
        """Copy, then the stamp: a binary is fresh only once both are in place."""
        binary.parent.mkdir(parents=True, exist_ok=True)
        (binary.parent / "stamp.json").unlink(missing_ok=True)
        _replace(binary, lambda tmp: shutil.copy2(executable, tmp))
        _replace(binary.parent / "stamp.json",
                 lambda tmp: tmp.write_text(json.dumps(self._stamp(build), indent=2)))

    def _failed(self, name: str, build: Build, start: float, error: str,
                log: str = "") -> BuildResult:
        return BuildResult(name, build_key(build), Status.FAILED, None, time.perf_counter() - start,
                           fresh=False, error=error, log=log or error,
                           expect_failure=build.expect_failure)


def run_group(argv: list[str], cwd: Path, env: dict[str, str],
              watch: Watch | None = None) -> subprocess.CompletedProcess[str]:
    """`subprocess.run` with cargo in its own process group, and the whole group killed when
    this process stops (Ctrl-C, SIGTERM, any exception): `subprocess.run` kills only cargo,
    which leaves its rustc and build-script children running. `watch`: a sweep's (a build
    that outlives a killed orchestrator is then ended by the next sweep, like a run)."""
    if watch is not None:
        env = {**env, **watch.env()}
    with probe.started(argv, cwd=cwd, env=env) as proc:  # a Ctrl-C as it starts: none left
        try:
            if watch is not None:
                watch.started(proc.pid)
            stdout, stderr = proc.communicate()
        except BaseException:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        finally:  # a child cargo left behind after it exited is ended too
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            if watch is not None:
                watch.ended()
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def _executable(stdout: str, crate: str) -> str | None:
    """The binary cargo reported for `crate` in its JSON messages."""
    found = None
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and \
                msg.get("target", {}).get("name") == crate:
            found = msg["executable"]
    return found


def _error_summary(stderr: str, returncode: int) -> str:
    """cargo's first error and what follows it, short enough for a table cell."""
    lines = stderr.splitlines()
    first = next((i for i, line in enumerate(lines) if line.lstrip().startswith("error")), None)
    chosen = lines[first:first + ERROR_LINES] if first is not None else lines[-ERROR_LINES:]
    text = "\n".join(chosen).strip()
    return text or f"cargo exited with status {returncode} and printed no error"


def _replace(path: Path, write: Callable[[Path], object]) -> None:
    """Write a new file of our own beside `path` (mkstemp: exclusive, never a name a link was
    planted at), then rename it over `path`: nothing is ever written through a symlink."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.chmod(tmp, 0o755 if path.suffix != ".json" else 0o644)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
