#include <evoteam/eval/vendor_sources.hpp>

#include <evoteam/core/config.hpp>  // install_root() only
#include <evoteam/core/text.hpp>

#include <cstdlib>
#include <fstream>

namespace evoteam {
namespace {

namespace fs = std::filesystem;

bool holds_flashinfer(const fs::path& root) {
  std::error_code ignored;
  return fs::is_regular_file(root / "include" / "flashinfer" / "attention" / "decode.cuh", ignored) &&
         fs::is_directory(root / "cccl" / "libcudacxx" / "include", ignored);
}

std::optional<VendorSources> sources_at(const fs::path& dir) {
  for (const fs::path& root : {dir, dir / "data"}) {
    if (!holds_flashinfer(root)) continue;
    std::string version = "unknown";
    if (std::ifstream file(root / "VERSION"); file) std::getline(file, version);
    return VendorSources{fs::absolute(root), trim(version).empty() ? "unknown" : trim(version)};
  }
  return std::nullopt;
}

}  // namespace

std::optional<VendorSources> find_flashinfer(const std::string& configured, std::string* why) {
  fs::path place = install_root() / "build" / "tools" / "flashinfer";
  std::string source = "the build tree";
  if (!configured.empty()) {
    place = configured;
    source = "eval.cuda.flashinfer";
  } else if (const char* env = std::getenv("EVOTEAM_FLASHINFER"); env != nullptr && *env != '\0') {
    place = env;
    source = "EVOTEAM_FLASHINFER";
  }
  if (std::optional<VendorSources> found = sources_at(place)) return found;
  if (why != nullptr)
    *why = "FlashInfer's sources are not installed (looked in " + place.string() + ", from " + source +
           "); scripts/setup.sh fetches the pinned " + k_flashinfer_package +
           " wheel with pip, or set eval.cuda.flashinfer to an unpacked wheel's flashinfer/data";
  return std::nullopt;
}

}  // namespace evoteam
