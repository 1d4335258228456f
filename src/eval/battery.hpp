#pragma once
// The correctness battery and the timing rotation of one evaluation: which workloads (the task's, plus hidden
// edge shapes derived from its var axes), which trials (seeds salted with a secret, distributions, poison
// patterns), and which input sets rotate during timing. Pure computation; the plan files come from it.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/eval/eval_settings.hpp>
#include <evoteam/task/task.hpp>

namespace evoteam::eval {

struct BatteryWorkload {
  std::string name;
  std::map<std::string, std::int64_t> axes;  // every axis
  bool hidden = false;
  std::vector<std::int64_t> elements;           // per tensor, task order
  std::vector<std::int64_t> int_low, int_high;  // per tensor, for uniform_int generators
  std::uint64_t set_bytes = 0;                  // all tensors of one input set
  double flops = 0;
  double bytes = 0;
};

struct Trial {
  int id = 0;
  int workload = 0;
  int public_seed = 0;     // what evidence shows; the salted seed stays secret
  std::uint64_t seed = 0;  // salted
  std::string distribution;
  int poison = 0;
  bool correctness = true;    // false: an extra rotation set for timing only
  std::string reference_key;  // file name stem of the cached reference outputs
};

struct Battery {
  std::vector<BatteryWorkload> workloads;  // the task's workloads first, then the hidden shapes
  std::vector<Trial> trials;
  std::map<int, std::vector<int>> rotation;  // visible workload -> trial ids of its timing input sets
  std::map<int, std::vector<int>> probes;    // visible workload -> trial ids of its fresh probe sets
  int determinism_trial = -1;
  // Workloads left out because the machine lacks the GPUs their group needs (eval/rank_group.hpp): reported,
  // never passed.
  nlohmann::json skipped_workloads = nlohmann::json::array();
  std::vector<std::string> distributions;
  int seeds = 0;

  const Trial& trial(int id) const { return trials.at(static_cast<std::size_t>(id)); }
  nlohmann::json describe() const;  // the protocol summary recorded in results (no salted seeds)
};

// `correctness` shapes the battery, `timing` its rotation and probe sets. `llc_bytes`: the last-level cache size
// the rotation should exceed (0 when unknown).
Battery design_battery(const Task& task, const CorrectnessSettings& correctness, const TimingSettings& timing,
                       std::uint64_t secret, double llc_bytes);

// The first workload whose tensors cannot be held in `memory_bytes` (the machine's memory, or the address-space
// limit the harness runs under): one input set with the reference's outputs beside the candidate's needs about
// twice its set bytes. Says the workload and both sizes; nothing when every workload fits (or memory is unknown: 0).
std::optional<std::string> workload_beyond_memory(const Battery& battery, std::uint64_t memory_bytes);

// The hidden edge shapes for a task (also used by tests): var axes set from eval.correctness.edge_values.
std::vector<std::map<std::string, std::int64_t>> hidden_shapes(const Task& task,
                                                               const std::vector<std::int64_t>& edge_values,
                                                               std::int64_t edge_base);

}  // namespace evoteam::eval
