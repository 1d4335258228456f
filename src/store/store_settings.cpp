// The "store" section of the configuration.
#include <evoteam/core/config.hpp>
#include <evoteam/store/store.hpp>

namespace evoteam {

std::filesystem::path configured_runs_dir(const Config& config) { return config.get<std::string>("store.runs_dir"); }

}  // namespace evoteam
