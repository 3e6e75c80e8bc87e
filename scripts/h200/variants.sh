#!/usr/bin/env bash
# Issue 40 on the H200: one sweep of three variants (scripts/h200/variants.yaml: a and b the
# same, c with NVIDIA_TF32_OVERRIDE=0), PyTorch FP32 and TF32 and JAX at 2048² and PyTorch CPU
# at 512², 4 processes each (48 runs, interleaved), then what must keep the variants apart:
#   report RESULTS        one column group per variant (env and note in the header), then every
#                         table with each variant's rows apart (labels end in #a, #b, #c)
#   report RESULTS#c      variant c alone
#   export RESULTS        the CSV, with its variant column
#   compare R#a R#b, R#a R#c   c's TF32 target prints tf32 but runs FP32 kernels: disputed,
#                         never judged against a's TF32 (the row names B's dispute)
#   OUT=/some/dir scripts/h200/variants.sh        (from the repo root or anywhere)
# On the GPU box (no pydantic, no network): first, on a machine with a network,
#   python -m orchestrator bundle scripts/h200/variants.yaml      (wheels; no burn binary)
# then the sweep runs through scripts/run-offline.sh and the reports with its offline-site,
# as scripts/h200/default-aa.sh does; a Python with pydantic runs it directly.
# Results under $OUT: results/ (the store), report/, report-c/, dataset*.csv, compare-a-b/,
# compare-a-c/, *.log and summary.txt (what to look for, checked). Bounded to ~8 minutes: a
# sweep cut by its timeout is resumed by running the script again (the store keeps its runs).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT to the folder for the results}
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] && PY=${PYTHON:-.venv/bin/python}
export PYTHON=$PY
START=$(date +%s)
mkdir -p "$OUT"
cp scripts/h200/variants.yaml "$OUT/variants.yaml"
R="$OUT/results"
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,uuid,driver_version,power.limit \
    --format=csv,noheader || true; } > "$OUT/gpu.txt" 2>&1
status=0
if "$PY" -c 'import torch, pydantic, pandas, rich, matplotlib' 2>/dev/null; then
    timeout 400 "$PY" -m orchestrator run scripts/h200/variants.yaml --results "$R" --quiet \
        --no-partial-report > "$OUT/run.log" 2>&1 || status=$?
elif [ -f build/bundle.tar.xz ] || ls build/wheels/*.whl >/dev/null 2>&1; then
    timeout 400 scripts/run-offline.sh scripts/h200/variants.yaml "$R" --quiet \
        --no-partial-report > "$OUT/run.log" 2>&1 || status=$?
    export PYTHONPATH="$PWD/build/offline-site${PYTHONPATH:+:$PYTHONPATH}"
else
    echo "variants.sh: $PY lacks pydantic (or torch, pandas, rich, matplotlib) and there is" \
         "no build/bundle.tar.xz or build/wheels for scripts/run-offline.sh" >&2
    exit 2
fi
echo "run: exit $status in $(( $(date +%s) - START )) s (124: cut by the timeout; run again)"
step() {  # name, then the command's arguments: its output in $OUT/NAME.log, never fatal
    local name=$1; shift
    "$PY" -m orchestrator "$@" > "$OUT/$name.log" 2>&1 || echo "$name: exit $?" >&2
}
step report report "$R" --out "$OUT/report"
step report-c report "$R#c" --out "$OUT/report-c"
step export export "$R" --csv "$OUT/dataset.csv"
step compare-a-b compare "$R#a" "$R#b" --out "$OUT/compare-a-b"
step compare-a-c compare "$R#a" "$R#c" --out "$OUT/compare-a-c"
"$PY" - "$OUT" <<'PYEOF' | tee "$OUT/summary.txt"
import csv, re, sys
from pathlib import Path
out = Path(sys.argv[1])
md = (out / "report" / "report.md").read_text() if (out / "report" / "report.md").is_file() \
    else ""
print("variant lines:", *[l for l in md.splitlines() if l.startswith("- **")
                          and "** = `" in l], sep="\n  ")
# the figures table: processes x reps of each row; 4 processes a target, never 8 or 12
fig = out / "report" / "figures.csv"
rows = list(csv.DictReader(fig.open())) if fig.is_file() else []
counts = {}
for r in rows:
    n = next((v for k, v in r.items() if k and "×" in (v or "")), "")
    counts[n.split(" × ")[0]] = counts.get(n.split(" × ")[0], 0) + 1
print(f"figures table: {len(rows)} rows, processes per row: {counts} (none above 4: "
      f"{all(int(k) <= 4 for k in counts if k.isdigit())})")
tf32 = [r for r in rows if "[tf32]" in str(r) or "disputed" in str(r)]
for r in tf32:
    if "kernel time" in str(r):
        print("  ", " | ".join(v for v in r.values() if v)[:200])
for name in ("compare-a-b", "compare-a-c"):
    path = out / name / "compare.csv"
    if not path.is_file():
        print(f"{name}: no compare.csv"); continue
    got = list(csv.DictReader(path.open()))
    verdicts = [r for r in got if r["verdict"]]
    apart = [r for r in got if r.get("apart")]
    print(f"{name}: {len(verdicts)} verdicts "
          f"({sum(r['verdict'] in ('faster', 'slower') for r in verdicts)} faster/slower), "
          f"{len(apart)} apart")
    for r in apart:
        print(f"  apart: {r['figure']}: {r['apart']}")
    for r in verdicts:
        if "TF32" in r["figure"] or "tf32" in r["figure"]:
            print(f"  {r['verdict']:<14} {r['figure']} ratio {r['ratio']}")
exp = out / "dataset.csv"
if exp.is_file():
    data = list(csv.DictReader(exp.open()))
    print("export: rows per variant:", {v: sum(r["variant"] == v for r in data)
                                        for v in sorted({r["variant"] for r in data})})
PYEOF
# one file to commit: a sweep cut by `timeout` leaves its last runs in the WAL, the copy has them
"$PY" scripts/h200/store_copy.py "$R/results.sqlite" "$OUT/results.sqlite" \
    || echo "store copy: exit $?" >&2
echo "variants.sh: done in $(( $(date +%s) - START )) s"
