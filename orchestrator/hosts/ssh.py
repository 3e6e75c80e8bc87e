"""OpenSSH transport: commands on a host, and files to and from it.

Everything goes through the user's own `ssh` (and `rsync -e ssh`), so `~/.ssh/config` with its
ProxyJump, ControlMaster and agents works as it does in a terminal; `BatchMode=yes` makes a
key that is refused fail at once instead of asking for a password nobody is there to type.
Pushing uses rsync when both ends have it (only changed files move), else a tar stream over
ssh. Each ssh runs in a session of its own: a Ctrl-C in the terminal reaches the orchestrator
alone, which then uses ssh to stop the remote sweep. A fetched file is written beside its
target and renamed over it, so a connection lost mid-copy leaves the last good copy in place.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from orchestrator.hosts.faults import HostError, explain
from orchestrator.hosts.model import Host

CONNECT_TIMEOUT_S = 10


@dataclass
class Transport:
    name: str
    host: Host

    def ssh_argv(self) -> list[str]:
        return ["ssh", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
                *self.host.ssh_options, self.host.ssh]

    def run(self, argv: list[str], *, check: bool = True, timeout: float = 600,
            stdin: bytes | None = None, what: str = "") -> subprocess.CompletedProcess[bytes]:
        """`argv` on the host (quoted: ssh hands the host's shell one string). A failure is a
        HostError of one line naming the host and why, when `check`."""
        remote = shlex.join(argv)
        try:
            done = subprocess.run([*self.ssh_argv(), remote], input=stdin, capture_output=True,
                                  timeout=timeout, check=False, start_new_session=True)
        except subprocess.TimeoutExpired:
            raise HostError(self.name, f"no answer in {timeout:.0f} s ({what or argv[0]})"
                            ) from None
        if check and done.returncode != 0:
            raise HostError(self.name, explain(done.returncode, done.stderr, what or argv[0]))
        return done

    def shell(self, script: str, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
        """A POSIX sh script on the host (a fixed text of ours, its values quoted by callers)."""
        return self.run(["sh", "-c", script], **kwargs)  # type: ignore[arg-type]

    def has(self, tool: str) -> bool:
        return self.shell(f"command -v {shlex.quote(tool)} >/dev/null", check=False
                          ).returncode == 0

    def push(self, root: Path, files: list[str], remote_dir: str) -> str:
        """Copy `files` (relative to `root`) into `remote_dir`; 'rsync' or 'tar', as used."""
        self.shell(f"mkdir -p {shlex.quote(remote_dir)}", what="mkdir of the work folder")
        if self.host.push == "auto" and shutil.which("rsync") and self.has("rsync"):
            self._rsync_push(root, files, remote_dir)
            return "rsync"
        self._tar_push(root, files, remote_dir)
        return "tar"

    def _rsh(self) -> str:
        return shlex.join(self.ssh_argv()[:-1])

    def _rsync_push(self, root: Path, files: list[str], remote_dir: str) -> None:
        listed = "".join(f + "\n" for f in files).encode()
        done = subprocess.run(["rsync", "-a", "--files-from=-", "-e", self._rsh(), "./",
                               f"{self.host.ssh}:{remote_dir}/"], cwd=root, input=listed,
                              capture_output=True, check=False, start_new_session=True)
        if done.returncode != 0:
            raise HostError(self.name, explain(done.returncode, done.stderr, "rsync push"))

    def _tar_push(self, root: Path, files: list[str], remote_dir: str) -> None:
        with tempfile.TemporaryFile() as archive:
            with tarfile.open(fileobj=archive, mode="w:gz") as tar:
                for name in files:
                    tar.add(root / name, arcname=name, recursive=False)
            archive.seek(0)
            self.shell(f"cd {shlex.quote(remote_dir)} && tar xzf -", stdin=archive.read(),
                       what="tar push")

    def fetch(self, remote_path: str, local: Path) -> None:
        """Copy one remote file to `local`, atomically (a temporary file renamed over it)."""
        local.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".fetch-", dir=local.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                done = subprocess.run([*self.ssh_argv(), shlex.join(["cat", remote_path])],
                                      stdout=out, stderr=subprocess.PIPE, check=False,
                                      start_new_session=True)
                out.flush()
                os.fsync(out.fileno())
            if done.returncode != 0:
                raise HostError(self.name, explain(done.returncode, done.stderr,
                                                   f"fetch of {remote_path}"))
            os.replace(tmp, local)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
