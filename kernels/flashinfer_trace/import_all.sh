#!/usr/bin/env bash
# Regenerates the FlashInfer-Trace suite: every published definition under published/definitions/ (with its
# published workloads where there are any) imported by the real `evoteam import` into ./<definition name>/, then
# the suite table (SUITE.md, also spliced into ../README.md) and the list of what did not import
# (not_imported.tsv: definition, then the error). The tasks are committed; tests/unit/trace_suite_test.cpp checks
# that they equal what this writes.
#   kernels/flashinfer_trace/import_all.sh            (uses build/evoteam, built by scripts/setup.sh)
#   EVOTEAM=/path/to/evoteam kernels/flashinfer_trace/import_all.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
evoteam="${EVOTEAM:-$root/build/evoteam}"
[ -x "$evoteam" ] || { echo "import_all.sh: no evoteam binary at $evoteam (build it, or set EVOTEAM)" >&2; exit 1; }

# Paths recorded in the tasks are relative to the repository root, so the tasks do not depend on the checkout.
cd "$root"
suite=kernels/flashinfer_trace
summaries=$(mktemp)
trap 'rm -f "$summaries"' EXIT
: >"$suite/not_imported.tsv"
for definition in "$suite"/published/definitions/*/*.json; do
  name=$(basename "$definition" .json)
  family_dir=$(basename "$(dirname "$definition")")
  workloads="$suite/published/workloads/$family_dir/$name.jsonl"
  rm -rf "${suite:?}/$name"
  args=("$definition" --out "$suite/$name" --json)
  [ -f "$workloads" ] && args+=(--workloads "$workloads")
  if output=$("$evoteam" import "${args[@]}" 2>&1); then
    printf '%s\n' "$output" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))' >>"$summaries"
  else
    rm -rf "${suite:?}/$name"
    printf '%s\t%s\n' "$name" "$(printf '%s' "$output" | tr '\n\t' '  ')" >>"$suite/not_imported.tsv"
  fi
done
python3 "$suite/suite_table.py" "$summaries" "$suite/not_imported.tsv" "$suite/SUITE.md" kernels/README.md
echo "import_all.sh: $(wc -l <"$summaries") imported, $(wc -l <"$suite/not_imported.tsv") not imported"
