"""The report's sections, in the chapter's order, then what goes beyond it: one module each.

The modules, in the report's order: `methods` (1), `clocks` (1b), `first_call` (2), `cpu` (3),
`accuracy` (4), `warmup` (5), `statistics` (6), `sizes` (6b), `failures` (7), `machine` (8).
A section is one module here: its `@section(...)` registration (report/registry.py: its row
selection, plot, the tables `report A B` joins, how `compare` shows it) and its function that
turns the selected rows into its tables and findings. Importing this package registers them in
the order of `ORDER` (the report's order); a new section is its module plus its name there
(`test_contract_section*` registers a stand-in from a test).
"""

from __future__ import annotations

import importlib

from orchestrator.report.registry import (
    REGISTRY,
    CompareSection,
    Context,
    Registered,
    Section,
    SideTable,
    build_sections,
    compare_sections,
    section,
)

__all__ = ["ORDER", "REGISTRY", "CompareSection", "Context", "Registered", "Section",
           "SideTable", "build_sections", "compare_sections", "section"]

# the report's order: each module registers its section as it is imported
ORDER = ("methods", "clocks", "first_call", "cpu", "accuracy", "warmup", "statistics", "sizes",
         "failures", "machine")
for _name in ORDER:
    importlib.import_module(f"{__name__}.{_name}")
