// Locating the CUDA toolkit's executables.
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "eval/cuda/cuda_tools.hpp"

namespace evoteam::eval::cuda {
namespace {

namespace fs = std::filesystem;

bool executable(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<fs::path> find_cuda_tool(const std::string& name) {
  std::string variable = "EVOTEAM_";
  for (char c : name) variable += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (const char* explicit_path = std::getenv(variable.c_str()); explicit_path != nullptr && *explicit_path != 0) {
    // An explicit setting that points nowhere means "not installed", never a silent fallback to another copy.
    if (executable(explicit_path)) return fs::path(explicit_path);
    return std::nullopt;
  }
  std::vector<fs::path> dirs;
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::istringstream parts(path);
    std::string dir;
    while (std::getline(parts, dir, ':'))
      if (!dir.empty()) dirs.emplace_back(dir);
  }
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != 0)
    dirs.push_back(fs::path(home) / "bin");
  dirs.emplace_back("/usr/local/cuda/bin");
  for (const fs::path& dir : dirs)
    if (executable(dir / name)) return dir / name;
  return std::nullopt;
}

}  // namespace evoteam::eval::cuda
