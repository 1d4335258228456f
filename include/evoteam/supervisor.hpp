#pragma once
// The supervisor loop: cycle after cycle, run the team, read the measurements, decide the next team and write
// down why. `optimize` starts a run; `resume` continues a stopped or killed one from its journal.
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include <evoteam/config.hpp>
#include <evoteam/error.hpp>
#include <evoteam/supervisor_policy.hpp>

namespace evoteam {

struct Budgets {
  int max_cycles = 0;       // 0: no limit (each budget alike)
  long long tokens = 0;
  double usd = 0;
  double hours = 0;
  double gpu_seconds = 0;
  int evaluations = 0;
  double target_speedup = 0;
  nlohmann::json to_json() const;
  static Budgets from_json(const nlohmann::json& value);
  static Budgets from_config(const Config& config);
};

struct OptimizeOptions {
  std::filesystem::path task_dir;
  std::string provider = "builtin";
  std::string model;
  TeamMode mode = TeamMode::evolving;
  Budgets budgets;
  std::filesystem::path runs_dir;
  std::filesystem::path knowledge_dir;  // empty: the run's own knowledge/
  std::uint64_t seed = 1;
};

struct RunOutcome {
  std::filesystem::path run_dir;
  std::string status;        // finished | stopped | failed
  std::string stop_reason;   // max_cycles, target_reached, roofline, budget_tokens, ..., interrupted
  std::string best_candidate;
  std::optional<double> best_speedup;
  int cycles = 0;
  int evaluations = 0;
  nlohmann::json tokens = {{"input", 0}, {"output", 0}, {"cache_read", 0}, {"cache_write", 0}};
  double cost_usd = 0;
  ExitCode exit_code = ExitCode::success;
  nlohmann::json to_json() const;
};

RunOutcome optimize(const Config& config, const OptimizeOptions& options);
RunOutcome resume(const Config& config, const std::filesystem::path& run_dir);

}  // namespace evoteam
