"""Copy a results store with what its WAL holds (SQLite's online backup), for bringing a
store back from a device call: a sweep stopped by `timeout` commits each run to the WAL, and a
copy of results.sqlite alone loses them (2026-12-03: a sizes-ncu sweep cut at 150 s came back
with no tables). Reads the source read-only.
    python scripts/h200/store_copy.py SRC DEST
"""

import sqlite3
import sys
from pathlib import Path

src, dest = Path(sys.argv[1]), Path(sys.argv[2])
dest.unlink(missing_ok=True)
with sqlite3.connect(f"file:{src}?mode=ro", uri=True) as source, sqlite3.connect(dest) as copy:
    source.backup(copy)
print(f"{dest}: {dest.stat().st_size} bytes")
