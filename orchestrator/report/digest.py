"""What the report's opening and its exporters read off the built sections, a low floor of the
report: `warning_counts` types and counts the findings of every section (report/findings.Kind),
most serious first (`SEVERITY`); `absent` names the tables the data could not fill, once,
instead of a "No table" per section, and `empty_news` the empty ones that are news; `shown`
says whether a section has anything to show; `grouped` folds near-identical findings (the same
words but for their numbers) into one bullet, `subject` says what a finding is about.
Exporters (exporters.py's Markdown, html_report.py's HTML) and the opening (opening.py) read these
plain records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from orchestrator.report.findings import Finding, Kind
from orchestrator.report.section import Section

# the warnings that matter most first: a wrong number, then a number of something else, then
# a disturbed machine, then the rest in the enum's order
SEVERITY = (Kind.IMPOSSIBLE_TIME, Kind.MEDIAN_BELOW_MIN, Kind.NOT_A_NUMBER, Kind.INACCURATE,
            Kind.INPUTS_DIFFER, Kind.ABOVE_PEAK, Kind.ABOVE_FP32, Kind.DIFFERENT_ARITHMETIC,
            Kind.ARITHMETIC_DISPUTED, Kind.SWALLOWED_SETUP, Kind.PROFILE_NO_TIME,
            Kind.QUEUED_PROOF_FAILED, Kind.GPU_THROTTLED, Kind.GPU_SHARED, Kind.UNDER_LOAD,
            Kind.THREADS, Kind.THREADS_NO_EFFECT, Kind.WIDE_SPREAD)
TOP_KINDS = 8  # kinds listed at the top; warnings.csv has every finding
GROUP_FROM = 3  # near-identical findings folded into one bullet from this many on


@dataclass(frozen=True)
class Counted:
    """A kind of warning, how often it was found, the first of them and where."""

    kind: Kind | None
    count: int
    first: str
    section: str  # the section's title


# ---- warnings, typed and counted --------------------------------------------------------------


def warning_counts(sections: list[Section]) -> list[Counted]:
    """Every section's findings by kind, the most serious kinds first."""
    counts: dict[Kind | None, Counted] = {}
    for section in sections:
        for text in section.warnings:
            kind = text.kind if isinstance(text, Finding) else None
            seen = counts.get(kind)
            counts[kind] = Counted(kind, 1, str(text), section.title) if seen is None else \
                Counted(kind, seen.count + 1, seen.first, seen.section)
    order = {k: i for i, k in enumerate(SEVERITY)}
    rest = {k: len(SEVERITY) + i for i, k in enumerate(Kind)}
    return sorted(counts.values(), key=lambda c: (c.kind is None, order.get(c.kind, rest.get(
        c.kind, 0)) if c.kind is not None else 0))


def kind_words(kind: Kind | None) -> str:
    return kind.words if kind is not None else "other notes"


# ---- what was not measured, near-identical findings -------------------------------------------


NOT_ABSENT = {"failures"}  # an empty list of failed runs is news, said as such


def absent(sections: list[Section]) -> list[tuple[str, str]]:
    """(table title, why) of every table the data could not fill, in the report's order."""
    return [(t.title if t.title else s.title, t.missing) for s in sections for t in s.tables
            if t.missing is not None and t.name not in NOT_ABSENT]


def empty_news(sections: list[Section]) -> list[str]:
    """What an empty table says that is a finding: 'Runs skipped or failed: none (every run
    succeeded).'"""
    return [f"{t.title}: none ({t.missing})." for s in sections for t in s.tables
            if t.missing is not None and t.name in NOT_ABSENT]


def shown(section: Section) -> bool:
    """A section with something to show: a table, a finding, a closing paragraph or a plot."""
    return any(t.missing is None for t in section.tables) or bool(
        section.warnings or section.closing or section.plot)


_NUMBER = re.compile(r"[-+]?\d[\d.,]*(?:e[-+]?\d+)?")


def skeleton(text: str) -> str:
    """A finding's words without its numbers: near-identical findings share it."""
    return _NUMBER.sub("#", str(text))


def subject(text: str) -> str:
    """What a finding is about: its words after the bold kind, up to the next colon."""
    body = re.sub(r"^\*\*[^*]*\*\*[^:]*:\s*", "", str(text))
    head = body.split(": ", 1)[0]
    return head if len(head) <= 80 else head[:77] + "…"


def grouped(warnings: list[str]) -> list[list[str]]:
    """The findings in their order, near-identical ones (GROUP_FROM or more) as one group at
    the place of the first; a group of one is a finding alone."""
    places: dict[str, list[int]] = {}
    for i, text in enumerate(warnings):
        places.setdefault(skeleton(text), []).append(i)
    starts: list[list[int]] = []
    for members in places.values():
        starts += [members] if len(members) >= GROUP_FROM else [[m] for m in members]
    return [[warnings[i] for i in g] for g in sorted(starts, key=lambda g: g[0])]
