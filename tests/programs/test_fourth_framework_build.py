"""A fourth framework with a build system of its own is its folder and one registry line.

A stand-in framework ('kiln') is written as a package in a temporary folder: its Program, its
`BuildSystem` (a `make`-like one: a tiny build script copies the benchmark program into the
package's own build folder, under a cache key of the sources, options and build environment)
and its benchmark program (numpy's matmul timed, printing the lines of docs/LINES.md). It is
put in a registry of this test's own with one line (`default_registry().with_programs(...)`,
made active; a folder under orchestrator/programs/ is found by discovery, as
test_discovery_finds_a_framework_folder shows); then the experiments file's `builds:` names
its unit, and `plan`, `build`, `run`, `export` and `report` take it up through the interfaces
alone (nothing else of the package names it or cargo's builder).
"""

from __future__ import annotations

import csv
import importlib
import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator import programs
from orchestrator.cli import main
from orchestrator.programs import Program, registry

from ..conftest import PROJECT

KILN = '''
"""kiln: a stand-in framework's whole folder (its Program and its build system)."""
import re
from pathlib import Path
from typing import ClassVar

from orchestrator.programs.base import Program
from orchestrator.programs.build import BuildSystem
from orchestrator.records import Header

from kiln.make import MakeBuilder


class Make(BuildSystem):
    name = "make"
    what, option = "target", "flag"
    units: ClassVar[dict[str, tuple[str, ...]]] = {"kiln-bench": ("fast",)}

    def builder(self, project):
        return MakeBuilder(Path(__file__).parent)


class Kiln(Program):
    name = "kiln"
    title = "Kiln"
    devices = ("cpu",)
    device_needs: ClassVar[dict[str, tuple[str, ...]]] = {"cpu": ()}
    build_system = Make()

    def command(self, run, paths):
        return [paths.python, str(paths.binaries[str(run.build)])]

    def parse_header(self, line, line_no):
        if (found := re.fullmatch(r"kiln ([0-9][^ ,]*)", line)) is not None:
            return Header("kiln", found.group(1), None, line_no)
        return None
'''

MAKE = '''
"""kiln's builder: its build script run as a process, a build folder keyed by what changes it."""
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

from orchestrator.records import BuildResult, Status


class MakeBuilder:
    def __init__(self, home):
        self.home, self.watch = home, None

    def key(self, build):
        parts = [(self.home / "bench.py").read_bytes(), json.dumps(sorted(build.features)),
                 json.dumps(sorted(build.env.items()))]
        return hashlib.sha256(b"\\0".join(p if isinstance(p, bytes) else p.encode()
                                           for p in parts)).hexdigest()[:16]

    def build(self, name, build):
        start, key = time.perf_counter(), self.key(build)
        out = self.home / "out" / key / "bench.py"
        if out.is_file():
            return BuildResult(name, key, Status.OK, out, time.perf_counter() - start, True)
        argv = [sys.executable, str(self.home / "build.py"), str(self.home / "bench.py"),
                str(out), *build.features]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
        if done.returncode != 0:
            return BuildResult(name, key, Status.FAILED, None, time.perf_counter() - start,
                               False, error=done.stderr.strip()[-200:])
        return BuildResult(name, key, Status.OK, out, time.perf_counter() - start, False,
                           log=done.stdout)
'''

BUILD = '''
"""The stand-in `make`: copies the program into the build folder, its flags written in."""
import sys
from pathlib import Path

source, target, flags = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
target.parent.mkdir(parents=True, exist_ok=True)
text = source.read_text().replace("FLAGS = []", f"FLAGS = {flags!r}", 1)
target.write_text(text)
print("built", target)
'''

BENCH = '''
"""kiln's benchmark program: numpy's matmul timed with the contract's lines."""
import sys
import time

import numpy as np

FLAGS = []  # the build writes its flags here

def main():
    args = sys.argv[1:]
    rows, cols = (int(n) for n in args[args.index("--shape") + 1].split("x"))
    reps = int(args[args.index("--reps") + 1])
    a = np.ones((rows, cols), dtype=np.float32)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        (a @ a.T).sum()
        times.append(time.perf_counter() - start)
    print(f"kiln 1.0.0, flags {' '.join(FLAGS) or 'none'}")
    print(f"cpu {rows}x{cols} matmul with sync, {reps} runs: min {min(times) * 1e3:.6f}ms "
          f"median {sorted(times)[len(times) // 2] * 1e3:.6f}ms")


if __name__ == "__main__":
    main()
'''

