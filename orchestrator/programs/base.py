"""The interface of a benchmark program: what the orchestrator must know about a framework.

A `Program` says which devices it runs on and what capabilities each needs (and which it
probes), how a run becomes argv, environment and working folder (thread settings included),
its build, its caches (a part of its own, `caches`: programs/caches.py; where, what may move
them, what a cold run removes and how a run's store looks prove cold or warm, its driver-cache
policy),
which header and method line forms only it prints (docs/LINES.md; a header's own facts in
`Header.facts`), which labels imply it and how the report names its builds (a part of its own,
`naming`: programs/naming.py), its rows of the
machine facts and the report's Source lines, and what facts about it a sweep records; a
program made of parts names its `BuildSystem` (programs/build.py).
Everything else (the line grammar shared by all programs, the run's record, the store) is the
same for every framework. Adding a framework is one folder with a Program subclass (found by
programs/registry.py's discovery), plus its program.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from orchestrator import axes
from orchestrator.programs import probe
from orchestrator.programs.build import BuildSystem
from orchestrator.programs.caches import Caches
from orchestrator.programs.measure import Variable
from orchestrator.programs.naming import Naming
from orchestrator.records import Header, RunDef


@dataclass(frozen=True)
class Paths:
    """Where a run's program lives."""

    project: Path
    python: str  # the interpreter for Python programs
    binaries: dict[str, Path]  # build name -> binary, for programs that are built


@dataclass(frozen=True)
class FactRow:
    """One machine-fact row of `compare` (`torch CUDA`): read from a side's printed headers,
    else from the sweep's recorded facts of this program (`host[name]`)."""

    name: str
    read: Callable[[Sequence[Header], dict[str, Any]], str | None]
    always: bool = False  # shown as 'not recorded' when absent (else left out: older sweeps)
    in_line: bool = True  # also in the side-by-side report's one-line machine summary
    # also a `Source` line of the report's header, read from the runs' printed headers
    in_source: bool = False


# a sweep's host facts' key: the registered programs whose own facts the sweep did not ask (its
# plan ran none of their targets; run/machine.py); their fact rows read NOT_PROBED, never a value
UNPROBED = "facts_not_probed"
NOT_PROBED = "not probed"


def probed(name: str, host: dict[str, Any]) -> bool:
    """Whether the sweep whose host facts these are asked program `name`'s own facts (older
    sweeps asked every registered program's)."""
    return name not in (host.get(UNPROBED) or [])


def join(values: Any) -> str | None:
    """Distinct values, sorted and ', '-joined (compare's facts); None when there are none."""
    found = sorted({str(v) for v in values if v is not None and str(v) not in ("", "nan")})
    return ", ".join(found) if found else None


