"""`python -m orchestrator history RESULTS... [--out DIR] [--fail-on slower]`, as a plain function.

Reads the sweeps (timeline), builds each figure's course and its change points (course), writes
history.md, history.csv and the plots (output) and prints the sweeps and change points. The
exit code is a CI gate's: 1 where a figure's step into the latest sweep has a verdict named by
`fail_on` (a decided slowdown: `slower`), else 0; bad input is an InputError (exit 2).
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

from orchestrator.data import outputs
from orchestrator.report.history import course, output, timeline


def gate(h: course.History, fail_on: list[str]) -> list[str]:
    """The figures whose step into the latest sweep has a verdict of `fail_on`, in words."""
    return [f"{c.figure}: {s.row.verdict} {s.row.ratio:.3g}× (#{s.before} → #{s.after})"
            for c, s in h.last_step() if s.row.verdict in fail_on and s.row.ratio is not None]


def run(results: list[str], out: Path, last: int | None, min_effect: float, correction: str,
        fail_on: list[str], console: Console, sources: list[Path] | None = None) -> int:
    h = course.build(timeline.load(results, last), min_effect, correction)
    written = output.write(h, out, outputs.Inputs.of(sources or []))
    # a table for a wide terminal; piped (CI logs) rich would squeeze it into 80 columns
    output.show(h, Console(highlight=False, width=None if sys.stdout.isatty() else 160))
    console.print(f"wrote {', '.join(str(p) for p in written)}", markup=False)
    failed = gate(h, fail_on)
    for line in failed:
        console.print(f"fail: {line}", markup=False)
    return 1 if failed else 0
