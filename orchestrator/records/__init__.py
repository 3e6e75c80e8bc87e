"""The records every layer passes around: runs, builds, figures, samples, headers.

One home for the types the store writes, the dataset reads and the report shows, so no module
imports another layer's logic for its types: `runs` (statuses, roles and cache states as
StrEnums, stored as the same strings as before; a run's sweep parameters and `RunDef`),
`outcome` (a process's `Outcome`, the `RunRecord` of a run, `classify`: the one place that
decides whether a run failed and why; `BuildResult`), `parsed` (what the parser reads: `Figure`
and friends, frozen; `mutable_twin` serves the parser's fast path). Everything is imported from
here (`from orchestrator.records import RunDef`).

Imports nothing of the package but the sweep axes (tests/test_layers.py).
"""

from orchestrator.records.outcome import (
    PANIC,
    PANIC_TAIL,
    STDERR_TAIL,
    WHAT,
    BuildResult,
    Outcome,
    RunRecord,
    classify,
    stderr_reason,
)
from orchestrator.records.parsed import (
    Context,
    Figure,
    Header,
    ParseResult,
    Samples,
    mutable_twin,
)
from orchestrator.records.runs import CacheAction, CacheState, Params, Role, RunDef, Status

__all__ = ["PANIC", "PANIC_TAIL", "STDERR_TAIL", "WHAT", "BuildResult", "CacheAction",
           "CacheState", "Context", "Figure", "Header", "Outcome", "Params", "ParseResult",
           "Role", "RunDef", "RunRecord", "Samples", "Status", "classify", "mutable_twin",
           "stderr_reason"]
