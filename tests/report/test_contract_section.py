"""The README's recipe "a new report section = one registered section", as a contract.

A stand-in section, in a registry of this test's own (the default one is never changed), and
nothing else, appears in `report` (its heading, its table as Markdown and CSV, its finding, its
plot as PNG) and in `report A B` (its side table joined across the sides), in registry order.
The plot file names live in the section modules alone.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

from orchestrator import programs
from orchestrator.data.dataset import Dataset
from orchestrator.report import sections, writer
from orchestrator.report.compare import side_by_side
from orchestrator.report.sections import Context, Registered, Section, SideTable, entry, section
from orchestrator.report.tables import Table

from ..conftest import PROJECT
from .test_writer import chapter_dataset

LOG = PROJECT / "tests" / "data" / "chapter_listings.log"
WORDS = "A stand-in section"
TITLE = f"9. {WORDS}"  # numbered by the registry from its one number


def _labels(rows: pd.DataFrame, _data: Dataset) -> Table:
    counts = rows.groupby("label").size().reset_index(name="figures")
    return Table("stand_in", "Figures with sync per label", counts)


def _draw(rows: pd.DataFrame, _sets: object) -> Figure | str:
    figure = Figure(figsize=(3, 2))
    figure.add_subplot().bar(range(len(rows)), rows["value_s"].astype(float))
    return figure


def _with(*extra: Registered) -> programs.Registry:
    """This test's registry: the default one's sections and `extra`, in the report's order."""
    return programs.default_registry().with_sections(sections.including(*extra))


@pytest.fixture
def stand_in() -> Iterator[None]:
    @entry("stand_in", lambda ctx: ctx.fig[ctx.fig["method"] == "with_sync"], number="9",
           plot=("stand_in.png", _draw),
           side_by_side=(SideTable("stand_in", f"{WORDS} (side by side)", _labels,
                                   ("label",)),))
    def made(ctx: Context, rows: pd.DataFrame) -> Section:
        return Section(WORDS, "Every figure timed with sync, counted per label.",
                       [_labels(rows, ctx.data)], [f"stand-in finding: {len(rows)} rows"],
                       rows=rows)

    with programs.use(_with(made)):
        yield


def test_contract_section_one_registration_reaches_report(stand_in: None,
                                                          tmp_path: Path) -> None:
    written = writer.write(chapter_dataset(), tmp_path)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert f"## {TITLE}" in text
    after = text.split(f"## {TITLE}", 1)[1]
    assert "CSV: `stand_in.csv`" in after and "- stand-in finding: " in after
    assert f"![{TITLE}](stand_in.png)" in after
    assert {tmp_path / "stand_in.csv", tmp_path / "stand_in.png"} <= set(written)
    frame = pd.read_csv(tmp_path / "stand_in.csv")
    assert list(frame.columns) == ["label", "figures"] and frame["figures"].sum() > 0
    # registered last, so the last section of the report
    # (a section with nothing to show is left out: the last one shown before it)
    assert re.findall(r"^## \d.*$", text, flags=re.M)[-1] == f"## {TITLE}"


def test_contract_section_one_registration_reaches_report_a_b(stand_in: None,
                                                              tmp_path: Path) -> None:
    side_by_side.write_many([str(LOG), str(LOG)], tmp_path)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert f"## {TITLE} (side by side)" in text
    frame = pd.read_csv(tmp_path / "stand_in.csv")
    assert list(frame.columns) == ["label", "A: figures", "B: figures"]
    assert (frame["A: figures"] == frame["B: figures"]).all()


def test_a_section_name_is_registered_once(stand_in: None) -> None:
    again = entry("stand_in", lambda ctx: ctx.fig)(lambda ctx, rows: Section("", "", []))
    with pytest.raises(ValueError, match="registered twice"):
        sections.including(again)
    with pytest.raises(ValueError, match="registered twice"):  # a module's second one too
        section("methods", lambda ctx: ctx.fig)(lambda ctx, rows: Section("", "", []))
    assert [r.name for r in sections.FOUND] == list(sections.ORDER)  # unchanged

def test_plot_file_names_live_in_the_registry_alone() -> None:
    """No module of the report but the sections' own (report/sections/) writes a report
    plot's file name."""
    registered = {found.plot[0] for found in sections.registered() if found.plot}
    assert registered == {"methods.png", "first_call.png", "cpu_threads.png", "warmup.png",
                          "sizes.png"}
    elsewhere = []
    report = PROJECT / "orchestrator" / "report"
    for module in report.rglob("*.py"):
        if module.parent == report / "sections":
            continue
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in registered:
                elsewhere.append(f"{module.name}: {node.value}")
    assert elsewhere == []


def test_contract_section_compare_reads_the_registry() -> None:
    """A section registered with `compare=` is one of compare's sections, in its rank's place:
    the figures it takes leave the section that held them (the chapter's log against itself)."""
    from orchestrator.report.compare import output as compare_output
    from orchestrator.report.compare import verdicts as compare
    from orchestrator.report.compare.sides import load_side
    from orchestrator.report.sections import CompareSection

    @entry("stand_in_compare", lambda ctx: ctx.fig,
           compare=CompareSection("stand-in", 6, lambda row: row["method"] == "with_sync"))
    def made(ctx: Context, rows: pd.DataFrame) -> Section:
        return Section("9. Compared only", "", [], rows=rows)

    with programs.use(_with(made)):
        side = load_side(str(LOG))
        c = compare.compare(side, side)
        assert compare.sections()[-1] == "stand-in"
        taken = [r for r in c.rows if r.section == "stand-in"]
        assert taken and all("with sync" in r.figure for r in taken)
        assert not [r for r in c.rows if r.section == "methods" and "with sync" in r.figure]
        assert "## stand-in" in compare_output.render_markdown(c)


def test_contract_section_owns_its_compare_table() -> None:
    """compare.md is the report's Markdown exporter over compare's sections: a registered
    section's own compare table (`CompareSection.table`) is the table under its heading."""
    from orchestrator.report.compare import output as compare_output
    from orchestrator.report.compare import verdicts as compare
    from orchestrator.report.compare.sides import load_side
    from orchestrator.report.sections import CompareSection

    def _counted(words: str, rows: list) -> Table:
        return Table("stand_in", words, pd.DataFrame(
            {"figure": [r.figure for r in rows], "verdict": [r.verdict for r in rows]}))

    @entry("stand_in_table", lambda ctx: ctx.fig,
           compare=CompareSection("stand-in", 6, lambda row: row["method"] == "with_sync",
                                  table=_counted))
    def made(ctx: Context, rows: pd.DataFrame) -> Section:
        return Section("9. Compared only", "", [], rows=rows)

    with programs.use(_with(made)):
        side = load_side(str(LOG))
        text = compare_output.render_markdown(compare.compare(side, side))
        block = text.split("## stand-in\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert block[:2] == ["| figure | verdict |", "| --- | --- |"]
        assert len(block) > 2 and all("with sync" in line for line in block[2:])
