"""What is measured and kept.

Its modules: `schema` (SQL, figure columns, migrations), `store` (SQLite: the tables),
`store_file` (opening: writing, reading, migrating), `store_guard` (the lock file, files beside
a store, readers' leftovers), `damage` (store rows that cannot be read: skipped, counted,
named), `parse` (printed lines: the entry), `line_forms` (their forms as patterns, what a
method's and a label's words mean), `parser` (its state, a handler per form), `durations`
(Rust's duration format), `ncu` (Nsight Compute's CSV into kernel times), `dataset` (pandas:
the tidy dataset), `frame_records` (a frame's rows as plain dicts, column by column), `heap`
(freed memory handed back to the OS after a load), `sweep_runs` (a sweep's runs, their
contexts, its facts, the accuracy rows), `sweep_rows` (its figures and samples out of the
store, within the size limit), `csv_export` (the dataset as CSV with its schema sidecar),
`identity` (a figure's identity, defined once: what no answer pools across, a host, a sweep, a
variant; `FOLDER@HOST#VARIANT` names one part), `merge` (hosts' stores into one, keyed by host;
every refusal before a write, one transaction), `outputs` (where export, parse, report, compare
may write: new paths or their own earlier files, never an input), `state_columns` (the
dataset's `gpu_`/`cpu_` columns), `cache_columns` (`autotune_kernel`, `autotune_median_s`,
`cache_proof`), `old_proofs` (the queued proof an older bench_py said on stderr, read back by
`reparse`), `precision` (each run's arithmetic), `kernel_names` (the arithmetic a matmul
kernel's name says), `accuracy`, `measure_env` (the one list of measurement-changing
environment variables, with sources).

May import: `records`, `programs`, `vocabulary`, `axes`, `errors`, `signals`. Not `experiments`,
`run`, `report` or `cli`.
"""
