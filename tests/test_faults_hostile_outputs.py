"""Records and leftovers that mislead, provoked for real: a manifest planted
in an output folder, a staging folder a SIGKILLed report left, an export cut by a full disk
(a small tmpfs in a private mount namespace), a newline in an env value in compare.md."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from orchestrator.cli import main
from orchestrator.data import outputs

from .conftest import PROJECT, dead_within
from .report.fake_stores import store

ONE = [{"with sync": np.full(20, 1e-3)}]


def test_a_planted_manifest_makes_compare_delete_nothing(tmp_path: Path) -> None:
    a, b = store(tmp_path / "a", ONE), store(tmp_path / "b", [{"with sync": np.full(20, 2e-3)}])
    out = tmp_path / "cmp"
    out.mkdir()
    precious = out / "thesis.tex"
    precious.write_text("a user's work\n")
    manifest = {"written_by": "compare", "files": {
        "thesis.tex": hashlib.sha256(precious.read_bytes()).hexdigest()}}
    (out / outputs.manifest_name("compare")).write_text(json.dumps(manifest))
    assert main(["compare", str(a), str(b), "--out", str(out)]) == 0
    assert precious.read_text() == "a user's work\n"
    # its own manifest names each file it wrote with its identity
    ours = json.loads((out / outputs.manifest_name("compare")).read_text())
    assert set(ours["identities"]) == set(ours["files"])


NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
# another user writes a record of ours naming the victim's files, as our own would
PLANT = """import hashlib, json, os, sys
folder, name, kind = sys.argv[1], sys.argv[2], sys.argv[3]
files, ids = {}, {}
for n in sys.argv[4:]:
    st = os.stat(os.path.join(folder, n))
    files[n] = hashlib.sha256(open(os.path.join(folder, n), "rb").read()).hexdigest()
    ids[n] = [st.st_dev, st.st_ino, st.st_mtime_ns]
if kind == "manifest":
    record = {"written_by": "report", "files": files, "identities": ids}
else:
    record = {"schema_version": 6, "figures": {"file": sys.argv[4]},
              "samples": {"file": sys.argv[5]}, "written": files}
open(os.path.join(folder, name), "w").write(json.dumps(record))
"""


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder others may write too (a team's folder, mode 777, no sticky bit)."""
    if shutil.which("setpriv") is None or os.geteuid() != 0:
        pytest.skip("needs root and setpriv to act as a second user")
    place = Path(tempfile.mkdtemp(prefix="i46-out-", dir="/tmp"))
    place.chmod(0o777)
    yield place
    shutil.rmtree(place)


def test_another_users_manifest_or_sidecar_names_nothing_of_ours(
        tmp_path: Path, shared: Path) -> None:
    """A manifest planted by another user in a folder others may write, naming the user's own
    files with their digests and identities (anyone may stat and read them), made `report
    --out` overwrite the user's report.md and delete thesis.txt as "stale"; a planted export
    sidecar made `export --csv` overwrite the user's CSV. A record of ours, and any file
    overwritten or removed as ours, must belong to this user: refused in one line."""
    a = store(tmp_path / "a", ONE)
    out = shared / "team"
    out.mkdir()
    out.chmod(0o777)
    (out / "thesis.txt").write_text("a user's work\n")
    (out / "report.md").write_text("the user's own notes\n")
    subprocess.run([*NOBODY, sys.executable, "-c", PLANT, str(out), ".orchestrator-report.json",
                    "manifest", "thesis.txt", "report.md"], check=True)
    assert main(["report", str(a), "--out", str(out)]) == 2
    assert (out / "thesis.txt").read_text() == "a user's work\n"
    assert (out / "report.md").read_text() == "the user's own notes\n"

    (out / "e.csv").write_text("the user's table\n")
    (out / "e.samples.csv").write_text("the user's samples\n")
    subprocess.run([*NOBODY, sys.executable, "-c", PLANT, str(out), "e.schema.json", "sidecar",
                    "e.csv", "e.samples.csv"], check=True)
    assert main(["export", str(a), "--csv", str(out / "e.csv")]) == 2
    assert (out / "e.csv").read_text() == "the user's table\n"
    assert (out / "e.samples.csv").read_text() == "the user's samples\n"