class Program(ABC):
    """One framework's benchmark program, as the orchestrator sees it."""

    name: ClassVar[str]  # the experiments file's `program` and the dataset's `framework`
    # its place among the programs (the registry's order: the report's and compare's order of
    # frameworks, the first with a 'warm' mode for warm-up lines); ties go by name
    place: ClassVar[int] = 100
    title: ClassVar[str]  # how report tables name it: 'PyTorch'
    aliases: ClassVar[tuple[str, ...]] = ()  # other names a log's section header may use
    devices: ClassVar[tuple[str, ...]]
    # capabilities (config.Capability) a device needs beyond the target's own `requires`
    device_needs: ClassVar[dict[str, tuple[str, ...]]] = {}
    # devices where a call returns before its work is done: beside the accelerators, the CPU for
    # a program that dispatches asynchronously there too (JAX), so no sync != with sync is right
    async_cpu: ClassVar[bool] = False
    # its caches: where, what moves them, how a run's store proves cold or warm
    # (programs/caches.py; the default: no on-disk cache)
    caches: ClassVar[Caches] = Caches()
    # environment variables whose values the orchestrator reads for this program, each with
    # its parser (ValueError: what was expected): the experiments file's `env` is checked
    # with them, so a bad value is one line naming the variable, never a crash mid-sweep
    env_values: ClassVar[dict[str, Callable[[str], object]]] = {}
    # environment variables that change what its runs measure (its libraries', documented):
    # the dataset's `measure_env` column and the report's warnings (data/measure_env.py)
    measure_env: ClassVar[tuple[Variable, ...]] = ()
    # how its programs are built (a target then names one of the file's `builds`); None: not
    build_system: ClassVar[BuildSystem | None] = None
    modes: ClassVar[tuple[str, ...]] = ("mm", "accuracy")
    thread_vars: ClassVar[tuple[str, ...]] = ()  # environment variables set to the count
    thread_flag: ClassVar[bool] = False  # '--threads N' on the command line too
    # printed METHOD -> dataset method, for the methods only this program prints
    methods: ClassVar[dict[str, str]] = {}
    # printed label -> device, for labels only this program prints
    labels: ClassVar[dict[str, str]] = {}
    label_prefixes: ClassVar[dict[str, str]] = {}  # label prefix -> device ('flex' -> cpu)
    # the device a cross-build accuracy reference runs on ('torch cpu'); None: not one
    reference_device: ClassVar[str | None] = None
    # device -> the f32 matmul arithmetics a run may ask for (`precision`), first the default;
    # a device not listed takes no `precision` key
    precisions: ClassVar[dict[str, tuple[str, ...]]] = {}
    # device -> the execution modes a run may ask for (`exec`), first the default ('eager': the
    # program's own way, left out of the run's identity); a program with none takes no `exec`
    exec_modes: ClassVar[dict[str, tuple[str, ...]]] = {}
    # the keyed sweep axes (orchestrator/axes.py, an experiments-file key) this program takes:
    # their values reach its argv and environment (Axis.argv, Axis.env); the plan refuses a
    # value of any other on its targets. The built-in axes (shape, threads, ...) every program
    # takes, through the contract's fixed argv
    accepts: ClassVar[tuple[str, ...]] = ()
    # why a program with no `precisions` takes none (the experiments file's error says it)
    no_precision: ClassVar[str] = "this program cannot choose its arithmetic"
    # capabilities (config.Capability) only this program's probe reports ('torch', 'jax')
    provides: ClassVar[tuple[str, ...]] = ()
    # how the report names its builds and draws them (programs/naming.py)
    naming: ClassVar[Naming] = Naming()

    @abstractmethod
    def command(self, run: RunDef, paths: Paths) -> list[str]:
        """The executable part of argv: interpreter and script, or the build's binary."""

    def cwd(self, run: RunDef, project: Path) -> Path:
        """The working folder a run starts in."""
        return project

    def thread_env(self, threads: int) -> dict[str, str]:
        return dict.fromkeys(self.thread_vars, str(threads))

    def argv(self, run: RunDef, paths: Paths, out_dir: Path | None) -> list[str]:
        """The command line every program of the contract takes (docs/LINES.md)."""
        argv = [*self.command(run, paths), "--device", run.device, "--mode", run.mode,
                "--shape", run.shape_text, "--reps", str(run.reps)]
        if self.thread_flag and run.threads is not None:
            argv += ["--threads", str(run.threads)]
        if run.warmup:
            argv += ["--warmup", run.warmup, "--timed-runs", str(run.timed_runs)]
        if run.samples:
            argv.append("--samples")
        if out_dir is not None:
            argv += ["--out", str(out_dir)]
        # both programs: a block of its own after everything else; never under a profiler
        if run.energy_s and not run.profile:
            argv += ["--energy", f"{run.energy_s:g}"]
        argv += axes.program_argv(run.params, self.accepts)  # the axes it takes ('--exec')
        return argv + self.precision_argv(run)

    def axis_env(self, run: RunDef) -> dict[str, str]:
        """The environment variables of the axes it takes, at this run's values."""
        return axes.program_env(run.params, self.accepts)

    def precision_argv(self, run: RunDef) -> list[str]:
        """`--precision P` for a program that takes it (the default where the run asks none)."""
        choices = self.precisions.get(run.device)
        return ["--precision", run.precision or choices[0]] if choices else []

    def exec_error(self, device: str, mode: str) -> str | None:
        """Why a target cannot run this mode on this device; None when it can."""
        choices = self.exec_modes.get(device, ())
        if mode in choices:
            return None
        if not self.exec_modes:
            return f"a {self.name} target takes no 'exec': it runs one way"
        where = [d for d, m in self.exec_modes.items() if mode in m]
        return (f"{self.name} on {device} runs {', '.join(choices) or 'eager only'}"
                + (f" ('{mode}' needs device {' or '.join(where)})" if where else ""))

    def precision_error(self, device: str, precision: str) -> str | None:
        """Why a target cannot ask this arithmetic on this device; None when it can."""
        if not self.precisions:
            return f"a {self.name} target takes no 'precision': {self.no_precision}"
        choices = self.precisions.get(device, ())
        if precision in choices:
            return None
        where = [d for d, p in self.precisions.items() if precision in p]
        return (f"{self.name} on {device} computes only {' or '.join(choices) or 'its default'}"
                + (f" ('{precision}' needs device {' or '.join(where)})" if where else ""))

    def method_of(self, text: str) -> str | None:
        """The dataset method of a printed METHOD only this program prints, else None."""
        return self.methods.get(text)

    def parse_header(self, line: str, line_no: int) -> Header | None:
        """This program's header line as a Header; None when the line is not one."""
        return None

    def capabilities(self, python: str) -> dict[str, str | None]:
        """Capabilities only this program can probe: None if present, else why not."""
        return {}

    def facts(self, project: Path, python: str) -> Any:
        """What a sweep records about this program once (its version, its BLAS)."""
        return None

    def fact_rows(self) -> list[FactRow]:
        """Its rows of compare's machine facts: by default its version, from its own header
        (kind = name), else its recorded facts (`{'version': ...}` or the version itself)."""
        return [FactRow(self.name, self.header_version)]

    def header_version(self, headers: Sequence[Header], host: dict[str, Any]) -> str | None:
        printed = join(h.version for h in headers if h.kind == self.name)
        fact = host.get(self.name)
        return printed or (fact.get("version") if isinstance(fact, dict) else fact)

    def source_facts(self, host: dict[str, Any]) -> list[tuple[str, Any]]:
        """The report's `Source` lines for this program ('JAX: 0.4.30.')."""
        fact = host.get(self.name)
        return [(self.title, fact.get("version"))] if isinstance(fact, dict) else []

    def device_of(self, label: str) -> str | None:
        """The device a label only this program prints runs on, else None."""
        if label in self.labels:
            return self.labels[label]
        return next((d for p, d in self.label_prefixes.items() if label.startswith(p)), None)


def stdout_of(argv: list[str]) -> str | None:
    """A probe command's stdout, stripped; None when it cannot start, fails or hangs (120 s)."""
    out = probe.stdout_of(argv, timeout=120)  # its whole process group bounded
    return out.strip() if out is not None else None


def python_facts(python: str, script: str) -> dict[str, Any]:
    """The JSON object a facts script prints as its last line under `python`; {} if none."""
    out = stdout_of([python, "-c", script])
    try:
        return dict(json.loads(out.splitlines()[-1])) if out else {}
    except ValueError:
        return {}
