#include "eval/timing_run.hpp"

#include <evoteam/core/fs.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>

#include "eval/group/rank_group.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;

std::int64_t timing_steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// How long an early run waits for its word: as long as correctness, the profile beside it and the lock wait
// may take together.
double release_wait_s(const StageTimeouts& stages) {
  return stages.correctness.timeout_s + stages.profile.timeout_s + stages.timing.lock_timeout_s;
}

// The timing plan: every workload's rotation and probe sets, and the stage's settings; for an early run, the
// release file.
fs::path write_timing_plan(EvaluationRun& run, const fs::path& release_file) {
  const EvalSettings& settings = run.shared.settings;
  nlohmann::json plan = base_plan(run.task, run.battery, settings.correctness, "timing");
  std::vector<int> ids;
  double call_deadline = 0;
  nlohmann::json timing_workloads = nlohmann::json::array();
  for (const auto& [workload, sets] : run.battery.rotation) {
    std::vector<int> probes;
    if (auto found = run.battery.probes.find(workload); found != run.battery.probes.end()) probes = found->second;
    ids.insert(ids.end(), sets.begin(), sets.end());
    ids.insert(ids.end(), probes.begin(), probes.end());
    for (int id : sets) call_deadline = std::max(call_deadline, run.deadlines_s[static_cast<std::size_t>(id)]);
    for (int id : probes) call_deadline = std::max(call_deadline, run.deadlines_s[static_cast<std::size_t>(id)]);
    timing_workloads.push_back({{"workload", workload}, {"sets", sets}, {"probes", probes}});
  }
  add_trials(plan, run.battery, ids, run.reference_dir, run.deadlines_s);
  plan["timing"] = timing_settings(settings.timing, timing_workloads, call_deadline);
  if (!release_file.empty()) {
    plan["timing"]["release_file"] = release_file.string();
    plan["timing"]["release_wait_s"] = release_wait_s(settings.stages);
  }
  const fs::path plan_file = run.scratch / "plan-timing.json";
  write_json_atomic(plan_file, plan);
  return plan_file;
}

// Runs the harness of one timing plan and analyses its records. An early run (`released_ns` given) waits up to
// release_wait_s for its word (the lock is taken at the release, by TimingRun), then has the stage's own deadline
// from the release (`released_ns`, 0 until then): a timing setting that would time for ever is cut there, whatever
// the wait allowed. Otherwise the lock is taken here first. An early run that was not released times nothing; its
// result says so.
TimingResult time_with_harness(EvaluationRun& run, const fs::path& plan_file, const fs::path& candidate,
                               const fs::path& baseline, const std::atomic<std::int64_t>* released_ns,
                               bool vendor = false) {
  const bool early = released_ns != nullptr;
  TimingResult result;
  const EvalSettings& settings = run.shared.settings;
  HarnessSpec spec = harness_spec(run, plan_file, settings.stages.timing.timeout_s);
  spec.candidate = candidate;
  spec.baseline = baseline;
  spec.candidate_plan_hook = vendor;
  std::optional<DeviceLock> lock;
  if (early) {
    spec.timeout_s += release_wait_s(settings.stages);
    const double stage_s = settings.stages.timing.timeout_s;
    spec.past_deadline = [released_ns, stage_s] {
      const std::int64_t at = released_ns->load();
      return at != 0 && static_cast<double>(timing_steady_ns() - at) / 1e9 > stage_s;
    };
  } else {
    lock = acquire_timing_lock(run, &result.failure);
    if (!lock) return result;
    result.lock_wait_s = lock->waited_s();
  }
  HarnessRun harness_run = run_harness(run.shared.runner, spec);
  lock.reset();
  if (std::optional<Judgement> failure = judge_process(harness_run, run.battery, false)) {
    result.failure = failure;
    return result;
  }
  if (early) {
    const nlohmann::json* release = harness_run.last("release");
    if (release == nullptr || release->value("word", "") != "go") {
      result.failure = infra_error("the timing run was not released");
      return result;
    }
  }
  std::optional<Peaks> peaks = device_peaks(run, false);
  result.outcome =
      analyze_timing(harness_run, run.battery, settings.timing.bootstrap_resamples, settings.timing.fresh_ratio, peaks);
  result.failure = result.outcome.failure;
  return result;
}

// A baseline that does not build is the evaluator's problem, never the candidate's: INFRA_ERROR with its log.
TimingResult baseline_failure(const BuildOutcome& baseline) {
  TimingResult failed;
  failed.failure =
      Judgement{Verdict::infra_error, "the baseline does not build: " + baseline.reason, {{"log", baseline.log}}};
  return failed;
}

}  // namespace

BuildOutcome build_baseline(EvaluationRun& run) {
  const Task& task = run.task;
  BuildRequest request;
  request.task = &task;
  if (task.baseline.kind == BaselineKind::reference) {
    request.files = {{task.reference_file, read_file(task.dir / task.reference_file)}};
  } else if (task.baseline.kind == BaselineKind::library) {
    request.files = {{task.baseline.file, read_file(task.dir / task.baseline.file)}};
  } else {
    for (const std::string& name : task.kernel_files) request.files[name] = read_file(task.dir / name);
    request.params = default_params(task);
  }
  request.untrusted = false;
  request.role = "baseline";
  return run.backend.build(request, run.sandbox);
}

TimingResult time_vendor(EvaluationRun& run, const fs::path& vendor) {
  const BuildOutcome baseline = build_baseline(run);
  if (baseline.status != BuildStatus::ok) return baseline_failure(baseline);
  const fs::path plan_file = write_timing_plan(run, fs::path());
  return time_with_harness(run, plan_file, vendor, baseline.library, nullptr, true);
}

TimingRun::TimingRun(EvaluationRun& run, fs::path candidate, bool early)
    : m_run(run), m_early(early && !is_ranked(run.task)) {
  if (m_early) {
    m_release_file = run.scratch / "timing.release";
    std::error_code ignored;
    fs::remove(m_release_file, ignored);
  }
  const fs::path plan_file = is_ranked(run.task) ? fs::path() : write_timing_plan(run, m_release_file);
  m_result = std::async(std::launch::async, [this, plan_file, candidate = std::move(candidate)]() -> TimingResult {
    const BuildOutcome baseline = build_baseline(m_run);
    if (baseline.status != BuildStatus::ok) return baseline_failure(baseline);
    if (is_ranked(m_run.task)) return run_ranked_timing(m_run, candidate, baseline.library);
    return time_with_harness(m_run, plan_file, candidate, baseline.library, m_early ? &m_released_ns : nullptr);
  });
}

TimingRun::~TimingRun() {
  if (!m_result.valid()) return;
  if (m_early && !m_decided) say("stop");
  m_result.wait();
}

void TimingRun::say(const char* word) {
  m_decided = true;
  if (std::string_view(word) == "go") m_released_ns = timing_steady_ns();
  write_file_atomic(m_release_file, std::string(word) + "\n");
}

void TimingRun::release() {
  if (!m_early || m_decided) return;
  m_lock = acquire_timing_lock(m_run, &m_lock_failure);
  say(m_lock ? "go" : "stop");
}

void TimingRun::cancel() {
  if (m_early && !m_decided) say("stop");
}

TimingResult TimingRun::get() {
  TimingResult result = m_result.get();
  if (m_lock) result.lock_wait_s = m_lock->waited_s();
  m_lock.reset();
  if (m_lock_failure) result.failure = m_lock_failure;
  return result;
}

}  // namespace evoteam::eval
