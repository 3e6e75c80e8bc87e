"""The experiments file: pydantic v2 models, loading and validation (its targets and builds:
`targets`).

`experiments.yaml` describes every experiment of the chapter for every platform. Validation
errors name the file, the line and the YAML path (`experiments.cpu.threads[1]`) and say what was
expected; `json_schema()` exports the schema so editors can complete the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from orchestrator import programs
from orchestrator.experiments import limits as lim
from orchestrator.experiments.limits import Env, Seconds, StrictBool, StrictInt
from orchestrator.experiments.messages import PathError, problems
from orchestrator.experiments.targets import (
    Build,
    Capability,
    Profiler,
    StoppingTarget,
    Strict,
    Target,
    Threads,
    thread_sweep,
)
from orchestrator.experiments.yamlsource import load_yaml, problems_error

__all__ = ["Build", "Capability", "Defaults", "Experiment", "ExperimentsFile", "StoppingTarget",
           "Target", "Variant", "json_schema", "load"]  # a target's models: re-exported

FORMAT_VERSION = 1

Mode = Literal["mm", "warm", "accuracy"]
CacheState = Literal["cold", "warm", "none", "mega"]
WarmupKind = Literal["dropped", "kept"]


class QuietGate(Strict):
    """Wait (bounded) until the machine is quiet before each measured run."""

    max_load1: Seconds | None = Field(None, gt=0, le=lim.MAX_LOAD,
                                      description="1-minute load to wait for; null: off")
    max_wait_s: Seconds = Field(300, ge=0, le=lim.MAX_WAIT_S,
                                description="give up waiting after this, run anyway")
    poll_s: Seconds = Field(5, ge=0.01, le=lim.MAX_WAIT_S)


class Order(Strict):
    """The order of each experiment's runs (experiments/order.py)."""

    interleave: StrictBool = Field(
        True, description="run each experiment's processes in rounds, each round shuffled "
        "(a cache series stays whole); false: file order")
    seed: StrictInt = Field(0, ge=0, le=2**63 - 1, description="the shuffle's seed: the same "
                            "seed, the same order (the store keeps the file, a resume replays)")


class Defaults(Strict):
    shape: lim.Shape = Field((1024, 1024), description=lim.SHAPE_HELP)
    reps: StrictInt = Field(20, ge=1, le=lim.MAX_REPS, description="timed runs per method")
    timeout_s: Seconds = Field(600, gt=0, le=lim.MAX_TIMEOUT_S,
                               description="a run taking longer is killed")
    samples: StrictBool = Field(True, description="ask programs for '# samples' lines")
    quiet: QuietGate = QuietGate()
    env: Env = Field(default_factory=dict, description="extra environment, every run")
    order: Order = Order()


class Variant(Strict):
    """One side of an A/B measured in one sweep (`variants:`): its extra environment, and the
    builds its targets use instead of the file's (`builds: {template: template-lto}`: another
    build under `builds:`, with other features, cargo environment or crate)."""

    env: Env = Field(default_factory=dict, description="this side's extra environment")
    builds: dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")],
                 Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")]] = Field(
        default_factory=dict, description="build name -> the build this side's targets use "
        "instead (both under `builds:`): an A/B of two builds in one sweep")
    note: str = ""


