#!/usr/bin/env bash
# A/A of the default experiments.yaml on an H200 (issue 23: "same file, same machine, twice,
# with the defaults"): its steady-state experiment `methods` (precision target ±2%, processes
# interleaved by the file's seed, ncu profile runs, energy) run twice back to back into two
# results folders, then `compare A B` (Holm and Benjamini-Hochberg). One side per device call
# (a `methods` sweep takes ~7 minutes there); both folders stay on the warm machine under
# build/h200-aa/ between calls, and each call returns its store xz'd under $OUT.
#   OUT=/dir scripts/h200/default-aa.sh a SECONDS    # call 1: side A
#   OUT=/dir scripts/h200/default-aa.sh b SECONDS    # call 2: side B, then compare A B
# Offline: the CUDA binary and the wheels as scripts/h200/unpack.sh leaves them.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the folder the results go to}"
side=${1:?a or b}
limit=${2:-450}
PYTHON=${PYTHON:-python3}
export PYTHON
root=build/h200-aa
mkdir -p "$OUT" "$root"
start=$(date +%s)
scripts/h200/unpack.sh || exit 2
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,temperature.gpu \
    --format=csv,noheader || true; } > "$OUT/gpu-$side.txt" 2>&1
timeout "$limit" scripts/run-offline.sh experiments.yaml "$root/$side" --only methods --quiet \
    > "$OUT/run-$side.log" 2>&1
echo "methods $side: exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/steps-$side.txt"
export PYTHONPATH="$PWD/build/offline-site${PYTHONPATH:+:$PYTHONPATH}"
# a sweep cut by `timeout` leaves its last runs in the WAL: SQLite's backup copies both
"$PYTHON" scripts/h200/store_copy.py "$root/$side/results.sqlite" "$root/$side.sqlite"
xz -T0 -c "$root/$side.sqlite" > "$OUT/results-$side.sqlite.xz"
if [ "$side" = b ] && [ -f "$root/a/results.sqlite" ]; then
    for correction in holm bh; do
        "$PYTHON" -m orchestrator compare "$root/a" "$root/b" --correction "$correction" \
            --out "$OUT/compare-$correction" > "$OUT/compare-$correction.txt" 2>&1
        echo "compare ($correction): exit $?" | tee -a "$OUT/steps-$side.txt"
        tail -2 "$OUT/compare-$correction.txt" | tee -a "$OUT/steps-$side.txt"
    done
    rm -f "$OUT"/compare-*/compare.png  # the CSV and Markdown say it all; keeps the files few
fi
echo "done after $(( $(date +%s) - start )) s" | tee -a "$OUT/steps-$side.txt"
