"""report.html and compare.html: self-contained, escaped, and opened in a real browser.

The browser tests load each page in headless Chromium (tests/report/chromium.py) from the
folder the report wrote, as a reader would (file://), and check what a reader relies on: no
console error or failed load, every plot drawn (an <img> that decoded), every table there,
every link of the contents and of the findings landing on an element with that id, every CSV
link naming a file in the folder. Without Chromium they are skipped ("not run: ...") here and
fail in CI (tests/parts.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from orchestrator.data import dataset
from orchestrator.data.dataset import Dataset
from orchestrator.report import html_report, partial
from orchestrator.report import writer as report
from orchestrator.report.compare import output as compare_output
from orchestrator.report.compare import verdicts as compare
from orchestrator.report.compare.sides import load_side
from tests.report.chromium import file_url, open_page
from tests.report.test_writer import chapter_dataset, synthetic_dataset

from ..conftest import PROJECT

CHAPTER = PROJECT / "tests" / "data" / "chapter_listings.log"
H200 = PROJECT / "docs" / "results" / "h200-2026-11-30"
HOSTILE = "cpu\u202eevil<script>alert(1)</script>"

# run in the page after its load event: what the browser made of it
CHECKS = """(() => {
  const ids = new Set([...document.querySelectorAll('[id]')].map(e => e.id));
  const local = [...document.querySelectorAll('a[href^="#"]')].map(a => a.getAttribute('href'));
  return {
    tables: document.querySelectorAll('table.data').length,
    rows: [...document.querySelectorAll('table.data')].map(t => t.tBodies[0].rows.length),
    plots: [...document.querySelectorAll('img[data-plot]')].map(i => ({
      name: i.dataset.plot, ok: i.complete && i.naturalWidth > 0})),
    toc: [...document.querySelectorAll('nav a')].map(a => a.getAttribute('href')),
    findings: [...document.querySelectorAll('#findings ~ * a[href^="#"], section a[href^="#"]')]
      .map(a => a.getAttribute('href')),
    broken: local.filter(h => !ids.has(decodeURIComponent(h.slice(1)))),
    csv: [...document.querySelectorAll('a[href$=".csv"]')].map(a => a.getAttribute('href')),
    scripts: document.scripts.length,
    warnings: document.querySelectorAll('ul.warnings li').length,
    text: document.body.innerText,
  };
})()"""


@pytest.fixture(scope="module")
def chapter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html-chapter")
    report.write(chapter_dataset(), out)
    return out


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html-compare")
    compare_output.write(compare.compare(load_side(str(CHAPTER)), load_side(str(H200))), out)
    return out


def _tables_in(md: str) -> int:
    """Markdown tables: a header line followed by its |---| line."""
    return len(re.findall(r"^\|[^\n]*\|\n\|( --- \|)+$", md, flags=re.M))


# ---- without a browser: what the file holds ---------------------------------------------------


def test_the_page_is_one_file_with_every_plot_inline(chapter: Path) -> None:
    page = (chapter / html_report.PAGE_NAME).read_text(encoding="utf-8")
    for png in sorted(chapter.glob("*.png")):
        assert f'data-plot="{png.name}" src="data:image/png;base64,' in page
    # nothing fetched: no script, no stylesheet or image from elsewhere
    assert "<script" not in page and not re.search(r'(src|href)="(https?:)?//', page)
    md = (chapter / "report.md").read_text(encoding="utf-8")
    assert page.count('<table class="data">') == _tables_in(md)


def test_hostile_names_are_text_in_markdown_csv_and_html(tmp_path: Path) -> None:
    data, _ = synthetic_dataset()
    figures = data.figures.copy()
    figures.loc[figures["label"] == "cpu", "label"] = HOSTILE
    report.write(Dataset(figures, data.samples, data.runs, data.host), tmp_path)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    for text in (md, page):
        assert "\u202e" not in text and "<script" not in text
        assert "[U+202E]evil&lt;script&gt;alert(1)&lt;/script&gt;" in text
    # the CSV keeps the name as it was recorded: it is data, not a page
    cells = "\n".join((tmp_path / name).read_text(encoding="utf-8")
                      for name in ("cpu_threads.csv", "figures.csv"))
    assert HOSTILE in cells


def test_column_groups_of_a_side_by_side_table() -> None:
    from orchestrator.report.tables import Table

    table = Table("methods", "t", pd.DataFrame({"method": ["no sync"], "A: PyTorch min": ["1"],
                                                "A: PyTorch median": ["2"], "B: burn min": ["3"]}))
    head = "".join(html_report.table_html(table))
    assert '<th class="group" colspan="1"></th><th class="group" colspan="2">A</th>' \
        '<th class="group" colspan="1">B</th>' in head
    assert "<th>PyTorch min</th>" in head


# ---- in a real browser ------------------------------------------------------------------------


def test_report_html_in_chromium(chapter: Path) -> None:
    seen = open_page(file_url(chapter / "report.html"), CHECKS)
    assert seen.errors == []
    got = seen.result
    md = (chapter / "report.md").read_text(encoding="utf-8")
    assert got["tables"] == _tables_in(md) and all(n > 0 for n in got["rows"])
    assert sorted(p["name"] for p in got["plots"]) == sorted(p.name for p in chapter.glob("*.png"))
    assert all(p["ok"] for p in got["plots"]), got["plots"]
    assert got["broken"] == [] and len(got["toc"]) >= 8 and "#findings" in got["toc"]
    assert got["findings"], "the findings link to their tables and sections"
    assert got["csv"] and all((chapter / name).is_file() for name in got["csv"])
    assert got["scripts"] == 0 and got["warnings"] > 0
    assert "Which clock lies on the accelerator" in got["text"]


def test_compare_html_in_chromium(compared: Path) -> None:
    seen = open_page(file_url(compared / "compare.html"), CHECKS)
    assert seen.errors == []
    got = seen.result
    assert got["tables"] >= 3 and got["broken"] == [] and len(got["toc"]) >= 3
    assert [p["name"] for p in got["plots"]] == ["compare.png"] and got["plots"][0]["ok"]
    assert "compare: A = " in got["text"]


# ---- the partial report ----------------------------------------------------


def test_a_partial_report_says_so_everywhere_and_the_sweeps_replaces_it(tmp_path: Path) -> None:
    results = PROJECT / "docs" / "results" / "cpu-sizes-2026-12-04" / "results"
    sweep = str(dataset.load(results).runs["sweep_id"].iloc[0])
    said: list[tuple[str, bool]] = []
    out = tmp_path / "report"
    written = partial.partial_writer(results, out, lambda line, warn: said.append((line, warn)))
    written.finish(sweep)  # no partial report written: nothing to replace
    assert not out.exists()
    written(sweep, ["default"])
    md = (out / "report.md").read_text(encoding="utf-8")
    assert md.startswith("# Timing report\n\n**Partial: 1 build still building (default)")
    assert "Partial: 1 build still building" in (out / "report.html").read_text(encoding="utf-8")
    csvs = sorted(out.glob("*.csv"))
    assert csvs and all(pd.read_csv(p)["partial"].str.startswith("partial: 1 build").all()
                        for p in csvs)
    written.finish(sweep)
    assert "Partial" not in (out / "report.md").read_text(encoding="utf-8")
    assert all("partial" not in pd.read_csv(p).columns for p in out.glob("*.csv"))
    assert [warn for _, warn in said] == [False, False]
    assert "replacing the partial one" in said[-1][0]


# ---- the column groups of a store's parts --------------------------------------------------------


def test_report_html_of_a_two_host_store_in_chromium(tmp_path: Path) -> None:
    """A store merged from two machines: report.html beside report.md, one grouped header
    cell per host, every table of report.md, every link landing, in a real browser."""
    from orchestrator.cli import main
    from orchestrator.data import merge

    store = tmp_path / "m"
    merge.merge(store, [merge.Source(H200, "old"),
                        merge.Source(PROJECT / "docs" / "results" / "h200-2026-12-01", "new")])
    out = tmp_path / "rep"
    assert main(["report", str(store), "--out", str(out)]) == 0
    groups = "[...document.querySelectorAll('th.group')].map(t => t.innerText)"
    seen = open_page(file_url(out / "report.html"), f"({{...{CHECKS}, groups: {groups}}})")
    assert seen.errors == []
    got = seen.result
    assert got["tables"] == _tables_in((out / "report.md").read_text(encoding="utf-8")) >= 4
    assert got["broken"] == [] and len(got["toc"]) == got["tables"]
    assert got["csv"] and all((out / name).is_file() for name in got["csv"])
    heads = set(got["groups"]) - {""}
    assert heads == {f"A\n{store.name}@old", f"B\n{store.name}@new"}, heads
