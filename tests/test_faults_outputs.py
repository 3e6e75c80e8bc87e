"""Fault suite, outputs: never write into a file the orchestrator did not create as what it is.

Provoked for real through the command line:
a results folder inside the cache a cold run deletes, `--csv`/`--out` onto the store, the log,
someone's file, a folder, a path under a file or an unwritable place, a report folder written
twice, a `.lock` that leads elsewhere, a `results.sqlite` that is another program's. Each must
be one line and exit 2 (or a failed run with its reason), with every byte a user had unchanged.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from .conftest import PROJECT
from .test_faults import (
    TORCH_CPU,
    Fake,
    ProjectCopy,
    cli,
    fake,  # noqa: F401 - the module's stand-in program, as a fixture here
    files_under,
    in_process,
    install_fake_burn,
    project_copy,  # noqa: F401 - a copy of the project that believes it has a GPU
    runs_of,
    write_yaml,
)

CHAPTER_LOG = PROJECT / "tests" / "data" / "chapter_listings.log"
ONE_RUN = {"version": 1, "defaults": {"shape": [8, 8], "reps": 3},
           "experiments": {"plain": {"mode": "mm", "targets": TORCH_CPU}}}


def one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, fake: Fake) -> Path:  # noqa: F811
    """A results folder with one finished sweep (the fake torch program)."""
    tmp = tmp_path_factory.mktemp("store")
    exp = write_yaml(tmp / "one.yaml", ONE_RUN)
    code, err = cli("run", exp, "--python", fake.path, "--results", tmp / "R", "--quiet")
    assert code == 0, err
    return tmp / "R"


@pytest.fixture
def results(store: Path, tmp_path: Path) -> Path:
    """A copy of that store to do hostile things next to."""
    copy = tmp_path / "R"
    shutil.copytree(store, copy, symlinks=True)
    return copy


# 1. a results folder inside the cache folder a cold run deletes ------------------------------
def burn_sweep(root: Path, cache: list[str], extra: dict | None = None) -> Path:
    return write_yaml(root / "burn.yaml", {
        "version": 1, "defaults": {"shape": [8, 8], "reps": 3},
        "builds": {"cpu": {"crate": "exec-cpu"}},
        "experiments": {"cached": {"mode": "mm", "cache": cache, "targets": [
            {"program": "burn", "build": "cpu", "device": "cuda"}]}, **(extra or {})}})


@pytest.mark.parametrize(("cache", "verb"), [(["cold"], "deletes"), (["warm"], "fills"),
                                             (["warm", "cold"], "fills")])
@pytest.mark.parametrize("through_link", [False, True])
def test_results_inside_the_cache_folder_is_refused_before_the_sweep(
        tmp_path: Path, project_copy: ProjectCopy, fake: Fake, cache: list[str],  # noqa: F811
        verb: str, through_link: bool) -> None:
    root, env = project_copy
    install_fake_burn(root, tmp_path)
    environment = root / "bench_rust" / "target" / "environment"
    results = environment / "res"
    # a sweep with no cache action may keep its store there: it is made, with one run
    plain = write_yaml(root / "plain.yaml", ONE_RUN)
    code, err = cli("run", plain, "--results", results, "--python", fake.path, cwd=root, env=env)
    assert code == 0, err
    (environment / "autotune").mkdir()
    (environment / "autotune" / "matmul.json").write_text("{}")
    if through_link:  # the same folder by another name: still inside
        (tmp_path / "elsewhere").symlink_to(root / "bench_rust" / "target")
        results = tmp_path / "elsewhere" / "environment" / "res"
    before, rows = files_under(environment), runs_of(results)
    code, err = cli("run", burn_sweep(root, cache), "--results", results, "--python", fake.path,
                    cwd=root, env=env)
    assert code == 2
    assert one_line(err) == (
        f"error: --results {results} is inside burn's cache folder {environment}, which a "
        f"planned run {verb} (cached: burn cpu cuda mm 8x8, {cache[0]} cache); choose a "
        "results folder outside it"), err
    assert files_under(environment) == before and runs_of(results) == rows


def test_the_cache_folder_itself_as_results_is_refused(
        tmp_path: Path, project_copy: ProjectCopy, fake: Fake) -> None:  # noqa: F811
    root, env = project_copy
    install_fake_burn(root, tmp_path)
    environment = root / "bench_rust" / "target" / "environment"
    code, err = cli("run", burn_sweep(root, ["cold"]), "--results", environment, "--python",
                    fake.path, cwd=root, env=env)
    assert code == 2 and "is inside burn's cache folder" in one_line(err)
    assert not environment.exists()


def test_a_cold_run_never_deletes_a_store_in_the_cache(
        tmp_path: Path, project_copy: ProjectCopy, fake: Fake) -> None:  # noqa: F811
    """Another sweep's store inside the cache folder: this sweep's cold run (its own results
    elsewhere) fails with the reason, the store is untouched, the sweep goes on."""
    root, env = project_copy
    install_fake_burn(root, tmp_path)
    environment = root / "bench_rust" / "target" / "environment"
    other = environment / "someone" / "res"
    plain = write_yaml(root / "plain.yaml", ONE_RUN)
    assert cli("run", plain, "--results", other, "--python", fake.path, cwd=root, env=env)[0] == 0
    before, rows = files_under(environment), runs_of(other)
    exp = burn_sweep(root, ["cold"], {"after": {"mode": "mm", "targets": TORCH_CPU}})
    code, err = cli("run", exp, "--results", tmp_path / "mine", "--python", fake.path, cwd=root,
                    env=env)
    assert code == 1, err
    mine = sorted((r["experiment"], r["status"], r["reason"])
                  for r in runs_of(tmp_path / "mine").values())
    assert mine == [("after", "ok", ""), (
        "cached", "failed", f"refusing to remove {environment}: it holds a results store "
                            f"({other / 'results.sqlite'})")]
    assert files_under(environment) == before and runs_of(other) == rows


# 2. export, parse, report, compare: never over an input or someone else's file ---------------
def bytes_of(*paths: Path) -> dict[Path, bytes | None]:
    return {p: p.read_bytes() if p.is_file() else None for p in paths}


@pytest.mark.parametrize("target", ["store", "symlink", "hardlink", "lock", "wal-name"])
def test_export_onto_its_own_store_is_refused(results: Path, tmp_path: Path,
                                              target: str) -> None:
    db = results / "results.sqlite"
    out = {"store": db, "lock": results / ".lock",
           "wal-name": results / "results.sqlite-wal",
           "symlink": tmp_path / "link.csv", "hardlink": tmp_path / "hard.csv"}[target]
    if target == "symlink":
        out.symlink_to(db)
    elif target == "hardlink":
        os.link(db, out)
    elif target == "wal-name":
        out.write_bytes(b"")  # as if a writer had it open
    kept = bytes_of(db, results / ".lock", out)
    code, err = cli("export", results, "--csv", out, timeout=60, memory_mib=1024)
    assert code == 2
    assert "is an input of this command" in one_line(err), err
    assert bytes_of(db, results / ".lock", out) == kept
    assert not out.with_name(out.stem + ".samples.csv").exists()


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink"])
def test_parse_onto_its_own_log_is_refused(tmp_path: Path, how: str) -> None:
    log = tmp_path / "run.log"
    shutil.copy(CHAPTER_LOG, log)
    out = {"same": log, "symlink": tmp_path / "out.csv", "hardlink": tmp_path / "out.csv"}[how]
    if how == "symlink":
        out.symlink_to(log)
    elif how == "hardlink":
        os.link(log, out)
    code, err = cli("parse", log, "--csv", out, timeout=60, memory_mib=1024)
    assert code == 2 and "is an input of this command" in one_line(err)
    assert log.read_bytes() == CHAPTER_LOG.read_bytes()


def test_export_keeps_to_its_own_files(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "data.csv"
    assert cli("export", results, "--csv", out, timeout=60, memory_mib=1024)[0] == 0
    sidecar = json.loads(out.with_name("data.schema.json").read_text())
    assert set(sidecar["written"]) == {"data.csv", "data.samples.csv"}
    assert cli("export", results, "--csv", out, timeout=60, memory_mib=1024)[0] == 0  # ours
    samples = out.with_name("data.samples.csv")
    samples.write_text("my edits\n")  # ours no more: a user changed it
    code, err = cli("export", results, "--csv", out, timeout=60, memory_mib=1024)
    assert code == 2 and one_line(err) == (
        f"error: --csv: {samples} was changed since an export of this orchestrator wrote "
        "it; not overwriting it (remove it or choose another path)")
    assert samples.read_text() == "my edits\n"


@pytest.mark.parametrize("existing", ["figures", "samples", "sidecar"])
def test_export_beside_someone_elses_files_writes_nothing(results: Path, tmp_path: Path,
                                                          existing: str) -> None:
    out = tmp_path / "mine.csv"
    theirs = {"figures": out, "samples": tmp_path / "mine.samples.csv",
              "sidecar": tmp_path / "mine.schema.json"}[existing]
    theirs.write_text("a user's file\n")
    code, err = cli("export", results, "--csv", out, timeout=60, memory_mib=1024)
    assert code == 2 and "not overwriting it" in one_line(err)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "R") == [theirs.name]
    assert theirs.read_text() == "a user's file\n"


@pytest.mark.parametrize(("where", "words"), [
    ("folder", "is a folder, not a file"), ("under-file", "is a file, not a folder"),
    ("proc", "cannot write into /proc"), ("proc-deep", "cannot create /proc/nowhere"),
    ("symlink-dangling", "is a symlink")])
@pytest.mark.parametrize("command", ["export", "parse"])
def test_csv_to_a_place_that_cannot_take_it(results: Path, tmp_path: Path, where: str,
                                            words: str, command: str) -> None:
    (tmp_path / "a-file").write_text("keep")
    out = {"folder": tmp_path, "under-file": tmp_path / "a-file" / "x.csv",
           "proc": Path("/proc/x.csv"), "proc-deep": Path("/proc/nowhere/x.csv"),
           "symlink-dangling": tmp_path / "dangling.csv"}[where]
    if where == "symlink-dangling":
        out.symlink_to(tmp_path / "would-be-created.csv")
    source = results if command == "export" else CHAPTER_LOG
    code, err = cli(command, source, "--csv", out, timeout=60, memory_mib=1024)
    assert code == 2 and words in one_line(err), err
    assert (tmp_path / "a-file").read_text() == "keep"
    assert not (tmp_path / "would-be-created.csv").exists()


@pytest.mark.parametrize("command", ["report", "compare"])
def test_out_onto_an_existing_file_or_someone_elses_folder(results: Path, tmp_path: Path,
                                                          command: str) -> None:
    sources = [results] if command == "report" else [CHAPTER_LOG, CHAPTER_LOG]
    a_file = tmp_path / "notes.md"
    a_file.write_text("mine")
    code, err = cli(command, *sources, "--out", a_file, timeout=60, memory_mib=1024)
    assert code == 2 and "not a folder" in one_line(err), err
    assert a_file.read_text() == "mine"
    folder = tmp_path / "theirs"
    folder.mkdir()
    name = "report.md" if command == "report" else "compare.md"
    (folder / name).write_text("a user's notes\n")
    code, err = cli(command, *sources, "--out", folder, timeout=60, memory_mib=1024)
    assert code == 2 and one_line(err) == (
        f"error: --out: {folder / name} exists and was not written by {command}; not "
        "overwriting it (remove it or choose another path)")
    assert [p.name for p in folder.iterdir()] == [name]  # nothing left behind, not even staging
    assert (folder / name).read_text() == "a user's notes\n"


def test_report_out_onto_its_store_is_refused(results: Path) -> None:
    kept = bytes_of(results / "results.sqlite")
    code, err = cli("report", results, "--out", results / "results.sqlite", timeout=60,
                    memory_mib=1024)
    assert code == 2 and "is an input of this command" in one_line(err)
    assert bytes_of(results / "results.sqlite") == kept


# 3. a report folder written again keeps no stale files of ours, and every file of yours ------
def test_report_folder_drops_its_own_stale_files_only(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    code, err = cli("report", CHAPTER_LOG, "--out", out, timeout=60, memory_mib=1024)
    assert code == 0, err
    first = {p.name for p in out.iterdir()}
    assert {"methods.csv", "accuracy.csv", "methods.png"} <= first
    (out / "notes.txt").write_text("a user's notes")
    (out / "accuracy.csv").write_text("edited by hand\n")  # ours once, a user's now
    code, err = cli("report", results, "--out", out, timeout=60, memory_mib=1024)
    assert code == 0, err
    now = {p.name for p in out.iterdir()}
    manifest = json.loads((out / ".orchestrator-report.json").read_text())
    assert now == set(manifest["files"]) | {"notes.txt", "accuracy.csv",
                                            ".orchestrator-report.json"}
    assert "methods.png" not in now  # the store has no methods experiment: its plot went
    assert (out / "notes.txt").read_text() == "a user's notes"
    assert (out / "accuracy.csv").read_text() == "edited by hand\n"
    report = (out / "report.md").read_text()
    # every file there besides the user's is this report's (report.html: the same report as a
    # page, beside report.md, which does not name it)
    for name in now - {"notes.txt", "accuracy.csv", ".orchestrator-report.json", "report.md",
                       "report.html"}:
        assert name in report


# 4. a .lock that leads elsewhere ---------------------------------------------------------------
@pytest.mark.parametrize(("kind", "words"), [
    ("symlink", "is a symlink"), ("hardlink", "a hard link"), ("fifo", "not a regular file"),
    ("folder", "not a regular file"), ("foreign", "a file this orchestrator did not write")])
def test_lock_that_is_not_ours_is_never_written(results: Path, tmp_path: Path, fake: Fake,  # noqa: F811
                                                kind: str, words: str) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("a user's file\n")
    lock = results / ".lock"
    lock.unlink()
    if kind == "symlink":
        lock.symlink_to(precious)
    elif kind == "hardlink":
        os.link(precious, lock)
    elif kind == "fifo":
        os.mkfifo(lock)
    elif kind == "folder":
        lock.mkdir()
    else:
        lock.write_text("a user's file\n")
    kept, rows = bytes_of(results / "results.sqlite"), runs_of(results)
    exp = write_yaml(tmp_path / "one.yaml", ONE_RUN)
    code, err = cli("run", exp, "--python", fake.path, "--results", results, timeout=60)
    assert code == 2 and words in one_line(err) and str(lock) in err, err
    assert precious.read_text() == "a user's file\n"
    assert bytes_of(results / "results.sqlite") == kept and runs_of(results) == rows


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
@pytest.mark.parametrize("command", ["run", "export"])
def test_sqlite_files_beside_the_store_that_lead_elsewhere(results: Path, tmp_path: Path,
                                                           fake: Fake,  # noqa: F811
                                                           suffix: str, command: str) -> None:
    """SQLite writes its -wal (and -shm, and rolls back a -journal) through a symlink."""
    precious = tmp_path / "precious.txt"
    precious.write_text("a user's file\n")
    side = results / f"results.sqlite{suffix}"
    kept, rows = bytes_of(results / "results.sqlite"), runs_of(results)  # before: SQLite's
    side.unlink(missing_ok=True)  # own reader here would follow the link
    side.symlink_to(precious)
    exp = write_yaml(tmp_path / "one.yaml", ONE_RUN)
    argv = ["run", exp, "--python", fake.path, "--results", results] if command == "run" else \
        ["export", results, "--csv", tmp_path / "x.csv"]
    code, err = cli(*argv, timeout=60, memory_mib=1024)
    assert code == 2 and one_line(err) == (
        f"error: {side} is a symlink, not SQLite's own file of this store; not touching it: "
        "move it away or choose another results folder")
    assert precious.read_text() == "a user's file\n" and side.is_symlink()
    side.unlink()
    assert bytes_of(results / "results.sqlite") == kept and runs_of(results) == rows


# 5. a results.sqlite that is not ours ----------------------------------------------------------
def foreign_db(path: Path, how: str) -> None:
    if how == "text":
        path.write_text("not a database at all\n")
        return
    if how in ("folder", "fifo", "dangling"):
        {"folder": path.mkdir, "fifo": lambda: os.mkfifo(path),
         "dangling": lambda: path.symlink_to(path.with_name("elsewhere.sqlite"))}[how]()
        return
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
        db.execute("INSERT INTO contacts VALUES ('Ada', '555')")
        if how == "meta":  # a table named like ours, without our format_version
            db.execute("CREATE TABLE meta (key TEXT, value TEXT)")
        db.commit()


@pytest.mark.parametrize("how", ["sqlite", "meta", "text", "folder", "fifo", "dangling"])
@pytest.mark.parametrize("command", ["run", "export", "report", "plan"])
def test_another_programs_database_is_left_as_it_was(tmp_path: Path, fake: Fake,  # noqa: F811
                                                     how: str, command: str) -> None:
    folder = tmp_path / "R"
    folder.mkdir()
    foreign_db(folder / "results.sqlite", how)
    before = (folder / "results.sqlite").read_bytes() if how in ("sqlite", "meta", "text") \
        else None
    exp = write_yaml(tmp_path / "one.yaml", ONE_RUN)
    argv = {"run": ["run", exp, "--python", fake.path, "--results", folder],
            "plan": ["plan", exp, "--python", fake.path, "--results", folder],
            "export": ["export", folder, "--csv", tmp_path / "x.csv"],
            "report": ["report", folder, "--out", tmp_path / "rep"]}[command]
    # `run`, and a FIFO (a wrong open would block), as a bounded subprocess; the reading
    # commands on the other kinds in this process, where a subprocess adds only start-up time
    if command == "run" or how == "fifo":
        code, err = cli(*argv, timeout=60, memory_mib=1024)
    else:
        code, err = in_process(*argv)
    assert code == 2
    line = one_line(err)
    assert f"{folder / 'results.sqlite'} is " in line, line
    assert ("not a results store" if how != "dangling" else "a symlink to nothing") in line
    if before is not None:
        assert (folder / "results.sqlite").read_bytes() == before
    assert not (folder / "elsewhere.sqlite").exists()
    assert [p.name for p in folder.iterdir()] == ["results.sqlite"]  # no lock, no -wal left
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "rep").exists()
