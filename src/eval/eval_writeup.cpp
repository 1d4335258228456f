// The one write-up of an evaluation for agents (eval_writeup.hpp).
#include <evoteam/core/text.hpp>
#include <evoteam/eval/eval_writeup.hpp>

namespace evoteam {

namespace {

// A build log can run to megabytes; the first errors matter most, the last lines say how it ended.
std::string cut_log(const std::string& log) {
  constexpr std::size_t k_head = 6000, k_tail = 2000;
  if (log.size() <= k_head + k_tail) return log;
  return log.substr(0, k_head) + "\n[... " + std::to_string(log.size() - k_head - k_tail) + " characters cut ...]\n" +
         log.substr(log.size() - k_tail);
}

}  // namespace

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
    text += "workload " + workload.name + ": " + human_duration(workload.candidate.median_s) + " (baseline " +
            human_duration(workload.baseline.median_s) + "), speedup " + fixed(workload.speedup, 3) + "x, " +
            fixed(workload.gflops, 2) + " GFLOP/s, " + fixed(workload.gbytes_per_s, 2) + " GB/s";
    if (workload.roofline_fraction) text += ", roofline " + fixed(*workload.roofline_fraction * 100, 1) + "%";
    if (workload.vendor && result.vendor)
      text += ", " + fixed(workload.vendor->fraction, 3) + "x of " + result.vendor->name + " (" +
              human_duration(workload.vendor->median_s) + ")";
    text += "\n";
  }
  // The bar the field measures against: agents see how far the candidate is from it.
  if (result.vendor && result.vendor->fraction)
    text += "vs " + result.vendor->name + ": " + fixed(*result.vendor->fraction, 3) +
            "x of its speed (geometric mean; above 1 is faster)\n";
  for (const std::string& warning : result.static_warnings) text += "warning: " + warning + "\n";
  // Once the run's best meets one of these, a candidate without it is rejected: agents should know where they stand.
  if (result.adopted_constraints && !result.adopted_constraints->empty())
    text += "once-adopted constraints met: " + join(*result.adopted_constraints, ", ") + "\n";
  const bool build_failed = verdict_class(result.verdict) == VerdictClass::build_failure;
  if (build_failed && !result.build_log.empty()) text += "build log:\n" + cut_log(result.build_log) + "\n";
  if (!result.passed() && !result.evidence.empty()) text += "evidence: " + result.evidence.dump() + "\n";
  if (!result.profile.is_null()) text += "profile: " + result.profile.dump() + "\n";
  return text;
}

}  // namespace evoteam
