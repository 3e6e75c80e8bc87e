"""A sweep on several hosts from one command: each host's sweep started (or found running and
re-attached), waited on, stopped on Ctrl-C, fetched, and merged into the local store.

What was started is written down locally, `RESULTS/hosts/NAME/attach.json` (host, work folder,
remote pid and its start time or Slurm job id, when): `run --hosts` again finds it, and re-attaches
instead of starting a second sweep. Each host's store comes to `RESULTS/hosts/NAME/results.sqlite`
(the host's own store is the truth: a fetch cut short keeps the previous copy), and all of them
are merged into RESULTS's store, keyed by host (data/merge.py). One sweep per host at a time (a
lock per host here, the orchestrator's lock there); hosts run in parallel, and one host's
failure is its own line while the others go on.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from orchestrator import signals
from orchestrator.data import merge
from orchestrator.errors import InputError
from orchestrator.hosts.faults import HostError
from orchestrator.hosts.model import Host, HostsFile
from orchestrator.hosts.remote import Remote, Started

STOP_WAIT_S = 120  # how long a stopped sweep may take to end before it is left to end there


@dataclass
class Outcome:
    host: str
    code: int  # like `run`'s: 0 ok, 1 some failed or the host failed, 130 stopped
    line: str
    fetched: bool = False


@dataclass
class Options:
    results: Path
    run_args: list[str]  # passed on to `run` there (--only, --new, --retry-failed)
    detach: bool = False  # start (or find) the sweeps and return; `run` again attaches
    poll_s: float = 5.0


def folder(results: Path, name: str) -> Path:
    return results / "hosts" / name


def read_attached(results: Path, name: str) -> dict[str, str | None] | None:
    path = folder(results, name) / "attach.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError:
        raise InputError(f"{path}: not JSON; remove it once the sweep on {name} "
                         "has ended") from None
    return data if isinstance(data, dict) else None


def _write_attached(results: Path, name: str, data: dict[str, object] | None) -> None:
    path = folder(results, name) / "attach.json"
    if data is None:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    os.replace(tmp, path)


@contextmanager
def _host_lock(results: Path, name: str) -> Iterator[None]:
    here = folder(results, name)
    here.mkdir(parents=True, exist_ok=True)
    with open(here / ".lock", "a+", encoding="utf-8") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise HostError(name, f"another orchestrator here is attached to it ({here})"
                            ) from None
        yield


class HostRun:
    """One host's sweep, start (or re-attach) to fetched store."""

    def __init__(self, name: str, host: Host, root: Path, experiments: Path, opts: Options,
                 stop: threading.Event, say: Callable[[str], None]) -> None:
        self.name, self.opts, self.stop_asked, self.say = name, opts, stop, say
        self.experiments = experiments
        self.remote = Remote(name, host, root)
        self.local = folder(opts.results, name)

    def run(self) -> Outcome:
        try:
            with _host_lock(self.opts.results, self.name):
                return self._run()
        except HostError as exc:
            return Outcome(self.name, 1, str(exc), (self.local / "results.sqlite").exists())

    def _run(self) -> Outcome:
        attached = read_attached(self.opts.results, self.name)
        started = Started(attached.get("pid"), attached.get("job"),
                          attached.get("lstart") or "") if attached else None
        if started is not None:
            self.say(f"host {self.name}: re-attached to its sweep ({_which(started)}, started "
                     f"{attached.get('started_at') if attached else ''})")
        else:
            self.remote.check()
            self.say(f"host {self.name}: pushed {self.remote.push(self.experiments)}")
            self.say(f"host {self.name}: set up ({self.remote.setup()})")
            if self.stop_asked.is_set():  # Ctrl-C during the push or setup: nothing to stop
                return Outcome(self.name, 130, f"host {self.name}: interrupted before its sweep "
                                               "started")
            started = self.remote.start(self.opts.run_args)
            _write_attached(self.opts.results, self.name, {
                "host": self.name, "ssh": self.remote.host.ssh, "workdir": self.remote.dir,
                **asdict(started), "started_at": time.strftime("%Y-%m-%d %H:%M:%S")})
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
        _write_attached(self.opts.results, self.name, None)  # ended and fetched: done with it
        return self._said(code, why, fetched, started)

    def _said(self, code: int | None, why: str | None, fetched: bool,
              started: Started) -> Outcome:
        got = "store fetched" if fetched else "no store there (the sweep never began)"
        if why is not None:
            return Outcome(self.name, 1, f"host {self.name}: {why}; {got}", fetched)
        if code is None:
            return Outcome(self.name, 1, f"host {self.name}: the sweep ended without an exit "
                                         f"code ({self.remote.last_log_line() or 'no output'});"
                                         f" {got}", fetched)
        words = {0: "sweep complete", 1: "sweep done, some runs failed",
                 130: "sweep stopped (finished runs kept; 'run' again resumes it)"}
        said = words.get(code) or f"sweep ended with exit code {code}: " \
                                  f"{self.remote.last_log_line()}"
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
        outcomes = [o if o.code else Outcome(o.host, 130, o.line, o.fetched) for o in outcomes]
    merged = [merge.Source(folder(opts.results, o.host), o.host) for o in outcomes
              if (folder(opts.results, o.host) / "results.sqlite").exists()]
    if merged:
        for done in merge.merge(opts.results, merged):
            say(f"merged {done.line()}")
    return outcomes
