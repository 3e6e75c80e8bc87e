#!/usr/bin/env bash
# A/A on the H200 (issue 23): one small experiments file run twice back to back, same code and
# machine, then `compare A B` (at most 5% of verdicts may be faster/slower), and once with
# MKL_CBWR=COMPATIBLE on the CPU targets (a real change: torch cpu figures must be slower, the
# untouched cuBLAS figures never faster/slower). Each sweep: torch cuda FP32 and TF32 and torch
# cpu at 1 and 4 threads, 1024x1024, 20 reps, 3 processes per target, interleaved (seeded).
# Runs from the repo root; writes the stores, compare outputs and a summary under $OUT.
# Budget: about 12 processes per sweep; the whole script is bounded to 7.5 minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT to the folder for the results}
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] && PY=${PYTHON:-.venv/bin/python}
if ! "$PY" -c 'import torch, pydantic, pandas, rich, matplotlib' 2>/dev/null; then
    echo "aa.sh: $PY lacks torch, pydantic, pandas, rich or matplotlib (set PYTHON=...)" >&2
    exit 2
fi
START=$(date +%s)
mkdir -p "$OUT"
cat > "$OUT/aa.yaml" <<'YAML'
version: 1
defaults: {shape: [1024, 1024], reps: 20, timeout_s: 120, order: {interleave: true, seed: 23}}
experiments:
  gpu:
    mode: mm
    processes: 3
    targets:
      - {program: torch, device: cuda}
      - {program: torch, device: cuda, precision: tf32}
  cpu:
    mode: mm
    processes: 3
    threads: [1, 4]
    targets:
      - {program: torch, device: cpu}
YAML
# the real change: the same file, MKL on its reproducible (slow) path for the CPU runs only
sed 's/^    threads: \[1, 4\]$/    threads: [1, 4]\n    env: {MKL_CBWR: COMPATIBLE}/' \
    "$OUT/aa.yaml" > "$OUT/slow.yaml"
left() { echo $(( 450 - ($(date +%s) - START) )); }
for side in a b slow; do
    file="$OUT/aa.yaml"; [ "$side" = slow ] && file="$OUT/slow.yaml"
    t=$(left); [ "$t" -gt 20 ] || { echo "aa.sh: out of time before sweep $side" >&2; break; }
    timeout "$t" "$PY" -m orchestrator run "$file" --results "$OUT/$side" --quiet \
        > "$OUT/run-$side.log" 2>&1 || echo "aa.sh: sweep $side ended with $?" >&2
done
for pair in "a b" "a slow"; do
    set -- $pair
    [ -d "$OUT/$2" ] || continue
    "$PY" -m orchestrator compare "$OUT/$1" "$OUT/$2" --out "$OUT/compare-$1-$2" \
        > "$OUT/compare-$1-$2.txt" 2>&1 || true
    "$PY" -m orchestrator compare "$OUT/$1" "$OUT/$2" --correction bh \
        --out "$OUT/compare-bh-$1-$2" > "$OUT/compare-bh-$1-$2.txt" 2>&1 || true
done
"$PY" - "$OUT" <<'PYEOF' | tee "$OUT/summary.txt"
import csv, sys
from pathlib import Path
out = Path(sys.argv[1])
for name in ("compare-a-b", "compare-a-slow", "compare-bh-a-b", "compare-bh-a-slow"):
    path = out / name / "compare.csv"
    if not path.is_file():
        print(f"{name}: no compare.csv"); continue
    rows = [r for r in csv.DictReader(path.open()) if r["verdict"]]
    changed = [r for r in rows if r["verdict"] in ("faster", "slower")]
    print(f"{name}: {len(rows)} verdicts, {len(changed)} faster/slower "
          f"({100 * len(changed) / max(len(rows), 1):.0f}%)")
    for r in rows:
        print(f"  {r['verdict']:<24} {r['figure']:<45} ratio {r['ratio']:<12} "
              f"[{r['ci_low']} - {r['ci_high']}] {r['basis']}")
PYEOF
echo "aa.sh: done in $(( $(date +%s) - START )) s"
