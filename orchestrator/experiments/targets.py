"""The experiments file's targets: what one experiment runs (a registered program, or one of
its builds, on one device: its threads, profile runs, arithmetic and stopping target), the
builds a target names (each checked by the build system owning its crate: programs/build.py),
and the literals both are checked against (capabilities, thread counts, profilers,
arithmetics: each read from the program registry at import).
`config` holds the file around them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from orchestrator import programs, vocabulary
from orchestrator.experiments import limits as lim
from orchestrator.experiments.limits import Env, Seconds, StrictBool, StrictInt

# what the host has (detect.py), then what each program's probe reports (Program.provides:
# 'torch', 'jax'), then the tools: the enum is the registry's at import, in this order
_HOST_CAPABILITIES = ("cuda", "mps", "metal", "vulkan", "macos", "linux", "x86_64", "arm64",
                      "apple-silicon")
_TOOL_CAPABILITIES = (
    "ncu",  # Nsight Compute on PATH: what a profile run (`profile: [ncu]`) needs
    "avx512f",  # the CPU has AVX-512: gemm's x86-v4 kernels differ from the default AVX2 ones
)
Capability = Literal[(*_HOST_CAPABILITIES,  # type: ignore[valid-type]
                      *(c for p in programs.active().programs for c in p.provides),
                      *_TOOL_CAPABILITIES)]
Threads = lim.ThreadCount | Literal["auto"]
# a profile run of each measured CUDA mm run, under Nsight Compute: 'ncu' with L2 as the timed
# runs had it (--cache-control none), 'ncu_flushed' with caches flushed before every kernel
Profiler = Literal[tuple(vocabulary.profile_profilers())]  # type: ignore[valid-type]
# every arithmetic a program may be asked for (Program.precisions), first seen first
Precision = Literal[tuple(dict.fromkeys(  # type: ignore[valid-type]
    q for p in programs.active().programs for qs in p.precisions.values() for q in qs))]
# every execution mode a program may be asked for (Program.exec_modes), first seen first
ExecMode = Literal[tuple(dict.fromkeys(  # type: ignore[valid-type]
    e for p in programs.active().programs for es in p.exec_modes.values() for e in es))
    or ("eager",)]


class Strict(BaseModel):
    """Every model of the file: an unknown key is an error, a model read is never changed."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Build(Strict):
    """One cargo build: a crate of bench_rust/ and its crate features."""

    # a unit of a program's build system (cargo's crates): checked by it, listed by the schema
    crate: str = Field(json_schema_extra=lambda schema: _enum(schema, programs.units(),
                                                              "Crate"))
    features: tuple[str, ...] = ()
    requires: tuple[Capability, ...] = Field((), description="skip where the host lacks these")
    expect_failure: StrictBool = Field(
        False, description="a build known to fail here (the chapter's offline accelerate)"
    )
    env: Env = Field(default_factory=dict, description="cargo's extra environment")
    note: str = ""

    @field_validator("crate")
    @classmethod
    def _built_by_someone(cls, value: str) -> str:
        if value not in programs.units():
            raise ValueError(f"expected {_one_of(programs.units())} (got {value!r})")
        return value

    @model_validator(mode="after")
    def _known_features(self) -> Build:
        """Its build system's own check (cargo: a typo in a feature must not reach cargo)."""
        problem = programs.build_system_of(self.crate).problem(self.crate, self.features)
        if problem:
            raise ValueError(problem)
        return self


def thread_sweep(value: tuple[Threads, ...] | None) -> tuple[Threads, ...] | None:
    """Counts ≥ 1 (and within the limit); an explicit empty sweep would silently run the
    program's default instead."""
    if value is not None and not value:
        raise ValueError("expected at least one thread count (an empty sweep runs nothing; "
                         "leave 'threads' out for the program's default)")
    for t in value or ():
        if isinstance(t, int) and t < 1:
            raise ValueError(f"thread counts must be ≥ 1 or 'auto', got {t}")
        if isinstance(t, int) and t > lim.MAX_THREADS:
            raise ValueError(f"thread counts must be at most {lim.MAX_THREADS} (the limit), "
                             f"got {t}")
    return value


def _one_of(values: tuple[str, ...]) -> str:
    """"'a', 'b' or 'c'", as pydantic words a Literal."""
    quoted = [repr(v) for v in values]
    return ", ".join(quoted[:-1]) + " or " + quoted[-1] if len(quoted) > 1 else quoted[0]


def _enum(schema: dict[str, Any], values: tuple[str, ...], title: str | None = None) -> None:
    """The JSON Schema lists the registry's values (first, as a Literal's enum would be)."""
    rest = dict(schema)
    schema.clear()
    schema.update(enum=list(values), **({"title": title} if title else {}), **rest)


