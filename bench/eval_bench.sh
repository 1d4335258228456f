#!/usr/bin/env bash
# Evaluator benchmark (rerunnable):
#   1. evaluates the starting kernel of a task RUNS times and prints the spread of the per-workload medians
#      (target <= 3%);
#   2. prints each evaluation's wall time against its build and timed work, first with the candidate's build
#      cached (the RUNS evaluations of part 1), then for FRESH new candidates whose build is real (the starting
#      kernel with a distinct unused constant, as every candidate of a search is new) (target <= 1.10x);
#   3. re-evaluates an unchanged candidate from the result cache (target >= 20x faster than cold).
# "Timed work" is printed two ways: the measured samples alone (the harness's timed_s), and every timed call of
# the timing stage (warm-up, measured samples with their rechecks, fresh-input probes: the harness's elapsed
# time per workload after its input setup).
# Usage: bench/eval_bench.sh [TASK_DIR] [RUNS] [FRESH]     (EVOTEAM=path/to/evoteam, EVAL_BENCH_CACHE=dir)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TASK="${1:-$ROOT/kernels/host_matmul}"
RUNS="${2:-5}"
FRESH="${3:-3}"
EVOTEAM="${EVOTEAM:-$ROOT/build/evoteam}"
CACHE="${EVAL_BENCH_CACHE:-${TMPDIR:-/tmp}/evoteam-eval-bench-cache}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
[ -x "$EVOTEAM" ] || { echo "eval_bench: no evoteam binary at $EVOTEAM (build it, or set EVOTEAM)" >&2; exit 2; }

timed_eval() {  # NAME ARGS...: one evaluation, its JSON in $OUT/NAME.json and its process wall time in NAME.time
  local name="$1"; shift
  local start end
  start=$(date +%s.%N)
  "$EVOTEAM" eval "$TASK" --cache-dir "$CACHE" "$@" --json >"$OUT/$name.json" || true
  end=$(date +%s.%N)
  echo "$start $end" >"$OUT/$name.time"
}

