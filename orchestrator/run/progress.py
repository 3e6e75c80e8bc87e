"""Live progress of a sweep: which run, how many left, the latest figures.

Drawn with rich, but never from a background thread: the bar is refreshed by hand between runs,
so nothing in the orchestrator competes with a measured program for the CPU.
"""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress
from rich.text import Text

from orchestrator import vocabulary
from orchestrator.data.durations import format_duration
from orchestrator.records import BuildResult, ParseResult, Role, RunDef, RunRecord, Status

STYLE = {Status.OK: "green", Status.FAILED: "red", Status.SKIPPED: "yellow"}


def headline(parsed: ParseResult | None) -> str:
    """The one or two figures a person watching wants to see."""
    if parsed is None:
        return ""
    shown, methods = [], vocabulary.method_keys(headline=True)
    for fig in parsed.figures:
        if fig.method in methods and fig.stat in ("min", "value"):
            shown.append(f"{fig.method_text} {format_duration(fig.value)}")
    return "; ".join(shown[:3])


class Progress:
    def __init__(self, show: bool) -> None:
        # soft wrap: a long result line stays one line in a log file or a narrow terminal
        self.console = Console(stderr=True, quiet=not show, highlight=False, soft_wrap=True)
        self.show = show  # when off, nothing is drawn (rich would still render, then drop it)
        self.bar: RichProgress | None = None
        self.task = None

    def start(self, total: int) -> None:
        if not self.show or not self.console.is_terminal:
            return  # rich would build the bar's table at every refresh, and never draw it
        self.bar = RichProgress(TextColumn("{task.description}"), BarColumn(),
                                MofNCompleteColumn(), TimeElapsedColumn(),
                                console=self.console, auto_refresh=False, transient=True)
        self.bar.start()
        self.task = self.bar.add_task("runs", total=total)
        self.bar.refresh()

    def note(self, text: str) -> None:
        self.console.print(Text(text, style="dim"))

    def build_done(self, result: BuildResult) -> None:
        if result.status == Status.OK:
            self.console.print(Text.assemble(("  build ", "green"),
                                             f"{result.name}: {result.outcome}"))
        else:
            first = result.error.splitlines()[0] if result.error else ""
            self.console.print(Text.assemble((f"  build {result.outcome} ", "red"),
                                             f"{result.name}: {first}"))

    def begin(self, run: RunDef) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, description=run.describe())
            self.bar.refresh()

    def run_done(self, rec: RunRecord, parsed: ParseResult | None) -> None:
        if not self.show:
            return
        style = STYLE.get(rec.status, "white")
        role = " (priming)" if rec.role == Role.PRIMING else ""
        detail = rec.reason if rec.status != Status.OK else headline(parsed)
        self.console.print(Text.assemble((f"{rec.status:7} ", style),
                                         f"{rec.run.describe()}{role}"
                                         f"{': ' + detail if detail else ''}"))
        if self.bar is not None and self.task is not None and rec.role == Role.MEASURE:
            self.bar.advance(self.task)
            self.bar.refresh()

    def close(self) -> None:
        """Take the bar down (restores the cursor); safe to call more than once."""
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def stop(self, counts: Counter[str]) -> None:
        self.close()
        parts = [f"{n} {k}" for k, n in counts.items() if n]
        self.console.print("done: " + (", ".join(parts) or "nothing to do"))
