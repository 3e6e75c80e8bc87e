"""The registry: one object holding the programs, the sweep axes, the vocabulary's timing
methods and dataset columns, and the report's sections.

`discover()` builds it: every framework folder of orchestrator/programs/ (a package whose
`__init__` defines one concrete `Program` subclass) gives its program, ordered by the class's
`place` (then by name), beside the built-in axes (`axes.AXES`), methods and columns
(`vocabulary.METHODS`, `COLUMNS`); its sections are the ones report/sections/ finds.
`default_registry()` is that discovery made once. The experiments model, the plan, the dataset
and the report read the registry they are given (`registry=`; none: the active one, the default
unless a caller made another active with `use`), so a test builds its own registry
(`default_registry().with_programs(Echo())`) instead of changing a global one, and the
committed JSON Schema comes from the default registry only.

Nothing is registered at import: a `Registry` is never changed once built; `with_programs`,
`with_axes`, `with_methods`, `with_columns` and `with_sections` make a new one.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from orchestrator import axes, vocabulary
from orchestrator.programs.base import Program
from orchestrator.programs.build import Builders, BuildSystem

_HERE = Path(__file__).parent


@dataclass(frozen=True, eq=False)
class Registry:
    """The programs (in the report's order), the sweep axes and the dataset columns."""

    programs: tuple[Program, ...]
    axes: tuple[axes.Axis, ...] = axes.AXES
    columns: tuple[vocabulary.Column, ...] = vocabulary.COLUMNS
    methods: tuple[vocabulary.Method, ...] = vocabulary.METHODS
    # the report's sections (report/registry.Registered); None: the ones report/sections finds
    sections: tuple[Any, ...] | None = None
    by_name: Mapping[str, Program] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        named = {p.name: p for p in self.programs}
        if len(named) != len(self.programs):
            raise ValueError("two programs of one name in a registry")
        object.__setattr__(self, "by_name", MappingProxyType(named))

    def with_programs(self, *extra: Program) -> Registry:
        """This registry with `extra` programs after its own (one of the same name replaced
        in its place)."""
        new = {p.name: p for p in extra}
        kept = tuple(new.pop(p.name, p) for p in self.programs)
        return replace(self, programs=(*kept, *new.values()))

    def with_axes(self, *extra: axes.Axis) -> Registry:
        return replace(self, axes=(*self.axes, *extra))

    def without_axes(self, *names: str) -> Registry:
        return replace(self, axes=tuple(a for a in self.axes if a.name not in names))

    def with_columns(self, *extra: vocabulary.Column) -> Registry:
        return replace(self, columns=(*self.columns, *extra))

    def with_methods(self, *extra: vocabulary.Method) -> Registry:
        return replace(self, methods=(*self.methods, *extra))

    def with_sections(self, sections: tuple[Any, ...]) -> Registry:
        return replace(self, sections=sections)

    def get(self, name: str) -> Program:
        """The program of that name; KeyError names the known ones."""
        try:
            return self.by_name[name]
        except KeyError:
            raise KeyError(f"no program '{name}' (known: {', '.join(self.by_name)})") from None

    def names(self) -> tuple[str, ...]:
        return tuple(self.by_name)

    def env_values(self) -> dict[str, Callable[[str], object]]:
        """Every environment variable some program's orchestrator code reads, with its parser."""
        return {name: parse for p in self.programs for name, parse in p.env_values.items()}

    def units(self) -> tuple[str, ...]:
        """Every unit a `builds:` entry may name ('exec-gpu'), over the programs' build systems."""
        return tuple(dict.fromkeys(u for p in self.programs if p.build_system is not None
                                   for u in p.build_system.units))

    def build_system_of(self, unit: str) -> BuildSystem:
        """The build system that owns a unit; KeyError names the known units."""
        for program in self.programs:
            if program.build_system is not None and unit in program.build_system.units:
                return program.build_system
        raise KeyError(f"no build system builds '{unit}' (known: {', '.join(self.units())})")

    def builders(self, project: Path) -> Builders:
        """What the run layer and the CLI build with: each build by its unit's build system."""
        return Builders(project, self.build_system_of)

    def reference(self) -> tuple[Program, str] | None:
        """The program and device every build's accuracy is compared with ('torch', 'cpu')."""
        return next(((p, p.reference_device) for p in self.programs
                     if p.reference_device is not None), None)

    def candidates(self) -> tuple[Program, ...]:
        """Every program but the reference, in registry order: what the report sets against it."""
        found = self.reference()
        return tuple(p for p in self.programs if found is None or p is not found[0])

    @functools.cached_property
    def cpu_devices(self) -> frozenset[str]:
        """The devices that run on the CPU under any program's name ('cpu', burn's 'flex')."""
        return frozenset({"cpu"} | {d for p in self.programs for d in p.devices
                                    if p.device_of(d) == "cpu"})

    @functools.cached_property
    def one_thread_labels(self) -> frozenset[str]:
        """Labels of builds that run one thread whatever is asked (burn's 'flex(template)')."""
        return frozenset(label for p in self.programs for label in p.naming.one_thread_labels)


def _found_in(module: Any) -> list[type[Program]]:
    """The concrete Program subclasses a framework folder's `__init__` defines."""
    return [c for _, c in inspect.getmembers(module, inspect.isclass)
            if issubclass(c, Program) and not inspect.isabstract(c)
            and c.__module__ == module.__name__]


def discover(package: str = "orchestrator.programs", folder: Path = _HERE) -> Registry:
    """Every framework folder under `folder` (a package defining one concrete Program), in
    the order of their `place` numbers, with the built-in axes and columns. `package`: the
    folders' package ('' when `folder` is on sys.path itself)."""
    found = []
    for info in sorted(pkgutil.iter_modules([str(folder)]), key=lambda m: m.name):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{package}.{info.name}" if package else info.name)
        classes = _found_in(module)
        if len(classes) != 1:
            raise ValueError(f"{folder / info.name}: expected one Program subclass in its "
                             f"__init__, found {len(classes)}")
        found.append(classes[0]())
    found.sort(key=lambda p: (p.place, p.name))
    return Registry(tuple(found))


@functools.cache
def default_registry() -> Registry:
    """The registry of this checkout: discovered once."""
    return discover()


_lock = threading.RLock()
_active: list[Registry] = []  # the registries made active by `use`, innermost last
_listeners: list[Callable[[], None]] = []  # what is computed from the active registry


def active() -> Registry:
    """The registry in use: the innermost `use`, else the default one."""
    return _active[-1] if _active else default_registry()


def on_change(listener: Callable[[], None]) -> None:
    """Call `listener` (a cache's clear) whenever another registry becomes active."""
    _listeners.append(listener)


def _activated() -> None:
    current = active()
    axes.activate(current.axes)
    vocabulary.activate(current.columns, current.methods)
    for listener in _listeners:
        listener()


@contextmanager
def use(registry: Registry | None) -> Iterator[Registry]:
    """Make `registry` the active one inside the block (None: keep the active one)."""
    if registry is None or registry is active():
        yield active()
        return
    with _lock:
        _active.append(registry)
        _activated()
    try:
        yield registry
    finally:
        with _lock:
            _active.remove(registry)
            _activated()
