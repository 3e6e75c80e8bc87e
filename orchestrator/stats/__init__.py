"""Statistics of timings, a leaf: plain numbers and arrays in, numbers out; nothing of the
orchestrator imported (tests/test_layers.py holds it to that).

- `intervals`: the process as the unit: a figure's interval over its processes (t on the logs,
  the two-level bootstrap), B/A's interval and p-value, Holm and Benjamini-Hochberg, the
  prediction interval of one value; the t distribution without SciPy.
- `spread`: distribution-free statistics of one sample set: the median's order-statistic
  interval, the IQR, the bootstrap interval of a ratio of medians, the one safe ratio.
- `trend`: Theil-Sen's slope and the Mann-Kendall test (the report's drift check).
- `power`: the family's level, paired rounds, and the processes that would decide a figure
  (compare's `processes_needed`, the stopping target's missed lines).
- `sequential`: alpha spending over looks after every round (run until decided).

The report, `compare` and the stopping rule (run/stopping.py) all read them here.

May import: nothing of the orchestrator (numpy and the standard library only).
"""
