#include "support/cli_runner.hpp"

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

namespace evoteam::testing {

const std::filesystem::path k_task = std::filesystem::path(EVOTEAM_SOURCE_DIR) / "kernels" / "host_matmul";

ProcessResult run_evoteam(const std::vector<std::string>& args, std::chrono::seconds timeout,
                          const std::map<std::string, std::string>& env) {
  Command command;
  command.argv = {EVOTEAM_BINARY};
  for (const std::string& arg : args) command.argv.push_back(arg);
  command.cwd = EVOTEAM_SOURCE_DIR;
  command.timeout = timeout;
  command.output_cap = 0;
  command.env = env;
  // scripts/test shares one build cache among the suite's evoteam processes (eval.build_cache_dir through
  // EVOTEAM_EVAL__BUILD_CACHE_DIR), a name the runner's scrubbed environment would drop.
  if (const char* builds = std::getenv("EVOTEAM_EVAL__BUILD_CACHE_DIR"); builds != nullptr && *builds != '\0') {
    if (command.env.empty()) command.env = scrubbed_env();
    command.env.emplace("EVOTEAM_EVAL__BUILD_CACHE_DIR", builds);
  }
  return system_runner().run(command);
}

std::string describe(const ProcessResult& result) {
  std::string err = result.err.text;
  if (err.size() > 4000) err = err.substr(err.size() - 4000);
  return result.describe() + "\nstdout:\n" + result.out.text.substr(0, 4000) + "\nstderr (tail):\n" + err;
}

nlohmann::json parse_stdout(const ProcessResult& result) {
  nlohmann::json value = nlohmann::json::parse(result.out.text, nullptr, false);
  EXPECT_FALSE(value.is_discarded()) << describe(result);
  return value;
}

// Whole journal lines parsed; a torn last line (after a kill -9) is skipped.
std::vector<nlohmann::json> journal_records(const std::filesystem::path& run_dir) {
  std::vector<nlohmann::json> records;
  std::ifstream in(run_dir / "journal.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json value = nlohmann::json::parse(line, nullptr, false);
    if (!value.is_discarded() && value.is_object()) records.push_back(value);
  }
  return records;
}

std::vector<nlohmann::json> evaluations(const std::filesystem::path& run_dir) {
  std::vector<nlohmann::json> result;
  for (const nlohmann::json& record : journal_records(run_dir))
    if (record.value("type", "") == "evaluation" && record.contains("record")) result.push_back(record["record"]);
  return result;
}

std::optional<std::filesystem::path> only_run(const std::filesystem::path& runs_dir) {
  if (!std::filesystem::exists(runs_dir)) return std::nullopt;
  for (const auto& entry : std::filesystem::directory_iterator(runs_dir))
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "journal.jsonl")) return entry.path();
  return std::nullopt;
}

bool cites(const nlohmann::json& team, const std::string& signal) {
  for (const nlohmann::json& evidence : team.at("evidence"))
    if (evidence.value("signal", "") == signal) return true;
  return false;
}

}  // namespace evoteam::testing
