"""Slurm's words read on output captured from the real single-node Slurm of the tests
(slurm-wlm 22.05: `scontrol show job -o` of a pending, a cancelled and a timed-out job, and of
a job Slurm no longer knows), and sbatch's options for a host."""

from __future__ import annotations

import pytest

from orchestrator.hosts import slurm
from orchestrator.hosts.faults import explain
from orchestrator.hosts.model import Slurm

from ..conftest import DATA


def _fields(name: str) -> dict[str, str]:
    return slurm.parse_job((DATA / "hosts" / f"scontrol_{name}.txt").read_text())


def test_a_cancelled_and_a_timed_out_job_say_so_in_one_line() -> None:
    assert slurm.ended_why("1", _fields("cancelled")) == "the Slurm job 1 was cancelled"
    assert slurm.ended_why("2", _fields("timeout")) == \
        "the Slurm job 2 ran out of its --time (00:01:00)"


def test_a_pending_or_unknown_job_has_no_reason_to_tell() -> None:
    assert slurm.job_state(_fields("running")) == "PENDING"
    assert slurm.ended_why("1", _fields("running")) is None
    assert _fields("unknown") == {} and slurm.ended_why("9", {}) is None


def test_the_measuring_job_is_exclusive_and_unsampled_the_build_job_is_not() -> None:
    s = Slurm(partition="gpu", gpus=1, node="n1", time="2:00:00", build_time="30",
              options=["--account=a"])
    assert slurm.measure_options(s) == ["--exclusive", "--acctg-freq=task=0", "--partition=gpu",
                                        "--gpus=1", "--nodelist=n1", "--time=2:00:00",
                                        "--account=a"]
    assert slurm.build_options(s) == ["--partition=gpu", "--time=30", "--account=a"]


@pytest.mark.parametrize(("stderr", "said"), [
    (b"ssh: connect to host 127.0.0.1 port 1: Connection refused\r\n", "unreachable: "
     "connection refused"),
    (b"root@127.0.0.1: Permission denied (publickey).\r\n", "the key was refused"),
    (b"ssh: Could not resolve hostname nowhere: Name or service not known\r\n",
     "unreachable: the name does not resolve"),
    # GNU tar's and coreutils' words for a full disk (not captured: no disk here fills)
    (b"tar: orchestrator/cli.py: Cannot write: No space left on device\n", "its disk is full"),
])
def test_ssh_and_shell_failures_read_as_their_cause(stderr: bytes, said: str) -> None:
    assert explain(255, stderr, "connect").startswith(said)
