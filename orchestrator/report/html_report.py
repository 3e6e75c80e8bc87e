"""The HTML exporter: report.html, compare.html and history.html, one self-contained page each.

The same section model as report.md (report/registry.py's sections, report/opening.py's
findings; a side-by-side report's joined tables, `sides_page`; compare's and history's sections,
`sections_page`), so the page and the Markdown never disagree: a table of contents, the findings
with links to their tables, every table (column groups where the report has sides: `A: ...`, `B:
...`, or a host's or variant's prefix), notes, warnings styled by their kind (findings.Kind),
links to the CSVs beside the page, and the plots inline as base64 PNG. No script, no font, no
request: it opens offline from the folder (file://), and the CSV links work wherever the folder
is copied. Static images, not an interactive library: the PNGs are the files the Markdown shows,
a page with no script has nothing to break or to audit, and every value a hover would show is in
the table beside the plot.

Every text is escaped (html.escape after escape.neutral: bidi controls shown as code points);
the only markup read from the text is the report's own `**bold**`, `` `code` `` and
`[words](#id)` links to ids on this page, applied after escaping.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from orchestrator.report import digest
from orchestrator.report.escape import neutral
from orchestrator.report.findings import Finding
from orchestrator.report.opening import FINDINGS, Anchors, Opening, slug
from orchestrator.report.section import Section, Table

PAGE_NAME = "report.html"
SIDES_STYLE = "th.group .side{font-weight:400;font-size:12px}\n"  # a side's words in its group
STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fff}
nav{position:fixed;top:0;left:0;bottom:0;width:17rem;overflow:auto;padding:1rem;
background:#f4f5f7;border-right:1px solid #ddd;font-size:13px}
nav ul{padding-left:1rem;margin:.2rem 0}main{margin-left:19.5rem;padding:1rem 2rem;
max-width:80rem}h1{margin-top:0}h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;
margin-top:2.2rem}table{border-collapse:collapse;margin:.6rem 0;font-size:13px;
display:block;overflow-x:auto}th,td{border:1px solid #d0d4da;padding:.2rem .5rem;
text-align:left;vertical-align:top}th{background:#eef0f3}th.group{text-align:center;
background:#e2e7ef}tr:nth-child(even) td{background:#fafbfc}code{background:#f0f1f3;
padding:0 .2rem;border-radius:3px}.note{color:#555;font-size:13px}.csv{font-size:13px}
ul.warnings li{margin:.25rem 0;padding:.2rem .5rem;border-left:4px solid #c9a227;
background:#fffbea;list-style:none}ul.warnings{padding-left:0}
li.serious{border-left-color:#c0392b!important;background:#fdecea!important}
li.machine{border-left-color:#2e6fb7!important;background:#eaf2fb!important}
li.other{border-left-color:#999!important;background:#f6f6f6!important}
.kind{font-weight:600}.lessons li{margin:.3rem 0}img{max-width:100%;height:auto;
border:1px solid #eee}.partial{background:#fdecea;padding:.5rem;border:1px solid #c0392b}
"""
# the kinds a reader must not miss: a number that is wrong or of something else
SERIOUS = set(digest.SEVERITY[:10])
MACHINE = {"GPU_CLOCK", "GPU_THROTTLED", "GPU_SHARED", "CPU_GOVERNOR", "UNDER_LOAD",
           "BELOW_APP_CLOCK", "BLOCK_BELOW_CLOCK"}


def text(value: object) -> str:
    """Any text from the data, inert in HTML."""
    return html.escape(neutral("" if value is None else str(value)))


def inline(value: object, ids: set[str] | None = None) -> str:
    """A line of the report's own Markdown: escaped first, then its bold, code spans and links
    to ids on this page (a link to anything else stays text)."""
    out = text(value)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)

    def link(m: re.Match[str]) -> str:
        target = m.group(2)
        if ids is not None and target not in ids:
            return m.group(1)
        return f'<a href="#{target}">{m.group(1)}</a>'
    return re.sub(r"\[([^\]]+)\]\(#([\w-]+)\)", link, out)


def table_html(table: Table, csv: bool = True, groups: dict[str, str] | None = None
               ) -> list[str]:
    """A table with a header row of column groups where its columns have them (`A: ...`);
    `groups`: what a group's header says under its letter (a side's, variant's or host's name,
    env and note)."""
    columns = [str(c) for c in table.frame.columns]
    heads = [c.split(": ", 1)[0] if ": " in c else "" for c in columns]
    out = ['<table class="data">', "<thead>"]
    if any(heads):
        out.append("<tr>" + "".join(
            f'<th class="group" colspan="{n}">{_group(g, groups)}</th>' for g, n in _runs(heads))
            + "</tr>")
    shown = [c.split(": ", 1)[1] if g else c for c, g in zip(columns, heads, strict=True)]
    out.append("<tr>" + "".join(f"<th>{text(c)}</th>" for c in shown) + "</tr></thead><tbody>")
    cells = [table.frame.iloc[:, i].tolist() for i in range(table.frame.shape[1])]
    for row in zip(*cells, strict=True):
        out.append("<tr>" + "".join(f"<td>{inline(_blank(v))}</td>" for v in row) + "</tr>")
    out.append("</tbody></table>")
    out += [f'<p class="note">Note: {inline(n)}</p>' for n in dict.fromkeys(table.notes)]
    if csv:
        out.append(f'<p class="csv">CSV: <a href="{text(table.name)}.csv">'
                   f"{text(table.name)}.csv</a></p>")
    return out


