#!/usr/bin/env bash
# What a coding-agent CLI member costs per turn over evoteam's own loop, on the same scripted story (rerunnable; not
# a unit test): one Optimizer turn on kernels/host_matmul that calls read_knowledge, compile, run_tests and benchmark
# at the head's params and at a faster config, then submits it — once through the built-in loop over the scripted
# provider, once as the `claude` stand-in (tests/data/agent_clis: a Python process speaking the CLI's headless
# protocol, with `evoteam mcp` as its MCP server in bubblewrap). Both share one warm result cache, so the
# evaluations cost the same and the difference is the member's own overhead. Prints each turn's seconds (the
# journal's turn record) per repetition and the medians.
# Usage: bench/agent_overhead.sh [BUILD_DIR] [REPETITIONS]   (defaults: build, 5)
# Needs a Python with the mcp package: EVOTEAM_TEST_PYTHON, else BUILD_DIR/pyenv/bin/python (scripts/test makes it).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
reps=${2:-5}
python=${EVOTEAM_TEST_PYTHON:-$build/pyenv/bin/python}
case "$python" in */*) python=$(cd "$(dirname "$python")" && pwd)/$(basename "$python") ;; esac
"$python" -c "import mcp" 2>/dev/null || { echo "missing: $python with the mcp package (run scripts/test once)"; exit 2; }
[ -x "$build/evoteam" ] || { echo "missing: $build/evoteam"; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/evoteam-overhead.XXXXXX")
trap '[ "${EVOTEAM_BENCH_KEEP:-0}" = 1 ] || rm -rf "$work"' EXIT
fast="ACC_IN_REGISTERS=1, REG_ROWS=4, REG_COLS=64, TILE_N=256, TILE_K=128, LOOP_ORDER=1"

# The same tool calls as the stand-in's competent story, as scripted replies of the built-in loop.
"$python" - "$work/scripted.jsonl" "$fast" <<'PY'
import json, sys
calls = [("read_knowledge", {}), ("compile", {}), ("run_tests", {}), ("benchmark", {}),
         ("compile", {"params": sys.argv[2]}), ("run_tests", {"params": sys.argv[2]}),
         ("benchmark", {"params": sys.argv[2]}), ("submit", {"summary": "register block", "params": sys.argv[2]})]
with open(sys.argv[1], "w") as out:
    for i, (name, args) in enumerate(calls):
        out.write(json.dumps({"content": [{"type": "tool_use", "id": f"t{i}", "name": name, "input": args}],
                              "stop_reason": "tool_use",
                              "usage": {"input_tokens": 1200, "output_tokens": 300}}) + "\n")
PY
mkdir -p "$work/bin"
cat > "$work/bin/claude" <<SH
#!/bin/sh
export EVOTEAM_STANDIN_STORY=$root/tests/data/agent_clis/stories/competent.json
exec $python $root/tests/data/agent_clis/claude "\$@"
SH
chmod +x "$work/bin/claude"

turn_seconds() {  # the Optimizer's turn in cycle 1 of the one run under $1
  "$python" -c "
import json, glob, sys
for line in open(glob.glob(sys.argv[1] + '/*/journal.jsonl')[0]):
    r = json.loads(line)
    if r.get('type') == 'turn' and r.get('role') == 'optimizer': print('%.3f' % r['usage']['seconds'])" "$1"
}

common=(--quiet --set eval.cache_dir="$work/cache" optimize "$root/kernels/host_matmul" --team single --max-cycles 1)
# Warm the cache once, so that every measured turn reads the same cached evaluations.
"$build/evoteam" "${common[@]}" --provider scripted --set llm.scripted_file="$work/scripted.jsonl" \
  --set supervisor.policy=rules --runs-dir "$work/warm" >/dev/null 2>&1 || true
builtin=() cli=()
for ((i = 1; i <= reps; i++)); do
  "$build/evoteam" "${common[@]}" --provider scripted --set llm.scripted_file="$work/scripted.jsonl" \
    --set supervisor.policy=rules --runs-dir "$work/builtin$i" >/dev/null 2>&1 || true
  PATH="$work/bin:$PATH" "$build/evoteam" "${common[@]}" --provider builtin --agent claude-code \
    --runs-dir "$work/cli$i" >/dev/null 2>&1 || true
  builtin+=("$(turn_seconds "$work/builtin$i")") cli+=("$(turn_seconds "$work/cli$i")")
  echo "repetition $i: built-in loop ${builtin[-1]} s, CLI member ${cli[-1]} s"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
b=$(median "${builtin[@]}") c=$(median "${cli[@]}")
echo "median turn: built-in loop $b s, CLI member $c s, overhead $(awk -v b="$b" -v c="$c" 'BEGIN {printf "%.3f", c - b}') s per turn"
