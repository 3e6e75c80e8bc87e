"""tests/parts.py: where the tests' outside programs are found, what `./setup.sh --tests` decides
to do about missing ones, a missing part as a skip (a failure with CI=true), and headless
Chromium's command line, run for real on a small page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from . import parts


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n", encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def bare_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH = one empty `bin` folder (no part on it) and no CI variable."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.delenv("CI", raising=False)
    return folder


def test_a_part_is_found_on_path_or_in_the_sbin_beside_a_bin(tmp_path: Path, bare_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch):
    on_path = executable(bare_path / "rsync")
    in_sbin = executable(tmp_path / "sbin" / "sshd")
    executable(tmp_path / "elsewhere" / "slurmctld")
    (bare_path / "munged").write_text("not executable", encoding="utf-8")
    assert parts.find("rsync") == str(on_path)
    assert parts.find("sshd") == str(in_sbin)
    assert parts.find("slurmctld") is None
    assert parts.find("munged") is None
    # an `sbin` is looked in only beside a folder named `bin`
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))
    assert parts.find("sshd") is None
    assert parts.find("slurmctld") == str(tmp_path / "elsewhere" / "slurmctld")


def test_a_missing_part_skips_its_test_naming_the_package(bare_path: Path) -> None:
    with pytest.raises(pytest.skip.Exception) as skipped:
        parts.require_part("slurmctld")
    assert str(skipped.value) == (
        "not run: slurmctld is missing; the Slurm tests (tests/hosts) need it (install with: "
        "apt-get install -y slurm-wlm, or ./setup.sh --tests as root)")


def test_with_ci_true_a_missing_part_fails(bare_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception) as failed:
        parts.require_part("chromium")
    assert "chromium is missing; the report's browser tests need it" in str(failed.value)
    assert "apt-get install -y chromium" in str(failed.value)
    assert "CI=true: a missing part fails" in str(failed.value)


def test_a_part_found_is_its_path(bare_path: Path) -> None:
    sbatch = executable(bare_path / "sbatch")
    assert parts.require_part("sbatch") == str(sbatch)


@pytest.mark.parametrize(("euid", "apt", "install", "why_not"), [
    (0, True, True, ""),
    (0, False, False, "no apt-get here"),
    (1000, True, False, "not root"),
])
def test_setup_installs_only_as_root_with_apt_get(
        bare_path: Path, monkeypatch: pytest.MonkeyPatch, euid: int, apt: bool, install: bool,
        why_not: str) -> None:
    monkeypatch.setattr(parts.os, "geteuid", lambda: euid)
    executable(bare_path / "rsync")
    if apt:
        executable(bare_path / "apt-get")
    decision = parts.decide()
    assert [part.tool for part in decision.missing] == [
        "sshd", "ssh", "slurmctld", "slurmd", "sbatch", "munged", "chromium"]
    assert (decision.install, decision.why_not) == (install, why_not)
    assert parts.packages(decision.missing) == [
        "openssh-server", "openssh-client", "slurm-wlm", "munge", "chromium"]


def test_nothing_missing_nothing_to_install(bare_path: Path) -> None:
    for part in parts.PARTS:
        executable(bare_path / part.tool)
    assert parts.decide() == parts.Decision([], False, "")


def test_a_dry_run_says_what_it_would_install_and_installs_nothing(
        bare_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(parts.os, "geteuid", lambda: 0)
    for tool in ("sshd", "ssh", "rsync", "slurmd", "sbatch", "munged"):
        executable(bare_path / tool)
    apt = bare_path / "apt-get"
    apt.write_text(f"#!/bin/sh\ntouch {bare_path / 'apt-ran'}\nexit 1\n", encoding="utf-8")
    apt.chmod(0o755)
    monkeypatch.setenv("CI", "true")  # what it would install is no failure
    assert parts.main(["--dry-run"]) == 0
    err = capsys.readouterr().err
    assert err == ("setup.sh --tests: would install slurm-wlm chromium (apt-get; a dry run "
                   "installs nothing)\n")
    assert not (bare_path / "apt-ran").exists()


def test_what_cannot_be_installed_is_said_skipped_or_failed_in_ci(
        bare_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(parts.os, "geteuid", lambda: 0)  # root, but no apt-get
    for tool in ("sshd", "ssh", "rsync", "slurmd", "sbatch", "munged"):
        executable(bare_path / tool)
    assert parts.main([]) == 0
    err = capsys.readouterr().err
    assert ("slurmctld missing (no apt-get here): the Slurm tests (tests/hosts) will be skipped "
            "(install with: apt-get install -y slurm-wlm, or ./setup.sh --tests as root)") in err
    assert "chromium missing (no apt-get here): the report's browser tests will be skipped" in err
    monkeypatch.setenv("CI", "true")
    assert parts.main([]) == 1
    assert "the report's browser tests will FAIL (CI=true)" in capsys.readouterr().err


def test_not_root_the_slurm_tests_are_said_skipped(
        bare_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(parts.os, "geteuid", lambda: 1000)
    for part in parts.PARTS:
        executable(bare_path / part.tool)
    assert parts.main([]) == 0
    err = capsys.readouterr().err
    assert "not root: the Slurm tests (they start munged and slurmd) will be skipped" in err
    monkeypatch.setenv("CI", "true")
    assert parts.main([]) == 1


@pytest.mark.parametrize(("euid", "sandboxed"), [(0, False), (1000, True)])
def test_chromium_runs_without_its_sandbox_only_as_root(
        bare_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, euid: int,
        sandboxed: bool) -> None:
    monkeypatch.setattr(parts.os, "geteuid", lambda: euid)
    binary = executable(bare_path / "chromium")
    command = parts.chromium_command(tmp_path / "profile")
    assert command[:3] == [str(binary), "--headless", f"--user-data-dir={tmp_path / 'profile'}"]
    assert ("--no-sandbox" not in command) is sandboxed


@pytest.mark.slow
def test_headless_chromium_runs_a_pages_script(chromium: list[str], tmp_path: Path) -> None:
    """The real browser, as the report's browser tests drive it: the page's script ran."""
    page = tmp_path / "page.html"
    page.write_text("<html><body><script>document.body.textContent = 'sum=' + (2 + 3)"
                    "</script></body></html>", encoding="utf-8")
    done = subprocess.run([*chromium, "--dump-dom", page.as_uri()], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "<body>sum=5</body>" in done.stdout


def test_as_root_the_missing_parts_are_installed_with_one_update_and_one_install(
        bare_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """apt-get here is a stand-in that logs its arguments and 'installs' by making the tools
    (the real apt-get is the set-up's on a fresh machine, .ci/run's)."""
    monkeypatch.setattr(parts.os, "geteuid", lambda: 0)
    monkeypatch.setenv("CI", "true")
    for tool in ("sshd", "ssh", "rsync", "munged"):
        executable(bare_path / tool)
    log = bare_path.parent / "apt.log"
    made = [str(bare_path / tool) for tool in ("slurmctld", "slurmd", "sbatch", "chromium")]
    apt = bare_path / "apt-get"
    apt.write_text(f"""#!{sys.executable}
