"""The package's layers import only what their `__init__` docstrings allow (parsed with ast,
every module, imports inside functions included):

cli -> report -> data; cli -> run -> experiments and data; every layer may use programs; programs
use nothing but the record types (`records`) and the leaves below; cli -> hosts -> data and the
experiments file's YAML loader; every layer may use the measurement vocabulary, the sweep axes
and the records; report and run (the stopping rule) use the statistics (`stats`);
stats, vocabulary, axes, errors and signals use nothing of the package, records only the axes.
Inside report/, the modules stand on at most six floors without a circle (bench/import_graph.py).
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType

from .conftest import PROJECT

PACKAGE = PROJECT / "orchestrator"
BASE = {"errors", "signals", "vocabulary", "axes"}
ALLOWED = {
    "programs": {"programs", "records", "errors", "signals", "vocabulary", "axes"},
    "data": {"data", "records", "programs", *BASE},
    "experiments": {"experiments", "records", "programs", "errors", "vocabulary", "axes"},
    "run": {"run", "experiments", "records", "data", "programs", "stats", *BASE},
    "report": {"report", "records", "data", "programs", "stats", *BASE},
    "hosts": {"hosts", "experiments.yamlsource", "experiments.messages", "records", "data", *BASE},
    "errors": set(),
    "signals": set(),
    "vocabulary": set(),
    "axes": set(),
    # the statistics: plain numbers and arrays in, numbers out, under report and run alike
    "stats": {"stats"},
    # the record types under every layer: they import nothing but the sweep axes they carry
    "records": {"records", "axes"},
}


def _imports(path: Path) -> set[str]:
    """Every orchestrator module `path` imports, relative to the package ('data.store')."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from orchestrator import programs` imports orchestrator.programs
            names = [f"{node.module}.{a.name}" if node.module == "orchestrator" else node.module
                     for a in node.names]
        else:
            assert not isinstance(node, ast.ImportFrom), f"{path}: relative import"
            continue
        found |= {n.removeprefix("orchestrator.") for n in names
                  if n == "orchestrator" or n.startswith("orchestrator.")}
    return found


def _allowed(layer: str, target: str) -> bool:
    return any(target == a or target.startswith(a + ".") for a in ALLOWED[layer])


def test_every_module_keeps_to_its_layer() -> None:
    broken = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        layer = parts[0]
        if layer not in ALLOWED:  # cli, __main__, __init__: the top may use every layer
            continue
        broken += [f"{'/'.join(parts)} imports orchestrator.{t}" for t in sorted(_imports(path))
                   if not _allowed(layer, t)]
    assert not broken, "\n".join(broken)


def test_the_rule_checker_sees_a_breach(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from orchestrator.run import sweep\n"
                   "from orchestrator import report\n")
    assert _imports(bad) == {"run", "report"}
    assert not _allowed("data", "run") and not _allowed("programs", "data.store")
    assert _allowed("run", "data.store") and _allowed("programs", "records")
    assert _allowed("data", "vocabulary") and not _allowed("vocabulary", "records")


def test_every_package_says_what_it_may_import() -> None:
    for layer in ("experiments", "programs", "run", "data", "report", "hosts", "stats"):
        doc = ast.get_docstring(ast.parse((PACKAGE / layer / "__init__.py").read_text()))
        assert doc and "May import" in doc, layer


def test_stats_is_a_leaf() -> None:
    """stats imports nothing of the orchestrator but itself: not report, run, data, records,
    the vocabulary or the axes (the rule above, read for this package alone so that a wider
    ALLOWED entry would still fail here)."""
    modules = sorted((PACKAGE / "stats").rglob("*.py"))
    assert {p.stem for p in modules} >= {"__init__", "intervals", "spread", "trend"}
    reached = {f"stats/{p.stem} imports orchestrator.{t}" for p in modules for t in _imports(p)
               if t != "stats" and not t.startswith("stats.")}
    assert reached == set()
    assert not _allowed("stats", "report.tables") and not _allowed("stats", "vocabulary")
    assert not _allowed("stats", "records") and _allowed("report", "stats.intervals")


