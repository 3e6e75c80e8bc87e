#!/usr/bin/env bash
# Issue 42 on an H200: torch.compile and CUDA graphs, cold and warm, proven. Offline (torch-only:
# the bundle needs no binary; its wheels carry pydantic and the rest), bounded to ~8 minutes;
# everything goes under $OUT:
#   OUT=/dir scripts/h200/compile.sh            (after `python -m orchestrator bundle
#                                                scripts/h200/compile.yaml` on the dev box)
# 1. raw/: the program alone, compile:max-autotune cold then warm in a fresh cache folder (and a
#    fresh CUDA_CACHE_PATH): each process's stdout (first call, breakdown, autotune winner, cache
#    counters, every clock, kernel time from CUPTI) and the folder's listing before and after;
#    the cold process saves the mega-cache blob, a third ("mega") loads it into empty folders
# 2. sweep/: scripts/h200/compile.yaml through the orchestrator (first call across processes
#    cold then warm for eager, compile, compile:max-autotune, cudagraph; methods at 1024²; 256²
#    and 4096²; accuracy of max-autotune's choice FP32 and TF32), its report and CSV export
# 3. summary.txt: the lines that answer the issue, grepped from both
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the folder for the results}"
PYTHON=${PYTHON:-python3}
export PYTHON
mkdir -p "$OUT/raw"
START=$(date +%s)
left() { echo $(( ${LIMIT:-470} - ($(date +%s) - START) )); }
"$PYTHON" -c 'import torch, triton; print(torch.__version__, triton.__version__,
torch.cuda.get_device_name(0))' > "$OUT/versions.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$OUT/versions.txt" 2>&1
# 1. the program alone: one cold/warm pair of max-autotune, the cache folder listed around each
cache=$(mktemp -d) drv=$(mktemp -d) blobs=$(mktemp -d) mega=$(mktemp -d)
rmdir "$cache" "$mega"  # the program's folder does not exist before the cold process
blob="$blobs/max-autotune.bin"
for proc in cold warm mega; do
    dir=$cache extra=()
    [ "$proc" = cold ] && extra=(--save-cache-artifacts "$blob")
    [ "$proc" = mega ] && dir=$mega extra=(--load-cache-artifacts "$blob")
    { echo "== before $proc"; find "$dir" -type f 2>/dev/null | sed "s|$dir/||" | sort
      echo "files: $(find "$dir" -type f 2>/dev/null | wc -l)"; } >> "$OUT/raw/cache-listing.txt"
    CUDA_CACHE_PATH="$drv" timeout 240 "$PYTHON" bench_py/exec_gpu.py --device cuda \
        --shape 1024x1024 --reps 20 --samples --exec compile:max-autotune --cache-dir "$dir" \
        "${extra[@]}" > "$OUT/raw/max-autotune-$proc.out" 2> "$OUT/raw/max-autotune-$proc.err" \
        || echo "raw $proc: exit $?" | tee -a "$OUT/steps.txt"
done
{ echo "== after warm"; find "$cache" -type f | sed "s|$cache/||" | sort
  echo "files: $(find "$cache" -type f | wc -l)"; du -sb "$cache/inductor" "$cache/triton"
  echo "== after mega"; find "$mega" -type f | sed "s|$mega/||" | sort
  echo "files: $(find "$mega" -type f | wc -l)"; ls -l "$blob"; } \
    >> "$OUT/raw/cache-listing.txt" 2>&1
rm -rf "$cache" "$drv" "$blobs" "$mega"
# eager and CUDA graph replay, the same clocks and CUPTI: the launch gap graphs remove
for mode in eager cudagraph; do
    timeout 120 "$PYTHON" bench_py/exec_gpu.py --device cuda --shape 1024x1024 --reps 20 \
        --samples --exec "$mode" > "$OUT/raw/$mode.out" 2> "$OUT/raw/$mode.err" \
        || echo "raw $mode: exit $?" | tee -a "$OUT/steps.txt"
done
echo "raw: done after $(( $(date +%s) - START )) s" | tee -a "$OUT/steps.txt"
# 2. the orchestrator's sweep with the remaining time (a cut sweep keeps what it measured)
scripts/h200/unpack.sh 2>/dev/null || true
t=$(left)
if [ "$t" -gt 60 ]; then
    timeout "$t" scripts/run-offline.sh scripts/h200/compile.yaml build/compile-sweep --quiet \
        > "$OUT/run-sweep.log" 2>&1
    echo "sweep: exit $? after $(( $(date +%s) - START )) s" | tee -a "$OUT/steps.txt"
    site="$PWD/build/offline-site"
    if [ -f build/compile-sweep/results.sqlite ]; then
        "$PYTHON" scripts/h200/store_copy.py build/compile-sweep/results.sqlite "$OUT/results.sqlite"
        for cmd in "report build/compile-sweep --out $OUT/report" \
                   "export build/compile-sweep --csv $OUT/dataset.csv"; do
            PYTHONPATH="$site" timeout 120 "$PYTHON" -m orchestrator $cmd >> "$OUT/post.log" 2>&1 \
                || echo "$cmd: exit $?" >> "$OUT/steps.txt"
        done
    fi
else
    echo "sweep: skipped, $t s left" | tee -a "$OUT/steps.txt"
fi
# 3. what answers the issue, in one place
{
    echo "== raw first calls (cold, warm, mega: empty folders + the cold one's blob)"
    grep "first call\|autotune (inductor)\|compile cache" "$OUT"/raw/max-autotune-*.out
    echo "== raw with sync vs kernel time"
    for f in "$OUT"/raw/*.out; do echo "-- $(basename "$f")"
        grep -h "with sync, \|Event time, \|kernel time (cupti), \|# kernel .*kernel time" "$f"; done
    grep -h "^files:" "$OUT/raw/cache-listing.txt"
    echo "== sweep report: first call taken apart, clocks"
    [ -f "$OUT/report/report.md" ] && grep -A 14 "### First call taken apart" "$OUT/report/report.md"
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
echo "compile.sh: done in $(( $(date +%s) - START )) s" | tee -a "$OUT/steps.txt"
