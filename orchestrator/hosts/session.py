"""A sweep on several hosts from one command: each host's sweep started (or found running and
re-attached), waited on, stopped on Ctrl-C, fetched, and merged into the local store.

What was started is written down locally, `RESULTS/hosts/NAME/attach.json` (host, work folder,
remote pid and its start time or Slurm job id, when): `run --hosts` again finds it, and re-attaches
instead of starting a second sweep. Each host's store comes to `RESULTS/hosts/NAME/results.sqlite`
(the host's own store is the truth: a fetch cut short keeps the previous copy), and all of them
are merged into RESULTS's store, keyed by host (data/merge.py). One sweep per host at a time (a
lock per host here, the orchestrator's lock there); hosts run in parallel, and one host's
failure, its fetch's or its merge's, is its own line while the others go on and are merged.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from orchestrator import signals
from orchestrator.data import merge
from orchestrator.errors import OrchestratorError
from orchestrator.hosts.faults import HostError
from orchestrator.hosts.here import Attached, folder, host_lock, read_attached, write_attached
from orchestrator.hosts.model import Host, HostsFile
from orchestrator.hosts.remote import Remote, Started

STOP_WAIT_S = 120  # how long a stopped sweep may take to end before it is left to end there


@dataclass
class Outcome:
    host: str
    code: int  # like `run`'s: 0 ok, 1 some failed or the host failed, 130 stopped
    line: str
    fetched: bool = False
    store: Path | None = None  # the host's fetched store here, in a folder that passed checks


@dataclass
class Options:
    results: Path
    run_args: list[str]  # passed on to `run` there (--only, --new, --retry-failed)
    detach: bool = False  # start (or find) the sweeps and return; `run` again attaches
    poll_s: float = 5.0


class HostRun:
    """One host's sweep, start (or re-attach) to fetched store."""

    def __init__(self, name: str, host: Host, root: Path, experiments: Path, opts: Options,
                 stop: threading.Event, say: Callable[[str], None]) -> None:
        self.name, self.opts, self.stop_asked, self.say = name, opts, stop, say
        self.experiments = experiments
        self.remote = Remote(name, host, root)
        self.local = folder(opts.results, name)
        self.checked = False  # RESULTS/hosts/NAME passed its checks (here.py)

    def run(self) -> Outcome:
        outcome = self._guarded()
        store = self.local / "results.sqlite"
        if self.checked and store.is_file() and not store.is_symlink():
            outcome.store = store  # fetched now or earlier: never removed, merged
        return outcome

    def _guarded(self) -> Outcome:
        try:
            with host_lock(self.opts.results, self.name):
                self.checked = True
                return self._run()
        except HostError as exc:
            return Outcome(self.name, 1, str(exc))
        except (OrchestratorError, OSError, sqlite3.Error) as exc:  # one line, others go on
            return Outcome(self.name, 1, f"host {self.name}: {exc}")

    def _reattach(self) -> Started | None:
        """The sweep attach.json records, if it can be proven ours and waited on here."""
        attached = read_attached(self.opts.results, self.name)
        if attached is None:
            return None
        record = self.local / "attach.json"
        if attached.token is None:
            raise HostError(self.name, f"{record} was written by an older orchestrator and has "
                                       "no token: its sweep cannot be proven ours, so it is "
                                       "neither waited on nor stopped; remove it once the "
                                       f"sweep on {self.name} has ended, and run again")
        if attached.workdir != self.remote.dir:
            raise HostError(self.name, f"its sweep was started in {attached.workdir}, but the "
                                       f"hosts file now says workdir {self.remote.dir}: set "
                                       f"workdir back to {attached.workdir} to wait for it and "
                                       f"fetch its results (or remove {record} to leave them "
                                       "there)")
        started = Started(attached.pid, attached.job, attached.lstart, attached.token)
        which = f"{_which(started)}, started {attached.started_at}"
        # only a sweep proven ours is "re-attached": a process that merely has its pid is not
        self.say(f"host {self.name}: re-attached to its sweep ({which})"
                 if self.remote.running(started) else
                 f"host {self.name}: its sweep ({which}) no longer runs there; fetching its store")
        return started

    def _run(self) -> Outcome:
        started = self._reattach()
        if started is None:
            self.remote.check()
            self.say(f"host {self.name}: pushed {self.remote.push(self.experiments)}")
            self.say(f"host {self.name}: set up ({self.remote.setup()})")
            if self.stop_asked.is_set():  # Ctrl-C during the push or setup: nothing to stop
                return Outcome(self.name, 130, f"host {self.name}: interrupted before its sweep "
                                               "started")
            started = self.remote.start(self.opts.run_args)
            write_attached(self.opts.results, self.name, Attached(
                host=self.name, ssh=self.remote.host.ssh, workdir=self.remote.dir,
                pid=started.pid, job=started.job, lstart=started.lstart, token=started.token,
                started_at=time.strftime("%Y-%m-%d %H:%M:%S")))
            self.say(f"host {self.name}: sweep started ({_which(started)})")
        if self.opts.detach:
            return Outcome(self.name, 0, f"host {self.name}: running detached ({_which(started)})"
                                         "; 'run' again with the same --hosts re-attaches")
        return self._wait(started)

    def _wait(self, started: Started) -> Outcome:
        stopping = None
        while self.remote.running(started):
            if self.stop_asked.is_set() and stopping is None:
                self.remote.stop(started)
                stopping = time.monotonic()
                self.say(f"host {self.name}: stopping its sweep ({_which(started)})")
            if stopping is not None and time.monotonic() - stopping > STOP_WAIT_S:
                return Outcome(self.name, 130, f"host {self.name}: asked to stop, still running "
                                               "there; 'run' again re-attaches")
            self.stop_asked.wait(self.opts.poll_s) if stopping is None else \
                time.sleep(min(self.opts.poll_s, 1.0))
        code, why = self.remote.outcome(started)
        fetched = self.remote.fetch(self.local / "results.sqlite")
        write_attached(self.opts.results, self.name, None)  # ended and fetched: done with it
        return self._said(code, why, fetched, started)

    def _said(self, code: int | None, why: str | None, fetched: bool,
              started: Started) -> Outcome:
        got = "store fetched" if fetched else "no store there (the sweep never began)"
        if why is not None:
            return Outcome(self.name, 1, f"host {self.name}: {why}; {got}", fetched)
        if code is None:
            last = self.remote.last_log_line(started) or "no output"
            return Outcome(self.name, 1, f"host {self.name}: the sweep ended without an exit "
                                         f"code ({last}); {got}", fetched)
        words = {0: "sweep complete", 1: "sweep done, some runs failed",
                 130: "sweep stopped (finished runs kept; 'run' again resumes it)"}
        said = words.get(code) or f"sweep ended with exit code {code}: " \
                                  f"{self.remote.last_log_line(started)}"
        return Outcome(self.name, code if code in (0, 1, 130) else 1,
                       f"host {self.name}: {said}; {got}", fetched)


