"""What is measured and kept.

`records` (runs, builds, figures, samples, headers; status, role and cache enums; the one
`classify` that decides whether a run failed), `schema` (the store's SQL schema, figure
columns, migrations), `store` (the SQLite results store), `parse` (printed lines into
figures), `durations` (Rust's duration format), `dataset` (pandas, CSV), `accuracy`
(comparing the dumped arrays).

May import: `programs`, `vocabulary`, `errors`, `signals`. Not `spec`, `run`, `report` or `cli`.
"""
