"""Profile runs: a measured run's program started again under Nsight Compute (`ncu`).

The plan puts a profile run (role `profile`, the same definition plus `profile='ncu'`) right
after each measured mm run on CUDA of a target with `profile: [ncu]`, and one more per further
variant (`ncu_flushed`). ncu's cache state is the variant's (vocabulary.PROFILERS): `ncu` runs
with `--cache-control none` (L2 warm, as the timed runs have it: a launch finds its inputs where
the previous one left them), `ncu_flushed` with `--cache-control all` (every cache flushed before
each kernel: inputs from HBM; on the H200 +9.4% at FP32); `--clock-control none` always.
Here: its argv (ncu's options, then the program's own argv with `--profile-window`, so that ncu,
started with `--profile-from-start off`, sees exactly one block of --reps matmuls), keeping
ncu's CSV as the run's `ncu.csv` artifact, and reading it into `kernel_time` figures
(data/ncu.py) beside the program's own figures (kept, never chapter figures). A CSV that cannot
be read makes the run failed with the reason; nothing already measured is dropped.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator import vocabulary
from orchestrator.data import ncu
from orchestrator.records import ParseResult, RunDef, RunRecord, Status

ARTIFACT = ncu.ARTIFACT
# --clock-control none: the GPU's clocks as the measured run had them (ncu's default locks the
# base clock); --cache-control comes from the variant (ncu's default, all, flushes caches)
NCU_OPTIONS = ("--clock-control", "none", "--profile-from-start", "off",
               "--metrics", ncu.METRIC, "--csv")


def cache_control(profiler: str | None) -> str:
    """ncu's --cache-control of a profile run's variant ('none' for 'ncu' and older runs)."""
    entry = vocabulary.profile_profilers().get(profiler or ncu.PROFILER)
    return entry.cache_control if entry is not None else "none"


def argv(program_argv: list[str], csv_path: Path, profiler: str | None = ncu.PROFILER
         ) -> list[str]:
    """ncu around the program, which marks its window (--profile-window)."""
    return ["ncu", *NCU_OPTIONS, "--cache-control", cache_control(profiler),
            "--log-file", str(csv_path), *program_argv, "--profile-window"]


def where(run: RunDef) -> ncu.Where:
    # both programs label their CUDA lines 'cuda' (docs/LINES.md)
    return ncu.Where(run.program, run.device, run.device, run.shape_text,
                     profiler=run.profile or ncu.PROFILER)


def add_figures(record: RunRecord, parsed: ParseResult | None) -> ParseResult:
    """The program's figures plus ncu's; a CSV that cannot be read fails the run (a run that
    failed already gets ncu's own error line added to its reason)."""
    parsed = parsed if parsed is not None else ParseResult()
    try:
        parsed.figures.extend(ncu.read(record.artifacts.get(ARTIFACT), record.run.reps,
                                       where(record.run)))
    except ncu.NcuError as exc:
        if record.status == Status.OK:
            record.status, record.reason = Status.FAILED, f"ncu: {exc}"
        elif str(exc).startswith("==ERROR=="):
            record.reason += f" ({exc})"
    return parsed
