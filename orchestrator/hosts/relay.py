"""rsync's remote shell on a host whose shell prints a banner: ssh, its stdout passed on from
just after this session's mark, so the banner never reaches rsync's protocol.

rsync speaks its protocol over the ssh channel from the first byte: a login message that a
host's ~/.bashrc (or a ForceCommand) prints before the command runs is read as the protocol's
version ("protocol version mismatch -- is your shell clean?"). The remote command is made to
print a mark first (rsync's `--rsync-path` is `printf MARK; rsync`), and rsync's `-e` is this
relay: `python -m orchestrator.hosts.relay MARK ssh OPTIONS... HOST COMMAND...`. It runs ssh
with rsync's stdin as its own, drops what ssh prints before the mark (at most BANNER_MAX bytes:
more, no mark, or none within MARK_TIMEOUT_S, is a failure, exit 12 as rsync's own protocol
errors), then copies the rest to rsync unchanged until ssh closes it, and exits with ssh's
code. rsync's own `--timeout` bounds the stream after the mark.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time

BANNER_MAX = 1 << 20  # as hosts/ssh.py: more than this before the mark is no banner
PROTOCOL_ERROR = 12  # rsync's "error in rsync protocol data stream"
MARK_TIMEOUT_S = 120.0  # a shell silent this long before the mark is hung, not slow


def relay(mark: bytes, argv: list[str], mark_timeout_s: float = MARK_TIMEOUT_S) -> int:
    """Run `argv` (ssh ...), pass its stdout on after `mark`; its exit code."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    fd, head = proc.stdout.fileno(), b""
    deadline = time.monotonic() + mark_timeout_s
    while True:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 1 << 16) if ready else b""
        if not chunk or len(head) > BANNER_MAX:  # closed, silent past the deadline, flooding
            return _fail(proc, "the shell there printed no output mark")
        head += chunk
        _before, found, after = head.partition(mark)
        if found:
            break
    try:
        _write_all(after)
        while chunk := os.read(fd, 1 << 16):
            _write_all(chunk)
    except BrokenPipeError:  # rsync is gone (its own --timeout, an error): so is its stream
        return _fail(proc, "rsync closed the stream")
    return proc.wait()


def _fail(proc: subprocess.Popen[bytes], why: str) -> int:
    proc.kill()
    proc.wait()
    sys.stderr.write(f"orchestrator relay: {why}\n")
    return PROTOCOL_ERROR


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]


if __name__ == "__main__":
    sys.exit(relay(sys.argv[1].encode() + b"\n", sys.argv[2:]))
