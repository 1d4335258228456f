#include "plan.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace evoteam_harness {
namespace {

DType parse_dtype(const std::string& name) {
  if (name == "float32") return DType::float32;
  if (name == "float64") return DType::float64;
  if (name == "int32") return DType::int32;
  if (name == "int64") return DType::int64;
  if (name == "uint8") return DType::uint8;
  if (name == "float16") return DType::float16;
  if (name == "bfloat16") return DType::bfloat16;
  return DType::other;
}

}  // namespace

std::uint64_t rank_seed(std::uint64_t seed, int rank) {
  std::uint64_t value = seed ^ (0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(rank) + 1));
  value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ull;
  value = (value ^ (value >> 27)) * 0x94D049BB133111EBull;
  return value ^ (value >> 31);
}

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::float32:
    case DType::int32: return 4;
    case DType::float64:
    case DType::int64: return 8;
    case DType::uint8: return 1;
    case DType::float16:
    case DType::bfloat16: return 2;
    case DType::other: break;
  }
  return 1;
}

const TrialPlan& Plan::trial(int id) const {
  for (const TrialPlan& entry : trials)
    if (entry.id == id) return entry;
  throw std::runtime_error("plan: no trial " + std::to_string(id));
}

Plan load_plan(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read plan " + path);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json root = nlohmann::json::parse(text.str());
  Plan plan;
  plan.mode = root.at("mode").get<std::string>();
  for (const auto& item : root.at("tensors")) {
    TensorPlan tensor;
    tensor.name = item.at("name").get<std::string>();
    tensor.is_output = item.at("output").get<bool>();
    tensor.is_scratch = item.value("scratch", false);
    tensor.dtype = parse_dtype(item.at("dtype").get<std::string>());
    if (tensor.dtype == DType::other)
      throw std::runtime_error("plan: dtype " + item.at("dtype").get<std::string>() +
                               " is not supported by the harness");
    tensor.generator = item.value("generator", "battery");
    tensor.hook = item.value("hook", "");
    Tolerance tolerance;
    if (item.contains("tolerance")) {
      const auto& tol = item["tolerance"];
      tolerance = {tol.at("rtol").get<double>(), tol.at("atol").get<double>(), tol.at("atol_rms").get<double>(),
                   tol.at("normwise").get<double>()};
    }
    plan.tensors.push_back(tensor);
    plan.tolerances.push_back(tolerance);
  }
  for (const auto& item : root.at("workloads")) {
    WorkloadPlan workload;
    workload.id = item.at("id").get<int>();
    workload.name = item.at("name").get<std::string>();
    workload.hidden = item.value("hidden", false);
    workload.axes = item.at("axes").get<std::vector<std::int64_t>>();
    workload.elements = item.at("elements").get<std::vector<std::int64_t>>();
    workload.int_low = item.value("int_low", std::vector<std::int64_t>(plan.tensors.size(), 0));
    workload.int_high = item.value("int_high", std::vector<std::int64_t>(plan.tensors.size(), 1));
    if (workload.elements.size() != plan.tensors.size()) throw std::runtime_error("plan: elements per tensor mismatch");
    plan.workloads.push_back(workload);
  }
  for (const auto& item : root.at("trials")) {
    TrialPlan trial;
    trial.id = item.at("id").get<int>();
    trial.workload = item.at("workload").get<int>();
    trial.seed = item.at("seed").get<std::uint64_t>();
    trial.distribution = item.at("distribution").get<std::string>();
    trial.poison = item.value("poison", 0);
    trial.reference = item.value("reference", "");
    trial.inputs = item.value("inputs", "");
    trial.oracle = item.value("oracle", "");
    trial.deadline_s = item.value("deadline_s", 10.0);
    if (trial.workload < 0 || trial.workload >= static_cast<int>(plan.workloads.size()))
      throw std::runtime_error("plan: trial names an unknown workload");
    plan.trials.push_back(trial);
  }
  plan.guard_bytes = root.value("guard_bytes", std::size_t{4096});
  plan.determinism_trial = root.value("determinism_trial", -1);
  if (root.contains("timing")) {
    const auto& timing = root["timing"];
    for (const auto& item : timing.at("workloads")) {
      TimingWorkloadPlan entry;
      entry.workload = item.at("workload").get<int>();
      entry.sets = item.at("sets").get<std::vector<int>>();
      entry.probes = item.value("probes", std::vector<int>{});
      plan.timing.push_back(entry);
    }
    plan.stop.min_samples = timing.at("min_samples").get<std::size_t>();
    plan.stop.min_time_s = timing.at("min_time_s").get<double>();
    plan.stop.max_time_s = timing.at("max_time_s").get<double>();
    plan.stop.max_noise = timing.at("max_noise").get<double>();
    plan.stop.noise_window = timing.at("noise_window").get<std::size_t>();
    plan.stop.noise_stability = timing.at("noise_stability").get<double>();
    plan.warmup_s = timing.at("warmup_s").get<double>();
    plan.min_sample_s = timing.at("min_sample_s").get<double>();
    plan.side_work_fraction = timing.at("side_work_fraction").get<double>();
    plan.call_deadline_s = timing.at("call_deadline_s").get<double>();
    plan.thread_cpu_clock = timing.value("clock", std::string("thread_cpu")) == "thread_cpu";
    plan.release_file = timing.value("release_file", std::string());
    plan.release_wait_s = timing.value("release_wait_s", 0.0);
  }
  if (root.contains("profile")) {
    plan.profile_trial = root["profile"].at("trial").get<int>();
    plan.profile_time_s = root["profile"].at("time_s").get<double>();
  }
  if (root.contains("ranks")) {
    const auto& ranks = root["ranks"];
    plan.ranks.enabled = true;
    plan.ranks.rank = ranks.at("rank").get<int>();
    plan.ranks.device = ranks.value("device", plan.ranks.rank);
    plan.ranks.axis = ranks.at("axis").get<int>();
    plan.ranks.id_prefix = ranks.at("id_prefix").get<std::string>();
    plan.ranks.abort_file = ranks.at("abort_file").get<std::string>();
    plan.ranks.init_timeout_s = ranks.value("init_timeout_s", 120.0);
    for (TrialPlan& trial : plan.trials) {
      const WorkloadPlan& workload = plan.workloads[static_cast<std::size_t>(trial.workload)];
      if (plan.ranks.axis < 0 || plan.ranks.axis >= static_cast<int>(workload.axes.size()) ||
          plan.ranks.rank >= workload.axes[static_cast<std::size_t>(plan.ranks.axis)])
        throw std::runtime_error("plan: rank " + std::to_string(plan.ranks.rank) + " is outside workload " +
                                 workload.name + "'s group");
      trial.seed = rank_seed(trial.seed, plan.ranks.rank);
      if (!trial.reference.empty()) trial.reference += ".r" + std::to_string(plan.ranks.rank);
    }
  }
  return plan;
}

}  // namespace evoteam_harness
