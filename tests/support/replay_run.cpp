#include "support/replay_run.hpp"

#include <algorithm>
#include <fstream>

#include <evoteam/llm/meter.hpp>

namespace evoteam::testing {

namespace {

// The run's few child processes (the source diff of best/changes.md) answered without running anything: a replay
// measures the search, not the machine.
class ReplayNoProcesses : public ProcessRunner {
 public:
  ProcessResult run(const Command&) override {
    ProcessResult result;
    result.spawned = true;
    result.exit_code = 0;
    return result;
  }
};

std::vector<nlohmann::json> replay_teams_of(const std::filesystem::path& run_dir) {
  std::vector<std::filesystem::path> cycles;
  if (std::filesystem::exists(run_dir / "cycles"))
    for (const auto& entry : std::filesystem::directory_iterator(run_dir / "cycles")) cycles.push_back(entry.path());
  std::sort(cycles.begin(), cycles.end());
  std::vector<nlohmann::json> teams;
  for (const std::filesystem::path& cycle : cycles) {
    std::ifstream in(cycle / "team.json");
    if (in) teams.push_back(nlohmann::json::parse(in, nullptr, false));
  }
  return teams;
}

}  // namespace

ReplayRunResult run_replayed(const Landscape& landscape, const ReplayRunRequest& request) {
  ReplayNoProcesses runner;
  Meter meter;
  RunContext context(runner, meter);
  context.interrupted = [] { return false; };
  // Evaluations answer at once here, so members side by side would only make the run depend on the scheduler.
  context.parallel_turns = ParallelTurns::in_turn;
  ReplayCallLog log;
  context.make_evaluator = [&](const ExecutorSettings&, const std::filesystem::path& task_dir) {
    return std::make_unique<ReplayEvaluator>(landscape, task_dir, request.noise_seed, &log);
  };
  OptimizeOptions options;
  options.task_dir = request.task_dir;
  options.provider = "builtin";
  options.mode = request.mode;
  options.budgets.evaluations = request.budget_evaluations;
  options.runs_dir = request.runs_dir;
  options.seed = request.seed;
  ReplayRunResult result;
  result.outcome = optimize(Config(), options, context);
  result.calls = log.calls();
  result.teams = replay_teams_of(result.outcome.run_dir);
  return result;
}

}  // namespace evoteam::testing
