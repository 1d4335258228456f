#!/usr/bin/env bash
# Builds the whole FlashInfer-Trace suite (kernels/flashinfer_trace/*/) as the evaluator does, without a GPU: for
# each task `evoteam eval --stages static,build` (the starting kernel for every declared arch, and the FlashInfer
# vendor baseline where the task has one), then prints one line per task and the totals. Not a unit test: the
# test suite builds one task per op family (tests/unit/cuda_trace_suite_test.cpp); this builds all of them (about
# a minute per task on two cores; builds are cached under the --cache-dir, so reruns are fast).
# Usage: bench/suite_build.sh [BUILD_DIR] [TASK_GLOB]   (defaults: build, *)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
pattern=${2:-*}
[ -x "$build/evoteam" ] || { echo "missing: $build/evoteam"; exit 2; }
cache=${EVOTEAM_SUITE_CACHE:-$build/suite-build-cache}
built=0 failed=0 stubs=0
for dir in "$root"/kernels/flashinfer_trace/$pattern/; do
  [ -f "$dir/task.json" ] || continue
  name=$(basename "$dir")
  if grep -q cudaErrorNotSupported "$dir/kernel.cu"; then
    stubs=$((stubs + 1))
    printf '%-72s stub (no generator for its op family)\n' "$name"
    continue
  fi
  json=$("$build/evoteam" eval "$dir" --stages static,build --cache-dir "$cache" --no-cache --json 2>/dev/null || true)
  line=$(printf '%s' "$json" | python3 -c '
import json, sys
try:
    r = json.load(sys.stdin)
except ValueError:
    print("failed: no result"); sys.exit()
stages = {s["name"]: s["status"] for s in r.get("stages", [])}
vendor = r.get("vendor") or {}
ok = stages.get("build") == "passed"
print(("built" if ok else "failed: " + r.get("verdict", "?") + " " + r.get("reason", "")[:200])
      + "; vendor " + vendor.get("status", "none") + (" - " + vendor.get("detail", "")[:120] if vendor.get("detail") else ""))
')
  printf '%-72s %s\n' "$name" "$line"
  case "$line" in built*) built=$((built + 1)) ;; *) failed=$((failed + 1)) ;; esac
done
echo "suite build: $built built, $failed failed, $stubs stubs (sm_90a and sm_100a each)"
[ "$failed" -eq 0 ]