echo "task $TASK, $RUNS evaluations, $FRESH fresh candidates, cache $CACHE"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
# One evaluation first, not counted: it builds the harness, the reference and the baseline once per machine, so
# run 1 is comparable with the others (the cold case is measured in part 3).
"$EVOTEAM" eval "$TASK" --cache-dir "$CACHE" --no-cache --json >/dev/null || true
# The machine's own floor: a fixed dependent floating-point chain, timed by thread CPU time in a fresh process
# before each evaluation. Its spread is what this machine allows any measurement between processes.
cat >"$OUT/floor.cpp" <<'CPP'
#include <time.h>
#include <algorithm>
#include <cstdio>
#include <vector>
static double cpu() { timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main() {
  volatile double seed = 1.0;
  std::vector<double> samples;
  for (int k = 0; k < 100; ++k) {
    const double start = cpu();
    double x = seed;
    for (int i = 0; i < 2000000; ++i) x = x * 1.0000001 + 1e-9;
    seed = x;
    samples.push_back(cpu() - start);
  }
  std::sort(samples.begin(), samples.end());
  std::printf("%.9f\n", samples[samples.size() / 2]);
}
CPP
floor_ok=0
"${CXX:-c++}" -O2 -o "$OUT/floor" "$OUT/floor.cpp" 2>/dev/null && floor_ok=1
for i in $(seq 1 "$RUNS"); do
  [ "$floor_ok" = 1 ] && "$OUT/floor" >"$OUT/floor$i.txt"
  timed_eval "run$i" --no-cache
done
# Fresh candidates: the starting kernel files, each with an unused constant no build has seen (a comment would not
# do: the build cache hashes preprocessed sources).
kernel_files=$(python3 -c 'import json,re,sys; t=json.loads(re.sub(r"(?m)^\s*//.*$","",open(sys.argv[1]).read())); print(" ".join(t["kernel"]["files"]))' "$TASK/task.json")
for i in $(seq 1 "$FRESH"); do
  mkdir -p "$OUT/fresh$i"
  for file in $kernel_files; do
    { cat "$TASK/$file"; echo "[[maybe_unused]] static const long long k_eval_bench_fresh_$i = $(date +%s%N)LL;"; } >"$OUT/fresh$i/$file"
  done
  timed_eval "fresh$i" --no-cache --candidate "$OUT/fresh$i"
done
# Part 3: a cold evaluation (result cache refreshed) then the same evaluation again.
"$EVOTEAM" eval "$TASK" --cache-dir "$CACHE" --refresh --json >"$OUT/cold.json" || true
timed_eval cached

python3 - "$OUT" "$RUNS" "$FRESH" <<'PY'
import json, statistics, sys
out, runs, fresh = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
load = lambda name: json.load(open(f"{out}/{name}.json"))
process_s = lambda name: (lambda t: t[1] - t[0])(list(map(float, open(f"{out}/{name}.time").read().split())))
results = [load(f"run{i}") for i in range(1, runs + 1)]
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
try:
    floors = [float(open(f"{out}/floor{i}.txt").read()) for i in range(1, runs + 1)]
    print("   machine floor: a fixed CPU loop in a fresh process before each evaluation: medians %s ms, spread %.2f%%" % (
        " ".join("%.3f" % (f * 1e3) for f in floors), 100 * (max(floors) - min(floors)) / statistics.mean(floors)))
except (OSError, ValueError):
    print("   machine floor: not measured (no C++ compiler)")

def overhead(label, names):
    print("\n2%s. wall time against the work, %s" % ("ab"[label == "fresh"], {
        "cached": "candidate build cached", "fresh": "fresh candidates (real builds)"}[label]))
    ratios_samples, ratios_calls = [], []
    for name in names:
        r = load(name)
        stages = {s["name"]: s["wall_s"] for s in r["stages"]}
        build = stages.get("static", 0) + stages.get("build", 0)
        samples = r["timed_s"]
        calls = sum(w.get("time_s", {}).get("elapsed", 0) for w in r["workloads"])
        setup = sum(w.get("time_s", {}).get("setup", 0) for w in r["workloads"])
        ahead = sum(w.get("time_s", {}).get("setup_ahead", 0) for w in r["workloads"])
        outside = r["wall_s"] - build - calls
        ratios_samples.append(r["wall_s"] / (build + samples))
        ratios_calls.append(r["wall_s"] / (build + calls))
        print("   %-7s %s: process %.2f s, evaluate() %.2f s = %s" % (name, r["verdict"], process_s(name), r["wall_s"],
              " + ".join("%s %.2f" % kv for kv in stages.items())))
        print("           build %.2f s, timing-stage calls %.2f s (measured samples %.2f s), timing setup %.2f s"
              " (%.2f s of it beside correctness); %.2f s outside build and calls"
              " -> %.2fx of build + calls, %.2fx of build + samples" % (
              build, calls, samples, setup, ahead, outside, ratios_calls[-1], ratios_samples[-1]))
    print("   median: %.2fx of build + timing-stage calls, %.2fx of build + measured samples (target <= 1.10x)" % (
        statistics.median(ratios_calls), statistics.median(ratios_samples)))

overhead("cached", [f"run{i}" for i in range(1, runs + 1)])
if fresh:
    overhead("fresh", [f"fresh{i}" for i in range(1, fresh + 1)])

cold, cached = load("cold"), load("cached")
print("\n3. cached re-evaluation")
print("   cold evaluate() %.3f s; cached evaluate() %.4f s (process %.3f s), result cache hit: %s" % (
    cold["wall_s"], cached["wall_s"], process_s("cached"), cached["cache"]["result_hit"]))
print("   ratio %.0fx in evaluate(), %.1fx for the whole process (target >= 20x)" % (
    cold["wall_s"] / max(cached["wall_s"], 1e-9), cold["wall_s"] / process_s("cached")))
PY
