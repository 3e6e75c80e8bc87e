"""One host's side of a sweep: check it, push the project, set it up, start the sweep detached
(directly, or as a Slurm job), ask whether it still runs, stop it, and fetch its store.

The sweep runs on the host under `.hosts/run.sh`, which starts the orchestrator there, passes a
SIGTERM on to it (the orchestrator stops as on Ctrl-C: the running program ended, every finished
run kept) and writes its exit code to `.hosts/rc.TOKEN` (its output: `.hosts/run.TOKEN.log`).
Started with setsid and nohup (or as a batch job) it outlives the ssh connection that started
it: a laptop may sleep, and `run` later asks the host again. One sweep at a time in a work
folder: `.hosts/running` names the one that runs, and another orchestrator's push is refused
while it does (two results folders given one workdir would overwrite its code mid-sweep and
read each other's exit codes).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from orchestrator.hosts import ours, slurm
from orchestrator.hosts.faults import HostError, explain
from orchestrator.hosts.here import store_problem
from orchestrator.hosts.model import Host
from orchestrator.hosts.ours import Started
from orchestrator.hosts.ssh import Transport

# what the host needs of the project: the package, the programs, the scripts, the crates
PUSHED = ("orchestrator", "bench_py", "bench_rust", "scripts", "setup.sh", "pyproject.toml")
_SKIPPED = {"__pycache__", "target", ".venv", "build", "results"}
MIN_FREE_MIB = 200  # less free space than this in the work folder: refused before a push
_NEEDS = "import sys; assert sys.version_info >= (3, 11), sys.version; " \
         "import pydantic, yaml, psutil, rich, pandas"

# $1 is the sweep's token: its exit code and log are its own (`.hosts/rc.TOKEN`,
# `.hosts/run.TOKEN.log`), and `.hosts/running` names it while it runs, so another
# orchestrator's start in this work folder is refused (check) instead of taking them over
RUN_SH = """#!/bin/sh
# written by the orchestrator: run one sweep, pass SIGTERM on, keep the exit code
cd {workdir} || exit 2
rm -f .hosts/rc.$1
echo "$$ $1" > .hosts/running
{command} &
child=$!
trap 'kill -TERM $child 2>/dev/null' TERM INT HUP
wait $child; rc=$?
while kill -0 $child 2>/dev/null; do wait $child; rc=$?; done
echo $rc > .hosts/rc.$1
[ "$(cat .hosts/running 2>/dev/null)" = "$$ $1" ] && rm -f .hosts/running
exit $rc
"""


def project_files(root: Path) -> list[str]:
    """The files of PUSHED under `root` (build outputs, caches and venvs left out)."""
    found = []
    for top in PUSHED:
        path = root / top
        if path.is_file():
            found.append(top)
            continue
        for item in sorted(path.rglob("*")):
            rel = item.relative_to(root)
            if item.is_file() and not _SKIPPED & set(rel.parts) and item.suffix != ".pyc":
                found.append(str(rel))
    return found


# A work folder is ours when it holds this marker (written by the first push into an empty
# folder), or run.sh of an orchestrator from before the marker: never a folder of the user's
MARKER = ".hosts/workdir"
_LEGACY = "# written by the orchestrator: run one sweep, pass SIGTERM on, keep the exit code"
_CLAIM = f"""mkdir -p "$1" && cd "$1" || exit 3
if [ ! -O . ] || [ -n "$(find . -maxdepth 0 -perm -0002)" ]; then echo unsafe
elif [ -d .hosts ] && [ ! -L .hosts ] && [ -f {MARKER} ] && [ ! -L {MARKER} ]; then echo ours
elif [ ! -L .hosts ] && [ -f .hosts/run.sh ] && grep -qxF "$2" .hosts/run.sh; then
  echo "$3" > {MARKER} && echo ours
