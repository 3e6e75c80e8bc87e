"""The chapter's report from a dataset, and the comparisons of two: one report model.

Registered sections own their row selection, tables, findings and plot: `registry` (what a
section is, `@section`), `sections/` (one module per section, its own checks included); `report`
(`writer`), `report A B` (`side_by_side`: the sections' side tables joined across sides) and
`compare` (`compare_tables`: a comparison as sections and tables, in the registered sections'
compare order) read them, and Markdown, CSV (`writer`) and PNG (`plots`) are exporters over
them. Beside: `names` (a run, a build, a method put into words), `tables` (the shared table
pieces, the accuracy and failures tables), `timing_tables` (tables 1, 2, 3, 5), `checks` (the
warnings several sections share), `sample_sets` (the raw samples, one set per summary
line), `ratios` (spread and candidate / reference tables); `compare` (verdicts),
`compare_rows`, `compare_match`, `compare_sides`, `compare_output` (compare's files and its
terminal table).

The statistics are `stats`' (intervals, verdict tests, resampling, trend).

May import: `data`, `records`, `programs`, `stats`, `vocabulary`, `axes`, `errors`. Not
`experiments`, `run` or `cli`.
"""
