"""An older store is read through a migrated copy in the temporary folder; past
store_file.READ_COPY_CAP the copy is refused up front, in one line that names the limit and the
way to migrate in place (a 500 MB format-1 store took 6.5 GB of temporary
space, then failed). The committed format-1 store stands in, with the cap lowered."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from orchestrator import cli
from orchestrator.data import store_file

OLD = Path(__file__).resolve().parents[2] / "docs" / "results" / "h200-2026-11-30"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_old_store_over_the_cap_is_refused_in_one_line_and_left_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "old"
    shutil.copytree(OLD, folder)
    before = _digest(folder / "results.sqlite")
    monkeypatch.setattr(store_file, "READ_COPY_CAP", 1024)
    assert cli.main(["report", str(folder), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "is format 1 and" in err and "refused above" in err, err
    assert f"orchestrator reparse {folder}" in err
    assert "Traceback" not in err
    assert _digest(folder / "results.sqlite") == before
    assert not (tmp_path / "r" / "report.md").exists()


def test_the_way_out_the_line_names_migrates_in_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "old"
    shutil.copytree(OLD, folder)
    assert cli.main(["reparse", str(folder)]) == 0
    monkeypatch.setattr(store_file, "READ_COPY_CAP", 1024)  # no copy needed now: the cap is moot
    assert cli.main(["report", str(folder), "--out", str(tmp_path / "r")]) == 0
    assert (tmp_path / "r" / "report.md").is_file()
