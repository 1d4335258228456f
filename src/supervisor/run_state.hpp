#pragma once
// The state of a run that the supervisor loop carries from cycle to cycle, and its reconstruction from the
// journal (the basis of resume).
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include <evoteam/history/history.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/supervisor/supervisor.hpp>

namespace evoteam {

struct RunState {
  OptimizeOptions options;
  RunHistory history;
  std::map<std::string, int> clear_streak;
  double elapsed_s = 0;  // wall time of finished cycles, across resumes
  int last_finished_cycle = 0;
  std::optional<TeamSpec> unfinished_team;  // a cycle that started but did not end (killed mid-cycle)
  int unfinished_cycle = 0;
};

nlohmann::json options_to_json(const OptimizeOptions& options);
// Every budget a finite number, 0 (no limit) or more; throws InvalidInput naming the budgets.<name> key (the
// command line checks its own flags, so what fails here came from the configuration).
void validate_budgets(const Budgets& budgets);
// Checks that a run.json read from `file` holds what resume relies on: id, task, a known status, the options
// with their budgets (finite, not negative) and the frozen config. Throws InvalidInput naming the file and the
// field; a run.json that fails here is never treated as a run without limits.
void validate_run_json(const nlohmann::json& run_json, const std::filesystem::path& file);
OptimizeOptions options_from_json(const nlohmann::json& value);

// Refuses (InvalidInput, exit 3) a run directory whose cycle files go further than its journal: a journal cut
// or damaged in the middle, where resuming would write over cycles the files prove happened. What a kill
// leaves (the files of the one cycle or evaluation it interrupted) agrees. Reads only.
void check_files_agree_with_journal(const std::filesystem::path& run_dir, const JournalReplay& replay);

// Rebuilds the state from run.json and the journal's records.
RunState replay_run_state(const nlohmann::json& run_json, const JournalReplay& replay,
                          const std::set<std::string>& known_roles);

}  // namespace evoteam
