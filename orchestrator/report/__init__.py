"""The chapter's report from a dataset, and the comparisons of two: one report model.

Registered sections own their row selection, tables, findings and plot: `section` (what a
section is made of, a leaf: `Table`, `Section`, `Thresholds`), `registry`
(how one registers, `@section`), `sections/` (one module per section, its own checks included).
`report` (`writer`: report.md and the CSVs), `report A B` and `compare` (the `compare/` wing)
read them; Markdown, CSV (`writer`), HTML (`html_report`: report.html, compare.html) and PNG
(`plots`, with the axes of `plot_style` and each build's one colour and marker of `styles`) are
exporters over them; `escape` makes text from the data safe in Markdown and HTML.

What a reader sees first: `summary` (the chapter's lessons as measured: which clock lies, a cold
first call, the fastest build, the same numbers), `opening` (the findings first, the warnings by
kind, the sections with nothing to show named once).

The pieces the sections share:
- words and tables: `names` (a run, a build, a method put into words), `tables` (the shared
  table pieces, the accuracy and failures tables), `timing_tables` (tables 1, 2, 3, 5),
  `process_table` (every figure over its processes; stopping targets missed), `ratios`
  (spread and candidate / reference tables), `sample_sets` (the raw samples, one set per
  summary line);
- checks: `checks` (the warnings several sections share), `findings` (what a check found,
  typed), `clock_checks`, `env_checks` (environment, queued proof), `state_checks` (machine
  state), `drift` (the sweep's drift over process order), `arithmetic` (FP32/TF32 pairing);
- measures: `clocks` (what each clock measured, kernel names), `energy` (energy per matmul),
  `cache_report` (autotune choice, cold spread, priming runs), `profile_report` (profile runs),
  `first_call_breakdown` (a first call taken apart), `peaks` (each device's peak FLOP/s and
  bandwidth), `sizes`, `sizes_report`, `sizes_plot` (how cost grows with the size).

`partial`: the report `run` writes while builds go on (the writer imported at its first).

The statistics are `stats`' (intervals, verdict tests, resampling, trend).

May import: `data`, `records`, `programs`, `stats`, `vocabulary`, `axes`, `errors`. Not
`experiments`, `run` or `cli`.
"""
