#!/usr/bin/env bash
# Builds llama.cpp's llama-server once, CPU only, static, without curl, OpenSSL or the web UI, from the source
# distribution of the pinned llama-cpp-python (fetched with pip by name, so the user's index settings apply; it
# vendors llama.cpp's whole source, its ggml-vocab-*.gguf vocabularies and chat templates). The result is reused across runs:
#   build/tools/llama-server/<version>/bin/llama-server, .../vocab/ (the llama SPM vocabulary and the Qwen2.5 chat
#   template, which calls tools) and .../python/ (the gguf package)
# Best effort: prints the install directory on success, nothing otherwise (the test that needs it then skips).
# Usage: tests/local_llm/build_server.sh [TOOLS_DIR]
set -uo pipefail
evoteam_llama_version=0.3.36
evoteam_gguf_version=0.19.0
evoteam_numpy_version=2.4.6
tools_dir="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/tools}"
dest="$tools_dir/llama-server/$evoteam_llama_version"
if [ -x "$dest/bin/llama-server" ] && [ "$(cat "$dest/VERSION" 2>/dev/null)" = "$evoteam_llama_version" ]; then
  echo "$dest"
  exit 0
fi
command -v cmake >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1 || exit 0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
started=$(date +%s)
if ! timeout 900 python3 -m pip download --quiet --no-deps --no-binary :all: --dest "$work" \
     "llama-cpp-python==$evoteam_llama_version" >&2; then
  echo "evoteam: llama-cpp-python $evoteam_llama_version not fetched; the local-llm test will skip" >&2
  exit 0
fi
tar -xzf "$work"/llama_cpp_python-*.tar.gz -C "$work" || exit 0
source_dir=$(echo "$work"/llama_cpp_python-*/vendor/llama.cpp)
fetched=$(date +%s)
# Only the server target; nothing fetched at configure time (the prebuilt UI would be downloaded). Unoptimised: the
# test's model is tiny, so compiling is what costs (325 s against 551 s for Release on 2 cores; the local-llm tests
# took 50 s against 43 s).
if ! cmake -S "$source_dir" -B "$work/build" -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS=-O0 -DCMAKE_CXX_FLAGS=-O0 \
     -DBUILD_SHARED_LIBS=OFF \
     -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF \
     -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DGGML_CUDA=OFF \
     -DGGML_BACKEND_DL=OFF >"$work/configure.log" 2>&1 ||
   ! cmake --build "$work/build" --target llama-server -j "$(nproc)" >"$work/build.log" 2>&1; then
  echo "evoteam: llama-server $evoteam_llama_version did not build; the local-llm test will skip:" >&2
  tail -n 20 "$work/configure.log" "$work/build.log" >&2 2>/dev/null
  exit 0
fi
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/vocab"
cp "$work/build/bin/llama-server" "$dest/bin/"
cp "$source_dir/models/ggml-vocab-llama-spm.gguf" "$source_dir/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja" \
  "$dest/vocab/"
# The gguf package writes the test's tiny model (tests/local_llm/tiny_model.py), from its own folder on PYTHONPATH.
if ! timeout 600 python3 -m pip install --quiet --target "$dest/python" "gguf==$evoteam_gguf_version" \
     "numpy==$evoteam_numpy_version" >&2; then
  echo "evoteam: gguf $evoteam_gguf_version not installed; the local-llm test will skip" >&2
  rm -rf "$dest"
  exit 0
fi
echo "$evoteam_llama_version" >"$dest/VERSION"
built=$(date +%s)
echo "evoteam: llama-server $evoteam_llama_version: fetched in $((fetched - started)) s, built in $((built - fetched)) s" \
  "on $(nproc) cores" >&2
echo "$dest"
