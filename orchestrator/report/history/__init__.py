"""The history wing: every figure across the sweeps of one or more stores, and where it changed.

`python -m orchestrator history RESULTS...` reads every sweep of each results folder (merged or
not, any store format through its migrations) as one of compare's sides: `timeline` (the sweeps
ordered by time, what changed between two of them: compare's machine facts and the sweep's own),
`course` (each figure's course over the sweeps, matched step by step with compare's matching and
judged with compare's verdict, corrected over every step of the history as one family; the
change points), `output` (history.md, history.csv, a plot per figure group through the report's
exporters; the terminal; the command itself, `run`, and its CI gate).

It stands on the report and its compare wing; nothing in the report imports it.
May import what `report` may.
"""
