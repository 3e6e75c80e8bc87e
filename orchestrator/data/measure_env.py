"""Environment variables that change what a run measures: the one list, each with its source,
assembled from the registry (the CUDA driver's and cuBLAS's, programs/measure.py, then each
program's own `measure_env`, programs/<framework>/).

A run's environment is explicit (run/runner.py passes only PATH, HOME, locale and the like, then
the experiment's `env`), so whatever of these a run had came from the experiments file and is in
its definition. The dataset carries them per run in the column `measure_env`
(`NAME=VALUE; ...`, in this list's order) and the report warns once per variable and value,
naming what it changes and where that is documented. A name ending in `*` is a prefix (every
`CUBECL_*` variable). `PROOF_BREAKERS` are the variables known to defeat a program's printed
proof (the queued window's `start event waited` line): the report names them beside the failed
proof rather than the method's premise.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping

from orchestrator import programs
from orchestrator.programs.measure import SHARED, Variable

__all__ = ["PROOF_BREAKERS", "Variable", "breaks_proof", "column", "found", "pairs_text",
           "parse_column", "variable", "variables"]


@programs.derived
@functools.cache
def variables() -> tuple[Variable, ...]:
    """The one list: the ones of no one framework (programs/measure.py), then each program's
    own (`Program.measure_env`), in the registry's order; a name listed twice, once."""
    found = (*SHARED, *(v for p in programs.active().programs for v in p.measure_env))
    return tuple({v.name: v for v in reversed(found)}[name]
                 for name in dict.fromkeys(v.name for v in found))


# The variables known to defeat the queued window's proof (bench_py's `start event waited`):
# a blocking launch returns only when the kernel is done, so the spin kernel is over before the
# start event is even queued.
PROOF_BREAKERS = ("CUDA_LAUNCH_BLOCKING",)


def variable(name: str) -> Variable | None:
    """The list's entry for `name`: exact, else the first prefix it starts with."""
    for entry in variables():
        if entry.name == name or (entry.name.endswith("*") and name.startswith(entry.name[:-1])):
            return entry
    return None


def found(env: Mapping[str, str] | Iterable[tuple[str, str]]) -> list[tuple[str, str, Variable]]:
    """(name, value, entry) of every listed variable in `env`, in the list's order."""
    pairs = dict(env.items() if isinstance(env, Mapping) else env)
    order = {entry.name: i for i, entry in enumerate(variables())}
    hits = [(name, value, entry) for name, value in pairs.items()
            if (entry := variable(name)) is not None]
    return sorted(hits, key=lambda hit: (order[hit[2].name], hit[0]))


def column(env: Mapping[str, str] | Iterable[tuple[str, str]]) -> str:
    """The dataset's `measure_env`: `NAME=VALUE; ...` of the listed variables, '' if none.
    A value's own `;` is written `\\;` and its `\\` as `\\\\`, so a value holding "; "
    (`XLA_FLAGS="--a; --b"`) reads back as one value, not two variables."""
    return "; ".join(f"{name}={_escape(value)}" for name, value, _ in found(env))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(";", "\\;")


def parse_column(text: object) -> list[tuple[str, str]]:
    """`measure_env` back into (name, value) pairs ('' or NaN: none): split at the `; ` no
    backslash escapes, each value unescaped."""
    if not isinstance(text, str) or not text:
        return []
    parts, part, chars = [], [], iter(text)
    for char in chars:
        if char == "\\":
            part.append(next(chars, ""))  # an escaped `;` or `\\`: the value's own
        elif char == ";":
            parts.append("".join(part))
            part = []
        else:
            part.append(char)
    parts.append("".join(part))
    pairs = []
    for item in parts:
        name, _, value = item.removeprefix(" ").partition("=")
        if name:
            pairs.append((name, value))
    return pairs


def pairs_text(text: object) -> list[str]:
    """`NAME=VALUE` of each variable in a `measure_env` cell, values unescaped."""
    return [f"{name}={value}" for name, value in parse_column(text)]


def breaks_proof(text: object) -> list[str]:
    """`NAME=VALUE` of the PROOF_BREAKERS in a `measure_env` cell (set and not '0')."""
    return [f"{name}={value}" for name, value in parse_column(text)
            if name in PROOF_BREAKERS and value.strip() not in ("", "0")]
