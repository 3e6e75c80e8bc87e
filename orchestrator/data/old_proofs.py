"""The queued window's proof as bench_py printed it before it was a stdout line, read back.

Before the proof became the parsed stdout line `LABEL SHAPE matmul LABEL.Event time (queued):
start event waited in W of N runs` (docs/LINES.md), bench_py said a failed one on stderr only
(`cuda.Event time (queued): in E of N runs the GPU had reached the start event before the end
event was queued ...`), and said nothing when every run waited. A store keeps each run's
stderr, so `reparse` reads that note back as the proof line it stands for (W = N - E), for
the queued figure of the same label in the run's stdout (a run times one shape). Where no note
was printed nothing is made up: a silence of the old code is no proof.
"""

from __future__ import annotations

import re

from orchestrator.data import line_forms

# the old stderr note (bench_py/exec_gpu.py's queued_note, before the proof line)
_NOTE = re.compile(r"^(\S+)\.Event time \(queued\): in ([0-9]{1,9}) of ([0-9]{1,9}) runs the GPU "
                   r"had reached the start event before the end event was queued", re.MULTILINE)
STDERR_READ = 1 << 20  # the stderr tail read for the note: a bounded read of stored bytes


def with_old_proof(stdout: str, stderr: bytes | None) -> str:
    """`stdout` with the proof line its run's stderr note stands for, where stdout has a queued
    figure and no proof line of its own; else `stdout` as it is."""
    if not stderr or " start event waited in " in stdout:
        return stdout
    notes = {m.group(1): (int(m.group(2)), int(m.group(3)))
             for m in _NOTE.finditer(stderr[-STDERR_READ:].decode("utf-8", "replace"))}
    added = []
    for line in stdout.splitlines():
        found = line_forms.SUMMARY.match(line)
        if found is None:
            continue
        label, shape, op, method = found.group(1, 2, 3, 4)
        if method == f"{label}.Event time (queued)" and label in notes:
            early, runs = notes.pop(label)
            added.append(f"{label} {shape} {op} {method}: start event waited in "
                         f"{max(runs - early, 0)} of {runs} runs")
    return stdout if not added else stdout.rstrip("\n") + "\n" + "\n".join(added) + "\n"
