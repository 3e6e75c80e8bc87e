"""What `history` writes over the committed H200 stores: history.md, history.csv and a PNG per
figure group, through the report's exporters; a file it did not write is never overwritten;
the command's exit codes."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.report.history import output
from orchestrator.report.history.course import History

from .conftest import H200


@pytest.fixture(scope="module")
def written(h200_history: History, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("history")
    output.write(h200_history, out)
    return out


def test_markdown_lists_sweeps_changes_and_each_groups_courses(written: Path,
                                                               h200_history: History) -> None:
    md = (written / "history.md").read_text(encoding="utf-8")
    assert md.startswith(output.MARK)
    assert "## Sweeps, oldest first" in md and "## Change points" in md
    assert "No change point" in md
    assert "OS: Linux 6.18.44-fc-v1147-gpu x86_64 → Linux 6.18.44-fc-v1252-gpu x86_64" in md
    for section in output.groups(h200_history):
        assert f"## {section}\n" in md
    pngs = sorted(p.name for p in written.glob("history-*.png"))
    assert pngs and all(f"]({name})" in md for name in pngs)
    assert all((written / n).read_bytes().startswith(b"\x89PNG") for n in pngs)


def test_csv_has_a_row_per_figure_and_sweep(written: Path, h200_history: History) -> None:
    with (written / "history.csv").open(newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert tuple(rows[0]) == output.CSV_FIELDS
    assert len(rows) == sum(len(c.points) for c in h200_history.courses)
    judged = [r for r in rows if r["verdict"]]
    assert len(judged) == sum(len(c.steps) for c in h200_history.courses)
    assert all(float(r["value_s"]) > 0 for r in rows)
    assert {r["sweep_index"] for r in rows} == {str(i) for i in range(len(H200))}


def test_a_file_it_did_not_write_is_refused(h200_history: History, tmp_path: Path) -> None:
    (tmp_path / "history.md").write_text("mine\n")
    with pytest.raises(Exception, match=r"history\.md"):
        output.write(h200_history, tmp_path)
    assert (tmp_path / "history.md").read_text() == "mine\n"


def test_the_command_exits_0_without_a_slowdown_at_the_last_step(tmp_path: Path) -> None:
    args = ["history", *map(str, H200[-2:]), "--out", str(tmp_path / "h")]
    assert main([*args, "--fail-on", "slower"]) == 0
    assert (tmp_path / "h" / "history.csv").is_file()


def test_one_sweep_is_a_history_with_nothing_to_judge(tmp_path: Path) -> None:
    assert main(["history", str(H200[-1]), "--out", str(tmp_path / "h"),
                 "--fail-on", "slower"]) == 0
    assert "No change point" in (tmp_path / "h" / "history.md").read_text()


def test_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", str(tmp_path / "nothing"), "--out", str(tmp_path / "h")]) == 2
    err = capsys.readouterr().err
    assert "no such results folder" in err and "Traceback" not in err


@pytest.mark.parametrize(("extra", "said"), [
    (["--min-effect", "0"], "--min-effect must be above 0"),
    (["--last", "1"], "--last must be 2 or more"),
])
def test_bad_options_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                            extra: list[str], said: str) -> None:
    assert main(["history", *map(str, H200[-2:]), "--out", str(tmp_path / "h"), *extra]) == 2
    assert said in capsys.readouterr().err


def test_it_never_writes_over_an_input(capsys: pytest.CaptureFixture[str]) -> None:
    store = H200[-1] / "results.sqlite"
    # the folder's other files are left out: a reader beside this test (another xdist worker)
    # may hold SQLite's -wal/-shm pair there for a moment
    def kept() -> dict[str, tuple[int, int]]:
        return {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in H200[-1].iterdir()
                if not p.name.endswith(("-wal", "-shm"))}
    before = kept()
    assert main(["history", *map(str, H200[-2:]), "--out", str(store)]) == 2
    assert "input of this command" in capsys.readouterr().err
    assert kept() == before


def test_history_html_in_chromium(written: Path, h200_history: History) -> None:
    """history.html beside history.md: the sweeps with what changed, the change points (or
    that there is none), each group's table with its plot inline; opened in a real browser."""
    from tests.report.chromium import file_url, open_page

    from ..test_html_report import CHECKS, _tables_in

    page = (written / "history.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>\n" + output.MARK)
    seen = open_page(file_url(written / "history.html"), CHECKS)
    assert seen.errors == []
    got = seen.result
    md = (written / "history.md").read_text(encoding="utf-8")
    assert got["tables"] == _tables_in(md) and all(n > 0 for n in got["rows"])
    pngs = sorted(p.name for p in written.glob("history-*.png"))
    assert sorted(p["name"] for p in got["plots"]) == pngs and all(p["ok"] for p in got["plots"])
    assert got["broken"] == [] and len(got["toc"]) == 2 + len(output.groups(h200_history))
    assert got["scripts"] == 0
    assert "OS: Linux 6.18.44-fc-v1147-gpu x86_64 → Linux 6.18.44-fc-v1252-gpu x86_64" in \
        got["text"]
    assert "No change point: no figure moved beyond the band" in got["text"]


def test_history_html_names_what_changed_at_a_change_point(
        every_h200_history: History, tmp_path: Path) -> None:
    """Every committed H200 store: the first-call A/A's real change is a row of the page's
    change points, with what else changed at that step, in the browser."""
    from tests.report.chromium import file_url, open_page

    from ..test_html_report import CHECKS

    output.write(every_h200_history, tmp_path)
    points = "[...document.querySelectorAll('#change-points ~ table tbody tr')].map(r => " \
        "r.innerText)"
    seen = open_page(file_url(tmp_path / "history.html"), f"({{...{CHECKS}, points: {points}}})")
    assert seen.errors == [] and seen.result["broken"] == []
    rows = seen.result["points"]
    assert len(rows) == len(every_h200_history.change_points()) > 0
    assert all("jax cpu" in r and "slower" in r and "complete → incomplete" in r for r in rows)
