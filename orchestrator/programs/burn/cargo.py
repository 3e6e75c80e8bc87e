"""Build the burn benchmark crates with cargo, once per crate and feature set.

All builds share one cargo target folder, kept in the user's cache folder so that it outlives a
clone (`$ORCHESTRATOR_BUILD_CACHE`, else `$XDG_CACHE_HOME/orchestrator` or
`~/.cache/orchestrator`, then `cargo-target/`): dependencies compiled for one feature set, or by
another clone, are reused; cargo's own fingerprints tell features, sources and paths apart. The
binary's path comes from cargo's JSON messages, and each build's binary is copied to its own
folder (`build/bin/<crate>[+features]/`) with a stamp of the sources it was built from, so two
feature sets of one crate never overwrite each other, an up-to-date build costs a hash and no
cargo, and a machine without cargo (the GPU box) can run binaries built elsewhere. A copy goes
to the cache's `bin/<source hash>/<key>+build-<hash>/`, keyed by the sources and by everything
of this process's environment that changes the binary (BUILD_VARIABLES, the cargo config files,
the toolchain's `rustc -vV`): a second clone of the same sources and environment takes it
without cargo, one at another commit or with other RUSTFLAGS never sees it. Every folder and
file of the cache is checked before use (`build_cache`: ours, writable by nobody else, no
links) and written new beside its name, then renamed. cubecl's autotune cache
(bench_rust/target/environment, deleted by cold runs: run/cache.py) is never the target folder.
cargo runs in its own process group, killed whole if the build is stopped
(`cargo_process.run_group`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
from pathlib import Path

from orchestrator.errors import CacheSafetyError
from orchestrator.programs.build import BuildSpec as Build
from orchestrator.programs.build import Watch
from orchestrator.programs.burn import build_cache, build_env
from orchestrator.programs.burn.cargo_process import error_summary, executable, run_group
from orchestrator.records import BuildResult, Status

STAMP_VERSION = 1
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
        self._environments: dict[str, dict[str, object]] = {}

    @property
    def sources(self) -> str:
        if self._hash is None:
            self._hash = source_hash(self.rust_dir)
        return self._hash

    def binary_path(self, build: Build) -> Path:
        return self.bin_root / build_key(build) / build.crate

    def cache_parts(self, build: Build) -> tuple[str, str]:
        """The folders under the cache's `bin/` of this build: the sources' hash, then the
        build's key with the hash of what of the environment changes the binary."""
        return self.sources[:32], f"{build_key(build)}+build-{build_env.key(self._env(build))}"

    def cached_path(self, build: Build) -> Path:
        """Where the build cache keeps this build's binary for these sources."""
        return self.cache.joinpath("bin", *self.cache_parts(build), build.crate)

    def _env(self, build: Build) -> dict[str, object]:
        """What of cargo's environment for this build changes the binary (once per env)."""
        blob = json.dumps(sorted(build.env.items()))
        if blob not in self._environments:
            self._environments[blob] = build_env.describe(self.rust_dir,
                                                          {**os.environ, **build.env})
        return self._environments[blob]

    def _stamp(self, build: Build) -> dict[str, object]:
        return {"version": STAMP_VERSION, "crate": build.crate,
                "features": sorted(build.features), "sources": self.sources,
                "env": dict(sorted(build.env.items())), "built_with": self._env(build)}

    def _matches(self, text: str, build: Build) -> bool:
        """A stamp's text says this build. Without cargo here (a GPU box running binaries
        built elsewhere) nothing can be rebuilt, and its toolchain is not ours to compare: the
        build's own part (sources, crate, features, env) decides."""
        try:
            stamp = json.loads(text)
        except ValueError:
            return False
        want = self._stamp(build)
        if self.cargo is None and isinstance(stamp, dict):
            stamp.pop("built_with", None)
            want.pop("built_with")
        return stamp == want

    def is_fresh(self, build: Build) -> bool:
        """build/bin's binary is up to date (its stamp says these sources and environment)."""
        binary = self.binary_path(build)
        stamp = binary.parent / "stamp.json"
        if not (binary.exists() and stamp.exists()):
            return False
        try:
            return self._matches(stamp.read_text(), build)
        except (OSError, UnicodeDecodeError):
            return False

    def cache_problem(self) -> str | None:
        """Why the build cache must not be used (another user could have put files there)."""
        try:
            build_cache.check_root(self.cache)
        except CacheSafetyError as exc:
            return f"{exc}: set {CACHE_ENV} to a folder of your own"
        except OSError as exc:
            return f"cannot check the build cache {self.cache}: {exc.strerror}"
        return None

    def build(self, name: str, build: Build) -> BuildResult:
        """Build (or find up to date) one build; a failure is a result, not an exception."""
        key = build_key(build)
        start = time.perf_counter()
        safe = self.cache_problem() is None
        if self.is_fresh(build) and safe:
            self._seed_cache(build)
        if self.is_fresh(build) or (safe and self._from_cache(build)):
            return BuildResult(name, key, Status.OK, self.binary_path(build),
                               time.perf_counter() - start, fresh=True,
                               expect_failure=build.expect_failure)
        if build.expect_failure and safe and (kept := self._kept_failure(name, build)):
            return kept
        if self.cargo is None:
            return self._failed(name, build, start, "cargo not found and no up-to-date binary in "
                                f"{self.binary_path(build).parent}: build on a machine with cargo "
                                "(`python -m orchestrator build`) and copy build/bin here")
        if (problem := self._target_problem()) is not None:
            return self._failed(name, build, start, problem)
        argv = self.cargo_argv(build)
        try:
            done = run_group(argv, self.rust_dir, {**os.environ, **build.env}, self.watch)
        except (OSError, ValueError) as exc:
            return self._failed(name, build, start, f"cannot start cargo: {exc}")
        log = f"$ {' '.join(argv)}\n{done.stderr}"
        built = executable(done.stdout, build.crate)
        if done.returncode != 0 or built is None:
            failed = self._failed(name, build, start,
                                  error_summary(done.stderr, done.returncode), log)
            if build.expect_failure:
                self._keep_failure(build, failed)
            return failed
        try:
            self._install(build, Path(built))
        except OSError as exc:  # build/ on a full disk, or not writable
            return self._failed(name, build, start, f"cannot install the binary into "
                                f"{self.binary_path(build).parent}: {_why(exc)}", log)
        return BuildResult(name, key, Status.OK, self.binary_path(build),
                           time.perf_counter() - start, fresh=False, log=log,
                           expect_failure=build.expect_failure)

    def _target_problem(self) -> str | None:
        """Why cargo must not build in the cache's target folder (its build scripts and
        compiled crates are code we run): a folder others could write, or cubecl's cache."""
        if (problem := target_dir_problem(self.target_dir, self.rust_dir)) is not None:
            return problem
        if (problem := self.cache_problem()) is not None:
            return problem
        try:
            self.cache.mkdir(mode=0o700, parents=True, exist_ok=True)
            build_cache.check_root(self.cache)
            build_cache.folder(self.cache, "cargo-target", make=True)
        except CacheSafetyError as exc:
            return f"{exc}: set {CACHE_ENV} to a folder of your own"
        except OSError as exc:
            return f"cannot make the build cache {self.cache}: {_why(exc)}"
        return None

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
        with open(executable, "rb") as source:
            self._copy(build, source.fileno(), self.binary_path(build))
        if self.cache_problem() is None:
            with open(executable, "rb") as source:
                self._to_cache(build, source.fileno())

    def _cache_folder(self, build: Build) -> Path:
        """The cache's folder of this build, made and checked (build_cache.folder)."""
        self.cache.mkdir(mode=0o700, parents=True, exist_ok=True)
        return build_cache.folder(self.cache, "bin", *self.cache_parts(build), make=True)

    def _to_cache(self, build: Build, source: int) -> None:
        """The cache is a convenience: a full disk, or a folder there that is not safely ours,
        leaves it as it was (nothing is written into or through such a folder)."""
        with contextlib.suppress(OSError, CacheSafetyError):
            self._copy(build, source, self._cache_folder(build) / build.crate)

    def _keep_failure(self, build: Build, failed: BuildResult) -> None:
        """An expected failure (the chapter's accelerate build) is kept for these sources:
        the next clone records the same error without compiling the whole stack again."""
        kept = {"stamp": self._stamp(build), "error": failed.error, "log": failed.log}
        if self.cache_problem() is not None:
            return
        with contextlib.suppress(OSError, CacheSafetyError):
            build_cache.replace_file(self._cache_folder(build) / "failed.json",
                     lambda tmp: tmp.write_text(json.dumps(kept)))

    def _kept_failure(self, name: str, build: Build) -> BuildResult | None:
        try:
            kept = json.loads(build_cache.read_text(self.cached_path(build).parent /
                                                    "failed.json"))
        except (OSError, ValueError, CacheSafetyError):
            return None
        if not isinstance(kept, dict) or kept.get("stamp") != self._stamp(build):
            return None
        return BuildResult(name, build_key(build), Status.FAILED, None, 0.0, fresh=True,
                           error=str(kept.get("error", "")),
                           log=f"(kept from an earlier build of these sources in "
                               f"{self.cached_path(build).parent})\n{kept.get('log', '')}",
                           expect_failure=True)

    def _cached_fd(self, build: Build) -> int | None:
        """A descriptor of the cache's binary of this build when it is intact and safely ours
        (every folder on the way and both files checked; no link followed), else None."""
        try:
            place = build_cache.folder(self.cache, "bin", *self.cache_parts(build))
            if not self._matches(build_cache.read_text(place / "stamp.json"), build):
                return None
            return build_cache.open_file(place / build.crate)
        except (OSError, CacheSafetyError):
            return None

    def _seed_cache(self, build: Build) -> None:
        """An up-to-date build/bin binary the cache lacks (built before the cache existed, or
        copied in) goes there too, so that the next clone finds it."""
        fd = self._cached_fd(build)
        if fd is not None:
            os.close(fd)
            return
        with contextlib.suppress(OSError), open(self.binary_path(build), "rb") as source:
            self._to_cache(build, source.fileno())

    def _from_cache(self, build: Build) -> bool:
        """Install the cache's binary of these sources, if it has an intact one of ours."""
        fd = self._cached_fd(build)
        if fd is None:
            return False
        try:
            self._copy(build, fd, self.binary_path(build))
        except OSError:
            return False
        finally:
            os.close(fd)
        return True

    def _copy(self, build: Build, source: int, binary: Path) -> None:
        """Copy from the open `source`, then the stamp: a binary is fresh only once both are
        in place (each a new file renamed over its name: a link there is replaced)."""
        binary.parent.mkdir(parents=True, exist_ok=True)
        (binary.parent / "stamp.json").unlink(missing_ok=True)

        def write(tmp: Path) -> None:
            os.lseek(source, 0, os.SEEK_SET)
            with open(tmp, "wb") as out:
                while chunk := os.read(source, 1 << 20):
                    out.write(chunk)

        build_cache.replace_file(binary, write)
        build_cache.replace_file(binary.parent / "stamp.json",
                 lambda tmp: tmp.write_text(json.dumps(self._stamp(build), indent=2)))

    def _failed(self, name: str, build: Build, start: float, error: str,
                log: str = "") -> BuildResult:
        return BuildResult(name, build_key(build), Status.FAILED, None, time.perf_counter() - start,
                           fresh=False, error=error, log=log or error,
                           expect_failure=build.expect_failure)


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


__all__ = ["CACHE_ENV", "Build", "Builder", "Watch", "build_key", "cache_root", "run_group",
           "source_hash", "target_dir_problem"]
