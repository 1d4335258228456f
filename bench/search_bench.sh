#!/usr/bin/env bash
# Search benchmark over measured landscapes (rerunnable; not a unit test). For each table in bench/landscapes/
# (written once by bench/landscape_sweep.py with evoteam's own evaluator), at budgets of 5%, 10% and 15% of the
# space: the builtin single, fixed and evolving teams (whole optimize runs through the replay fixture), random search,
# and Kernel Tuner's strategies in simulation mode over the same table exported as its cache file. Prints, per
# landscape and budget, the median and quartiles over seeds of the fraction of the exhaustive best reached, and the
# evaluations to reach 95% of it.
# Usage: bench/search_bench.sh [SEEDS] [LANDSCAPE_JSON...]   (defaults: 20 seeds, every bench/landscapes/*.json)
# EVOTEAM_BUILD_DIR (default build/) holds the replay runner (configured with EVOTEAM_BUILD_TESTS) and the bench
# environment bench-venv/ where `kernel-tuner` is installed by name with pip on the first run.
# EVOTEAM_KT_STRATEGIES overrides the Kernel Tuner strategies (comma-separated).
# Exit status: 0 when the table was printed, 1 when a run failed, 2 when something it needs is missing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${EVOTEAM_BUILD_DIR:-$root/build}
seeds=${1:-20}
shift || true
landscapes=("$@")
[ ${#landscapes[@]} -eq 0 ] && landscapes=("$root"/bench/landscapes/*.json)
strategies=${EVOTEAM_KT_STRATEGIES:-random_sample,genetic_algorithm,simulated_annealing,diff_evo,pso,greedy_ils,greedy_mls,mls,firefly_algorithm,dual_annealing,bayes_opt}

for tool in python3 cmake; do
  command -v "$tool" >/dev/null 2>&1 || { echo "missing: $tool"; exit 2; }
done
if [ ! -x "$build/evoteam_search_replay" ]; then
  cmake -S "$root" -B "$build" -DEVOTEAM_BUILD_TESTS=ON >/dev/null
  cmake --build "$build" -j "$(nproc)" --target evoteam_search_replay >/dev/null
fi
venv=$build/bench-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import kernel_tuner" 2>/dev/null; then
  python3 -m venv "$venv" || { echo "missing: python3-venv"; exit 2; }
  "$venv/bin/pip" install --quiet kernel-tuner
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/evoteam-search-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
for landscape in "${landscapes[@]}"; do
  task=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['task'])" "$landscape")
  budgets=$(python3 -c "import json,sys; n=len(json.load(open(sys.argv[1]))['configs']); \
print(','.join(str(round(n*p/100)) for p in (5,10,15)))" "$landscape")
  echo "== $task: budgets $budgets evaluations, $seeds seeds" >&2
  "$build/evoteam_search_replay" "$landscape" "$root/kernels/$task" single,fixed,evolving "$budgets" "$seeds" \
    >"$work/$task.builtin.jsonl"
  python3 "$root/bench/kt_cache.py" "$landscape" "$work/$task.kt_cache.json"
  "$venv/bin/python" "$root/bench/kt_strategies.py" "$work/$task.kt_cache.json" "$strategies" "$budgets" "$seeds" \
    >"$work/$task.kt.jsonl"
done
echo "search benchmark, $(date -u +%Y-%m-%d), $seeds seeds; cells: median [first quartile – third quartile] of the fraction of the exhaustive best"
python3 "$root/bench/search_summary.py" "$seeds" "${landscapes[@]}" -- "$work"/*.jsonl
