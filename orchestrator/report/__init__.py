"""The chapter's report from a dataset, and the comparisons of two: one report model.

Registered sections own their row selection, tables, findings and plot: `section` (what a
section is made of, a leaf: `Table`, `Section`, `Thresholds`), `registry` (how one registers,
`@section`, and what it reads, `Context`), `sections/` (one module per section, its own checks
included). `report` (`writer`: report.md and the CSVs), `report A B` and `compare` (the
`compare/` wing) read them; Markdown, CSV and PNG (`exporters`, over the drawers of `plots`
and `sizes_plot`, with the axes of `plot_style` and each build's one colour and marker of
`styles`) and HTML (`html_report`: report.html, compare.html) are exporters over them;
`escape` makes text from the data safe in Markdown and HTML.

What a reader sees first: `summary` (the chapter's lessons as measured: which clock lies, a cold
first call, the fastest build, the same numbers), `opening` (the findings first, the warnings by
kind, the sections with nothing to show named once), from what `digest` reads off the built
sections (the warnings typed and counted, near-identical ones grouped, the tables absent). The
writer builds the lessons and hands them in: the page builders stand on no builder.

The pieces the sections share:
- words and tables: `names` (a run, a build, a method put into words), `cells` (a time and an
  error in a cell), `tables` (the shared table pieces, the accuracy and failures tables),
  `timing_tables` (tables 1, 2, 3, 5), `process_table` (every figure over its processes;
  stopping targets missed), `ratios` (spread and candidate / reference tables), `sample_sets`
  (the raw samples, one set per summary line);
- checks: `checks` (the warnings several sections share), `findings` (what a check found,
  typed), `clock_checks`, `env_checks` (environment, queued proof), `state_checks` (machine
  state), `drift` (the sweep's drift over process order), `arithmetic` (a run's FP32/TF32: its
  tag, words, accuracy cell; a leaf), `arithmetic_checks` (what is found about it);
- measures: `clocks` (what each clock measured, kernel names), `energy` (energy per matmul),
  `cache_report` (autotune choice, cold spread, priming runs), `profile_report` (profile runs),
  `first_call_breakdown` (a first call taken apart), `peaks` (each device's peak FLOP/s and
  bandwidth), `sizes`, `sizes_report`, `sizes_plot` (how cost grows with the size).

`partial`: the report `run` writes while builds go on (the writer imported at its first).

The statistics are `stats`' (intervals, verdict tests, resampling, trend).

Floors (bench/import_graph.py; tests/test_layers.py holds them): leaves (`section`, `findings`,
`names`, `cells`, `arithmetic`, `escape`, ...), then the table pieces and the registry, the
builders, the sections and page parts, the writer, and the entry points (`partial`, compare's
and history's outputs): six at most.

May import: `data`, `records`, `programs`, `stats`, `vocabulary`, `axes`, `errors`. Not
`experiments`, `run` or `cli`.
"""
