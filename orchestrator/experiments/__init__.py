"""The experiments file and its plan.

Its modules: `config` (pydantic models, JSON Schema), `targets` (what an experiment runs:
targets, builds, precision targets), `yamlsource` (YAML with line numbers, bounded), `limits`
(every size and count limit, strict field types), `messages` (validation errors in YAML words,
every problem), `plan` (runs, skips, run ids), `order` (interleaved, seeded rounds).

May import: `programs` (what frameworks, devices and capabilities exist), `records`
(the run definition), `axes` (the sweep axes it expands), `errors`. Not `run`, `report` or `cli`.
"""