def test_our_own_stale_file_still_goes(tmp_path: Path) -> None:
    out = tmp_path / "rep"

    def render(names: dict[str, str]):
        def write(stage: Path) -> list[Path]:
            for name, text in names.items():
                (stage / name).write_text(text)
            return [stage / n for n in names]
        return write

    outputs.write_folder(out, "--out", "report", outputs.NO_INPUTS,
                         render({"a.csv": "1", "b.csv": "2"}))
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)  # a copied folder: same names, digests, manifest
    outputs.write_folder(out, "--out", "report", outputs.NO_INPUTS, render({"a.csv": "3"}))
    assert sorted(p.name for p in out.iterdir()) == [".orchestrator-report.json", "a.csv"]
    # in the copy the manifest's identities are not the files': nothing of it is removed
    outputs.write_folder(copy, "--out", "report", outputs.NO_INPUTS, render({"a.csv": "3"}))
    assert (copy / "b.csv").read_text() == "2"


def test_a_killed_reports_staging_folder_is_removed_next_time(tmp_path: Path) -> None:
    a = store(tmp_path / "a", ONE)
    out = tmp_path / "rep"
    assert main(["report", str(a), "--out", str(out)]) == 0
    # a report SIGKILLed while it rendered: its staging folder, its pid in the name
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    stage = out / f".orchestrator-stage-{child.pid}-abcd1234"
    stage.mkdir()
    (stage / "report.md").write_text("half")
    live = out / f".orchestrator-stage-{os.getpid()}-efgh5678"  # a live writer's: kept
    live.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")
    planted = out / ".orchestrator-stage-999999999-zzzz9999"  # a link, not our folder
    planted.symlink_to(elsewhere)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert dead_within(child.pid, 10)
    assert main(["report", str(a), "--out", str(out)]) == 0
    assert not stage.exists() and live.is_dir() and planted.is_symlink()
    assert (elsewhere / "keep.txt").read_text() == "keep"


def test_a_newline_in_an_env_value_stays_in_its_table_row(tmp_path: Path) -> None:
    a = store(tmp_path / "a", ONE, env=(("MY_FLAG", "one\ntwo"),))
    b = store(tmp_path / "b", [{"with sync": np.full(20, 2e-3)}], env=(("MY_FLAG", "one"),))
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "cmp")]) == 0
    text = (tmp_path / "cmp" / "compare.md").read_text()
    row = next(line for line in text.splitlines() if "MY_FLAG" in line)
    assert row.startswith("| ") and row.endswith(" |") and "one\\ntwo" in row
    assert "\ntwo" not in text


FULL_DISK = """
import sys
from pathlib import Path
sys.path.insert(0, {project!r})
from orchestrator.cli import main
disk, small, other = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
csv = disk / "x.csv"
assert main(["export", small, "--csv", str(csv)]) == 0
first = {{p.name: p.read_bytes() for p in disk.iterdir()}}
figures = len(csv.read_bytes())
filler = disk / "filler"
with open(filler, "wb", buffering=0) as f:  # fill the disk, then room for the figures only
    try:
        while True:
            f.write(b"x" * 4096)
    except OSError:
        pass
size = filler.stat().st_size
with open(filler, "r+b") as f:
    f.truncate(max(0, size - (figures // 4096 + 2) * 4096))
code = main(["export", other, "--csv", str(csv)])
print("CUT", code)
left = {{p.name: p.read_bytes() for p in disk.iterdir() if p.name != "filler"}}
print("SAME", left == first)
filler.unlink()
print("AGAIN", main(["export", other, "--csv", str(csv)]))
"""


