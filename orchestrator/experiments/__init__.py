"""The experiments file and its plan.

`config` (pydantic models, validation, JSON Schema), `yamlsource` (YAML loading that keeps
every value's line, within limits), `limits` (every size and count limit, the strict field
types), `messages` (validation errors in YAML words, every problem), `plan` (expand the file
into runs, each runnable or skipped with why).

May import: `programs` (what frameworks, devices and capabilities exist), `records`
(the run definition), `axes` (the sweep axes it expands), `errors`. Not `run`, `report` or `cli`.
"""
