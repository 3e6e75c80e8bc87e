"""The import graph of a part of the package: its modules, floors and arrows.

    .venv/bin/python bench/import_graph.py [PART ...] [--chain] [--root TREE]

PART is a folder under orchestrator/ ('report', 'report/compare', 'stats'; default: report, its
core without the compare and history wings, and each wing). An arrow is one module importing
another of the same part (every import, inside functions too, read with ast; a package's
`__init__` counts as a module); cycles are condensed into one node; floors are the nodes on
the longest chain of arrows (a module importing nothing of the part is floor 1). `--chain`
prints one longest chain; `--root` measures another checkout (a `git archive` of an older
commit) to set before and after side by side.
"""

from __future__ import annotations

import argparse
import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def module_name(package: Path, path: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, known: set[str]) -> set[str]:
    """The modules of `known` that `path` imports (`from a import b` is a.b when a.b is one)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names] + [node.module]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def graph(root: Path, part: str, leave_out: tuple[str, ...] = ()) -> dict[str, set[str]]:
    package = root / "orchestrator"
    folder = package / part
    paths = {module_name(package, p): p for p in folder.rglob("*.py")
             if not any((folder / w) in p.parents for w in leave_out)}
    known = set(paths)
    return {m: imports(p, known) - {m} for m, p in paths.items()}


def condensed(edges: dict[str, set[str]]) -> tuple[dict[int, set[int]], list[list[str]]]:
    """Tarjan's strongly connected components: the DAG of components, and the components."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    comps: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(comp)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    of = {m: i for i, comp in enumerate(comps) for m in comp}
    dag = {i: {of[w] for m in comp for w in edges[m]} - {i} for i, comp in enumerate(comps)}
    return dag, comps


def measure(edges: dict[str, set[str]]) -> tuple[int, int, int, int, list[str]]:
    """(modules, floors, arrows, cycles, one longest chain)."""
    dag, comps = condensed(edges)

    @cache
    def floor(i: int) -> int:
        return 1 + max((floor(j) for j in dag[i]), default=0)

    top = max(dag, key=floor, default=None)
    chain: list[str] = []
    while top is not None:
        chain.append("+".join(sorted(comps[top])))
        top = max(dag[top], key=floor, default=None)
    cycles = sum(1 for c in comps if len(c) > 1)
    arrows = sum(len(v) for v in edges.values())
    return len(edges), max(map(floor, dag), default=0), arrows, cycles, chain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*")
    parser.add_argument("--chain", action="store_true", help="print one longest chain")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    args = parser.parse_args()
    wings = ("compare", "history")
    asked = [(p, ()) for p in args.parts] or [
        ("report", ()), ("report", wings), *((f"report/{w}", ()) for w in wings), ("stats", ())]
    for part, leave_out in asked:
        modules, floors, arrows, cycles, chain = measure(graph(args.root, part, leave_out))
        name = part + (" (core: without " + ", ".join(leave_out) + ")" if leave_out else "")
        print(f"{name}: {modules} modules, {floors} floors, {arrows} arrows, {cycles} cycles")
        if args.chain:
            print("  longest chain: " + " -> ".join(c.removeprefix("orchestrator.")
                                                   for c in chain))


if __name__ == "__main__":
    main()
