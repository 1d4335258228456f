#include "eval/eval_phases.hpp"

#include <evoteam/core/clock.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/inventory.hpp>
#include <evoteam/core/text.hpp>

#include <algorithm>
#include <chrono>
#include <future>
#include <random>
#include <thread>

#include <unistd.h>

#include <evoteam/eval/sandbox.hpp>
#include "eval/device_lock.hpp"
#include "eval/group/rank_group.hpp"
#include "eval/harness_run.hpp"
#include "eval/host/host_profile.hpp"
#include "eval/statistics.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The perf binary the host profile may use: none when eval.profile.perf is off or perf is not installed.
std::optional<fs::path> configured_perf(const ProfileSettings& profile) {
  if (profile.perf == PerfMode::off) return std::nullopt;
  return find_program("perf");
}

// The memory a harness here may use: the machine's physical memory, or less under eval.host.max_address_space_mb.
// A GPU's own memory is not asked for; the host copies of every tensor are needed on both targets.
std::uint64_t harness_memory_bytes(const EvalSettings& settings) {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  std::uint64_t memory =
      pages > 0 && page_size > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) : 0;
  const std::uint64_t limit = settings.host.max_address_space_bytes();
  if (limit > 0 && (memory == 0 || limit < memory)) memory = limit;
  return memory;
}

bool references_present(const Task& task, const fs::path& dir, const Trial& trial) {
  for (const TensorSpec& output : task.outputs)
    if (!fs::is_regular_file(dir / (trial.reference_key + "." + output.name + ".bin"))) return false;
  return fs::is_regular_file(dir / (trial.reference_key + ".json"));
}

// Where compiled builds go: eval.build_cache_dir when set, else the cache directory itself.
fs::path build_cache_dir(const EvalSettings& settings, const fs::path& cache_dir) {
  return settings.build_cache_dir.empty() ? cache_dir : fs::absolute(settings.build_cache_dir);
}

}  // namespace

std::optional<Peaks> device_peaks(EvaluationRun& run, bool remeasure) {
  if (run.task.target == Target::cuda) return run.shared.gpu_peaks.get(run.harness, remeasure);
  return run.shared.peaks.get(remeasure);
}

HarnessSpec harness_spec(const EvaluationRun& run, const fs::path& plan, double timeout_s) {
  HarnessSpec spec;
  spec.harness = run.harness;
  spec.plan = plan;
  spec.scratch = run.scratch;
  spec.sandbox = run.sandbox;
  spec.timeout_s = timeout_s;
  // The CUDA runtime reserves far more address space than it uses, so only host harnesses get the limit.
  if (run.task.target == Target::host)
    spec.max_address_space = run.shared.settings.host.max_address_space_bytes();
  else
    spec.devices = gpu_device_nodes();
  if (run.task.target == Target::cuda && !run.shared.settings.device.empty())
    spec.env["CUDA_VISIBLE_DEVICES"] = run.shared.settings.device;
  if (run.reference_dir.parent_path() != run.scratch) spec.readable.push_back(run.reference_dir);
  return spec;
}

EvaluatorShared::EvaluatorShared(const EvalSettings& configured, ProcessRunner& process_runner, fs::path cache)
    : settings(configured),
      runner(process_runner),
      cache_dir(std::move(cache)),
      host(settings, runner, build_cache_dir(settings, cache_dir)),
      cuda(settings, runner, build_cache_dir(settings, cache_dir), host.compile_slots()),
      peaks(settings.machine, runner, host, cache_dir),
      gpu_peaks(settings.cuda, runner, cache_dir),
      evaluator_secret(fresh_secret()) {}

std::uint64_t fresh_secret() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

