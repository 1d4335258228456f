#pragma once
// The supervisor loop: cycle after cycle, run the team, read the measurements, decide the next team and write
// down why. `optimize` starts a run; `resume` continues a stopped or killed one from its journal.
#include <chrono>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include <evoteam/cluster/cluster.hpp>
#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/history/stop_reason.hpp>
#include <evoteam/supervisor/supervisor_policy.hpp>
#include <evoteam/team/lab.hpp>
#include <evoteam/team/team.hpp>

namespace evoteam {

struct Budgets {
  int max_cycles = 0;  // 0: no limit (each budget alike)
  long long tokens = 0;
  double usd = 0;
  double hours = 0;
  double gpu_seconds = 0;
  int evaluations = 0;
  double target_speedup = 0;
  nlohmann::json to_json() const;
  static Budgets from_json(const nlohmann::json& value);
};

struct OptimizeOptions {
  std::filesystem::path task_dir;
  std::string provider = "builtin";
  std::string model;
  TeamMode mode = TeamMode::evolving;
  Budgets budgets;
  std::filesystem::path runs_dir;
  std::filesystem::path knowledge_dir;  // empty: the run's own knowledge/
  std::filesystem::path from_run;       // an earlier run of the task whose best is the start; empty: the task's
  std::uint64_t seed = 1;
  // The task's workloads the run evaluates (`--workloads published|ours|all`); kept in run.json for resume.
  WorkloadSelection workloads = WorkloadSelection::all;
  // Called once the run directory exists, before the run starts (`optimize --detach` hands it to the caller).
  std::function<void(const std::filesystem::path& run_dir)> on_run_created;
};

struct RunOutcome {
  std::filesystem::path run_dir;
  RunStatus status = RunStatus::finished;  // finished, stopped, or failed when it measured nothing (run_end)
  StopReason stop_reason = StopReason::max_cycles;
  std::string best_candidate;
  std::optional<double> best_speedup;
  int cycles = 0;
  int evaluations = 0;  // candidates evaluated
  int trials = 0;       // the agents' tool trials; with the candidates, what --budget-evaluations counts
  nlohmann::json tokens = {{"input", 0}, {"output", 0}, {"cache_read", 0}, {"cache_write", 0}};
  double cost_usd = 0;
  double gpu_seconds = 0;  // the device time the evaluations held (RunHistory::device_seconds)
  ExitCode exit_code = ExitCode::success;
  nlohmann::json to_json() const;
};

class Meter;

// Everything a run reaches outside its run directory: child processes, the LLM meter, the clock, the interrupt
// flag and the evaluator. The CLI passes the process-wide ones; tests pass fakes, so the loop runs without them.
struct RunContext {
  using Clock = std::chrono::steady_clock;
  using EvaluatorFactory = std::function<std::unique_ptr<CandidateEvaluator>(const ExecutorSettings& settings,
                                                                             const std::filesystem::path& task_dir)>;

  RunContext(ProcessRunner& runner_, Meter& meter_) : runner(runner_), meter(meter_) {}

  ProcessRunner& runner;
  Meter& meter;
  std::function<Clock::time_point()> now = [] { return Clock::now(); };
  // Polled at the loop's safe points: the flag that SIGINT/SIGTERM forwarding sets, by default.
  std::function<bool()> interrupted = [] { return evoteam::interrupted(); };
  // Empty: the real evaluator on the run's frozen task, running its children through `runner`.
  EvaluatorFactory make_evaluator;
  // A parallel pattern's members side by side (a real run) or in turn (a replayed run that must be the same for
  // the same seed).
  ParallelTurns parallel_turns = ParallelTurns::side_by_side;
  // Called at the end of every cycle, once its records and run.json's summary are written: the CLI rewrites the
  // run's report here (the supervisor knows nothing of reports), a campaign follows its run. Must not throw.
  std::function<void(const std::filesystem::path& run_dir)> on_cycle_end;
};

RunOutcome optimize(const Config& config, const OptimizeOptions& options, RunContext& context);
RunOutcome resume(const Config& config, const std::filesystem::path& run_dir, RunContext& context);
// `evoteam mcp --run RUN`: serves evoteam's tools over MCP on `in`/`out` for a person's own agent session on an
// existing run — its frozen task, configuration, evaluator, knowledge and budgets — recording candidates under the
// run as role "mcp" in its last cycle. Holds the run's lock while it serves (a running daemon refuses it, exit 4).
// `workspace` is where the session's kernel files are (filled from the run's best where missing).
void serve_run_tools(const Config& config, const std::filesystem::path& run_dir, const std::filesystem::path& workspace,
                     RunContext& context, std::istream& in, std::ostream& out);

}  // namespace evoteam
