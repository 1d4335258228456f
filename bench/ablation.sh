#!/usr/bin/env bash
# Team ablation at equal budget (rerunnable; not a unit test): the single, fixed and evolving teams each optimise
# the host task kernels/host_matmul with the same evaluation budget, once per seed, then `evoteam compare` puts
# every run side by side (best speedup, evaluations and tokens to reach 90% of the final best, area under the
# best-so-far curve, cost) and a summary per mode gives the mean over seeds of the best speedup and of the
# evaluations to 90% of the final best.
# Usage: bench/ablation.sh [BUILD_DIR] [EVALUATIONS] [SEEDS] [TASK_DIR]
#        (defaults: build, 40 evaluations per run, 3 seeds: 1 2 3; SEEDS=N runs seeds 1..N; kernels/host_matmul)
# EVOTEAM_ABLATION_ARGS="--provider anthropic --model NAME" runs the LLM teams instead of the builtin one (any
# further optimize flags go there too; add --budget-tokens or --budget-usd for an equal spend in tokens).
# EVOTEAM_ABLATION_AGENT=claude-code (or codex, or a command template) makes every member that coding-agent CLI: the
# seed's comparison of one agent alone (single) against the evolving team of the same agents; give an equal spend
# with EVOTEAM_ABLATION_ARGS="--budget-tokens N" (EVOTEAM_ABLATION_MODES="single evolving" leaves out fixed).
# EVOTEAM_BENCH_DIR=DIR puts the runs on another file system (default: $TMPDIR or /tmp);
# EVOTEAM_BENCH_KEEP=1 keeps the work directory (its runs) and writes the overlay chart WORK/ablation.html.
# Exit status: 0 when every run ended (a budget stop, exit 5, is the expected end) and the comparison was
# printed, 1 otherwise, 2 when a binary or python3 is missing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
evaluations=${2:-40}
seeds=${3:-3}
evoteam_bin=$build/evoteam
task_dir=${4:-$root/kernels/host_matmul}
read -r -a modes <<< "${EVOTEAM_ABLATION_MODES:-single fixed evolving}"
agent_args=()
[ -n "${EVOTEAM_ABLATION_AGENT:-}" ] && agent_args=(--agent "$EVOTEAM_ABLATION_AGENT")

if [ ! -x "$evoteam_bin" ]; then
  echo "missing: $evoteam_bin is not built (cmake --build $build --target evoteam)"
  exit 2
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "missing: python3 (reads the JSON of evoteam optimize and evoteam compare)"
  exit 2
fi
case "$evaluations$seeds" in
  *[!0-9]*) echo "usage: bench/ablation.sh [BUILD_DIR] [EVALUATIONS] [SEEDS]"; exit 2 ;;
esac

base=${EVOTEAM_BENCH_DIR:-${TMPDIR:-/tmp}}
work=$(mktemp -d "$base/evoteam-ablation.XXXXXX")
keep=${EVOTEAM_BENCH_KEEP:-0}
if [ "$keep" = 1 ]; then
  trap 'echo "kept: $work"' EXIT
else
  trap 'rm -rf "$work"' EXIT
fi
runs_dir=$work/runs
mkdir -p "$runs_dir"
status=0

echo "== ablation on $(basename "$task_dir"): ${modes[*]} teams, $evaluations evaluations each, seeds 1..$seeds ($work)"
run_dirs=()
for ((seed = 1; seed <= seeds; seed++)); do
  for mode in "${modes[@]}"; do
    log=$work/$mode-seed$seed
    rc=0
    start_ns=$(date +%s%N)
    # The evaluation budget is the one limit (no cycle cap), and the runs share one result cache of their own:
    # a config measured once reads the same for every team, so the teams differ by their search alone.
    "$evoteam_bin" --quiet --set eval.cache_dir="$work/cache" optimize "$task_dir" --team "$mode" \
      --budget-evaluations "$evaluations" --max-cycles 1000 --seed "$seed" ${agent_args[@]+"${agent_args[@]}"} ${EVOTEAM_ABLATION_ARGS:-} \
      --runs-dir "$runs_dir" --json >"$log.json" 2>"$log.log" || rc=$?
    end_ns=$(date +%s%N)
    # The run directory, from the final JSON summary.
    dir=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("run_dir", ""))' "$log.json" 2>/dev/null || true)
    wall=$(awk -v a="$start_ns" -v b="$end_ns" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
    # 0: a target or cycle limit was reached; 5: the evaluation budget ran out, which is how these runs end.
    if [ "$rc" != 0 ] && [ "$rc" != 5 ] || [ -z "$dir" ] || [ ! -f "$dir/run.json" ]; then
      echo "seed $seed, $mode: failed (exit $rc)"
      tail -n 5 "$log.log" || true
      status=1
      continue
    fi
    reason=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("stop_reason", ""))' "$log.json" 2>/dev/null || true)
    echo "seed $seed, $mode: $(basename "$dir") in $wall s (exit $rc, $reason)"
    run_dirs+=("$dir")
  done
done
if [ "${#run_dirs[@]}" = 0 ]; then
  echo "no run finished"
  exit 1
fi

echo
echo "== evoteam compare (${#run_dirs[@]} runs)"
if ! "$evoteam_bin" compare "${run_dirs[@]}"; then
  echo "evoteam compare failed"
  exit 1
fi
if [ "$keep" = 1 ]; then
  "$evoteam_bin" compare "${run_dirs[@]}" --html "$work/ablation.html" >/dev/null && echo "overlay chart: $work/ablation.html" ||
    { echo "evoteam compare --html failed"; status=1; }
fi

echo
echo "== per mode, mean over seeds"
if ! "$evoteam_bin" compare "${run_dirs[@]}" --json >"$work/compare.json"; then
  echo "evoteam compare --json failed"
  exit 1
fi
python3 "$root/bench/ablation_summary.py" "$work/compare.json" || status=1
exit "$status"
