"""The README's two commands in the README's order, in one folder: the tests pass after the sweep.

README command 1 leaves `results/` (a sweep of experiments.yaml) and `report/` in the clone;
command 2 then runs the tests there. A test that reads the working tree's `results/` (the plan
showing rows as `done`) passes in a clean clone and fails for a newcomer. Here, in a
scratch copy of the project: command 1's run and report parts on a tiny CPU-only file (the
torch runs of a stand-in Python, as tests/test_faults.py does), a store holding every run of
experiments.yaml as finished (what the whole sweep leaves), then command 2 on the tests that
run the orchestrator from the project folder. The real sweep is the integrator's; this is cheap.

`python -m tests.test_readme_order [FOLDER]` writes the same finished store into FOLDER
(default ./results), to try any other test against a folder where command 1 has run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.data.store import Store
from orchestrator.experiments import config
from orchestrator.experiments.plan import expand
from orchestrator.records import RunRecord, Status
from orchestrator.run.detect import assumed
from orchestrator.run.machine import capabilities, cpu_count

from .conftest import PROJECT, write
from .test_faults import FAKE

pytestmark = pytest.mark.slow
# what a copy needs to run the orchestrator and its tests (no build/, .venv, results, caches)
COPIED = ("orchestrator", "tests", "bench_py", "docs", "experiments.yaml",
          "experiments.schema.json", "pyproject.toml", "README.md")
MAC = ["macos", "arm64", "apple-silicon", "mps", "metal"]
TINY = """\
version: 1
defaults: {shape: [8, 8], reps: 3, timeout_s: 60}
experiments:
  cpu:
    mode: mm
    targets: [{program: torch, device: cpu}]
"""
# the tests that run `plan` or `report` from the project folder with its default results
COMMAND_2 = ["tests/experiments/test_plan_macos.py", "tests/test_readme_mac.py"]
GOOD = ("cpu: device init 1.000ms\n"
        "cpu 8x8 matmul with sync, 3 runs: min 1.000\u00b5s median 2.000\u00b5s\n").encode()


def finished_store(folder: Path, experiments: Path = PROJECT / "experiments.yaml") -> int:
    """Record every run of `experiments` (on this machine and on the chapter's Mac) as ok in a
    new sweep of `folder`: what README command 1 leaves. Returns how many runs."""
    cfg = config.load(experiments)
    here = capabilities(sys.executable)
    runs = {p.run.run_id: p.run for caps, cores in ((here, cpu_count()), (assumed(here, MAC), 8),
                                                     (assumed(here, MAC), cpu_count()))
            for p in expand(cfg, caps, cores)}
    with Store(folder).writing() as store:
        sweep, _ = store.begin_sweep(experiments, {"os": "test"}, [], True)
        for run in runs.values():
            store.record_run(sweep, RunRecord(run=run, status=Status.OK, stdout=GOOD), None)
        store.end_sweep(sweep, "complete")
    return len(runs)


def _copy(project: Path, to: Path) -> Path:
    to.mkdir()
    for name in COPIED:
        source = project / name
        if source.is_dir():
            shutil.copytree(source, to / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, to / name)
    return to


def _in(clone: Path, *argv: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`python ARGV` with the clone as its folder: `-m` imports the clone's own packages."""
    env = {**os.environ, "COLUMNS": "400"}
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run([sys.executable, *map(str, argv)], cwd=clone, env=env, text=True,
                          capture_output=True, timeout=timeout, check=False)


def test_command_2_passes_where_command_1_ran(tmp_path: Path) -> None:
    clone = _copy(PROJECT, tmp_path / "clone")
    fake = write(tmp_path / "fake-python", f"#!{sys.executable}\n{FAKE}")
    fake.chmod(0o755)
    for sub in ("pids", "children"):
        (tmp_path / sub).mkdir()
    tiny = write(clone / "tiny.yaml", TINY)
    # command 1, its run and report parts: into the clone's ./results and ./report
    done = _in(clone, "-m", "orchestrator", "run", tiny.name, "--python", fake)
    assert done.returncode == 0, done.stderr
    assert finished_store(clone / "results") > 0
    done = _in(clone, "-m", "orchestrator", "plan", "experiments.yaml")
    assert done.returncode == 0 and "\n0 run, 0 skip, " in done.stderr, done.stderr  # all done
    done = _in(clone, "-m", "orchestrator", "report")
    assert done.returncode == 0, done.stderr
    assert (clone / "report" / "report.md").is_file()
    # command 2, in the same folder, on the tests that once read it
    # serial (`-n 0`): two tests do not pay for the workers pyproject's addopts would start
    done = _in(clone, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "0", *COMMAND_2,
               timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout, done.stdout[-2000:]


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "results")
    print(f"{target}: {finished_store(target)} runs recorded as finished")