elif [ -z "$(ls -A)" ]; then mkdir .hosts && echo "$3" > {MARKER} && echo new
else echo "foreign $(ls -A | head -n 4 | tr '\\n' ' ')"; fi
if [ -f .hosts/running ] && [ ! -L .hosts/running ]; then
  read -r rp rt < .hosts/running
  case "$rt" in *[!0-9a-f]*|"") ;; *)
    if [ "$(ps -ww -o args= -p "$rp" 2>/dev/null | sed "s/^ *//;s/ *$//")" = "sh $4 $rt" ]
    then echo "busy pid $rp"
    elif command -v squeue >/dev/null && [ -n "$(squeue -h --name="orchestrator-$rt" -o %i)" ]
    then echo "busy Slurm job $(squeue -h --name="orchestrator-$rt" -o %i | head -n 1)"; fi ;;
  esac
fi
df -Pk . | tail -n 1
"""
_MARK_TEXT = "a work folder of the orchestrator (python -m orchestrator run --hosts)"
RC_MAX = 32  # bytes of .hosts/rc read: an exit code is at most 3 digits


class Remote:
    def __init__(self, name: str, host: Host, root: Path) -> None:
        self.name, self.host, self.root = name, host, root
        self.t = Transport(name, host)
        self.dir = host.workdir

    def path(self, rel: str) -> str:
        return f"{self.dir.rstrip('/')}/{rel}"

    # before a sweep -----------------------------------------------------------------------
    def check(self) -> None:
        """Reachable, key accepted, a work folder of ours (empty, or marked by an earlier
        push: a folder of the user's is never written into), with room."""
        self.t.run(["true"], what="connect", timeout=60)
        said = self.t.run(["sh", "-c", _CLAIM, "sh", self.dir, _LEGACY, _MARK_TEXT,
                           ours.run_sh(self.dir)],
                          what="work folder").stdout.decode(errors="replace").splitlines()
        if said[:1] == ["unsafe"]:
            raise HostError(self.name, f"its workdir {self.dir} belongs to another user or is "
                                       "writable by others: name a folder of your own that "
                                       "only you can write (nothing was written there)")
        if not said or said[0].startswith("foreign"):
            found = said[0].removeprefix("foreign").strip() if said else ""
            raise HostError(self.name, f"its workdir {self.dir} holds files the orchestrator "
                                       f"did not put there ({found or 'unreadable'}) and no "
                                       f"{MARKER} of an earlier push: name an empty or new "
                                       "folder (nothing was written there)")
        busy = next((line[5:] for line in said if line.startswith("busy ")), None)
        if busy is not None:
            raise HostError(self.name, f"another orchestrator's sweep runs in its workdir "
                                       f"{self.dir} ({busy[:80]}): wait for it to end, or give "
                                       "this results folder a workdir of its own there (nothing "
                                       "was written there)")
        fields = said[-1].split()
        if len(fields) >= 4 and re.fullmatch(r"\d{1,20}", fields[3]) and \
                int(fields[3]) // 1024 < MIN_FREE_MIB:
            raise HostError(self.name, f"its disk is full: {int(fields[3]) // 1024} MiB free in "
                                       f"{self.dir} (at least {MIN_FREE_MIB} MiB needed)")

    def push(self, experiments: Path) -> str:
        files = project_files(self.root)
        if self.host.setup == "bundle":
            bundle = self.root / "build" / "bundle.tar.xz"
            if not bundle.is_file():
                raise HostError(self.name, "setup: bundle needs build/bundle.tar.xz here: run "
                                           "'python -m orchestrator bundle EXPERIMENTS' first")
            files.append("build/bundle.tar.xz")
        how = self.t.push(self.root, files, self.dir)
        self.t.shell(f"mkdir -p {shlex.quote(self.path('.hosts'))} && cat > "
                     f"{shlex.quote(self.path('.hosts/experiments.yaml'))}",
                     stdin=experiments.read_bytes(), what="push of the experiments file")
        return f"{len(files)} files by {how}"

    def python(self) -> str:
        """The Python that runs the orchestrator there."""
        if self.host.setup == "setup.sh":
            return self.path(".venv/bin/python")
        return self.host.python

    def setup(self) -> str:
        """setup.sh there (its own cargo builds; on Slurm in a job of their own), or a check
        that the bundle's or the given Python can run the orchestrator."""
        if self.host.setup == "setup.sh":
            if not self.t.has(self.host.cargo):
                raise HostError(self.name, f"no cargo there for setup.sh ({self.host.cargo!r} "
                                           "not found): install Rust there, set 'cargo:', or "
                                           "use 'setup: bundle' (binaries built here)")
            script = f"cd {shlex.quote(self.dir)} && ./setup.sh && .venv/bin/python -m " \
                     "orchestrator build .hosts/experiments.yaml"
            self._setup_job(script)
            return "setup.sh"
        probe = self.t.run([self.host.python, "-c", "import sys; print(sys.version_info >= "
                            "(3, 11))"], check=False, what="python")
        if probe.returncode == 127 or (probe.returncode and b"not found" in probe.stderr):
            raise HostError(self.name, f"no Python {self.host.python!r} there (set 'python:')")
        if probe.stdout.strip().splitlines()[-1:] != [b"True"]:
            raise HostError(self.name, f"{self.host.python} there is older than Python 3.11")
        if self.host.setup == "none":
            deps = self.t.run([self.host.python, "-c", _NEEDS], check=False, what="python")
            if deps.returncode:
                last = deps.stderr.decode(errors="replace").strip().splitlines()[-1:]
                raise HostError(self.name, f"{self.host.python} there cannot run the "
                                           f"orchestrator: {''.join(last)}")
        return self.host.setup

    def _setup_job(self, script: str) -> None:
        if self.host.place == "slurm":
            opts = slurm.build_options(self.host.slurm_or_default())
            argv = ["sbatch", "--wait", "--parsable", *opts, "-o", self.path(".hosts/setup.log"),
                    "--wrap", script]
            self.t.run(argv, what="setup job (sbatch --wait)", timeout=6 * 3600)
        else:
            self.t.shell(script, what="setup.sh", timeout=6 * 3600)

    # the sweep --------------------------------------------------------------------------
    def start(self, run_args: list[str]) -> Started:
        """Write .hosts/run.sh and start it detached: its pid or job id, and the token that
        proves it ours later (ours.py)."""
        exp = ".hosts/experiments.yaml"
        if self.host.setup == "bundle":
            command = shlex.join(["env", f"PYTHON={self.host.python}", "scripts/run-offline.sh",
                                  exp, "results", "--quiet", *run_args])
        else:
            command = shlex.join([self.python(), "-m", "orchestrator", "run", exp, "--results",
                                  "results", "--quiet", *run_args])
        q = shlex.quote(self.dir)  # absolute: Slurm runs a copy of run.sh from its spool
        self.t.shell(f"cat > {shlex.quote(self.path('.hosts/run.sh'))}",
                     stdin=RUN_SH.format(command=command, workdir=q).encode(), what="write run.sh")
        token = ours.new_token()
        if self.host.place == "slurm":
            opts = slurm.measure_options(self.host.slurm_or_default())
            argv = ["sbatch", "--parsable", *opts, f"--job-name={ours.job_name(token)}", "-D",
                    self.dir, "-o", self.path(_log(token)), ours.run_sh(self.dir), token]
            out = self.t.run(argv, what="sbatch").stdout.decode(errors="replace")
            return Started(None, self._job_id(out, token), "", token)
        out = self.t.shell(
            f"cd {q} && if command -v setsid >/dev/null; then s=setsid; "
            f"else s=; fi; $s nohup sh {shlex.quote(ours.run_sh(self.dir))} {token} "
            f"> {_log(token)} 2>&1 < /dev/null & echo $!", what="start").stdout.decode().split()
        pid = out[-1] if out and re.fullmatch(r"[1-9]\d{0,9}", out[-1]) else None
        if pid is None:
            raise HostError(self.name, "the start printed no process id: look for "
                                       f"'{ours.command_line(self.dir, token)}' there")
        return Started(pid, None, ours.lstart(self.t, pid), token)

    def _job_id(self, out: str, token: str) -> str:
        """sbatch --parsable's `ID[;CLUSTER]` on its last line; anything else (nothing, a
        sentence) is no job id, and is said with where to look for the job."""
        lines = [line.strip() for line in out.splitlines() if line.strip()]
        found = re.fullmatch(r"([1-9]\d{0,9})(;\S+)?", lines[-1]) if lines else None
        if found is None:
            shown = repr(lines[-1][:120]) if lines else "nothing"
            raise HostError(self.name, f"sbatch printed no job id ({shown}): look for a job "
                                       f"named {ours.job_name(token)} there (squeue --name)")
        return found.group(1)

    def running(self, started: Started) -> bool:
        """Whether our sweep still runs there (a connection that fails raises HostError)."""
        return ours.running(self.t, self.dir, started)

    def stop(self, started: Started) -> None:
        """Ask our sweep to stop as on Ctrl-C (it keeps every finished run)."""
        ours.stop(self.t, self.dir, started)

    def outcome(self, started: Started) -> tuple[int | None, str | None]:
        """(the sweep's exit code, or None; a line when there is no exit code to read, or
        Slurm's reason when the job ended by its doing). `.hosts/rc` is read bounded."""
        rc = self.t.run(["head", "-c", str(RC_MAX), self.path(_rc(started.token))],
                        check=False, what="rc").stdout
        found = re.fullmatch(rb"\s*(\d{1,3})\s*", rc)
        code = int(found.group(1)) if found else None
        why = None if found or not rc.strip() else \
            f"its {_rc(started.token)} holds no exit code ({rc[:16].decode(errors='replace')!r}...)"
        if started.job:
            out = self.t.run(["scontrol", "show", "job", "-o", started.job], check=False,
                             what="scontrol").stdout.decode()
            why = slurm.ended_why(started.job, slurm.parse_job(out)) or why
        return code, why

    def last_log_line(self, started: Started) -> str:
        out = self.t.run(["tail", "-c", "4096", self.path(_log(started.token))], check=False,
                         what="log").stdout.decode(errors="replace")
        lines = [line.strip() for line in out.splitlines() if line.strip()]
        return lines[-1][:300] if lines else ""

    def fetch(self, local: Path) -> bool:
        """A consistent copy of the host's store (SQLite's backup, made there, while a sweep
        may still write) into `local`; False when the host has no store yet."""
        store = self.path("results/results.sqlite")
        snap = self.path(".hosts/fetch.sqlite")
        copy = ("import sqlite3, sys; s = sqlite3.connect(sys.argv[1]); "
                "d = sqlite3.connect(sys.argv[2]); s.backup(d); d.close()")
        made = self.t.run(["sh", "-c", f"test -f {shlex.quote(store)} && rm -f "
                           f"{shlex.quote(snap)} && exec \"$0\" -c \"$1\" \"$2\" \"$3\"",
                           self._fetch_python(), copy, store, snap], check=False,
                          what="snapshot of the store")
        if made.returncode == 1 and not made.stderr:
            return False  # no store there yet: the sweep never began
        if made.returncode:
            raise HostError(self.name, explain(made.returncode, made.stderr, "store snapshot"))
        self.t.fetch(snap, local, check=store_problem)
        return True

    def _fetch_python(self) -> str:
        return self.python() if self.host.setup != "bundle" else self.host.python


def _rc(token: str) -> str:
    """The sweep's own exit code file: another sweep's start never removes or rewrites it."""
    return f".hosts/rc.{token}"


def _log(token: str) -> str:
    return f".hosts/run.{token}.log"
