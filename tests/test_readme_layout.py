"""Every module and package of the orchestrator is named where a newcomer looks:
in the README's layout tables or in its own package's `__init__` docstring. A new module named in
neither fails here, so one can always find where things live."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from .conftest import PROJECT

PACKAGE = PROJECT / "orchestrator"


def _layout_text() -> str:
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    return readme[readme.index("## Layout"):readme.index("\n## ", readme.index("## Layout") + 1)]


def _named(text: str) -> set[str]:
    """Names in backticks: `module`, `package/`, `jax/cache` (each part counts)."""
    return {part for name in re.findall(r"`([a-z_/]+)`", text) for part in name.split("/") if part}


def _docstring(package: Path) -> str:
    init = package / "__init__.py"
    if not init.is_file():
        return ""
    return ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""


def test_every_module_is_named_in_the_layout_or_its_package_docstring() -> None:
    layout = _named(_layout_text())
    modules = [p for p in PACKAGE.rglob("*.py") if p.stem not in ("__init__", "__main__")]
    packages = [p for p in PACKAGE.rglob("*") if p.is_dir() and (p / "__init__.py").is_file()
                and p != PACKAGE]
    assert modules and packages, "no modules found"
    unnamed = [str(p.relative_to(PROJECT)) for p in [*modules, *packages]
               if p.stem not in layout | _named(_docstring(p.parent))]
    assert unnamed == []

