#pragma once
// Read-only views of run directories: the `runs` listing and the `show` summary. Never mutates a run.
// They read run.json's "summary" object (kept current by the daemon at every cycle end), so listing hundreds
// of runs reads one small file each.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam {

struct RunSummary {
  std::filesystem::path dir;
  std::string id;
  std::string task;
  std::string status;  // running|finished|stopped|failed, or "running (dead)" when the lock holder is gone
  std::string stop_reason;
  int cycles = 0;
  int evaluations = 0;  // candidates evaluated
  int trials = 0;       // the agents' trials: with the candidates, what the evaluations budget counts
  std::optional<double> best_speedup;
  std::string best_candidate;
  long long tokens = 0;  // input + output + cache reads + cache writes
  double cost_usd = 0;
  std::string started;
  std::string error;  // set when run.json could not be read; the other fields are then empty
};

RunSummary summarize_run(const std::filesystem::path& run_dir);
std::vector<RunSummary> summarize_runs(const std::filesystem::path& runs_dir);

nlohmann::json to_json(const RunSummary& summary);
std::string format_runs_table(const std::vector<RunSummary>& runs);

// Resolves RUN given on the command line: a path to a run directory, or an id under runs_dir.
std::filesystem::path resolve_run(const std::string& run, const std::filesystem::path& runs_dir);

// The `show` view: run.json, the team of each cycle, the best candidate, journal health.
nlohmann::json describe_run(const std::filesystem::path& run_dir);
std::string format_run_description(const nlohmann::json& description);

}  // namespace evoteam
