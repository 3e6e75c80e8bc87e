"""The interface of a program's build system: what the run layer knows of building.

A program made of parts (a burn crate and its features; another framework's sources and its
options) names a `BuildSystem`: its model (`units`: what the experiments file's `builds:` may
name, each with the options it defines), its validation (an unknown unit or option is one line
before anything runs), its identity (the run's stored `crate` and `features`: the names the
first stores used, so run ids never change) and its builder (`build(name, build)`: a result,
never an exception; the binary's path and whether it was fresh). The run layer and the CLI
build through `Builders`, which hands each `builds:` entry to the build system that owns its
unit, never knowing cargo (burn's `programs/burn/cargo.py` is one such builder).

Imports only the records.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Protocol

from orchestrator.records import BuildResult


class BuildSpec(Protocol):
    """What a build needs from the experiments file's `builds` entry (experiments.Build)."""

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


class Builder(Protocol):
    """Builds for one project tree: a failure is a result (`BuildResult`), not an exception."""

    watch: Watch | None

    def build(self, name: str, build: BuildSpec) -> BuildResult: ...


class BuildSystem(ABC):
    """One build system: its units and their options, their validation, identity and builder."""

    name: ClassVar[str]  # 'cargo'
    what: ClassVar[str] = "unit"  # what a unit is called in its errors ('crate')
    option: ClassVar[str] = "option"  # what an option is called ('feature')
    # the model: each unit `builds:` may name ('exec-gpu') -> the options it defines
    units: ClassVar[dict[str, tuple[str, ...]]] = {}

    def problem(self, unit: str, options: tuple[str, ...]) -> str | None:
        """Why a `builds:` entry is wrong (an option its unit does not define); None: fine."""
        known = self.units[unit]
        for option in options:
            if option not in known:
                return (f"{self.what} {unit} has no {self.option} '{option}' "
                        f"(known: {', '.join(known) or 'none'})")
        return None

    def identity(self, build: BuildSpec) -> dict[str, Any]:
        """The run's fields that say which build it ran: its stored `crate` and `features`."""
        return {"crate": build.crate, "features": tuple(sorted(build.features))}

    @abstractmethod
    def builder(self, project: Path) -> Builder:
        """A builder for this project tree (one per sweep: it may remember its sources)."""


class Builders:
    """Every build of a sweep, each by the build system owning its unit (`owner`)."""

    def __init__(self, project: Path, owner: Callable[[str], BuildSystem]) -> None:
        self.project, self.owner = project, owner
        self.watch: Watch | None = None  # handed to each builder before it builds
        self._made: dict[str, Builder] = {}

    def build(self, name: str, build: BuildSpec) -> BuildResult:
        system = self.owner(build.crate)
        if system.name not in self._made:
            self._made[system.name] = system.builder(self.project)
        builder = self._made[system.name]
        builder.watch = self.watch
        return builder.build(name, build)
