#!/usr/bin/env bash
# Evaluator benchmark (rerunnable):
#   1. evaluates the starting kernel of a task 5 times and prints the spread of the per-workload medians
#      (target <= 3%);
#   2. prints each evaluation's wall time against its build and timed work, and against its phases;
#   3. re-evaluates an unchanged candidate from the result cache (target >= 20x faster than cold).
# Usage: bench/eval_bench.sh [TASK_DIR] [RUNS]     (EVOTEAM=path/to/evoteam, EVAL_BENCH_CACHE=dir)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TASK="${1:-$ROOT/kernels/host_matmul}"
RUNS="${2:-5}"
EVOTEAM="${EVOTEAM:-$ROOT/build/evoteam}"
CACHE="${EVAL_BENCH_CACHE:-${TMPDIR:-/tmp}/evoteam-eval-bench-cache}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
[ -x "$EVOTEAM" ] || { echo "eval_bench: no evoteam binary at $EVOTEAM (build it, or set EVOTEAM)" >&2; exit 2; }

echo "task $TASK, $RUNS evaluations, cache $CACHE"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
# Warm the build cache so run 1 is comparable with the others (the cold case is measured in part 3).
"$EVOTEAM" eval "$TASK" --cache-dir "$CACHE" --stages static,build --json >/dev/null || true
for i in $(seq 1 "$RUNS"); do
  start=$(date +%s.%N)
  "$EVOTEAM" eval "$TASK" --cache-dir "$CACHE" --no-cache --json >"$OUT/run$i.json" || true
  end=$(date +%s.%N)
  echo "$start $end" >"$OUT/run$i.time"
done
# Part 3: a cold evaluation (result cache refreshed) then the same evaluation again.
"$EVOTEAM" eval "$TASK" --cache-dir "$CACHE" --refresh --json >"$OUT/cold.json" || true
start=$(date +%s.%N)
"$EVOTEAM" eval "$TASK" --cache-dir "$CACHE" --json >"$OUT/cached.json" || true
end=$(date +%s.%N)
echo "$start $end" >"$OUT/cached.time"

python3 - "$OUT" "$RUNS" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
results = [json.load(open(f"{out}/run{i}.json")) for i in range(1, runs + 1)]
print("\n1. spread of the starting kernel's medians over %d evaluations" % runs)
print("   verdicts: " + ", ".join(r["verdict"] for r in results))
names = [w["name"] for w in results[0]["workloads"]]
worst = 0.0
for index, name in enumerate(names):
    medians = [r["workloads"][index]["candidate"]["median_s"] for r in results if len(r["workloads"]) > index]
    mean = statistics.mean(medians)
    spread = (max(medians) - min(medians)) / mean
    worst = max(worst, spread)
    print("   %-16s medians %s ms  spread %.2f%%  (relative stdev %.2f%%)" % (
        name, " ".join("%.3f" % (m * 1e3) for m in medians), 100 * spread,
        100 * statistics.pstdev(medians) / mean))
speedups = [r["speedup"] for r in results if r.get("speedup") is not None]
print("   speedup vs itself: %s" % " ".join("%.3f" % s for s in speedups))
print("   worst spread %.2f%% (target <= 3%%)" % (100 * worst))

print("\n2. wall time against the work")
for i, r in enumerate(results, 1):
    start, end = map(float, open(f"{out}/run{i}.time").read().split())
    stages = {s["name"]: s["wall_s"] for s in r["stages"]}
    phases = sum(stages.values())
    build_timed = r["build"]["wall_s"] + r["timed_s"]
    print("   run %d: process %.2f s, evaluate() %.2f s = %s" % (
        i, end - start, r["wall_s"], " + ".join("%s %.2f" % kv for kv in stages.items())))
    print("          build + timed work %.2f s -> %.2fx; sum of phases %.2f s -> %.2fx" % (
        build_timed, r["wall_s"] / build_timed if build_timed else float("nan"), phases, r["wall_s"] / phases))

cold = json.load(open(f"{out}/cold.json"))
cached = json.load(open(f"{out}/cached.json"))
start, end = map(float, open(f"{out}/cached.time").read().split())
print("\n3. cached re-evaluation")
print("   cold evaluate() %.3f s; cached evaluate() %.4f s (process %.3f s), result cache hit: %s" % (
    cold["wall_s"], cached["wall_s"], end - start, cached["cache"]["result_hit"]))
print("   ratio %.0fx in evaluate(), %.1fx for the whole process (target >= 20x)" % (
    cold["wall_s"] / max(cached["wall_s"], 1e-9), cold["wall_s"] / (end - start)))
PY
