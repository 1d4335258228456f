// Config layering: input is a config file, then NUL-separated --set assignments.
#include <evoteam/core/config.hpp>

#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> parts = evoteam::fuzz::split_at_nul(evoteam::fuzz::as_text(data, size));
  const std::filesystem::path file = evoteam::fuzz::scratch_dir() / "config.json";
  evoteam::fuzz::write_text(file, parts.front());
  const std::vector<std::string> assignments(parts.begin() + 1, parts.end());
  evoteam::fuzz::expect_clean_outcome([&] { evoteam::load_config(file, assignments); });
  return 0;
}
