"""The compare wing: two result sets read side by side, from the report's sections.

`python -m orchestrator compare A B` gives a verdict per figure: `sides` (a results folder,
`folder@sweep`, a variant or a captured log, and its machine facts), `rows` (a side as one row
per figure, its processes pooled), `match` (which figure of A is which of B), `verdicts` (B/A,
its interval and the verdict, corrected over all figures; the statistics are stats'),
`tables` (a comparison as the registered sections' tables), `output` (compare.md, .csv, .png
through the report's exporters; the terminal). `report A B` (`side_by_side`) joins the
sections' own tables across sides, one column group each.

It stands on the report (registry, sections, tables, writer, plots); the report itself imports
nothing of it. May import what `report` may.
"""
