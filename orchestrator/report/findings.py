"""The report's findings, typed: one enum of kinds, each with its words.

hyperfine's `Warnings` enum is the model: what a check found is a `Kind` (its words are the
bold lead of the line), and the line is `Kind.says(detail)`. A `Finding` is a `str` that
carries its kind, so every exporter (Markdown, CSV, the side-by-side report) and every golden
reads exactly the text it always did, while code can ask a warning what it is
(`finding.kind`) instead of matching its words.
"""

from __future__ import annotations

from enum import Enum


class Finding(str):
    """One finding's line, as text, with its kind."""

    kind: Kind

    def __new__(cls, kind: Kind, text: str) -> Finding:
        made = super().__new__(cls, text)
        made.kind = kind
        return made

    def __reduce__(self) -> tuple[type[Finding], tuple[Kind, str]]:  # pickled with its kind
        return (Finding, (self.kind, str(self)))


class Kind(Enum):
    """What a check can find; the value is its words."""

    IMPOSSIBLE_TIME = "impossible time"
    MEDIAN_BELOW_MIN = "median below min"
    UNKNOWN_METHOD = "method not in the vocabulary"
    CALL_OVERHEAD = "call overhead"
    PROFILE_NO_TIME = "profile read no time"
    PROFILE_WINDOW = "profile window too short"
    WIDE_SPREAD = "wide spread"
    UNDER_LOAD = "under load"
    FIRST_CALL = "first call"
    SWALLOWED_SETUP = "first timed run swallowed setup"
    CPU_SYNC_MISMATCH = "CPU sync mismatch"
    THREADS = "threads"
    THREADS_NO_EFFECT = "threads without effect"
    INPUTS_DIFFER = "inputs differ"
    NOT_A_NUMBER = "not a number"
    INACCURATE = "inaccurate"
    DIFFERENT_ARITHMETIC = "different arithmetic"
    ARITHMETIC_DISPUTED = "arithmetic disputed"
    NO_MATMUL_ENERGY = "no per-matmul energy"
    ENERGY_NOT_ALIGNED = "energy not aligned, idle not subtracted"
    SHORT_ENERGY_BLOCK = "short energy block"
    BELOW_APP_CLOCK = "GPU below its application clock during the run"
    BLOCK_BELOW_CLOCK = "timed block below full clock"
    ENVIRONMENT = "environment changes the measurement"
    QUEUED_PROOF_FAILED = "queued proof failed"
    ABOVE_PEAK = "above its peak"
    ABOVE_FP32 = "faster than FP32 can be"
    GPU_CLOCK = "GPU not at full clock when the run started"
    GPU_THROTTLED = "GPU throttled during the run"
    GPU_SHARED = "another process on the GPU"
    CPU_GOVERNOR = "CPU governor"
    EXPECTED_FAILURE_RAN = "expected to fail, but ran"

    @property
    def words(self) -> str:
        return str(self.value)

    def says(self, detail: str, *, named: str = "", where: str = "", sep: str = ": ") -> Finding:
        """`**words**: detail`; `named` goes inside the bold (a governor's name), `where` after
        it (' in methods'), `sep` before the detail."""
        return Finding(self, f"**{self.words}{named}**{where}{sep}{detail}")
