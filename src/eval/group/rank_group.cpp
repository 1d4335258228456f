// Groups of rank processes: which workloads a machine can run, the W processes of one plan, and their records
// merged into the shape the single-process classification understands.
#include "eval/group/rank_group.hpp"

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <future>
#include <regex>
#include <set>
#include <sstream>

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;

// How bad a trial status is, for picking the worst rank's record.
int badness(const std::string& status) {
  if (status == "ok") return 0;
  if (status == "oob_write") return 5;
  if (status == "input_mutated") return 4;
  if (status == "unwritten_output") return 3;
  if (status == "nonfinite_mismatch") return 2;
  return 1;
}

bool failed_alone(const HarnessRun& run) {
  return !(run.finished() && run.process.ok()) && run.last("peer_failed") == nullptr;
}

nlohmann::json tagged(const nlohmann::json& record, int rank) {
  nlohmann::json copy = record;
  copy["rank"] = rank;
  return copy;
}

// Element-wise maximum of the arrays under `key` (ranks take the same samples in the same order).
void max_arrays(nlohmann::json& into, const nlohmann::json& other, const char* key) {
  if (!into.contains(key) || !other.contains(key) || !into[key].is_array() || !other[key].is_array()) return;
  nlohmann::json& mine = into[key];
  const nlohmann::json& theirs = other[key];
  for (std::size_t i = 0; i < mine.size() && i < theirs.size(); ++i)
    if (mine[i].is_number() && theirs[i].is_number())
      mine[i] = std::max(mine[i].get<double>(), theirs[i].get<double>());
}

void merge_trial(nlohmann::json& merged, const nlohmann::json& record, int rank) {
  const double wall = std::max(merged.value("wall_s", 0.0), record.value("wall_s", 0.0));
  nlohmann::json hashes = merged.value("output_hashes", nlohmann::json::object());
  if (record.contains("output_hash")) hashes[std::to_string(rank)] = record["output_hash"];
  if (badness(record.value("status", "ok")) > badness(merged.value("status", "ok"))) merged = tagged(record, rank);
  merged["wall_s"] = wall;
  merged["output_hashes"] = hashes;
}

void merge_timing(nlohmann::json& merged, const nlohmann::json& record, int rank) {
  for (const char* key :
       {"candidate", "baseline", "candidate_wall", "baseline_wall", "candidate_probe", "baseline_probe"})
    max_arrays(merged, record, key);
  for (const char* key : {"timed_s", "elapsed_s", "measured_s", "setup_s", "warmup_s"})
    if (record.contains(key)) merged[key] = std::max(merged.value(key, 0.0), record.value(key, 0.0));
  if (record.value("side_work", false) && !merged.value("side_work", false)) {
    for (const char* key :
         {"side_work", "side_work_evidence", "threads_before", "threads_after", "kernels_outside_windows"})
      if (record.contains(key)) merged[key] = record[key];
    merged["side_work_rank"] = rank;
  }
}

}  // namespace

bool is_ranked(const Task& task) { return !task.ranks_axis.empty(); }

std::int64_t group_size(const Task& task, const std::map<std::string, std::int64_t>& axes) {
  if (!is_ranked(task)) return 1;
  const auto found = axes.find(task.ranks_axis);
  return found == axes.end() ? 1 : found->second;
}

int visible_gpu_count() {
  static const std::regex node("nvidia[0-9]+");
  int nodes = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/dev", error))
    if (std::regex_match(entry.path().filename().string(), node)) ++nodes;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr) return nodes;
  // A list of indices or UUIDs: its length caps what the processes can see (an empty list hides every GPU).
  int listed = 0;
  std::stringstream list(visible);
  std::string item;
  while (std::getline(list, item, ','))
    if (!item.empty()) ++listed;
  return std::min(nodes, listed);
}

std::vector<std::map<std::string, std::int64_t>> ranked_hidden_shapes(const Task& task,
                                                                      const std::vector<std::int64_t>& edge_values,
                                                                      std::int64_t edge_base) {
  std::set<std::int64_t> group_sizes;
  std::set<std::map<std::string, std::int64_t>> seen;
  for (const Workload& workload : task.workloads) {
    group_sizes.insert(workload.axes.at(task.ranks_axis));
    seen.insert(workload_axes(task, workload));
  }
  std::vector<std::map<std::string, std::int64_t>> shapes;
  for (std::int64_t ranks : group_sizes)
    for (const Axis& varied : task.axes) {
      if (varied.is_const || varied.name == task.ranks_axis) continue;
      for (std::int64_t value : edge_values) {
        std::map<std::string, std::int64_t> axes;
        for (const Axis& axis : task.axes) axes[axis.name] = axis.is_const ? axis.value : edge_base;
        axes[task.ranks_axis] = ranks;
        axes[varied.name] = value;
        if (!seen.insert(axes).second) continue;
        try {
          if (violated_constraint(task, axes)) continue;
          for (const TensorSpec* tensor : task.tensors()) tensor_elements(*tensor, axes);
        } catch (const InvalidInput&) {
          continue;
        }
        shapes.push_back(axes);
      }
    }
  return shapes;
}

