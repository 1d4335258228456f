#!/usr/bin/env bash
# The GPU suite, sized for one lent H200 (15 minutes of device time, start-up included): under 8 minutes of device
# work on a build prepared on a machine without a GPU (tests/gpu/prepare.sh, whose header gives the device call):
#   tests/gpu/run.sh [--prebuilt DIR] [--quick]
#     --prebuilt DIR  the prepared directory (default: build-gpu-prep when it holds a manifest; otherwise this
#                     script runs tests/gpu/prepare.sh into build-gpu/prep first: for a GPU machine of your own)
#     --quick         the binaries, the health probe and the harness self-test only
# Steps, each under its own time limit and all under EVOTEAM_GPU_BUDGET_S (default 450 s; a step that no longer
# fits is a SKIP row): 1. the prepared binaries and the health probe; 2. evoteam's timing of the example kernel
# against an independent timer (tests/gpu/event_timer.cu: CUDA events, the same .so and inputs; PASS within 2%);
# 3. the evaluator on every single-GPU CUDA task's starting kernel (EVOTEAM_GPU_WORKLOADS, default `ours`; the
# task's baseline and reference run there too), one latency row per workload with the vendor's figure where the
# evaluation has one; 3b. each library baseline (cuBLAS) against its task's reference; 4. every task's CUDA
# reference against its CPU reference (GpuTaskReferences.*, the Gpu* tests); 5. the hostile CUDA corpus's runtime
# verdicts; 6. a two-cycle builtin `optimize` of rmsnorm_h4096; 6b. a campaign of two CUDA tasks and its table; then, while time is left, compute-sanitizer on one
# task and the param corners of the starting kernels; 7. tests/gpu/oracle.sh where present.
# docs/gpu-results.md gives each step's limit and estimated device time.
# It prints the table and writes it to ${EVOTEAM_GPU_RESULTS:-$OUT/gpu-results.txt where $OUT is set, else
# build-gpu/gpu-results.txt}, with a Markdown copy (.md) that pastes into docs/gpu-results.md.
# Exit codes: 0 all rows pass, 1 some row failed, 3 no GPU on this machine (nothing was measured).
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
START=$SECONDS
BUDGET=${EVOTEAM_GPU_BUDGET_S:-450}
WORKLOADS=${EVOTEAM_GPU_WORKLOADS:-ours}
WORK=${EVOTEAM_GPU_BUILD:-$ROOT/build-gpu}
if [ -n "${OUT:-}" ]; then DEFAULT_RESULTS=$OUT/gpu-results.txt; else DEFAULT_RESULTS=$WORK/gpu-results.txt; fi
RESULTS=${EVOTEAM_GPU_RESULTS:-$DEFAULT_RESULTS}
MARKDOWN=${RESULTS%.txt}.md
ARCH=sm_90a
PREBUILT=""
QUICK=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prebuilt) PREBUILT=${2:-}; shift 2 ;;
    --quick) QUICK=1; shift ;;
    *) echo "usage: tests/gpu/run.sh [--prebuilt DIR] [--quick]" >&2; exit 2 ;;
  esac
done
# Each run's logs and evaluations are its own (the build cache stays).
rm -rf "$WORK/logs" "$WORK/eval" "$WORK/baselines" "$WORK/runs"
mkdir -p "$WORK/logs" "$WORK/eval" "$(dirname "$RESULTS")"
LOGS=$WORK/logs
NAMES=()
STATUSES=()
DETAILS=()
SECS=()  # seconds since the row before: what each check cost on the device
MARK=$SECONDS
FAILED=0
row() {  # row NAME STATUS DETAIL
  NAMES+=("$1")
  STATUSES+=("$2")
  DETAILS+=("$3")
  SECS+=("$((SECONDS - MARK))")
  MARK=$SECONDS
  [ "$2" = "FAIL" ] && FAILED=1
  echo "[gpu-suite] $1: $2 $3"
}
# Seconds a step may take: its own limit, or what is left of the suite's budget (0: it does not fit).
step_limit() {
  local left=$((BUDGET - (SECONDS - START) - 15))
  if [ "$left" -lt 20 ]; then echo 0; elif [ "$1" -lt "$left" ]; then echo "$1"; else echo "$left"; fi
}
out_of_time() { row "$1" "SKIP" "out of suite time (EVOTEAM_GPU_BUDGET_S=$BUDGET)"; }

