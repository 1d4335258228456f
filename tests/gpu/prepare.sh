#!/usr/bin/env bash
# Prepares the GPU suite on a machine without a GPU, so that a lent GPU machine (15 minutes, start-up included)
# spends its time on device work only. It builds evoteam and evoteam_tests (the build tree's own configuration,
# warnings as errors), copies them stripped into one directory with the shared libraries they need that a bare
# CUDA image may lack (DT_RPATH $ORIGIN/../lib, so only these binaries and what they load see them), and compiles
# for sm_90a every CUDA piece of the suite that needs no device: the stand-alone harness with the example glue,
# the example kernel as a .so, the independent timer (tests/gpu/event_timer.cu) and the hostile corpus as .so files.
#
#   tests/gpu/prepare.sh [DIR]     DIR: build-gpu-prep (default; any /build-*/ path is ignored by git)
#   EVOTEAM_BUILD_DIR: the build tree to build in (default build/); EVOTEAM_NVCC: nvcc (default: PATH, then
#   /usr/local/cuda/bin/nvcc); EVOTEAM_JOBS: parallel jobs (default 2). To carry the result to another machine it
#   needs patchelf (apt-get install patchelf).
#
# Then, with the device tool, one call runs the suite (the carry list names the prepared directory):
#   run  command: tests/gpu/run.sh --prebuilt build-gpu-prep   carry: ["build-gpu-prep"]   timeout_s: 540
# The table comes back as $OUT/gpu-results.txt (its Markdown form, for docs/gpu-results.md, as $OUT/gpu-results.md)
# and the logs as $OUT/gpu-logs.tar.gz.
#
# Not pre-built: the evaluator's own builds (each task's starting kernel, reference, baseline and harness). Its
# build cache is keyed by the toolchain's identity, which names nvcc's build and the host compiler's version line,
# and the device image's g++ need not be this machine's (run.sh's `toolchain` row says whether they match); and
# `evoteam eval` builds the reference, baseline and harness only after the GPU probe. The GPU machine compiles
# those (16 cores); tests/gpu/run.sh budgets for it.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
PREP=${1:-build-gpu-prep}
case "$PREP" in /*) ;; *) PREP=$ROOT/$PREP ;; esac
BUILD=${EVOTEAM_BUILD_DIR:-$ROOT/build}
JOBS=${EVOTEAM_JOBS:-2}
NVCC=${EVOTEAM_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
GENCODE=(-gencode "arch=compute_90a,code=sm_90a")
say() { echo "[gpu-prepare] $*"; }

PATCHELF=$(command -v patchelf || true)
[ -x "$NVCC" ] || { say "nvcc is missing (set EVOTEAM_NVCC)"; exit 2; }
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S "$ROOT" -B "$BUILD" -DEVOTEAM_WERROR=ON -DEVOTEAM_BUILD_TESTS=ON >/dev/null
fi
# The tests binary locates kernels/ and its helper directory by the paths compiled into it: run.sh recreates them.
SOURCE_DIR=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD/CMakeCache.txt")
HELPERS_DIR=$(cd "$BUILD" && pwd)
[ "$SOURCE_DIR" = "$ROOT" ] || { say "$BUILD was configured for $SOURCE_DIR, not $ROOT: run cmake -S $ROOT -B $BUILD"; exit 2; }

say "building evoteam and evoteam_tests in $BUILD"
cmake --build "$BUILD" -j"$JOBS" --target evoteam evoteam_tests >"$BUILD/gpu-prepare-build.log" 2>&1 ||
  { tail -40 "$BUILD/gpu-prepare-build.log"; say "build failed (log: $BUILD/gpu-prepare-build.log)"; exit 1; }

rm -rf "$PREP"
mkdir -p "$PREP/bin" "$PREP/lib" "$PREP/cuda"
for BIN in evoteam evoteam_tests; do
  strip -o "$PREP/bin/$BIN" "$BUILD/$BIN"
done
# Shared libraries: everything the binaries load except the C and C++ runtimes, which every image has (carrying
# libstdc++ would shadow the image's newer one for python and nvcc). DT_RPATH, unlike DT_RUNPATH, also serves the
# libraries' own dependencies (libcurl's). Without patchelf the binaries keep this machine's libraries: fine for
# running here (run.sh on a GPU machine of your own), not for carrying.
if [ -n "$PATCHELF" ]; then
  ldd "$PREP/bin/evoteam" "$PREP/bin/evoteam_tests" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
    while read -r LIB; do
      case "$(basename "$LIB")" in
        libc.so.*|libm.so.*|libdl.so.*|librt.so.*|libpthread.so.*|libresolv.so.*|libstdc++.so.*|libgcc_s.so.*|ld-linux*) continue ;;
      esac
      cp -L "$LIB" "$PREP/lib/"
    done
  strip --strip-unneeded "$PREP"/lib/*.so* 2>/dev/null || true
  for BIN in evoteam evoteam_tests; do
    # shellcheck disable=SC2016  # $ORIGIN is for the dynamic loader, not the shell
    "$PATCHELF" --force-rpath --set-rpath '$ORIGIN/../lib' "$PREP/bin/$BIN"
  done
else
  say "patchelf is missing (apt-get install -y patchelf): the binaries use this machine's libraries, so this"
  say "directory runs here but is not fit to carry to another machine"
fi
say "binaries: $(du -sm "$PREP/bin" | cut -f1) MiB, libraries ($(find "$PREP/lib" -type f | wc -l)): $(du -sm "$PREP/lib" | cut -f1) MiB"

say "compiling the suite's CUDA pieces for sm_90a"
# Same flags as before on the device: -cudart shared, so the harness, the example .so and the timer share one runtime.
CUDA_FLAGS=("${GENCODE[@]}" -O3 -std=c++17 -cudart shared)
compile() {  # compile LOG ARGS...: nvcc with the log kept beside the output
  local log=$1; shift
  "$NVCC" "$@" >"$log" 2>&1 || { cat "$log"; say "nvcc failed: $*"; return 1; }
}
compile "$PREP/cuda/harness.log" "${CUDA_FLAGS[@]}" -lineinfo -Ikernels/common -o "$PREP/cuda/cuda_harness" \
  kernels/common/cuda/*.cu kernels/common/*.cpp tests/gpu/example_glue.cpp -lcublas -lcupti -ldl &
# The example kernel as a candidate: `scale` (the harness's example contract) is another name for example_scale.
compile "$PREP/cuda/example.log" "${CUDA_FLAGS[@]}" -shared -Xcompiler -fPIC -Xlinker --defsym=scale=example_scale \
  -o "$PREP/cuda/example.so" kernels/common/cuda/example_kernel.cu
compile "$PREP/cuda/event_timer.log" "${CUDA_FLAGS[@]}" -Xcompiler -Wall,-Wextra -o "$PREP/cuda/event_timer" \
  tests/gpu/event_timer.cu -ldl
for FILE in tests/data/hostile/cuda/*.cu; do
  STEM=$(basename "$FILE" .cu)
  # A hostile file that does not build is a row of the suite, not a failure here.
  "$NVCC" "${CUDA_FLAGS[@]}" -shared -Xcompiler -fPIC -o "$PREP/cuda/hostile_$STEM.so" "$FILE" -lcublas \
    >"$PREP/cuda/hostile_$STEM.log" 2>&1 || say "hostile $STEM does not build (the suite reports it)"
done
wait "$!" || { say "the harness does not build"; exit 1; }
strip "$PREP/cuda/cuda_harness" "$PREP/cuda/event_timer"

# FlashInfer's headers for the vendor baselines (the device machine reaches no package index): fetched here with
# pip by scripts/setup.sh, carried compressed (about 2.5 MiB of 33).
# shellcheck source=scripts/setup.sh
FLASHINFER=$(EVOTEAM_BUILD_DIR=$BUILD; source "$ROOT/scripts/setup.sh"; evoteam_fetch_flashinfer)
if [ -n "$FLASHINFER" ]; then
  tar -C "$(dirname "$FLASHINFER")" -cJf "$PREP/flashinfer.tar.xz" "$(basename "$FLASHINFER")"
else
  say "FlashInfer's headers could not be fetched: the FlashInfer rows will say unavailable"
fi

{
  echo "source_dir=$SOURCE_DIR"
  echo "helpers_dir=$HELPERS_DIR"
  echo "commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo '+changes')"
  echo "prepared=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "nvcc=$("$NVCC" --version | tail -1)"
  echo "host_compiler=$(g++ --version | head -1)"
  echo "glibc=$(ldd --version | head -1)"
  echo "carried_libraries=$([ -n "$PATCHELF" ] && echo yes || echo no)"
  # What the device image must have (it keeps its own C and C++ runtimes): the newest symbol versions used.
  echo "needs=$(for F in "$PREP"/bin/* "$PREP"/lib/* "$PREP"/cuda/*; do objdump -T "$F" 2>/dev/null; done |
    grep -oE 'GLIBC_2\.[0-9]+|GLIBCXX_3\.4\.[0-9]+' | sort -Vu | awk -F_ '{v[$1]=$0} END {print v["GLIBC"], v["GLIBCXX"]}')"
} >"$PREP/manifest.txt"

TREE_KB=$(git ls-files -z | du -ck --files0-from=- | tail -1 | cut -f1)
PREP_KB=$(du -sk "$PREP" | cut -f1)
say "prepared $PREP: $((PREP_KB / 1024)) MiB; with the tracked tree ($((TREE_KB / 1024)) MiB) $(((PREP_KB + TREE_KB) / 1024)) MiB of the device tool's 64 MiB"
[ $((PREP_KB + TREE_KB)) -lt $((60 * 1024)) ] || { say "too large to carry"; exit 1; }