std::optional<Judgement> prepare_references(EvaluationRun& run, std::uint64_t secret) {
  if (is_ranked(run.task)) return prepare_ranked_references(run, secret);
  const auto start = Clock::now();
  const EvalSettings& settings = run.shared.settings;
  // Rotating input sets must defeat the cache the implementation runs against: the host's last level, or the
  // GPU's L2 (k_gpu_l2_bound covers H100's 50 MB and B200's 126 MB).
  constexpr double k_gpu_l2_bound = 128.0 * (1 << 20);
  run.battery = design_battery(run.task, settings.correctness, settings.timing, secret,
                               run.task.target == Target::cuda ? k_gpu_l2_bound : last_level_cache_bytes());
  // Sizes no harness here can hold are the task's problem, said before anything is allocated (not a bad_alloc).
  if (std::optional<std::string> unfit = workload_beyond_memory(run.battery, harness_memory_bytes(settings)))
    return Judgement{Verdict::infra_error, *unfit, {{"task", run.task.name}}};
  BuildOutcome reference;
  if (std::optional<Judgement> failure = build_harness_and_reference(run, &reference)) return failure;
  evoteam::create_directories(run.reference_dir);
  std::vector<int> missing;
  for (const Trial& trial : run.battery.trials)
    if (!references_present(run.task, run.reference_dir, trial)) missing.push_back(trial.id);
  run.references_cached = missing.empty();
  const double stage_timeout = settings.stages.reference.timeout_s;
  // The trials are dealt round-robin to one process per core; references are the one phase with no timing
  // to disturb.
  // One process on a GPU: several would only contend for it.
  const std::size_t processes =
      run.task.target == Target::cuda ? 1 : std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 4);
  std::vector<std::vector<int>> chunks(std::min(processes, std::max<std::size_t>(1, missing.size() / 4)));
  for (std::size_t i = 0; i < missing.size(); ++i) chunks[i % chunks.size()].push_back(missing[i]);
  std::vector<std::future<HarnessRun>> runs;
  for (std::size_t chunk = 0; chunk < chunks.size() && !missing.empty(); ++chunk) {
    nlohmann::json plan = base_plan(run.task, run.battery, settings.correctness, "reference");
    add_trials(plan, run.battery, chunks[chunk], run.reference_dir,
               std::vector<double>(run.battery.trials.size(), stage_timeout));
    const fs::path plan_file = run.scratch / ("plan-reference-" + std::to_string(chunk) + ".json");
    write_json_atomic(plan_file, plan);
    HarnessSpec spec = harness_spec(run, plan_file, stage_timeout);
    spec.reference = reference.library;
    if (run.reference_dir.parent_path() != run.scratch) spec.writable.push_back(run.reference_dir);
    runs.push_back(std::async(std::launch::async, [&run, spec] { return run_harness(run.shared.runner, spec); }));
  }
  std::optional<Judgement> failure;
  for (auto& pending : runs) {
    HarnessRun harness_run = pending.get();
    if (!failure) failure = judge_process(harness_run, run.battery, true);
    for (const nlohmann::json* record : harness_run.all("reference")) {
      const Trial& trial = run.battery.trial(record->value("trial", 0));
      write_json_atomic(run.reference_dir / (trial.reference_key + ".json"),
                        {{"wall_s", record->value("wall_s", 0.0)}});
    }
  }
  if (!failure) failure = load_call_deadlines(run);
  if (failure) return failure;
  run.reference_s = seconds_since(start);
  return std::nullopt;
}

std::optional<Judgement> build_harness_and_reference(EvaluationRun& run, BuildOutcome* reference) {
  try {
    run.harness = run.backend.harness(run.task);
  } catch (const Error& error) {
    return infra_error(error.what());
  }
  BuildRequest request;
  request.task = &run.task;
  request.files[run.task.reference_file] = read_file(run.task.dir / run.task.reference_file);
  request.untrusted = false;
  request.role = "reference";
  *reference = run.backend.build(request, run.sandbox);
  if (reference->status != BuildStatus::ok)
    return Judgement{
        Verdict::infra_error, "the reference does not build: " + reference->reason, {{"log", reference->log}}};
  return std::nullopt;
}

std::optional<Judgement> load_call_deadlines(EvaluationRun& run) {
  const CorrectnessSettings& correctness = run.shared.settings.correctness;
  const double factor = correctness.call_deadline_factor;
  const double minimum = correctness.call_deadline_min_s;
  run.deadlines_s.assign(run.battery.trials.size(), minimum);
  for (const Trial& trial : run.battery.trials) {
    const fs::path sidecar = run.reference_dir / (trial.reference_key + ".json");
    if (!fs::is_regular_file(sidecar))
      return infra_error("reference output missing for trial " + std::to_string(trial.id));
    const double wall = read_json_file(sidecar).value("wall_s", 0.0);
    run.deadlines_s[static_cast<std::size_t>(trial.id)] = std::max(minimum, factor * wall);
  }
  return std::nullopt;
}

