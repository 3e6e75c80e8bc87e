"""Every command the manual's Mac page (docs/mac.md, once the README's "Running on a Mac"
section) tells a user to run, run here.

No Mac here, so each command is run in its Linux form: the same command line, on this machine's
data. The page's command lines are read from docs/mac.md and each must be one of `LINUX_FORM`'s
keys: a new command on the page without a test here fails. `./setup.sh` and `pytest` are what
CI runs (`.ci/run`); `run` on a small experiments file is tests/run/test_sweep.py (real builds).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
H200 = ROOT / "docs" / "results" / "h200-2026-12-01"
PAGE = ROOT / "docs" / "mac.md"
SECTION = "# Running on a Mac"

# command as the README writes it -> where its Linux form runs
LINUX_FORM = {
    "./setup.sh": ".ci/run (CI)",
    "./setup.sh --tests": ".ci/run (CI); what it decides: tests/test_readme_setup.py",
    ".venv/bin/python -m pytest": ".ci/run (CI)",
    ".venv/bin/python -m orchestrator run experiments.yaml": "tests/run/test_sweep.py",
    ".venv/bin/python -m orchestrator report": "test_report_of_a_store",
    ".venv/bin/python -m orchestrator plan experiments.yaml": "test_plan_of_the_experiments_file",
    ".venv/bin/python -m orchestrator plan experiments.yaml --assume macos arm64 apple-silicon mps "
    "metal": "tests/experiments/test_plan_macos.py",
    ".venv/bin/python -m orchestrator compare results-mac docs/results/h200-2026-12-01": (
        "test_compare_a_results_folder_with_the_h200"
    ),
    ".venv/bin/python -m orchestrator report results-mac docs/results/h200-2026-12-01": (
        "test_report_of_two_machines"
    ),
}


def section_commands() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    assert text.startswith(SECTION), f"docs/mac.md does not begin '{SECTION}'"
    body = text.split(SECTION, 1)[1]
    lines = [line.strip() for line in body.splitlines() if line.startswith("    ")]
    return [part.strip() for line in lines for part in line.split("&&")]


def orchestrator(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", *map(str, args)],
        capture_output=True, text=True, encoding="utf-8", timeout=600, cwd=cwd, check=False,
    )  # fmt: skip


def test_every_command_of_the_section_has_a_linux_form_here() -> None:
    commands = section_commands()
    assert commands, "the section shows no commands"
    unknown = [command for command in commands if command not in LINUX_FORM]
    assert not unknown, f"commands on the Mac page that no test runs: {unknown}"
    assert set(commands) == set(LINUX_FORM), "LINUX_FORM lists commands the page lost"


def test_plan_of_the_experiments_file(tmp_path: Path) -> None:
    """In a folder of its own: the project's ./results, if command 1 ran, is not this test's."""
    shutil.copy2(ROOT / "experiments.yaml", tmp_path / "experiments.yaml")
    done = orchestrator("plan", "experiments.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shown = done.stdout + done.stderr  # the table is console output, on stderr
    assert re.search(r"^\d+ run, \d+ skip, \d+ done$", shown, re.MULTILINE), shown
    for experiment in ("methods", "first-call", "cpu", "accuracy", "warmup", "failed-build"):
        assert re.search(rf"│ {re.escape(experiment)}\s+│", shown), experiment


@pytest.fixture
def results_mac(tmp_path: Path) -> Path:
    """A results folder standing in for the one a Mac user sends back (a copy of a real one)."""
    folder = tmp_path / "results-mac"
    shutil.copytree(H200, folder)
    return folder


def test_report_of_a_store(tmp_path: Path, results_mac: Path) -> None:
    # The headline's `report` reads ./results; here the folder is named, output to tmp.
    out = tmp_path / "report"
    done = orchestrator("report", results_mac, "--out", out)
    assert done.returncode == 0, done.stderr
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "GPUs: NVIDIA H200." in report
    assert "## 1. Timing methods on the accelerator" in report
    assert re.search(r"^\| with sync \| [0-9.]+µs \|", report, re.MULTILINE), report[:2000]
    assert (out / "methods.csv").is_file() and (out / "first_call.csv").is_file()


def test_compare_a_results_folder_with_the_h200(tmp_path: Path, results_mac: Path) -> None:
    done = orchestrator("compare", "results-mac", H200, "--out", tmp_path / "cmp", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # The same sweep on both sides: nothing can come out faster or slower.
    shown = done.stdout + done.stderr
    assert re.search(r"\b0 faster, 0 slower\b", shown), shown[-2000:]
    assert (tmp_path / "cmp" / "compare.md").is_file()


def test_report_of_two_machines(tmp_path: Path, results_mac: Path) -> None:
    out = tmp_path / "report"
    done = orchestrator("report", "results-mac", H200, "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (out / "report.md").is_file()
