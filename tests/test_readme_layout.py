"""The README's layout tables name every module of the package (issue 11): a new module
that the tables do not name fails here, so a newcomer can always find where things live."""

from __future__ import annotations

import re

from .conftest import PROJECT


def _layout_text() -> str:
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    return readme[readme.index("## Layout"):readme.index("\n## ", readme.index("## Layout") + 1)]


def test_every_module_is_named_in_the_layout_tables() -> None:
    named = set(re.findall(r"`([a-z_]+)`", _layout_text()))
    modules = {p.stem for p in (PROJECT / "orchestrator").rglob("*.py")
               if p.stem not in ("__init__", "__main__")}
    assert modules, "no modules found"
    assert sorted(modules - named) == []
