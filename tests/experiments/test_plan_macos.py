"""The plan for the chapter's Mac stays exactly the committed one (tests/data/plan_macos.txt).

`plan experiments.yaml --assume macos arm64 apple-silicon mps metal` on any machine: every row
(experiment, run, will, why) as `plan` prints it, with 'auto' threads as the chapter's M2 Max
resolves them (its 8 performance cores, from the transcribed sysctl in tests/data/macos/). A
change to experiments.yaml, to the plan or to --assume that changes the Mac's runs fails here;
if the change is meant, write the file again and review its diff:

    .venv/bin/python -m tests.experiments.test_plan_macos
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.cli import plan_rows
from orchestrator.experiments import config
from orchestrator.experiments.plan import expand
from orchestrator.run.detect import assumed
from orchestrator.run.machine import capabilities, cpu_count

from ..conftest import DATA, PROJECT
from ..transcripts import host

MAC = ["macos", "arm64", "apple-silicon", "mps", "metal"]
EXPECTED = DATA / "plan_macos.txt"
HEADER = """\
# plan experiments.yaml --assume macos arm64 apple-silicon mps metal, 'auto' threads = 8 (the
# M2 Max's performance cores). Written by `python -m tests.experiments.test_plan_macos`; compared
# exactly by tests/experiments/test_plan_macos.py. experiment | run | will | why
"""


def mac_rows(cores: int) -> list[tuple[str, str, str, str]]:
    cfg = config.load(PROJECT / "experiments.yaml")
    caps = assumed(capabilities(sys.executable), MAC)
    return plan_rows(expand(cfg, caps, cores), {})


def listing() -> str:
    cores = cpu_count(host("m2_max")[0])
    return HEADER + "".join(" | ".join(row).rstrip() + "\n" for row in mac_rows(cores))


def test_the_mac_plan_is_the_committed_one() -> None:
    assert listing() == EXPECTED.read_text(encoding="utf-8")


def test_the_mac_plan_is_the_chapters_runs() -> None:
    """What the chapter measured on its M2 Max runs (tests/data/chapter_listings.log);
    what it could not, skips; accelerate runs, expected to fail."""
    rows = mac_rows(8)
    runs = {f"{e}: {r}" for e, r, will, _ in rows if will == "run"}
    # methods stops at a stopping target: its series are planned with 10
    # processes, the chapter's one first; the size sweep's with 3
    assert {r for r in runs if r.startswith("methods: ")} == {
        f"methods: {what}, process {k}/10" for k in range(1, 11)
        for what in ("torch mps mm 1024x1024", "burn metal metal mm 1024x1024, warm cache")}
    runs = {re.sub(r", process 1/(10|3)$", "", r) for r in runs
            if not re.search(r"process ([2-9]|10)/(10|3)$", r)}
    # beyond the chapter: torch.compile on the Mac's CPU (Inductor's C++ backend)
    compiled = {run for run in runs if run.startswith("compile")}
    assert compiled and all(" torch cpu " in run for run in compiled), sorted(compiled)
    runs -= compiled
    chapter = {
        "methods: torch mps mm 1024x1024", "methods: burn metal metal mm 1024x1024, warm cache",
        "first-call: torch mps mm 1024x1024, process 1/2",
        "first-call: torch mps mm 1024x1024, process 2/2",
        "first-call: burn metal metal mm 1024x1024, cold cache, process 1/2",
        "first-call: burn metal metal mm 1024x1024, warm cache, process 2/2",
        "cpu: torch cpu mm 1024x1024, threads 1", "cpu: torch cpu mm 1024x1024, threads 8",
        "cpu: burn template flex mm 1024x1024, threads 1",
        "cpu: burn default flex mm 1024x1024, threads 1",
        "cpu: burn default flex mm 1024x1024, threads 8",
        "cpu: burn apple-amx flex mm 1024x1024, threads 1",
        "cpu: burn apple-amx flex mm 1024x1024, threads 8",
        "accuracy: torch cpu accuracy 256x256", "accuracy: torch mps accuracy 256x256",
        "accuracy: burn template flex accuracy 256x256",
        "accuracy: burn default flex accuracy 256x256",
        "accuracy: burn apple-amx flex accuracy 256x256",
        "accuracy: burn metal metal accuracy 256x256",
        "warmup: burn metal metal warm 1024x1024, cold cache, warm-up dropped",
        "warmup: burn metal metal warm 1024x1024, cold cache, warm-up kept",
        "warmup: burn metal metal warm 1024x1024, warm cache, warm-up dropped",
    }
    assert chapter <= runs, sorted(chapter - runs)
    # runs the chapter did not list: repeats of its runs (a cold series again, for the
    # spread), the fourth warm-up case, and the build it could not make
    beyond = {run for run in runs - chapter if re.sub(r", repeat \d+$", "", run) not in chapter
              and not run.startswith(("sizes: ", "sizes-cpu: ")) and ": jax " not in run
              and not run.endswith(" accuracy 1024x1024")}
    # beyond the chapter too: accuracy at the timed shape, each 256² one again
    at_1024 = {run for run in runs if run.endswith(" accuracy 1024x1024")}
    assert {run.replace("1024x1024", "256x256") for run in at_1024} == {
        run for run in runs if run.endswith(" accuracy 256x256")}
    # beyond the chapter too: JAX, a third framework, on the Mac's CPU only
    jax = {run for run in runs if ": jax " in run}
    assert jax and all(" jax cpu " in run for run in jax), sorted(jax)
    # beyond the chapter too: the size sweeps, on mps and metal and every CPU build
    sizes = {run for run in runs if run.startswith(("sizes: ", "sizes-cpu: "))}
    assert len(sizes) == 13 * 2 + 6 * 4, sorted(sizes)  # torch, template, default, amx
    assert beyond == {"warmup: burn metal metal warm 1024x1024, warm cache, warm-up kept",
                      "failed-build: burn accelerate flex mm 1024x1024"}, sorted(beyond)
    accelerate = [row for row in rows if row[0] == "failed-build"]
    assert accelerate == [("failed-build", "burn accelerate flex mm 1024x1024", "run",
                           "expected to fail")]
    skipped = {why for _, _, will, why in rows if will == "skip"}
    assert skipped, "nothing skipped on a Mac: the CUDA and x86-v4 runs must be"
    assert all(re.fullmatch(r"needs (an NVIDIA GPU|x86-64) \(not in --assume "
                            r"macos arm64 apple-silicon mps metal\)", why) for why in skipped)
    assert all(("x86-v4" in r or "cuda" in r) for _, r, will, _ in rows if will == "skip")


def test_the_plan_command_prints_the_same_rows(tmp_path: Path) -> None:
    """The command itself, as the Mac page (docs/mac.md) says to run it, in a folder of its own:
    the project's ./results (README command 1's sweep) would show its runs as `done`."""
    cores = cpu_count()
    if cores == 1:
        pytest.skip("one core: 'auto' collapses into threads 1, another set of rows")
    shutil.copy2(PROJECT / "experiments.yaml", tmp_path / "experiments.yaml")
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator", "plan", "experiments.yaml", "--assume", *MAC],
        capture_output=True, text=True, encoding="utf-8", timeout=600, cwd=tmp_path,
        env={**os.environ, "COLUMNS": "400"}, check=False)
    assert done.returncode == 0, done.stderr
    shown = [tuple(cell.strip() for cell in line.strip().strip("│").split("│"))
             for line in done.stderr.splitlines() if line.count("│") == 5]
    want = mac_rows(cores)
    assert shown == want
    counts = {w: sum(1 for r in want if r[2] == w) for w in ("run", "skip")}
    assert f"{counts['run']} run, {counts['skip']} skip, 0 done" in done.stderr
    assert f"'auto' threads are this machine's {cores} cores here" in done.stderr


if __name__ == "__main__":
    EXPECTED.write_text(listing(), encoding="utf-8")
    print(f"wrote {EXPECTED}")