nlohmann::json timing_settings(const TimingSettings& timing, const nlohmann::json& workloads, double call_deadline_s) {
  return {{"workloads", workloads},
          {"min_samples", timing.min_samples},
          {"min_time_s", timing.min_time_s},
          {"max_time_s", timing.max_time_s},
          {"max_noise", timing.max_noise},
          {"noise_window", timing.noise_window},
          {"noise_stability", timing.noise_stability},
          {"warmup_s", timing.warmup_s},
          {"min_sample_s", timing.min_sample_s},
          {"side_work_fraction", timing.side_work_fraction},
          {"call_deadline_s", call_deadline_s},
          {"clock", timing.clock}};
}

std::optional<DeviceLock> acquire_timing_lock(const EvaluationRun& run, std::optional<Judgement>* failure,
                                              double* waited_s) {
  const EvalSettings& settings = run.shared.settings;
  const auto timeout = std::chrono::milliseconds(static_cast<long>(settings.stages.timing.lock_timeout_s * 1000));
  const auto start = Clock::now();
  std::optional<DeviceLock> lock = DeviceLock::acquire(settings.lock_dir, run.backend.device(), timeout);
  *waited_s = seconds_since(start);
  if (!lock) *failure = infra_error("timed out waiting for the timing lock of device " + run.backend.device());
  return lock;
}

std::optional<Judgement> device_unavailable(EvaluationRun& run) {
  if (run.task.target != Target::cuda) return std::nullopt;
  const nlohmann::json evidence = {
      {"target", "cuda"}, {"archs", run.task.archs}, {"min_devices", run.task.min_devices}};
  const std::string advice =
      ": correctness and timing need a GPU (the static and build stages ran here); "
      "run `evoteam eval` on a machine with one";
  if (std::optional<std::string> why = run_stages_unavailable(run.task, run.shared.settings))
    return Judgement{Verdict::infra_error, *why + advice, evidence};
  if (is_ranked(run.task))
    if (std::optional<Judgement> unfit = too_few_gpus_for_any_group(run)) return unfit;
  try {
    run.harness = run.backend.harness(run.task);
  } catch (const Error& error) {
    return infra_error(error.what());
  }
  std::string why;
  if (probe_gpu(run, &why)) return std::nullopt;
  nlohmann::json failed = evidence;
  failed["probe"] = why;
  return Judgement{Verdict::infra_error, "the GPU probe failed" + advice, failed};
}

