"""The partial report `run` writes while builds go on, and the sweep's report replacing it.

Its writer (report/writer.py: pandas, matplotlib, every section) is imported at the first
report it writes, not when `run` starts: a sweep without builds going on writes none, and that
import was about a second of every `run`'s start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from orchestrator.data import outputs
from orchestrator.errors import OrchestratorError


class PartialReport:
    """What `run` calls while builds go on: the report of the runs done so far, marked partial
    (its report.md, page and every CSV say so); a report that cannot be written is said
    (`say(line, True)`: a warning) and the sweep goes on. `finish` replaces it with the
    sweep's report when the sweep ends: a partial report never outlives its sweep."""

    def __init__(self, results: Path, out: Path, say: Callable[[str, bool], None]) -> None:
        self.results, self.out, self.say = results, out, say
        self.written = False

    def __call__(self, sweep_id: str, building: list[str]) -> None:
        note = (f"partial: {len(building)} build{'s' * (len(building) != 1)} still building "
                f"({', '.join(building)}); their runs are not in this report yet, which the "
                "sweep's final report replaces when the sweep ends")
        done = self._write(sweep_id, note)
        if done is not None:
            self.written = True
            self.say(f"wrote a partial report ({len(done)} files) to {self.out}: {note}", False)

    def finish(self, sweep_id: str) -> None:
        """The sweep ended: where a partial report was written, the whole sweep's replaces
        it (every file of it: the manifest removes the partial's tables the final one lacks)."""
        if not self.written:
            return
        done = self._write(sweep_id, None)
        if done is not None:
            self.written = False
            self.say(f"wrote the sweep's report ({len(done)} files) to {self.out}, replacing "
                     "the partial one", False)

    def _write(self, sweep_id: str, note: str | None) -> list[Path] | None:
        from orchestrator.data import dataset
        from orchestrator.report import writer

        try:
            data = dataset.load(self.results, sweep_id)
            return writer.write(data, self.out, inputs=outputs.Inputs.of([self.results]),
                                partial=note)
        except (OrchestratorError, OSError) as exc:
            what = "partial report" if note else "the sweep's report (the partial one stays)"
            self.say(f"{what} not written: {exc}", True)
            return None


def partial_writer(results: Path, out: Path, say: Callable[[str, bool], None]) -> PartialReport:
    """The partial report `run` writes while builds go on (PartialReport)."""
    return PartialReport(results, out, say)
