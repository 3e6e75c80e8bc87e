"""Executing a plan.

Its modules: `sweep` (all runs, resume; `plan()`), `background` (builds in a background thread
while ready runs are measured; the staged first report), `stopping` (a series run to a
precision target: when to stop, and why), `deciding` (run until decided: a variants group's
look at a level that holds under repeated looks), `resume` (what a sweep finds as it begins:
sweeps a dead orchestrator left running, the state it resumes, an edited experiments file),
`runner` (one run), `process` (spawn, wait, kill; output capped while it runs), `leftovers`
(the running program's ledger, a dead orchestrator's leftovers, daemons that left the group),
`artifacts` (an accuracy run's arrays, bounded by its shape), `cache` (burn's autotune cache),
`cache_lock` (one orchestrator at a time on a cache folder, machine-wide), `results_place` (no
results folder inside a cache a run deletes), `driver_cache` (the CUDA driver's JIT cache per
series), `cache_record` (what a run's caches held before and after), `machine` (capabilities,
host facts, load), `fact_commands` (the facts' commands run side by side, bounded; one that
hung remembered, not asked again), `detect` (OS, architecture, Apple silicon, Metal;
`--assume`), `gpu_state` and `cpu_state` (NVML's and the CPU's state around each run),
`profile` (profile runs under Nsight Compute), `progress`, `carry` (GPU machines without cargo).

May import: `experiments`, `records`, `data`, `programs`, `stats`, `vocabulary`, `errors`,
`signals`. Not `report` or `cli`.
"""
