"""The CI recipe end to end (docs/ci/timing.yml, docs/history.md): its `sweep` and `gate` steps,
as the workflow file writes them, after each of three commits of a throwaway git repository
holding a small CPU experiments file (torch at 128², 3 processes of 20 reps, one thread). The
second commit changes nothing measured (an A/A step: the gate passes, no change point); the
third sets `MKL_CBWR: COMPATIBLE` for the target (MKL off its AVX2 kernels: 2.5-2.8x here,
measured before this test was written), and the gate fails naming that variable. Real runs."""

from __future__ import annotations

import csv
import os
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from ...conftest import PROJECT
from ..compare.test_aa import STEADY

WORKFLOW = PROJECT / "docs" / "ci" / "timing.yml"
TIMING = """\
version: 1
defaults: {shape: [128, 128], reps: 20, timeout_s: 300}
experiments:
  torch-cpu:
    mode: mm
    threads: [1]
    processes: 3
    targets:
      - {program: torch, device: cpu}
"""
SLOW = TIMING + "    env: {MKL_CBWR: COMPATIBLE}\n"


def _step(name: str) -> list[str]:
    """The workflow step's command line, its variables as the job's env sets them."""
    steps = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["timing"]["steps"]
    command = next(s["run"] for s in steps if s.get("id") == name)
    return shlex.split(os.path.expandvars(command))


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"})


def _push(repo: Path, files: dict[str, str], message: str) -> int:
    """A commit, then the workflow's sweep and gate in the checkout; the gate's exit code."""
    for name, text in files.items():
        (repo / name).write_text(text, encoding="utf-8")
    _git(repo, "add", *files)
    _git(repo, "commit", "-q", "-m", message)
    sweep = subprocess.run(_step("sweep"), cwd=repo, capture_output=True, text=True,
                           timeout=600)
    assert sweep.returncode == 0, sweep.stderr[-2000:]
    gate = subprocess.run(_step("gate"), cwd=repo, capture_output=True, text=True, timeout=300)
    assert gate.returncode in (0, 1), gate.stderr[-2000:]
    return gate.returncode


@pytest.mark.slow
@pytest.mark.torch
def test_the_ci_recipe_fails_on_the_commit_that_slows_torch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCHESTRATOR", str(PROJECT))
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    assert _push(repo, {"timing.yaml": TIMING}, "timing: torch cpu 128") == 0  # one sweep
    assert _push(repo, {"README.md": "a commit that measures nothing new\n"}, "readme") == 0
    assert _push(repo, {"timing.yaml": SLOW}, "MKL in its reproducible mode") == 1

    with (repo / "timing-history" / "history.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    changed = [r for r in rows if r["verdict"] in ("slower", "faster")]
    assert {r["sweep_index"] for r in changed} == {"2"}, changed  # none in the A/A step
    assert {r["verdict"] for r in changed} == {"slower"}
    steady = [r for r in changed if r["figure"].endswith(STEADY)]
    assert steady, "no steady torch figure found slower"
    assert all(float(r["ratio_lo"]) > 1.05 for r in changed)
    assert all("experiment env: none → MKL_CBWR=COMPATIBLE" in r["what_changed"]
               for r in changed)
    md = (repo / "timing-history" / "history.md").read_text(encoding="utf-8")
    assert "MKL_CBWR=COMPATIBLE" in md.split("## Change points", 1)[1]
    page = (repo / "timing-history" / "history.html").read_text(encoding="utf-8")
    assert "MKL_CBWR=COMPATIBLE" in page.split(">Change points</h2>", 1)[1]
