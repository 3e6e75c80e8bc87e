"""Load YAML keeping where each value came from, within limits.

PyYAML silently keeps the last of two equal keys and forgets line numbers once it builds Python
objects. A timing sweep defined by a file deserves better errors, so this loader walks the node
tree itself: duplicate keys are an error, and every value's YAML path maps to its line for the
validation messages in `config`. Walking it itself, it also bounds it (`limits`): the file's
size, its nesting, and the values built with every alias expanded (an alias bomb is a few
lines of text); a recursive alias, a tag other than YAML's plain types, a string no program can
take (NUL, a lone surrogate) are refused. Every problem found is named, not only the first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import yaml

from orchestrator.errors import ConfigError
from orchestrator.experiments.limits import MAX_DEPTH, MAX_FILE_BYTES, MAX_VALUES

PathKey = tuple[str | int, ...]
Problem = tuple[int | None, PathKey, str]  # line, YAML path, what is wrong

_YAML = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_YAML + t for t in ("null", "bool", "int", "float", "str", "timestamp")}
_MERGE = _YAML + "merge"


def format_path(path: PathKey) -> str:
    """`experiments.cpu.threads[1]` from ('experiments', 'cpu', 'threads', 1)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not part:
            out += "['']"  # an empty key
        else:
            out += f".{part}" if out else str(part)
    return out


def problems_error(source: str, problems: list[Problem]) -> ConfigError:
    """One problem: the one-line message. Several: a summary line, then one line each (by
    line), each naming its line and path; `line` and `path` are the first one's."""
    # an anchored value used twice is one problem (its line), not one per alias
    unique: dict[tuple[int | None, str], Problem] = {}
    for problem in problems:
        unique.setdefault((problem[0], problem[2]), problem)
    problems = sorted(unique.values(), key=lambda p: p[0] or 0)
    first_line, first_path, message = problems[0]
    if len(problems) == 1:
        return ConfigError(source, first_line, format_path(first_path), message)
    each = [f"  {ConfigError(source, line, format_path(path), what)}"
            for line, path, what in problems]
    error = ConfigError(source, None, "", f"{len(problems)} problems:\n" + "\n".join(each))
    error.line, error.path = first_line, format_path(first_path)
    return error


class Located:
    """A loaded document and the line of every YAML path in it."""

    def __init__(self, source: str, data: Any, lines: dict[PathKey, int], text: str = "",
                 problems: list[Problem] | None = None) -> None:
        self.source = source
        self.data = data
        self.lines = lines
        self.text = text  # what was read, once: a pipe or FIFO cannot be read a second time
        # what the YAML itself got wrong (a duplicate key, a tag): such a value is None in
        # `data`, so validation has more to say about everything else, not about these paths
        self.problems = problems or []

    def line_of(self, path: PathKey) -> int | None:
        """Line of the deepest known prefix of `path` (pydantic may point below a leaf)."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:end]))
            if line is not None:
                return line
        return None


_SCALARS = yaml.SafeLoader("")


def _short(tag: str) -> str:
    return "!!" + tag.removeprefix(_YAML) if tag.startswith(_YAML) else tag


def _text_problem(text: str) -> str | None:
    """Why a string cannot be handed to a program (argv, environment, a file name)."""
    shown = repr(text if len(text) <= 40 else text[:37] + "...")
    if "\0" in text:
        return f"{shown} contains a NUL byte, which no program or file name can take"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (f"{shown} contains a lone surrogate ({text[exc.start]!r}), which is not text: "
                "write the character itself")
    return None


class _Builder:
    """Python values from the node tree: lines noted, problems collected, limits enforced."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines: dict[PathKey, int] = {}
        self.problems: list[Problem] = []
        self.values = 0
        self.open: dict[int, int] = {}  # collections being built (ancestors): id -> line

    def problem(self, node: yaml.Node, path: PathKey, message: str) -> None:
        self.problems.append((node.start_mark.line + 1, path, message))

    def refuse(self, node: yaml.Node, path: PathKey, message: str) -> NoReturn:
        raise ConfigError(self.source, node.start_mark.line + 1, format_path(path), message)

    def build(self, node: yaml.Node, path: PathKey, lines: dict[PathKey, int]) -> Any:
        lines[path] = node.start_mark.line + 1
        self.values += 1
        if self.values > MAX_VALUES:
            self.refuse(node, path, f"more than {MAX_VALUES} values with every alias expanded "
                        "(an alias bomb?), the limit for an experiments file")
        if len(path) > MAX_DEPTH:
            self.refuse(node, path, f"nested more than {MAX_DEPTH} levels deep (aliases "
                        "followed), the limit for an experiments file")
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node, path)
        if id(node) in self.open:
            self.refuse(node, path, "recursive alias: the value anchored at line "
                        f"{self.open[id(node)]} contains itself")
        want = _YAML + ("map" if isinstance(node, yaml.MappingNode) else "seq")
        if node.tag != want:
            self.problem(node, path, f"YAML tag {_short(node.tag)} is not supported here")
            return None
        self.open[id(node)] = node.start_mark.line + 1
        try:
            if isinstance(node, yaml.MappingNode):
                return self.mapping(node, path, lines)
            return [self.build(item, (*path, i), lines) for i, item in enumerate(node.value)]
        finally:
            del self.open[id(node)]

    def scalar(self, node: yaml.ScalarNode, path: PathKey) -> Any:
        """PyYAML resolves the type (int, float, bool, null); only its plain types are taken."""
        if node.tag not in _SCALAR_TAGS:
            self.problem(node, path, f"YAML tag {_short(node.tag)} is not supported (plain "
                         "values only: write the value, quoted if it is a string)")
            return None
        if node.tag == _YAML + "timestamp":
            return self.text(node, path, node.value)  # no field takes a date: a title's text
        try:
            value = _SCALARS.yaml_constructors[node.tag](_SCALARS, node)
        except (yaml.YAMLError, ValueError, KeyError, TypeError, OverflowError):
            self.problem(node, path, f"{node.value[:40]!r} is not a valid {_short(node.tag)}")
            return None
        return self.text(node, path, value) if isinstance(value, str) else value

    def text(self, node: yaml.ScalarNode, path: PathKey, value: str) -> str | None:
        if why := _text_problem(value):
            self.problem(node, path, why)
            return None  # no follow-on problems from a value no one can use
        return value

    def mapping(self, node: yaml.MappingNode, path: PathKey, lines: dict[PathKey, int]) -> Any:
        out: dict[Any, Any] = {}
        key_lines: dict[Any, int] = {}  # the value's line may be the next one: name the key's
        merged: dict[Any, Any] = {}
        merged_lines: dict[PathKey, int] = {}
        merge_line = None
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if key_node.tag == _MERGE:
                if merge_line is not None:
                    self.problem(key_node, path, f"duplicate key '<<' (first at line "
                                 f"{merge_line})")
                    continue
                merge_line = line
                merged = self.merge(value_node, path, merged_lines)
                continue
            said = len(self.problems)
            key = self.key(key_node, path)
            if len(self.problems) > said:
                continue  # the key's own problem (a tag, a NUL) is named already
            if not isinstance(key, str):
                self.problem(key_node, path, "mapping keys must be strings")
            elif key in out:
                self.problem(key_node, (*path, key),
                             f"duplicate key '{key}' (first at line {key_lines[key]})")
            else:
                key_lines[key] = line
                out[key] = self.build(value_node, (*path, key), lines)
        kept = [key for key in merged if key not in out]  # keys written out win over merged
        lines.update({p: n for p, n in merged_lines.items()
                      if len(p) > len(path) and p[len(path)] in kept})
        return {**{key: merged[key] for key in kept}, **out}

    def key(self, node: yaml.Node, path: PathKey) -> Any:
        """A key is a name, as written: `no:` or `1:` is 'no' or '1', not False or 1 (YAML
        would make them a bool and an int; every mapping of the file is keyed by names)."""
        if isinstance(node, yaml.ScalarNode) and node.tag in _SCALAR_TAGS:
            self.values += 1
            return self.text(node, path, node.value)
        return self.build(node, path, {})

    def merge(self, node: yaml.Node, path: PathKey, lines: dict[PathKey, int]) -> dict[Any, Any]:
        """`<<: *base` or `<<: [*a, *b]` (YAML's merge key): the keys of each mapping not
        written out beside it; of two merged mappings, the first wins, as in PyYAML."""
        sources = node.value if isinstance(node, yaml.SequenceNode) else [node]
        merged: dict[Any, Any] = {}
        for source in sources:
            if not isinstance(source, yaml.MappingNode):
                self.problem(source, path, "'<<' (YAML's merge key) takes a mapping or a list "
                             "of mappings, e.g. '<<: *base'")
                continue
            values = self.build(source, path, lines)
            for key, value in (values or {}).items():
                merged.setdefault(key, value)
        return merged


