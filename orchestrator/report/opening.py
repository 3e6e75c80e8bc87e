"""The report's opening as one record, for every exporter: the lessons, the warnings typed and
counted, what was not measured, and the layout (sections shown, their ids).

The lessons come built (report/summary.py makes them, the writer passes them in: `Lesson`);
the rest is read off the sections (report/digest.py). `Opening` holds them, says them in
Markdown, and gives `warnings.csv` (every finding in full: section, kind, text), which the
grouped bullets point at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from orchestrator.report import digest
from orchestrator.report.findings import Finding
from orchestrator.report.section import Section, Table

TITLE = "Timing report"
FINDINGS = "Findings"
BEFORE = (TITLE, FINDINGS)  # the headings above the sections


@dataclass(frozen=True)
class Lesson:
    """One sentence of the findings and the table (its CSV name) it comes from."""

    text: str
    table: str


# ---- anchors: the same ids in report.md (GitHub's heading slugs) and report.html -------------


def slug(text: str) -> str:
    """GitHub's id for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", str(text).lower()).replace(" ", "-")


class Anchors:
    """Heading ids in document order, a repeated one suffixed -1, -2 as GitHub does."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def add(self, heading: str) -> str:
        base = slug(heading)
        n = self.seen.get(base)
        self.seen[base] = 0 if n is None else n + 1
        return base if n is None else f"{base}-{n + 1}"


@dataclass
class Layout:
    """Which sections and tables are shown, their headings' ids, and each table's place."""

    sections: list[Section]
    section_ids: list[str]
    table_ids: dict[str, str]  # a shown table's CSV name -> the id of the heading above it
    table_heads: list[list[str]]  # per section shown: its tables' heading ids (2+ tables)

    @classmethod
    def of(cls, sections: list[Section], before: tuple[str, ...]) -> Layout:
        """`before`: the headings above the sections (the title, Findings, ...)."""
        anchors = Anchors()
        for heading in before:
            anchors.add(heading)
        kept, ids, tables, heads = [], [], {}, []
        for section in sections:
            if not digest.shown(section):
                continue
            kept.append(section)
            ids.append(anchors.add(section.title))
            drawn = [t for t in section.tables if t.missing is None]
            heads.append([anchors.add(t.title) for t in drawn] if len(drawn) > 1 else [])
            for k, table in enumerate(drawn):
                tables.setdefault(table.name, heads[-1][k] if heads[-1] else ids[-1])
        return cls(kept, ids, tables, heads)

    def section_id(self, title: str) -> str:
        return next((i for s, i in zip(self.sections, self.section_ids, strict=True)
                     if s.title == title), "")


@dataclass
class Opening:
    lessons: list[Lesson]
    counts: list[digest.Counted]
    absent: list[tuple[str, str]]
    layout: Layout
    sections: list[Section]  # every section built, shown or not
    accelerator: bool = True  # whether any figure is of an accelerator (else: said why)

    @classmethod
    def of(cls, fig: pd.DataFrame, sections: list[Section], lessons: list[Lesson]) -> Opening:
        """The opening of the sections built from `fig`, with the lessons told of it."""
        devices = fig["device"] if "device" in fig else pd.Series(dtype=object)
        return cls(lessons, digest.warning_counts(sections), digest.absent(sections),
                   Layout.of(sections, BEFORE), sections,
                   bool(((devices != "cpu") & (devices != "")).any()))

    def link(self, table: str) -> str:
        return self.layout.table_ids.get(table, "")

    def not_measured(self) -> str:
        """One sentence: the tables the data could not fill, each reason said once (and first
        the cause of most of them where there is one: no accelerator run at all)."""
        why = "" if self.accelerator else " (no accelerator run in this data: no GPU, or " \
            "none asked for)"
        reasons: dict[str, list[str]] = {}
        for title, reason in self.absent:
            reasons.setdefault(reason, []).append(title)
        return why + ": " + "; ".join(f"{', '.join(dict.fromkeys(titles))} ({reason})"
                               for reason, titles in reasons.items())

    def markdown(self) -> list[str]:
        lines = [f"## {FINDINGS}", ""]
        lines += [f"- {lesson.text} ([table](#{self.link(lesson.table)}))"
                  if self.link(lesson.table) else f"- {lesson.text}" for lesson in self.lessons]
        if not self.lessons:
            lines.append("- No lesson of the chapter can be told from this data (no timing "
                         "figures).")
        lines += [f"- {line}" for line in digest.empty_news(self.sections)]
        lines.append("")
        if self.counts:
            total = sum(c.count for c in self.counts)
            lines += [f"Warnings: {total}, by kind, the most serious first (each in full under "
                      "its table, and in `warnings.csv`):", ""]
            for c in self.counts[:digest.TOP_KINDS]:
                where = self.layout.section_id(c.section)
                lines.append(f"- **{digest.kind_words(c.kind)}** × {c.count}, first in "
                             + (f"[{c.section}](#{where})" if where else c.section) + f": "
                             f"{digest.subject(c.first)}")
            rest = self.counts[digest.TOP_KINDS:]
            if rest:
                lines.append(f"- and {sum(c.count for c in rest)} more of {len(rest)} other "
                             "kinds: " + ", ".join(f"{digest.kind_words(c.kind)} × {c.count}"
                                                   for c in rest))
            lines.append("")
        if self.absent:
            lines += [f"Not measured here{self.not_measured()}.", ""]
        return lines[:-1]

    def warnings_table(self) -> Table:
        """Every finding of every section, in full: `warnings.csv`."""
        rows = [{"section": s.title, "kind": digest.kind_words(
                    w.kind if isinstance(w, Finding) else None), "warning": str(w)}
                for s in self.sections for w in s.warnings]
        return Table("warnings", "Every warning", pd.DataFrame(
            rows, columns=["section", "kind", "warning"]))