def test_the_report_does_not_import_its_compare_wing() -> None:
    """report/compare/ stands on the report (registry, sections, tables, exporters, the writer);
    the report itself imports nothing of it, so a one-side report never loads compare. The history
    wing (report/history/) stands on both."""
    wings = (PACKAGE / "report" / "compare", PACKAGE / "report" / "history")
    reached = []
    for path in sorted((PACKAGE / "report").rglob("*.py")):
        if any(wing in path.parents for wing in wings):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        named = {f"{n.module}.{a.name}" for n in ast.walk(tree)
                 if isinstance(n, ast.ImportFrom) and n.module for a in n.names}
        reached += [f"{path.relative_to(PACKAGE)} imports {t}"
                    for t in sorted(_imports(path) | named)
                    if t.removeprefix("orchestrator.").startswith("report.compare")]
    assert reached == []


def test_nothing_of_the_report_imports_its_history_wing() -> None:
    """report/history/ stands on the report and its compare wing; neither imports it."""
    wing = PACKAGE / "report" / "history"
    reached = [f"{path.relative_to(PACKAGE)} imports {t}"
               for path in sorted((PACKAGE / "report").rglob("*.py")) if wing not in path.parents
               for t in sorted(_imports(path)) if t.startswith("report.history")]
    assert reached == []


# report/ as a layering (bench/import_graph.py's count: every import, a package's __init__ a
# module, circles condensed): leaves, the table pieces and the registry, the builders, the
# sections and page parts, the writer, the entry points. It was 13 floors.
REPORT_FLOORS = 6
REPORT_LEAVES = ("section", "findings", "names", "cells", "arithmetic", "escape", "styles",
                 "sample_sets", "peaks")


def _import_graph() -> ModuleType:
    """bench/import_graph.py, the measure the floors are read with (bench/ is no package)."""
    spec = importlib.util.spec_from_file_location("import_graph",
                                                  PROJECT / "bench" / "import_graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_report_stands_on_six_floors_without_a_circle() -> None:
    """The whole of report/ (its compare and history wings too) has no import circle and at
    most REPORT_FLOORS floors; the message is the longest chain, the place a new import grew."""
    graph = _import_graph()
    _modules, floors, _arrows, cycles, chain = graph.measure(graph.graph(PROJECT, "report"))
    assert cycles == 0
    assert floors <= REPORT_FLOORS, " -> ".join(chain)


def test_the_report_leaves_import_nothing_of_the_report() -> None:
    """What a section is made of, a finding, a name, a cell's format, a run's arithmetic, the
    escaping, the styles, the sample sets and the peaks stand on nothing of the report: the
    floors above them are built on these."""
    edges = _import_graph().graph(PROJECT, "report")
    leaves = {f"orchestrator.report.{m}" for m in REPORT_LEAVES}
    assert leaves <= set(edges)
    assert {m: sorted(edges[m]) for m in leaves if edges[m]} == {}


def test_the_floor_count_sees_every_import(tmp_path: Path) -> None:
    """The count the floors test reads: an import inside a function is an arrow, a package's
    __init__ a module, a circle one node (a stand-in package of four modules)."""
    package = tmp_path / "orchestrator" / "part"
    package.mkdir(parents=True)
    sources = {"__init__.py": "",
               "a.py": "def late() -> None:\n    from orchestrator.part import b\n",
               "b.py": "import orchestrator.part.c\n",
               "c.py": "from orchestrator.part.b import name\nfrom orchestrator import part\n"}
    for name, text in sources.items():
        (package / name).write_text(text, encoding="utf-8")
    graph = _import_graph()
    edges = graph.graph(tmp_path, "part")
    p = "orchestrator.part"
    # `from P import m` reads P (its __init__ runs) and P.m
    assert edges == {p: set(), f"{p}.a": {p, f"{p}.b"}, f"{p}.b": {f"{p}.c"},
                     f"{p}.c": {p, f"{p}.b"}}
    assert graph.measure(edges) == (4, 3, 5, 1, [f"{p}.a", f"{p}.b+{p}.c", p])
