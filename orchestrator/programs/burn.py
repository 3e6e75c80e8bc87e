"""burn: the bench_rust crates (exec-gpu, exec-cpu, exec-amx), built by `cargo`.

Each run starts in its crate's folder, because cubecl keeps its autotune cache beside the
outermost Cargo.toml above the working folder (run/cache.py); rayon's thread count is the
only thread setting. Headers: `burn VERSION, features [...], rayon threads N` and `burn precision
fp32|unknown (why)`; it takes no `--precision` (cubecl's autotune picks the arithmetic).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

from orchestrator.data.records import Header, RunDef
from orchestrator.programs import cubecl_proof
from orchestrator.programs.base import Paths, Program

_HEADER = re.compile(
    r"burn ([0-9][^\s,]*)(?:, features \[([^\]]*)\])?(?:, rayon threads ([0-9]{1,9}))?")
# `burn precision fp32` (Flex) / `burn precision unknown (why)` (cubecl devices)
_PRECISION_HEADER = re.compile(r"burn precision (fp32|tf32|unknown)(?: \((.*)\))?")
# Cargo features each crate defines (bench_rust/*/Cargo.toml); a typo must not reach cargo.
CRATE_FEATURES: dict[str, tuple[str, ...]] = {
    "exec-gpu": ("cuda", "metal", "vulkan"),
    "exec-cpu": (),
    "exec-amx": ("x86-v4", "apple-amx", "accelerate"),
}


class Burn(Program):
    name = "burn"
    title = "burn"
    devices = ("flex", "cuda", "metal", "vulkan")
    device_needs: ClassVar[dict[str, tuple[str, ...]]] = {
        "cuda": ("cuda",), "metal": ("metal",), "vulkan": ("vulkan",), "flex": ()}
    cached_devices = ("cuda", "metal", "vulkan")
    driver_cache_devices = ("cuda",)
    cache_env = cubecl_proof.CACHE_ENV
    needs_build = True
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
    no_precision = ("burn's arithmetic is chosen by cubecl's autotune (on CUDA it may pick TF32 "
                    "tensor cores); the report infers it from the accuracy arrays")

    def command(self, run: RunDef, paths: Paths) -> list[str]:
        return [str(paths.binaries[str(run.build)])]

    def cwd(self, run: RunDef, project: Path) -> Path:
        """burn's cache depends on the folder a program starts in: each crate's own folder."""
        return project / "bench_rust" / str(run.crate)

    def store_look(self, run: RunDef, cache_dir: Path, env: dict[str, str]) -> Any:
        """cubecl's store: the matmul entry for this device and shape (programs/cubecl_proof)."""
        return cubecl_proof.look(cache_dir, run.device, run.shape, env)

    def store_proof(self, cold: bool, before: Any, after: Any) -> str:
        prove = cubecl_proof.cold_proof if cold else cubecl_proof.warm_proof
        return prove(before, after)

    def parse_header(self, line: str, line_no: int) -> Header | None:
        if (found := _PRECISION_HEADER.fullmatch(line)) is not None:
            return Header("burn_precision", None, None, (), None, line_no, found.group(1))
        match = _HEADER.fullmatch(line)
        if match is None:
            return None
        version, features, threads = match.groups()
        names = tuple(name.strip() for name in (features or "").split(",") if name.strip())
        return Header("burn", version, None if threads is None else int(threads), names, None,
                      line_no)

    def facts(self, project: Path, python: str) -> str | None:
        """The burn version Cargo.lock pins (the one the binaries were built against)."""
        lockfile = project / "bench_rust" / "Cargo.lock"
        if not lockfile.exists():
            return None
        match = re.search(r'name = "burn"\nversion = "([^"]+)"', lockfile.read_text())
        return match.group(1) if match else None
