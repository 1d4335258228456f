#include "eval/classify.hpp"

#include <algorithm>
#include <set>

#include <evoteam/core/process.hpp>
#include <evoteam/core/text.hpp>

#include "eval/statistics.hpp"

namespace evoteam::eval {
namespace {

Judgement make(Verdict verdict, std::string reason, nlohmann::json evidence = nlohmann::json::object()) {
  return Judgement{verdict, std::move(reason), std::move(evidence)};
}

// Copies the harness's measurements of a failing output into evidence under stable names.
void add_output_evidence(nlohmann::json& evidence, const nlohmann::json& record) {
  for (const char* key : {"tensor", "max_abs", "max_rel", "normwise", "bad_count", "candidate_value", "reference_value",
                          "side", "guard_offset"})
    if (record.contains(key)) evidence[key] = record[key];
  if (record.contains("first_bad")) evidence["first_bad_index"] = record["first_bad"];
}

Verdict output_verdict(const std::string& status) {
  if (status == "unwritten_output") return Verdict::unwritten_output;
  if (status == "nonfinite_mismatch") return Verdict::nonfinite_mismatch;
  return Verdict::numeric_mismatch;
}

int severity(const std::string& status) {
  if (status == "unwritten_output") return 0;
  if (status == "nonfinite_mismatch") return 1;
  return 2;
}

}  // namespace

nlohmann::json trial_evidence(const Battery& battery, int trial_id) {
  if (trial_id < 0 || trial_id >= static_cast<int>(battery.trials.size())) return nlohmann::json::object();
  const Trial& trial = battery.trial(trial_id);
  const BatteryWorkload& workload = battery.workloads[static_cast<std::size_t>(trial.workload)];
  nlohmann::json axes = nlohmann::json::object();
  for (const auto& [axis, value] : workload.axes) axes[axis] = value;
  return {{"trial", trial.id},         {"workload", workload.name}, {"axes", axes},
          {"hidden", workload.hidden}, {"seed", trial.public_seed}, {"distribution", trial.distribution}};
}

std::optional<Judgement> judge_process(const HarnessRun& run, const Battery& battery, bool trusted_stage) {
  const ProcessResult& process = run.process;
  if (!process.spawned) return make(Verdict::infra_error, "cannot start the harness: " + process.spawn_error);
  if (process.interrupted) return make(Verdict::infra_error, "interrupted");
  auto blame = [&](Verdict verdict, const std::string& reason, nlohmann::json evidence) {
    if (trusted_stage) return make(Verdict::infra_error, "reference computation: " + reason, std::move(evidence));
    return make(verdict, reason, std::move(evidence));
  };
  if (const nlohmann::json* fault = run.last("fault")) {
    const std::string phase = fault->value("phase", "harness");
    const std::string signal = fault->value("signal", "signal");
    nlohmann::json evidence = trial_evidence(battery, fault->value("trial", -1));
    for (const char* key : {"signal", "code", "addr", "write", "region", "tensor", "output", "phase"})
      if (fault->contains(key)) evidence[key] = (*fault)[key];
    if (phase != "candidate") return make(Verdict::infra_error, "the " + phase + " crashed (" + signal + ")", evidence);
    const std::string region = fault->value("region", "unknown");
    // Inputs are read-only during the calls: a write into one faults where it happens.
    if (fault->value("write", false) && fault->contains("tensor") && region == "payload" &&
        !fault->value("output", true))
      return blame(Verdict::input_mutated,
                   "wrote into input " + fault->value("tensor", std::string("?")) + " during the call (" + signal + ")",
                   evidence);
    if (fault->value("write", false) && fault->contains("tensor") && region != "payload")
      return blame(
          Verdict::oob_write,
          "write outside " + fault->value("tensor", std::string("a buffer")) + " (" + region + ", " + signal + ")",
          evidence);
    return blame(Verdict::runtime_fault, signal, evidence);
  }
  if (const nlohmann::json* hang = run.last("hang")) {
    const std::string phase = hang->value("phase", "harness");
    nlohmann::json evidence = trial_evidence(battery, hang->value("trial", -1));
    evidence["deadline_ms"] = hang->value("deadline_ms", 0);
    if (phase != "candidate") return make(Verdict::infra_error, "the " + phase + " ran past its deadline", evidence);
    return blame(Verdict::hang_timeout,
                 "a call ran past its deadline of " + fixed(hang->value("deadline_ms", 0) / 1000.0, 3) + " s",
                 evidence);
  }
  if (const nlohmann::json* error = run.last("cuda_error")) {
    // The CUDA harness's checked calls: a sticky fault or a bad launch inside the candidate's phase is the
    // candidate's; any other failing call is the harness's or the machine's.
    nlohmann::json evidence = trial_evidence(battery, error->value("trial", -1));
    for (const char* key : {"error", "code", "sticky", "phase", "call", "at"})
      if (error->contains(key)) evidence[key] = (*error)[key];
    const std::string kind = error->value("class", "INFRA_ERROR");
    const std::string name = error->value("error", std::string("cuda error"));
    const std::string phase = error->value("phase", "harness");
    if (phase != "candidate" && phase != "reference" && phase != "baseline")
      return make(Verdict::infra_error, "CUDA call failed in the harness (" + phase + "): " + name, evidence);
    if (phase == "baseline") return make(Verdict::infra_error, "the baseline failed: " + name, evidence);
    if (error->value("who", "harness") != "candidate" || parse_verdict(kind) == Verdict::infra_error)
      return make(Verdict::infra_error,
                  "CUDA call failed in the harness: " + name + " (" + error->value("call", std::string("?")) + ")",
                  evidence);
    return blame(Verdict::runtime_fault, kind == "LAUNCH_ERROR" ? "bad launch: " + name : name, evidence);
  }
  if (const nlohmann::json* missing = run.last("no_device"))
    return make(Verdict::infra_error, "no usable CUDA device: " + missing->value("error", std::string("?")),
                nlohmann::json::object());
  if (process.timed_out) {
    const nlohmann::json* begin = run.last("begin");
    nlohmann::json evidence = begin ? trial_evidence(battery, begin->value("trial", -1)) : nlohmann::json::object();
    evidence["process"] = process.describe();
    return blame(Verdict::hang_timeout, "the phase " + process.describe(), evidence);
  }
  if (const nlohmann::json* load = run.last("load_error")) {
    const std::string message = load->value("message", "");
    if (!trusted_stage && message.find("candidate") != std::string::npos)
      return make(Verdict::compile_error, "the candidate cannot be loaded: " + message, {{"message", message}});
    return make(Verdict::infra_error, "harness: " + message, {{"message", message}});
  }
  if (const nlohmann::json* error = run.last("error"))
    return make(Verdict::infra_error, "harness: " + error->value("message", ""),
                {{"stderr", process.err.text.substr(0, 2000)}});
  if (run.finished() && process.ok()) return std::nullopt;
  nlohmann::json evidence = {{"process", process.describe()}, {"stderr", process.err.text.substr(0, 2000)}};
  if (const nlohmann::json* begin = run.last("begin"))
    evidence.update(trial_evidence(battery, begin->value("trial", -1)));
  if (process.signal != 0)
    return blame(Verdict::worker_crash,
                 "the harness was " + process.describe() + (process.signal == 9 ? " (out of memory?)" : "") +
                     " without a record",
                 evidence);
  return blame(Verdict::worker_crash, "the harness ended (" + process.describe() + ") without finishing its record",
               evidence);
}

Judgement judge_correctness(const HarnessRun& run, const Battery& battery) {
  std::vector<const nlohmann::json*> records = run.all("trial");
  std::set<int> seen;
  for (const nlohmann::json* record : records) seen.insert(record->value("trial", -1));
  for (const Trial& trial : battery.trials)
    if (trial.correctness && !seen.count(trial.id))
      return make(Verdict::infra_error, "the harness finished without a record for trial " + std::to_string(trial.id));
  auto evidence_for = [&](const nlohmann::json& record) {
    nlohmann::json evidence = trial_evidence(battery, record.value("trial", -1));
    add_output_evidence(evidence, record);
    return evidence;
  };
  for (const char* status : {"oob_write", "input_mutated"})
    for (const nlohmann::json* record : records)
      if (record->value("status", "") == status) {
        nlohmann::json evidence = evidence_for(*record);
        const std::string tensor = record->value("tensor", std::string("?"));
        if (std::string(status) == "oob_write")
          return make(Verdict::oob_write,
                      "write into the guard zone " + record->value("side", std::string("after")) + " " + tensor,
                      evidence);
        return make(Verdict::input_mutated, "input " + tensor + " changed during the call", evidence);
      }
  std::vector<const nlohmann::json*> failures;
  for (const nlohmann::json* record : records)
    if (record->value("status", "ok") != "ok") failures.push_back(record);
  if (!failures.empty()) {
    std::vector<const nlohmann::json*> visible;
    std::set<std::string> failing_distributions;
    for (const nlohmann::json* record : failures) {
      const Trial& trial = battery.trial(record->value("trial", 0));
      if (!battery.workloads[static_cast<std::size_t>(trial.workload)].hidden) {
        visible.push_back(record);
        failing_distributions.insert(trial.distribution);
      }
    }
    const nlohmann::json* first = failures.front();
    for (const nlohmann::json* record : failures)
      if (severity(record->value("status", "")) < severity(first->value("status", ""))) first = record;
    nlohmann::json evidence = evidence_for(*first);
    evidence["kind"] = first->value("status", "");
    evidence["failing_trials"] = failures.size();
    evidence["trials"] = records.size();
    if (visible.empty())
      return make(Verdict::shape_specialized,
                  "correct on the task's workloads, wrong on hidden edge shapes (" +
                      first->value("status", std::string("")) + ")",
                  evidence);
    bool other_distribution_passed = false;
    for (const nlohmann::json* record : records) {
      const Trial& trial = battery.trial(record->value("trial", 0));
      if (!battery.workloads[static_cast<std::size_t>(trial.workload)].hidden && record->value("status", "") == "ok" &&
          !failing_distributions.count(trial.distribution))
        other_distribution_passed = true;
    }
    if (failing_distributions.size() == 1 && other_distribution_passed) {
      const nlohmann::json* visible_first = visible.front();
      evidence = evidence_for(*visible_first);
      evidence["kind"] = visible_first->value("status", "");
      evidence["failing_trials"] = failures.size();
      evidence["trials"] = records.size();
      return make(Verdict::distribution_specific,
                  "wrong only on " + *failing_distributions.begin() + " inputs (" +
                      visible_first->value("status", std::string("")) + ")",
                  evidence);
    }
    const std::string status = first->value("status", "");
    return make(output_verdict(status), status + " in output " + first->value("tensor", std::string("?")), evidence);
  }
  if (const nlohmann::json* determinism = run.last("determinism");
      determinism && !determinism->value("identical", true)) {
    nlohmann::json evidence = trial_evidence(battery, determinism->value("trial", -1));
    evidence["tensor"] = determinism->value("tensor", "");
    evidence["first_bad_index"] = determinism->value("first_bad", -1);
    return make(Verdict::nondeterministic,
                "the same inputs gave different bits in output " + determinism->value("tensor", std::string("?")),
                evidence);
  }
  double worst_normwise = 0;
  for (const nlohmann::json* record : records)
    worst_normwise = std::max(worst_normwise, record->value("normwise", 0.0));
  return make(Verdict::pass, "", {{"trials", records.size()}, {"worst_normwise", worst_normwise}});
}

std::optional<double> roofline_fraction(const BatteryWorkload& workload, double median_s,
                                        const std::optional<Peaks>& peaks) {
  if (!peaks || median_s <= 0 || (workload.flops <= 0 && workload.bytes <= 0)) return std::nullopt;
  double fraction = 0;
  if (peaks->gflops > 0 && workload.flops > 0)
    fraction = std::max(fraction, workload.flops / median_s / 1e9 / peaks->gflops);
  if (peaks->gbytes_per_s > 0 && workload.bytes > 0)
    fraction = std::max(fraction, workload.bytes / median_s / 1e9 / peaks->gbytes_per_s);
  return fraction;
}

TimingOutcome analyze_timing(const HarnessRun& run, const Battery& battery, int bootstrap_resamples, double fresh_ratio,
                             const std::optional<Peaks>& peaks) {
  TimingOutcome outcome;
  if (const nlohmann::json* mutated = run.last("input_mutated")) {
    nlohmann::json evidence = trial_evidence(battery, mutated->value("trial", -1));
    evidence["tensor"] = mutated->value("tensor", "");
    evidence["first_bad_index"] = mutated->value("first_bad", -1);
    outcome.failure = make(Verdict::input_mutated,
                           "input " + mutated->value("tensor", std::string("?")) + " changed during timing", evidence);
    return outcome;
  }
  if (const nlohmann::json* recheck = run.last("recheck_fail")) {
    nlohmann::json evidence = trial_evidence(battery, recheck->value("trial", -1));
    add_output_evidence(evidence, *recheck);
    evidence["kind"] = recheck->value("status", "");
    evidence["sample"] = recheck->value("sample", 0);
    if (recheck->value("side", "") != "candidate") {
      outcome.failure =
          make(Verdict::infra_error,
               "the baseline's timed output was wrong (" + recheck->value("status", std::string("")) + ")", evidence);
    } else {
      outcome.failure =
          make(Verdict::recheck_fail,
               "a timed run's output was wrong (" + recheck->value("status", std::string("")) + ")", evidence);
    }
    return outcome;
  }
  for (const nlohmann::json* record : run.all("timing")) {
    const int index = record->value("workload", 0);
    const BatteryWorkload& workload = battery.workloads[static_cast<std::size_t>(index)];
    const std::vector<double> candidate = record->value("candidate", std::vector<double>{});
    const std::vector<double> baseline = record->value("baseline", std::vector<double>{});
    WorkloadResult result;
    result.name = workload.name;
    result.axes = workload.axes;
    result.candidate = summarize(candidate);
    result.baseline = summarize(baseline);
    result.speedup = result.candidate.median_s > 0 ? result.baseline.median_s / result.candidate.median_s : 0;
    Interval interval =
        bootstrap_speedup(baseline, candidate, bootstrap_resamples, 0x5eed + static_cast<std::uint64_t>(index));
    result.speedup_low = interval.low;
    result.speedup_high = interval.high;
    if (result.candidate.median_s > 0) {
      result.gflops = workload.flops / result.candidate.median_s / 1e9;
      result.gbytes_per_s = workload.bytes / result.candidate.median_s / 1e9;
    }
    result.roofline_fraction = roofline_fraction(workload, result.candidate.median_s, peaks);
    result.stop = record->value("stop", "");
    result.batch = record->value("batch_candidate", 1);
    result.rotation_sets = record->value("sets", 0);
    result.rotation_bytes = static_cast<std::uint64_t>(result.rotation_sets) * workload.set_bytes;
    result.setup_s = record->value("setup_s", 0.0);
    result.setup_ahead_s = record->value("setup_ahead_s", 0.0);
    result.warmup_s = record->value("warmup_s", 0.0);
    result.measured_s = record->value("measured_s", 0.0);
    result.elapsed_s = record->value("elapsed_s", 0.0);
    result.timed_s = record->value("timed_s", 0.0);
    outcome.timed_s += result.timed_s;
    outcome.capped |= result.stop == "cap";
    if (record->value("side_work", false) && !outcome.failure) {
      nlohmann::json evidence = {{"workload", workload.name},
                                 {"threads_before", record->value("threads_before", 0)},
                                 {"threads_after", record->value("threads_after", 0)},
                                 {"other_threads_cpu_s", record->value("other_threads_cpu_s", 0.0)},
                                 {"in_window_other_cpu_s", record->value("candidate_window_other_cpu_s", 0.0)},
                                 {"timed_s", record->value("timed_s", 0.0)}};
      // The CUDA harness also traces kernels: work outside the measured windows says so in words.
      const std::string traced = record->value("side_work_evidence", std::string());
      if (!traced.empty()) evidence["kernels"] = traced;
      outcome.failure = make(Verdict::timing_side_work,
                             traced.empty() ? "other threads did work around the measured calls" : traced, evidence);
    }
    const std::vector<double> candidate_probe = record->value("candidate_probe", std::vector<double>{});
    const std::vector<double> baseline_probe = record->value("baseline_probe", std::vector<double>{});
    if (!candidate_probe.empty() && !baseline_probe.empty() && result.candidate.median_s > 0 &&
        result.baseline.median_s > 0 && !outcome.failure) {
      const double candidate_ratio =
          *std::min_element(candidate_probe.begin(), candidate_probe.end()) / result.candidate.median_s;
      const double baseline_ratio =
          *std::min_element(baseline_probe.begin(), baseline_probe.end()) / result.baseline.median_s;
      if (candidate_ratio > fresh_ratio * std::max(1.0, baseline_ratio)) {
        nlohmann::json evidence = {{"workload", workload.name},
                                   {"median_s", result.candidate.median_s},
                                   {"fresh_s", candidate_probe},
                                   {"fresh_over_median", candidate_ratio},
                                   {"baseline_fresh_over_median", baseline_ratio},
                                   {"threshold", fresh_ratio}};
        outcome.failure = make(
            Verdict::timing_inconsistent,
            "fresh inputs took " + fixed(candidate_ratio, 2) + "x the median: results are being reused across calls",
            evidence);
      }
    }
    outcome.workloads.push_back(result);
  }
  return outcome;
}

}  // namespace evoteam::eval