bool probe_gpu(EvaluationRun& run, std::string* why) {
  Command probe;
  SandboxSpec sandbox;
  sandbox.writable.push_back(run.scratch);
  sandbox.readable.push_back(run.harness.parent_path());
  sandbox.devices = gpu_device_nodes();
  probe.argv = sandbox_argv(run.sandbox, {run.harness.string(), "--result-fd", "3", "--probe"}, sandbox);
  probe.cwd = run.scratch;
  probe.result_fd = 3;
  probe.timeout = std::chrono::milliseconds(60'000);
  if (!run.shared.settings.device.empty())
    probe.env = scrubbed_env({{"CUDA_VISIBLE_DEVICES", run.shared.settings.device}});
  const ProcessResult result = run.shared.runner.run(probe);
  bool truncated = false;
  for (const nlohmann::json& record : parse_records(result.result.text, &truncated))
    if (record.value("ev", "") == "probe" && record.value("ok", false)) return true;
  if (why != nullptr)
    *why = result.describe() + " " + result.result.text.substr(0, 300) + result.err.text.substr(0, 300);
  return false;
}

std::optional<Judgement> run_correctness(EvaluationRun& run, const fs::path& candidate) {
  if (is_ranked(run.task)) return run_ranked_correctness(run, candidate);
  const EvalSettings& settings = run.shared.settings;
  nlohmann::json plan = base_plan(run.task, run.battery, settings.correctness, "correctness");
  std::vector<int> ids;
  for (const Trial& trial : run.battery.trials)
    if (trial.correctness) ids.push_back(trial.id);
  add_trials(plan, run.battery, ids, run.reference_dir, run.deadlines_s);
  const bool determinism = settings.correctness.determinism && run.task.deterministic;
  plan["determinism_trial"] = determinism ? run.battery.determinism_trial : -1;
  const fs::path plan_file = run.scratch / "plan-correctness.json";
  write_json_atomic(plan_file, plan);
  HarnessSpec spec = harness_spec(run, plan_file, settings.stages.correctness.timeout_s);
  spec.candidate = candidate;
  HarnessRun harness_run = run_harness(run.shared.runner, spec);
  if (std::optional<Judgement> failure = judge_process(harness_run, run.battery, false)) return failure;
  Judgement judgement = judge_correctness(harness_run, run.battery);
  if (judgement.verdict != Verdict::pass) return judgement;
  return std::nullopt;
}

std::optional<Judgement> check_timing_gates(EvaluationRun& run, EvalResult& result, bool capped,
                                            const fs::path& candidate) {
  const TimingSettings& timing = run.shared.settings.timing;
  auto battery_workload = [&](const WorkloadResult& workload) -> const BatteryWorkload* {
    for (const BatteryWorkload& entry : run.battery.workloads)
      if (entry.name == workload.name) return &entry;
    return nullptr;
  };
  const double impossible = timing.impossible_fraction;
  auto over_roof = [&]() -> const WorkloadResult* {
    for (const WorkloadResult& workload : result.workloads)
      if (workload.roofline_fraction && *workload.roofline_fraction > impossible) return &workload;
    return nullptr;
  };
  if (over_roof() != nullptr) {
    // Measured peaks may come from a busy moment; measure again before accusing the candidate.
    std::optional<Peaks> peaks = device_peaks(run, true);
    std::vector<double> fractions;
    for (WorkloadResult& workload : result.workloads) {
      if (const BatteryWorkload* entry = battery_workload(workload))
        workload.roofline_fraction = roofline_fraction(*entry, workload.candidate.median_s, peaks);
      if (workload.roofline_fraction) fractions.push_back(*workload.roofline_fraction);
    }
    if (fractions.size() == result.workloads.size() && !fractions.empty())
      result.roofline_fraction = geometric_mean(fractions);
    if (const WorkloadResult* workload = over_roof()) {
      nlohmann::json evidence = {{"workload", workload->name},
                                 {"roofline_fraction", *workload->roofline_fraction},
                                 {"gflops", workload->gflops},
                                 {"gbytes_per_s", workload->gbytes_per_s},
                                 {"median_s", workload->candidate.median_s},
                                 {"threshold", impossible}};
      if (peaks) evidence["peaks"] = {{"gflops", peaks->gflops}, {"gbytes_per_s", peaks->gbytes_per_s}};
      return Judgement{Verdict::impossible_perf,
                       "faster than the machine's roofline (" + fixed(*workload->roofline_fraction, 3) + " of peak)",
                       evidence};
    }
  }
  const double suspicious = timing.suspicious_speedup;
  if (run.task.baseline.vendor && result.speedup && *result.speedup > suspicious) {
    EvaluationRun again = run;
    again.reference_dir = run.scratch / "reverify-references";
    if (std::optional<Judgement> failure = prepare_references(again, fresh_secret())) return failure;
    if (std::optional<Judgement> failure = run_correctness(again, candidate)) {
      failure->evidence["reverification"] = "fresh seeds after a suspicious speedup";
      return failure;
    }
    return Judgement{Verdict::suspicious_speedup,
                     "speedup " + fixed(*result.speedup, 3) + "x over vendor baseline " + run.task.baseline.name +
                         " exceeds " + fixed(suspicious, 2) + "x; re-verified with fresh seeds, held for audit",
                     {{"speedup", *result.speedup}, {"threshold", suspicious}, {"reverified", true}}};
  }
  if (capped) {
    nlohmann::json capped_workloads = nlohmann::json::array();
    for (const WorkloadResult& workload : result.workloads)
      if (workload.stop == "cap")
        capped_workloads.push_back({{"workload", workload.name},
                                    {"speedup_interval", {workload.speedup_low, workload.speedup_high}},
                                    {"candidate_relstdev", workload.candidate.relstdev},
                                    {"baseline_relstdev", workload.baseline.relstdev}});
    return Judgement{Verdict::noisy,
                     "timing did not converge within eval.timing.max_time_s",
                     {{"workloads", capped_workloads},
                      {"speedup_interval", {result.speedup_low.value_or(0.0), result.speedup_high.value_or(0.0)}}}};
  }
  return std::nullopt;
}

const BatteryWorkload* profiled_workload(const EvaluationRun& run) {
  if (run.battery.rotation.empty()) return nullptr;
  return &run.battery.workloads[static_cast<std::size_t>(run.battery.rotation.begin()->first)];
}

std::optional<HarnessSpec> profile_harness_spec(EvaluationRun& run, const fs::path& candidate) {
  if (run.battery.rotation.empty()) return std::nullopt;
  const EvalSettings& settings = run.shared.settings;
  const int trial_id = run.battery.rotation.begin()->second.front();
  nlohmann::json plan = base_plan(run.task, run.battery, settings.correctness, "profile");
  add_trials(plan, run.battery, {trial_id}, run.reference_dir, run.deadlines_s);
  plan["profile"] = {{"trial", trial_id}, {"time_s", settings.profile.time_s}};
  const fs::path plan_file = run.scratch / "plan-profile.json";
  write_json_atomic(plan_file, plan);
  HarnessSpec spec = harness_spec(run, plan_file, settings.stages.profile.timeout_s);
  spec.candidate = candidate;
  return spec;
}

std::optional<Judgement> run_profile(EvaluationRun& run, const fs::path& candidate, nlohmann::json* profile) {
  if (run.task.target == Target::cuda) return run_cuda_profile(run, candidate, profile);
  const ProfileSettings& profiling = run.shared.settings.profile;
  std::optional<HarnessSpec> profiled = profile_harness_spec(run, candidate);
  if (!profiled) return infra_error("no workload to profile");
  HarnessSpec& spec = *profiled;
  const fs::path perf_file = run.scratch / "perf.txt";
  std::optional<fs::path> perf = configured_perf(profiling);
  HarnessRun harness_run;
  bool used_perf = false;
  if (perf) {
    const std::string events = join(profiling.events, ",");
    spec.wrapper = {perf->string(), "stat", "-x,", "-o", perf_file.string(), "-e", events, "--"};
    harness_run = run_harness(run.shared.runner, spec);
    used_perf = harness_run.finished();
  }
  if (!used_perf) {
    // perf may be refused here (perf_event_paranoid, seccomp); the timing-derived profile still stands.
    spec.wrapper.clear();
    harness_run = run_harness(run.shared.runner, spec);
  }
  if (std::optional<Judgement> failure = judge_process(harness_run, run.battery, false)) return failure;
  const nlohmann::json* record = harness_run.last("profile");
  if (record == nullptr) return infra_error("the profile run left no profile record");
  nlohmann::json counters;
  if (used_perf && fs::is_regular_file(perf_file)) counters = parse_perf_csv(read_file(perf_file));
  *profile = profile_summary(*profiled_workload(run), summarize(record->value("samples", std::vector<double>{})),
                             counters, run.shared.peaks.get(false));
  (*profile)["sandbox"] = to_string(run.sandbox);
  return std::nullopt;
}

bool profile_needs_own_run(EvaluationRun& run) {
  if (run.task.target == Target::cuda) return true;
  EvaluatorShared& shared = run.shared;
  std::call_once(shared.perf_probe, [&shared] {
    if (std::optional<fs::path> perf = configured_perf(shared.settings.profile))
      shared.perf_counts_hardware = perf_counts_hardware(shared.runner, *perf);
  });
  return shared.perf_counts_hardware;
}

std::optional<Judgement> profile_from_timing(EvaluationRun& run, const std::vector<WorkloadResult>& timed,
                                             nlohmann::json* profile) {
  const BatteryWorkload* workload = profiled_workload(run);
  if (workload == nullptr) return infra_error("no workload to profile");
  for (const WorkloadResult& result : timed) {
    if (result.name != workload->name) continue;
    *profile = profile_summary(*workload, result.candidate, nullptr, run.shared.peaks.get(false));
    (*profile)["source"] = "timing stage";
    (*profile)["sandbox"] = to_string(run.sandbox);
    return std::nullopt;
  }
  return infra_error("the timing stage has no samples of workload " + workload->name);
}

std::future<ProfileOutcome> start_profile(EvaluationRun& run, const fs::path& candidate) {
  device_peaks(run, false);
  return std::async(std::launch::async, [&run, candidate] {
    const auto start = Clock::now();
    ProfileOutcome outcome;
    try {
      outcome.failure = run_profile(run, candidate, &outcome.profile);
    } catch (const std::exception& error) {
      outcome.failure = infra_error(std::string("profile: ") + error.what());
    }
    outcome.wall_s = seconds_since(start);
    return outcome;
  });
}

}  // namespace evoteam::eval
