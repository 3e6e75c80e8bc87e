"""The sweep's builds in the background: cargo compiles while the runs that are ready go on.

A cold start is mostly cargo (three builds, minutes each on a small machine) and the PyTorch runs
need none of it: the builds run one after another in a thread (they share one target folder,
which cargo locks, so two at once would only wait for each other), and the sweep takes each
result as it comes. The store and the progress display belong to the sweep's thread; this one
only calls cargo. Each cargo is written down machine-wide (a dead orchestrator's cargo is ended
by the next sweep) and spared by the runs' own clean-up (run/leftovers: SPARED, STARTING).

While a run is measured the build is **paused** (`paused()`: SIGSTOP to cargo's process group,
rustc and build scripts included; SIGCONT after): niceness alone is not enough, on 2 cores a
niced cargo still took half the machine from a 2-thread torch run (256² with sync read 15.7 ms
instead of ~0.4 ms, the OpenMP threads descheduled). So the builds progress between runs, and
every run is measured with none of the sweep's own work beside it; a cargo that starts while a
run is measured is stopped at once. The run's record names the builds it paused (the gate's
`builds_paused`): the 1-minute load average still counts them for a while after they stopped.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator, Mapping

from orchestrator.programs.build import Builder
from orchestrator.programs.build import BuildSpec as Build
from orchestrator.records import BuildResult
from orchestrator.run import leftovers

NICE = 10  # cargo's priority below the runs it shares the machine with


class BuildWatch:
    """programs.cargo.Watch for a background build: its own mark, the machine-wide ledger only
    (the results folder's is the running program's), and at its end only its own processes.
    It also holds the pause: a cargo started while the runs asked for quiet is stopped at once."""

    def __init__(self) -> None:
        self.token, self.since, self.pid = leftovers.new_token(), time.time(), 0
        self.lock = threading.Lock()  # pid and paused change together
        self.paused = False

    def signal(self, signum: int) -> None:
        """Send `signum` to the running cargo's whole group (call with `lock` held)."""
        if self.pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signum)

    def env(self) -> dict[str, str]:
        self.token, self.since = leftovers.new_token(), time.time()
        leftovers.STARTING[self.token] = self.since  # a child born from now on may be cargo
        return {leftovers.MARK: self.token}

    def started(self, pid: int) -> None:
        with self.lock:
            self.pid = pid
            if self.paused:  # a run is being measured: this cargo waits for its end
                self.signal(signal.SIGSTOP)
        leftovers.SPARED.add(pid)
        leftovers.STARTING.pop(self.token, None)
        # niced after it started: preexec_fn is unsafe in a threaded process; rustc inherits it
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, pid, NICE)
        leftovers.write_ledger(None, pid, self.token)

    def ended(self) -> None:
        leftovers.end_descendants(self.token, self.since, ours=False)
        leftovers.clear_ledger(None, self.token)
        leftovers.SPARED.discard(self.pid)
        leftovers.STARTING.pop(self.token, None)
        with self.lock:
            self.pid = 0


class BackgroundBuilds:
    """Build `builds` in order in a thread; `take()` gives the results finished so far."""

    def __init__(self, builder: Builder, builds: Mapping[str, Build]) -> None:
        self.builder, self.builds = builder, dict(builds)
        self.watch = BuildWatch()
        builder.watch = self.watch
        self._done: dict[str, BuildResult] = {}
        self._taken: set[str] = set()
        self._changed = threading.Condition()
        self._stop = False
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._work, name="builds", daemon=True)

    def start(self) -> BackgroundBuilds:
        self._thread.start()
        return self

    def _work(self) -> None:
        try:
            for name, build in self.builds.items():
                if self._stop:
                    return
                result = self.builder.build(name, build)
                with self._changed:
                    self._done[name] = result
                    self._changed.notify_all()
        except BaseException as exc:
            with self._changed:
                self._error = exc
                self._changed.notify_all()

    def take(self) -> list[BuildResult]:
        """The results finished since the last take, in build order; a crash of the build
        thread is raised here, in the sweep's thread."""
        with self._changed:
            if self._error is not None:
                raise self._error
            new = [r for n, r in self._done.items() if n not in self._taken]
            self._taken.update(r.name for r in new)
            return new

    def left(self) -> list[str]:
        """The builds not finished yet, by name."""
        with self._changed:
            return [n for n in self.builds if n not in self._done]

    def wait(self, timeout: float | None = None) -> None:
        """Until a build not taken yet has finished (or the thread failed)."""
        with self._changed:
            self._changed.wait_for(lambda: self._error is not None or
                                   any(n not in self._taken for n in self._done), timeout)

    @contextlib.contextmanager
    def paused(self) -> Iterator[list[str]]:
        """The builds stopped while the body runs (a run being measured); yields the names of
        the builds not finished yet, [] where none was running. Resumed however the body ends."""
        with self.watch.lock:
            self.watch.paused = True
            self.watch.signal(signal.SIGSTOP)
        try:
            yield self.left()
        finally:
            with self.watch.lock:
                self.watch.paused = False
                self.watch.signal(signal.SIGCONT)

    def stop(self) -> None:
        """Stop: no further build starts; the one running is killed, group and all."""
        self._stop = True
        with self.watch.lock:
            self.watch.signal(signal.SIGKILL)  # a stopped group dies of SIGKILL too
        self._thread.join(timeout=30)
