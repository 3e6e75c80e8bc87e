"""The chapter's report from a dataset.

`registry` (what a section is, `@section`), `sections/` (one module per section: it selects its
rows once and gives its tables, plot and findings),
`names` (a run, a build, a method put into words), `tables` (the shared table pieces, the
accuracy and failures tables), `timing_tables` (tables 1, 2, 3, 5), `checks` (measurement
warnings), `spread` (statistics of the raw samples), `ratios` (spread and burn/PyTorch
tables), `plots` (PNG), `writer` (report.md and the CSVs).

May import: `data`, `records`, `programs`, `vocabulary`, `axes`, `errors`. Not `experiments`, `run`
or `cli`.
"""
