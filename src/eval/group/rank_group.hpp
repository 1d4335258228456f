#pragma once
// Tasks with a ranks axis (kernels/README.md, "Multi-GPU tasks"): every workload runs as a group of W harness
// processes, one GPU each, W being the workload's value of the ranks axis. This module launches the W processes
// of one plan (one plan file per rank, a shared scratch directory where rank 0 publishes the communicator ids, an
// abort file raised when one rank fails so its peers stop waiting for it), merges the ranks' records into the
// single-process shape eval/classify.hpp judges (times: the maximum over ranks; status: the worst rank's), checks
// that the ranks agree bit for bit, and leaves out workloads that need more GPUs than the machine has
// (reported as skipped). The phases (rank_phases.cpp) mirror eval_phases.hpp for such tasks.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/core/process.hpp>
#include <evoteam/task/task.hpp>

#include "eval/battery.hpp"
#include "eval/classify.hpp"
#include "eval/harness_run.hpp"

namespace evoteam::eval {

struct EvaluationRun;
struct TimingResult;

bool is_ranked(const Task& task);
// A workload's group size (1 for tasks without a ranks axis).
std::int64_t group_size(const Task& task, const std::map<std::string, std::int64_t>& axes);

// GPUs this machine offers the evaluator: /dev/nvidia<N> device nodes, narrowed by CUDA_VISIBLE_DEVICES when set.
int visible_gpu_count();

// Hidden edge shapes of a ranked task: the ranks axis keeps each value the workloads use, every other var axis
// takes each edge value in turn (the rest at edge_base); shapes violating the constraints are dropped.
std::vector<std::map<std::string, std::int64_t>> ranked_hidden_shapes(const Task& task,
                                                                      const std::vector<std::int64_t>& edge_values,
                                                                      std::int64_t edge_base);

// Removes the workloads (and their trials, rotation sets and probes) whose group needs more than `gpus` GPUs,
// renumbering what stays, and lists them in battery.skipped_workloads. Returns how many were removed.
int skip_unrunnable_workloads(Battery& battery, const Task& task, int gpus);

// Trial ids grouped by group size, ascending; the order within a group is kept.
std::map<std::int64_t, std::vector<int>> trials_by_group(const Battery& battery, const Task& task,
                                                         const std::vector<int>& ids);

// One plan for a group of `ranks` processes. `spec` is the single-process template (harness, libraries, sandbox,
// deadline); each rank gets its own plan file <scratch>/plan-<name>-r<rank>.json holding `plan` plus its rank.
struct GroupLaunch {
  std::string name;  // unique within the evaluation, e.g. "correctness-w4"
  nlohmann::json plan;
  std::int64_t ranks = 2;
  int ranks_axis = 0;  // index of the ranks axis in the task's axes
  HarnessSpec spec;
  double init_timeout_s = 120;
};

struct GroupRun {
  std::vector<HarnessRun> ranks;  // by rank
  int first_failed = -1;          // the rank whose process ended first without finishing (the others were stopped)
};

// The per-rank plan: `plan` plus {"ranks": {rank, device, axis, id_prefix, abort_file, init_timeout_s}}.
nlohmann::json rank_plan(const GroupLaunch& launch, int rank, const std::filesystem::path& scratch);
// The group's abort file and id prefix under `scratch`.
std::filesystem::path abort_file(const std::filesystem::path& scratch, const std::string& name);
std::filesystem::path id_prefix(const std::filesystem::path& scratch, const std::string& name);

// Runs the W processes in parallel; the first to end without finishing raises the abort file.
GroupRun run_group(ProcessRunner& runner, const GroupLaunch& launch);

// The rank to blame: the first that failed on its own (not stopped because a peer failed), else -1.
int culprit_rank(const GroupRun& group);
// One HarnessRun in the single-process shape. With a culprit: its process and records. Otherwise rank 0's
// process; per trial the worst rank's record (wall time: the maximum over ranks) with every rank's output hash
// under "output_hashes"; determinism identical only when it is on every rank; timing samples the maximum over
// ranks element by element, side work on any rank; recheck failures and input mutations from any rank.
HarnessRun merge_group(const GroupRun& group);
// judge_process on the merged run, with the blamed rank and the group size in the evidence.
std::optional<Judgement> judge_group_process(const GroupRun& group, const HarnessRun& merged, const Battery& battery,
                                             bool trusted_stage);
// NONDETERMINISTIC when, on some trial every rank passed, a rank's outputs differ from rank 0's bit for bit;
// the evidence names the ranks and their hashes.
std::optional<Judgement> judge_rank_agreement(const HarnessRun& merged, const Battery& battery);

// The phases for ranked tasks (rank_phases.cpp), called by eval_phases.cpp in place of its own.
// INFRA_ERROR when even the smallest group needs more GPUs than the machine has; device_unavailable then probes
// the GPU as for any CUDA task.
std::optional<Judgement> too_few_gpus_for_any_group(const EvaluationRun& run);
std::optional<Judgement> prepare_ranked_references(EvaluationRun& run, std::uint64_t secret);
std::optional<Judgement> run_ranked_correctness(EvaluationRun& run, const std::filesystem::path& candidate);
TimingResult run_ranked_timing(EvaluationRun& run, const std::filesystem::path& candidate,
                               const std::filesystem::path& baseline);

}  // namespace evoteam::eval
