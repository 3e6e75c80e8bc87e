"""The experiments file: pydantic v2 models, loading and validation.

`experiments.yaml` describes every experiment of the chapter for every platform. Validation
errors name the file, the line and the YAML path (`experiments.cpu.threads[1]`) and say what was
expected; `json_schema()` exports the schema so editors can complete the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from orchestrator import programs
from orchestrator.errors import ConfigError
from orchestrator.programs.burn import CRATE_FEATURES
from orchestrator.spec.yamlsource import format_path, load_yaml

FORMAT_VERSION = 1

Capability = Literal[
    "cuda", "mps", "metal", "vulkan", "macos", "linux", "x86_64", "arm64", "apple-silicon", "torch",
    "ncu",  # Nsight Compute on PATH: what a profile run (`profile: [ncu]`) needs
]
Crate = Literal["exec-gpu", "exec-cpu", "exec-amx"]
Mode = Literal["mm", "warm", "accuracy"]
CacheState = Literal["cold", "warm", "none"]
WarmupKind = Literal["dropped", "kept"]
Threads = int | Literal["auto"]
Profiler = Literal["ncu"]  # a profile run of each measured CUDA mm run, under Nsight Compute
Precision = Literal["fp32", "tf32"]



class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _shape(value: Any) -> tuple[int, int]:
    """Accept [M, N] or 'MxN'."""
    if isinstance(value, str) and "x" in value:
        value = value.split("x")
    if isinstance(value, list | tuple) and len(value) == 2:
        try:
            m, n = (int(v) for v in value)
        except (TypeError, ValueError):
            pass
        else:
            if m > 0 and n > 0:
                return (m, n)
    raise ValueError(f"expected a shape [M, N] or 'MxN' with positive sizes, got {value!r}")


class QuietGate(Strict):
    """Wait (bounded) until the machine is quiet before each measured run."""

    max_load1: float | None = Field(None, gt=0, description="1-minute load to wait for; null: off")
    max_wait_s: float = Field(300, ge=0, description="give up waiting after this, run anyway")
    poll_s: float = Field(5, gt=0)


class Defaults(Strict):
    shape: tuple[int, int] = Field((1024, 1024), description="[M, N] or 'MxN'")
    reps: int = Field(20, ge=1, description="timed runs per method")
    timeout_s: float = Field(600, gt=0, description="a run taking longer is killed")
    samples: bool = Field(True, description="ask programs for '# samples' lines")
    quiet: QuietGate = QuietGate()
    env: dict[str, str] = Field(default_factory=dict, description="extra environment, every run")

    _v_shape = field_validator("shape", mode="before")(_shape)


class Build(Strict):
    """One cargo build: a crate of bench_rust/ and its crate features."""

    crate: Crate
    features: tuple[str, ...] = ()
    requires: tuple[Capability, ...] = Field((), description="skip where the host lacks these")
    expect_failure: bool = Field(
        False, description="a build known to fail here (the chapter's offline accelerate)"
    )
    env: dict[str, str] = Field(default_factory=dict, description="cargo's extra environment")
    note: str = ""

    @model_validator(mode="after")
    def _known_features(self) -> Build:
        known = CRATE_FEATURES[self.crate]
        for feature in self.features:
            if feature not in known:
                raise ValueError(
                    f"crate {self.crate} has no feature '{feature}' "
                    f"(known: {', '.join(known) or 'none'})"
                )
        return self


def _thread_sweep(value: tuple[Threads, ...] | None) -> tuple[Threads, ...] | None:
    """Counts ≥ 1; an explicit empty sweep would silently run the program's default instead."""
    if value is not None and not value:
        raise ValueError("expected at least one thread count (an empty sweep runs nothing; "
                         "leave 'threads' out for the program's default)")
    for t in value or ():
        if isinstance(t, int) and t < 1:
            raise ValueError(f"thread counts must be ≥ 1 or 'auto', got {t}")
    return value


def _one_of(values: tuple[str, ...]) -> str:
    """"'a', 'b' or 'c'", as pydantic words a Literal."""
    quoted = [repr(v) for v in values]
    return ", ".join(quoted[:-1]) + " or " + quoted[-1] if len(quoted) > 1 else quoted[0]


def _program_enum(schema: dict[str, Any]) -> None:
    """The JSON Schema lists the registered programs (first, as a Literal's enum would be)."""
    rest = dict(schema)
    schema.clear()
    schema.update(enum=list(programs.names()), **rest)


