#pragma once
// The live view of one run (`evoteam status`) and how a run's end maps to an exit code (`evoteam wait`).
// Read-only, like every report: it reads run.json, the latest cycle's team.json, the journal and the run lock.
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam {

// How much of one budget is spent. `limit` 0 means the run has no such budget.
struct BudgetBurn {
  std::string name;  // cycles, evaluations, tokens, usd, hours, gpu_seconds
  double spent = 0;
  double limit = 0;
  std::optional<double> percent;  // spent / limit in %, when there is a limit
  std::optional<double> eta_s;    // seconds until it runs out at the rate so far, when it can be told
  std::string counts;             // what the budget counts, as the run enforces it ("candidates evaluated and ...")
  std::string parts;              // the spent figure's parts, when it has several ("2 candidates, 6 trials")
};

// A worker job of a run that evaluates through Slurm, as its daemon last saw it (<run>/cluster/jobs.json).
struct ClusterJobView {
  std::string id, state, reason, node;
};

struct RunStatusView {
  std::filesystem::path dir;
  std::string id;
  std::string task;
  std::string status;  // run.json's status: running, finished, stopped, failed
  std::string stop_reason;
  bool daemon_alive = false;  // a live process holds the run lock
  int daemon_pid = 0;         // that process (0 when none, or not yet written)
  int cycles_finished = 0;
  int current_cycle = 0;          // the latest cycle with a team, finished or not
  std::vector<std::string> team;  // role names of the latest cycle's team
  std::string pattern;
  std::string best_candidate;
  std::optional<double> best_speedup;
  double elapsed_s = 0;  // the run's wall time so far, counting the live session
  std::vector<BudgetBurn> budgets;
  std::optional<double> eta_s;             // until the tightest budget runs out; none when no budget tells
  std::string eta_budget;                  // that budget's name
  std::optional<double> last_event_age_s;  // since the journal's last record
  std::string last_event;                  // its type
  // Device time of the run's evaluations by the device that measured them (the journal's `device`; trials and
  // profiles are ledgered without one).
  std::map<std::string, double> device_seconds;
  std::vector<ClusterJobView> jobs;  // Slurm worker jobs serving the run (--executor slurm)
  int jobs_ended = 0;                // worker jobs that ended under the run (lost or released)
  // What of the journal was left out (missing, torn, damaged lines or records): the figures above lack it.
  std::vector<std::string> journal_skipped;
};

RunStatusView run_status(const std::filesystem::path& run_dir);
nlohmann::json to_json(const RunStatusView& view);
std::string format_run_status(const RunStatusView& view);

// The exit code a run ended with, as its daemon recorded it in run.json; for runs recorded before the code
// was, derived from status and stop reason. nullopt while run.json says the run is running.
std::optional<int> recorded_exit_code(const nlohmann::json& run_json);

// Exit code of `wait` when its --timeout passes first (as timeout(1) does); outside the table of run codes.
inline constexpr int k_wait_timeout_exit_code = 124;

struct WaitOutcome {
  int exit_code = 0;
  std::string message;  // what ended the wait, for people
};

// Blocks until no live process holds the run and run.json no longer says "running", polling every
// `poll` interval. A run whose daemon died without recording its end (kill -9) ends the wait with exit 1;
// a `timeout` (when given) that passes first ends it with k_wait_timeout_exit_code.
WaitOutcome wait_for_run(const std::filesystem::path& run_dir, std::optional<std::chrono::milliseconds> timeout,
                         std::chrono::milliseconds poll);

}  // namespace evoteam
