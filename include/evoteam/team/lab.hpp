#pragma once
// The lab: the one place where team members get candidates evaluated. It allocates candidate ids, stores each
// candidate's sources, params and verdict under candidates/<cid>/, journals an "evaluation" record, keeps the
// run history, and never evaluates the same candidate twice (an identical one returns the earlier record, so a
// resumed cycle does not repeat work). Safe to call from parallel team members.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/core/config.hpp>
#include <evoteam/eval/candidate_evaluator.hpp>
#include <evoteam/eval/evaluator.hpp>
#include <evoteam/history/history.hpp>
#include <evoteam/task/task.hpp>
#include <evoteam/team/knowledge.hpp>

namespace evoteam {

class ProcessRunner;
class RunDir;

struct LabRequest {
  std::string parent_id;
  std::string author_role;
  std::string lineage = "best";
  std::string hypothesis;
  ParamValues params;
  std::filesystem::path sources_dir;  // the editable files of the candidate
};

// The run's first candidate: the task's starting kernel at its default params unless the run was started from
// an earlier run's best (`optimize --from`).
struct StartingPoint {
  std::filesystem::path sources_dir;
  ParamValues params;
  std::string hypothesis;  // why this is the start, as the record says it
};

struct LabOutcome {
  EvaluationRecord record;
  std::string summary;  // the evaluator's summary for agents
  bool reused = false;  // an identical candidate had been evaluated before: nothing was spent
};

class Lab {
 public:
  // `recorded`: the run's evaluations, trials and their device time so far (replayed from the journal on
  // resume; its cycles are not the lab's). The lab owns them from here on and adds to them; others read them
  // through snapshot().
  Lab(RunDir& run, CandidateEvaluator& evaluator, KnowledgeBase& knowledge, const RunHistory& recorded = {});

  // Evaluates (or reuses) a candidate and records it. When `screen` is on and the request matches a recorded
  // constraint ("param=value fails"), the attempt is blocked before it costs an evaluation.
  enum class Screening { off, against_knowledge };
  LabOutcome evaluate(const LabRequest& request, int cycle, Screening screening);
  // Profiles a recorded candidate and marks it profiled (journaled as a "profile" record). It spends one
  // evaluation of the budget like a trial; nothing once the budget is spent.
  std::optional<CandidateEvaluator::Profile> profile(const std::string& candidate_id);
  // Re-runs correctness and timing with fresh seeds; a failure marks the candidate rejected.
  LabOutcome reverify(const std::string& candidate_id, int cycle, const std::string& role);
  // A reviewer's ruling on a candidate (journaled; a rejected candidate can no longer be the best).
  // The lab makes one ruling itself, as it records each evaluation: once the run's best meets a once-adopted
  // static constraint, a later candidate that does not is rejected ("slid back from <name>: <message>"), for every
  // team alike. It is judged against the best of the recorded history, so a resumed run keeps holding to it, and
  // no reviewer's acceptance lifts it: rule() then records nothing and returns false.
  bool rule(const std::string& candidate_id, bool accepted, const std::string& role, const Ruling& ruling);

  // Runs the evaluator on work in progress (an agent's compile/test/benchmark/profile tool) without recording a
  // candidate. Each trial counts against the evaluation limit and is journaled ("trial"); nothing once the limit
  // is reached. A trial that fails is kept as a failure of `role`'s `cycle` on `lineage`
  // (RunHistory::unrecorded_failures).
  std::optional<CandidateEvaluator::Result> trial(const std::filesystem::path& sources_dir, const ParamValues& params,
                                                  Stage through, int cycle, const std::string& role,
                                                  const std::string& lineage = "best");
  std::optional<CandidateEvaluator::Profile> trial_profile(const std::filesystem::path& sources_dir,
                                                           const ParamValues& params);
  const Task* task() const { return m_evaluator.task(); }
  int parallel_width() const { return m_evaluator.parallel_width(); }

  // The run's hard budgets as the lab enforces them before every use of the evaluator, candidates and trials
  // alike: no evaluation beyond `evaluations` in the run (trials included), none once the device time reaches
  // `device_s`, none once `past_deadline` names a spent budget (the run's wall time). 0 or empty means no limit.
  // A request past one is answered without evaluating (outcome.reused, state over_budget), so a budget is
  // overshot by at most the evaluations already under way.
  struct Budget {
    int evaluations = 0;
    double device_s = 0;
    std::function<std::optional<std::string>()> past_deadline;
  };
  void set_budget(Budget budget);
  // Which budget is spent, as a sentence, or nullopt.
  std::optional<std::string> budget_spent() const;

