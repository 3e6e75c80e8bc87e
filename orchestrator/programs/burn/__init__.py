"""burn: the bench_rust crates (exec-gpu, exec-cpu, exec-amx), built by `cargo`.

Each run starts in its crate's folder, because cubecl keeps its autotune cache beside the
outermost Cargo.toml above the working folder (run/cache.py); rayon's thread count is the
only thread setting. Headers: `burn VERSION, features [...], rayon threads N` and `burn precision
fp32|unknown (why)`; it takes no `--precision` (cubecl's autotune picks the arithmetic).

Its modules: `cargo` (its builds), `build_cache` (the build cache's folders and files checked
before use: ours, writable by nobody else, no links), `build_env` (what of the environment
changes a binary: its cache key), `cargo_process` (cargo in its own process group, its JSON
messages and first error), `cubecl_store` (reading cubecl's autotune database),
`cubecl_proof` (cold/warm proven from it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from orchestrator.errors import CacheSafetyError
from orchestrator.programs.base import FactRow, Paths, Program
from orchestrator.programs.build import Builder, BuildSystem
from orchestrator.programs.burn import cubecl_proof
from orchestrator.programs.caches import Caches
from orchestrator.programs.measure import Variable
from orchestrator.programs.naming import Naming
from orchestrator.records import Header, RunDef

_HEADER = re.compile(
    r"burn ([0-9][^\s,]*)(?:, features \[([^\]]*)\])?(?:, rayon threads ([0-9]{1,9}))?")
# `burn precision fp32` (Flex) / `burn precision unknown (why)` (cubecl devices)
_PRECISION_HEADER = re.compile(r"burn precision (fp32|tf32|unknown)(?: \((.*)\))?")
# `burn backend cubecl-cuda 0.11.3, compiler nvrtc (why)`: the CUDA build's kernel compiler
# (bench-core lib.rs `backend_line`; cubecl-llvm is patched out, bench_rust/README.md)
_BACKEND_HEADER = re.compile(r"burn backend (\S+) ([0-9][^\s,]*), compiler (\S+)(?: \((.*)\))?")
# Cargo features each crate defines (bench_rust/*/Cargo.toml); a typo must not reach cargo.
CRATE_FEATURES: dict[str, tuple[str, ...]] = {
    "exec-gpu": ("cuda", "metal", "vulkan"),
    "exec-cpu": (),
    "exec-amx": ("x86-v4", "apple-amx", "accelerate"),
}



class Cargo(BuildSystem):
    """burn's build system: a crate of bench_rust/ and its cargo features (`burn/cargo`)."""

    name = "cargo"
    what, option = "crate", "feature"
    units = CRATE_FEATURES

    def builder(self, project: Path) -> Builder:
        # cargo's machinery (its process, its build cache) is imported only to build
        from orchestrator.programs.burn.cargo import Builder as CargoBuilder

        return CargoBuilder(project)


# cubecl keeps autotune results in `<dir>/target/environment/`, where `<dir>` is the outermost
# folder holding a `Cargo.toml` on the way up from the process's working directory (see
# bench_rust/README.md for the source lines); a cold run removes it only inside bench_rust/
CACHE_PARTS = ("target", "environment")


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


@dataclass(frozen=True)
class CubeclCaches(Caches):
    """cubecl's autotune cache as burn's Program's part: above the working folder."""

    def place(self, project: Path, cwd: Path) -> tuple[Path, Path, tuple[str, ...]]:
        """cubecl's folder above the working folder, which must lie in bench_rust/."""
        return cache_dir_for(cwd), project / "bench_rust", CACHE_PARTS

    def look(self, run: RunDef, cache_dir: Path, env: dict[str, str]) -> Any:
        """cubecl's store: the matmul entry for this device and shape (programs/cubecl_proof)."""
        return cubecl_proof.look(cache_dir, run.device, run.shape, env)

    def proof(self, cold: bool, before: Any, after: Any) -> str:
        prove = cubecl_proof.cold_proof if cold else cubecl_proof.warm_proof
        return prove(before, after)


# what changes a burn run's measurement: its CPU threads and cubecl's runtime settings
MEASURE_ENV = (
    Variable("RAYON_NUM_THREADS",
             "burn's CPU threads; the orchestrator sets it from `threads`, an experiment's "
             "value wins over that", "rayon docs, ThreadPoolBuilder::num_threads"),
    Variable("CUBECL_*",
             "cubecl's runtime settings (autotune level, compilation and profiling options): "
             "what burn's GPU backends run and how they tune it",
             "cubecl docs, GlobalConfig (cubecl.toml and its CUBECL_ environment overrides)"),
)


