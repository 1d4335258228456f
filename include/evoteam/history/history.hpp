#pragma once
// The run's record: every evaluation and every cycle of a run, rebuilt from the journal on resume. The lab
// appends evaluations, the supervisor appends cycles and reads snapshots; both sit above this module.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/eval/eval_settings.hpp>
#include <evoteam/eval/measurement.hpp>
#include <evoteam/eval/verdict.hpp>
#include <evoteam/history/ruling.hpp>
#include <evoteam/history/team_spec.hpp>

namespace evoteam {

using ParamValues = std::map<std::string, std::string>;

// Where a record stands. Only an evaluated record carries the evaluator's verdict; the others never reached
// the evaluator (the journal spells them as verdicts: "PENDING", "BLOCKED", "BUDGET").
enum class RecordState {
  evaluated,
  pending,      // its id is reserved and the evaluation is under way; never journaled
  blocked,      // screened out by a recorded constraint before evaluation: nothing was spent
  over_budget,  // the run's evaluation budget was spent: not evaluated, never journaled
};

// One candidate, as journaled ("evaluation" records). It holds the evaluator's Measurement as it came (meaningful
// only when the state is evaluated; a blocked record's failure signature names the constraint that blocked it).
struct EvaluationRecord : Measurement {
  std::string candidate_id;  // c0001, c0002, ...
  std::string parent_id;     // empty for the starting kernel
  std::string author_role;   // optimizer, debugger, ... or "start"
  std::string lineage = "best";
  int cycle = 0;
  std::string hypothesis;
  ParamValues params;
  std::string sources_hash;        // hash of the editable sources; with params it identifies the candidate
  int changes = 0;                 // changed params plus edited code regions relative to the parent (source_diff)
  bool structural_change = false;  // sources differ from the parent's (an architecture change)
  RecordState state = RecordState::pending;
  bool profiled = false;
  std::string profile_bound;                    // memory | compute | latency, when profiled
  bool repeated_recorded_failure = false;       // matched a failed attempt already in the knowledge base
  bool rejected = false;                        // a reviewer (Disciplinarian), a re-verification or the lab rejected it
  std::string ruling;                           // the reason, for people
  RulingKind ruling_kind = RulingKind::review;  // what the ruling decided on; meaningful when `ruling` is not empty
  double eval_seconds = 0;
  // What measured it: the evaluator's device ("host", "cuda:0"), with "@<host>/<worker>" when a Slurm worker did;
  // empty when nothing ran (blocked, reused) or in records written before it was kept.
  std::string device;

  bool evaluated() const { return state == RecordState::evaluated; }
  // Screened out by a recorded constraint: no evaluation was spent on it.
  bool blocked() const { return state == RecordState::blocked; }
  // Evaluated with this verdict.
  bool has(Verdict wanted) const { return evaluated() && verdict == wanted; }
  // Outputs verified, timing usable and a speedup measured: a result the search may build on.
  bool passed() const { return evaluated() && counts_as_pass(verdict) && speedup.has_value(); }
  // Evaluated without passing, and not through the evaluator's own failure: the candidate's to answer for.
  bool failed() const { return evaluated() && !passed() && !is_infra(verdict); }
  // Carries a ruling of this kind.
  bool ruled(RulingKind kind) const { return !ruling.empty() && ruling_kind == kind; }
  // Takes the evaluator's measurement as it came, made on `measured_on`: the record is evaluated. A result that
  // passes (NOISY too) carries no failure signature.
  void take_measurement(const Measurement& measured, std::string measured_on);
  void set_ruling(bool accepted, const Ruling& given);
  // "PASS", "COMPILE_ERROR", ... for evaluated records; "PENDING", "BLOCKED" or "BUDGET" for the others.
  std::string verdict_text() const;

  nlohmann::json to_json() const;
  // Throws InvalidInput naming the field when the verdict is not one of verdict_text()'s spellings.
  static EvaluationRecord from_json(const nlohmann::json& value);
  std::string key() const;  // sources_hash + params: identical candidates share a key
};

// How much one role spent in one cycle.
struct RoleUsage {
  int evaluations = 0;
  long long tokens = 0;
  double cost_usd = 0;
  double seconds = 0;
  nlohmann::json to_json() const;
  static RoleUsage from_json(const nlohmann::json& value);
};

// A failure of a cycle that left no candidate record of its own: a submission identical to a failed candidate
// (answered with the earlier record, not re-evaluated) or an agent's trial of work in progress (compile, run_tests,
// benchmark) that failed. The supervisor's signals count them with the cycle's candidates: an agent resubmitting
// the same broken code, or failing its own compiles, is stuck as surely as one whose candidates fail.
struct UnrecordedFailure {
  int cycle = 0;
  std::string author_role;
  std::string candidate_id;    // the earlier candidate a resubmission was identical to; empty for a trial
  std::optional<Stage> stage;  // the stage a trial ran through; nullopt for a resubmission
  Verdict verdict = Verdict::compile_error;
  std::string failure_signature;
  std::string lineage =
      "best";  // the author's: a Debugger's own trials on the failing code are its work, not a symptom

  // "c0003 resubmitted by optimizer COMPILE_ERROR", "optimizer's build trial COMPILE_ERROR": for the evidence.
  std::string describe() const;
};

struct CycleRecord {
  int cycle = 0;
  TeamSpec team;
  std::map<std::string, RoleUsage> usage;  // by role
  std::optional<double> best_speedup_after;
  bool finished = false;
};

class RunHistory {
 public:
  std::vector<EvaluationRecord> evaluations;
  // The agents' tool trials (compile, run_tests, benchmark, profile on work in progress): not candidates, but each
  // spends the evaluator as one does, so the evaluation budget counts them.
  int trials = 0;
  double trial_device_s = 0;  // the device time of those trials and of profiles ("device_time" records)
  std::vector<UnrecordedFailure> unrecorded_failures;  // resubmitted failures and failed trials, by cycle
  std::vector<CycleRecord> cycles;

  // The best passing candidate (highest speedup), if any.
  std::optional<EvaluationRecord> best() const;
  // Best speedup among candidates evaluated up to and including `cycle`.
  std::optional<double> best_speedup_through(int cycle) const;
  const EvaluationRecord* find(const std::string& candidate_id) const;
  const EvaluationRecord* find_key(const std::string& key) const;
  std::vector<const EvaluationRecord*> in_cycle(int cycle) const;
  std::vector<const UnrecordedFailure*> unrecorded_in_cycle(int cycle) const;
  int evaluation_count() const;                                          // candidates evaluated (blocked ones excluded)
  int evaluations_spent() const { return evaluation_count() + trials; }  // what --budget-evaluations counts
  double device_seconds() const;  // candidates' and trials' device time: what --budget-gpu-seconds counts
};

}  // namespace evoteam
