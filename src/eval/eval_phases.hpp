#pragma once
// The phases of one evaluation after the candidate is built: reference outputs, correctness, timing, profile.
// Each runs a fresh harness process and turns its records into a verdict (eval/classify.hpp).
#include <cstdint>
#include <filesystem>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <evoteam/core/process.hpp>
#include <evoteam/eval/evaluator.hpp>

#include "eval/battery.hpp"
#include "eval/classify.hpp"
#include "eval/cuda/cuda_backend.hpp"
#include "eval/cuda/gpu_peaks.hpp"
#include "eval/device_lock.hpp"
#include "eval/harness_run.hpp"
#include "eval/host/host_build.hpp"
#include "eval/host/machine_peaks.hpp"

namespace evoteam::eval {

// What lives as long as the Evaluator.
struct EvaluatorShared {
  EvaluatorShared(const EvalSettings& configured, ProcessRunner& process_runner, std::filesystem::path cache);

  EvalSettings settings;
  ProcessRunner& runner;
  std::filesystem::path cache_dir;
  HostBuilder host;
  CudaBuilder cuda;
  MachinePeaks peaks;
  GpuPeaks gpu_peaks;
  std::uint64_t evaluator_secret;
  std::once_flag sandbox_probe;
  bool bwrap_usable = false;
  std::string bwrap_problem;
  std::once_flag perf_probe;
  bool perf_counts_hardware = false;
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
  nlohmann::json build_report = nlohmann::json::object();  // the candidate's build report (static profile for CUDA)
};

// The peaks the task's device is measured against: the CPU's or the GPU's.
std::optional<Peaks> device_peaks(EvaluationRun& run, bool remeasure);

// A harness process for one plan of this evaluation: sandbox, deadline, readable references, and for CUDA the
// GPU's device nodes and no address-space limit.
HarnessSpec harness_spec(const EvaluationRun& run, const std::filesystem::path& plan, double timeout_s);

// A fresh secret for seeds (from the OS's random source).
std::uint64_t fresh_secret();

// Designs the battery for `secret`, builds the harness and the reference, and computes every missing
// reference output. Returns a failure (INFRA_ERROR) or nullopt.
std::optional<Judgement> prepare_references(EvaluationRun& run, std::uint64_t secret);

// Pieces of the phases shared by one-process and group (rank_phases.cpp) evaluations:
// builds the harness and the reference (INFRA_ERROR when either fails); `reference` receives the reference build.
std::optional<Judgement> build_harness_and_reference(EvaluationRun& run, BuildOutcome* reference);
// Per-call deadlines from the reference times written beside the reference outputs.
std::optional<Judgement> load_call_deadlines(EvaluationRun& run);
// The "timing" section of a timing plan for these workloads.
nlohmann::json timing_settings(const TimingSettings& timing, const nlohmann::json& workloads, double call_deadline_s);
// The device's timing lock (INFRA_ERROR in `failure` when the wait times out). `waited_s` gets how long the wait
// took, had or not: time the device was not this evaluation's, never charged as its device time.
std::optional<DeviceLock> acquire_timing_lock(const EvaluationRun& run, std::optional<Judgement>* failure,
                                              double* waited_s);

// Whether the task's device can run code: nullopt when it can; for a CUDA task on a machine without a usable
// GPU (no device nodes, or the harness's probe in a fresh process fails), INFRA_ERROR saying so. Host: nullopt.
std::optional<Judgement> device_unavailable(EvaluationRun& run);
// The CUDA harness's health probe in a fresh process: whether the GPU still runs a kernel (after a candidate's
// fault it may not). `why` gets the probe's output when it fails.
bool probe_gpu(EvaluationRun& run, std::string* why = nullptr);

std::optional<Judgement> run_correctness(EvaluationRun& run, const std::filesystem::path& candidate);

struct TimingResult {
  std::optional<Judgement> failure;
  TimingOutcome outcome;
  double lock_wait_s = 0;  // waiting for the device's timing lock: part of the stage's wall time, not device time
};
// The timing stage itself: eval/timing_run.hpp.

// The gates on a finished timing run, in order: IMPOSSIBLE_PERF (faster than the roofline even after the
// peaks are measured again), SUSPICIOUS_SPEEDUP (over a vendor baseline; the correctness battery is run again
// with fresh seeds first, and its failure wins), NOISY (a workload hit the time cap). May update the
// roofline fractions in `result`.
std::optional<Judgement> check_timing_gates(EvaluationRun& run, EvalResult& result, bool capped,
                                            const std::filesystem::path& candidate);

// The workload a profile describes: the first timed one (null when none is timed).
const BatteryWorkload* profiled_workload(const EvaluationRun& run);
// The profile run's harness: the candidate repeated on profiled_workload's first timing set for
// eval.profile.time_s (its plan written). nullopt when there is no workload to profile.
std::optional<HarnessSpec> profile_harness_spec(EvaluationRun& run, const std::filesystem::path& candidate);

// The profile summary, or a failure verdict when the candidate misbehaved under the profiler.
std::optional<Judgement> run_profile(EvaluationRun& run, const std::filesystem::path& candidate,
                                     nlohmann::json* profile);

// Whether the profile stage needs a harness run of its own: for CUDA (Nsight Compute, or the static profile),
// and on a host where perf counts hardware events (probed once per evaluator). Elsewhere the timing stage's
// samples give every figure such a run would (profile_from_timing).
bool profile_needs_own_run(EvaluationRun& run);
// The host profile from the timing stage's candidate samples on the workload run_profile would use.
std::optional<Judgement> profile_from_timing(EvaluationRun& run, const std::vector<WorkloadResult>& timed,
                                             nlohmann::json* profile);

// The profile stage started on its own thread, to run beside correctness on a host with a core to spare (it needs
// no timing lock). Reads the machine peaks first, measuring them on a first run, so that no measurement shares the
// machine with another. The caller must get() the result before timing starts.
struct ProfileOutcome {
  std::optional<Judgement> failure;
  nlohmann::json profile = nlohmann::json::object();
  double wall_s = 0;
};
std::future<ProfileOutcome> start_profile(EvaluationRun& run, const std::filesystem::path& candidate);

// CUDA (cuda_profile.cpp): Nsight Compute on the harness's profile mode where ncu is installed, parsed into the
// compact summary; else the static profile from the build (ptxas, PTX/SASS counts), marked "source": "static".
std::optional<Judgement> run_cuda_profile(EvaluationRun& run, const std::filesystem::path& candidate,
                                          nlohmann::json* profile);
nlohmann::json static_cuda_profile(const nlohmann::json& build_report, const std::string& why);

// CUDA (cuda_sanitizer.cpp): eval.cuda.sanitizer_tools under compute-sanitizer on the smallest correctness trial;
// a finding is RUNTIME_FAULT. `report` says per tool "clean", "errors", or why nothing ran.
std::optional<Judgement> run_cuda_sanitizer(EvaluationRun& run, const std::filesystem::path& candidate,
                                            nlohmann::json* report);

// The Python oracle (oracle.cpp): Evaluator::check_oracle's work.
OracleReport run_oracle(EvaluatorShared& shared, const Task& task);

}  // namespace evoteam::eval
