"""Sweep axes as data: every parameter a run is swept over, named once.

A run (`records.RunDef`) is its identity (experiment, program, device, mode, build, reps,
environment, ...) plus `params`, a map from axis name to value that the plan expands once
(hyperfine's `--parameter-list` map and nvbench's typed axes are the models). Each `Axis` says
what every layer needs of it, so a new axis is its entry here plus its experiments-file key:

- its default, and whether a run at the default keeps the run id it had before the axis existed
  (`hashed_default`: an axis added after stores were written must leave their ids alone);
- its words in the run's one line (`RunDef.describe`);
- its dataset column (a `vocabulary` column: the data dictionary has its row) and the cell;
- its field in compare's match key (report/compare/rows.py), and whether a side that did not
  record it matches anything (`wildcard`);
- how the plan gets its values: `key`, the experiments-file key it sweeps (a list on the
  experiment, or on a target, which wins), for an axis the plan has no rule of its own for
  (experiments/plan.py `_EXPANDERS`: the built-in axes, whose values depend on the program);
- how a value reaches the program: `argv` (its part of the command line) and `env` (its
  environment variables); a program names the keyed axes it takes (`Program.axes`), and the
  plan refuses a value on a target whose program does not take it.

Order is meaning: the plan nests its loops in this order (outermost first), and `describe` lists
its parts in it. `AXES` is the built-in list; the functions read the active registry's axes
(programs/registry.py), so a test's registry with a stand-in axis reaches every consumer.

Imports nothing of the package: every layer may use it (tests/test_layers.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any


def _same(value: Any) -> Any:
    return value


def _blank(value: Any) -> Any:
    return "" if value is None else value


@dataclass(frozen=True)
class Axis:
    """One sweep axis of a run: a parameter, its default and where it shows."""

    name: str  # the key in RunDef.params and in the run's stored definition
    default: Any = None
    # False (a new axis): a run at the default has the run id it had before this axis (left
    # out of the id and, unless `legacy`, of the stored definition); True: the default is hashed
    hashed_default: bool = False
    legacy: bool = False  # a RunDef field before axes were data: always in the stored definition
    load: Callable[[Any], Any] = _same  # a stored (JSON) value as the run's (shape: a tuple)
    # its part of the run's one line ('' or None: none), given the value and the run
    words: Callable[[Any, Any], str | None] | None = None
    column: str | None = None  # its dataset column (a vocabulary column key); None: none
    cell: Callable[[Any], Any] = _same  # the value as that column's cell
    compare: str | None = None  # its field in compare's match key; None: not part of it
    wildcard: bool = True  # compare: unrecorded ('') on one side matches any value
    key: str | None = None  # the experiments-file key whose list of values the plan sweeps
    # the value on the program's command line / in its environment; None: it does not reach
    # the program that way (the built-in axes' argv is the contract's fixed part, base.argv)
    argv: Callable[[Any], list[str]] | None = None
    env: Callable[[Any], dict[str, str]] | None = None


def flag(option: str, default: Any = None) -> Callable[[Any], list[str]]:
    """`OPTION value` on the command line when the value is not the default: an axis's argv."""
    return lambda value: [] if value == default else [option, str(value)]


def variable(name: str, default: Any = None) -> Callable[[Any], dict[str, str]]:
    """`NAME=value` in the environment when the value is not the default: an axis's env."""
    return lambda value: {} if value == default else {name: str(value)}


def _named(name: str) -> Callable[[Any, Any], str | None]:
    """`name value` when the value is set: a new axis's words by default."""
    return lambda value, _run: None if value is None else f"{name} {value}"


def _cache_words(value: Any, _run: Any) -> str | None:
    return None if value == "none" else f"{value} cache"


def _cache_cell(value: Any) -> str:
    return "" if value == "none" else str(value)


