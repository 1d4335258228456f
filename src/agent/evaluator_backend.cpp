// The evaluation tools on the real evaluator, with the result written up for the model.
#include <evoteam/evaluator_backend.hpp>

#include <cstdio>

namespace evoteam {

namespace {

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string duration(double seconds) {
  if (seconds < 1e-3) return fixed(seconds * 1e6, 2) + " us";
  if (seconds < 1.0) return fixed(seconds * 1e3, 3) + " ms";
  return fixed(seconds, 3) + " s";
}

}  // namespace

Stage evaluator_stage(EvalStage stage) {
  switch (stage) {
    case EvalStage::compile: return Stage::build;
    case EvalStage::test: return Stage::correctness;
    case EvalStage::benchmark: return Stage::timing;
    case EvalStage::profile: return Stage::profile;
  }
  return Stage::build;
}

std::string describe_for_agent(const EvalResult& result) {
  std::string text = "verdict: " + to_string(result.verdict);
  if (!result.reason.empty()) text += " (" + result.reason + ")";
  text += "\nstages:";
  for (const StageRecord& stage : result.stages) {
    text += " " + stage.name + " " + to_string(stage.status);
    if (!stage.detail.empty() && stage.status != StageStatus::passed) text += " [" + stage.detail + "]";
    text += ";";
  }
  text += "\n";
  if (result.speedup) {
    text += "speedup (geometric mean over workloads): " + fixed(*result.speedup, 3) + "x";
    if (result.speedup_low && result.speedup_high)
      text += " [95% " + fixed(*result.speedup_low, 3) + ", " + fixed(*result.speedup_high, 3) + "]";
    if (!result.baseline.empty()) text += " vs " + result.baseline;
    if (result.roofline_fraction) text += "; roofline " + fixed(*result.roofline_fraction * 100, 1) + "%";
    text += "\n";
  }
  for (const WorkloadResult& workload : result.workloads) {
    text += "workload " + workload.name + ": " + duration(workload.candidate.median_s) + " (baseline " +
            duration(workload.baseline.median_s) + "), speedup " + fixed(workload.speedup, 3) + "x, " +
            fixed(workload.gflops, 2) + " GFLOP/s, " + fixed(workload.gbytes_per_s, 2) + " GB/s";
    if (workload.roofline_fraction) text += ", roofline " + fixed(*workload.roofline_fraction * 100, 1) + "%";
    text += "\n";
  }
  for (const std::string& warning : result.static_warnings) text += "warning: " + warning + "\n";
  const bool build_failed = result.verdict == Verdict::compile_error || result.verdict == Verdict::compile_timeout ||
                            result.verdict == Verdict::static_reject;
  if (build_failed && !result.build_log.empty()) text += "build log:\n" + result.build_log + "\n";
  if (!result.passed() && !result.evidence.empty()) text += "evidence: " + result.evidence.dump() + "\n";
  if (!result.profile.is_null()) text += "profile: " + result.profile.dump() + "\n";
  return text;
}

EvaluatorBackend::EvaluatorBackend(Evaluator& evaluator, const Task& task, ParamAssignment params, Observer observer,
                                   CachePolicy result_cache)
    : m_evaluator(evaluator),
      m_task(task),
      m_params(std::move(params)),
      m_observer(std::move(observer)),
      m_result_cache(result_cache) {}

ToolResult EvaluatorBackend::evaluate(const Workspace& workspace, EvalStage upto) {
  Candidate candidate{workspace.root(), m_params};
  EvalOptions options = EvalOptions::through(evaluator_stage(upto));
  options.result_cache = m_result_cache;
  EvalResult result = m_evaluator.evaluate(m_task, candidate, options);
  if (m_observer) m_observer(upto, result);
  ToolResult answer{describe_for_agent(result), !result.passed()};
  m_last = std::move(result);
  return answer;
}

}  // namespace evoteam
