"""A host placed through Slurm (a real single-node cluster behind the test sshd): the sweep
measures in an exclusive job with Slurm's task sampling off; a job cancelled while it runs is
one line, and the runs it finished are fetched and kept; a job is stopped only when it carries
our name."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.hosts import ours
from orchestrator.hosts.model import HostsFile
from orchestrator.hosts.ssh import Transport

from .conftest import SlurmCluster, SshServer, hosts_yaml, runs_in, tiny

pytestmark = pytest.mark.torch
PLACED = {"place": "slurm", "slurm": {"partition": "debug", "time": "10"}}


def test_a_slurm_host_runs_its_sweep_in_an_exclusive_job(tmp_path: Path, sshd: SshServer,
                                                        slurm: SlurmCluster,
                                                        capfd: pytest.CaptureFixture[str]) -> None:
    hosts = hosts_yaml(tmp_path / "hosts.yaml", sshd, {"cluster": PLACED})
    results = tmp_path / "results"
    code = main(["run", str(tiny(tmp_path / "tiny.yaml")), "--hosts", str(hosts), "--results",
                 str(results), "--poll", "0.3"])
    err = capfd.readouterr().err
    assert code == 0, err
    job = re.search(r"sweep started \(Slurm job (\d+)\)", err)
    assert job, err
    shown = slurm.run("scontrol", "show", "job", "-o", job.group(1)).stdout
    assert "JobState=COMPLETED" in shown and "OverSubscribe=NO" in shown  # --exclusive
    assert "Partition=debug" in shown and "TimeLimit=00:10:00" in shown
    assert "host cluster: sweep complete; store fetched" in err
    assert runs_in(results / "hosts" / "cluster" / "results.sqlite") == 1


def test_a_cancelled_job_is_one_line_and_its_finished_runs_are_kept(
        tmp_path: Path, sshd: SshServer, slurm: SlurmCluster,
        capfd: pytest.CaptureFixture[str]) -> None:
    hosts = hosts_yaml(tmp_path / "hosts.yaml", sshd, {"cluster": PLACED})
    results = tmp_path / "results"
    argv = ["run", str(tiny(tmp_path / "long.yaml", processes=40)), "--hosts", str(hosts),
            "--results", str(results), "--poll", "0.3"]
    assert main([*argv, "--detach"]) == 0
    job = json.loads((results / "hosts" / "cluster" / "attach.json").read_text())["job"]
    remote = tmp_path / "remote-cluster" / "results" / "results.sqlite"
    deadline = time.monotonic() + 120
    while runs_in(remote) < 1 and time.monotonic() < deadline:
        time.sleep(0.3)
    assert runs_in(remote) >= 1
    assert slurm.run("scancel", job).returncode == 0  # an admin, or the user elsewhere
    capfd.readouterr()
    assert main(argv) == 1
    err = capfd.readouterr().err
    assert f"host cluster: the Slurm job {job} was cancelled; store fetched" in err
    assert runs_in(results / "hosts" / "cluster" / "results.sqlite") >= 1
    assert runs_in(results / "results.sqlite") >= 1  # merged: nothing fetched is lost


def _transport(sshd: SshServer) -> Transport:
    hosts = HostsFile.model_validate({"hosts": {"cluster": {
        "ssh": "testhost", "ssh_options": sshd.options(), "workdir": "/nowhere"}}})
    return Transport("cluster", hosts.hosts["cluster"])


def test_a_job_not_named_ours_is_never_cancelled(sshd: SshServer, slurm: SlurmCluster) -> None:
    # attach.json naming another job of the user's
    job = slurm.run("sbatch", "--parsable", "-o", "/dev/null", "--wrap", "sleep 300").stdout.strip()
    try:
        t = _transport(sshd)
        planted = ours.Started(None, job, "", "0" * 32)
        assert not ours.running(t, "/nowhere", planted)
        ours.stop(t, "/nowhere", planted)
        # and scancel itself refuses a job of another name (the second guard, for a race)
        t.run(["scancel", f"--name={ours.job_name('0' * 32)}", job], check=False)
        time.sleep(1)
        state = slurm.run("squeue", "-h", "-j", job, "-o", "%T").stdout.strip()
        assert state in ("PENDING", "RUNNING"), state
    finally:
        slurm.run("scancel", job)


def test_our_job_is_stopped_by_its_name_and_keeps_its_finished_runs(
        tmp_path: Path, sshd: SshServer, slurm: SlurmCluster) -> None:
    hosts = hosts_yaml(tmp_path / "hosts.yaml", sshd, {"cluster": PLACED})
    results = tmp_path / "results"
    assert main(["run", str(tiny(tmp_path / "long.yaml", processes=40)), "--hosts", str(hosts),
                 "--results", str(results), "--detach"]) == 0
    record = json.loads((results / "hosts" / "cluster" / "attach.json").read_text())
    shown = slurm.run("scontrol", "show", "job", "-o", record["job"]).stdout
    assert f"JobName={ours.job_name(record['token'])}" in shown
    remote = tmp_path / "remote-cluster" / "results" / "results.sqlite"
    deadline = time.monotonic() + 120
    while runs_in(remote) < 1 and time.monotonic() < deadline:
        time.sleep(0.3)
    mine = ours.Started(None, record["job"], "", record["token"])
    t = _transport(sshd)
    assert ours.running(t, record["workdir"], mine)
    ours.stop(t, record["workdir"], mine)
    deadline = time.monotonic() + 120
    while ours.running(t, record["workdir"], mine) and time.monotonic() < deadline:
        time.sleep(0.5)
    rc = tmp_path / "remote-cluster" / ".hosts" / f"rc.{mine.token}"
    assert rc.read_text().strip() == "130"