# The per-workload table (tests/gpu/latency_table.py): starting kernel and vendor latency per task and workload.
latency_table() {  # latency_table FORMAT (text or markdown)
  python3 "$ROOT/tests/gpu/latency_table.py" "$1" "$WORK/eval" "$ROOT/kernels"
}

finish() {
  local stamp
  stamp=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  {
    echo "evoteam GPU suite  $stamp  (device work $((SECONDS - START)) s of a $BUDGET s budget; workloads: $WORKLOADS)"
    echo "gpu: ${GPU_NAME:-none}  driver: ${DRIVER:-n/a}  nvcc: ${NVCC_VERSION:-n/a}  arch: $ARCH  prepared: ${PREPARED:-n/a}"
    printf '%-46s %-8s %5s  %s\n' "check" "status" "s" "detail"
    for i in "${!NAMES[@]}"; do printf '%-46s %-8s %5s  %s\n' "${NAMES[$i]}" "${STATUSES[$i]}" "${SECS[$i]}" "${DETAILS[$i]}"; done
    if [ -n "$(ls "$WORK/eval" 2>/dev/null)" ]; then
      echo
      echo "starting kernels per workload (median latency; vendor/start > 1: the starting kernel is faster)"
      latency_table text
    fi
  } | tee "$RESULTS"
  {
    echo "## $stamp — ${GPU_NAME:-no GPU}"
    echo
    echo "GPU ${GPU_NAME:-none}, driver ${DRIVER:-n/a}, nvcc ${NVCC_VERSION:-n/a}, arch $ARCH; prepared ${PREPARED:-n/a};" \
         "device work $((SECONDS - START)) s; workloads: $WORKLOADS."
    echo
    echo "| check | status | s | detail |"
    echo "|---|---|---|---|"
    for i in "${!NAMES[@]}"; do echo "| ${NAMES[$i]} | ${STATUSES[$i]} | ${SECS[$i]} | ${DETAILS[$i]//|//} |"; done
    if [ -n "$(ls "$WORK/eval" 2>/dev/null)" ]; then
      echo
      latency_table markdown
    fi
  } >"$MARKDOWN"
  [ -n "${OUT:-}" ] && tar -czf "$OUT/gpu-logs.tar.gz" -C "$WORK" logs eval 2>/dev/null
  echo "[gpu-suite] table written to $RESULTS (Markdown: $MARKDOWN)"
  exit "$1"
}

