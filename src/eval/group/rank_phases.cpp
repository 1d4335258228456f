// The phases of an evaluation for a task with a ranks axis: like eval_phases.cpp, but every plan runs as one
// group of processes per group size (eval/rank_group.hpp), groups one after another (they share the GPUs).
#include <evoteam/core/clock.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

#include <algorithm>
#include <chrono>

#include "eval/device_lock.hpp"
#include "eval/eval_phases.hpp"
#include "eval/group/rank_group.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Starting W processes, each initialising CUDA and joining the communicator, takes seconds; a group that has not
// formed after this long will not.
constexpr double k_group_init_timeout_s = 120;

int ranks_axis_index(const Task& task) {
  for (std::size_t i = 0; i < task.axes.size(); ++i)
    if (task.axes[i].name == task.ranks_axis) return static_cast<int>(i);
  return -1;
}

GroupLaunch launch_for(const EvaluationRun& run, const std::string& name, nlohmann::json plan, std::int64_t ranks,
                       HarnessSpec spec) {
  GroupLaunch launch;
  launch.name = name + "-w" + std::to_string(ranks);
  launch.plan = std::move(plan);
  launch.ranks = ranks;
  launch.ranks_axis = ranks_axis_index(run.task);
  launch.spec = std::move(spec);
  launch.init_timeout_s = k_group_init_timeout_s;
  return launch;
}

bool references_present(const Task& task, const fs::path& dir, const Trial& trial, std::int64_t ranks) {
  for (std::int64_t rank = 0; rank < ranks; ++rank)
    for (const TensorSpec& output : task.outputs)
      if (!output.scratch &&
          !fs::is_regular_file(dir / (trial.reference_key + ".r" + std::to_string(rank) + "." + output.name + ".bin")))
        return false;
  return fs::is_regular_file(dir / (trial.reference_key + ".json"));
}

// Records of several merged groups as one run, for the single-process judges.
HarnessRun concatenate(const std::vector<HarnessRun>& runs) {
  HarnessRun all;
  for (const HarnessRun& run : runs) {
    all.process = run.process;
    all.records_truncated = all.records_truncated || run.records_truncated;
    all.records.insert(all.records.end(), run.records.begin(), run.records.end());
  }
  return all;
}

}  // namespace

std::optional<Judgement> too_few_gpus_for_any_group(const EvaluationRun& run) {
  const int gpus = visible_gpu_count();
  std::int64_t smallest = 0;
  for (const Workload& workload : run.task.workloads) {
    const std::int64_t ranks = workload.axes.at(run.task.ranks_axis);
    smallest = smallest == 0 ? ranks : std::min(smallest, ranks);
  }
  if (smallest <= gpus) return std::nullopt;
  return infra_error(
      "no workload of task " + run.task.name + " can run: the smallest group needs " + std::to_string(smallest) +
          " GPUs and this machine has " + std::to_string(gpus),
      {{"target", "cuda"}, {"gpus", gpus}, {"min_devices", run.task.min_devices}, {"smallest_group", smallest}});
}

std::optional<Judgement> prepare_ranked_references(EvaluationRun& run, std::uint64_t secret) {
  const auto start = Clock::now();
  const EvalSettings& settings = run.shared.settings;
  constexpr double k_gpu_l2_bound = 128.0 * (1 << 20);
  run.battery = design_battery(run.task, settings.correctness, settings.timing, secret, k_gpu_l2_bound);
  skip_unrunnable_workloads(run.battery, run.task, visible_gpu_count());
  if (run.battery.rotation.empty())
    return infra_error("no workload of task " + run.task.name + " fits the GPUs of this machine");
  BuildOutcome reference;
  if (std::optional<Judgement> failure = build_harness_and_reference(run, &reference)) return failure;
  evoteam::create_directories(run.reference_dir);
  std::vector<int> missing;
  for (const Trial& trial : run.battery.trials)
    if (!references_present(run.task, run.reference_dir, trial,
                            group_size(run.task, run.battery.workloads[static_cast<std::size_t>(trial.workload)].axes)))
      missing.push_back(trial.id);
  run.references_cached = missing.empty();
  const double stage_timeout = settings.stages.reference.timeout_s;
  for (const auto& [ranks, ids] : trials_by_group(run.battery, run.task, missing)) {
    nlohmann::json plan = base_plan(run.task, run.battery, settings.correctness, "reference");
    add_trials(plan, run.battery, ids, run.reference_dir,
               std::vector<double>(run.battery.trials.size(), stage_timeout));
    HarnessSpec spec = harness_spec(run, run.scratch / "plan-reference.json", stage_timeout);
    spec.reference = reference.library;
    if (run.reference_dir.parent_path() != run.scratch) spec.writable.push_back(run.reference_dir);
    const GroupRun group = run_group(run.shared.runner, launch_for(run, "reference", plan, ranks, spec));
    const HarnessRun merged = merge_group(group);
    if (std::optional<Judgement> failure = judge_group_process(group, merged, run.battery, true)) return failure;
    for (const nlohmann::json* record : merged.all("reference")) {
      const Trial& trial = run.battery.trial(record->value("trial", 0));
      write_json_atomic(run.reference_dir / (trial.reference_key + ".json"),
                        {{"wall_s", record->value("wall_s", 0.0)}});
    }
  }
  if (std::optional<Judgement> failure = load_call_deadlines(run)) return failure;
  run.reference_s = seconds_since(start);
  return std::nullopt;
}