class Target(Strict):
    """What one experiment runs: the PyTorch program or one burn build, on one device."""

    # `program` is any registered program (orchestrator.programs), checked at validation

    program: str = Field(json_schema_extra=_program_enum)
    device: str
    build: str | None = Field(None, description="name under 'builds' (burn only)")
    threads: tuple[Threads, ...] | None = Field(None, description="overrides the experiment's")
    requires: tuple[Capability, ...] = ()
    profile: tuple[Profiler, ...] | None = Field(
        None, description="profile runs for this target (overrides the experiment's; [] none)")
    precision: Precision | None = Field(
        None, description="torch: the f32 matmul arithmetic, 'fp32' (default: TF32 off) or "
        "'tf32' (device cuda only); burn takes none (cubecl's autotune chooses)")

    _v_threads = field_validator("threads")(_thread_sweep)

    @field_validator("precision")
    @classmethod
    def _precision_here(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Checked here, not after: the error then names `...targets[i].precision`."""
        name, device = info.data.get("program"), info.data.get("device")
        if (value is None or name not in programs.REGISTRY
                or device not in programs.get(name).devices):
            return value  # program or device is wrong: their own errors say it
        problem = programs.get(name).precision_error(device, value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("program")
    @classmethod
    def _registered(cls, value: str) -> str:
        if value not in programs.REGISTRY:
            raise ValueError(f"expected {_one_of(programs.names())} (got {value!r})")
        return value

    @model_validator(mode="after")
    def _device_and_build(self) -> Target:
        program = programs.get(self.program)
        if self.device not in program.devices:
            raise ValueError(
                f"unknown {self.program} device '{self.device}' "
                f"(expected one of {', '.join(program.devices)})"
            )
        if program.needs_build and not self.build:
            raise ValueError(f"a {self.program} target needs 'build' (a name under 'builds')")
        if not program.needs_build and self.build:
            raise ValueError(f"a {self.program} target takes no 'build'")
        return self


class Experiment(Strict):
    title: str = ""
    mode: Mode
    targets: tuple[Target, ...] = Field(min_length=1)
    shapes: tuple[tuple[int, int], ...] | None = Field(None, min_length=1, description="size sweep")
    reps: int | None = Field(None, ge=1)
    threads: tuple[Threads, ...] = Field((), description="thread sweep; empty: program default")
    processes: int = Field(1, ge=1, description="processes in a row (cold only before the first)")
    repeat: int = Field(1, ge=1, description="cold series: how many times each is run, from "
                        "fully cold caches (the cold first call's spread)")
    cache: tuple[CacheState, ...] = Field(("none",), min_length=1, description="burn cache sweep")
    warmup: tuple[WarmupKind, ...] = Field(("dropped",), min_length=1, description="warm mode")
    timed_runs: int = Field(3, ge=1, description="warm mode: timed runs after the warm-up")
    timeout_s: float | None = Field(None, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    energy_s: float = Field(
        0, ge=0, allow_inf_nan=False, description="seconds of each program's energy block "
        "(`--energy`: matmuls back to back, joules from NVML; CUDA only); 0: none")
    profile: tuple[Profiler, ...] = Field(
        (), description="profile runs: ['ncu'] adds, after each measured mm run on a CUDA "
        "device, the same run under Nsight Compute (kernel times); default none")

    @model_validator(mode="after")
    def _mode_of_every_program(self) -> Experiment:
        """A mode some programs lack (warm: the warm-up puzzle, burn's) names who has it."""
        lacking = [t.program for t in self.targets
                   if self.mode not in programs.get(t.program).modes]
        if lacking:
            having = [p.name for p in programs.REGISTRY.values() if self.mode in p.modes]
            what = " (the warm-up puzzle)" if self.mode == "warm" else ""
            raise ValueError(f"mode '{self.mode}'{what} is a {' and '.join(having)} program "
                             f"mode; remove the {' and '.join(dict.fromkeys(lacking))} targets")
        return self

    @field_validator("shapes", mode="before")
    @classmethod
    def _shapes(cls, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, list):
            raise ValueError("expected a list of shapes")
        return [_shape(v) for v in value]

    _v_threads = field_validator("threads")(_thread_sweep)


Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")]


class ExperimentsFile(Strict):
    """The whole `experiments.yaml`."""

    version: Literal[1] = Field(description="format version of this file")
    defaults: Defaults = Defaults()
    builds: dict[Name, Build] = Field(default_factory=dict)
    experiments: dict[Name, Experiment] = Field(min_length=1)
    _source_text: str = PrivateAttr(default="")

    @property
    def source_text(self) -> str:
        """The file's text as `load` read it (the sweep records this, not a second read)."""
        return self._source_text

    @model_validator(mode="after")
    def _builds_exist(self) -> ExperimentsFile:
        for name, exp in self.experiments.items():
            for i, target in enumerate(exp.targets):
                if target.build is not None and target.build not in self.builds:
                    known = ", ".join(self.builds) or "none defined"
                    raise _Located(("experiments", name, "targets", i, "build"),
                                   f"unknown build '{target.build}' (known: {known})")
        return self


class _Located(ValueError):
    """A cross-field error that knows its YAML path."""

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.path = path


def load(path: Path) -> ExperimentsFile:
    """Read and validate an experiments file; ConfigError (exit 2) on any problem."""
    located = load_yaml(path)
    if not isinstance(located.data, dict):
        raise ConfigError(located.source, 1, "",
                          "expected a mapping with 'version' and 'experiments'")
    try:
        config = ExperimentsFile.model_validate(located.data)
    except ValidationError as exc:
        errors = _without_follow_ons(exc.errors())
        loc = _data_path(errors[0]["loc"])
        # A union (e.g. int | 'auto') fails once per member: say all they accept, once.
        same = [e for e in errors if _data_path(e["loc"]) == loc]
        message = _message(same)
        ctx_error = errors[0].get("ctx", {}).get("error")
        if isinstance(ctx_error, _Located):
            loc, message = ctx_error.path, str(ctx_error)
        rest = len(errors) - len(same)
        more = f" (and {rest} more problem{'s' * (rest > 1)})" if rest else ""
        raise ConfigError(located.source, located.line_of(loc), format_path(loc),
                          message + more) from None
    config._source_text = located.text
    return config


def _without_follow_ons(errors: list[Any]) -> list[Any]:
    """Drop 'too short' on a list whose items were invalid: their own errors say it all."""
    def follows(e: Any) -> bool:
        n = len(e["loc"])
        return e["type"] == "too_short" and any(
            o is not e and len(o["loc"]) > n and o["loc"][:n] == e["loc"] for o in errors)
    return [e for e in errors if not follows(e)] or errors


def _data_path(loc: tuple[Any, ...]) -> tuple[str | int, ...]:
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


def json_schema() -> str:
    """The experiments file's JSON Schema, for editors."""
    return json.dumps(ExperimentsFile.model_json_schema(), indent=2)
