"""What is measured and kept.

`schema` (the store's SQL schema, figure columns, migrations), `store` (the SQLite results
store: its tables; `store_file`, opening it and migrating; `store_guard`, what may lie in its
folder, its lock, its readers' leftovers), `parse` (printed lines into figures: the entry;
`line_forms`, the printed forms as patterns; `parser`, its state and a handler per form),
`durations` (Rust's duration format), `dataset` (pandas: the tidy dataset; `sweep_runs`, a
sweep's runs and facts; `sweep_rows`, its figures and samples; `csv_export`, the CSV),
`accuracy` (comparing the dumped arrays).

May import: `records`, `programs`, `vocabulary`, `axes`, `errors`, `signals`. Not `experiments`,
`run`, `report` or `cli`.
"""
