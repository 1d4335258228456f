#include "eval/battery.hpp"
#include "eval/group/rank_group.hpp"

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>

namespace evoteam::eval {
namespace {

std::uint64_t splitmix(std::uint64_t value) {
  value += 0x9E3779B97F4A7C15ull;
  value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ull;
  value = (value ^ (value >> 27)) * 0x94D049BB133111EBull;
  return value ^ (value >> 31);
}

// GPU MODE style: public seed indices combined with a secret, so the public numbers do not reveal the inputs.
std::uint64_t salted_seed(std::uint64_t secret, int workload, int public_seed) {
  return splitmix(
      secret ^ splitmix(static_cast<std::uint64_t>(workload) * 1000003ull + static_cast<std::uint64_t>(public_seed)));
}

std::string shape_name(const std::map<std::string, std::int64_t>& axes, const Task& task) {
  std::vector<std::string> varying;
  for (const Axis& axis : task.axes)
    if (!axis.is_const) varying.push_back(axis.name + "=" + std::to_string(axes.at(axis.name)));
  return "hidden:" + join(varying, ",");
}

BatteryWorkload make_workload(const Task& task, const std::string& name,
                              const std::map<std::string, std::int64_t>& axes, bool hidden) {
  BatteryWorkload workload;
  workload.name = name;
  workload.axes = axes;
  workload.hidden = hidden;
  std::map<std::string, double> values;
  for (const auto& [axis, value] : axes) values[axis] = static_cast<double>(value);
  for (const TensorSpec* tensor : task.tensors()) {
    const std::int64_t count = tensor_elements(*tensor, axes);
    workload.elements.push_back(count);
    workload.set_bytes += static_cast<std::uint64_t>(count) * dtype_size(tensor->dtype);
    std::int64_t low = 0, high = 1;
    if (tensor->generator.kind == InputGenerator::Kind::uniform_int) {
      low = static_cast<std::int64_t>(
          std::floor(evaluate_expression(tensor->generator.low, values, tensor->name + ".generate.low")));
      high = static_cast<std::int64_t>(
          std::floor(evaluate_expression(tensor->generator.high, values, tensor->name + ".generate.high")));
    }
    workload.int_low.push_back(low);
    workload.int_high.push_back(std::max(high, low + 1));
  }
  workload.flops = workload_flops(task, axes);
  workload.bytes = workload_bytes(task, axes);
  return workload;
}

}  // namespace

std::vector<std::map<std::string, std::int64_t>> hidden_shapes(const Task& task,
                                                               const std::vector<std::int64_t>& edge_values,
                                                               std::int64_t edge_base) {
  if (!task.ranks_axis.empty()) return ranked_hidden_shapes(task, edge_values, edge_base);
  std::vector<std::string> var_axes;
  for (const Axis& axis : task.axes)
    if (!axis.is_const) var_axes.push_back(axis.name);
  std::vector<std::map<std::string, std::int64_t>> candidates;
  auto base_shape = [&] {
    std::map<std::string, std::int64_t> axes;
    for (const Axis& axis : task.axes) axes[axis.name] = axis.is_const ? axis.value : edge_base;
    return axes;
  };
  for (const std::string& axis : var_axes)
    for (std::int64_t value : edge_values) {
      std::map<std::string, std::int64_t> axes = base_shape();
      axes[axis] = value;
      candidates.push_back(axes);
    }
  if (var_axes.size() > 1)
    for (std::int64_t value : edge_values) {
      std::map<std::string, std::int64_t> axes = base_shape();
      for (const std::string& axis : var_axes) axes[axis] = value;
      candidates.push_back(axes);
    }
  std::set<std::map<std::string, std::int64_t>> seen;
  for (const Workload& workload : task.workloads) seen.insert(workload_axes(task, workload));
  std::vector<std::map<std::string, std::int64_t>> shapes;
  for (const auto& axes : candidates) {
    if (!seen.insert(axes).second) continue;
    try {
      if (violated_constraint(task, axes)) continue;
      for (const TensorSpec* tensor : task.tensors()) tensor_elements(*tensor, axes);
    } catch (const InvalidInput&) {
      continue;  // an edge value the task's shape formulas cannot take
    }
    shapes.push_back(axes);
  }
  return shapes;
}

std::optional<std::string> workload_beyond_memory(const Battery& battery, std::uint64_t memory_bytes) {
  if (memory_bytes == 0) return std::nullopt;
  for (const BatteryWorkload& workload : battery.workloads) {
    // Doubles: a set of 1e15 elements of 8 bytes, twice, is past 64 bits.
    const double needed = 2.0 * static_cast<double>(workload.set_bytes);
    if (needed <= static_cast<double>(memory_bytes)) continue;
    const auto gib = [](double bytes) { return fixed(bytes / (1024.0 * 1024.0 * 1024.0), 1) + " GiB"; };
    return "workload " + workload.name + " needs " + gib(static_cast<double>(workload.set_bytes)) +
           " for one set of its tensors and about " + gib(needed) +
           " with the reference's outputs beside the candidate's; this machine gives the harness " +
           gib(static_cast<double>(memory_bytes)) + ": refused before allocating (make the workload smaller)";
  }
  return std::nullopt;
}

Battery design_battery(const Task& task, const CorrectnessSettings& correctness, const TimingSettings& timing,
                       std::uint64_t secret, double llc_bytes) {
  // Loading the configuration refuses values that would leave a workload without trials or timing sets.
  EVOTEAM_CHECK(correctness.seeds >= 1 && !correctness.distributions.empty() && timing.rotation_min_sets >= 1 &&
                    timing.rotation_max_sets >= timing.rotation_min_sets,
                "design_battery: eval.correctness or eval.timing holds values the configuration checks should refuse");
  Battery battery;
  battery.seeds = correctness.seeds;
  battery.distributions = task.distributions.empty() ? correctness.distributions : task.distributions;
  for (const Workload& workload : task.workloads)
    battery.workloads.push_back(make_workload(task, workload.name, workload_axes(task, workload), false));
  const std::size_t visible = battery.workloads.size();
  for (const auto& axes : hidden_shapes(task, correctness.edge_values, correctness.edge_base))
    battery.workloads.push_back(make_workload(task, shape_name(axes, task), axes, true));

  auto add_trial = [&](int workload, int public_seed, bool for_correctness) {
    Trial trial;
    trial.id = static_cast<int>(battery.trials.size());
    trial.workload = workload;
    trial.public_seed = public_seed;
    trial.seed = salted_seed(secret, workload, public_seed);
    // Seeds cycle through the distributions, so every workload sees each of them.
    trial.distribution =
        battery.distributions[static_cast<std::size_t>(public_seed - 1) % battery.distributions.size()];
    trial.poison = trial.id % 3;
    trial.correctness = for_correctness;
    std::string key = task.content_hash + "|" + battery.workloads[static_cast<std::size_t>(workload)].name + "|" +
                      std::to_string(trial.seed) + "|" + trial.distribution;
    for (const auto& [axis, value] : battery.workloads[static_cast<std::size_t>(workload)].axes)
      key += "|" + axis + "=" + std::to_string(value);
    trial.reference_key = sha256_hex(key).substr(0, 32);
    battery.trials.push_back(trial);
    return trial.id;
  };
  for (std::size_t w = 0; w < visible; ++w)
    for (int seed = 1; seed <= battery.seeds; ++seed) add_trial(static_cast<int>(w), seed, true);
  // Hidden shapes are cheap: one trial each, distributions cycling across shapes.
  for (std::size_t w = visible; w < battery.workloads.size(); ++w)
    add_trial(static_cast<int>(w), static_cast<int>(w - visible) % static_cast<int>(battery.distributions.size()) + 1,
              true);
  battery.determinism_trial = battery.trials.empty() ? -1 : 0;

  const int min_sets = timing.rotation_min_sets;
  const int max_sets = timing.rotation_max_sets;
  const double max_bytes = static_cast<double>(timing.rotation_max_bytes);
  const double target = std::min(llc_bytes * timing.rotation_llc_factor, max_bytes);
  for (std::size_t w = 0; w < visible; ++w) {
    const double set_bytes = std::max<double>(1.0, static_cast<double>(battery.workloads[w].set_bytes));
    int wanted = std::max(min_sets, static_cast<int>(std::ceil(target / set_bytes)));
    wanted = std::min(wanted, std::max(min_sets, static_cast<int>(max_bytes / set_bytes)));
    wanted = std::min(wanted, max_sets);
    std::vector<int>& sets = battery.rotation[static_cast<int>(w)];
    for (const Trial& trial : battery.trials)
      if (trial.workload == static_cast<int>(w) && static_cast<int>(sets.size()) < wanted) sets.push_back(trial.id);
    int seed = battery.seeds + 1;
    for (; static_cast<int>(sets.size()) < wanted; ++seed) sets.push_back(add_trial(static_cast<int>(w), seed, false));
    std::vector<int>& probes = battery.probes[static_cast<int>(w)];
    for (int probe = 0; probe < timing.fresh_probes; ++probe, ++seed)
      probes.push_back(add_trial(static_cast<int>(w), seed, false));
  }
  return battery;
}

nlohmann::json Battery::describe() const {
  int hidden = 0, correctness_trials = 0;
  for (const BatteryWorkload& workload : workloads) hidden += workload.hidden ? 1 : 0;
  for (const Trial& trial : trials) correctness_trials += trial.correctness ? 1 : 0;
  nlohmann::json rotation_json = nlohmann::json::object();
  for (const auto& [workload, sets] : rotation)
    rotation_json[workloads[static_cast<std::size_t>(workload)].name] = sets.size();
  nlohmann::json description = {{"seeds_per_workload", seeds},
                                {"distributions", distributions},
                                {"correctness_trials", correctness_trials},
                                {"hidden_shapes", hidden},
                                {"determinism_check", determinism_trial >= 0},
                                {"rotation_sets", rotation_json}};
  if (!skipped_workloads.empty()) description["skipped_workloads"] = skipped_workloads;
  return description;
}

}  // namespace evoteam::eval