int skip_unrunnable_workloads(Battery& battery, const Task& task, int gpus) {
  std::vector<int> new_index(battery.workloads.size(), -1);
  std::vector<BatteryWorkload> kept;
  for (std::size_t w = 0; w < battery.workloads.size(); ++w) {
    const std::int64_t ranks = group_size(task, battery.workloads[w].axes);
    if (ranks <= gpus) {
      new_index[w] = static_cast<int>(kept.size());
      kept.push_back(battery.workloads[w]);
    } else if (!battery.workloads[w].hidden) {
      battery.skipped_workloads.push_back(
          {{"workload", battery.workloads[w].name},
           {"ranks", ranks},
           {"gpus", gpus},
           {"reason", "needs " + std::to_string(ranks) + " GPUs; this machine has " + std::to_string(gpus)}});
    }
  }
  const int removed = static_cast<int>(battery.workloads.size() - kept.size());
  if (removed == 0) return 0;
  std::vector<int> new_trial(battery.trials.size(), -1);
  std::vector<Trial> trials;
  for (const Trial& trial : battery.trials) {
    if (new_index[static_cast<std::size_t>(trial.workload)] < 0) continue;
    Trial moved = trial;
    moved.id = static_cast<int>(trials.size());
    moved.workload = new_index[static_cast<std::size_t>(trial.workload)];
    new_trial[static_cast<std::size_t>(trial.id)] = moved.id;
    trials.push_back(moved);
  }
  auto remap = [&](const std::map<int, std::vector<int>>& old) {
    std::map<int, std::vector<int>> fresh;
    for (const auto& [workload, ids] : old) {
      if (new_index[static_cast<std::size_t>(workload)] < 0) continue;
      std::vector<int>& target = fresh[new_index[static_cast<std::size_t>(workload)]];
      for (int id : ids) target.push_back(new_trial[static_cast<std::size_t>(id)]);
    }
    return fresh;
  };
  battery.rotation = remap(battery.rotation);
  battery.probes = remap(battery.probes);
  const int determinism = battery.determinism_trial;
  battery.determinism_trial = determinism >= 0 ? new_trial[static_cast<std::size_t>(determinism)] : -1;
  if (battery.determinism_trial < 0 && !trials.empty()) battery.determinism_trial = 0;
  battery.workloads = std::move(kept);
  battery.trials = std::move(trials);
  return removed;
}

std::map<std::int64_t, std::vector<int>> trials_by_group(const Battery& battery, const Task& task,
                                                         const std::vector<int>& ids) {
  std::map<std::int64_t, std::vector<int>> groups;
  for (int id : ids) {
    const Trial& trial = battery.trial(id);
    groups[group_size(task, battery.workloads[static_cast<std::size_t>(trial.workload)].axes)].push_back(id);
  }
  return groups;
}

fs::path abort_file(const fs::path& scratch, const std::string& name) { return scratch / ("group-" + name + ".abort"); }
fs::path id_prefix(const fs::path& scratch, const std::string& name) { return scratch / ("group-" + name + ".comm"); }

nlohmann::json rank_plan(const GroupLaunch& launch, int rank, const fs::path& scratch) {
  nlohmann::json plan = launch.plan;
  plan["ranks"] = {{"rank", rank},
                   {"device", rank},
                   {"axis", launch.ranks_axis},
                   {"id_prefix", id_prefix(scratch, launch.name).string()},
                   {"abort_file", abort_file(scratch, launch.name).string()},
                   {"init_timeout_s", launch.init_timeout_s}};
  return plan;
}

GroupRun run_group(ProcessRunner& runner, const GroupLaunch& launch) {
  const fs::path& scratch = launch.spec.scratch;
  const fs::path abort_path = abort_file(scratch, launch.name);
  std::error_code ignored;
  fs::remove(abort_path, ignored);
  // The ranks' /dev/shm (NCCL's shared-memory transport) is one directory of this evaluation's scratch.
  const fs::path shared_memory = scratch / ("group-" + launch.name + ".shm");
  evoteam::create_directories(shared_memory);
  std::vector<std::future<HarnessRun>> pending;
  for (int rank = 0; rank < launch.ranks; ++rank) {
    HarnessSpec spec = launch.spec;
    spec.plan = scratch / ("plan-" + launch.name + "-r" + std::to_string(rank) + ".json");
    spec.rank_group = true;
    spec.shared_memory = shared_memory;
    write_json_atomic(spec.plan, rank_plan(launch, rank, scratch));
    pending.push_back(std::async(std::launch::async, [&runner, spec] { return run_harness(runner, spec); }));
  }
  GroupRun group;
  group.ranks.resize(pending.size());
  std::vector<bool> collected(pending.size(), false);
  for (std::size_t left = pending.size(); left > 0;) {
    for (std::size_t rank = 0; rank < pending.size(); ++rank) {
      if (collected[rank] || pending[rank].wait_for(std::chrono::milliseconds(5)) != std::future_status::ready)
        continue;
      group.ranks[rank] = pending[rank].get();
      collected[rank] = true;
      --left;
      const HarnessRun& ended = group.ranks[rank];
      // A rank that ended without finishing leaves its peers waiting inside a collective: stop them.
      if (!(ended.finished() && ended.process.ok()) && group.first_failed < 0) {
        group.first_failed = static_cast<int>(rank);
        write_file_atomic(abort_path, "rank " + std::to_string(rank) + " failed\n");
      }
    }
  }
  fs::remove_all(shared_memory, ignored);
  return group;
}