  RunHistory snapshot() const;
  std::optional<EvaluationRecord> best() const;
  std::filesystem::path sources_of(const std::string& candidate_id) const;
  // The build log the evaluator left for a recorded candidate (it may not exist: a build that logged nothing).
  std::filesystem::path build_log_of(const std::string& candidate_id) const;
  std::vector<ParamSpec> param_space() const { return m_evaluator.param_space(); }
  ParamValues default_params() const;
  // An agent's param changes ("TILE_M=64, UNROLL=4") applied to `params`, within the declared values and the
  // param constraints; returns why not, leaving `params` unchanged.
  std::optional<std::string> apply_param_text(const std::string& text, ParamValues& params) const;
  // Counts the role's work for the cycle's usage record.
  RoleUsage usage_of(int cycle, const std::string& role) const;
  void add_usage(int cycle, const std::string& role, const RoleUsage& usage);
  // Records the starting point (c0001) if the history has no candidate yet.
  LabOutcome ensure_start(int cycle);
  // Replaces the task's starting kernel as the first candidate (before ensure_start records one).
  void set_starting_point(StartingPoint start) { m_start = std::move(start); }

 private:
  LabOutcome evaluate_within(const LabRequest& request, int cycle, Screening screening, bool budgeted);
  // evaluate_within's steps, in order. The *_locked ones need m_mutex held.
  EvaluationRecord record_for(const LabRequest& request, int cycle) const;
  // The earlier record of an identical candidate, lifting its several-changes rejection when `requested` reaches it
  // by one change from its parent; an identical failure is kept as a failure of the requesting cycle.
  LabOutcome reuse_locked(const EvaluationRecord& earlier, const EvaluationRecord& requested);
  void count_changes_locked(EvaluationRecord& record, const std::filesystem::path& sources_dir) const;
  // Records the candidate as blocked when a recorded constraint matches its params.
  std::optional<LabOutcome> block_locked(EvaluationRecord& record);
  // candidates/<id>/: its sources, params.json and meta.json.
  std::filesystem::path store_candidate(const std::filesystem::path& sources_dir, const EvaluationRecord& record) const;
  // Runs the evaluator and completes the record, eval.json and build.log; returns the summary for agents.
  std::string measure(const std::filesystem::path& dir, EvaluationRecord& record);
  // A new failure signature goes into the knowledge base; a repeat is marked on the record.
  void note_failure(EvaluationRecord& record);
  // The record replaces its pending one, with the lab's slid-back ruling when it applies, and is journaled.
  void commit_evaluation(EvaluationRecord& record);
  std::string next_candidate_id();
  std::string sources_hash(const std::filesystem::path& sources_dir) const;
  std::optional<std::string> blocking_constraint(const ParamValues& params) const;
  // Why `record` slid back from a once-adopted constraint the run's best meets, or nullopt. Needs m_mutex held.
  std::optional<std::string> slid_back(const EvaluationRecord& record) const;
  // Takes one trial from the budget and journals it; false when the budget is spent.
  bool spend_trial(Stage stage);
  std::optional<std::string> budget_spent_locked() const;
  // Ledgers the device time of a trial or profile ("device_time" record), with the device that held it if known.
  void add_trial_device_time(double seconds, const std::string& device = "");
  // Keeps a failure that left no candidate record (a resubmitted failure, a failed trial) and journals it.
  void add_unrecorded_failure_locked(const UnrecordedFailure& failure);

  RunDir& m_run;
  CandidateEvaluator& m_evaluator;
  KnowledgeBase& m_knowledge;
  RunHistory m_history;  // evaluations only: the cycles are the supervisor's
  mutable std::mutex m_mutex;
  std::map<std::pair<int, std::string>, RoleUsage> m_usage;
  Budget m_budget;
  std::size_t m_next_number = 1;  // of the next candidate id (see the constructor)
  std::optional<StartingPoint> m_start;
};

// Number of params whose values differ.
int count_param_changes(const ParamValues& before, const ParamValues& after);

}  // namespace evoteam
