"""Each figure's course over the sweeps, and its change points.

A sweep's figures are compare's rows (report/compare/rows.py: one per figure, every process
pooled, keyed on what it measures). Sweep by sweep, each figure is matched with the latest point
of every course so far by compare's matching (report/compare/match.py: a field one side did not
record matches any value, the other arithmetic is set apart), the same experiment first, then
any; a figure matched nowhere starts a course. So a figure missing from one sweep is judged
against its last sweep before it.

Each step of a course (two consecutive points of one figure) is judged as compare judges a
figure (report/compare/judging.py: B/A over processes, Welch's t on the log process values,
the p-value of a change beyond ±e); every step of every figure of the history is one family,
corrected at once (Holm, or Benjamini-Hochberg) by compare's `finish`. A step `slower` or
`faster` is a change point; noise between sweeps is `inconclusive` or `same`, never a change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from orchestrator import vocabulary
from orchestrator.errors import InputError
from orchestrator.report.compare.judging import (
    DEFAULT_MIN_EFFECT,
    Row,
    finish,
    judged_row,
)
from orchestrator.report.compare.match import describe, match, section_of
from orchestrator.report.compare.rows import key_fields, measurements
from orchestrator.report.history.timeline import Change, Sweep, changes
from orchestrator.stats import intervals

CHANGED = ("slower", "faster")


def figure_key(row: dict[str, Any]) -> tuple[str, ...]:
    """A figure's identity in the history: compare's key and its experiment (the one place to
    switch to data/identity.py when it exists)."""
    return (*(str(row[k]) for k in key_fields()), str(row["experiment"]))


@dataclass
class Point:
    """A figure in one sweep: its value over its processes, with its interval."""

    sweep: int  # index into History.sweeps
    value: float
    lo: float | None
    hi: float | None
    processes: int
    row: dict[str, Any] = field(repr=False)


@dataclass
class Step:
    """Two consecutive points of a figure, judged as compare judges a figure."""

    before: int  # sweep indices
    after: int
    row: Row  # compare's row: ratio, interval, p-values, verdict

    @property
    def changed(self) -> bool:
        return self.row.verdict in CHANGED


@dataclass
class Course:
    key: tuple[str, ...]
    section: str
    figure: str  # in compare's words
    points: list[Point] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)


@dataclass
class History:
    sweeps: list[Sweep]
    courses: list[Course]
    changes: dict[tuple[int, int], list[Change]]  # (before, after) -> what differs
    min_effect: float
    correction: str

    def change_points(self) -> list[tuple[Course, Step]]:
        return [(c, s) for c in self.courses for s in c.steps if s.changed]

    def last_step(self) -> list[tuple[Course, Step]]:
        """Each figure's step into the latest sweep (the one a CI gate judges)."""
        last = len(self.sweeps) - 1
        return [(c, s) for c in self.courses for s in c.steps if s.after == last]


def _time_figure(row: dict[str, Any]) -> bool:
    return vocabulary.is_time(row["method"]) and row["stat"] in ("median", "value")


def _point(index: int, row: dict[str, Any]) -> Point:
    est = intervals.estimate(row["values"], row["sample_sets"])
    if est is None:
        return Point(index, float(row["value"]), None, None, int(row["processes"]), row)
    return Point(index, est.value, est.lo, est.hi, est.processes, row)


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows, dtype=object) if rows else pd.DataFrame(
        columns=[*key_fields(), "experiment", "_id"])


def _pair(latest: list[dict[str, Any]], new: list[dict[str, Any]]
          ) -> list[tuple[dict[str, Any], dict[str, Any], str]]:
    """compare's matching of the courses' latest rows with a sweep's rows: within each
    experiment first, then whatever is left across experiments (one renamed)."""
    pairs: list[tuple[dict[str, Any], dict[str, Any], str]] = []
    for experiment in dict.fromkeys(r["experiment"] for r in new):
        pairs += match(_frame([r for r in latest if r["experiment"] == experiment]),
                       _frame([r for r in new if r["experiment"] == experiment]))[0]
    used_a, used_b = {a["_id"] for a, _b, _n in pairs}, {b["_id"] for _a, b, _n in pairs}
    rest_a = [r for r in latest if r["_id"] not in used_a]
    rest_b = [r for r in new if r["_id"] not in used_b]
    if rest_a and rest_b:
        pairs += match(_frame(rest_a), _frame(rest_b))[0]
    return pairs


def build(sweeps: list[Sweep], min_effect: float = DEFAULT_MIN_EFFECT,
          correction: str = "holm") -> History:
    """Every time figure's course over the sweeps, each step judged, the family corrected."""
    if not min_effect > 0:
        raise InputError(f"--min-effect must be above 0 (got {min_effect})")
    if correction not in intervals.CORRECTIONS:
        raise InputError(f"--correction must be one of {', '.join(intervals.CORRECTIONS)} "
                         f"(got {correction!r})")
    courses: list[Course] = []
    latest: dict[int, dict[str, Any]] = {}  # course index -> its latest row
    steps_between: dict[tuple[int, int], list[Change]] = {}
    for index, sweep in enumerate(sweeps):
        rows = [r for r in _records(measurements(sweep.side)) if _time_figure(r)]
        for n, r in enumerate(rows):
            r["_id"] = f"{index}:{n}"
        known = list(latest.values())
        course_of: dict[str, int] = {}  # a row's _id -> its course (match hands back copies)
        for a, b, note in _pair(known, rows) if known else []:
            number = int(a["_course"])
            course, before = courses[number], courses[number].points[-1].sweep
            if (before, index) not in steps_between:
                steps_between[(before, index)] = changes(sweeps[before], sweep)
            hosts = (sweeps[before].side.data.host or {}, sweep.side.data.host or {})
            row = judged_row(section_of(a), describe(a, b), a, b, note, min_effect, hosts)
            course.steps.append(Step(before, index, row))
            course_of[b["_id"]] = number
        for r in rows:
            number = course_of.get(r["_id"])
            if number is None:
                number = len(courses)
                courses.append(Course(figure_key(r), section_of(r), describe(r, r)))
            r["_course"] = number
            course = courses[number]
            # the course's key and name: its latest, most recorded row
            course.key, course.figure = figure_key(r), describe(r, r)
            course.points.append(_point(index, r))
            latest[number] = r
    finish([s.row for c in courses for s in c.steps], correction)
    return History(sweeps, courses, steps_between, min_effect, correction)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [] if frame.empty else [dict(r) for r in frame.to_dict("records")]