NVCC=${EVOTEAM_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
NVCC_VERSION=$("$NVCC" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "[gpu-suite] NO GPU: nvidia-smi is missing or lists no device. Nothing was measured."
  row "gpu present" "NO_GPU" "no device on this machine; run this script on a GPU machine"
  finish 3
fi
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
GPUS=$(nvidia-smi -L | grep -c '^GPU')
row "gpu present" "PASS" "$GPU_NAME x$GPUS, driver $DRIVER"

# 1. The prepared build: binaries that load here, and the paths compiled into the tests binary.
if [ -z "$PREBUILT" ] && [ -f "$ROOT/build-gpu-prep/manifest.txt" ]; then PREBUILT=$ROOT/build-gpu-prep; fi
if [ -z "$PREBUILT" ]; then
  PREBUILT=$WORK/prep
  if tests/gpu/prepare.sh "$PREBUILT" >"$LOGS/prepare.log" 2>&1; then row "prepare (built here)" "PASS" "$(tail -1 "$LOGS/prepare.log")"
  else row "prepare (built here)" "FAIL" "see $LOGS/prepare.log"; finish 1; fi
fi
case "$PREBUILT" in /*) ;; *) PREBUILT=$ROOT/$PREBUILT ;; esac
manifest() { sed -n "s/^$1=//p" "$PREBUILT/manifest.txt" 2>/dev/null; }
PREPARED="$(manifest commit) $(manifest prepared)"
EVOTEAM=$PREBUILT/bin/evoteam
TESTS=$PREBUILT/bin/evoteam_tests
HARNESS=$PREBUILT/cuda/cuda_harness
MISSING=$(ldd "$EVOTEAM" "$TESTS" "$HARNESS" "$PREBUILT/cuda/event_timer" 2>&1 | grep 'not found' | sort -u | tr -s ' \t\n' ' ')
if [ ! -f "$PREBUILT/manifest.txt" ]; then
  row "prepared build" "FAIL" "$PREBUILT has no manifest.txt: run tests/gpu/prepare.sh"; finish 1
elif [ -n "$MISSING" ] || ! "$EVOTEAM" --version >"$LOGS/version.log" 2>&1; then
  row "prepared build" "FAIL" "binaries do not load here: ${MISSING:-$(head -c 200 "$LOGS/version.log")}"; finish 1
fi
row "prepared build" "PASS" "$(head -1 "$LOGS/version.log"), $PREPARED"
# evoteam reads kernels/, configs/ and roles/ from this tree; the tests binary also opens its build and source
# directories by the paths compiled in on the preparing machine, recreated here when they are missing.
export EVOTEAM_HOME=$ROOT
SOURCE_DIR=$(manifest source_dir)
HELPERS_DIR=$(manifest helpers_dir)
if [ -n "$SOURCE_DIR" ] && [ ! -e "$SOURCE_DIR" ]; then mkdir -p "$(dirname "$SOURCE_DIR")" && ln -s "$ROOT" "$SOURCE_DIR"; fi
if [ -n "$HELPERS_DIR" ] && [ ! -e "$HELPERS_DIR" ]; then mkdir -p "$(dirname "$HELPERS_DIR")" && ln -s "$WORK/test-helpers" "$HELPERS_DIR"; fi
# FlashInfer's headers, carried compressed by prepare.sh, for the vendor baselines.
if [ -f "$PREBUILT/flashinfer.tar.xz" ]; then
  mkdir -p "$WORK/tools" && tar -C "$WORK/tools" -xJf "$PREBUILT/flashinfer.tar.xz" && export EVOTEAM_FLASHINFER="$WORK/tools/flashinfer"
fi
# The tests' build cache is the evaluations' one: the references they build are built once.
mkdir -p "$WORK/test-helpers/eval-test-cache" "$WORK/cache"
[ -e "$WORK/test-helpers/eval-test-cache/cuda" ] || ln -s "$WORK/cache" "$WORK/test-helpers/eval-test-cache/cuda"
[ -e "$WORK/test-helpers/evoteam" ] || ln -s "$EVOTEAM" "$WORK/test-helpers/evoteam"  # the tests' EVOTEAM_BINARY
HOST_COMPILER=$(g++ --version 2>/dev/null | head -1)
if [ "$("$NVCC" --version 2>/dev/null | tail -1)" = "$(manifest nvcc)" ] && [ "$HOST_COMPILER" = "$(manifest host_compiler)" ]; then
  row "toolchain" "INFO" "nvcc $NVCC_VERSION and $HOST_COMPILER, as on the preparing machine"
else
  row "toolchain" "INFO" "nvcc $NVCC_VERSION, $HOST_COMPILER here; prepared with $(manifest nvcc), $(manifest host_compiler)"
fi
# Every evaluation: one cache, no sanitizer (its own step below), timing capped at 2 s a side per workload.
SETS=(--set "eval.cache_dir=$WORK/cache" --set 'eval.cuda.sanitizer_tools=[]' --set eval.timing.max_time_s=2
      --set eval.timing.min_time_s=0.2)

if "$HARNESS" --result-fd 1 --self-test >"$LOGS/self_test.json" 2>&1; then row "harness self-test" "PASS" ""
else row "harness self-test" "FAIL" "$(head -c 200 "$LOGS/self_test.json")"; fi
if timeout 60 "$HARNESS" --result-fd 1 --probe >"$LOGS/probe.json" 2>&1; then
  row "health probe" "PASS" "$(head -c 160 "$LOGS/probe.json")"
else
  row "health probe" "FAIL" "$(head -c 200 "$LOGS/probe.json")"
  finish 1
fi
[ "$QUICK" = 1 ] && finish "$FAILED"

# 2. evoteam's harness timing the example kernel (64M floats, L2 flushed before every sample, events around each
#    launch) against the independent timer on the same .so and inputs.
EXAMPLE_MS=""
if timeout 60 "$HARNESS" --result-fd 1 --example --candidate "$PREBUILT/cuda/example.so" --n 67108864 --samples 30 \
     >"$LOGS/example.json" 2>&1 && grep -q '"status":"ok"' "$LOGS/example.json"; then
  EXAMPLE_MS=$(python3 -c "import json,statistics,sys;r=[json.loads(l) for l in open(sys.argv[1]) if '\"example\"' in l][0];print('%.4f'%statistics.median(r['times_ms']))" "$LOGS/example.json")
  row "harness timing (64M floats)" "PASS" "median ${EXAMPLE_MS} ms"
else
  row "harness timing (64M floats)" "FAIL" "$(tail -c 300 "$LOGS/example.json")"
fi
if [ -n "$EXAMPLE_MS" ] && timeout 60 "$PREBUILT/cuda/event_timer" "$PREBUILT/cuda/example.so" --symbol scale --n 67108864 --samples 30 \
     >"$LOGS/event_timer.log" 2>&1; then
  EVENTS_MS=$(sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' "$LOGS/event_timer.log")
  DIFF=$(python3 -c "print('%.2f' % (100 * abs($EVENTS_MS - $EXAMPLE_MS) / $EVENTS_MS))")
  if python3 -c "import sys; sys.exit(0 if $DIFF <= 2.0 else 1)"; then
    row "timing vs event timer" "PASS" "evoteam ${EXAMPLE_MS} ms, events ${EVENTS_MS} ms, diff ${DIFF}%"
  else
    row "timing vs event timer" "FAIL" "evoteam ${EXAMPLE_MS} ms, events ${EVENTS_MS} ms, diff ${DIFF}% (target 2%)"
  fi
else
  row "timing vs event timer" "FAIL" "no figure: $(tail -c 200 "$LOGS/event_timer.log" 2>/dev/null)"
fi

# 3. The evaluator on every CUDA task's starting kernel: reference outputs, the correctness battery, timing
#    against the task's baseline (which must run correctly too). The GPU machine builds the kernels (see
#    prepare.sh). A multi-GPU task (min_devices > 1) runs where the machine has that many GPUs, else INFO.
for TASK in kernels/*/task.json; do
  grep -q '"target": *"cuda"' "$TASK" || continue
  DIR=$(dirname "$TASK")
  NAME=$(basename "$DIR")
  NEEDS=$(grep -oE '"min_devices": *[0-9]+' "$TASK" | grep -oE '[0-9]+$' || true)
  NEEDS=${NEEDS:-1}
  if [ "$NEEDS" -gt "$GPUS" ]; then row "eval $NAME" "INFO" "needs $NEEDS GPUs; this machine has $GPUS"; continue; fi
  LIMIT=$(step_limit 120)
  [ "$LIMIT" = 0 ] && { out_of_time "eval $NAME"; continue; }
  JSON=$WORK/eval/$NAME.json
  timeout "$LIMIT" "$EVOTEAM" "${SETS[@]}" eval "$DIR" --workloads "$WORKLOADS" --stages static,build,correctness,timing \
    --json >"$JSON" 2>"$LOGS/eval_$NAME.log"
  RC=$?
  SUMMARY=$(python3 -c "import json,sys;r=json.load(open(sys.argv[1]));print(r['verdict'],'speedup',r.get('speedup'),'vs',r.get('baseline'),'|',r.get('reason','')[:100])" "$JSON" 2>/dev/null)
  if [ "$RC" = 0 ]; then row "eval $NAME" "PASS" "$SUMMARY"
  elif [ "$RC" = 124 ]; then rm -f "$JSON"; row "eval $NAME" "FAIL" "past its ${LIMIT} s limit; see logs/eval_$NAME.log"
  else row "eval $NAME" "FAIL" "${SUMMARY:-rc $RC, see logs/eval_$NAME.log}"; fi
done

# 3b. Every library baseline (cuBLAS for gemm_bf16) against the task's reference: the evaluator times baselines but
#     does not check them, so each runs here as the starting kernel of a copy of its task (the rules that forbid
#     calling the library dropped), through the static, build and correctness stages.
for TASK in kernels/*/task.json; do
  grep -q '"target": *"cuda"' "$TASK" || continue
  NAME=$(basename "$(dirname "$TASK")")
  COPY=$WORK/baselines/$NAME
  LIBRARY=$(python3 - "$(dirname "$TASK")" "$COPY" <<'PY'
import json, os, re, shutil, sys
source, copy = sys.argv[1], sys.argv[2]
task = json.loads(re.sub(r"^\s*//.*$", "", open(os.path.join(source, "task.json")).read(), flags=re.M))
baseline = task.get("baseline", {})
if baseline.get("kind") != "library" or task.get("min_devices", 1) > 1:
    sys.exit(0)
shutil.rmtree(copy, ignore_errors=True)
shutil.copytree(source, copy)
task["kernel"]["files"] = [baseline["file"]]
task["baseline"] = {"kind": "starting"}
task.pop("static_constraints", None)
json.dump(task, open(os.path.join(copy, "task.json"), "w"), indent=1)
print(baseline.get("name", "library"))
PY
)
  [ -n "$LIBRARY" ] || continue
  LIMIT=$(step_limit 90)
  [ "$LIMIT" = 0 ] && { out_of_time "baseline $NAME ($LIBRARY)"; continue; }
  if timeout "$LIMIT" "$EVOTEAM" "${SETS[@]}" eval "$COPY" --workloads "$WORKLOADS" --stages static,build,correctness \
       >"$LOGS/baseline_$NAME.log" 2>&1; then
    row "baseline $NAME ($LIBRARY)" "PASS" "matches the reference: $(grep -E '^verdict' "$LOGS/baseline_$NAME.log" | head -c 100)"
  else
    row "baseline $NAME ($LIBRARY)" "FAIL" "$(grep -E '^verdict' "$LOGS/baseline_$NAME.log" | head -c 160); see logs/baseline_$NAME.log"
  fi
done

# 4. Every task's CUDA reference against its CPU double reference (and the other Gpu* tests: inventory, groups).
LIMIT=$(step_limit 150)
if [ "$LIMIT" = 0 ]; then out_of_time "gtest Gpu*"
elif timeout "$LIMIT" "$TESTS" --gtest_filter='Gpu*' --gtest_brief=1 >"$LOGS/gtest_gpu.log" 2>&1; then
  row "gtest Gpu*" "PASS" "$(grep -E '^\[  PASSED  \]|SKIPPED \]' "$LOGS/gtest_gpu.log" | head -2 | tr '\n' ' ')"
else
  row "gtest Gpu*" "FAIL" "$(grep -E '^\[  FAILED  \]' "$LOGS/gtest_gpu.log" | head -3 | tr '\n' ' ') see logs/gtest_gpu.log"
fi

# 5. Hostile corpus, runtime verdicts: each prepared .so through the harness's example contract.
while read -r FILE WANT; do
  STEM=${FILE%.cu}
  SO=$PREBUILT/cuda/hostile_$STEM.so
  LIMIT=$(step_limit 20)
  [ "$LIMIT" = 0 ] && { out_of_time "hostile $STEM"; continue; }
  if [ ! -f "$SO" ]; then row "hostile $STEM" "FAIL" "not built by prepare.sh"; continue; fi
  timeout "$LIMIT" "$HARNESS" --result-fd 1 --example --candidate "$SO" --n 1048576 --samples 3 >"$LOGS/hostile_$STEM.json" 2>&1
  RC=$?
  RESULT=$(cat "$LOGS/hostile_$STEM.json")
  if [ $RC = 124 ]; then GOT=HANG_TIMEOUT
  elif echo "$RESULT" | grep -q '"error":"cudaErrorIllegalAddress"'; then GOT=FAULT_ILLEGAL_ADDRESS
  elif echo "$RESULT" | grep -q '"class":"RUNTIME_FAULT"'; then GOT=RUNTIME_FAULT
  elif echo "$RESULT" | grep -q '"class":"LAUNCH_ERROR"'; then GOT=LAUNCH_ERROR
  elif echo "$RESULT" | grep -q '"guards_ok":false'; then GOT=OOB_WRITE_GUARD
  elif echo "$RESULT" | grep -q '"status":"wrong"'; then GOT=WRONG_OUTPUT
  elif echo "$RESULT" | grep -q '"status":"ok"'; then GOT=PASS
  else GOT="UNKNOWN(rc=$RC)"; fi
  # Statically rejected candidates never run in the evaluator; here they run only to record what they would do.
  if [ "$WANT" = STATIC_REJECT ]; then row "hostile $STEM" "INFO" "static reject; at runtime: $GOT"
  elif [ "$GOT" = "$WANT" ]; then row "hostile $STEM" "PASS" "$GOT"
  else row "hostile $STEM" "FAIL" "want $WANT, got $GOT"; fi
  # A fault may leave the GPU unusable: the health probe decides (INFRA_ERROR, not the candidate's fault).
  if [ "$GOT" = FAULT_ILLEGAL_ADDRESS ] || [ "$GOT" = RUNTIME_FAULT ] || [ "$GOT" = HANG_TIMEOUT ]; then
    if timeout 60 "$HARNESS" --result-fd 1 --probe >/dev/null 2>&1; then row "probe after $STEM" "PASS" ""
    else row "probe after $STEM" "FAIL" "GPU unusable"; fi
  fi
done < <(python3 -c "import json;e=json.load(open('tests/data/hostile/cuda/expected.json'));[print(k,v['runtime']) for k,v in e.items() if k!='//']")

# 5b. One evaluation on every visible GPU, each on its own (CUDA_VISIBLE_DEVICES as a device pool sets it), so a
#     machine lent with several GPUs shows each one works; `optimize` below then pools them all (--devices all).
if [ "$GPUS" -gt 1 ]; then
  for INDEX in $(seq 0 $((GPUS - 1))); do
    LIMIT=$(step_limit 60)
    [ "$LIMIT" = 0 ] && { out_of_time "eval rmsnorm_h4096 on GPU $INDEX"; continue; }
    if CUDA_VISIBLE_DEVICES=$INDEX timeout "$LIMIT" "$EVOTEAM" "${SETS[@]}" eval kernels/rmsnorm_h4096 --workloads ours \
         --stages static,build,correctness,timing >"$LOGS/eval_gpu$INDEX.log" 2>&1; then
      row "eval rmsnorm_h4096 on GPU $INDEX" "PASS" "$(grep -E '^verdict' "$LOGS/eval_gpu$INDEX.log" | head -c 100)"
    else
      row "eval rmsnorm_h4096 on GPU $INDEX" "FAIL" "$(grep -E '^verdict' "$LOGS/eval_gpu$INDEX.log" | head -c 120); see logs/eval_gpu$INDEX.log"
    fi
  done
else
  row "eval on every GPU" "INFO" "one GPU visible: the evaluations above ran on it"
fi

# 6. A two-cycle builtin optimize of the smallest task: PASS when the run ends with a best candidate.
LIMIT=$(step_limit 180)
if [ "$LIMIT" = 0 ]; then out_of_time "optimize rmsnorm_h4096 (2 cycles)"
else
  # Its own wall-time budget ends it 20 s inside the step's limit, with a summary, should two cycles take longer.
  HOURS=$(python3 -c "print('%.4f' % (($LIMIT - 20) / 3600))")
  timeout "$LIMIT" "$EVOTEAM" "${SETS[@]}" optimize kernels/rmsnorm_h4096 --provider builtin --max-cycles 2 \
    --budget-hours "$HOURS" --workloads ours --seed 1 --runs-dir "$WORK/runs" --json >"$LOGS/optimize.json" 2>"$LOGS/optimize.log"
  RC=$?
  # The summary is the last JSON object on stdout (printed indented, after any progress lines).
  BEST=$(python3 - "$LOGS/optimize.json" <<'PY' 2>/dev/null
import json, re, sys
text = open(sys.argv[1]).read()
summary = None
for start in [m.start() for m in re.finditer(r"(?m)^\{", text)]:
    try:
        summary = json.JSONDecoder().raw_decode(text[start:])[0]
    except ValueError:
        pass
best = summary.get("best_speedup") if isinstance(summary, dict) else None
if best is not None:
    print("%s at %.3fx after %s cycles (%s)" % (summary.get("best_candidate"), best, summary.get("cycles"), summary.get("stop_reason")))
PY
)
  if [ -n "$BEST" ] && { [ "$RC" = 0 ] || [ "$RC" = 5 ]; }; then row "optimize rmsnorm_h4096 (2 cycles)" "PASS" "best $BEST"
  else row "optimize rmsnorm_h4096 (2 cycles)" "FAIL" "rc $RC, no best; see logs/optimize.log"; fi
fi

# 6b. A campaign over two CUDA tasks (a hand-written one and one imported from the published suite) sized to the
#     time left: each run's table row timed on this GPU, printed as the campaign report's table.
LIMIT=$(step_limit 150)
CAMPAIGN_SUITE=$WORK/campaign_suite.txt
printf '%s\n' kernels/rmsnorm_h4096 kernels/flashinfer_trace/fused_add_rmsnorm_h4096 >"$CAMPAIGN_SUITE"
if [ "$LIMIT" = 0 ]; then out_of_time "campaign (2 CUDA tasks)"
else
  HOURS=$(python3 -c "print('%.4f' % (($LIMIT - 30) / 3600))")
  timeout "$LIMIT" "$EVOTEAM" "${SETS[@]}" campaign "$CAMPAIGN_SUITE" --provider builtin --max-cycles 1 \
    --budget-hours "$HOURS" --workloads ours --seed 1 --out "$WORK/campaign" >"$LOGS/campaign.log" 2>&1
  RC=$?
  if "$EVOTEAM" report "$WORK/campaign" --format md >>"$LOGS/campaign.log" 2>&1 && [ -f "$WORK/campaign/report.md" ]; then
    grep -E '^\|' "$WORK/campaign/report.md" | head -40
    if [ "$RC" = 0 ] || [ "$RC" = 5 ]; then row "campaign (2 CUDA tasks)" "PASS" "$(grep -m1 -iE 'geometric|FlashInfer' "$WORK/campaign/report.md" | head -c 120)"
    else row "campaign (2 CUDA tasks)" "FAIL" "rc $RC; see logs/campaign.log"; fi
  else
    row "campaign (2 CUDA tasks)" "FAIL" "rc $RC, no campaign report; see logs/campaign.log"
  fi
fi

# While time is left: compute-sanitizer's tools (the evaluator's defaults) on one task's starting kernel.
LIMIT=$(step_limit 90)
if [ "$LIMIT" = 0 ]; then out_of_time "sanitizer rmsnorm_h4096"
elif timeout "$LIMIT" "$EVOTEAM" --set "eval.cache_dir=$WORK/cache" eval kernels/rmsnorm_h4096 --workloads ours \
       --stages static,build,correctness --no-cache >"$LOGS/sanitizer.log" 2>&1; then
  row "sanitizer rmsnorm_h4096" "PASS" "$(grep -E '^verdict' "$LOGS/sanitizer.log" | head -c 120)"
else
  row "sanitizer rmsnorm_h4096" "FAIL" "see logs/sanitizer.log"
fi

# While time is left: params that change a starting kernel's code paths (not only its tile sizes), checked for
# correctness at their extremes: the builtin team will try them on the first run.
while read -r DIR PARAMS; do
  [ -f "$DIR/task.json" ] || continue
  ARGS=()
  for P in $PARAMS; do ARGS+=(--param "$P"); done
  NAME="params $(basename "$DIR") ${PARAMS// /,}"
  LIMIT=$(step_limit 60)
  [ "$LIMIT" = 0 ] && { out_of_time "$NAME"; continue; }
  LOG=$LOGS/params_$(basename "$DIR")_${PARAMS// /_}.log
  if timeout "$LIMIT" "$EVOTEAM" "${SETS[@]}" eval "$DIR" "${ARGS[@]}" --workloads ours --stages static,build,correctness >"$LOG" 2>&1; then
    row "$NAME" "PASS" "$(grep -E '^verdict' "$LOG" | head -c 120)"
  else
    row "$NAME" "FAIL" "see $LOG"
  fi
done <<'CORNERS'
kernels/mla_paged_decode_h16_ckv512_kpe64_ps1 KV_SPLITS=2
kernels/mla_paged_decode_h16_ckv512_kpe64_ps1 KV_SPLITS=32
kernels/gqa_paged_decode_h32_kv8_d128_ps1 KV_SPLITS=2
kernels/gqa_paged_decode_h32_kv8_d128_ps1 KV_SPLITS=16
kernels/kmeans_assign SIDE=8 PER_THREAD=8 SLICE=16
kernels/kmeans_assign SIDE=32 PER_THREAD=4 SLICE=32
CORNERS

# 7. Python oracle: the published PyTorch references run with torch on the GPU (tests/gpu/oracle.sh, sourced: one
#    row per task, or one SKIP row without torch).
if [ "$(step_limit 120)" = 0 ]; then out_of_time "python oracle"; else source tests/gpu/oracle.sh; fi

finish "$FAILED"
