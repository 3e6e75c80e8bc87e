"""The hosts' session (orchestrator/hosts/session.py) without a host: a Ctrl-C is noted, never
raised, while the hosts' sweeps run. A KeyboardInterrupt raised outside the wait (the main
thread woke from its sleep with the signal pending, as on a loaded machine: CI saw a Ctrl-C
ignored for 120 s) used to leave the pool waiting on sweeps nobody had asked to stop."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import threading
from pathlib import Path
from typing import ClassVar

import pytest

from orchestrator.hosts import session
from orchestrator.hosts.model import HostsFile


class _Sweep:
    """A host's sweep that runs until it is asked to stop (10 s at most)."""

    asked: ClassVar[list[bool]] = []

    def __init__(self, name: str, _host: object, _root: Path, _experiments: Path,
                 _opts: session.Options, stop: threading.Event, _say: object) -> None:
        self.name, self.stop = name, stop

    def run(self) -> session.Outcome:
        asked = self.stop.wait(10)
        _Sweep.asked.append(asked)
        return session.Outcome(self.name, 130 if asked else 0, f"host {self.name}: ended",
                               False)


def test_a_signal_outside_the_wait_still_stops_every_host(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    monkeypatch.setattr(session, "HostRun", _Sweep)
    monkeypatch.setattr(_Sweep, "asked", [])
    done, sent = concurrent.futures.Future.done, []

    def done_then_interrupted(self: concurrent.futures.Future) -> bool:
        # the signal lands while the main thread checks its futures: its handler runs at the
        # next bytecode, outside any sleep
        if not sent and threading.current_thread() is threading.main_thread():
            sent.append(True)
            os.kill(os.getpid(), signal.SIGINT)
        return done(self)

    monkeypatch.setattr(concurrent.futures.Future, "done", done_then_interrupted)
    hosts = HostsFile.model_validate({"hosts": {
        name: {"ssh": "nobody@localhost", "workdir": "/nowhere"} for name in ("a", "b")}})
    said: list[str] = []
    before = signal.getsignal(signal.SIGINT)
    try:
        outcomes = session.run_hosts(hosts, tmp_path, tmp_path / "e.yaml",
                                     session.Options(tmp_path / "results", []), said.append)
    except KeyboardInterrupt:
        pytest.fail("the Ctrl-C escaped the wait: the hosts' sweeps were never asked to stop")
    assert sent and _Sweep.asked == [True, True]  # both asked at once, neither timed out
    assert [o.code for o in outcomes] == [130, 130]
    assert said == ["interrupted: stopping the hosts' sweeps (their finished runs are kept)"]
    assert signal.getsignal(signal.SIGINT) is before  # the handler is given back
