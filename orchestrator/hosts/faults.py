"""What went wrong on a host, in one line: ssh's, the shell's and Slurm's own words read into
the cause a user acts on (unreachable, key refused, no Python, full disk, job cancelled)."""

from __future__ import annotations

from orchestrator.errors import OrchestratorError


class HostError(OrchestratorError):
    """One host failed; the others go on. The message names the host."""

    exit_code = 1

    def __init__(self, host: str, why: str) -> None:
        super().__init__(f"host {host}: {why}")
        self.host = host


# (words in stderr, what they mean): the first that matches wins
_CAUSES = (
    ("Permission denied (publickey", "the key was refused (ssh: Permission denied); check "
                                     "the key, ssh-agent or ~/.ssh/config for this host"),
    ("Host key verification failed", "its host key is not known or changed (ssh: Host key "
                                     "verification failed)"),
    ("Could not resolve hostname", "unreachable: the name does not resolve"),
    ("Connection refused", "unreachable: connection refused (no sshd on that port?)"),
    ("Connection timed out", "unreachable: connection timed out"),
    ("No route to host", "unreachable: no route to host"),
    ("Network is unreachable", "unreachable: network is unreachable"),
    ("Connection closed", "the connection was closed"),
    ("No space left on device", "its disk is full (No space left on device)"),
    ("Disk quota exceeded", "its disk quota is exceeded"),
)


def explain(returncode: int, stderr: bytes, what: str) -> str:
    """One line for a failed ssh command (`what` says which step)."""
    text = stderr.decode("utf-8", "replace")
    for words, meaning in _CAUSES:
        if words in text:
            return f"{meaning} ({what})"
    if returncode == 255:
        return f"ssh failed: {_last_line(text) or 'no message'} ({what})"
    if returncode == 127:
        return f"command not found there: {_last_line(text)} ({what})"
    return f"{what} failed with exit code {returncode}: {_last_line(text) or 'no message'}"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""
