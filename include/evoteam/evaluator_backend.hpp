#pragma once
// The agent's evaluation tools on the real evaluator: compile, run_tests, benchmark and profile evaluate the
// workspace's kernel files (others are ignored; missing ones come from the starting kernel) and answer with
// the verdict and figures as text for the model.
#include <functional>
#include <optional>
#include <string>

#include <evoteam/evaluator.hpp>
#include <evoteam/tools.hpp>

namespace evoteam {

// The evaluator stage a tool runs through: compile -> build, test -> correctness, benchmark -> timing,
// profile -> profile (each with the stages before it).
Stage evaluator_stage(EvalStage stage);

// The text the model sees for one evaluation: verdict and reason, the stages, the speedup and per-workload
// figures when timed, the build log when the build failed, the evidence when a check failed, the profile.
std::string describe_for_agent(const EvalResult& result);

class EvaluatorBackend : public EvaluationBackend {
 public:
  // Called after every evaluation, e.g. to record the candidate in the experiment directory.
  using Observer = std::function<void(EvalStage stage, const EvalResult& result)>;

  // `evaluator` and `task` must outlive the backend. `params` are the candidate's param values (the current
  // best's, typically); missing ones take their defaults. `result_cache` is passed to every evaluation.
  EvaluatorBackend(Evaluator& evaluator, const Task& task, ParamAssignment params = {}, Observer observer = {},
                   CachePolicy result_cache = CachePolicy::use);

  ToolResult evaluate(const Workspace& workspace, EvalStage upto) override;
  // The last evaluation, if any.
  const std::optional<EvalResult>& last_result() const { return m_last; }

 private:
  Evaluator& m_evaluator;
  const Task& m_task;
  ParamAssignment m_params;
  Observer m_observer;
  CachePolicy m_result_cache;
  std::optional<EvalResult> m_last;
};

}  // namespace evoteam