def _started_at(exc: yaml.MarkedYAMLError, line: int | None) -> str:
    """Where the unfinished construct began: an unclosed '{' or quote is found lines later."""
    start = exc.context_mark.line + 1 if exc.context_mark else None
    if exc.context and start is not None and start != line:
        return f" ({exc.context} started at line {start})"
    return ""


def _read(path: Path, source: str) -> str:
    """The file's text, read once and bounded (a FIFO or /dev/zero must not read forever)."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(source, None, "", "file not found") from None
    except OSError as exc:
        raise ConfigError(source, None, "", f"cannot read: {exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(source, None, "", f"larger than {MAX_FILE_BYTES // 2**20} MiB, the "
                          "limit for an experiments file (is it the right file?)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ConfigError(source, line, "", f"cannot read: {exc}") from None


def _shallow(text: str, source: str) -> None:
    """Before PyYAML composes (recursively: deep nesting would overflow Python's stack), count
    the nesting and the values in its flat stream of events: with libyaml where there is one
    (twenty times faster); where libyaml finds an error, PyYAML's own words for it."""
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            _count(text, source, fast)
            return
        except yaml.YAMLError:
            pass  # the slow parser says it as the messages always did (or finds a limit)
    _count(text, source, yaml.SafeLoader)


def _count(text: str, source: str, loader: Any) -> None:
    depth = values = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            continue
        values += isinstance(event, yaml.NodeEvent)
        depth += isinstance(event, yaml.CollectionStartEvent)
        if depth > MAX_DEPTH or values > MAX_VALUES:
            what = (f"nested more than {MAX_DEPTH} levels deep" if depth > MAX_DEPTH
                    else f"more than {MAX_VALUES} values")
            raise ConfigError(source, event.start_mark.line + 1, "",
                              f"{what}, the limit for an experiments file")


def load_yaml(path: Path) -> Located:
    """Read `path`; raise ConfigError naming the file and line for anything unreadable or past
    a limit; the problems of values that could be read are in `Located.problems`."""
    source = str(path)
    text = _read(path, source)
    try:
        _shallow(text, source)
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
    builder = _Builder(source)
    data = builder.build(node, (), builder.lines)
    return Located(source, data, builder.lines, text, builder.problems)
