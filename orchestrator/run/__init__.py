"""Executing a plan.

`sweep` (every run in order, resume, record), `runner` (one run: cache, argv, environment,
record), `process` (spawn, wait, kill a process group), `cache` (burn's on-disk autotune
cache), `machine` (capabilities, host facts, load), `progress` (what a person watching
sees), `carry` (binaries and wheels for a GPU machine without cargo).

May import: `experiments`, `records`, `data`, `programs`, `stats`, `vocabulary`, `errors`,
`signals`. Not `report` or `cli`.
"""
