"""Load YAML keeping where each value came from.

PyYAML silently keeps the last of two equal keys and forgets line numbers once it builds Python
objects. A timing sweep defined by a file deserves better errors, so this loader walks the node
tree itself: duplicate keys are an error, and every value's YAML path maps to its line for the
validation messages in `config`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from orchestrator.errors import ConfigError

PathKey = tuple[str | int, ...]


def format_path(path: PathKey) -> str:
    """`experiments.cpu.threads[1]` from ('experiments', 'cpu', 'threads', 1)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


class Located:
    """A loaded document and the line of every YAML path in it."""

    def __init__(self, source: str, data: Any, lines: dict[PathKey, int], text: str = "") -> None:
        self.source = source
        self.data = data
        self.lines = lines
        self.text = text  # what was read, once: a pipe or FIFO cannot be read a second time

    def line_of(self, path: PathKey) -> int | None:
        """Line of the deepest known prefix of `path` (pydantic may point below a leaf)."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:end]))
            if line is not None:
                return line
        return None


_SCALARS = yaml.SafeLoader("")


def _construct(node: yaml.Node, path: PathKey, source: str, lines: dict[PathKey, int]) -> Any:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        key_lines: dict[Any, int] = {}  # the value's line may be the next one: name the key's
        for key_node, value_node in node.value:
            key = _construct(key_node, path, source, {})
            line = key_node.start_mark.line + 1
            if not isinstance(key, str | int):
                raise ConfigError(source, line, format_path(path), "mapping keys must be strings")
            if key in out:
                raise ConfigError(source, line, format_path((*path, key)),
                                  f"duplicate key '{key}' (first at line {key_lines[key]})")
            key_lines[key] = line
            out[key] = _construct(value_node, (*path, key), source, lines)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_construct(item, (*path, i), source, lines) for i, item in enumerate(node.value)]
    # a scalar: let PyYAML resolve its type (int, float, bool, null)
    return _SCALARS.construct_object(node)


def _started_at(exc: yaml.MarkedYAMLError, line: int | None) -> str:
    """Where the unfinished construct began: an unclosed '{' or quote is found lines later."""
    start = exc.context_mark.line + 1 if exc.context_mark else None
    if exc.context and start is not None and start != line:
        return f" ({exc.context} started at line {start})"
    return ""


def load_yaml(path: Path) -> Located:
    """Read `path`; raise ConfigError naming the file and line for anything unreadable."""
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(source, None, "", "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(source, None, "", f"cannot read: {exc}") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise ConfigError(source, line, "", f"YAML syntax error: {exc.problem}"
                          + _started_at(exc, line)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(source, None, "", f"YAML error: {exc}") from None
    if node is None:
        raise ConfigError(source, None, "", "the file is empty")
    lines: dict[PathKey, int] = {}
    data = _construct(node, (), source, lines)
    return Located(source, data, lines, text)