import os, sys
with open({str(log)!r}, "a") as log:
    log.write(os.environ.get("DEBIAN_FRONTEND", "") + " " + " ".join(sys.argv[1:]) + "\\n")
if sys.argv[1] == "install":
    for path in {made!r}:
        with open(path, "w") as tool:
            tool.write("#!/bin/sh\\n")
        os.chmod(path, 0o755)
""", encoding="utf-8")
    apt.chmod(0o755)
    assert parts.main([]) == 0
    assert log.read_text(encoding="utf-8").splitlines() == [
        "noninteractive update -qq", "noninteractive install -y -qq slurm-wlm chromium"]
    assert capsys.readouterr().err == ("setup.sh --tests: installing slurm-wlm chromium (apt-get)\n"
                                       "setup.sh --tests: installed slurm-wlm chromium\n")
    assert parts.require_part("chromium") == str(bare_path / "chromium")


def test_an_install_that_fails_is_said_and_its_parts_skipped(
        bare_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(parts.os, "geteuid", lambda: 0)
    for part in parts.PARTS:
        if part.tool != "chromium":
            executable(bare_path / part.tool)
    apt = bare_path / "apt-get"
    apt.write_text("#!/bin/sh\nexit 100\n", encoding="utf-8")  # no network, say
    apt.chmod(0o755)
    assert parts.main([]) == 0  # README command 2 goes on: the browser tests are skipped
    err = capsys.readouterr().err
    assert "'apt-get update -qq' failed (exit 100)" in err
    assert "chromium missing (not installed): the report's browser tests will be skipped" in err
