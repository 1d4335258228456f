// The children's environment: an allowlist of the daemon's variables, so provider keys and anything the
// daemon's user happened to export never reach nvcc, candidates or job scripts.
#include <evoteam/core/process.hpp>

#include <array>
#include <cctype>
#include <string_view>

#include <unistd.h>  // environ, declared once for every file a unity batch puts beside this one

namespace evoteam {
namespace {

constexpr std::array<std::string_view, 10> k_allowed_names = {
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM", "LD_LIBRARY_PATH"};
constexpr std::array<std::string_view, 4> k_allowed_prefixes = {"LC_", "CUDA_", "NVIDIA_", "SLURM_"};
// Checked after the allowlist: a prefix such as SLURM_ also covers SLURM_JWT, an authentication token.
constexpr std::array<std::string_view, 6> k_denied_fragments = {"API_KEY",  "TOKEN",      "SECRET",
                                                                "PASSWORD", "CREDENTIAL", "JWT"};

bool looks_like_credential(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (std::string_view fragment : k_denied_fragments) {
    if (upper.find(fragment) != std::string::npos) return true;
  }
  const std::string_view view(upper);
  return view.ends_with("_KEY") || view.ends_with("_PASS") || view.ends_with("_PASSWD");
}

bool allowed(std::string_view name) {
  bool listed = false;
  for (std::string_view allowed_name : k_allowed_names) listed = listed || name == allowed_name;
  for (std::string_view prefix : k_allowed_prefixes) listed = listed || name.starts_with(prefix);
  return listed && !looks_like_credential(name);
}

}  // namespace

std::map<std::string, std::string> scrubbed_env(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::size_t equals = text.find('=');
    if (equals == std::string_view::npos || equals == 0) continue;
    const std::string_view name = text.substr(0, equals);
    if (allowed(name)) env.emplace(std::string(name), std::string(text.substr(equals + 1)));
  }
  for (const auto& [key, value] : extra) env[key] = value;
  return env;
}

}  // namespace evoteam
