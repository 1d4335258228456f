#pragma once
// Where tests keep build caches. The caches are keyed by content (sources, flags, compiler identity), so several
// build directories may share one: scripts/sanitize points EVOTEAM_TEST_CACHE_DIR at the main build's, and the
// CUDA kernels the suite compiles are not compiled again for the sanitizer run.
#include <cstdlib>
#include <filesystem>

namespace evoteam::testing {

inline std::filesystem::path test_cache_root() {
  if (const char* dir = std::getenv("EVOTEAM_TEST_CACHE_DIR"); dir != nullptr && *dir != '\0') return dir;
  return EVOTEAM_TEST_HELPERS_DIR;
}

}  // namespace evoteam::testing
