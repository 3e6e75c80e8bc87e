"""A real OpenSSH server for the user running the tests (its own keys, config and port, in a
temporary folder) and a real single-node Slurm (munged, slurmctld, slurmd on localhost).

Where sshd or Slurm is missing (or, for Slurm, the tests are not root) the tests are skipped,
naming what to install (`./setup.sh --tests` installs them as root); with CI=true they FAIL: CI
must run them for real (tests/parts.py).
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import PROJECT
from tests.parts import missing, require_part


def need(tool: str) -> str:
    return require_part(tool)


def runs_in(store: Path) -> int:
    """How many runs a store being written holds, read without locking it (0 before it exists
    or while its tables are being created)."""
    if not store.exists():
        return 0
    with sqlite3.connect(f"{store.as_uri()}?mode=ro", uri=True) as db:
        try:
            return int(db.execute("SELECT count(*) FROM runs").fetchone()[0])
        except sqlite3.OperationalError:  # the tables are being created
            return 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, log: Path, seconds: float = 20) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    pytest.fail(f"sshd did not listen on {port}: {log.read_text()[-2000:]}", pytrace=False)


@dataclass(frozen=True)
class SshServer:
    dir: Path
    port: int
    config: Path  # an ssh_config with the alias 'testhost'
    key: Path

    def options(self) -> list[str]:
        return ["-F", str(self.config)]

    def ssh(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["ssh", *self.options(), "testhost", *argv], capture_output=True,
                              text=True, timeout=60, check=False)


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    daemon = need("sshd")
    need("ssh")
    need("rsync")  # the hosts' pushes
    d = tmp_path_factory.mktemp("sshd")
    _keygen(d / "hostkey")
    _keygen(d / "id")
    _keygen(d / "other")  # a key sshd does not know: 'refused'
    shutil.copy(d / "id.pub", d / "authorized_keys")
    port, banner_port = free_port(), free_port()
    # a second port whose sessions print a login banner before every command, as a shell's
    # ~/.bashrc may on a cluster (ForceCommand runs in the user's shell, then the command).
    # SHLVL=1: bash reads ~/.bashrc for an ssh command only as the first shell (Debian's
    # SSH_SOURCE_BASHRC), so the tester's own (pyenv's init on the project's box: ~0.2 s a
    # command, hundreds of them) is not run; the hosts are given an absolute `python`, and the
    # banner port stands for a shell that prints
    (d / "sshd_config").write_text(
        f"Port {port}\nPort {banner_port}\nListenAddress 127.0.0.1\nHostKey {d}/hostkey\n"
        f"AuthorizedKeysFile {d}/authorized_keys\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
        f"PidFile {d}/sshd.pid\nPermitRootLogin prohibit-password\n"
        f"SetEnv SLURM_CONF={d.parent}/slurm/slurm.conf SHLVL=1\n"
        f"Match LocalPort {banner_port}\n"
        "  ForceCommand echo 'Welcome to the test cluster'; eval \"$SSH_ORIGINAL_COMMAND\"\n")
    (d / "ssh_config").write_text(
        f"Host testhost\n  HostName 127.0.0.1\n  Port {port}\n  User {getpass.getuser()}\n"
        f"  IdentityFile {d}/id\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n"
        f"  UserKnownHostsFile {d}/known_hosts\n  LogLevel ERROR\n"
        f"Host refused\n  HostName 127.0.0.1\n  Port {port}\n  User {getpass.getuser()}\n"
        f"  IdentityFile {d}/other\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n"
        f"  UserKnownHostsFile {d}/known_hosts\n  LogLevel ERROR\n"
        f"Host bannerhost\n  HostName 127.0.0.1\n  Port {banner_port}\n  User {getpass.getuser()}\n"
        f"  IdentityFile {d}/id\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n"
        f"  UserKnownHostsFile {d}/known_hosts\n  LogLevel ERROR\n"
        f"Host unreachable\n  HostName 127.0.0.1\n  Port {free_port()}\n  LogLevel ERROR\n")
    Path("/run/sshd").mkdir(exist_ok=True)
    subprocess.run([daemon, "-f", str(d / "sshd_config"), "-E", str(d / "sshd.log")], check=True)
    _wait_port(port, d / "sshd.log")
    _wait_port(banner_port, d / "sshd.log")
    try:
        yield SshServer(d, port, d / "ssh_config", d / "id")
    finally:
        pid = (d / "sshd.pid").read_text().strip()
        os.kill(int(pid), 15)


def hosts_yaml(path: Path, server: SshServer, hosts: dict[str, dict[str, object]]) -> Path:
    """A hosts file of `hosts` (name -> extra keys), each on the test sshd by default."""
    lines = ["version: 1", "hosts:"]
    for name, extra in hosts.items():
        fields = {"ssh": "testhost", "ssh_options": server.options(), "python": sys.executable,
                  "workdir": str(path.parent / f"remote-{name}"), "setup": "none", **extra}
        lines.append(f"  {name}:")
        lines += [f"    {k}: {_yaml(v)}" for k, v in fields.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _yaml(value: object) -> str:
    import json

    return json.dumps(value)  # JSON is YAML


TINY = """version: 1
defaults: {shape: [8, 8], reps: 2, timeout_s: 120}
experiments:
  tiny:
    title: a tiny CPU matmul
    mode: mm
    threads: [1]
    processes: PROCESSES
    targets:
      - {program: torch, device: cpu}
