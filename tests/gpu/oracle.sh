# shellcheck shell=bash
# Sourced by tests/gpu/run.sh (uses its row, step_limit and out_of_time functions, EVOTEAM, SETS and LOGS): the
# Python oracle with torch on every CUDA task
# that names a python_reference — the published PyTorch reference run on the correctness inputs on the GPU and
# compared with reference.cu's outputs (`evoteam eval --oracle`). One SKIP row when torch with CUDA is not
# importable by EVOTEAM_GPU_PYTHON (default python3).
ORACLE_PYTHON=${EVOTEAM_GPU_PYTHON:-python3}
if ! "$ORACLE_PYTHON" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" >/dev/null 2>&1; then
  row "oracle (torch)" "SKIP" "torch with CUDA is not importable by $ORACLE_PYTHON (set EVOTEAM_GPU_PYTHON)"
else
  for ORACLE_TASK in kernels/*/task.json; do
    grep -q '"target": *"cuda"' "$ORACLE_TASK" && grep -q '"python_reference"' "$ORACLE_TASK" || continue
    ORACLE_DIR=$(dirname "$ORACLE_TASK")
    ORACLE_LOG=$LOGS/oracle_$(basename "$ORACLE_DIR").json
    ORACLE_LIMIT=$(step_limit 120)
    if [ "$ORACLE_LIMIT" = 0 ]; then out_of_time "oracle $(basename "$ORACLE_DIR")"; continue; fi
    # Only the oracle matters here: the static stage is the cheapest evaluation --oracle can ride on.
    timeout "$ORACLE_LIMIT" "$EVOTEAM" "${SETS[@]}" --set "eval.oracle.python=$ORACLE_PYTHON" eval "$ORACLE_DIR" \
      --workloads ours --stages static --oracle --json >"$ORACLE_LOG" 2>"$ORACLE_LOG.err"
    ORACLE_STATUS=$("$ORACLE_PYTHON" -c "import json,sys; print(json.load(open(sys.argv[1]))['oracle']['status'])" "$ORACLE_LOG" 2>/dev/null || echo none)
    ORACLE_DETAIL=$("$ORACLE_PYTHON" - "$ORACLE_LOG" <<'PY' 2>/dev/null || echo "see $ORACLE_LOG.err"
import json, sys
o = json.load(open(sys.argv[1]))["oracle"]
parts = ["%s max_abs %.3g normwise %.3g" % (x["tensor"], x["max_abs"], x["normwise"]) for x in o.get("outputs", [])]
print((o.get("reason") or "; ".join(parts))[:160])
PY
)
    case "$ORACLE_STATUS" in
      agreed) row "oracle $(basename "$ORACLE_DIR")" "PASS" "$ORACLE_DETAIL" ;;
      skipped) row "oracle $(basename "$ORACLE_DIR")" "SKIP" "$ORACLE_DETAIL" ;;
      *) row "oracle $(basename "$ORACLE_DIR")" "FAIL" "$ORACLE_STATUS: $ORACLE_DETAIL" ;;
    esac
  done
fi