def _which(started: Started) -> str:
    return f"Slurm job {started.job}" if started.job else f"pid {started.pid}"


def run_hosts(hosts: HostsFile, root: Path, experiments: Path, opts: Options,
              say: Callable[[str], None]) -> list[Outcome]:
    """Every host's sweep in parallel; then every fetched store merged into opts.results. A
    Ctrl-C (KeyboardInterrupt here) asks each host's sweep to stop, waits for it and fetches."""
    stop = threading.Event()
    runs = [HostRun(n, h, root, experiments, opts, stop, say) for n, h in hosts.hosts.items()]
    # Ctrl-C and SIGTERM are noted, never raised, while the hosts run: a KeyboardInterrupt
    # raised outside the wait (as the main thread woke from its sleep, on a loaded machine)
    # left the pool waiting for sweeps nobody had asked to stop
    with signals.deferred() as noted, ThreadPoolExecutor(max_workers=len(runs)) as pool:
        futures = [pool.submit(r.run) for r in runs]
        while not all(f.done() for f in futures):
            time.sleep(0.2)
            if noted and not stop.is_set():
                stop.set()
                say("interrupted: stopping the hosts' sweeps (their finished runs are kept)")
        outcomes = [f.result() for f in futures]
    interrupted = bool(noted)
    if interrupted:
        for o in outcomes:
            o.code = o.code or 130
    for o in outcomes:
        _merge(opts.results, o, say)
    return outcomes


def _merge(results: Path, o: Outcome, say: Callable[[str], None]) -> None:
    """The host's store merged into RESULTS's; a store that cannot be (another host's sweep
    id, a foreign file, the local store busy) is said on the host's line, code 1, and the
    other hosts are still merged."""
    if o.store is None:
        return
    try:
        for done in merge.merge(results, [merge.Source(o.store.parent, o.host)]):
            say(f"merged {done.line()}")
    except (OrchestratorError, OSError, sqlite3.Error) as exc:
        o.line += f"; not merged into {results}: {exc}"
        o.code = o.code if o.code == 130 else 1
