#!/usr/bin/env bash
# Search-quality benchmark of the builtin offline team (rerunnable; not a unit test). On kernels/host_matmul:
#   1. the builtin team with an evaluation budget (default 15 = 25% of the 60-config param space),
#   2. the exhaustive best of the param space (every config evaluated with `evoteam eval`),
#   3. random search at the same number of evaluations as the team used (expected best over 2,000 random
#      draws without replacement from the exhaustive measurements).
# Prints evaluations used and the fraction of the exhaustive best each reaches.
# Target: the team reaches >= 95% of the exhaustive best within <= 25% of the space, and beats random search.
# Usage: bench/team_bench.sh [BUILD_DIR] [EVALUATIONS]        (defaults: build, 15)
# EVOTEAM_BENCH_DIR=DIR holds the work files (default: $TMPDIR or /tmp); EVOTEAM_BENCH_SPACE_LIMIT=N evaluates
# only the first N configs of the space (a quick smoke run; the fractions are then only indicative);
# EVOTEAM_BENCH_KEEP=1 keeps the work files (the team's run and the exhaustive table) and prints where they are;
# EVOTEAM_BENCH_FRESH=1 gives the run its own evaluation cache, so every evaluation is measured anew (by default
# results cached by earlier runs are reused: a rerun with the same binary replays them; the report says how many).
# Exit status: 0 when the target is met, 1 when not, 2 when the binary or python3 is missing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
budget=${2:-15}
evoteam_bin=$build/evoteam
task=$root/kernels/host_matmul
limit=${EVOTEAM_BENCH_SPACE_LIMIT:-0}

if [ ! -x "$evoteam_bin" ]; then echo "missing $evoteam_bin (build the evoteam target first)" >&2; exit 2; fi
if ! command -v python3 >/dev/null; then echo "python3 is required" >&2; exit 2; fi

base=${EVOTEAM_BENCH_DIR:-${TMPDIR:-/tmp}}
work=$(mktemp -d "$base/evoteam-team-bench.XXXXXX")
if [ "${EVOTEAM_BENCH_KEEP:-0}" = 1 ]; then
  trap 'echo "work files kept in $work (team.json, runs/, exhaustive.txt)"' EXIT
else
  trap 'rm -rf "$work"' EXIT
fi

cache_args=()
if [ "${EVOTEAM_BENCH_FRESH:-0}" = 1 ]; then cache_args=(--set "eval.cache_dir=$work/cache"); fi

echo "== builtin team, at most $budget evaluations"
start=$(date +%s)
"$evoteam_bin" ${cache_args[@]+"${cache_args[@]}"} optimize "$task" --provider builtin --runs-dir "$work/runs" --budget-evaluations "$budget" \
  --max-cycles 1000 --json >"$work/team.json" 2>"$work/team.log" || {
  echo "optimize failed:"; tail -20 "$work/team.log"; exit 1; }
echo "   $(( $(date +%s) - start )) s"

echo "== the param space"
python3 - "$task/task.json" >"$work/space.txt" <<'PY'
import itertools, json, re, sys
text = open(sys.argv[1]).read()
text = re.sub(r'^\s*//.*$', '', text, flags=re.M)          # whole-line comments
text = re.sub(r',\s*//[^\n"]*$', ',', text, flags=re.M)     # trailing comments after a comma
task = json.loads(text)
params = task["params"]
constraints = task.get("param_constraints", [])
for values in itertools.product(*[p["values"] for p in params]):
    point = {p["name"]: v for p, v in zip(params, values)}
    ok = all(eval(c.replace("||", " or ").replace("&&", " and ").replace("!", " not ").replace(" not =", "!="),
                  {}, dict(point)) for c in constraints)
    if ok:
        print(" ".join(f"--param {k}={v}" for k, v in point.items()))
PY
space=$(wc -l <"$work/space.txt")
echo "   $space configurations"

echo "== exhaustive: evaluating every configuration (about 5 s each)"
count=0
: >"$work/exhaustive.txt"
while read -r args; do
  count=$((count + 1))
  if [ "$limit" -gt 0 ] && [ "$count" -gt "$limit" ]; then break; fi
  # shellcheck disable=SC2086
  speedup=$("$evoteam_bin" ${cache_args[@]+"${cache_args[@]}"} eval "$task" $args --json 2>>"$work/eval.log" </dev/null |
            python3 -c 'import json,sys; v=json.load(sys.stdin).get("speedup"); print(v if isinstance(v,(int,float)) else 0)' ||
            echo 0)
  echo "$speedup $args" >>"$work/exhaustive.txt"
  printf '\r   %d/%d' "$count" "$space"
done <"$work/space.txt"
echo

python3 - "$work/team.json" "$work/exhaustive.txt" "$space" <<'PY'
import glob, json, os, random, sys
team = json.load(open(sys.argv[1]))
reused = total = 0
for path in glob.glob(os.path.join(team.get("run_dir", ""), "candidates", "*", "eval.json")):
    try:
        total += 1
        reused += 1 if json.load(open(path)).get("cache", {}).get("result_hit") else 0
    except (OSError, ValueError):
        pass
rows = [line.split(" ", 1) for line in open(sys.argv[2]) if line.strip()]
speedups = [float(s) for s, _ in rows]
space = int(sys.argv[3])
best = max(speedups)
best_args = rows[speedups.index(best)][1].strip()
used = int(team.get("evaluations", 0))
team_best = float(team.get("best_speedup") or 0)
rng = random.Random(1)
draws = 2000
k = min(used, len(speedups))
random_best = sum(max(rng.sample(speedups, k)) for _ in range(draws)) / draws if k else 0.0
team_fraction = team_best / best if best else 0
random_fraction = random_best / best if best else 0
print(f"exhaustive best : {best:.2f}x over {len(speedups)} of {space} configs ({best_args})")
print(f"builtin team    : {team_best:.2f}x with {used} evaluations ({100*used/space:.0f}% of the space), "
      f"{100*team_fraction:.1f}% of the best; stop: {team.get('stop_reason')}")
print(f"random search   : {random_best:.2f}x expected with {k} evaluations, {100*random_fraction:.1f}% of the best")
print(f"result cache    : {reused} of the team's {total} evaluations were answered from results cached earlier")
met = team_fraction >= 0.95 and used <= 0.25 * space and team_best >= random_best
print("target (>= 95% of the best within <= 25% of the space, ahead of random):", "met" if met else "NOT met")
sys.exit(0 if met else 1)
PY
