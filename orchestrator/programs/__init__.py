"""The benchmark programs, one folder per framework, behind one interface.

`base` (the `Program` interface and `Paths`), `build` (the `BuildSystem` of a program made of
parts, and `Builders`: each build by its unit's system), `torch/` (bench_py/exec_gpu.py),
`burn/` (the bench_rust crates: `Cargo` its build system, `burn/cargo` builds them,
`burn/cubecl_store` and `burn/cubecl_proof` read and prove cubecl's autotune cache), `jax/`
(bench_py/exec_jax.py; its compilation cache in `jax/cache`). The registry here (`REGISTRY`,
`get`, `register`, `reference`, `candidates`) is what the experiments file's `program` key and
its JSON Schema, the plan, the runner, the machine facts, the parser and the report read;
`builders` is what the run layer and the CLI build with (`units` and `build_system_of`: which
build system builds a `builds:` entry's crate). Adding a framework: one folder with a
`Program` subclass (its devices, build system, caches, driver-cache policy, header facts,
display names and machine-fact rows), one `register(...)` line below, and its benchmark
program (tests/programs/test_fourth_framework.py does it with a stand-in;
test_fourth_framework_build.py with a build system of its own).

May import: `records` (record types), `vocabulary`, `axes`, `errors` and `signals` (Ctrl-C
deferred while a probe starts), nothing else of the package.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from orchestrator.programs.base import Paths, Program
from orchestrator.programs.build import Builders, BuildSystem
from orchestrator.programs.burn import Burn
from orchestrator.programs.jax import Jax
from orchestrator.programs.torch import Torch

__all__ = [
    "REGISTRY",
    "Paths",
    "Program",
    "build_system_of",
    "builders",
    "candidates",
    "cpu_devices",
    "derived",
    "env_values",
    "get",
    "names",
    "one_thread_labels",
    "reference",
    "register",
    "units",
    "unregister",
]

REGISTRY: dict[str, Program] = {}


def register(program: Program) -> Program:
    """Add (or replace) a program; what is derived from the registry is derived again."""
    REGISTRY[program.name] = program
    _changed()
    return program


def unregister(name: str) -> None:
    REGISTRY.pop(name, None)
    _changed()


def get(name: str) -> Program:
    """The program of that name; KeyError names the known ones."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"no program '{name}' (known: {', '.join(REGISTRY)})") from None


def env_values() -> dict[str, Callable[[str], object]]:
    """Every environment variable some program's orchestrator code reads, with its parser."""
    return {name: parse for p in REGISTRY.values() for name, parse in p.env_values.items()}


def names() -> tuple[str, ...]:
    return tuple(REGISTRY)


def units() -> tuple[str, ...]:
    """Every unit a `builds:` entry may name ('exec-gpu'), over the programs' build systems."""
    return tuple(dict.fromkeys(u for p in REGISTRY.values() if p.build_system is not None
                               for u in p.build_system.units))


def build_system_of(unit: str) -> BuildSystem:
    """The build system that owns a unit; KeyError names the known units."""
    for program in REGISTRY.values():
        if program.build_system is not None and unit in program.build_system.units:
            return program.build_system
    raise KeyError(f"no build system builds '{unit}' (known: {', '.join(units())})")


def builders(project: Path) -> Builders:
    """What the run layer and the CLI build with: each build by its unit's build system."""
    return Builders(project, build_system_of)


def reference() -> tuple[Program, str] | None:
    """The program and device every build's accuracy is compared with ('torch', 'cpu')."""
    return next(((p, p.reference_device) for p in REGISTRY.values()
                 if p.reference_device is not None), None)


def candidates() -> tuple[Program, ...]:
    """Every program but the reference, in registry order: what the report sets against it."""
    found = reference()
    return tuple(p for p in REGISTRY.values() if found is None or p is not found[0])


@functools.cache
def cpu_devices() -> frozenset[str]:
    """The devices that run on the CPU under any program's name ('cpu', burn's 'flex')."""
    return frozenset({"cpu"} | {d for p in REGISTRY.values() for d in p.devices
                                if p.device_of(d) == "cpu"})


@functools.cache
def one_thread_labels() -> frozenset[str]:
    """Labels of builds that run one thread whatever is asked (burn's 'flex(template)')."""
    return frozenset(label for p in REGISTRY.values() for label in p.one_thread_labels)


F = TypeVar("F", bound=Callable[..., Any])
_derived: list[Any] = []  # caches of what is computed from the registry


def derived(function: F) -> F:
    """Mark a functools.cache'd function as computed from the registry (cleared on change)."""
    _derived.append(function)
    return function


def _changed() -> None:
    for function in _derived:
        function.cache_clear()


derived(cpu_devices)
derived(one_thread_labels)
register(Torch())
register(Burn())
register(Jax())
