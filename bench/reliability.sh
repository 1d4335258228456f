#!/usr/bin/env bash
# Reliability figures (rerunnable; not a unit test), against the real binary on kernels/host_matmul, no key, no GPU:
#   1. kill -9 at random instants of a builtin run and of a scripted-LLM run, each followed by `resume`: every
#      resume continues, every journal parses (but for a torn last line), each kill's journal is a prefix of the
#      next, no candidate is evaluated twice, no cycle passes its allowance, and the finished run's distinct
#      candidates are set beside an uninterrupted run's of the same seed;
#   2. a full disk (a small tmpfs as the runs directory) at several points of a run: exit 74 naming the path,
#      `show` still reads the run, `resume` finishes it once the tmpfs is grown;
#   3. a read-only runs directory (a read-only bind mount): exit 74 with the path, every file byte-identical;
#   4. budgets from the command line: --budget-tokens (scripted) and --budget-evaluations (builtin) overshot by
#      at most the one call or evaluation under way;
#   5. provider faults at every step of an agent turn (429 with retry-after, 529, 500, reset, slow, malformed,
#      invalid tool arguments) and the budget stops: the tests that inject them, run by name;
#   6. a candidate that writes into its inputs: `evoteam eval --candidate` gives INPUT_MUTATED.
# Then one table: scenario, trials, passed, figure. docs/reliability.md keeps the figures measured with it.
# Usage: bench/reliability.sh [BUILD_DIR] [KILLS]     (defaults: build, 20 kills per killed run)
# Mounting needs root (tests run as root); without it scenarios 2 and 3 are reported as skipped.
# EVOTEAM_BENCH_DIR=DIR puts the work directory elsewhere (default: $TMPDIR or /tmp); EVOTEAM_BENCH_KEEP=1 keeps
# it; EVOTEAM_RELIABILITY_SEED=N seeds the kill instants (default 1). Every mount is undone on exit.
# Exit status: 0 when every trial passed, 1 otherwise, 2 when a binary or python3 is missing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
kills=${2:-20}
evoteam_bin=$build/evoteam
tests_bin=$build/evoteam_tests
task=$root/kernels/host_matmul
check=$root/bench/reliability_check.py
script=$root/tests/data/scripted/team_debug_story.jsonl
seed=7
kill_seed=${EVOTEAM_RELIABILITY_SEED:-1}

case "$kills" in
  '' | *[!0-9]*) echo "usage: bench/reliability.sh [BUILD_DIR] [KILLS]"; exit 2 ;;
esac
for binary in "$evoteam_bin" "$tests_bin"; do
  if [ ! -x "$binary" ]; then
    echo "missing: $binary is not built (cmake --build $build --target evoteam evoteam_tests)"
    exit 2
  fi
done
if ! command -v python3 >/dev/null 2>&1; then
  echo "missing: python3 (reads journals and JSON summaries)"
  exit 2
fi

base=${EVOTEAM_BENCH_DIR:-${TMPDIR:-/tmp}}
work=$(mktemp -d "$base/evoteam-reliability.XXXXXX")
keep=${EVOTEAM_BENCH_KEEP:-0}
mounts=()
live=""  # the session of a daemon we started and have not reaped yet