def _program_enum(schema: dict[str, Any]) -> None:
    _enum(schema, programs.names())


Ratio = Seconds  # a strict, finite float (the same checks as a duration)


class StoppingTarget(Strict):
    """Stop at a target width instead of a count (run/stopping.py): a pilot of processes, then
    more rounds until each steady-state figure's 95% interval is within ±target of its
    median with at least min_processes, or until max_processes or budget_s run out, or the
    interval stops shrinking (a noise floor)."""

    target: Ratio = Field(gt=0, lt=1, description="relative half-width of each steady "
                            "figure's 95% interval to reach: 0.02 is ±2%")
    min_processes: StrictInt = Field(3, ge=2, le=lim.MAX_PROCESSES,
                                     description="never stop with fewer processes")
    max_processes: StrictInt = Field(20, ge=2, le=lim.MAX_PROCESSES,
                                     description="the process budget")
    budget_s: Seconds = Field(300, gt=0, le=lim.MAX_TIMEOUT_S * 100, description="the time "
                              "budget of the experiment's runs (their wall time, resumes "
                              "included)")
    pilot: StrictInt | None = Field(None, ge=1, le=lim.MAX_PROCESSES, description="processes "
                                    "before the first look; default min_processes (below it, "
                                    "only the time budget can stop a series at that look)")
    decide: bool = Field(False, description="with `variants:`: instead of the target, add "
                         "rounds until every steady figure's B/A (each variant against the "
                         "first) is decided (slower, faster or same), judged at a level that "
                         "holds under a look after every round (run/stopping.py), or the "
                         "budget ends")
    min_effect: Ratio = Field(0.05, gt=0, lt=1, description="with decide: the smallest "
                              "change that counts (compare's --min-effect)")
    spending: Literal["obrien-fleming", "pocock", "bonferroni"] = Field(
        "obrien-fleming", description="with decide: how 5% is spent over the looks after "
        "every round (stats/sequential.py): O'Brien-Fleming-type or Pocock-type alpha "
        "spending over rounds / max_processes, or Bonferroni (5%/looks each)")

    @model_validator(mode="after")
    def _counts_in_order(self) -> StoppingTarget:
        if self.min_processes > self.max_processes:
            raise ValueError(f"min_processes ({self.min_processes}) is above max_processes "
                             f"({self.max_processes})")
        if self.pilot is not None and self.pilot > self.max_processes:
            raise ValueError(f"pilot ({self.pilot}) is above max_processes "
                             f"({self.max_processes})")
        return self

    @property
    def first_look(self) -> int:
        """The process count at the first look: the pilot (default min_processes). A pilot
        below min_processes looks early for the time budget only: `target met` still needs
        min_processes (run/stopping.reason)."""
        return self.pilot if self.pilot is not None else self.min_processes


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
    exec: tuple[ExecMode, ...] | None = Field(
        None, description="how the matmul runs, one run each (programs with modes): "
        "'eager' (the default), 'compile' (the compiler, Inductor), 'compile:max-autotune' "
        "(and the compiler's other modes), 'cudagraph' (one captured matmul replayed; cuda)")
    precision_target: StoppingTarget | None = Field(
        None, description="this target's series stop at a stopping target (overrides the "
        "experiment's; its budget_s is this target's runs' time); the experiment's "
        "`processes` is then the other targets' count")

    _v_threads = field_validator("threads")(thread_sweep)

    @field_validator("precision")
    @classmethod
    def _precision_here(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Checked here, not after: the error then names `...targets[i].precision`."""
        name, device = info.data.get("program"), info.data.get("device")
        if (value is None or name not in programs.active().by_name
                or device not in programs.get(name).devices):
            return value  # program or device is wrong: their own errors say it
        problem = programs.get(name).precision_error(device, value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("exec")
    @classmethod
    def _exec_here(cls, value: tuple[str, ...] | None,
                   info: ValidationInfo) -> tuple[str, ...] | None:
        """Checked here, not after: the error then names `...targets[i].exec`."""
        name, device = info.data.get("program"), info.data.get("device")
        if value is not None and not value:
            raise ValueError("expected at least one mode (leave 'exec' out for eager)")
        if (value is None or name not in programs.active().by_name
                or device not in programs.get(name).devices):
            return value
        for mode in value:
            if (problem := programs.get(name).exec_error(device, mode)) is not None:
                raise ValueError(problem)
        return value

    @field_validator("program")
    @classmethod
    def _registered(cls, value: str) -> str:
        if value not in programs.active().by_name:
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
        if program.build_system is not None and not self.build:
            raise ValueError(f"a {self.program} target needs 'build' (a name under 'builds')")
        if program.build_system is None and self.build:
            raise ValueError(f"a {self.program} target takes no 'build'")
        return self
