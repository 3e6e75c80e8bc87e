"""`python -m orchestrator compare A B`: a verdict per figure between two result sets.

A side is a results folder (its latest sweep), `folder@sweep`, or a captured log (`parse`'s
input, such as the chapter's listings): `sides`. Figures are matched on what they measure,
never on run ids: `rows` and `match`. `compare` matches the two sides' figures, gives each
matched time figure its verdict as judging.py judges one (B/A over processes, its interval,
the family's correction: the rule is judging.py's docstring) and returns the `Comparison`;
`output` writes the result. A side that did not record its precision is taken as FP32 and
never paired with a TF32 run. Before any figure the differences between the two machines and
settings are listed (`facts`). The judging's names are re-exported here, the command's face
(tests, bench and `run`'s stopping rule read them as `compare.judge`, `compare.Row`).
"""

from __future__ import annotations

from typing import Any

from orchestrator.errors import InputError
from orchestrator.report.compare.judging import (
    DEFAULT_CORRECTION,
    DEFAULT_MIN_EFFECT,
    ONE_VALUE,
    VERDICTS,
    Comparison,
    Row,
    finish,
    judge,
    judged_row,
    verdict,
)
from orchestrator.report.compare.match import (
    describe,
    match,
    pair_labels,
    section_of,
    sections,
    verdict_sections,
)
from orchestrator.report.compare.rows import measurements
from orchestrator.report.compare.sides import Side, load_side, machine_facts
from orchestrator.stats import intervals

__all__ = ["DEFAULT_CORRECTION", "DEFAULT_MIN_EFFECT", "ONE_VALUE", "VERDICTS", "Comparison",
           "InputError", "Row", "Side", "compare", "finish", "judge", "judged_row", "load_side",
           "one_sweep", "sections", "verdict", "verdict_sections"]


def _say_arithmetic(rows: list[Row], pairs: list[tuple[dict[str, Any], dict[str, Any], str]]
                    ) -> None:
    """Two figures of one name but different arithmetic (FP32 and unknown) name theirs."""
    seen: dict[tuple[str, str], set[str]] = {}
    for row, (x, _y, _) in zip(rows, pairs, strict=True):
        seen.setdefault((row.section, row.figure), set()).add(x.get("precision") or "")
    for row, (x, y, _) in zip(rows, pairs, strict=True):
        if len(seen[(row.section, row.figure)]) > 1:
            row.figure = describe(x, y, said=True)


def compare(a: Side, b: Side, min_effect: float = DEFAULT_MIN_EFFECT,
            correction: str = DEFAULT_CORRECTION, paired: bool = True) -> Comparison:
    """Match the two sides' figures and give each time figure its verdict; two variants of
    one sweep are judged on their per-round log ratios unless `paired` is False."""
    if not min_effect > 0:
        raise InputError(f"--min-effect must be above 0 (got {min_effect})")
    if correction not in intervals.CORRECTIONS:
        raise InputError(f"--correction must be one of {', '.join(intervals.CORRECTIONS)} "
                         f"(got {correction!r})")
    ma, mb, pairings = pair_labels(measurements(a), measurements(b))
    pairs, only_a, only_b = match(ma, mb)
    if not pairs:
        raise InputError(f"{a.spec} and {b.spec} have no figure in common (nothing measured "
                         "the same thing on both sides)")
    order = {s: i for i, s in enumerate(sections())}
    pairs.sort(key=lambda p: (order[section_of(p[0])], p[0]["order"]))  # A's order per section
    hosts = (a.data.host or {}, b.data.host or {})
    pair = paired and one_sweep(a, b)
    rows = [judged_row(section_of(x), describe(x, y), x, y, note, min_effect, hosts, pair)
            for x, y, note in pairs]
    _say_arithmetic(rows, pairs)
    level = finish(rows, correction, min_effect)
    return Comparison(a, b, min_effect, machine_facts(a, b), pairings, rows, correction,
                      level, list(dict.fromkeys(describe(x, x) for x in only_a)),
                      list(dict.fromkeys(describe(y, y) for y in only_b)))


def one_sweep(a: Side, b: Side) -> bool:
    """Whether the sides are two variants of one sweep of one store: their rounds match."""
    return a.kind == b.kind == "store" and a.sweep is not None and a.sweep == b.sweep \
        and bool(a.variant) and bool(b.variant) and a.variant != b.variant
