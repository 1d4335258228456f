#pragma once
// What the team and the run's record read of one evaluation, taken once from the evaluator's EvalResult
// (measurement_of, evaluator.hpp): the team's evaluator seam returns it beside the write-up, the run's record holds it
// (EvaluationRecord), and eval.json is the whole EvalResult it was taken from.
#include <optional>
#include <string>
#include <vector>

#include <evoteam/eval/verdict.hpp>

namespace evoteam {

struct Measurement {
  Verdict verdict = Verdict::infra_error;
  std::optional<double> speedup;   // geometric mean over workloads, when timed
  std::optional<double> roofline;  // fraction of the machine's roofline
  // The verdict and the start of its reason, stable across candidates that fail the same way; empty for PASS.
  std::string failure_signature;
  // Device time the evaluation held: the run stages' time (reference, correctness, timing, profile, sanitizer) on the
  // GPU, or on the CPU for the host target; the build and static checks use no device, and a result served from the
  // cache ran nothing (0). What --budget-gpu-seconds counts.
  double device_s = 0;
  // The task's once-adopted static constraints the build meets; absent when it did not get through the static stage.
  std::optional<std::vector<std::string>> adopted_constraints;
};

}  // namespace evoteam