class Experiment(Strict):
    title: str = ""
    mode: Mode
    targets: tuple[Target, ...] = Field(min_length=1)
    shapes: tuple[lim.Shape, ...] | None = Field(
        None, min_length=1, description=f"size sweep, each {lim.SHAPE_HELP}")
    reps: StrictInt | None = Field(None, ge=1, le=lim.MAX_REPS)
    threads: tuple[Threads, ...] = Field(
        (), description=f"thread sweep (each 1 to {lim.MAX_THREADS} or 'auto'); empty: "
        "program default")
    processes: StrictInt = Field(1, ge=1, le=lim.MAX_PROCESSES,
                                 description="processes in a row (cold only before the first)")
    repeat: StrictInt = Field(1, ge=1, le=lim.MAX_REPEAT, description="cold series: how many "
                              "times each is run, from fully cold caches (the cold first "
                              "call's spread)")
    cache: tuple[CacheState, ...] = Field(
        ("none",), min_length=1, description="cache sweep: cold (emptied before the first "
        "process), warm (primed), mega (emptied, then filled from the cache artifacts a "
        "priming process saved: a compiler's mega-cache)")
    warmup: tuple[WarmupKind, ...] = Field(("dropped",), min_length=1, description="warm mode")
    timed_runs: StrictInt = Field(3, ge=1, le=lim.MAX_TIMED_RUNS,
                                  description="warm mode: timed runs after the warm-up")
    timeout_s: Seconds | None = Field(None, gt=0, le=lim.MAX_TIMEOUT_S)
    env: Env = Field(default_factory=dict)
    energy_s: Seconds = Field(
        0, ge=0, le=lim.MAX_ENERGY_S, description="seconds of each program's energy block "
        "(`--energy`: matmuls back to back, joules from NVML; CUDA only); 0: none")
    profile: tuple[Profiler, ...] = Field(
        (), description="profile runs: ['ncu'] adds, after each measured mm run on a CUDA "
        "device, the same run under Nsight Compute (kernel times, L2 warm: --cache-control "
        "none); 'ncu_flushed' one more with L2 flushed (--cache-control all); default none")
    variants: dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")],
                   Variant] | None = Field(
        None, description="A/B in one sweep: each target runs once per variant, the "
        "processes of all variants interleaved in the same rounds so drift hits them alike; "
        "compare reads RESULTS#NAME as one side (e.g. {a: {}, b: {env: {MKL_CBWR: "
        "COMPATIBLE}}})")
    # the stopping target: its key keeps the name files were written with (the interval's
    # width, not the arithmetic: that is a target's `precision`)
    precision_target: StoppingTarget | None = Field(
        None, description="the stopping target: stop at a target width instead of a count "
        "(`processes`): "
        "{target: 0.02, min_processes: 3, max_processes: 20, budget_s: 300, pilot: 3}")

    @field_validator("variants")
    @classmethod
    def _two_sides(cls, value: dict[str, Variant] | None) -> dict[str, Variant] | None:
        if value is not None and len(value) < 2:
            raise ValueError(f"expected at least two variants (an A and a B), got "
                             f"{len(value)}; leave 'variants' out for one")
        return value

    @model_validator(mode="after")
    def _target_or_count(self) -> Experiment:
        """A stopping target runs processes in rounds: not beside a count, not in a cold
        series (its processes run whole), only where figures are steady (mm)."""
        if self.precision_target is not None and "processes" in self.model_fields_set:
            raise ValueError("give either 'processes' or 'precision_target' (its "
                             "max_processes is the count's limit), not both")
        if self.precision_target is not None and (problem := self.no_rounds()):
            raise ValueError(problem)
        return self

    def no_rounds(self, rule: StoppingTarget | None = None) -> str | None:
        """Why this experiment's series cannot stop at a stopping target (`rule`: a target's own;
        default the experiment's), or None."""
        rule = rule or self.precision_target
        if rule is not None and rule.decide and not self.variants:
            return ("precision_target.decide judges each variant against the first: it needs "
                    "'variants' (an A and a B in one sweep)")
        if self.mode != "mm":
            return (f"precision_target needs mode 'mm' (steady-state figures), not "
                    f"'{self.mode}'")
        if "cold" in self.cache or self.repeat != 1:
            return ("precision_target adds processes round by round; a cold series "
                    "(cache: [cold], repeat) runs whole: give it 'processes'")
        if "mega" in self.cache:
            return ("precision_target adds processes round by round; a mega series (its "
                    "first process loads the artifacts its priming run saved) runs whole: "
                    "give it 'processes'")
        return None

    def rule_for(self, target: Target) -> StoppingTarget | None:
        """The stopping target a target's series stop at: its own, else the experiment's."""
        return target.precision_target or self.precision_target

    def processes_for(self, target: Target) -> int:
        """The processes a target's series is planned with: the count, or its precision
        target's limit (the sweep stops a series early; run/stopping.py)."""
        rule = self.rule_for(target)
        return rule.max_processes if rule else self.processes

    @model_validator(mode="after")
    def _mode_of_every_program(self) -> Experiment:
        """A mode some programs lack (warm: the warm-up puzzle, burn's) names who has it."""
        lacking = [t.program for t in self.targets
                   if self.mode not in programs.get(t.program).modes]
        if lacking:
            having = [p.name for p in programs.active().programs if self.mode in p.modes]
            what = " (the warm-up puzzle)" if self.mode == "warm" else ""
            raise ValueError(f"mode '{self.mode}'{what} is a {' and '.join(having)} program "
                             f"mode; remove the {' and '.join(dict.fromkeys(lacking))} targets")
        return self

    _v_threads = field_validator("threads")(thread_sweep)


Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")]


