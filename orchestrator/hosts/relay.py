"""rsync's remote shell on a host whose shell prints a banner: ssh, its stdout passed on from
just after this session's mark, so the banner never reaches rsync's protocol.

rsync speaks its protocol over the ssh channel from the first byte: a login message that a
host's ~/.bashrc (or a ForceCommand) prints before the command runs is read as the protocol's
version ("protocol version mismatch -- is your shell clean?"). The remote command is made to
print a mark first (rsync's `--rsync-path` is `printf MARK; rsync`), and rsync's `-e` is this
relay: `python -m orchestrator.hosts.relay MARK ssh OPTIONS... HOST COMMAND...`. It runs ssh
with rsync's stdin as its own, drops what ssh prints before the mark (at most BANNER_MAX bytes:
more, or no mark, is a failure, exit 12 as rsync's own protocol errors), then copies the rest
to rsync unchanged until ssh closes it, and exits with ssh's code.
"""

from __future__ import annotations

import os
import subprocess
import sys

BANNER_MAX = 1 << 20  # as hosts/ssh.py: more than this before the mark is no banner
PROTOCOL_ERROR = 12  # rsync's "error in rsync protocol data stream"


def relay(mark: bytes, argv: list[str]) -> int:
    """Run `argv` (ssh ...), pass its stdout on after `mark`; its exit code."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    fd, head = proc.stdout.fileno(), b""
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk or len(head) > BANNER_MAX:
            proc.kill()
            proc.wait()
            sys.stderr.write("orchestrator relay: the shell there printed no output mark\n")
            return PROTOCOL_ERROR
        head += chunk
        _before, found, after = head.partition(mark)
        if found:
            break
    _write_all(after)
    while chunk := os.read(fd, 1 << 16):
        _write_all(chunk)
    return proc.wait()


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]


if __name__ == "__main__":
    sys.exit(relay(sys.argv[1].encode() + b"\n", sys.argv[2:]))
