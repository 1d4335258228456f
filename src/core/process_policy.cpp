// The "process" section of the config as the defaults of a Command: one truncation and kill policy.
#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/process.hpp>

#include <cmath>

namespace evoteam {

void apply_process_policy(const Config& config, Command& command) {
  const double grace_s = config.get<double>("process.kill_grace_s");
  const auto cap = config.get<std::int64_t>("process.output_cap_bytes");
  const auto open_files = config.get<std::int64_t>("process.max_open_files");
  if (!(grace_s >= 0) || cap < 0 || open_files < 1) {
    throw InvalidInput("config: process.kill_grace_s and process.output_cap_bytes must be >= 0 and "
                       "process.max_open_files >= 1");
  }
  command.kill_grace = std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(grace_s * 1000)));
  command.output_cap = static_cast<std::size_t>(cap);
  command.max_open_files = static_cast<std::uint64_t>(open_files);
}

}  // namespace evoteam
