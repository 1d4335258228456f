#include "supervisor/cycle_records.hpp"

#include <chrono>

#include <evoteam/core/fs.hpp>
#include <evoteam/history/journal_records.hpp>

namespace evoteam {

namespace {

nlohmann::json speedup_json(const std::optional<EvaluationRecord>& best) {
  return best && best->speedup ? nlohmann::json(*best->speedup) : nlohmann::json();
}

std::string changes_against_start(const EvaluationRecord& best, const EvaluationRecord& start) {
  std::string changes = "# " + best.candidate_id + " against the starting kernel " + start.candidate_id + "\n\n";
  changes += "speedup: " + std::to_string(best.speedup.value_or(0)) + "x\n\nparams:\n";
  for (const auto& [name, value] : best.params) {
    auto it = start.params.find(name);
    std::string before = it == start.params.end() ? "?" : it->second;
    changes += "  " + name + ": " + before + (before == value ? "" : " -> " + value) + "\n";
  }
  return changes;
}

std::string source_diff(const RunDir& run, const EvaluationRecord& best, const EvaluationRecord& start,
                        ProcessRunner& runner) {
  Command diff;
  diff.argv = {"diff", "-ru", (run.candidate_dir(start.candidate_id) / "src").string(),
               (run.candidate_dir(best.candidate_id) / "src").string()};
  diff.env = scrubbed_env();
  diff.timeout = std::chrono::seconds(30);
  ProcessResult result = runner.run(diff);
  return result.out.text.empty() ? std::string("(sources unchanged)\n") : result.out.text;
}

}  // namespace

void record_cycle_start(RunDir& run, int cycle, const TeamSpec& team, const std::string& change,
                        const nlohmann::json& signals, const nlohmann::json& supervisor_exchange) {
  // Created only once the cycle is certain to run: a run the policy stops leaves no empty cycle behind.
  std::filesystem::path cycle_dir = run.cycle_dir(cycle);
  evoteam::create_directories(cycle_dir);
  nlohmann::json team_json = team.to_json();
  team_json["cycle"] = cycle;
  team_json["change"] = change;
  team_json["signals"] = signals;
  write_json_atomic(cycle_dir / "team.json", team_json);
  if (!supervisor_exchange.is_null()) write_json_atomic(cycle_dir / "supervisor.json", supervisor_exchange);
  append_entry(run.journal(), CycleStartEntry{cycle, team.to_json(), change, team.evidence});
}

TurnsJson record_turns(RunDir& run, int cycle, const std::map<std::string, TurnOutcome>& turns) {
  TurnsJson recorded;
  for (const auto& [role, turn] : turns) {
    recorded.usage[role] = turn.usage.to_json();
    recorded.turns[role] = {{"summary", turn.summary}, {"handoff_note", turn.handoff_note}};
    append_entry(run.journal(), TurnEntry{cycle, role, turn.summary, turn.usage, turn.agent});
  }
  return recorded;
}

void record_cycle_end(RunDir& run, const CycleEnd& end, const RunState& state,
                      const std::map<std::string, int>& clear_streak) {
  const std::string best_candidate = end.best ? end.best->candidate_id : "";
  write_json_atomic(run.cycle_dir(end.cycle) / "summary.json", {{"cycle", end.cycle},
                                                                {"turns", end.turns.turns},
                                                                {"usage", end.turns.usage},
                                                                {"best_candidate", best_candidate},
                                                                {"best_speedup", speedup_json(end.best)},
                                                                {"seconds", end.seconds}});
  CycleEndEntry entry{end.cycle, {}, state.elapsed_s, state.history.device_seconds(), clear_streak, best_candidate};
  for (const auto& [role, usage] : end.turns.usage.items()) entry.usage[role] = RoleUsage::from_json(usage);
  append_entry(run.journal(), entry);
}

void publish_best(RunDir& run, const RunHistory& history, ProcessRunner& runner) {
  std::optional<EvaluationRecord> best = history.best();
  if (!best) return;
  std::filesystem::path staging = run.path() / "best.new";
  std::error_code ignored;
  std::filesystem::remove_all(staging, ignored);
  copy_tree(run.candidate_dir(best->candidate_id), staging);
  const EvaluationRecord& start = history.evaluations.front();
  std::string changes = changes_against_start(*best, start);
  changes += "\nsource diff:\n" + source_diff(run, *best, start, runner);
  write_file_atomic(staging / "changes.md", changes);
  std::filesystem::remove_all(run.path() / "best", ignored);
  std::filesystem::rename(staging, run.path() / "best");
  fsync_directory(run.path());
}

nlohmann::json summary_json(const RunState& state, int cycles, const MeterTotals& spent) {
  std::optional<EvaluationRecord> best = state.history.best();
  return {{"cycles", cycles},
          {"evaluations", state.history.evaluation_count()},
          {"trials", state.history.trials},
          {"best_candidate", best ? best->candidate_id : ""},
          {"best_speedup", speedup_json(best)},
          {"tokens", to_json(spent.tokens)},
          {"cost_usd", spent.cost_usd},
          {"elapsed_s", state.elapsed_s},
          {"gpu_seconds", state.history.device_seconds()}};
}

void record_stop(RunDir& run, const RunOutcome& outcome, const nlohmann::json& summary) {
  const std::string reason = to_string(outcome.stop_reason);
  append_entry(run.journal(), StopEntry{outcome.status, reason});
  // The exit code is recorded so that `evoteam wait` exits as the daemon did, whatever the reason maps to.
  run.update_run_json({{"status", to_string(outcome.status)},
                       {"stop_reason", reason},
                       {"summary", summary},
                       {"exit_code", static_cast<int>(outcome.exit_code)}});
}

}  // namespace evoteam
