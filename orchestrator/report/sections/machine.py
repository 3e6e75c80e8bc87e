"""The report's section 8. The machine around the runs: GPU state per run, the CPU's frequency
policy.
"""

from __future__ import annotations

import pandas as pd

from orchestrator.report import state_checks
from orchestrator.report.registry import Context, Section, section


@section("machine", number="8", select=lambda ctx: ctx.fig)
def _machine(ctx: Context, fig: pd.DataFrame) -> Section:
    host = ctx.data.host
    return Section(
        "The machine around the runs",
        "What was recorded before and after every run: for GPU runs NVML's SM clock (and its "
        "max and application clock), performance state, temperature, power, clock-event "
        "reasons, the energy the GPU drew during the run and the time it was throttled, and "
        "other processes on it; the CPU's frequency policy per sweep and per run. "
        + " ".join(state_checks.cpu_state_lines(host, fig)),
        [state_checks.gpu_state_table(fig)],
        state_checks.gpu_warnings(fig) + state_checks.cpu_governor(fig, host), rows=fig)