def _group(letter: str, groups: dict[str, str] | None) -> str:
    said = (groups or {}).get(letter)
    return text(letter) + (f'<br><span class="side">{inline(said)}</span>' if said else "")


def _blank(value: object) -> object:
    return "" if value is None or (not isinstance(value, str) and pd.isna(value)) else value


def _runs(groups: list[str]) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for g in groups:
        if out and out[-1][0] == g:
            out[-1] = (g, out[-1][1] + 1)
        else:
            out.append((g, 1))
    return out


def warning_class(finding: object) -> str:
    kind = getattr(finding, "kind", None)
    if kind is None:
        return "other"
    return "serious" if kind in SERIOUS else "machine" if kind.name in MACHINE else "warn"


def warnings_html(warnings: list[str]) -> list[str]:
    """A section's findings, each styled by its kind; near-identical ones in one <details>."""
    out = ['<ul class="warnings">']
    for group in digest.grouped(warnings):
        first = group[0]
        kind = getattr(first, "kind", None)
        data = f' data-kind="{text(kind.name)}"' if isinstance(first, Finding) else ""
        more = "" if len(group) == 1 else (
            f"<details><summary>and {len(group) - 1} more like it</summary><ul>"
            + "".join(f"<li>{inline(w)}</li>" for w in group[1:]) + "</ul></details>")
        out.append(f'<li class="{warning_class(first)}"{data}>{inline(first)}{more}</li>')
    return [*out, "</ul>"]


def plot_html(out: Path, name: str, title: str) -> list[str]:
    """The PNG written beside the page, inline (the page needs nothing beside it to show)."""
    data = base64.b64encode((out / name).read_bytes()).decode("ascii")
    return [f'<figure><img alt="{text(title)}" data-plot="{text(name)}" '
            f'src="data:image/png;base64,{data}"><figcaption>{text(name)}</figcaption>'
            "</figure>"]


def section_html(section: Section, sid: str, table_ids: Iterable[str], out: Path | None,
                 csv: bool = True) -> list[str]:
    """One section: its heading (with its id), intro, tables, findings, closing, plot."""
    drawn = [t for t in section.tables if t.missing is None]
    body = [f'<section><h2 id="{sid}">{text(section.title)}</h2>']
    if section.intro:
        body.append(f"<p>{inline(section.intro)}</p>")
    ids = iter(table_ids)
    for table in drawn:
        if len(drawn) > 1:
            body.append(f'<h3 id="{next(ids)}">{text(table.title)}</h3>')
        body += table_html(table, csv)
    if section.warnings:
        body += warnings_html(section.warnings)
    body += [f"<p>{inline(p)}</p>" for p in section.closing]
    if section.plot and out is not None and (out / section.plot).is_file():
        body += plot_html(out, section.plot, section.title)
    return [*body, "</section>"]


def page(title: str, toc: list[tuple[str, str, int]], body: list[str], style: str = "") -> str:
    """The whole document: `toc` is (id, words, level) in the page's order; `style`: more
    rules after STYLE."""
    items = "".join(f'<li class="toc{level}"><a href="#{i}">{text(words)}</a></li>'
                    for i, words, level in toc)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{text(title)}</title>\n<style>{STYLE}{style}</style></head><body>\n"
            f'<nav id="toc"><strong>Contents</strong><ul>{items}</ul></nav>\n<main>\n'
            + "\n".join(body) + "\n</main></body></html>\n")


Body = tuple[list[tuple[str, str, int]], list[str]]  # a page's (toc, body) before `page`


def title_html(title: str) -> str:
    """The page's one heading of its title (its id the title's slug, as in report.md)."""
    return f'<h1 id="{slug(title)}">{text(title)}</h1>'