FILE = """
version: 1
defaults: {shape: [64, 64], reps: 5, timeout_s: 60, order: {interleave: false}}
builds:
  kiln-fast: {crate: kiln-bench, features: [fast]}
experiments:
  kiln:
    mode: mm
    targets: [{program: kiln, device: cpu, build: kiln-fast}]
"""


@pytest.fixture
def kiln(tmp_path: Path) -> Iterator[Program]:
    folder = tmp_path / "frameworks" / "kiln"
    folder.mkdir(parents=True)
    for name, text in {"__init__.py": KILN, "make.py": MAKE, "build.py": BUILD,
                       "bench.py": BENCH}.items():
        (folder / name).write_text(text, encoding="utf-8")
    sys.path.insert(0, str(tmp_path / "frameworks"))
    try:
        program = importlib.import_module("kiln").Kiln()
        with programs.use(programs.default_registry().with_programs(program)):  # the one line
            yield program
    finally:
        sys.path.remove(str(tmp_path / "frameworks"))
        for name in ("kiln", "kiln.make"):
            sys.modules.pop(name, None)


def _runs(results: Path) -> list[dict[str, object]]:
    with sqlite3.connect(results / "results.sqlite") as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT status, argv_json, stdout FROM runs")]


def test_contract_framework_build_plans_builds_runs_and_reports(
        kiln: Program, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "frameworks" / "kiln"
    exp = tmp_path / "kiln.yaml"
    exp.write_text(FILE, encoding="utf-8")
    assert main(["plan", str(exp)]) == 0
    assert "1 run, 0 skip" in capsys.readouterr().err  # its one run, runnable here

    assert main(["build", str(exp)]) == 0  # through the CLI's build: make's builder ran
    built = list((home / "out").glob("*/bench.py"))
    assert len(built) == 1 and "FLAGS = ['fast']" in built[0].read_text(encoding="utf-8")
    again = programs.builders(PROJECT).build("kiln-fast", _build(exp))
    assert again.fresh and again.binary == built[0]  # its own cache key: up to date

    results = tmp_path / "results"
    assert main(["run", str(exp), "--results", str(results), "--quiet"]) == 0
    [run] = _runs(results)
    assert run["status"] == "ok"
    assert json.loads(str(run["argv_json"]))[1] == str(built[0])  # the built program ran
    assert b"kiln 1.0.0, flags fast" in bytes(run["stdout"])  # type: ignore[arg-type]

    out = tmp_path / "export.csv"
    assert main(["export", str(results), "--csv", str(out)]) == 0
    with out.open(encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["method"] == "with_sync"]
    assert {r["framework"] for r in rows} == {"kiln"} and all(float(r["value_s"]) > 0
                                                              for r in rows)
    report = tmp_path / "report"
    assert main(["report", str(results), "--out", str(report)]) == 0
    assert "kiln" in (report / "report.md").read_text(encoding="utf-8")


def _build(exp: Path) -> object:
    from orchestrator.experiments import config

    return config.load(exp).builds["kiln-fast"]


@pytest.mark.parametrize(("text", "said"), [
    (FILE.replace("features: [fast]", "features: [slow]"),
     "bad.yaml:5 at builds.kiln-fast: target kiln-bench has no flag 'slow' (known: fast)"),
    (FILE.replace("{program: kiln, device: cpu, build: kiln-fast}",
                  "{program: burn, device: flex, build: kiln-fast}"),
     "experiments.kiln.targets[0].build: build 'kiln-fast' is make's target 'kiln-bench', "
     "which burn's cargo does not build (its crates: exec-gpu, exec-cpu, exec-amx)"),
])
def test_contract_framework_build_checks_its_builds(
        kiln: Program, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
        said: str) -> None:
    exp = tmp_path / "bad.yaml"
    exp.write_text(text, encoding="utf-8")
    assert main(["plan", str(exp)]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1


def test_discovery_finds_a_framework_folder(kiln: Program, tmp_path: Path) -> None:
    """The registry is discovered from framework folders: kiln's folder alone gives kiln, and
    the default registry (orchestrator/programs/) is never changed by this test's own."""
    found = registry.discover("", tmp_path / "frameworks")
    assert found.names() == ("kiln",) and type(found.get("kiln")) is type(kiln)
    assert registry.default_registry().names() == ("torch", "burn", "jax")
    assert programs.names() == ("torch", "burn", "jax", "kiln")  # the test's, active
