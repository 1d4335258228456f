#pragma once
// The phases of one evaluation after the candidate is built: reference outputs, correctness, timing, profile.
// Each runs a fresh harness process and turns its records into a verdict (eval/classify.hpp).
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <evoteam/config.hpp>
#include <evoteam/evaluator.hpp>
#include <evoteam/process.hpp>

#include "eval/battery.hpp"
#include "eval/classify.hpp"
#include "eval/cuda_backend.hpp"
#include "eval/host_build.hpp"
#include "eval/machine_peaks.hpp"

namespace evoteam::eval {

// What lives as long as the Evaluator.
struct EvaluatorShared {
  EvaluatorShared(const Config& settings, ProcessRunner& process_runner, std::filesystem::path cache);

  Config config;
  ProcessRunner& runner;
  std::filesystem::path cache_dir;
  HostBuilder host;
  CudaBuilder cuda;
  MachinePeaks peaks;
  std::uint64_t evaluator_secret;
  std::once_flag sandbox_probe;
  bool bwrap_usable = false;
  std::string bwrap_problem;
};

// One evaluate() call's state.
struct EvaluationRun {
  EvaluatorShared& shared;
  TargetBackend& backend;
  const Task& task;
  SandboxMode sandbox;
  std::filesystem::path scratch;
  Battery battery;
  std::filesystem::path reference_dir;
  std::filesystem::path harness;
  std::vector<double> deadlines_s;  // per trial: the candidate's per-call deadline
  double reference_s = 0;
  bool references_cached = true;
};

// A fresh secret for seeds (from the OS's random source).
std::uint64_t fresh_secret();

// Designs the battery for `secret`, builds the harness and the reference, and computes every missing
// reference output. Returns a failure (INFRA_ERROR) or nullopt.
std::optional<Judgement> prepare_references(EvaluationRun& run, std::uint64_t secret);

// Whether the task's device can run code: nullopt when it can; for a CUDA task on a machine without a usable
// GPU (no device nodes, or the harness's probe in a fresh process fails), INFRA_ERROR saying so. Host: nullopt.
std::optional<Judgement> device_unavailable(EvaluationRun& run);

std::optional<Judgement> run_correctness(EvaluationRun& run, const std::filesystem::path& candidate);

struct TimingResult {
  std::optional<Judgement> failure;
  TimingOutcome outcome;
  double lock_wait_s = 0;
};
TimingResult run_timing(EvaluationRun& run, const std::filesystem::path& candidate, const std::filesystem::path& baseline);

// The gates on a finished timing run, in order: IMPOSSIBLE_PERF (faster than the roofline even after the
// peaks are measured again), SUSPICIOUS_SPEEDUP (over a vendor baseline; the correctness battery is run again
// with fresh seeds first, and its failure wins), NOISY (a workload hit the time cap). May update the
// roofline fractions in `result`.
std::optional<Judgement> check_timing_gates(EvaluationRun& run, EvalResult& result, bool capped,
                                            const std::filesystem::path& candidate);

// The profile summary, or a failure verdict when the candidate misbehaved under the profiler.
std::optional<Judgement> run_profile(EvaluationRun& run, const std::filesystem::path& candidate, nlohmann::json* profile);

}  // namespace evoteam::eval
