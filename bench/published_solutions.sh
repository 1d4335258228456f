#!/usr/bin/env bash
# The published FlashInfer-Trace Solutions kept in tests/data/flashinfer_trace/solutions/ through evoteam's GPU-less
# stages (rerunnable; not a unit test): for every definition there that a task in kernels/ follows (the task named
# after it, or one keeping its published workloads in published/<definition>.jsonl), each Solution is imported
# with `evoteam import-solution` (checked against the published Definition in tests/data/flashinfer_trace/
# definitions/ when there is one), then judged by `evoteam eval TASK --candidate DIR --stages static,build` with
# real nvcc for the task's archs (one nvcc call per file covers both; a compile error fails both). Prints one table
# row per (definition, task, Solution): refused by the import and why, or the verdict, the archs the static stage
# judged and passed, and the first rejection or warning. Leaves each candidate with its published.json and
# eval.json in OUT_DIR (the files `read_published_results` reads).
# Usage: bench/published_solutions.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, a temporary directory)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
evoteam=$build/evoteam
[ -x "$evoteam" ] || { echo "missing: $evoteam"; exit 2; }
out=${2:-$(mktemp -d "${TMPDIR:-/tmp}/evoteam-published.XXXXXX")}
mkdir -p "$out"
data=$root/tests/data/flashinfer_trace
rows=$out/rows.jsonl
: > "$rows"

tasks_following() {
  local definition=$1
  for task in "$root"/kernels/*/ "$root"/kernels/flashinfer_trace/*/; do
    [ -f "$task/task.json" ] || continue
    if [ "$(basename "$task")" = "$definition" ] || [ -f "$task/published/$definition.jsonl" ]; then
      echo "${task%/}"
    fi
  done
}

for definition_dir in "$data"/solutions/*/; do
  definition=$(basename "$definition_dir")
  definition_file=$data/definitions/$definition.json
  tasks=$(tasks_following "$definition")
  for solution in "$definition_dir"*.json; do
    [ "$(basename "$solution")" = provenance.json ] && continue
    if [ -z "$tasks" ]; then
      python3 -c 'import json,sys; print(json.dumps({"definition":sys.argv[1],"solution":sys.argv[2],"task":"","refused":"no task follows the definition"}))' \
        "$definition" "$(basename "$solution" .json)" >> "$rows"
      continue
    fi
    for task in $tasks; do
      candidate=$out/$(basename "$task")/$(basename "$solution" .json)
      rm -rf "$candidate"
      definition_args=()
      [ -f "$definition_file" ] && definition_args=(--definition "$definition_file")
      note=""
      if ! refusal=$("$evoteam" import-solution "$solution" --task "$task" --out "$candidate" "${definition_args[@]}" 2>&1); then
        python3 -c 'import json,sys; print(json.dumps({"definition":sys.argv[1],"solution":sys.argv[2],"task":sys.argv[3],"refused":sys.argv[4]}))' \
          "$definition" "$(basename "$solution" .json)" "$(basename "$task")" "$refusal" >> "$rows"
        # A Solution refused only for its dtype still tells how the static stage judges its code: imported without
        # the Definition's check and built (never a result for the task: its code reads the other dtype).
        case "$refusal" in *"field definition."*".dtype"*) ;; *) continue ;; esac
        "$evoteam" import-solution "$solution" --task "$task" --out "$candidate" > /dev/null 2>&1 || continue
        note="build only: dtype differs"
      fi
      "$evoteam" eval "$task" --candidate "$candidate" --stages static,build --json \
        --cache-dir "$out/cache" > "$candidate/eval.json" 2> "$candidate/eval.err" || true
      python3 -c 'import json,sys; print(json.dumps({"definition":sys.argv[1],"solution":sys.argv[2],"task":sys.argv[3],"candidate":sys.argv[4],"note":sys.argv[5]}))' \
        "$definition" "$(basename "$solution" .json)" "$(basename "$task")" "$candidate" "$note" >> "$rows"
    done
  done
done

python3 - "$rows" <<'PY'
import json, subprocess, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print("| definition | task | author | solution | import | sm_90a | sm_100a | verdict | why (the first rejection, error or warning) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
counts = {"rows": len(rows), "refused": 0, "mapped": 0}
for row in rows:
    author = row["solution"].split("_")[0]
    if "refused" in row:
        counts["refused"] += 1
        why = row["refused"].replace("|", "\\|").replace("\n", " ")[:300]
        print(f"| {row['definition']} | {row['task']} | {author} | {row['solution']} | refused | - | - | - | {why} |")
        continue
    build_only = bool(row.get("note"))
    counts["build only (dtype differs)" if build_only else "mapped"] = counts.get("build only (dtype differs)" if build_only else "mapped", 0) + 1
    label = row.get("note") or "mapped"
    try:
        result = json.load(open(row["candidate"] + "/eval.json"))
    except (OSError, ValueError):
        err = open(row["candidate"] + "/eval.err").read().strip().replace("\n", " ")[:300]
        print(f"| {row['definition']} | {row['task']} | {author} | {row['solution']} | {label} | ? | ? | error | {err} |")
        continue
    verdict = result.get("verdict", "?")
    evidence = result.get("evidence") or {}
    passed = verdict == "PASS"
    # nvcc compiles each file for every arch at once; the static stage then judges the objects arch by arch and
    # stops at the first rejection (its evidence names the arch). A rejection without an arch came before nvcc.
    compiled = passed or (verdict == "STATIC_REJECT" and "arch" in evidence)
    cells = []
    for arch in ("sm_90a", "sm_100a"):
        group = "build-only" if build_only else "mapped"
        counts[f"{group} compiled {arch}"] = counts.get(f"{group} compiled {arch}", 0) + compiled
        counts[f"{group} passed static {arch}"] = counts.get(f"{group} passed static {arch}", 0) + passed
        cells.append(("compiled" if compiled else "no") + (", static pass" if passed else ""))
    if verdict != "PASS":
        key = ("build-only " if build_only else "mapped ") + verdict
        counts[key] = counts.get(key, 0) + 1
    why = result.get("reason", "")
    symbol = evidence.get("symbol", "")
    if symbol:
        demangled = subprocess.run(["c++filt", symbol], capture_output=True, text=True).stdout.strip()
        if demangled and demangled != symbol:
            why += f" = `{demangled}`"
    if passed and result.get("static_warnings"):
        why = "warning: " + result["static_warnings"][0]
    if verdict.startswith("COMPILE"):
        log = (result.get("build") or {}).get("log", "") or ""
        first = next((line for line in log.splitlines() if "error" in line), "")
        why += ": " + first.split("): ")[-1][:200]
    why = why.replace("|", "\\|").replace("\n", " ")[:400]
    print(f"| {row['definition']} | {row['task']} | {author} | {row['solution']} | {label} | {cells[0]} | {cells[1]} | {verdict} | {why} |")
print()
print("counts: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
PY
echo "candidates, published.json and eval.json: $out"
