"""The benchmark programs, one folder per framework, behind one interface.

`base` (the `Program` interface and `Paths`), `build` (the `BuildSystem` of a program made of
parts: its units and options, their check, a run's build identity, its builder; and `Builders`:
each build by its unit's system), `caches` (a program's cache strategy, one part of its
Program), `naming` (its builds' names and plot style, another part), `measure` (a measurement-
changing variable's entry, and those of no one framework: the CUDA driver's, cuBLAS's), `probe`
(a fact or probe command bounded, its process group killed), `torch/` (bench_py/exec_gpu.py;
`torch/cache`: torch.compile's Inductor and Triton caches proven cold/warm;
`torch/measure_env`: its variables), `burn/` (the bench_rust crates: `Cargo` its build system;
`burn/cargo` builds them, `burn/build_cache` checks the build cache's folders and files before
use, `burn/build_env` says what of the environment changes a binary, `burn/cargo_process` runs
cargo in its own process group, `burn/cubecl_store` and `burn/cubecl_proof` read and prove
cubecl's autotune cache), `jax/` (bench_py/exec_jax.py; its compilation cache in `jax/cache`).

`registry` holds the one `Registry` object, discovered from these folders
(`default_registry()`); the functions here (`get`, `names`, `reference`, `candidates`,
`builders`, ...) read the active registry, which is what the experiments file's `program` key,
the plan, the runner, the machine facts, the parser and the report read (a test makes its own
active with `registry.use`). Adding a framework: one folder with a `Program` subclass (its
devices, build system, caches, driver-cache policy, header facts, display names, machine-fact
rows and measurement-changing variables) and its `place`, and its benchmark program
(tests/programs/test_fourth_framework.py does it with a stand-in;
test_fourth_framework_build.py with a build system of its own).

May import: `records` (record types), `vocabulary`, `axes`, `errors` and `signals` (Ctrl-C
deferred while a probe starts), nothing else of the package.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from orchestrator.programs import registry
from orchestrator.programs.base import Paths, Program
from orchestrator.programs.build import Builders, BuildSystem
from orchestrator.programs.registry import Registry, active, default_registry, use

__all__ = [
    "Paths",
    "Program",
    "Registry",
    "active",
    "build_system_of",
    "builders",
    "candidates",
    "cpu_devices",
    "default_registry",
    "derived",
    "env_values",
    "get",
    "names",
    "one_thread_labels",
    "reference",
    "units",
    "use",
]


def get(name: str) -> Program:
    """The active registry's program of that name; KeyError names the known ones."""
    return active().get(name)


def env_values() -> dict[str, Callable[[str], object]]:
    """Every environment variable some program's orchestrator code reads, with its parser."""
    return active().env_values()


def names() -> tuple[str, ...]:
    return active().names()


def units() -> tuple[str, ...]:
    """Every unit a `builds:` entry may name ('exec-gpu'), over the programs' build systems."""
    return active().units()


def build_system_of(unit: str) -> BuildSystem:
    """The build system that owns a unit; KeyError names the known units."""
    return active().build_system_of(unit)


def builders(project: Path) -> Builders:
    """What the run layer and the CLI build with: each build by its unit's build system."""
    return active().builders(project)


def reference() -> tuple[Program, str] | None:
    """The program and device every build's accuracy is compared with ('torch', 'cpu')."""
    return active().reference()


def candidates() -> tuple[Program, ...]:
    """Every program but the reference, in registry order: what the report sets against it."""
    return active().candidates()


def cpu_devices() -> frozenset[str]:
    """The devices that run on the CPU under any program's name ('cpu', burn's 'flex')."""
    return active().cpu_devices


def one_thread_labels() -> frozenset[str]:
    """Labels of builds that run one thread whatever is asked (burn's 'flex(template)')."""
    return active().one_thread_labels


F = TypeVar("F", bound=Callable[..., Any])


def derived(function: F) -> F:
    """Mark a functools.cache'd function as computed from the registry (cleared whenever
    another registry becomes active)."""
    registry.on_change(function.cache_clear)  # type: ignore[attr-defined]
    return function
