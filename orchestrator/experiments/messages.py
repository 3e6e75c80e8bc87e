"""pydantic's validation errors as the YAML author's problems: one per YAML path, in YAML words.

pydantic speaks Python ('a valid tuple', a union failing once per member, 'too short' after the
items' own errors); the file's author wrote YAML. Every problem is kept, each with its path, so
a file with three mistakes names three (`yamlsource.problems_error` words them).
"""

from __future__ import annotations

import re
from typing import Any

from orchestrator.experiments.yamlsource import PathKey


class PathError(ValueError):
    """A cross-field error that knows its YAML path."""

    def __init__(self, path: PathKey, message: str) -> None:
        super().__init__(message)
        self.path = path


def problems(errors: list[Any]) -> list[tuple[PathKey, str]]:
    """(YAML path, message) for each path pydantic found wrong, in its order."""
    groups: dict[PathKey, list[Any]] = {}
    for error in _without_follow_ons(errors):
        # a union (e.g. int | 'auto') fails once per member: say all they accept, once
        groups.setdefault(_data_path(error["loc"]), []).append(error)
    out = []
    for loc, same in groups.items():
        ctx_error = same[0].get("ctx", {}).get("error")
        if isinstance(ctx_error, PathError):
            out.append((ctx_error.path, str(ctx_error)))
        else:
            out.append((loc, _message(same)))
    return out


def _without_follow_ons(errors: list[Any]) -> list[Any]:
    """Drop 'too short' on a list whose items were invalid: their own errors say it all."""
    def follows(e: Any) -> bool:
        n = len(e["loc"])
        return e["type"] == "too_short" and any(
            o is not e and len(o["loc"]) > n and o["loc"][:n] == e["loc"] for o in errors)
    return [e for e in errors if not follows(e)] or errors


def _data_path(loc: tuple[Any, ...]) -> PathKey:
    """The YAML path of a pydantic error location, without union member tags like 'int'."""
    tags = ("int", "str", "float", "bool", "tuple", "list", "dict")
    path = list(loc)
    while path and isinstance(path[-1], str) and (
            path[-1] in tags or "[" in path[-1] or path[-1].startswith("function")):
        path.pop()
    return tuple(path)


def _message(errors: list[dict[str, Any]]) -> str:
    """'expected a valid integer or 'auto' (got 'many')' from one or several union errors."""
    kind = errors[0]["type"]
    if kind == "extra_forbidden":
        return "unknown key (a typo?)"
    if kind == "missing":
        return "required key is missing"
    if kind == "less_than_equal":  # the maxima of `limits`
        return f"expected at most {errors[0]['ctx']['le']} (the limit), got {errors[0]['input']!r}"
    if kind == "too_short":
        ctx = errors[0]["ctx"]
        return (f"expected at least {ctx['min_length']} item(s), got {ctx['actual_length']}"
                + " (an empty sweep runs nothing)" * (ctx["actual_length"] == 0))
    wants = dict.fromkeys(_yaml_words(str(e["msg"]).split(", unable")[0]
                                      .removeprefix("Value error, ")
                                      .removeprefix("Input should be ")) for e in errors)
    if kind == "value_error" or (len(errors) == 1 and "Input should" not in errors[0]["msg"]):
        return " or ".join(wants)
    got = errors[0].get("input")
    shown = f" (got {got!r})" if not isinstance(got, dict | list) else ""
    return "expected " + " or ".join(wants) + shown


def _yaml_words(text: str) -> str:
    """pydantic speaks Python ('a valid tuple'); the file's author wrote YAML."""
    text = re.sub(r"a valid dictionary( or instance of \w+)?", "a mapping", text)
    return text.replace("a valid tuple", "a list").replace("a valid list", "a list")
