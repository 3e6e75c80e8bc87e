"""What of this process's environment changes a burn binary: part of its build's cache key.

cargo builds with the orchestrator's whole environment (plus a build's own `env`), so two
clones, or two sweeps of one clone, with different RUSTFLAGS, CUDARC_CUDA_VERSION (cudarc's
bindings), cargo profile settings or toolchains build different binaries from the same sources.
All of it goes into a build's stamp and its cache key: the variables by name or prefix
(BUILD_VARIABLES, BUILD_PREFIXES), the cargo config files cargo reads for the workspace (each
folder's `.cargo/config.toml` up from it, and CARGO_HOME's), and the toolchain (`rustc -vV`,
from the workspace folder, so rustup's toolchain file counts). PATH is not part of it (cudarc
without CUDARC_CUDA_VERSION asks the nvcc on PATH: set the variable, as docs/gpu.md says).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from orchestrator.programs import probe

BUILD_VARIABLES = ("RUSTFLAGS", "RUSTC", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER",
                   "RUSTUP_TOOLCHAIN", "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT",
                   "CUDA_TOOLKIT_ROOT_DIR", "CUDNN_PATH", "CUTENSOR_PATH")
BUILD_PREFIXES = ("CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_", "CARGO_PROFILE_", "CARGO_TARGET_",
                  "CARGO_UNSTABLE_", "CARGO_HOME", "CUDARC_")
TOOLCHAIN_TIMEOUT_S = 10.0
CONFIG_LIMIT = 1 << 20  # a cargo config file: far below this; a larger one is hashed by size


def variables(env: dict[str, str]) -> dict[str, str]:
    """The variables of `env` that change what cargo builds, sorted."""
    return {name: value for name, value in sorted(env.items())
            if name in BUILD_VARIABLES or name.startswith(BUILD_PREFIXES)}


def config_files(rust_dir: Path, env: dict[str, str]) -> dict[str, str]:
    """Each cargo config file cargo would read for the workspace, with a hash of its text."""
    home = Path(env.get("CARGO_HOME") or Path.home() / ".cargo")
    folders = [Path(os.path.abspath(rust_dir)), *Path(os.path.abspath(rust_dir)).parents]
    places = [folder / ".cargo" / name for folder in folders for name in ("config.toml", "config")]
    places += [home / "config.toml", home / "config"]
    found: dict[str, str] = {}
    for place in places:
        if not place.is_file():  # a FIFO would block: only plain files
            continue
        try:
            with open(place, "rb") as file:
                data = file.read(CONFIG_LIMIT + 1)
        except OSError:
            continue
        found[str(place)] = hashlib.sha256(data).hexdigest()[:16]
    return found


def toolchain(rust_dir: Path, env: dict[str, str]) -> str:
    """`rustc -vV` as cargo would run it (RUSTC, else rustc; in the workspace folder), or why
    not: an unknown toolchain is a key of its own, never one that matches a known one."""
    argv = [env.get("RUSTC") or "rustc", "-vV"]
    out = probe.stdout_of(argv, TOOLCHAIN_TIMEOUT_S, cwd=rust_dir, env=env)
    if out is None:
        return f"unknown ({' '.join(argv)} failed or did not answer in {TOOLCHAIN_TIMEOUT_S:g} s)"
    return out.strip()


def describe(rust_dir: Path, env: dict[str, str]) -> dict[str, object]:
    """Everything of `env` (the environment cargo gets) that changes the binary."""
    return {"variables": variables(env), "cargo_config": config_files(rust_dir, env),
            "toolchain": toolchain(rust_dir, env)}


def key(described: dict[str, object]) -> str:
    """A short hash of `describe`'s answer: the cache folder's name part."""
    blob = json.dumps(described, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "surrogateescape")).hexdigest()[:16]
