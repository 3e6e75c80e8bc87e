"""The outside programs the tests drive (an OpenSSH server and client, rsync, Slurm, munge,
headless Chromium): where each is looked for, the Debian package that installs it, and what a
test does when one is missing. Also README command 2's set-up step for them:

    python -m tests.parts [--dry-run]        # what `./setup.sh --tests` runs

installs the missing ones where it can (root with apt-get: `apt-get update` once, then one
`apt-get install`), else says which tests will be skipped and how to install their parts.
`--dry-run` (or SETUP_TESTS_DRY_RUN=1) says what it would install and installs nothing.

A test that needs a part calls `require_part(tool)`: with CI=true a missing part FAILS the test
(CI must run the real sshd, Slurm and browser tests, not pass without them); elsewhere the test
is skipped with "not run: ... (install with ...)" in pytest's summary. Standard library only at
import (setup.sh runs this before the tests, with the system's Python); pytest is imported only
by the functions that tests call.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn


@dataclass(frozen=True)
class Part:
    tool: str  # the program looked for
    package: str  # the Debian package that installs it
    tests: str  # who needs it, for messages


PARTS = (
    Part("sshd", "openssh-server", "the hosts tests (tests/hosts)"),
    Part("ssh", "openssh-client", "the hosts tests (tests/hosts)"),
    Part("rsync", "rsync", "the hosts tests (tests/hosts)"),
    Part("slurmctld", "slurm-wlm", "the Slurm tests (tests/hosts)"),
    Part("slurmd", "slurm-wlm", "the Slurm tests (tests/hosts)"),
    Part("sbatch", "slurm-wlm", "the Slurm tests (tests/hosts)"),
    Part("munged", "munge", "the Slurm tests (tests/hosts)"),
    Part("chromium", "chromium", "the report's browser tests"),
)
BY_TOOL = {part.tool: part for part in PARTS}
DRY_RUN_ENV = "SETUP_TESTS_DRY_RUN"


def in_ci() -> bool:
    """CI=true (as CI services and .ci/run set it): a missing part is a failure, not a skip."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def find(tool: str) -> str | None:
    """`tool` on PATH, or in the `sbin` beside a `bin` on PATH: Debian gives a user's shell
    /usr/bin but not /usr/sbin, where sshd, slurmctld and munged live. Only PATH's own folders
    and their siblings, so that a PATH without a part hides it (tests/test_readme_setup.py)."""
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not folder:
            continue
        here = Path(folder)
        candidates = [here / tool]
        if here.name == "bin":
            candidates.append(here.parent / "sbin" / tool)
        for path in candidates:
            if path.is_file() and os.access(path, os.X_OK):
                return str(path)
    return None


def install_hint(packages: list[str]) -> str:
    return (f"install with: apt-get install -y {' '.join(packages)}, "
            "or ./setup.sh --tests as root")


def missing(message: str) -> NoReturn:
    """A test cannot run for want of an outside part: fails in CI, is skipped elsewhere."""
    import pytest

    if in_ci():
        pytest.fail(f"{message} (CI=true: a missing part fails)", pytrace=False)
    pytest.skip(f"not run: {message}")


def require_part(tool: str) -> str:
    """The path of `tool` (one of PARTS), or the test fails (CI) or is skipped, saying why."""
    part = BY_TOOL[tool]
    found = find(tool)
    if found is None:
        missing(f"{tool} is missing; {part.tests} need it ({install_hint([part.package])})")
    return found


def chromium_command(profile: Path) -> list[str]:
    """Headless Chromium's command line, up to the URL and the action (`--screenshot=...`,
    `--dump-dom`, ...). `profile` is a folder of the caller's (a `tmp_path`): two Chromiums on one
    profile (two xdist workers) refuse each other. As root Chromium will not start without
    `--no-sandbox` ("Running as root without --no-sandbox is not supported"); as any other user
    its sandbox stays on."""
    command = [require_part("chromium"), "--headless", f"--user-data-dir={profile}",
               "--no-first-run", "--no-default-browser-check", "--disable-gpu"]
    if os.geteuid() == 0:
        command.append("--no-sandbox")
    return command


@dataclass(frozen=True)
class Decision:
    missing: list[Part]
    install: bool  # whether apt-get installs them here
    why_not: str  # why not, when not


def decide() -> Decision:
    lacking = [part for part in PARTS if find(part.tool) is None]
    if not lacking:
        return Decision(lacking, False, "")
    if os.geteuid() != 0:
        return Decision(lacking, False, "not root")
    if find("apt-get") is None:
        return Decision(lacking, False, "no apt-get here")
    return Decision(lacking, True, "")


def packages(parts: list[Part]) -> list[str]:
    return list(dict.fromkeys(part.package for part in parts))


def apt_install(names: list[str]) -> bool:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for argv in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *names]):
        done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=False)
        if done.returncode != 0:
            say(f"'{' '.join(argv)}' failed (exit {done.returncode})")
            return False
    return True


def say(line: str) -> None:
    print(f"setup.sh --tests: {line}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.parts",
                                     description="install the tests' outside programs")
    parser.add_argument("--dry-run", action="store_true", help="say what, install nothing")
    args = parser.parse_args(argv)
    dry_run = args.dry_run or os.environ.get(DRY_RUN_ENV, "") not in ("", "0")
    decision = decide()
    lacking = decision.missing
    if decision.install:
        names = " ".join(packages(lacking))
        if dry_run:
            say(f"would install {names} (apt-get; a dry run installs nothing)")
            lacking = []
        else:
            say(f"installing {names} (apt-get)")
            if apt_install(packages(lacking)):
                say(f"installed {names}")
            lacking = [part for part in lacking if find(part.tool) is None]
    outcome = "FAIL (CI=true)" if in_ci() else "be skipped"
    for part in lacking:
        say(f"{part.tool} missing ({decision.why_not or 'not installed'}): {part.tests} will "
            f"{outcome} ({install_hint([part.package])})")
    if os.geteuid() != 0:
        say(f"not root: the Slurm tests (they start munged and slurmd) will {outcome}")
    if not decision.missing:
        say(f"found {', '.join(part.tool for part in PARTS)}")
    return 1 if in_ci() and (lacking or os.geteuid() != 0) else 0


if __name__ == "__main__":
    sys.exit(main())
