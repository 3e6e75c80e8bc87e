"""A real OpenSSH server for the user running the tests (its own keys, config and port, in a
temporary folder) and a real single-node Slurm (munged, slurmctld, slurmd on localhost).

Where sshd or Slurm is missing the tests FAIL, naming what to install (`.ci/run` installs
them): a test of the hosts' flow that passes without a host would prove nothing.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import PROJECT

APT = "apt-get install -y openssh-server openssh-client rsync slurm-wlm munge"


def need(tool: str, package: str) -> str:
    found = shutil.which(tool) or next((str(p) for p in (Path("/usr/sbin") / tool,
                                                          Path("/usr/bin") / tool)
                                        if p.exists()), None)
    if found is None:
        pytest.fail(f"{tool} is missing: the hosts tests need a real {package} "
                    f"(Debian: {APT}; .ci/run installs it)", pytrace=False)
    return found


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
    daemon = need("sshd", "OpenSSH server")
    need("ssh", "OpenSSH client")
    d = tmp_path_factory.mktemp("sshd")
    _keygen(d / "hostkey")
    _keygen(d / "id")
    _keygen(d / "other")  # a key sshd does not know: 'refused'
    shutil.copy(d / "id.pub", d / "authorized_keys")
    port = free_port()
    (d / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/hostkey\n"
        f"AuthorizedKeysFile {d}/authorized_keys\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
        f"PidFile {d}/sshd.pid\nPermitRootLogin prohibit-password\n"
        f"SetEnv SLURM_CONF={d.parent}/slurm/slurm.conf\n")
    (d / "ssh_config").write_text(
        f"Host testhost\n  HostName 127.0.0.1\n  Port {port}\n  User {getpass.getuser()}\n"
        f"  IdentityFile {d}/id\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n"
        f"  UserKnownHostsFile {d}/known_hosts\n  LogLevel ERROR\n"
        f"Host refused\n  HostName 127.0.0.1\n  Port {port}\n  User {getpass.getuser()}\n"
        f"  IdentityFile {d}/other\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n"
        f"  UserKnownHostsFile {d}/known_hosts\n  LogLevel ERROR\n"
        f"Host unreachable\n  HostName 127.0.0.1\n  Port {free_port()}\n  LogLevel ERROR\n")
    Path("/run/sshd").mkdir(exist_ok=True)
    subprocess.run([daemon, "-f", str(d / "sshd_config"), "-E", str(d / "sshd.log")], check=True)
    _wait_port(port, d / "sshd.log")
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