AXES: tuple[Axis, ...] = (
    # the axes of the first stores: their defaults are hashed (hashed_default=True)
    # the matrices' shape: the head of the run's one line (RunDef.describe), not a part
    Axis("shape", default=(1024, 1024), hashed_default=True, legacy=True, load=tuple,
         words=lambda _v, _r: None, column="shape", cell=lambda s: f"{s[0]}x{s[1]}",
         compare="shape"),
    Axis("threads", hashed_default=True, legacy=True,
         words=lambda v, _r: None if v is None else f"threads {v}",
         column="threads_requested", compare="threads_key"),
    # how the program runs the matmul ('compile', 'compile:max-autotune', 'cudagraph'; None:
    # its own way, torch's eager): added later, so unset it leaves the run id alone. Before
    # `cache`, whose sweep depends on it (only a compiled mode has an on-disk cache of torch's)
    Axis("exec", words=lambda v, _r: v or None, column="exec_mode", cell=_blank,
         compare="exec_mode", wildcard=False, key="exec", argv=flag("--exec")),
    # the cache state the process should find; the plan's series sets it with cache_action
    Axis("cache", default="none", hashed_default=True, legacy=True, words=_cache_words,
         column="cache", cell=_cache_cell, compare="cache"),
    Axis("warmup", hashed_default=True, legacy=True,
         words=lambda v, _r: f"warm-up {v}" if v else None, column="warmup", cell=_blank,
         compare="warmup"),
    Axis("process", default=1, hashed_default=True, legacy=True,
         words=lambda v, r: f"process {v}/{r.processes}" if r.processes > 1 else None,
         column="process", compare="process"),
    # added later, each left out of the run id at its default
    # which repeat of a cold series (experiment key `repeat`)
    Axis("repeat", default=1, legacy=True, words=lambda v, _r: f"repeat {v}" if v > 1 else None),
    # the f32 matmul arithmetic asked for ('tf32'); None: the program's default (torch: fp32).
    # Its dataset column is what the run printed or is inferred to have done (data/precision)
    Axis("precision", legacy=True, words=lambda v, _r: v or None, compare="precision"),
    # the A/B variant of the experiment this run belongs to (`variants:`): compare takes one
    # variant as a side (RESULTS#NAME), so it is no part of the match key
    Axis("variant", legacy=True, words=_named("variant"), column="variant", cell=_blank),
    # the profiler this run is started under ('ncu'): a profile run of the same definition
    Axis("profile", legacy=True, words=lambda v, _r: f"profile run ({v})" if v else None),
)


_active: tuple[Axis, ...] = AXES  # the active registry's axes (programs/registry.use)


def activate(found: tuple[Axis, ...]) -> None:
    """Make `found` the axes every function here reads: the active registry's (only
    programs/registry.py calls it, as a registry becomes active or stops being)."""
    global _active
    _active = found


def axes() -> tuple[Axis, ...]:
    return _active


def names() -> tuple[str, ...]:
    return tuple(a.name for a in _active)


def get(name: str) -> Axis:
    return next(a for a in _active if a.name == name)


def defaults() -> dict[str, Any]:
    """Every axis at its default, in the registry's order."""
    return {a.name: a.default for a in _active}


def describe(params: Mapping[str, Any], run: Any) -> list[str]:
    """The run's one-line parts of its axes, in the registry's order."""
    parts = []
    for axis in _active:
        value = params[axis.name]
        if axis.words is not None:
            part = axis.words(value, run)
        else:  # a new axis without words of its own: 'name value' away from its default
            part = None if value == axis.default else f"{axis.name} {value}"
        if part:
            parts.append(part)
    return parts


def stored(params: Mapping[str, Any]) -> dict[str, Any]:
    """The axes of a run's stored definition: a new axis only away from its default."""
    return {a.name: params[a.name] for a in _active if a.legacy or params[a.name] != a.default}


def unhashed(params: Mapping[str, Any]) -> list[str]:
    """The axes left out of the run id: at the default, of an axis added after the first ids."""
    return [a.name for a in _active if not a.hashed_default and params[a.name] == a.default]


def cells(params: Mapping[str, Any]) -> dict[str, Any]:
    """The run's dataset columns of its axes."""
    return {a.column: a.cell(params[a.name]) for a in _active if a.column}


def compare_keys(wildcard: bool | None = None) -> list[str]:
    """Compare's match-key fields of the axes (only the wildcard ones, or only the others)."""
    return [a.compare for a in _active
            if a.compare and (wildcard is None or a.wildcard == wildcard)]


def program_argv(params: Mapping[str, Any], accepted: Iterable[str]) -> list[str]:
    """The command-line parts of the axes a program takes, in the registry's order."""
    taken = set(accepted)
    return [part for a in _active if a.argv is not None and a.name in taken
            for part in a.argv(params[a.name])]


def program_env(params: Mapping[str, Any], accepted: Iterable[str]) -> dict[str, str]:
    """The environment variables of the axes a program takes."""
    taken = set(accepted)
    return {k: v for a in _active if a.env is not None and a.name in taken
            for k, v in a.env(params[a.name]).items()}


def from_file(axis: Axis, target: Any, exp: Any) -> Iterable[Any]:
    """A plain axis's values: its key's list on the target (when it says one), else on the
    experiment, else its default alone."""
    for holder in (target, exp):
        values = getattr(holder, axis.key, None) if axis.key else None
        if values is not None:
            return tuple(values) or (axis.default,)
    return (axis.default,)
