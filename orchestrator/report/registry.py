"""The report's section registry: what a section is, how one registers and what it reads.

A section is one module of report/sections/ whose function is registered by `@section(...)`:
the registration names its row selection (`select`, run ONCE per report), its plot (the PNG's
file name and its drawer in plots.py), the tables `report A B` joins across sides and how
`compare` shows it; the function turns the selected rows into its tables and findings.
`report` (writer.py), `report A B` (compare/side_by_side.py) and `compare` read this one
registry, and Markdown, CSV and PNG are exporters over the sections it builds. Each section
says its number once (`number="3"`, `"6b"`): the registry's order (the report's) sorts by it,
and its headings (the section's title, its side tables') are numbered from it; a section
without a number (a test's stand-in) comes after the numbered ones, in registration order.
Compare's order is its own (`CompareSection.rank`: the more specific sections later). A
section reads a `Context`: the data, its prepared figures, the thresholds, the raw sample sets
(report/sample_sets.py, on first use) and the builds paused while each run was measured.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pandas as pd

from orchestrator import programs, vocabulary
from orchestrator.data.dataset import Dataset
from orchestrator.report.sample_sets import sample_sets
from orchestrator.report.section import (
    CompareSection,
    Drawer,
    SampleSets,
    Section,
    SideTable,
    Thresholds,
)


@dataclass
class Context:
    """What a section may read: the dataset, its prepared figures (tables.prepare), the
    thresholds; the raw sample sets are computed on first use (`report A B` needs none)."""

    data: Dataset
    fig: pd.DataFrame
    th: Thresholds = field(default_factory=Thresholds)
    given_sets: SampleSets | None = None

    @cached_property
    def sets(self) -> SampleSets:
        return self.given_sets if self.given_sets is not None else sample_sets(self.data.samples)

    @cached_property
    def paused(self) -> dict[str, list[str]]:
        """Run id -> the sweep's builds paused while it was measured (checks.load says so)."""
        return paused_builds(self.data.runs)


def paused_builds(runs: pd.DataFrame) -> dict[str, list[str]]:
    """Run id -> the background builds paused while it was measured (the run's gate record,
    `builds_paused`); runs of older stores or without builds are left out."""
    out: dict[str, list[str]] = {}
    if "gate" not in runs:
        return out
    for rid, gate in zip(runs["run_id"], runs["gate"], strict=True):
        try:
            names = (json.loads(gate) if isinstance(gate, str) else None) or {}
        except ValueError:
            continue
        found = names.get("builds_paused") if isinstance(names, dict) else None
        if isinstance(found, list) and found:
            out[str(rid)] = [str(b) for b in found]
    return out


@dataclass(frozen=True)
class Registered:
    """One registered section: its row selection, its builder, its plot, its side tables,
    its place in `compare`."""

    name: str
    select: Callable[[Context], Any]  # a frame, or a bundle of frames (clocks.ClockRows)
    build: Callable[[Context, Any], Section]
    plot: tuple[str, Drawer] | None = None  # the PNG's file name and its drawer
    side_by_side: tuple[SideTable, ...] = ()
    compare: CompareSection | None = None
    number: str | None = None  # its place in the report ('3', '6b'); None: after the others

    def heading(self, words: str) -> str:
        """A heading of this section: '3. ' and its words."""
        return f"{self.number}. {words}" if self.number else words

    @property
    def place(self) -> tuple[int, int, str]:
        """Its sort key in the report: by number ('6' before '6b' before '7'), then the rest."""
        if self.number is None:
            return (1, 0, "")
        digits = self.number.rstrip("abcdefghijklmnopqrstuvwxyz")
        return (0, int(digits), self.number[len(digits):])

    def section(self, ctx: Context) -> Section:
        rows = self.select(ctx)  # selected once: the tables, the checks and the plot read it
        built = self.build(ctx, rows)
        built.title = self.heading(built.title)
        if self.plot is not None:
            built.plot, built.draw = self.plot
        return built


# the sections report/sections/'s modules register as they are imported (its discovery), in
# the report's order: by number (Registered.place); `registered()` is what the report reads
FOUND: list[Registered] = []


def registered() -> tuple[Registered, ...]:
    """The report's sections, in its order: the active registry's (`Registry.sections`, a
    test's own), else the ones report/sections/ found (the default registry's)."""
    chosen = programs.active().sections
    return tuple(chosen) if chosen is not None else tuple(FOUND)


def including(*extra: Registered) -> tuple[Registered, ...]:
    """The registered sections and `extra`, in the report's order: a registry of one's own
    (`Registry.with_sections`) with a section more."""
    names = [r.name for r in (*registered(), *extra)]
    if len(set(names)) != len(names):
        raise ValueError(f"report section {extra[0].name!r} registered twice")
    return tuple(sorted((*registered(), *extra), key=lambda r: r.place))


Builder = Callable[[Context, Any], Section]


def entry(name: str, select: Callable[[Context], Any], *, number: str | None = None,
          plot: tuple[str, Drawer] | None = None, side_by_side: tuple[SideTable, ...] = (),
          compare: CompareSection | None = None) -> Callable[[Builder], Registered]:
    """The decorated builder as a section, registered nowhere (a test's registry takes it)."""
    def made(build: Builder) -> Registered:
        return Registered(name, select, build, plot, side_by_side, compare, number)
    return made


def section(name: str, select: Callable[[Context], Any], *, number: str | None = None,
            plot: tuple[str, Drawer] | None = None,
            side_by_side: tuple[SideTable, ...] = (),
            compare: CompareSection | None = None) -> Callable[[Builder], Builder]:
    """Register the decorated builder as a section of the report, at its `number` (found as
    report/sections/ imports its modules)."""
    def register(build: Builder) -> Builder:
        if any(r.name == name for r in FOUND):
            raise ValueError(f"report section {name!r} registered twice")
        FOUND.append(entry(name, select, number=number, plot=plot, side_by_side=side_by_side,
                           compare=compare)(build))
        FOUND.sort(key=lambda r: r.place)  # stable: unnumbered ones keep their order
        return build
    return register


def compare_sections() -> list[CompareSection]:
    """The sections `compare` shows, in its order."""
    return sorted((r.compare for r in registered() if r.compare is not None),
                  key=lambda c: c.rank)


def method_section(name: str) -> Callable[[dict[str, Any]], bool]:
    """Compare takes a figure whose method the vocabulary puts in section `name`."""
    def takes(row: dict[str, Any]) -> bool:
        entry = vocabulary.method(row["method"])
        return entry is not None and entry.section == name
    return takes


def build_sections(data: Dataset, fig: pd.DataFrame, sets: SampleSets,
                   th: Thresholds) -> list[Section]:
    """The report's sections in the chapter's order, then what goes beyond it."""
    ctx = Context(data, fig, th, sets)
    return [found.section(ctx) for found in registered()]
