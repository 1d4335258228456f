#pragma once
// The journal's records as types: one struct per record type, with one JSON form each way. Every writer (the run
// loop, the lab, the meter's sink) appends through append_entry and every reader (resume, status, the run report,
// the meter's restore) reads through read_journal_line; no other file spells a record type. A record of a type this
// build does not know reads as no entry, so a newer journal still replays what it can.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/eval/eval_settings.hpp>
#include <evoteam/history/history.hpp>
#include <evoteam/history/ruling.hpp>
#include <evoteam/history/stop_reason.hpp>
#include <evoteam/llm/meter.hpp>
#include <evoteam/store/store.hpp>

namespace evoteam {

enum class RecordType {
  run_start,
  resume,
  cycle_start,
  turn,
  cycle_end,
  stop,
  evaluation,
  ruling,
  profile,
  device_time,
  trial,
  budget_tick,
  unrecorded_failure,
};
// "run_start", "resume", ... as the journal's "type" holds them.
std::string to_string(RecordType type);
std::optional<RecordType> parse_record_type(std::string_view text);
const std::vector<RecordType>& all_record_types();

// A run was created: the task, the options it runs under, and the earlier run it started from (optimize --from).
struct RunStartEntry {
  static constexpr RecordType k_type = RecordType::run_start;
  std::string task;
  nlohmann::json options = nlohmann::json::object();  // run.json's "options"
  std::string from;                                   // the earlier run's id; empty when none
};

// A run was reopened after the cycle it had finished last.
struct ResumeEntry {
  static constexpr RecordType k_type = RecordType::resume;
  int after_cycle = 0;
  int evaluations = 0;  // candidates evaluated so far
};

// A cycle's team is decided; nothing has run yet.
struct CycleStartEntry {
  static constexpr RecordType k_type = RecordType::cycle_start;
  int cycle = 0;
  nlohmann::json team = nlohmann::json::object();  // the TeamSpec's JSON form (team_spec_from_json reads it)
  std::string change;                              // "+debugger, pattern solo→pipeline", "initial team", ...
  nlohmann::json evidence = nlohmann::json::array();
};

// One member's turn in a cycle.
struct TurnEntry {
  static constexpr RecordType k_type = RecordType::turn;
  int cycle = 0;
  std::string role;
  std::string summary;
  RoleUsage usage;
  std::string agent;  // who did the work: "claude-code 2.1.327 / claude-sonnet-4-6"; empty for builtin and LLM members
};

// A cycle ended; it carries what a resume restores.
struct CycleEndEntry {
  static constexpr RecordType k_type = RecordType::cycle_end;
  int cycle = 0;
  std::map<std::string, RoleUsage> usage;  // by role
  double elapsed_s = 0;                    // the run's wall time of finished cycles, across resumes
  double gpu_seconds = 0;
  std::map<std::string, int> clear_streak;  // the rule policy's
  std::string best_candidate;               // empty when none passed yet
};

// The run ended. `reason` is a StopReason's text, or a failed run's error message.
struct StopEntry {
  static constexpr RecordType k_type = RecordType::stop;
  RunStatus status = RunStatus::finished;
  std::string reason;
};

// A candidate was recorded (again, when its state or ruling changed): the latest record of an id is its state.
struct EvaluationEntry {
  static constexpr RecordType k_type = RecordType::evaluation;
  EvaluationRecord record;
};

// A reviewer's (or the lab's) ruling on a recorded candidate.
struct RulingEntry {
  static constexpr RecordType k_type = RecordType::ruling;
  std::string candidate_id;
  bool accepted = true;
  std::string role;
  Ruling ruling;  // journaled as "kind" and "reason"; records without a kind get it from the reason's words
};

// A recorded candidate was profiled.
struct ProfileEntry {
  static constexpr RecordType k_type = RecordType::profile;
  std::string candidate_id;
  std::string bound;
  std::string summary;
};

// Device time held by a trial or a profile (candidates carry their own, in their evaluation record).
struct DeviceTimeEntry {
  static constexpr RecordType k_type = RecordType::device_time;
  double seconds = 0;
  std::string device;  // what held it ("host", "cuda:0"); empty when the evaluator did not say (profiles, old runs)
};

// An agent's tool trial took one evaluation from the budget (journaled before it runs).
struct TrialEntry {
  static constexpr RecordType k_type = RecordType::trial;
  std::optional<Stage> stage;  // the stage it ran through; nullopt when the record names none this build knows
};

// The meter's running totals after a charge; a resumed run restores the last one.
struct BudgetTickEntry {
  static constexpr RecordType k_type = RecordType::budget_tick;
  MeterTotals totals;
};

// A failure of a cycle that left no candidate of its own (a resubmitted failure, a failed trial).
struct UnrecordedFailureEntry {
  static constexpr RecordType k_type = RecordType::unrecorded_failure;
  UnrecordedFailure failure;
};

using JournalEntry =
    std::variant<RunStartEntry, ResumeEntry, CycleStartEntry, TurnEntry, CycleEndEntry, StopEntry, EvaluationEntry,
                 RulingEntry, ProfileEntry, DeviceTimeEntry, TrialEntry, BudgetTickEntry, UnrecordedFailureEntry>;

RecordType type_of(const JournalEntry& entry);
// The record as the journal holds it, "type" first among its fields (the journal adds "seq" and "t").
nlohmann::json to_json(const JournalEntry& entry);
// Appends the entry to the journal; returns its seq.
std::uint64_t append_entry(Journal& journal, const JournalEntry& entry);

// One replayed line of the journal.
struct JournalLine {
  std::string at;    // "t": when it was appended (UTC ISO-8601); empty when missing
  std::string type;  // its "type" as written (for people: status shows the last one); empty when missing
  std::optional<JournalEntry> entry;  // nullopt for a record whose type this build does not know
};
// Reads one record. A record of a known type that is malformed (a verdict that is not one, a field of the wrong
// type) throws InvalidInput naming the record type and field; or, for the views that show what they can, reads as
// no entry with the reason in `*problem` when `problem` is given.
JournalLine read_journal_line(const nlohmann::json& record, std::string* problem = nullptr);

// The last budget_tick's totals among the records, if any; throws InvalidInput when that record is malformed.
std::optional<MeterTotals> last_budget_tick(const std::vector<nlohmann::json>& records);

}  // namespace evoteam
