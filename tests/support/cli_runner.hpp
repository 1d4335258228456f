#pragma once
// Running the real evoteam binary from end-to-end tests, and reading what a run left behind.
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/core/process.hpp>

namespace evoteam::testing {

extern const std::filesystem::path k_task;  // kernels/host_matmul

// Runs `evoteam ARGS...` from the source tree with a deadline; output uncapped. `env` is the child's whole
// environment (empty: scrubbed_env()).
ProcessResult run_evoteam(const std::vector<std::string>& args, std::chrono::seconds timeout,
                          const std::map<std::string, std::string>& env = {});
// The result and the ends of its output, for failure messages.
std::string describe(const ProcessResult& result);
nlohmann::json parse_stdout(const ProcessResult& result);
// Whole journal lines parsed; a torn last line (after a kill -9) is skipped.
std::vector<nlohmann::json> journal_records(const std::filesystem::path& run_dir);
// The "record" of every "evaluation" journal record.
std::vector<nlohmann::json> evaluations(const std::filesystem::path& run_dir);
// The single run directory under runs_dir, if one exists.
std::optional<std::filesystem::path> only_run(const std::filesystem::path& runs_dir);
// Whether a team.json decision cites `signal` among its evidence.
bool cites(const nlohmann::json& team, const std::string& signal);

}  // namespace evoteam::testing
