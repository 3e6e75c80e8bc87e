#!/usr/bin/env bash
# Issues 40 and 41 on the H200, in one device call (about 9 minutes):
#  1. variants-ab.yaml: one sweep of four variants in shuffled rounds (a, b identical; c cuBLAS
#     TF32 off; d MKL_CBWR=COMPATIBLE), torch FP32/TF32 and JAX at 2048², torch CPU at 512².
#  2. two sweeps of the A/A file of aa.sh, the second with MKL_CBWR=COMPATIBLE on the CPU runs
#     (3 processes a side: the power test of issue 41).
# Only the sweeps run there; their stores come back xz'd under $OUT and are reported here.
#   OUT=/dir scripts/h200/variants-ab.sh        (carry build/bundle.tar.xz, made by
#   `python -m orchestrator bundle scripts/h200/variants-ab.yaml`)
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the folder the results go to}"
PYTHON=${PYTHON:-python3}
export PYTHON
root=build/h200-va
mkdir -p "$OUT" "$root"
start=$(date +%s)
left() { echo $(( ${BUDGET_S:-540} - ($(date +%s) - start) )); }
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm,temperature.gpu \
    --format=csv,noheader || true; } > "$OUT/gpu.txt" 2>&1
sed -n '/^version/,/^YAML$/p' scripts/h200/aa.sh | sed '$d' > "$root/aa.yaml"
sed 's/^    threads: \[1, 4\]$/    threads: [1, 4]\n    env: {MKL_CBWR: COMPATIBLE}/' \
    "$root/aa.yaml" > "$root/slow.yaml"
run() {  # NAME FILE SECONDS
    timeout "$3" scripts/run-offline.sh "$2" "$root/$1" --quiet > "$root/run-$1.log" 2>&1
    echo "$1: exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/steps.txt"
}
run variants scripts/h200/variants-ab.yaml "$(( $(left) - 210 ))"
run a "$root/aa.yaml" "$(( ($(left) - 20) / 2 ))"
run slow "$root/slow.yaml" "$(( $(left) - 15 ))"
export PYTHONPATH="$PWD/build/offline-site${PYTHONPATH:+:$PYTHONPATH}"
for side in variants a slow; do
    [ -f "$root/$side/results.sqlite" ] || continue
    # a sweep cut by `timeout` leaves its last runs in the WAL: SQLite's backup copies both
    "$PYTHON" scripts/h200/store_copy.py "$root/$side/results.sqlite" "$root/$side.sqlite"
    xz -T0 -c "$root/$side.sqlite" > "$OUT/results-$side.sqlite.xz"
done
tail -n 3 "$root"/run-*.log > "$OUT/run-tails.txt" 2>&1
echo "done after $(( $(date +%s) - start )) s" | tee -a "$OUT/steps.txt"