int culprit_rank(const GroupRun& group) {
  if (group.first_failed >= 0 && failed_alone(group.ranks[static_cast<std::size_t>(group.first_failed)]))
    return group.first_failed;
  for (std::size_t rank = 0; rank < group.ranks.size(); ++rank)
    if (failed_alone(group.ranks[rank])) return static_cast<int>(rank);
  return group.first_failed;
}

HarnessRun merge_group(const GroupRun& group) {
  HarnessRun merged;
  if (group.ranks.empty()) return merged;
  const int culprit = culprit_rank(group);
  if (culprit >= 0) {
    const HarnessRun& blamed = group.ranks[static_cast<std::size_t>(culprit)];
    merged.process = blamed.process;
    merged.records_truncated = blamed.records_truncated;
    for (const nlohmann::json& record : blamed.records) merged.records.push_back(tagged(record, culprit));
    return merged;
  }
  merged.process = group.ranks.front().process;
  std::map<int, std::size_t> trial_at, timing_at;  // trial id / workload -> index in merged.records
  for (std::size_t rank = 0; rank < group.ranks.size(); ++rank) {
    const HarnessRun& run = group.ranks[rank];
    merged.records_truncated = merged.records_truncated || run.records_truncated;
    for (const nlohmann::json& record : run.records) {
      const std::string event = record.value("ev", "");
      const int r = static_cast<int>(rank);
      if (event == "trial" || event == "reference") {
        const int id = record.value("trial", -1);
        if (auto found = trial_at.find(id); found != trial_at.end()) {
          merge_trial(merged.records[found->second], record, r);
        } else {
          trial_at[id] = merged.records.size();
          merged.records.push_back(tagged(record, r));
          merge_trial(merged.records.back(), record, r);
        }
      } else if (event == "timing") {
        const int workload = record.value("workload", -1);
        if (auto found = timing_at.find(workload); found != timing_at.end()) {
          merge_timing(merged.records[found->second], record, r);
        } else {
          timing_at[workload] = merged.records.size();
          merged.records.push_back(tagged(record, r));
        }
      } else if (event == "determinism") {
        // The first rank whose repeat differed speaks for the group.
        if (rank == 0 || !record.value("identical", true)) merged.records.push_back(tagged(record, r));
      } else if (event == "recheck_fail" || event == "input_mutated" || rank == 0) {
        merged.records.push_back(tagged(record, r));
      }
    }
  }
  // The last determinism record is what classification reads: put a disagreeing one last.
  std::stable_partition(merged.records.begin(), merged.records.end(), [](const nlohmann::json& record) {
    return record.value("ev", "") != "determinism" || record.value("identical", true);
  });
  return merged;
}

std::optional<Judgement> judge_group_process(const GroupRun& group, const HarnessRun& merged, const Battery& battery,
                                             bool trusted_stage) {
  std::optional<Judgement> judgement = judge_process(merged, battery, trusted_stage);
  if (!judgement) return judgement;
  const int culprit = culprit_rank(group);
  if (culprit >= 0) judgement->evidence["rank"] = culprit;
  judgement->evidence["ranks"] = group.ranks.size();
  if (culprit >= 0 && group.ranks.size() > 1)
    judgement->reason = "rank " + std::to_string(culprit) + ": " + judgement->reason;
  return judgement;
}

std::optional<Judgement> judge_rank_agreement(const HarnessRun& merged, const Battery& battery) {
  for (const nlohmann::json* record : merged.all("trial")) {
    if (record->value("status", "") != "ok" || !record->contains("output_hashes")) continue;
    const nlohmann::json& hashes = (*record)["output_hashes"];
    if (!hashes.contains("0")) continue;
    std::vector<int> disagreeing;
    for (const auto& [rank, hash] : hashes.items())
      if (hash != hashes["0"]) disagreeing.push_back(std::stoi(rank));
    if (disagreeing.empty()) continue;
    std::sort(disagreeing.begin(), disagreeing.end());
    const std::string names = join(disagreeing, ", ", [](int rank) { return std::to_string(rank); });
    nlohmann::json evidence = trial_evidence(battery, record->value("trial", -1));
    evidence["output_hashes"] = hashes;
    evidence["disagreeing_ranks"] = disagreeing;
    evidence["kind"] = "ranks_disagree";
    return Judgement{Verdict::nondeterministic,
                     "rank" + std::string(disagreeing.size() > 1 ? "s " : " ") + names +
                         " ended with different output bits than rank 0 (every rank must hold the same result)",
                     evidence};
  }
  return std::nullopt;
}

}  // namespace evoteam::eval