std::optional<Judgement> run_ranked_correctness(EvaluationRun& run, const fs::path& candidate) {
  const EvalSettings& settings = run.shared.settings;
  std::vector<int> ids;
  for (const Trial& trial : run.battery.trials)
    if (trial.correctness) ids.push_back(trial.id);
  const bool determinism = settings.correctness.determinism && run.task.deterministic;
  std::vector<HarnessRun> merged_groups;
  for (const auto& [ranks, group_ids] : trials_by_group(run.battery, run.task, ids)) {
    nlohmann::json plan = base_plan(run.task, run.battery, settings.correctness, "correctness");
    add_trials(plan, run.battery, group_ids, run.reference_dir, run.deadlines_s);
    // Each group repeats its own first trial for the bitwise check.
    plan["determinism_trial"] = determinism ? group_ids.front() : -1;
    HarnessSpec spec = harness_spec(run, run.scratch / "plan-correctness.json", settings.stages.correctness.timeout_s);
    spec.candidate = candidate;
    const GroupRun group = run_group(run.shared.runner, launch_for(run, "correctness", plan, ranks, spec));
    HarnessRun merged = merge_group(group);
    if (std::optional<Judgement> failure = judge_group_process(group, merged, run.battery, false)) return failure;
    merged_groups.push_back(std::move(merged));
  }
  const HarnessRun all = concatenate(merged_groups);
  Judgement judgement = judge_correctness(all, run.battery);
  if (judgement.verdict != Verdict::pass) return judgement;
  return judge_rank_agreement(all, run.battery);
}

TimingResult run_ranked_timing(EvaluationRun& run, const fs::path& candidate, const fs::path& baseline) {
  TimingResult result;
  const EvalSettings& settings = run.shared.settings;
  std::map<std::int64_t, nlohmann::json> workloads_by_group;
  std::map<std::int64_t, std::vector<int>> ids_by_group;
  std::map<std::int64_t, double> deadline_by_group;
  for (const auto& [workload, sets] : run.battery.rotation) {
    const std::int64_t ranks = group_size(run.task, run.battery.workloads[static_cast<std::size_t>(workload)].axes);
    std::vector<int> probes;
    if (auto found = run.battery.probes.find(workload); found != run.battery.probes.end()) probes = found->second;
    std::vector<int>& ids = ids_by_group[ranks];
    ids.insert(ids.end(), sets.begin(), sets.end());
    ids.insert(ids.end(), probes.begin(), probes.end());
    for (int id : ids)
      deadline_by_group[ranks] = std::max(deadline_by_group[ranks], run.deadlines_s[static_cast<std::size_t>(id)]);
    workloads_by_group[ranks].push_back({{"workload", workload}, {"sets", sets}, {"probes", probes}});
  }
  // Every GPU of this machine is taken by some group; the device every evaluation locks stands for them all.
  std::optional<DeviceLock> lock = acquire_timing_lock(run, &result.failure, &result.lock_wait_s);
  if (!lock) return result;
  std::vector<HarnessRun> merged_groups;
  for (const auto& [ranks, ids] : ids_by_group) {
    nlohmann::json plan = base_plan(run.task, run.battery, settings.correctness, "timing");
    add_trials(plan, run.battery, ids, run.reference_dir, run.deadlines_s);
    plan["timing"] = timing_settings(settings.timing, workloads_by_group[ranks], deadline_by_group[ranks]);
    HarnessSpec spec = harness_spec(run, run.scratch / "plan-timing.json", settings.stages.timing.timeout_s);
    spec.candidate = candidate;
    spec.baseline = baseline;
    const GroupRun group = run_group(run.shared.runner, launch_for(run, "timing", plan, ranks, spec));
    HarnessRun merged = merge_group(group);
    if (std::optional<Judgement> failure = judge_group_process(group, merged, run.battery, false)) {
      result.failure = failure;
      return result;
    }
    merged_groups.push_back(std::move(merged));
  }
  lock.reset();
  std::optional<Peaks> peaks = device_peaks(run, false);
  result.outcome = analyze_timing(concatenate(merged_groups), run.battery, settings.timing.bootstrap_resamples,
                                  settings.timing.fresh_ratio, peaks);
  result.failure = result.outcome.failure;
  return result;
}

}  // namespace evoteam::eval
