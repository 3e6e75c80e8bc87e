"""The compare wing: two result sets read side by side, from the report's sections.

`python -m orchestrator compare A B` gives a verdict per figure: `sides` (a results folder,
`folder@sweep`, a variant or a captured log, and its machine facts), `rows` (a side as one row
per figure, its processes pooled), `match` (which figure of A is which of B), `judging` (one
matched figure judged: B/A, its interval and the verdict, the family's correction; the
statistics are stats'), `verdicts` (`compare A B` itself: match, judge each, correct over all
figures), `tables` (a comparison as the registered sections' tables), `output` (compare.md,
.csv, .png through the report's exporters; the terminal). `report A B` (`side_by_side`) joins
the sections' own tables across sides, one column group each.

It stands on the report (registry, sections, tables, exporters, html_report; `report A B` on
the writer); the report itself imports nothing of it. May import what `report` may.
"""
