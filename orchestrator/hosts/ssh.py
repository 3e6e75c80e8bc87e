"""OpenSSH transport: commands on a host, and files to and from it.

Everything goes through the user's own `ssh` (and `rsync -e ssh`), so `~/.ssh/config` with its
ProxyJump, ControlMaster and agents works as it does in a terminal; `BatchMode=yes` makes a
key that is refused fail at once instead of asking for a password nobody is there to type.
Pushing uses rsync when both ends have it (only changed files move), else a tar stream over
ssh. Each ssh runs in a session of its own: a Ctrl-C in the terminal reaches the orchestrator
alone, which then uses ssh to stop the remote sweep. A fetched file is written beside its
target, checked, and renamed over it, so a connection lost mid-copy, or a file that is not
what was asked for, leaves the last good copy in place.

A shell there may print a banner (a login message from ~/.bashrc) before any command's output:
each command first prints a marker of this session, and only what follows it is the command's
output; rsync, whose protocol a banner breaks, goes through hosts/relay.py there, which hands
rsync only what follows the marker.
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from orchestrator.hosts.faults import HostError, explain
from orchestrator.hosts.model import Host

CONNECT_TIMEOUT_S = 10
BANNER_MAX = 1 << 20  # more than this before the marker: not a banner, the command failed
OUTPUT_MAX = 4 << 20  # of a command's stdout (banner included): ours print a few lines
RSYNC_IDLE_S = 120  # rsync's --timeout: a push that moves nothing this long has hung


@dataclass
class Transport:
    name: str
    host: Host

    def ssh_argv(self) -> list[str]:
        return ["ssh", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
                *self.host.ssh_options, self.host.ssh]

    mark: str = field(default_factory=lambda: f"orchestrator-output-{secrets.token_hex(8)}")
    banner: bool | None = None  # whether the shell there printed something before the mark

    def _marked(self, argv: list[str]) -> str:
        return f"printf '%s\\n' {self.mark}; {shlex.join(argv)}"

    def run(self, argv: list[str], *, check: bool = True, timeout: float = 600,
            stdin: bytes | None = None, what: str = "") -> subprocess.CompletedProcess[bytes]:
        """`argv` on the host (quoted: ssh hands the host's shell one string). A failure is a
        HostError of one line naming the host and why, when `check`. Its stdout is what the
        command printed: a banner before the mark is cut off. Both outputs go to files and are
        read bounded (OUTPUT_MAX, 64 KiB of stderr): a host that floods them costs no memory."""
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            try:
                code = subprocess.run([*self.ssh_argv(), self._marked(argv)], input=stdin,
                                      stdout=out, stderr=err, timeout=timeout, check=False,
                                      start_new_session=True).returncode
            except subprocess.TimeoutExpired:
                raise HostError(self.name, f"no answer in {timeout:.0f} s ({what or argv[0]})"
                                ) from None
            out.seek(0)
            err.seek(0)
            done = subprocess.CompletedProcess(argv, code, out.read(OUTPUT_MAX),
                                               err.read(1 << 16))
        before, found, after = done.stdout.partition(self.mark.encode() + b"\n")
        if found:
            self.banner = bool(self.banner or before.strip())
            done.stdout = after
        if check and done.returncode != 0:
            raise HostError(self.name, explain(done.returncode, done.stderr, what or argv[0]))
        return done

    def shell(self, script: str, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
        """A POSIX sh script on the host (a fixed text of ours, its values quoted by callers)."""
        return self.run(["sh", "-c", script], **kwargs)

    def has(self, tool: str) -> bool:
        return self.shell(f"command -v {shlex.quote(tool)} >/dev/null", check=False
                          ).returncode == 0

    def push(self, root: Path, files: list[str], remote_dir: str) -> str:
        """Copy `files` (relative to `root`) into `remote_dir`; 'rsync' or 'tar', as used."""
        self.shell(f"mkdir -p {shlex.quote(remote_dir)}", what="mkdir of the work folder")
        if self.host.push == "auto" and shutil.which("rsync") and self.has("rsync"):
            # (has() ran a command: `banner` is known)
            self._rsync_push(root, files, remote_dir)
            return "rsync past the shell's banner (relay)" if self.banner else "rsync"
        self._tar_push(root, files, remote_dir)
        return "tar"

    def _rsh(self) -> str:
        return shlex.join(self.ssh_argv()[:-1])

    def _rsync_push(self, root: Path, files: list[str], remote_dir: str) -> None:
        """rsync over ssh; on a shell that prints a banner, through hosts/relay.py, which
        passes rsync only what follows the mark the remote command prints first."""
        listed = "".join(f + "\n" for f in files).encode()
        through: list[str] = []
        rsh = self._rsh()
        if self.banner:
            rsh = shlex.join([sys.executable, "-m", "orchestrator.hosts.relay", self.mark,
                              *self.ssh_argv()[:-1]])
            through = [f"--rsync-path=printf '%s\\n' {self.mark}; rsync"]
        done = subprocess.run(["rsync", "-a", f"--timeout={RSYNC_IDLE_S}", "--files-from=-",
                               *through, "-e", rsh, "./",
                               f"{self.host.ssh}:{remote_dir}/"], cwd=root, input=listed,
                              capture_output=True, check=False, start_new_session=True,
                              env=_relay_env() if self.banner else None)
        if done.returncode != 0:
            raise HostError(self.name, explain(done.returncode, done.stderr, "rsync push"))

    def _tar_push(self, root: Path, files: list[str], remote_dir: str) -> None:
        with tempfile.TemporaryFile() as archive:
            with tarfile.open(fileobj=archive, mode="w:gz") as tar:
                # each folder a member of its own, before its files: GNU tar then replaces a
                # link found there with a folder (as rsync does), where a file alone would be
                # written through the link into the folder it points to (the user's)
                for name in _folders_of(files):
                    tar.add(root / name, arcname=name, recursive=False)
                for name in files:
                    tar.add(root / name, arcname=name, recursive=False)
            archive.seek(0)
            self.shell(f"cd {shlex.quote(remote_dir)} && tar xzf -", stdin=archive.read(),
                       what="tar push")

    def fetch(self, remote_path: str, local: Path,
              check: Callable[[Path], str | None] = lambda _p: None) -> None:
        """Copy one remote file to `local`: into a new file beside it, the banner before the
        mark cut off, `check`ed (its problem, if any, is a HostError), then renamed over it."""
        fd, tmp = tempfile.mkstemp(prefix=".fetch-", dir=local.parent)
        try:
            with os.fdopen(fd, "wb") as out, tempfile.TemporaryFile() as err:
                proc = subprocess.Popen([*self.ssh_argv(), self._marked(["cat", remote_path])],
                                        stdout=subprocess.PIPE, stderr=err,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
                assert proc.stdout is not None
                marked = self._copy_after_mark(proc.stdout, out)
                if not marked:
                    proc.kill()  # what it still sends is not the file: stop it, not wait
                code = proc.wait()
                out.flush()
                os.fsync(out.fileno())
                err.seek(0)
                stderr = err.read(1 << 16)
            if code != 0:
                raise HostError(self.name, explain(code, stderr, f"fetch of {remote_path}"))
            problem = check(Path(tmp)) if marked else "the shell there printed no output mark"
            if problem:
                raise HostError(self.name, f"the fetched copy of {remote_path} is {problem}; "
                                           f"the last good copy ({local}) is kept")
            os.replace(tmp, local)
        finally:
            if os.path.lexists(tmp):
                os.unlink(tmp)

    def _copy_after_mark(self, src: IO[bytes], out: IO[bytes]) -> bool:
        """Stream `src` into `out` from just after the mark (a banner before it is cut off);
        False when the mark never came (within BANNER_MAX bytes)."""
        mark, head = self.mark.encode() + b"\n", b""
        while True:
            chunk = src.read(1 << 16)
            if not chunk:
                return False
            head += chunk
            before, found, after = head.partition(mark)
            if found:
                self.banner = bool(self.banner or before.strip())
                out.write(after)
                break
            if len(head) > BANNER_MAX:
                return False
        shutil.copyfileobj(src, out, 1 << 20)
        return True


def _relay_env() -> dict[str, str]:
    """This environment, with the folder holding this `orchestrator` package first on
    PYTHONPATH: the relay (run by rsync) imports it from there."""
    here = str(Path(__file__).resolve().parents[2])
    rest = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": here + (os.pathsep + rest if rest else "")}


def _folders_of(files: list[str]) -> list[str]:
    """Every folder the relative paths `files` lie in, parents first."""
    found = {str(parent) for name in files for parent in Path(name).parents if str(parent) != "."}
    return sorted(found, key=lambda f: (f.count("/"), f))
