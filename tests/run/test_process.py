"""One process: started in its own group, waited for in one kernel sleep, killed with its
group, Ctrl-C while it starts included (fake programs)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from orchestrator.run import process

from .test_runner import fake


def test_ctrl_c_while_a_program_starts_still_kills_it(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Its death is read from a pidfd taken while it ran (no pid to reuse, no sleep), and the
    handler compared with the one before the call (an earlier test's handler is not ours)."""
    started: list[subprocess.Popen[bytes]] = []
    pidfds: list[int] = []
    real_popen = subprocess.Popen

    def popen_then_ctrl_c(*args: Any, **kw: Any) -> subprocess.Popen[bytes]:
        started.append(real_popen(*args, **kw))
        if hasattr(os, "pidfd_open"):  # Linux: taken before anyone can kill or reap it
            pidfds.append(os.pidfd_open(started[-1].pid))
        os.kill(os.getpid(), signal.SIGINT)  # arrives before Popen() has returned the pid
        return started[-1]

    monkeypatch.setattr(process.subprocess, "Popen", popen_then_ctrl_c)
    program = fake(tmp_path, "time.sleep(300)")
    before = signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(KeyboardInterrupt):
            process.spawn([str(program)], {}, tmp_path, 60)
        # a returncode is waitpid's answer: killed and reaped, not a guess from /proc
        assert started and started[0].returncode == -signal.SIGKILL, "the program outlived it"
        for fd in pidfds:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            assert poller.poll(0), "the program outlived the Ctrl-C"  # readable: it exited
    finally:
        for fd in pidfds:
            os.close(fd)
    assert signal.getsignal(signal.SIGINT) is before


def test_wait_is_one_kernel_sleep_and_falls_back_to_polling(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The exit wait blocks on a pidfd (Linux) or kqueue (macOS): a timeout, an exit and a
    kernel without pidfds all give the same answers as Popen.wait(timeout)."""
    sleeper = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        assert process._wait_exit(sleeper, 0.2) is False  # still running: a timeout
        sleeper.kill()
        assert process._wait_exit(sleeper, 60) is True
        assert sleeper.returncode is None  # not reaped: its group id is still its own
        process._kill_group(sleeper)
        assert sleeper.returncode == -signal.SIGKILL
    finally:
        sleeper.kill()
        sleeper.wait()

    def no_pidfd(pid: int) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(process.os, "pidfd_open", no_pidfd, raising=False)
    out = process.spawn(["sh", "-c", "echo done"], {"PATH": os.environ["PATH"]}, tmp_path, 60)
    assert (out.returncode, out.timed_out, out.stdout) == (0, False, b"done\n")
    out = process.spawn(["sleep", "300"], {"PATH": os.environ["PATH"]}, tmp_path, 0.2)
    assert out.timed_out and out.returncode == -signal.SIGKILL


@pytest.mark.parametrize(("env", "words"), [
    ({"A": "x\0y"}, "embedded null byte"),
    ({"A=B": "1"}, "illegal environment variable name"),
    ({"A": "\ud800"}, "surrogates not allowed"),
])
def test_an_environment_the_os_refuses_is_a_run_that_did_not_start(
        tmp_path: Path, env: dict[str, str], words: str) -> None:
    out = process.spawn(["true"], {"PATH": os.environ["PATH"], **env}, tmp_path, 60, tmp_path)
    assert out.returncode is None
    assert out.stderr.decode().startswith("cannot start true: ") and words in out.stderr.decode()
    assert not (tmp_path / "running.json").exists()


def test_output_over_the_cap_is_killed_while_it_runs(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "OUTPUT_CAP", 1_000_000)
    flood = fake(tmp_path, "while True: sys.stdout.write('y' * 9999 + '\\n')")
    out = process.spawn([str(flood)], {}, tmp_path, 120)
    assert (out.over_cap, out.timed_out, out.returncode) == (True, False, -signal.SIGKILL)
    assert len(out.stdout) == 1_000_000 and out.truncated_at == 1_000_000


def test_the_ledger_names_the_running_program_and_is_crossed_out(tmp_path: Path) -> None:
    program = fake(tmp_path, "print(open(sys.argv[1]).read())")
    out = process.spawn([str(program), str(tmp_path / "running.json")], {}, tmp_path, 60,
                        tmp_path)
    import json

    entry = json.loads(out.stdout)
    assert entry["cmdline"][-2:] == [str(program), str(tmp_path / "running.json")]
    assert entry["token"] and entry["create_time"] > 0
    assert not (tmp_path / "running.json").exists()


def test_the_output_is_looked_at_rarely_while_quiet_and_stops_past_the_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "OUTPUT_CAP", 1000)
    with open(tmp_path / "out", "w+b") as out, open(tmp_path / "err", "w+b") as err:
        watch = process._Output(out, err)
        assert watch.next_look() == process.LOOK_S[1]  # nothing printed: the longest sleep
        err.write(b"x" * 3000)
        err.flush()
        look = watch.next_look()
        assert look is not None and process.LOOK_S[0] <= look < process.LOOK_S[1]
        err.write(b"x" * 2000)  # past RUNNING_LIMIT (4) x OUTPUT_CAP
        err.flush()
        assert watch.next_look() is None