cleanup() {
  set +e
  if [ -n "$live" ]; then
    kill -9 -- -"$live" 2>/dev/null
    pkill -9 -s "$live" 2>/dev/null
  fi
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount "${mounts[$i]}" 2>/dev/null || umount -l "${mounts[$i]}" 2>/dev/null
  done
  if findmnt -rn -o TARGET | grep -q "^$work"; then
    echo "still mounted under $work (left in place):"
    findmnt -rn -o TARGET | grep "^$work"
  elif [ "$keep" = 1 ]; then
    echo "kept: $work"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rows=()
status=0
row() {  # scenario trials passed figure
  rows+=("$1|$2|$3|$4")
  [ "$2" = "$3" ] || status=1
}
field() { python3 "$check" field "$1" "$2"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# The one directory under $1 that is a run (holds run.json), if any.
run_in() { local d; for d in "$1"/*/; do [ -f "$d/run.json" ] && { echo "${d%/}"; return; }; done; true; }

# Evaluations kept short (a 2 s timing cap, four per cycle); the same seed everywhere.
per_cycle=4
settings=(--quiet --set team.evaluations_per_cycle=$per_cycle --set eval.timing.max_time_s=2)
builtin_args=(--provider builtin --max-cycles 3 --seed "$seed")
scripted_args=(--provider scripted --max-cycles 3 --seed "$seed" --set "llm.scripted_file=$script"
               --set supervisor.policy=rules)
can_mount=0
if [ "$(id -u)" = 0 ] && mkdir -p "$work/probe" && mount -t tmpfs -o size=64k tmpfs "$work/probe" 2>/dev/null; then
  umount "$work/probe"
  can_mount=1
fi

echo "== reliability on $(basename "$task"): $kills kills per killed run, seed $seed ($work)"
# One cache with the harness, the reference and the starting kernel built and measured: every run below starts
# from a copy of it, so runs differ by what they do, not by what was built before them.
"$evoteam_bin" "${settings[@]}" --set "eval.cache_dir=$work/cache-warm" eval "$task" --json >"$work/warm.json" \
  2>"$work/warm.log" || true

# --- 1. kill -9 and resume ------------------------------------------------------------------------------------
# One uninterrupted reference run per team, then KILLS kills. "cached": the killed runs read the reference's
# measurements from its cache (a few milliseconds an evaluation); each kill falls uniformly over one uninterrupted
# run's length on that cache, and runs are started until KILLS kills are done. "measured": the killed run measures
# every candidate again, harnesses running when the kills land; the kills fall uniformly over 2 D / KILLS of each
# process's life (D: the reference's duration), so they spread over one whole run. A run passes when every resume
# continued, every journal parsed and was a prefix of the next, the run finished, no candidate was evaluated twice
# and no cycle made more evaluations than its allowance (team.evaluations_per_cycle). Its count of distinct
# candidates is set beside the uninterrupted run's: a resumed turn plans again from the journaled history (the
# builtin optimizer does not replay its random draws, a scripted reply file replays from its first line), and the
# team follows measured speedups, so the counts can differ without anything being lost; the figure says by how much.
reference_run() {  # name, then the optimize arguments: sets ref_run ref_count ref_digest ref_duration
  local name=$1
  shift
  local dir=$work/kill-$name start rc=0
  mkdir -p "$dir"
  cp -a "$work/cache-warm" "$dir/cache-ref"
  start=$(now)
  "$evoteam_bin" "${settings[@]}" --set "eval.cache_dir=$dir/cache-ref" optimize "$task" "$@" \
    --runs-dir "$dir/ref" --json >"$dir/ref.json" 2>"$dir/ref.log" || rc=$?
  ref_duration=$(elapsed "$start")
  ref_run=$(field "$dir/ref.json" run_dir)
  ref_count=""
  ref_digest=""
  if [ "$rc" != 0 ] || [ -z "$ref_run" ]; then
    echo "$name: the uninterrupted run failed (exit $rc)"
    tail -n 5 "$dir/ref.log"
    return 0
  fi
  read -r ref_count ref_digest _ _ < <(python3 "$check" candidates "$ref_run")
  echo "$name: uninterrupted run in $ref_duration s, $ref_count distinct candidates evaluated"
}

kill_runs() {  # name, mode (cached|measured), then the optimize arguments
  local name=$1 mode=$2
  shift 2
  local dir=$work/kill-$name/$mode cache window
  mkdir -p "$dir"
  if [ -z "$ref_count" ]; then
    row "kill -9 + resume, $name ($mode)" 1 0 "the uninterrupted run failed"
    return 0
  fi
  if [ "$mode" = cached ]; then
    cache=$work/kill-$name/cache-ref  # the same path: cached results are keyed by where their builds live
    local start rc=0 warm_count warm_digest
    start=$(now)
    "$evoteam_bin" "${settings[@]}" --set "eval.cache_dir=$cache" optimize "$task" "$@" --runs-dir "$dir/warm" \
      --json >"$dir/warm.json" 2>"$dir/warm.log" || rc=$?
    window=$(elapsed "$start")
    read -r warm_count warm_digest _ _ < <(python3 "$check" candidates "$(field "$dir/warm.json" run_dir)" ||
      echo "- -")
    echo "$name ($mode): uninterrupted on the cached measurements in $window s, $warm_count distinct candidates"
    other="uninterrupted on the cached measurements: $warm_count"
  else
    # A second uninterrupted run that measures everything again: how far timing noise alone moves the count.
    cp -a "$work/cache-warm" "$dir/cache-second"
    "$evoteam_bin" "${settings[@]}" --set "eval.cache_dir=$dir/cache-second" optimize "$task" "$@" \
      --runs-dir "$dir/second" --json >"$dir/second.json" 2>"$dir/second.log" || true
    read -r warm_count warm_digest _ _ < <(python3 "$check" candidates "$(field "$dir/second.json" run_dir)" ||
      echo "- -")
    other="a second uninterrupted run: $warm_count"
    cache=$dir/cache
    cp -a "$work/cache-warm" "$cache"
    window=$(awk -v d="$ref_duration" -v k="$kills" 'BEGIN { printf "%.3f", 2 * d / (k > 0 ? k : 1) }')
  fi
  local delays
  mapfile -t delays < <(python3 -c 'import random, sys
r = random.Random(int(sys.argv[1]))
for _ in range(10 * int(sys.argv[2]) + 10): print("%.3f" % r.uniform(0, float(sys.argv[3])))' \
    "$kill_seed" "$kills" "$window")

  local attempt=0 done_kills=0 before_run=0 resumes=0 resumes_ok=0 runs=0 runs_passed=0 journals_bad=0
  local torn=0 counts=() failures=() rc pid deadline repeated=0 most_any=0
  while [ "$done_kills" -lt "$kills" ] && [ "$attempt" -lt "${#delays[@]}" ]; do
    runs=$((runs + 1))
    local runs_dir=$dir/runs-$runs run="" saved=0 ended=0 failed=0
    mkdir -p "$dir/journals-$runs"
    while [ "$done_kills" -lt "$kills" ] && [ "$attempt" -lt "${#delays[@]}" ]; do
      local cmd
      if [ -z "$run" ]; then
        cmd=(optimize "$task" "$@" --runs-dir "$runs_dir")
      else
        cmd=(resume "$run")
        resumes=$((resumes + 1))
      fi
      # setsid: its own session and process group, so the kill takes its compilers and harnesses with it.
      setsid "$evoteam_bin" "${settings[@]}" --set "eval.cache_dir=$cache" "${cmd[@]}" --json \
        >"$dir/out-$attempt.json" 2>"$dir/err-$attempt.log" &
      pid=$!
      live=$pid
      deadline=$(awk -v a="$(now)" -v d="${delays[$attempt]}" 'BEGIN { printf "%.3f", a + d }')
      attempt=$((attempt + 1))
      while kill -0 "$pid" 2>/dev/null && awk -v a="$(now)" -v b="$deadline" 'BEGIN { exit !(a < b) }'; do
        sleep 0.01
      done
      # SIGKILL to its group and to anything else in its session; a process that ended first exits as it did
      # (stderr closed around it: the shell's own "Killed" notice is not a finding).
      rc=0
      { kill -9 -- -"$pid" || true; pkill -9 -s "$pid" || true; wait "$pid" || rc=$?; } 2>/dev/null
      live=""
      [ -z "$run" ] && run=$(run_in "$runs_dir")
      if [ "$rc" = 137 ]; then
        done_kills=$((done_kills + 1))
        [ "${cmd[0]}" = resume ] && resumes_ok=$((resumes_ok + 1))  # it went on until we killed it
        if [ -n "$run" ] && [ -f "$run/journal.jsonl" ]; then
          saved=$((saved + 1))
          cp "$run/journal.jsonl" "$dir/journals-$runs/$(printf '%03d' "$saved").jsonl"
        else
          before_run=$((before_run + 1))  # killed before run.json existed: nothing to resume, start again
        fi
      elif [ "$rc" = 0 ]; then
        [ "${cmd[0]}" = resume ] && resumes_ok=$((resumes_ok + 1))
        ended=1  # the run ended before this kill's instant
        break
      else
        failures+=("${cmd[0]} exited $rc: $(tail -n 1 "$dir/err-$((attempt - 1)).log")")
        failed=1
        break
      fi
    done
    # The last kill's run (or one that ended by itself) is resumed to its end: that resume must finish it too.
    local final_rc=0 count="" digest="" records="" most="" journals_ok=1
    if [ -n "$run" ]; then
      resumes=$((resumes + 1))
      "$evoteam_bin" "${settings[@]}" resume "$run" --json >"$dir/final-$runs.json" 2>"$dir/final-$runs.log" ||
        final_rc=$?
      [ "$final_rc" = 0 ] && resumes_ok=$((resumes_ok + 1))
      [ "$final_rc" = 0 ] || failures+=("final resume exited $final_rc: $(tail -n 1 "$dir/final-$runs.log")")
      local saved_journals=("$dir/journals-$runs"/*.jsonl) figure
      [ -e "${saved_journals[0]}" ] || saved_journals=()
      if figure=$(python3 "$check" journals "${saved_journals[@]}" "$run/journal.jsonl" 2>>"$dir/journals.log"); then
        :
      else
        journals_ok=0
        journals_bad=$((journals_bad + 1))
      fi
      local torn_here
      torn_here=$(echo "$figure" | sed -n 's/.* torn \([0-9]*\) .*/\1/p')
      torn=$((torn + ${torn_here:-0}))
      read -r count digest records most < <(python3 "$check" candidates "$run")
      counts+=("$count")
      [ "$records" = "$count" ] || repeated=$((repeated + 1))
      [ "${most:-0}" -gt "$most_any" ] && most_any=$most
    fi
    local status_now
    status_now=$(field "$dir/final-$runs.json" status)
    if [ "$failed" = 0 ] && [ -n "$run" ] && [ "$final_rc" = 0 ] && [ "$status_now" = finished ] &&
      [ "$journals_ok" = 1 ] && [ "$records" = "$count" ] && [ "${most:-0}" -le "$per_cycle" ]; then
      runs_passed=$((runs_passed + 1))
    fi
    [ "$failed" = 0 ] || break  # a command that fails at once would fail the same way again
  done
  local distinct
  distinct=$(printf '%s\n' "${counts[@]}" | sort | uniq -c | awk '{ printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1 }')
  local figure="$done_kills kills over $runs runs ($before_run before run.json existed); resumes $resumes_ok/$resumes continued (exit 0, or killed by us while it went on); journals parse ($torn torn last lines) and each is a prefix of the next in $((runs - journals_bad))/$runs runs; candidates evaluated twice in $repeated runs; at most $most_any evaluations in a cycle (allowance $per_cycle); distinct candidates per finished run: ${distinct:-none}, uninterrupted $ref_count ($other)"
  echo "$name ($mode): $figure"
  [ -s "$dir/journals.log" ] && head -n 5 "$dir/journals.log"
  local failure
  for failure in "${failures[@]}"; do echo "$name ($mode): $failure"; done
  row "kill -9 + resume, $name ($mode)" "$runs" "$runs_passed" "$figure"
}

reference_run builtin "${builtin_args[@]}"
kill_runs builtin cached "${builtin_args[@]}"
kill_runs builtin measured "${builtin_args[@]}"
reference_run scripted "${scripted_args[@]}"
kill_runs scripted cached "${scripted_args[@]}"
builtin_ref=$(field "$work/kill-builtin/ref.json" run_dir)
builtin_count=$(python3 "$check" candidates "$builtin_ref" 2>/dev/null | cut -d' ' -f1 || true)
warm_cache=$work/kill-builtin/cache-ref  # every evaluation of the builtin run is cached there

# --- 2. a full disk -------------------------------------------------------------------------------------------
if [ "$can_mount" = 1 ]; then
  trials=0
  passed=0
  with_run=0
  without_run=0
  where=()
  full_counts=()
  for size_kb in 16 48 80 112 144 176 208 240 272 304; do
    mnt=$work/full-$size_kb
    mkdir -p "$mnt"
    mount -t tmpfs -o "size=${size_kb}k" tmpfs "$mnt"
    mounts+=("$mnt")
    trials=$((trials + 1))
    rc=0
    "$evoteam_bin" "${settings[@]}" --set "eval.cache_dir=$warm_cache" optimize "$task" "${builtin_args[@]}" \
      --runs-dir "$mnt" --json >"$work/full-$size_kb.json" 2>"$work/full-$size_kb.log" || rc=$?
    named=$(grep -o "$mnt/[^ :]*" "$work/full-$size_kb.log" | head -n 1 || true)
    run=$(run_in "$mnt")
    ok=0
    if [ "$rc" = 74 ] && [ -n "$named" ]; then
      rel=${named#"$mnt"/}
      if [[ $rel == */* ]]; then rel=${rel#*/}; else rel="run directory"; fi
      where+=("${rel%%/*}")
      if [ -n "$run" ]; then
        src=0
        "$evoteam_bin" show "$run" >/dev/null 2>&1 || src=$?
        mount -o remount,size=64m "$mnt"
        rrc=0
        "$evoteam_bin" "${settings[@]}" resume "$run" --json >"$work/full-$size_kb-resume.json" 2>&1 || rrc=$?
        read -r count _ records most < <(python3 "$check" candidates "$run")
        full_counts+=("$count")
        if [ "$src" = 0 ] && [ "$rrc" = 0 ] && [ "$(field "$work/full-$size_kb-resume.json" status)" = finished ] &&
          [ "$records" = "$count" ] && [ "${most:-0}" -le "$per_cycle" ]; then
          ok=1
          with_run=$((with_run + 1))
        else
          echo "disk full at $size_kb KiB: show exit $src, resume exit $rrc, $count candidates, $records evaluations," \
            "at most $most in a cycle"
        fi
      elif [ -z "$(ls -A "$mnt")" ]; then
        ok=1  # full before the run existed: refused with nothing left behind
        without_run=$((without_run + 1))
      else
        echo "disk full at $size_kb KiB: a half-made directory was left: $(ls -A "$mnt")"
      fi
    else
      echo "disk full at $size_kb KiB: exit $rc, path named: ${named:-none}"
      tail -n 2 "$work/full-$size_kb.log"
    fi
    passed=$((passed + ok))
    umount "$mnt" && unset 'mounts[${#mounts[@]}-1]'
  done
  files=$(printf '%s\n' "${where[@]}" | sort | uniq -c | awk '{ c = $1; $1 = ""; printf "%s%s x%s", (NR > 1 ? ", " : ""), substr($0, 2), c }')
  distinct=$(printf '%s\n' "${full_counts[@]}" | sort | uniq -c | awk '{ printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1 }')
  row "disk full (tmpfs of 16..304 KiB as runs dir)" "$trials" "$passed" \
    "exit 74 naming the file it could not write ($files); $with_run runs readable by show and resumed to the finish after growing the tmpfs, none evaluating a candidate twice or a cycle past its allowance (distinct candidates: ${distinct:-none}; uninterrupted $builtin_count); $without_run full before run.json existed, nothing left behind"
else
  row "disk full" 0 0 "skipped: mounting a tmpfs needs root"
fi

# --- 3. a read-only runs directory ----------------------------------------------------------------------------
if [ "$can_mount" = 1 ]; then
  ro=$work/ro
  mkdir -p "$ro"
  "$evoteam_bin" "${settings[@]}" --set "eval.cache_dir=$warm_cache" optimize "$task" "${builtin_args[@]}" \
    --runs-dir "$ro" --json >"$work/ro.json" 2>"$work/ro.log" || true
  run=$(run_in "$ro")
  (cd "$ro" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$work/ro.before"
  mount --bind "$ro" "$ro"
  mounts+=("$ro")
  mount -o remount,ro,bind "$ro"
  trials=0
  passed=0
  notes=()
  for what in resume optimize report; do
    trials=$((trials + 1))
    rc=0
    case $what in
      resume) "$evoteam_bin" "${settings[@]}" resume "$run" >"$work/ro-$what.log" 2>&1 || rc=$? ;;
      optimize) "$evoteam_bin" "${settings[@]}" --set "eval.cache_dir=$warm_cache" optimize "$task" \
                  "${builtin_args[@]}" --runs-dir "$ro" >"$work/ro-$what.log" 2>&1 || rc=$? ;;
      report) "$evoteam_bin" report "$run" >"$work/ro-$what.log" 2>&1 || rc=$? ;;
    esac
    if [ "$rc" = 74 ] && grep -q "$ro/.*Read-only file system" "$work/ro-$what.log"; then
      passed=$((passed + 1))
      notes+=("$what exit 74")
    else
      notes+=("$what exit $rc")
      echo "read-only: $what exit $rc: $(tail -n 1 "$work/ro-$what.log")"
    fi
  done
  trials=$((trials + 1))
  rc=0
  "$evoteam_bin" show "$run" >"$work/ro-show.log" 2>&1 || rc=$?
  [ "$rc" = 0 ] && passed=$((passed + 1))
  shown="show exit $rc"
  (cd "$ro" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$work/ro.after"
  trials=$((trials + 1))
  identical="files changed"
  if cmp -s "$work/ro.before" "$work/ro.after"; then
    passed=$((passed + 1))
    identical="all $(wc -l <"$work/ro.after") files byte-identical"
  fi
  umount "$ro" && unset 'mounts[${#mounts[@]}-1]'
  row "read-only runs dir (ro bind mount)" "$trials" "$passed" \
    "$(IFS=,; echo "${notes[*]}" | sed 's/,/, /g'), each naming the path with \"Read-only file system\"; $shown; $identical"
else
  row "read-only runs dir" 0 0 "skipped: a bind mount needs root"
fi

# --- 4. budgets from the command line -------------------------------------------------------------------------
trials=0
passed=0
worst_tokens=0
scripted_cache=$work/kill-scripted/cache-ref
for budget in 1 15 20 40 50 75; do
  trials=$((trials + 1))
  rc=0
  "$evoteam_bin" "${settings[@]}" --set "eval.cache_dir=$scripted_cache" optimize "$task" "${scripted_args[@]}" \
    --budget-tokens "$budget" --runs-dir "$work/budget-tokens" --json >"$work/tokens-$budget.json" \
    2>"$work/tokens-$budget.log" || rc=$?
  tokens_in=$(field "$work/tokens-$budget.json" tokens.input)
  tokens_out=$(field "$work/tokens-$budget.json" tokens.output)
  used=$((${tokens_in:-0} + ${tokens_out:-0}))
  over=$((used - budget))
  # Every reply of the script is 15 tokens (10 in, 5 out): one call under way at most.
  if { [ "$rc" = 5 ] || [ "$rc" = 0 ]; } && [ "$over" -lt 15 ]; then passed=$((passed + 1)); fi
  [ "$over" -gt "$worst_tokens" ] && worst_tokens=$over
done
row "--budget-tokens 1..75 (scripted, 15 tokens a call)" "$trials" "$passed" \
  "largest overshoot $worst_tokens tokens (< one call of 15)"
trials=0
passed=0
worst_evals=0
for budget in 1 3 5 7; do
  trials=$((trials + 1))
  rc=0
  "$evoteam_bin" "${settings[@]}" --set "eval.cache_dir=$warm_cache" optimize "$task" "${builtin_args[@]}" \
    --budget-evaluations "$budget" --runs-dir "$work/budget-evals" --json >"$work/evals-$budget.json" \
    2>"$work/evals-$budget.log" || rc=$?
  evaluations=$(field "$work/evals-$budget.json" evaluations)
  trial_count=$(field "$work/evals-$budget.json" trials)
  used=$((${evaluations:-0} + ${trial_count:-0}))
  over=$((used - budget))
  if [ "$rc" = 5 ] && [ "$over" -le 1 ]; then passed=$((passed + 1)); fi
  [ "$over" -gt "$worst_evals" ] && worst_evals=$over
done
row "--budget-evaluations 1..7 (builtin)" "$trials" "$passed" \
  "largest overshoot $worst_evals evaluations (evaluations + trials - budget; at most the one under way)"

# --- 5. provider faults: the tests that inject them -----------------------------------------------------------
faults='AgentLoopback.*:LlmLoopback.*:LlmRetryPolicy.*:AgentLoop.*Limit*:AgentLoop.RunWideBudgetOfTheMeterStops:AgentLoop.ASpentRunBudgetEndsTheTurnAtItsNextToolCall:AgentLoop.Malformed*:LlmOpenAiProtocol.InvalidArguments*:StoriesE2E.ATokenBudgetEndsTheRunMidCycleAndAResumeStopsAgainAtOnce'
"$tests_bin" --gtest_filter="*${faults//:/:*}" --gtest_brief=1 >"$work/faults.log" 2>&1 || true
ran=$(sed -n 's/^\[==========\] \([0-9]*\) tests\? from .* ran.*/\1/p' "$work/faults.log" | tail -n 1)
ok=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?.*/\1/p' "$work/faults.log" | tail -n 1)
row "provider faults and budget stops (tests)" "${ran:-0}" "${ok:-0}" \
  "AgentLoopback.WorkGetsDoneThroughEveryFaultWithExactUsageAndNoKeyOnDisk (429+retry-after, 529, 500, reset, slow, cut body, invalid tool arguments in one turn, both protocols), LlmLoopback.*, LlmRetryPolicy.*, AgentLoop budget stops, StoriesE2E.ATokenBudgetEndsTheRunMidCycleAndAResumeStopsAgainAtOnce"

# --- 6. a candidate that writes into its inputs ---------------------------------------------------------------
rc=0
"$evoteam_bin" "${settings[@]}" eval "$task" --candidate "$root/tests/data/hostile/host/input_mutated" \
  --cache-dir "$warm_cache" --json >"$work/mutated.json" 2>"$work/mutated.log" || rc=$?
verdict=$(field "$work/mutated.json" verdict)
reason=$(field "$work/mutated.json" reason)
ok=0
[ "$rc" = 1 ] && [ "$verdict" = INPUT_MUTATED ] && ok=1
row "input mutated (tests/data/hostile/host/input_mutated)" 1 "$ok" "exit $rc, $verdict: $reason"

echo
echo "| scenario | trials | passed | figure |"
echo "| --- | --- | --- | --- |"
for line in "${rows[@]}"; do
  IFS='|' read -r scenario trials passed figure <<<"$line"
  echo "| $scenario | $trials | $passed | $figure |"
done
exit "$status"
