#!/usr/bin/env bash
# Experiment-store benchmark (rerunnable; not a unit test):
#   1. appends 10,000 journal records (fdatasync each) and replays them  -- target: replay <= 1 s
#   2. lists 200 run directories with `evoteam runs`                     -- target: <= 0.5 s, peak RSS <= 64 MB
# Usage: bench/store_bench.sh [BUILD_DIR]      (default: build)
# EVOTEAM_BENCH_DIR=DIR puts the files on another file system (default: $TMPDIR or /tmp).
# Exit status: 0 when every measured target is met, 1 otherwise, 2 when a binary is missing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
tests_bin=$build/evoteam_tests
evoteam_bin=$build/evoteam
runs_target_s=0.5
rss_target_kb=$((64 * 1024))
run_count=200

base=${EVOTEAM_BENCH_DIR:-${TMPDIR:-/tmp}}
work=$(mktemp -d "$base/evoteam-store-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0

have_gnu_time=0
if [ -x /usr/bin/time ] && /usr/bin/time -v true >/dev/null 2>&1; then have_gnu_time=1; fi

echo "== journal: append and replay 10,000 records ($work)"
if [ -x "$tests_bin" ]; then
  journal_rc=0
  EVOTEAM_BENCH_DIR=$work "$tests_bin" --gtest_also_run_disabled_tests --gtest_filter='StoreBench.*' \
    >"$work/journal.txt" 2>&1 || journal_rc=$?
  grep -v -e '^Running main' -e '^Note: Google Test filter' -e '^\[' -e '^$' -e 'DISABLED TEST' "$work/journal.txt" || true
  if [ "$journal_rc" != 0 ]; then
    grep -e 'Failure' -A4 "$work/journal.txt" || true
    echo "journal bench: a target was missed"
    status=1
  fi
else
  echo "skipped: $tests_bin is not built (cmake --build $build --target evoteam_tests)"
  status=2
fi

echo
echo "== runs: list $run_count run directories with 'evoteam runs'"
runs_dir=$work/runs
mkdir -p "$runs_dir"
statuses=(finished stopped failed running)
for ((i = 0; i < run_count; i++)); do
  day=$((1 + i % 28))
  hour=$((i / 28))
  id=$(printf '202611%02dT%02d%02d00Z-task_%03d' "$day" "$hour" $((i % 60)) "$i")
  dir=$runs_dir/$id
  mkdir -p "$dir/task" "$dir/candidates" "$dir/cycles" "$dir/knowledge" "$dir/best"
  st=${statuses[$((i % 4))]}
  stop=null
  [ "$st" = stopped ] && stop='"budget"'
  started=$(printf '2026-11-%02dT%02d:%02d:00.000Z' "$day" "$hour" $((i % 60)))
  cat >"$dir/run.json" <<EOF
{
  "id": "$id",
  "task": "task_$(printf '%03d' "$i")",
  "status": "$st",
  "stop_reason": $stop,
  "pid": $((100000 + i)),
  "started": "$started",
  "updated": "$started",
  "provider": "scripted",
  "model": "offline",
  "budgets": {"cycles": 8, "tokens": 2000000},
  "summary": {"cycles": $((i % 9)), "evaluations": $((i % 40)), "best_speedup": 1.$((i % 90 + 10)),
              "best_candidate": "c00$((i % 10))", "tokens": {"input": $((i * 1000)), "output": $((i * 100))},
              "cost_usd": 0.$((i % 90 + 10))}
}
EOF
  {
    printf '{"evoteam_journal":1,"created":"%s"}\n' "$started"
    for ((seq = 1; seq <= 5; seq++)); do
      printf '{"seq":%d,"t":"%s","type":"evaluation","candidate":"c%03d","verdict":"PASS"}\n' "$seq" "$started" "$seq"
    done
  } >"$dir/journal.jsonl"
  : >"$dir/lock"
done

if [ -x "$evoteam_bin" ]; then
  "$evoteam_bin" runs --runs-dir "$runs_dir" >/dev/null  # warm the page cache: measure evoteam, not the disk
  start_ns=$(date +%s%N)
  if [ "$have_gnu_time" = 1 ]; then
    /usr/bin/time -v -o "$work/time.txt" "$evoteam_bin" runs --runs-dir "$runs_dir" >"$work/runs.txt"
  else
    "$evoteam_bin" runs --runs-dir "$runs_dir" >"$work/runs.txt"
  fi
  end_ns=$(date +%s%N)
  wall_s=$(awk -v a="$start_ns" -v b="$end_ns" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
  listed=$(($(grep -c -- '-task_' "$work/runs.txt" || true)))
  echo "listed $listed runs in $wall_s s (target <= $runs_target_s s)"
  [ "$listed" -eq "$run_count" ] || { echo "expected $run_count runs in the listing"; status=1; }
  awk -v w="$wall_s" -v t="$runs_target_s" 'BEGIN { exit !(w <= t) }' || { echo "runs: too slow"; status=1; }
  if [ "$have_gnu_time" = 1 ]; then
    rss_kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time.txt")
    echo "peak RSS of evoteam runs: $((rss_kb / 1024)) MB (target <= $((rss_target_kb / 1024)) MB)"
    [ "$rss_kb" -le "$rss_target_kb" ] || { echo "runs: too much memory"; status=1; }
  else
    echo "peak RSS: /usr/bin/time -v is not installed; not measured"
  fi
else
  echo "skipped: $evoteam_bin is not built (cmake --build $build --target evoteam)"
  [ "$status" = 0 ] && status=2
fi

exit "$status"
