#pragma once
// From harness records to verdicts: how a process ended (fault, hang, crash), what the correctness trials
// found (in the oracle order, with the shape- and distribution-specific classes), and the timing statistics.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/eval/evaluator.hpp>
#include <evoteam/eval/verdict.hpp>

#include "eval/battery.hpp"
#include "eval/harness_run.hpp"

namespace evoteam::eval {

struct Judgement {
  Verdict verdict = Verdict::pass;
  std::string reason;
  nlohmann::json evidence = nlohmann::json::object();
};

// The evaluator's own failure: never charged to the candidate.
inline Judgement infra_error(std::string reason, nlohmann::json evidence = nlohmann::json::object()) {
  return Judgement{Verdict::infra_error, std::move(reason), std::move(evidence)};
}

// What evidence says about a trial: workload, axes, hidden, public seed, distribution. Never the salted seed.
nlohmann::json trial_evidence(const Battery& battery, int trial_id);

// The verdict of a harness process that did not run to its "done" record, or nullopt when it did.
// `trusted_stage`: every failure is the evaluator's (reference computation), so INFRA_ERROR.
std::optional<Judgement> judge_process(const HarnessRun& run, const Battery& battery, bool trusted_stage);

// Correctness from a finished run: OOB_WRITE, INPUT_MUTATED, then output failures (SHAPE_SPECIALIZED when only
// hidden shapes fail, DISTRIBUTION_SPECIFIC when only one distribution does, else the first failure's class),
// then NONDETERMINISTIC.
Judgement judge_correctness(const HarnessRun& run, const Battery& battery);

struct Peaks {
  double gflops = 0;
  double gbytes_per_s = 0;
};

struct TimingOutcome {
  std::optional<Judgement>
      failure;  // RECHECK_FAIL, INPUT_MUTATED, TIMING_SIDE_WORK, TIMING_INCONSISTENT; INFRA_ERROR for the baseline
  std::vector<WorkloadResult> workloads;
  double timed_s = 0;
  bool capped = false;  // some workload hit max_time_s (NOISY)
};

// `fresh_ratio`: TIMING_INCONSISTENT threshold on (best fresh-probe time / median), relative to the baseline's.
TimingOutcome analyze_timing(const HarnessRun& run, const Battery& battery, int bootstrap_resamples, double fresh_ratio,
                             const std::optional<Peaks>& peaks);
// Roofline fraction of one workload's candidate median under `peaks`.
std::optional<double> roofline_fraction(const BatteryWorkload& workload, double median_s,
                                        const std::optional<Peaks>& peaks);

}  // namespace evoteam::eval
