"""Rows of a store that cannot be read as what they claim to be, and the line that says so.

A store edited by hand, by another program or by a disk gone bad can hold a run whose
definition is not JSON, a role or status outside the enums, a NULL where a value is needed, or
text in a figure's number column. Readers (export, report, reparse) skip such a row and count
it, so everything else a user has still renders; `Damage.lines()` is the warning: '1 damaged run
row skipped: sweep S run R: definition_json is not JSON'.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from orchestrator.data import schema
from orchestrator.records import Role, RunDef, Status

_INT64 = 2**63
_RUN_TEXT = ("run_id", "experiment", "role", "status", "definition_json")
_RUN_NUMBERS = ("started_at", "ended_at", "wall_s", "returncode", "expect_failure",
                "unknown_lines", "recorded_at")
_RUN_JSON = ("load_before_json", "load_after_json", "gate_json", "cache_json", "state_json",
             "headers_json")
FIGURE_NEEDED = ("run_id", "method", "stat", "value")  # readers ask SQLite the same (dataset)
_SAMPLE_NUMBERS = {"idx": "INTEGER", "value": "REAL", "summary_line": "INTEGER"}
SHOWN = 3  # problems named per line; the rest are counted


@dataclass
class Damage:
    """The damaged rows a reader skipped, by kind ('run', 'figure', 'sample', 'sweep')."""

    found: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, where: str, problem: str) -> None:
        self.found.setdefault(kind, []).append(f"{where}: {problem}")

    def __bool__(self) -> bool:
        return bool(self.found)

    def lines(self) -> list[str]:
        """One line per kind of row."""
        out = []
        for kind, problems in self.found.items():
            n = len(problems)
            more = f"; and {n - SHOWN} more" if n > SHOWN else ""
            out.append(f"{n} damaged {kind} row{'s' * (n != 1)} skipped: "
                       f"{'; '.join(problems[:SHOWN])}{more}")
        return out


def _number(value: Any, sql: str) -> bool:
    if isinstance(value, bool):
        return False
    if sql == "INTEGER":
        return isinstance(value, int) and -_INT64 <= value < _INT64
    return isinstance(value, int | float)


def _not_a_number(name: str, value: Any, sql: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{name} is {value}, beyond a 64-bit integer"
    return f"{name} is {type(value).__name__}, not {sql.lower()}"


def _json_problem(row: dict[str, Any], column: str) -> str | None:
    value = row.get(column)
    if value is None:
        return None
    try:
        json.loads(value)
    except (TypeError, ValueError, RecursionError):
        return f"{column} is not JSON"
    return None


def run_problem(row: dict[str, Any]) -> str | None:
    """Why a `runs` row cannot be read, or None."""
    for column in _RUN_TEXT:
        if column in row and not isinstance(row[column], str):
            return f"{column} is {'NULL' if row[column] is None else 'not text'}"
    if "role" in row and row["role"] not in set(Role):
        return f"role {row['role']!r} is not one of {', '.join(Role)}"
    if "status" in row and row["status"] not in set(Status):
        return f"status {row['status']!r} is not one of {', '.join(Status)}"
    for column in ("stdout", "stderr"):
        if row.get(column) is not None and not isinstance(row[column], bytes):
            return f"{column} is not bytes"
    for column in _RUN_NUMBERS:
        value = row.get(column)
        if value is not None and not _number(value, "REAL"):
            return f"{column} is {type(value).__name__}, not a number"
    for column in ("definition_json", *_RUN_JSON):
        if (problem := _json_problem(row, column)) is not None:
            return problem
    headers = json.loads(row.get("headers_json") or "null") or []
    if not isinstance(headers, list) or not all(isinstance(h, dict) for h in headers):
        return "headers_json is not a list of headers"
    if "definition_json" in row:
        return _definition_problem(row["definition_json"])
    return None


# a definition's fields the dataset reads, by the type they must have (None: may be NULL)
_DEFINITION = {"experiment": (str,), "program": (str,), "device": (str,), "mode": (str,),
               "reps": (int,), "process": (int,), "build": (str, None), "threads": (int, None),
               "warmup": (str, None), "profile": (str, None)}


def _definition_problem(text: str) -> str | None:
    definition = json.loads(text)
    if not isinstance(definition, dict):
        return "definition_json is not a run definition (not an object)"
    try:
        run = RunDef.from_definition(definition)
    except (TypeError, KeyError, ValueError, AttributeError) as exc:
        return f"definition_json is not a run definition ({type(exc).__name__}: {exc})"
    for name, types in _DEFINITION.items():
        value = getattr(run, name)
        if not (value is None and None in types) and not (
                isinstance(value, tuple(t for t in types if t is not None))
                and not isinstance(value, bool)):
            return f"definition_json's {name} is {value!r}"
    if len(run.shape) != 2 or not all(_number(n, "INTEGER") for n in run.shape):
        return f"definition_json's shape is {list(run.shape)!r}"
    if not all(isinstance(f, str) for f in run.features):
        return f"definition_json's features are {list(run.features)!r}"
    if not all(len(pair) == 2 and all(isinstance(x, str) for x in pair) for pair in run.env):
        return "definition_json's env is not a list of [name, value] pairs"
    return None


def figure_problem(row: dict[str, Any]) -> str | None:
    """Why a `figures` row cannot be read, or None."""
    for column in FIGURE_NEEDED:
        if row.get(column) is None:
            return f"{column} is NULL"
    for column in schema.FIGURE_COLUMNS:
        value = row.get(column.name)
        if value is None:
            continue
        if column.sql == "TEXT" and not isinstance(value, str):
            return f"{column.name} is {type(value).__name__}, not text"
        if column.sql != "TEXT" and not _number(value, column.sql):
            return _not_a_number(column.name, value, column.sql)
    return None


def sample_problem(row: dict[str, Any]) -> str | None:
    """Why a `samples` row cannot be read, or None."""
    if row.get("value") is None or row.get("run_id") is None:
        return f"{'value' if row.get('value') is None else 'run_id'} is NULL"
    for column, sql in _SAMPLE_NUMBERS.items():
        value = row.get(column)
        if value is not None and not _number(value, sql):
            return _not_a_number(column, value, sql)
    return None
