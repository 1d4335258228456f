#include "supervisor/run_state.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <spdlog/spdlog.h>

#include <evoteam/core/error.hpp>
#include <evoteam/history/journal_records.hpp>
#include <evoteam/task/task.hpp>

namespace evoteam {

nlohmann::json Budgets::to_json() const {
  return {{"max_cycles", max_cycles},
          {"tokens", tokens},
          {"usd", usd},
          {"hours", hours},
          {"gpu_seconds", gpu_seconds},
          {"evaluations", evaluations},
          {"target_speedup", target_speedup}};
}

Budgets Budgets::from_json(const nlohmann::json& value) {
  Budgets budgets;
  budgets.max_cycles = value.value("max_cycles", 0);
  budgets.tokens = value.value("tokens", 0LL);
  budgets.usd = value.value("usd", 0.0);
  budgets.hours = value.value("hours", 0.0);
  budgets.gpu_seconds = value.value("gpu_seconds", 0.0);
  budgets.evaluations = value.value("evaluations", 0);
  budgets.target_speedup = value.value("target_speedup", 0.0);
  return budgets;
}

nlohmann::json options_to_json(const OptimizeOptions& options) {
  return {{"task_dir", options.task_dir.string()},
          {"provider", options.provider},
          {"model", options.model},
          {"team_mode", to_string(options.mode)},
          {"budgets", options.budgets.to_json()},
          {"runs_dir", options.runs_dir.string()},
          {"knowledge_dir", options.knowledge_dir.string()},
          {"seed", options.seed},
          {"workloads", to_string(options.workloads)}};
}

namespace {

[[noreturn]] void bad_field(const std::filesystem::path& file, const std::string& field, const std::string& problem) {
  throw InvalidInput(file.string() + ": field '" + field + "' " + problem);
}

const nlohmann::json& required(const nlohmann::json& object, const std::string& key, nlohmann::json::value_t type,
                               const std::filesystem::path& file, const std::string& field) {
  const auto it = object.find(key);
  if (it == object.end()) bad_field(file, field, "is missing");
  const bool number = type == nlohmann::json::value_t::number_float;
  if (number ? !it->is_number() : it->type() != type)
    bad_field(file, field, std::string("must be ") + (number ? "a number" : nlohmann::json(type).type_name()));
  return *it;
}

}  // namespace

void validate_budgets(const Budgets& budgets) {
  const std::pair<const char*, double> values[] = {{"max_cycles", budgets.max_cycles},
                                                   {"tokens", static_cast<double>(budgets.tokens)},
                                                   {"usd", budgets.usd},
                                                   {"hours", budgets.hours},
                                                   {"gpu_seconds", budgets.gpu_seconds},
                                                   {"evaluations", budgets.evaluations},
                                                   {"target_speedup", budgets.target_speedup}};
  for (const auto& [name, value] : values)
    if (!std::isfinite(value) || value < 0)
      throw InvalidInput(std::string("configuration key budgets.") + name +
                         ": must be a finite number, 0 (no limit) or more, got " + nlohmann::json(value).dump());
}

void validate_run_json(const nlohmann::json& run_json, const std::filesystem::path& file) {
  using Type = nlohmann::json::value_t;
  if (!run_json.is_object()) throw InvalidInput(file.string() + ": must be a JSON object");
  required(run_json, "id", Type::string, file, "id");
  required(run_json, "task", Type::string, file, "task");
  const std::string status = required(run_json, "status", Type::string, file, "status").get<std::string>();
  try {
    run_status_from_string(status);
  } catch (const InvalidInput& error) {
    bad_field(file, "status", std::string("is not valid: ") + error.what());
  }
  required(run_json, "config", Type::object, file, "config");
  const nlohmann::json& options = required(run_json, "options", Type::object, file, "options");
  required(options, "task_dir", Type::string, file, "options.task_dir");
  required(options, "provider", Type::string, file, "options.provider");
  if (options.contains("workloads")) {
    const nlohmann::json& workloads = options["workloads"];
    if (!workloads.is_string() || !parse_workload_selection(workloads.get<std::string>()))
      bad_field(file, "options.workloads", "must be one of \"all\", \"published\", \"ours\"");
  }
  const nlohmann::json& budgets = required(options, "budgets", Type::object, file, "options.budgets");
  for (const char* name : {"max_cycles", "tokens", "usd", "hours", "gpu_seconds", "evaluations", "target_speedup"}) {
    const std::string field = std::string("options.budgets.") + name;
    const double value = required(budgets, name, Type::number_float, file, field).get<double>();
    if (!std::isfinite(value) || value < 0) bad_field(file, field, "must be a finite number, 0 or more");
  }
}

void check_files_agree_with_journal(const std::filesystem::path& run_dir, const JournalReplay& replay) {
  int last_started = 0;
  std::set<int> ended;
  for (const nlohmann::json& record : replay.records) {
    const JournalLine line = read_journal_line(record);
    if (!line.entry) continue;
    if (const auto* start = std::get_if<CycleStartEntry>(&*line.entry))
      last_started = std::max(last_started, start->cycle);
    if (const auto* end = std::get_if<CycleEndEntry>(&*line.entry)) ended.insert(end->cycle);
  }
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(run_dir / "cycles", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const int cycle = std::stoi(name);
    const bool finished_on_disk = std::filesystem::exists(entry.path() / "summary.json");
    // A kill can leave the team of the next cycle before its start is journaled, or the summary of the
    // journaled last cycle before its end is: anything beyond that, the journal has lost.
    const bool lost = cycle > last_started + 1 || (cycle == last_started + 1 && finished_on_disk) ||
                      (cycle < last_started && finished_on_disk && !ended.count(cycle));
    if (lost)
      throw InvalidInput(
          (run_dir / "journal.jsonl").string() + " ends before what the run directory holds: cycles/" + name +
          (finished_on_disk ? "/summary.json" : "") + " is not in the journal (last cycle started there: " +
          std::to_string(last_started) + "). The journal was cut or damaged; resuming would write over those " +
          "files, so nothing was changed. Restore journal.jsonl from a copy, or move cycles/ entries after " +
          std::to_string(last_started) + " aside to continue from what the journal holds.");
  }
}

OptimizeOptions options_from_json(const nlohmann::json& value) {
  OptimizeOptions options;
  options.task_dir = value.value("task_dir", "");
  options.provider = value.value("provider", "builtin");
  options.model = value.value("model", "");
  options.mode = team_mode_from_string(value.value("team_mode", "evolving"));
  options.budgets = Budgets::from_json(value.value("budgets", nlohmann::json::object()));
  options.runs_dir = value.value("runs_dir", "");
  options.knowledge_dir = value.value("knowledge_dir", "");
  options.seed = value.value("seed", std::uint64_t{1});
  // Runs recorded before the choice existed evaluated every workload.
  options.workloads = parse_workload_selection(value.value("workloads", "all")).value_or(WorkloadSelection::all);
  return options;
}

namespace {

std::optional<double> speedup_of(const RunHistory& history, const std::string& candidate_id) {
  for (const EvaluationRecord& record : history.evaluations)
    if (record.candidate_id == candidate_id) return record.speedup;
  return std::nullopt;
}

void replay_entry(RunState& state, const CycleStartEntry& entry, const std::set<std::string>& known_roles) {
  CycleRecord cycle;
  cycle.cycle = entry.cycle;
  cycle.team = team_spec_from_json(entry.team, known_roles);
  // A resumed cycle starts again under its own number: one record per cycle, as the live loop keeps it.
  if (!state.history.cycles.empty() && state.history.cycles.back().cycle == cycle.cycle)
    state.history.cycles.back() = cycle;
  else
    state.history.cycles.push_back(cycle);
  state.unfinished_team = cycle.team;
  state.unfinished_cycle = cycle.cycle;
}

void replay_entry(RunState& state, const CycleEndEntry& entry) {
  // The best after the cycle, as the live loop recorded it: the journal up to here holds its evaluation.
  const std::optional<double> best_after = speedup_of(state.history, entry.best_candidate);
  for (CycleRecord& cycle : state.history.cycles)
    if (cycle.cycle == entry.cycle) {
      cycle.finished = true;
      cycle.best_speedup_after = best_after;
      for (const auto& [role, usage] : entry.usage) cycle.usage[role] = usage;
    }
  state.last_finished_cycle = entry.cycle;
  state.elapsed_s = entry.elapsed_s;
  state.clear_streak = entry.clear_streak;
  state.unfinished_team.reset();
  state.unfinished_cycle = 0;
}

void replay_entry(RunState& state, const EvaluationEntry& entry) {
  bool replaced = false;
  for (EvaluationRecord& existing : state.history.evaluations)
    if (existing.candidate_id == entry.record.candidate_id) existing = entry.record, replaced = true;
  if (!replaced) state.history.evaluations.push_back(entry.record);
}

void replay_entry(RunState& state, const ProfileEntry& entry) {
  for (EvaluationRecord& existing : state.history.evaluations)
    if (existing.candidate_id == entry.candidate_id) existing.profiled = true, existing.profile_bound = entry.bound;
}

void replay_entry(RunState& state, const RulingEntry& entry) {
  for (EvaluationRecord& existing : state.history.evaluations)
    if (existing.candidate_id == entry.candidate_id) existing.set_ruling(entry.accepted, entry.ruling);
}

}  // namespace

RunState replay_run_state(const nlohmann::json& run_json, const JournalReplay& replay,
                          const std::set<std::string>& known_roles) {
  RunState state;
  state.options = options_from_json(run_json.value("options", nlohmann::json::object()));
  for (const nlohmann::json& record : replay.records) {
    const JournalLine line = read_journal_line(record);
    if (!line.entry) continue;
    const JournalEntry& entry = *line.entry;
    if (const auto* start = std::get_if<CycleStartEntry>(&entry))
      replay_entry(state, *start, known_roles);
    else if (const auto* end = std::get_if<CycleEndEntry>(&entry))
      replay_entry(state, *end);
    else if (const auto* evaluation = std::get_if<EvaluationEntry>(&entry))
      replay_entry(state, *evaluation);
    else if (std::holds_alternative<TrialEntry>(entry))
      ++state.history.trials;
    else if (const auto* device_time = std::get_if<DeviceTimeEntry>(&entry))
      state.history.trial_device_s += device_time->seconds;
    else if (const auto* failure = std::get_if<UnrecordedFailureEntry>(&entry))
      state.history.unrecorded_failures.push_back(failure->failure);
    else if (const auto* profile = std::get_if<ProfileEntry>(&entry))
      replay_entry(state, *profile);
    else if (const auto* ruling = std::get_if<RulingEntry>(&entry))
      replay_entry(state, *ruling);
  }
  if (replay.torn_tail) spdlog::warn("the journal's last line was torn by a crash and has been dropped");
  // Evaluations that never finished (killed mid-evaluation) are dropped: they will run again.
  std::erase_if(state.history.evaluations, [](const EvaluationRecord& r) { return r.state == RecordState::pending; });
  return state;
}

}  // namespace evoteam
