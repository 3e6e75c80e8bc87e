"""The benchmark programs, one module per framework, behind one interface.

`base` (the `Program` interface), `torch` (bench_py/exec_gpu.py), `burn` (the bench_rust
crates), `cargo` (building burn's crates). The registry here (`REGISTRY`, `get`) is what the
experiments file's `program` key, the plan, the runner, the parser and the report read.

May import: `data.records` (record types) and `errors`, nothing else of the package.
"""
