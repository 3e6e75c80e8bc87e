"""The report's sections, in the chapter's order, then what goes beyond it: one module each.

The modules, in the report's order: `methods`, `clocks`, `first_call`, `cpu`, `accuracy`,
`warmup`, `statistics`, `sizes`, `failures`, `machine`. A section is one module here: its
`@section(...)` registration (report/registry.py: its number, which places it in the report
and numbers its headings; its row selection, plot, the tables `report A B` joins, how
`compare` shows it) and its function that turns the selected rows into its tables and
findings. Every module here is imported (found, not listed), and the registry orders them by
their numbers: the default registry's sections (a test's registry may hold others:
`Registry.with_sections(including(...))`, as `test_contract_section*` does with a stand-in).
"""

from __future__ import annotations

import importlib
import pkgutil

from orchestrator.report.registry import (
    FOUND,
    CompareSection,
    Context,
    Registered,
    Section,
    SideTable,
    build_sections,
    compare_sections,
    entry,
    including,
    registered,
    section,
)

__all__ = ["FOUND", "ORDER", "CompareSection", "Context", "Registered", "Section", "SideTable",
           "build_sections", "compare_sections", "entry", "including", "registered", "section"]

# every module registers its section as it is imported; the registry sorts them by number
for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")
ORDER = tuple(r.name for r in FOUND)  # the report's order, as the numbers make it
