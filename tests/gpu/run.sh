#!/usr/bin/env bash
# The GPU suite: one script for a machine with an NVIDIA GPU (H100/H200 for sm_90a). It builds everything for
# sm_90a, runs the CUDA and Gpu* unit tests, the CUDA harness (self-test, health probe, timed example), the hostile
# CUDA corpus's runtime verdicts, the evaluator on every CUDA task, and an agreement check of the harness's timing
# against torch's CUDA events on the same kernel. It prints a summary table and writes it to
# ${EVOTEAM_GPU_RESULTS:-build-gpu/gpu-results.txt}.
#   tests/gpu/run.sh [--quick]     --quick: build and probe only (a first check that the suite builds there)
# Exit codes: 0 all rows pass, 1 some row failed, 3 no GPU on this machine (nothing was measured).
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${EVOTEAM_GPU_BUILD:-$ROOT/build-gpu}
RESULTS=${EVOTEAM_GPU_RESULTS:-$BUILD/gpu-results.txt}
ARCH=sm_90a
QUICK=0
[ "${1:-}" = "--quick" ] && QUICK=1
mkdir -p "$BUILD/cuda"
ROWS=()
FAILED=0
row() {  # row NAME STATUS DETAIL
  ROWS+=("$(printf '%-34s %-8s %s' "$1" "$2" "$3")")
  [ "$2" = "FAIL" ] && FAILED=1
  echo "[gpu-suite] $1: $2 $3"
}
finish() {
  {
    echo "evoteam GPU suite  $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "gpu: ${GPU_NAME:-none}  driver: ${DRIVER:-n/a}  nvcc: ${NVCC_VERSION:-n/a}  arch: $ARCH"
    printf '%-34s %-8s %s\n' "check" "status" "detail"
    for r in "${ROWS[@]}"; do echo "$r"; done
  } | tee "$RESULTS"
  echo "[gpu-suite] table written to $RESULTS"
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
row "gpu present" "PASS" "$GPU_NAME, driver $DRIVER"

# 1. Build the daemon, the tests and the CUDA harness for sm_90a.
if cmake -S . -B "$BUILD" -DEVOTEAM_WERROR=ON >/dev/null && cmake --build "$BUILD" -j"$(nproc)" --target evoteam_tests evoteam >"$BUILD/build.log" 2>&1; then
  row "build (cmake)" "PASS" ""
else
  row "build (cmake)" "FAIL" "see $BUILD/build.log"
  finish 1
fi
HARNESS=$BUILD/cuda/cuda_harness
if "$NVCC" -gencode arch=compute_90a,code=sm_90a -O3 -std=c++17 -lineinfo -cudart shared -Ikernels/common -o "$HARNESS" \
     kernels/common/cuda/*.cu kernels/common/*.cpp tests/gpu/example_glue.cpp -lcublas -lcupti -ldl >"$BUILD/cuda/harness.log" 2>&1; then
  row "build cuda harness ($ARCH)" "PASS" ""
else
  row "build cuda harness ($ARCH)" "FAIL" "see $BUILD/cuda/harness.log"
  finish 1
fi
"$HARNESS" --result-fd 1 --self-test >"$BUILD/cuda/self_test.json" 2>&1 && row "harness self-test" "PASS" "" || row "harness self-test" "FAIL" "$(head -c 200 "$BUILD/cuda/self_test.json")"
if timeout 60 "$HARNESS" --result-fd 1 --probe >"$BUILD/cuda/probe.json" 2>&1; then
  row "health probe" "PASS" "$(head -c 160 "$BUILD/cuda/probe.json")"
else
  row "health probe" "FAIL" "$(head -c 200 "$BUILD/cuda/probe.json")"
  finish 1
fi
[ "$QUICK" = 1 ] && finish "$FAILED"

# 2. Unit tests: the CUDA ones (builds, parsers, static verdicts) and every Gpu* test.
if timeout 900 "$BUILD/evoteam_tests" --gtest_filter='Cuda*:Gpu*' >"$BUILD/cuda/gtest.log" 2>&1; then
  row "gtest Cuda*:Gpu*" "PASS" "$(grep -E '^\[  PASSED  \]|SKIPPED \]' "$BUILD/cuda/gtest.log" | head -2 | tr '\n' ' ')"
else
  row "gtest Cuda*:Gpu*" "FAIL" "see $BUILD/cuda/gtest.log"
fi

# 3. Timed example: L2 flushed before every sample, events around the launch.
if timeout 120 "$HARNESS" --result-fd 1 --example --n 67108864 --samples 30 >"$BUILD/cuda/example.json" 2>&1 &&
   grep -q '"status":"ok"' "$BUILD/cuda/example.json"; then
  MEDIAN=$(python3 -c "import json,statistics;r=[json.loads(l) for l in open('$BUILD/cuda/example.json') if '\"example\"' in l][0];print('%.4f'%statistics.median(r['times_ms']))")
  row "example timing (64M floats)" "PASS" "median ${MEDIAN} ms"
else
  MEDIAN=""
  row "example timing (64M floats)" "FAIL" "$(tail -c 300 "$BUILD/cuda/example.json")"
fi

# 4. Hostile corpus, runtime verdicts: each candidate as a shared object through the harness's example contract.
while read -r FILE WANT; do
  STEM=${FILE%.cu}
  SO=$BUILD/cuda/hostile_$STEM.so
  if ! "$NVCC" -gencode arch=compute_90a,code=sm_90a -O3 -std=c++17 -shared -Xcompiler -fPIC -o "$SO" \
       "tests/data/hostile/cuda/$FILE" -lcublas >"$BUILD/cuda/hostile_$STEM.log" 2>&1; then
    row "hostile $STEM" "FAIL" "does not build"
    continue
  fi
  timeout 30 "$HARNESS" --result-fd 1 --example --candidate "$SO" --n 1048576 --samples 3 >"$BUILD/cuda/hostile_$STEM.json" 2>&1
  RC=$?
  OUT=$(cat "$BUILD/cuda/hostile_$STEM.json")
  if [ $RC = 124 ]; then GOT=HANG_TIMEOUT
  elif echo "$OUT" | grep -q '"error":"cudaErrorIllegalAddress"'; then GOT=FAULT_ILLEGAL_ADDRESS
  elif echo "$OUT" | grep -q '"class":"RUNTIME_FAULT"'; then GOT=RUNTIME_FAULT
  elif echo "$OUT" | grep -q '"class":"LAUNCH_ERROR"'; then GOT=LAUNCH_ERROR
  elif echo "$OUT" | grep -q '"guards_ok":false'; then GOT=OOB_WRITE_GUARD
  elif echo "$OUT" | grep -q '"status":"wrong"'; then GOT=WRONG_OUTPUT
  elif echo "$OUT" | grep -q '"status":"ok"'; then GOT=PASS
  else GOT="UNKNOWN(rc=$RC)"; fi
  # Statically rejected candidates never run in the evaluator; here they run only to record what they would do.
  if [ "$WANT" = STATIC_REJECT ]; then row "hostile $STEM" "INFO" "static reject; at runtime: $GOT"
  elif [ "$GOT" = "$WANT" ]; then row "hostile $STEM" "PASS" "$GOT"
  else row "hostile $STEM" "FAIL" "want $WANT, got $GOT"; fi
  # A fault may leave the GPU unusable: the health probe decides (INFRA_ERROR, not the candidate's fault).
  if [ "$GOT" = FAULT_ILLEGAL_ADDRESS ] || [ "$GOT" = RUNTIME_FAULT ] || [ "$GOT" = HANG_TIMEOUT ]; then
    timeout 60 "$HARNESS" --result-fd 1 --probe >/dev/null 2>&1 && row "probe after $STEM" "PASS" "" || row "probe after $STEM" "FAIL" "GPU unusable"
  fi
done < <(python3 -c "import json;e=json.load(open('tests/data/hostile/cuda/expected.json'));[print(k,v['runtime']) for k,v in e.items() if k!='//']")

# 5. The evaluator on every CUDA task's starting kernel (reference outputs, correctness battery, timing against the
#    task's baseline, profile). A multi-GPU task (min_devices > 1) runs as groups of one process per GPU when the
#    machine has enough GPUs (workloads needing more are skipped and listed in the result); with fewer GPUs than
#    min_devices its row is INFO.
TASKS=0
GPUS=$(ls /dev 2>/dev/null | grep -cE '^nvidia[0-9]+$')
for TASK in kernels/*/task.json; do
  grep -q '"target": *"cuda"' "$TASK" || continue
  TASKS=$((TASKS + 1))
  DIR=$(dirname "$TASK")
  LOG=$BUILD/cuda/eval_$(basename "$DIR").log
  NEEDS=$(grep -oE '"min_devices": *[0-9]+' "$TASK" | grep -oE '[0-9]+$' || true)
  NEEDS=${NEEDS:-1}
  if [ "$NEEDS" -gt "$GPUS" ]; then
    row "eval $(basename "$DIR")" "INFO" "needs $NEEDS GPUs; this machine has $GPUS"
    continue
  fi
  LIMIT=300
  [ "$NEEDS" -gt 1 ] && LIMIT=1200
  # Our workloads here (the rows measured before published workloads were added); the published ones, where a
  # task has them (40-some per task), in a row of their own with more time.
  if timeout $LIMIT "$BUILD/evoteam" eval "$DIR" --workloads ours >"$LOG" 2>&1; then
    row "eval $(basename "$DIR")" "PASS" "$(grep -E '^(verdict|  [a-z0-9_]+ )' "$LOG" | tr '\n' ' ' | head -c 160)"
  else
    row "eval $(basename "$DIR")" "FAIL" "see $LOG"
  fi
  grep -q '"origin": *"published"' "$TASK" || continue
  PLOG=$BUILD/cuda/eval_$(basename "$DIR")_published.log
  if timeout 1200 "$BUILD/evoteam" eval "$DIR" --workloads published >"$PLOG" 2>&1; then
    row "eval $(basename "$DIR") (published)" "PASS" "$(grep -E '^(verdict|speedup)' "$PLOG" | tr '\n' ' ' | head -c 160)"
  else
    row "eval $(basename "$DIR") (published)" "FAIL" "see $PLOG"
  fi
done
[ "$TASKS" = 0 ] && row "eval cuda tasks" "SKIP" "no task with target cuda under kernels/ yet"

# 5b. Params that change a starting kernel's code paths (not only its tile sizes), checked for correctness at
#     their extremes: the builtin team will try them on the first run.
while read -r DIR PARAMS; do
  [ -f "$DIR/task.json" ] || continue
  ARGS=()
  for P in $PARAMS; do ARGS+=(--param "$P"); done
  NAME="params $(basename "$DIR") ${PARAMS// /,}"
  LOG=$BUILD/cuda/params_$(basename "$DIR")_${PARAMS// /_}.log
  if timeout 300 "$BUILD/evoteam" eval "$DIR" "${ARGS[@]}" --workloads ours --stages static,build,correctness >"$LOG" 2>&1; then
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

# 5c. The Python oracle with torch on the CUDA tasks that have a python_reference (tests/gpu/oracle.sh).
source tests/gpu/oracle.sh

# 6. Agreement with an independent timer: torch CUDA events around the same kernel (the example .so), L2 flushed.
"$NVCC" -gencode arch=compute_90a,code=sm_90a -O3 -shared -Xcompiler -fPIC -o "$BUILD/cuda/example.so" kernels/common/cuda/example_kernel.cu >/dev/null 2>&1
if [ -n "$MEDIAN" ] && python3 -c "import torch; assert torch.cuda.is_available()" >/dev/null 2>&1; then
  TORCH=$(python3 - "$BUILD/cuda/example.so" <<'PY'
import ctypes, statistics, sys, torch
lib = ctypes.CDLL(sys.argv[1])
n = 67108864
x = torch.arange(n, device="cuda", dtype=torch.float32).remainder_(1024).mul_(0.25)
y = torch.empty_like(x)
flush = torch.empty(int(2 * torch.cuda.get_device_properties(0).L2_cache_size) // 4 + 1, device="cuda", dtype=torch.int32)
stream = torch.cuda.current_stream()
times = []
for _ in range(30):
    flush.sum()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(stream)
    lib.example_scale(ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(y.data_ptr()), ctypes.c_int64(n), ctypes.c_void_p(stream.cuda_stream))
    stop.record(stream)
    torch.cuda.synchronize()
    times.append(start.elapsed_time(stop))
print("%.4f" % statistics.median(times))
PY
)
  DIFF=$(python3 -c "print('%.2f' % (100 * abs($TORCH - $MEDIAN) / $TORCH))")
  if python3 -c "import sys; sys.exit(0 if $DIFF <= 2.0 else 1)"; then row "timing vs torch events" "PASS" "evoteam ${MEDIAN} ms, torch ${TORCH} ms, diff ${DIFF}%"
  else row "timing vs torch events" "FAIL" "evoteam ${MEDIAN} ms, torch ${TORCH} ms, diff ${DIFF}% (target 2%)"; fi
else
  row "timing vs torch events" "SKIP" "torch with CUDA not available, or the example timing failed"
fi
finish "$FAILED"