def test_an_export_cut_by_a_full_disk_leaves_the_last_export_and_is_redone(
        tmp_path: Path) -> None:
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-rm", "true"], capture_output=True, check=False).returncode != 0:
        pytest.skip("needs unshare -rm (a private mount namespace) for a small tmpfs")
    small = store(tmp_path / "small", ONE)
    rng = np.random.default_rng(1)
    other = store(tmp_path / "other", [{"with sync": 1e-3 * (1 + rng.random(5000))}])
    disk = tmp_path / "disk"
    disk.mkdir()
    script = tmp_path / "full.py"
    script.write_text(FULL_DISK.format(project=str(PROJECT)))
    done = subprocess.run(["unshare", "-rm", "sh", "-c",
                           f'mount -t tmpfs -o size=1m tmpfs "{disk}" && exec "$0" "$@"',
                           sys.executable, str(script), str(disk), str(small), str(other)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "CUT 2" in done.stdout, done.stdout + done.stderr
    assert "No space left on device" in done.stderr
    assert "SAME True" in done.stdout  # nothing of the last export replaced
    assert "AGAIN 0" in done.stdout, done.stderr
    assert "Traceback" not in done.stderr


def test_a_full_tmpdir_while_reading_an_older_store_names_the_tmpdir(tmp_path: Path) -> None:
    """docs/results/h200-2026-11-30 is format 1: read through a migrated copy in TMPDIR; a
    TMPDIR too small for it (a 256 KiB tmpfs) is named, the store is not blamed."""
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-rm", "true"], capture_output=True, check=False).returncode != 0:
        pytest.skip("needs unshare -rm (a private mount namespace) for a small tmpfs")
    old = PROJECT / "docs" / "results" / "h200-2026-11-30"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "rep"
    done = subprocess.run(["unshare", "-rm", "sh", "-c",
                           f'mount -t tmpfs -o size=256k tmpfs "{tmp}" && exec "$0" "$@"',
                           sys.executable, "-m", "orchestrator", "report", str(old), "--out",
                           str(out)], cwd=PROJECT, env={**os.environ, "TMPDIR": str(tmp)},
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert f"the temporary folder {tmp}" in done.stderr and "set TMPDIR" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


FLEX_ONLY = """version: 1
defaults: {shape: [8, 8], reps: 3, timeout_s: 60}
builds:
  template: {crate: exec-cpu}
experiments:
  cpu:
    mode: mm
    targets:
      - {program: burn, build: template, device: flex, threads: [1]}
"""


def test_build_and_run_onto_a_full_build_folder_are_one_line(tmp_path: Path) -> None:
    """`build/` on a full disk (a 64 KiB tmpfs, filled): installing the binary was an
    `OSError: [Errno 28]` traceback from `build` and `run`; now the build fails in one line
    that names the folder, and the sweep records its runs as failed (exit 1). A copy of the
    project (its own build/) and a fake cargo on PATH: no real build."""
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-rm", "true"], capture_output=True, check=False).returncode != 0:
        pytest.skip("needs unshare -rm (a private mount namespace) for a small tmpfs")
    from .programs.test_cargo import FAKE_CARGO
    project = tmp_path / "project"
    shutil.copytree(PROJECT / "orchestrator", project / "orchestrator",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(PROJECT / "bench_rust", project / "bench_rust",
                    ignore=shutil.ignore_patterns("target"))
    (project / "build").mkdir()
    (project / "exp.yaml").write_text(FLEX_ONLY)
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "cargo").write_text(FAKE_CARGO.format(python=sys.executable))
    (tools / "cargo").chmod(0o755)
    env = {**os.environ, "PATH": f"{tools}:{os.environ['PATH']}"}
    script = ('mount -t tmpfs -o size=64k tmpfs build && (dd if=/dev/zero of=build/filler '
              'bs=4k 2>/dev/null; true) && "$0" -m orchestrator build exp.yaml; echo "rc=$?"; '
              '"$0" -m orchestrator run exp.yaml --results "$1" --quiet; echo "rc=$?"')
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script, sys.executable,
                           str(tmp_path / "results")], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    out = done.stdout + done.stderr
    assert "Traceback" not in out and "rc=1\n" in done.stdout and done.stdout.count("rc=1") == 2
    said = (f"failed template: cannot install the binary into {project}/build/bin/exec-cpu: "
            "No space left on device")
    assert said in out, out
    assert (tmp_path / "results" / "results.sqlite").exists()


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_an_export_removes_what_a_killed_export_left_and_nothing_else(tmp_path: Path) -> None:
    """SIGKILL during `export` left full-size `.e.csv.*` temporaries that no later export
    removed. Each now carries its writer's pid; the next export removes those whose writer
    is dead, of this user, plain files, and nothing else beside them."""
    results = store(tmp_path / "s", ONE)
    out = tmp_path / "out"
    out.mkdir()
    dead = _dead_pid()
    precious = tmp_path / "precious"
    precious.write_text("keep")
    left = [f".e.csv.{dead}-abcd1234", f".e.samples.csv.{dead}-abcd1234"]
    kept = [f".e.csv.{os.getpid()}-abcd1234",  # a live writer's (this process)
            ".e.csv.abcd1234",  # an older name: whose it was cannot be told
            f".e.csv.{dead}-abcd1234x", f".other.csv.{dead}-abcd1234"]
    for name in left + kept:
        (out / name).write_bytes(b"x" * 1000)
    os.symlink(precious, out / f".e.csv.{dead}-link1234")
    kept.append(f".e.csv.{dead}-link1234")
    assert main(["export", str(results), "--csv", str(out / "e.csv")]) == 0
    names = {p.name for p in out.iterdir()}
    assert not set(left) & names and set(kept) <= names
    assert {"e.csv", "e.samples.csv"} <= names
    assert precious.read_text() == "keep"
    # an export in progress names its temporaries with its own pid
    assert outputs.stage_file(out / "x.csv", "--csv", lambda p: p.write_text("1")).name \
        .startswith(f".x.csv.{os.getpid()}-")
