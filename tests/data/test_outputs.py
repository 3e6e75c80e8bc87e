"""Where a command may write (orchestrator/data/outputs.py): new paths, its own earlier files,
never an input, a symlink, a folder given as a file, or someone else's file."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator.data import outputs
from orchestrator.errors import InputError

MINE = "the tester"


def test_a_results_folder_stands_for_its_store_files(tmp_path: Path) -> None:
    (tmp_path / "R").mkdir()
    log = tmp_path / "run.log"
    log.write_text("cpu: device init 1.000ms\n")
    inputs = outputs.Inputs.of([tmp_path / "R", log])
    db = tmp_path / "R" / "results.sqlite"
    db.write_bytes(b"")
    (tmp_path / "link").symlink_to(db)
    os.link(log, tmp_path / "hard")
    assert inputs.holds(db) == db and inputs.holds(tmp_path / "R" / ".lock") is not None
    assert inputs.holds(tmp_path / "link") == db  # resolved
    assert inputs.holds(tmp_path / "hard") == log  # the same inode
    assert inputs.holds(tmp_path / "R" / "report.md") is None
    assert inputs.holds(tmp_path / "other.csv") is None


def check(path: Path, ours: bool = False, inputs: outputs.Inputs = outputs.NO_INPUTS) -> None:
    outputs.check_target(path, "--csv", inputs, lambda p: ours, MINE)


def test_check_target_allows_new_paths_and_our_files_only(tmp_path: Path) -> None:
    check(tmp_path / "new.csv")
    (tmp_path / "old.csv").write_text("x")
    check(tmp_path / "old.csv", ours=True)
    with pytest.raises(InputError, match=f"exists and was not written by {MINE}; not "
                                         r"overwriting it \(remove it or choose another path\)"):
        check(tmp_path / "old.csv")
    (tmp_path / "link.csv").symlink_to(tmp_path / "nowhere.csv")
    with pytest.raises(InputError, match="is a symlink"):
        check(tmp_path / "link.csv", ours=True)
    with pytest.raises(InputError, match="is a folder, not a file"):
        check(tmp_path, ours=True)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(InputError, match="not a regular file"):
        check(tmp_path / "fifo", ours=True)
    with pytest.raises(InputError, match="is an input of this command"):
        check(tmp_path / "old.csv", ours=True, inputs=outputs.Inputs.of([tmp_path / "old.csv"]))


def test_prepare_folder_says_what_is_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("keep")
    with pytest.raises(InputError, match=f"{tmp_path / 'a-file'} is a file, not a folder"):
        outputs.prepare_folder(tmp_path / "a-file" / "sub", "--out")
    outputs.prepare_folder(tmp_path / "new" / "deeper", "--out")
    assert (tmp_path / "new" / "deeper").is_dir()


def test_replace_file_keeps_the_usual_mode_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    outputs.replace_file(path, "--csv", lambda p: p.write_text("a,b\n"))
    mask = os.umask(0o022)
    os.umask(mask)
    assert path.read_text() == "a,b\n" and path.stat().st_mode & 0o777 == 0o666 & ~mask

    def fails(p: Path) -> None:
        p.write_text("half")
        raise OSError(28, "No space left on device")

    with pytest.raises(InputError, match="No space left on device"):
        outputs.replace_file(path, "--csv", fails)
    assert path.read_text() == "a,b\n" and [p.name for p in tmp_path.iterdir()] == ["x.csv"]


def render(names: dict[str, str]) -> Callable[[Path], list[Path]]:
    """A render callable for write_folder that writes `names` (file -> text)."""
    def write(stage: Path) -> list[Path]:
        for name, text in names.items():
            (stage / name).write_text(text)
        return [stage / n for n in names]
    return write


def test_write_folder_removes_its_own_stale_files_and_nothing_else(tmp_path: Path) -> None:
    out = tmp_path / "rep"
    written = outputs.write_folder(out, "--out", MINE, outputs.NO_INPUTS,
                                   render({"a.csv": "1", "b.csv": "2", "c.csv": "3"}))
    assert [p.name for p in written] == ["a.csv", "b.csv", "c.csv"]
    manifest = json.loads((out / outputs.manifest_name(MINE)).read_text())
    assert manifest["written_by"] == MINE and set(manifest["files"]) == {"a.csv", "b.csv",
                                                                         "c.csv"}
    (out / "c.csv").write_text("edited")  # a user's now
    with pytest.raises(InputError, match=f"c.csv was changed since {MINE} wrote it"):
        outputs.write_folder(out, "--out", MINE, outputs.NO_INPUTS, render({"c.csv": "4"}))
    (out / "notes.txt").write_text("mine")
    outputs.write_folder(out, "--out", MINE, outputs.NO_INPUTS, render({"a.csv": "new"}))
    assert sorted(p.name for p in out.iterdir()) == [outputs.manifest_name(MINE), "a.csv",
                                                     "c.csv", "notes.txt"]
    assert (out / "a.csv").read_text() == "new" and (out / "c.csv").read_text() == "edited"


def test_a_late_refusal_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "rep"
    out.mkdir()
    (out / "b.csv").write_text("a user's table")
    with pytest.raises(InputError, match=r"b\.csv exists and was not written"):
        outputs.write_folder(out, "--out", MINE, outputs.NO_INPUTS,
                             render({"a.csv": "1", "b.csv": "2"}))
    assert [p.name for p in out.iterdir()] == ["b.csv"]  # no a.csv, no staging folder
    assert (out / "b.csv").read_text() == "a user's table"


def test_a_manifest_of_another_writer_or_garbage_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "rep"
    outputs.write_folder(out, "--out", "compare", outputs.NO_INPUTS, render({"a.csv": "1"}))
    (out / outputs.manifest_name("report")).write_text('{"written_by": "compare", "files": {}}')
    with pytest.raises(InputError, match="is not a manifest report wrote"):
        outputs.write_folder(out, "--out", "report", outputs.NO_INPUTS, render({"b.csv": "1"}))
    (out / outputs.manifest_name("compare")).write_text("{not json")
    with pytest.raises(InputError, match="is not a manifest compare wrote"):
        outputs.write_folder(out, "--out", "compare", outputs.NO_INPUTS, render({"a.csv": "1"}))
    assert (out / "a.csv").read_text() == "1"


def test_two_writers_share_a_folder_each_keeping_to_its_own_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    outputs.write_folder(out, "--out", "report", outputs.NO_INPUTS, render({"r.csv": "1"}))
    outputs.write_folder(out, "--out", "compare", outputs.NO_INPUTS, render({"c.csv": "2"}))
    outputs.write_folder(out, "--out", "report", outputs.NO_INPUTS, render({"s.csv": "3"}))
    assert sorted(p.name for p in out.iterdir()) == [
        ".orchestrator-compare.json", ".orchestrator-report.json", "c.csv", "s.csv"]
    with pytest.raises(InputError, match=r"c\.csv exists and was not written by report"):
        outputs.write_folder(out, "--out", "report", outputs.NO_INPUTS, render({"c.csv": "4"}))


def test_legacy_files_count_only_without_a_manifest(tmp_path: Path) -> None:
    out = tmp_path / "rep"
    out.mkdir()
    (out / "a.csv").write_text("from an old orchestrator")
    outputs.write_folder(out, "--out", MINE, outputs.NO_INPUTS, render({"a.csv": "1"}),
                         legacy=lambda p: p.name == "a.csv")
    assert (out / "a.csv").read_text() == "1"


@pytest.mark.parametrize("cut_after", [0, 1, 2])
def test_a_write_cut_between_its_renames_is_taken_up_by_the_next(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut_after: int) -> None:
    """Killed after `cut_after` of its three files were moved in: the
    folder holds new and old files under the old manifest; the next write knows them all as
    its own (they were pending), replaces them and removes what it no longer writes."""
    out = tmp_path / "rep"
    outputs.write_folder(out, "--out", MINE, outputs.NO_INPUTS,
                         render({"a.csv": "1", "b.csv": "2", "c.csv": "3", "old.csv": "x"}))
    real, moved = os.replace, []

    def replace(src: str | Path, dst: str | Path) -> None:
        if Path(src).parent.name.startswith(".orchestrator-stage-"):
            if len(moved) == cut_after:
                raise KeyboardInterrupt  # a kill between two renames
            moved.append(Path(dst).name)
        real(src, dst)

    monkeypatch.setattr(outputs.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        outputs.write_folder(out, "--out", MINE, outputs.NO_INPUTS,
                             render({"a.csv": "10", "b.csv": "20", "new.csv": "30"}))
    monkeypatch.setattr(outputs.os, "replace", real)
    assert len(moved) == cut_after
    outputs.write_folder(out, "--out", MINE, outputs.NO_INPUTS,
                         render({"a.csv": "100", "b.csv": "200"}))
    assert sorted(p.name for p in out.iterdir()) == [outputs.manifest_name(MINE), "a.csv",
                                                     "b.csv"]
    assert (out / "a.csv").read_text() == "100"
    manifest = json.loads((out / outputs.manifest_name(MINE)).read_text())
    assert "pending" not in manifest and set(manifest["files"]) == {"a.csv", "b.csv"}


def test_a_cut_write_leaves_no_licence_over_files_changed_since(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "rep"
    outputs.write_folder(out, "--out", MINE, outputs.NO_INPUTS, render({"a.csv": "1"}))
    real = os.replace

    def replace(src: str | Path, dst: str | Path) -> None:
        if Path(src).parent.name.startswith(".orchestrator-stage-"):
            raise KeyboardInterrupt
        real(src, dst)

    monkeypatch.setattr(outputs.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        outputs.write_folder(out, "--out", MINE, outputs.NO_INPUTS, render({"a.csv": "2"}))
    monkeypatch.setattr(outputs.os, "replace", real)
    (out / "a.csv").write_text("a user's edit")
    with pytest.raises(InputError, match=r"a\.csv was changed since"):
        outputs.write_folder(out, "--out", MINE, outputs.NO_INPUTS, render({"a.csv": "3"}))
