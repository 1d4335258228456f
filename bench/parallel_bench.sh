#!/usr/bin/env bash
# Parallel team benchmark (rerunnable): how much of a parallel cycle the device spends timing candidates while the
# model thinks. It plays the Debugger ∥ Optimizer story of tests/e2e (tests/data/scripted/stories/
# debugger_parallel.jsonl) on host_matmul with the scripted provider, every agent reply taking LATENCY seconds as
# a real model's would, and a cache of its own so every evaluation runs. For cycle 2, the parallel one, it prints
# the cycle's wall time, the timing-stage time of the candidates it evaluated, and the device busy share
# (timing-stage time / wall time). Give EVOTEAM binaries to compare side by side: the same script, the same
# machine, one after the other.
# Usage: bench/parallel_bench.sh [LATENCY] [EVOTEAM...]     (default: 2.0 s, build/evoteam)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LATENCY="${1:-2.0}"
shift || true
BINARIES=("$@")
[ ${#BINARIES[@]} -gt 0 ] || BINARIES=("$ROOT/build/evoteam")
if ! command -v python3 >/dev/null; then echo "python3 is required" >&2; exit 2; fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# The story with a latency on every agent reply (the supervisor's too: it is a model call as well).
python3 - "$ROOT/tests/data/scripted/stories/debugger_parallel.jsonl" "$LATENCY" >"$WORK/script.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if not line.strip() or line.lstrip().startswith("//"):
        continue
    reply = json.loads(line)
    reply["latency_s"] = float(sys.argv[2])
    print(json.dumps(reply))
PY

printf '%-40s %10s %12s %10s\n' "binary" "cycle 2 s" "timing s" "busy share"
for binary in "${BINARIES[@]}"; do
  [ -x "$binary" ] || { echo "parallel_bench: no evoteam binary at $binary" >&2; exit 2; }
  runs="$WORK/runs-$RANDOM"
  "$binary" -q optimize "$ROOT/kernels/host_matmul" --provider scripted --max-cycles 2 --runs-dir "$runs" \
    --set "llm.scripted_file=$WORK/script.jsonl" --set supervisor.policy=llm --set team.evaluations_per_cycle=2 \
    --set "eval.cache_dir=$WORK/cache-$RANDOM" --json >"$WORK/summary.json"
  python3 - "$runs" "$binary" <<'PY'
import glob, json, os, sys
run = glob.glob(os.path.join(sys.argv[1], "*"))[0]
wall = json.load(open(os.path.join(run, "cycles", "0002", "summary.json")))["seconds"]
timing = 0.0
for meta_path in glob.glob(os.path.join(run, "candidates", "*", "meta.json")):
    if json.load(open(meta_path)).get("cycle") != 2:
        continue
    result = json.load(open(os.path.join(os.path.dirname(meta_path), "eval.json")))
    timing += sum(stage["wall_s"] for stage in result.get("stages", []) if stage["name"] == "timing")
print(f"{sys.argv[2][-40:]:<40} {wall:10.2f} {timing:12.2f} {timing / wall:10.3f}")
PY
done