"""


def tiny(path: Path, processes: int = 1) -> Path:
    path.write_text(TINY.replace("PROCESSES", str(processes)), encoding="utf-8")
    return path


__all__ = ["PROJECT", "SshServer", "free_port", "hosts_yaml", "need", "tiny"]


@dataclass(frozen=True)
class SlurmCluster:
    dir: Path
    env: dict[str, str]  # SLURM_CONF for Slurm's commands run here

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), capture_output=True, text=True, env=self.env,
                              timeout=60, check=False)


def _munge() -> int | None:
    """munged running (the one already there, or one started here: its pid)."""
    need("munged")
    if subprocess.run("munge -n | unmunge", shell=True, capture_output=True).returncode == 0:
        return None
    key = Path("/etc/munge/munge.key")
    if not key.exists():
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_bytes(os.urandom(1024))
    for d in (key.parent, Path("/run/munge"), Path("/var/log/munge"), Path("/var/lib/munge")):
        d.mkdir(parents=True, exist_ok=True)
        shutil.chown(d, "munge", "munge")
    shutil.chown(key, "munge", "munge")
    key.chmod(0o400)
    subprocess.run(["su", "-s", "/bin/sh", "munge", "-c", "/usr/sbin/munged"], check=True)
    return int(Path("/run/munge/munged.pid").read_text().strip())


SLURM_CONF = """ClusterName=local
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AuthType=auth/munge
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName={host} CPUs={cpus} RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


@pytest.fixture(scope="session")
def slurm(tmp_path_factory: pytest.TempPathFactory, sshd: SshServer) -> Iterator[SlurmCluster]:
    """slurmctld + slurmd on localhost; its slurm.conf where the test sshd's SetEnv points."""
    ctld, slurmd = need("slurmctld"), need("slurmd")
    if os.geteuid() != 0:
        missing("the Slurm tests start slurmd and munged, which need root (as CI runs them)")
    need("sbatch")
    munged = _munge()
    d = tmp_path_factory.getbasetemp() / "slurm"
    for sub in ("state", "spool"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    host = socket.gethostname().split(".")[0]
    (d / "slurm.conf").write_text(SLURM_CONF.format(
        host=host, d=d, ctld_port=free_port(), d_port=free_port(), cpus=os.cpu_count()))
    env = {**os.environ, "SLURM_CONF": str(d / "slurm.conf")}
    subprocess.run([ctld], env=env, check=True)
    subprocess.run([slurmd], env=env, check=True)
    cluster = SlurmCluster(d, env)
    try:
        end = time.monotonic() + 60
        while "idle" not in cluster.run("sinfo", "-h", "-o", "%T").stdout:
            if time.monotonic() > end:
                pytest.fail(f"the Slurm node never became idle: {cluster.run('sinfo').stdout}"
                            f"{(d / 'slurmctld.log').read_text()[-1500:]}", pytrace=False)
            time.sleep(0.5)
        yield cluster
    finally:
        for pidfile in ("slurmd.pid", "slurmctld.pid"):
            if (d / pidfile).exists():
                os.kill(int((d / pidfile).read_text().strip()), 15)
        if munged is not None:
            os.kill(munged, 15)
