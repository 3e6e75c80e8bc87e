"""Slurm's words: sbatch's options for a host, and a job's state read from `scontrol show job
-o` (no accounting database needed) and `squeue`."""

from __future__ import annotations

import re

from orchestrator.hosts.model import Slurm

# states in which a job is still queued or running (squeue's %T)
ACTIVE = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED",
          "RESIZING", "SIGNALING", "STAGE_OUT"}
_ENDED = {
    "COMPLETED": None,
    "CANCELLED": "the Slurm job {job} was cancelled",
    "TIMEOUT": "the Slurm job {job} ran out of its --time{limit}",
    "FAILED": None,  # the sweep's own exit code says more
    "NODE_FAIL": "the Slurm job {job} lost its node (NODE_FAIL)",
    "PREEMPTED": "the Slurm job {job} was preempted",
    "OUT_OF_MEMORY": "the Slurm job {job} ran out of memory",
    "BOOT_FAIL": "the Slurm job {job} could not start its node (BOOT_FAIL)",
    "DEADLINE": "the Slurm job {job} passed its deadline",
}
_FIELD = re.compile(r"(\w+)=(\S*)")


def measure_options(slurm: Slurm) -> list[str]:
    """The measuring job: the node to itself, and Slurm's task sampling off (it would wake a
    thread on the node every 30 s, inside the timed runs)."""
    return ["--exclusive", "--acctg-freq=task=0", *_common(slurm, slurm.time, measure=True)]


def build_options(slurm: Slurm) -> list[str]:
    """The build job: not exclusive (a build needs no quiet node), same partition."""
    return _common(slurm, slurm.build_time, measure=False)


def _common(slurm: Slurm, time: str | None, measure: bool) -> list[str]:
    argv = []
    if slurm.partition:
        argv.append(f"--partition={slurm.partition}")
    if slurm.gpus and measure:  # cargo builds CUDA kernels without a GPU
        argv.append(f"--gpus={slurm.gpus}")
    if slurm.node and measure:  # the build's target CPU is the partition's
        argv.append(f"--nodelist={slurm.node}")
    if time:
        argv.append(f"--time={time}")
    return [*argv, *slurm.options]


def parse_job(text: str) -> dict[str, str]:
    """`scontrol show job -o ID`'s one line as fields ({} for an unknown job)."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return dict(_FIELD.findall(line)) if "JobId=" in line else {}


def job_state(fields: dict[str, str]) -> str | None:
    """JobState without its reason suffix ('CANCELLED by 0' -> 'CANCELLED')."""
    state = fields.get("JobState")
    return state.split()[0] if state else None


def ended_why(job: str, fields: dict[str, str]) -> str | None:
    """One line when the job ended by Slurm's doing (cancelled, timed out, ...), else None."""
    state = job_state(fields)
    words = _ENDED.get(state or "")
    if not words:
        return None
    limit = fields.get("TimeLimit")
    return words.format(job=job, limit=f" ({limit})" if limit else "")