def report_body(found: Opening, skipped: list[tuple[str, str]], source: list[str],
                top: list[str], out: Path) -> Body:
    """report.html's contents after its title: the findings, the sections, the plots not
    drawn (a variant sweep's page shows them after its column groups)."""
    layout = found.layout
    body = [f'<p class="partial">{inline(line)}</p>' for line in top]
    body.append(f'<section><h2 id="findings">{FINDINGS}</h2><ul class="lessons">')
    for lesson in found.lessons:
        target = found.link(lesson.table)
        body.append(f"<li>{inline(lesson.text)}" + (
            f' (<a href="#{target}">table</a>)' if target else "") + "</li>")
    body += [f"<li>{inline(line)}</li>" for line in digest.empty_news(found.sections)]
    body.append("</ul>")
    if found.counts:
        body.append(f"<p>Warnings: {sum(c.count for c in found.counts)}, by kind, the most "
                    'serious first (every one in full in <a href="warnings.csv">warnings.csv'
                    "</a>):</p>")
        body.append('<ul class="warnings">')
        for c in found.counts:
            where = layout.section_id(c.section)
            place = f'<a href="#{where}">{text(c.section)}</a>' if where else text(c.section)
            cls = warning_class(Finding(c.kind, "") if c.kind is not None else "")
            body.append(f'<li class="{cls}"><span class="kind">{text(digest.kind_words(c.kind))}'
                        f"</span> × {c.count}, first in {place}: {inline(digest.subject(c.first))}"
                        "</li>")
        body.append("</ul>")
    if found.absent:
        body.append(f"<p>Not measured here{inline(found.not_measured())}.</p>")
    body.append("</section>")
    body.append("<section><p>" + "<br>".join(inline(line) for line in source) + "</p></section>")
    toc = [("findings", FINDINGS, 1)]
    for section, sid, heads in zip(layout.sections, layout.section_ids, layout.table_heads,
                                   strict=True):
        body += section_html(section, sid, heads, out)
        toc.append((sid, section.title, 1))
        drawn = [t for t in section.tables if t.missing is None]
        toc += [(h, t.title, 2) for h, t in zip(heads, drawn, strict=False)]
    if skipped:
        body.append('<section><h2 id="plots-not-drawn">Plots not drawn</h2><ul>'
                    + "".join(f"<li><code>{text(n)}</code>: {text(why)}.</li>"
                              for n, why in skipped) + "</ul></section>")
        toc.append(("plots-not-drawn", "Plots not drawn", 1))
    return toc, body


def sections_page(title: str, intro: list[str], sections: list[Section], out: Path | None,
                  plot: str | None = None, csv: bool = False) -> str:
    """A page of sections with no findings of its own (compare.html): a TOC, the intro
    paragraphs, each section as report.html shows it, then `plot` (a PNG in `out`) inline."""
    anchors = Anchors()
    anchors.add(title)
    body = [f'<h1 id="{slug(title)}">{text(title)}</h1>', *(f"<p>{inline(p)}</p>" for p in intro)]
    toc = []
    for section in sections:
        sid = anchors.add(section.title)
        drawn = [t for t in section.tables if t.missing is None]
        heads = [anchors.add(t.title) for t in drawn] if len(drawn) > 1 else []
        toc += [(sid, section.title, 1), *((h, t.title, 2) for h, t in zip(heads, drawn,
                                                                            strict=False))]
        body += section_html(section, sid, heads, out, csv)
        body += [f'<p class="note">{inline(t.title)}: {inline(t.missing)}.</p>'
                 for t in section.tables if t.missing is not None]
    if plot and out is not None and (out / plot).is_file():
        sid = anchors.add("plot")
        body += [f'<section><h2 id="{sid}">{text(plot)}</h2>',
                 *plot_html(out, plot, title), "</section>"]
        toc.append((sid, plot, 1))
    return page(title, toc, body)


def sides_page(title: str, lines: list[str], groups: dict[str, str], tables: list[Table],
               whole: tuple[list[str], Body] | None = None) -> str:
    """report.html of `report A B`, of a variant sweep or of a multi-host store: the sides'
    lines, each joined table with one column group per side (`groups`: the side's name, env
    and note, said in its group's header), then (`whole`: a heading and intro, and the sweep's
    report body) every table and plot of the whole sweep."""
    anchors = Anchors()
    anchors.add(title)
    body = [title_html(title), '<ul class="sides">',
            *(f"<li>{inline(line.removeprefix('- '))}</li>" for line in lines), "</ul>"]
    empty = [t for t in tables if t.missing is not None]  # named once, not a section each
    if empty:
        body.append('<p class="note">No side has data for these tables: '
                    f'{text(", ".join(t.title for t in empty))}.</p>')
    toc = []
    for table in (t for t in tables if t.missing is None):
        sid = anchors.add(f"sides {table.title}")  # apart from the whole sweep's ids
        toc.append((sid, table.title, 1))
        body += [f'<section><h2 id="{sid}">{text(table.title)}</h2>',
                 *table_html(table, groups=groups), "</section>"]
    if whole is not None:
        (heading, *intro), (more_toc, more) = whole
        body += [f'<h1 id="the-whole-sweep">{text(heading)}</h1>',
                 *(f"<p>{inline(p)}</p>" for p in intro), *more]
        toc += [("the-whole-sweep", heading, 1), *more_toc]
    return page(title, toc, body, SIDES_STYLE)
