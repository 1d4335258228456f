// The core's sections of the config: "process" (the runner's defaults for every child) and "log".
#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/log.hpp>
#include <evoteam/core/process.hpp>

#include <cmath>

namespace evoteam {

ProcessSettings process_settings(const Config& config) {
  ProcessSettings settings;
  settings.kill_grace = std::chrono::milliseconds(std::llround(config.get<double>("process.kill_grace_s") * 1000));
  settings.output_cap = config.get<std::size_t>("process.output_cap_bytes");
  settings.max_open_files = config.get<std::uint64_t>("process.max_open_files");
  return settings;
}

Verbosity configured_verbosity(const Config& config) {
  const std::string name = config.get<std::string>("log.verbosity");
  if (name == "quiet") return Verbosity::quiet;
  if (name == "verbose") return Verbosity::verbose;
  if (name == "debug") return Verbosity::debug;
  EVOTEAM_CHECK(name == "normal", "log.verbosity passed its rule with '" + name + "'");
  return Verbosity::normal;
}

}  // namespace evoteam