class Burn(Program):
    name = "burn"
    place = 2
    measure_env = MEASURE_ENV
    title = "burn"
    devices = ("flex", "cuda", "metal", "vulkan")
    device_needs: ClassVar[dict[str, tuple[str, ...]]] = {
        "cuda": ("cuda",), "metal": ("metal",), "vulkan": ("vulkan",), "flex": ()}
    caches = CubeclCaches(
        devices=("cuda", "metal", "vulkan"), driver_devices=("cuda",), env=cubecl_proof.CACHE_ENV,
        # cubecl-runtime 0.11.3 config/base.rs:65,69 looks for both spellings of each; on a
        # case-insensitive disk they are one file, which is found either way
        overrides=("cubecl.toml", "burn.toml", "CubeCL.toml", "Burn.toml"))
    build_system = Cargo()  # a target names one of the file's `builds`
    modes = ("mm", "warm", "accuracy")
    thread_vars = ("RAYON_NUM_THREADS",)
    methods: ClassVar[dict[str, str]] = {
        "device time (profile_with flush)": "device_time",
        "device time (profile_with flush, queued)": "device_time_queued",
        "device time (profile, no flush)": "device_time_no_flush",
        "+ sum().into_scalar()": "readback"}
    labels: ClassVar[dict[str, str]] = {
        label: label for label in ("metal", "vulkan", "wgpu", "webgpu", "rocm", "hip")}
    # every Flex build (template, +apple-amx, ...) runs on the CPU
    label_prefixes: ClassVar[dict[str, str]] = {"flex": "cpu"}
    naming = Naming(
        build_names={"flex(template)": "burn Flex, template",
                     "flex": "burn Flex, default features"},
        build_prefixes={"flex+": "burn Flex + "},
        label_builds={"flex(template)": "template", "flex": "default"},
        one_thread_labels=("flex(template)",),  # exec-cpu without rayon
        accuracy_labels={"flex template": "flex(template)", "flex default": "flex"},
        plot_marker="s",
        plot_colors={"flex": "#d62728", "flex(template)": "#ff7f0e", "flex+x86-v4": "#8c564b",
                     "flex+accelerate": "#e377c2", "cuda": "#9467bd", "metal": "#bcbd22",
                     "wgpu": "#7f7f7f"})
    no_precision = ("burn's arithmetic is chosen by cubecl's autotune (on CUDA it may pick TF32 "
                    "tensor cores); the report infers it from the accuracy arrays")

    def command(self, run: RunDef, paths: Paths) -> list[str]:
        return [str(paths.binaries[str(run.build)])]

    def cwd(self, run: RunDef, project: Path) -> Path:
        """burn's cache depends on the folder a program starts in: each crate's own folder."""
        return project / "bench_rust" / str(run.crate)

    def parse_header(self, line: str, line_no: int) -> Header | None:
        if (found := _PRECISION_HEADER.fullmatch(line)) is not None:
            return Header("burn_precision", None, None, line_no, found.group(1))
        if (found := _BACKEND_HEADER.fullmatch(line)) is not None:
            crate, version, compiler, why = found.groups()
            return Header("burn_backend", None, None, line_no,
                          facts={"backend": f"{crate} {version}", "compiler": compiler,
                                 "why": why or ""})
        match = _HEADER.fullmatch(line)
        if match is None:
            return None
        version, features, threads = match.groups()
        names = tuple(name.strip() for name in (features or "").split(",") if name.strip())
        return Header("burn", version, None if threads is None else int(threads), line_no,
                      facts={"features": names} if names else {})

    def fact_rows(self) -> list[FactRow]:
        """Version (header, else Cargo.lock's) and the feature sets its builds printed."""
        return [FactRow("burn", self.header_version, always=True),
                FactRow("burn features (backend)", _features, in_line=False),
                FactRow("burn CUDA backend", backend, in_line=False, in_source=True)]

    def source_facts(self, host: dict[str, Any]) -> list[tuple[str, Any]]:
        return [("burn", host.get("burn")), ("rustc", host.get("rustc"))]

    def facts(self, project: Path, python: str) -> str | None:
        """The burn version Cargo.lock pins (the one the binaries were built against)."""
        lockfile = project / "bench_rust" / "Cargo.lock"
        if not lockfile.exists():
            return None
        match = re.search(r'name = "burn"\nversion = "([^"]+)"', lockfile.read_text())
        return match.group(1) if match else None


def _features(headers: Sequence[Header], host: dict[str, Any]) -> str | None:
    sets = {", ".join(h.facts["features"]) for h in headers
            if h.kind == "burn" and h.facts.get("features")}
    return " | ".join(f"[{s}]" for s in sorted(sets)) or None


def backend(headers: Sequence[Header], host: dict[str, Any]) -> str | None:
    """`cubecl-cuda 0.11.3, compiler nvrtc (CUDA C++ compiled at run time; ...)`, as the CUDA
    runs printed it (distinct lines ' | '-joined); None where no run printed one."""
    seen = {f"{h.facts['backend']}, compiler {h.facts['compiler']}"
            + (f" ({h.facts['why']})" if h.facts.get("why") else "")
            for h in headers if h.kind == "burn_backend" and h.facts.get("backend")}
    return " | ".join(sorted(seen)) or None