class ExperimentsFile(Strict):
    """The whole `experiments.yaml`."""

    version: Literal[1] = Field(description="format version of this file")  # not `true`
    defaults: Defaults = Defaults()
    builds: dict[Name, Build] = Field(default_factory=dict)
    experiments: dict[Name, Experiment] = Field(min_length=1)
    _source_text: str = PrivateAttr(default="")

    @property
    def source_text(self) -> str:
        """The file's text as `load` read it (the sweep records this, not a second read)."""
        return self._source_text

    @field_validator("version", mode="before")
    @classmethod
    def _version_is_a_number(cls, value: Any) -> Any:
        """Literal[1] takes `true` and `1.0` (both == 1); a version is a whole number."""
        if type(value) is not int and not isinstance(value, str):  # a str: Literal says it
            raise ValueError(f"expected 1 (got {value!r})")
        return value

    @model_validator(mode="after")
    def _builds_exist(self) -> ExperimentsFile:
        for name, exp in self.experiments.items():
            for i, target in enumerate(exp.targets):
                at = ("experiments", name, "targets", i)
                if target.build is not None and target.build not in self.builds:
                    known = ", ".join(self.builds) or "none defined"
                    raise PathError((*at, "build"),
                                    f"unknown build '{target.build}' (known: {known})")
                if target.build is not None and (problem := self._built_by(target)):
                    raise PathError((*at, "build"), problem)
                if target.precision_target is not None and (
                        problem := exp.no_rounds(target.precision_target)):
                    raise PathError((*at, "precision_target"), problem)
            for variant, side in (exp.variants or {}).items():
                self._variant_builds(name, exp, variant, side)
        return self

    def _built_by(self, target: Target) -> str | None:
        """Why the target's build is not one its program's build system builds; None: it is."""
        crate = self.builds[str(target.build)].crate
        system = programs.get(target.program).build_system
        if system is None or crate in system.units:
            return None  # a program without builds: the target's own check says it
        owner = programs.build_system_of(crate)
        return (f"build '{target.build}' is {owner.name}'s {owner.what} '{crate}', which "
                f"{target.program}'s {system.name} does not build (its {system.what}s: "
                f"{', '.join(system.units)})")

    def _variant_builds(self, name: str, exp: Experiment, variant: str, side: Variant) -> None:
        """A variant's `builds:` swaps a build its experiment's targets use for another build
        of the file, with the same crate's program: a typo must not measure A against A."""
        used = {t.build for t in exp.targets if t.build}
        for old, new in side.builds.items():
            at = ("experiments", name, "variants", variant, "builds", old)
            if old not in used:
                raise PathError(at, f"no target of experiment '{name}' uses build '{old}' "
                                f"(its builds: {', '.join(sorted(used)) or 'none'})")
            if new not in self.builds:
                raise PathError(at, f"unknown build '{new}' (known: {', '.join(self.builds)})")
            systems = {programs.build_system_of(self.builds[b].crate).name for b in (old, new)}
            if len(systems) > 1:
                raise PathError(at, f"build '{new}' is built by another build system than "
                                f"'{old}' ({' and '.join(sorted(systems))}): the same program "
                                "could not run it")
            if new == old:
                raise PathError(at, f"build '{old}' is swapped for itself: name another "
                                "build under 'builds:'")


def load(path: Path, registry: programs.Registry | None = None) -> ExperimentsFile:
    """Read and validate an experiments file against `registry`'s programs, axes and build
    systems (None: the active registry); ConfigError (exit 2) naming every problem."""
    with programs.use(registry):
        return _load(path)


def _load(path: Path) -> ExperimentsFile:
    located = load_yaml(path)
    found = located.problems
    if not isinstance(located.data, dict):
        raise problems_error(located.source, found or [
            (1, (), "expected a mapping with 'version' and 'experiments'")])
    try:
        config = ExperimentsFile.model_validate(located.data)
    except ValidationError as exc:
        known = [path for _line, path, _what in found]  # said already, by the YAML loader
        found += [(located.line_of(loc), loc, message) for loc, message in problems(exc.errors())
                  if not any(loc[:len(path)] == path for path in known)]
    if found:
        raise problems_error(located.source, found)
    config._source_text = located.text
    return config


def json_schema(registry: programs.Registry | None = None) -> str:
    """The experiments file's JSON Schema, for editors: of `registry`, by default the default
    registry (never a test's active one: the committed schema is this checkout's)."""
    with programs.use(registry or programs.default_registry()):
        return json.dumps(ExperimentsFile.model_json_schema(), indent=2)
