#include "eval/harness_run.hpp"

#include <evoteam/core/fs.hpp>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string_view>

#include <evoteam/eval/sandbox.hpp>

namespace evoteam::eval {

nlohmann::json base_plan(const Task& task, const Battery& battery, const CorrectnessSettings& correctness,
                         const std::string& mode) {
  nlohmann::json plan;
  plan["mode"] = mode;
  nlohmann::json tensors = nlohmann::json::array();
  for (const TensorSpec* tensor : task.tensors()) {
    nlohmann::json entry = {{"name", tensor->name},
                            {"output", tensor->role == TensorRole::output},
                            {"scratch", tensor->scratch},
                            {"dtype", to_string(tensor->dtype)}};
    switch (tensor->generator.kind) {
      case InputGenerator::Kind::battery: entry["generator"] = "battery"; break;
      case InputGenerator::Kind::uniform_int: entry["generator"] = "uniform_int"; break;
      case InputGenerator::Kind::hook:
        entry["generator"] = "hook";
        entry["hook"] = tensor->generator.hook;
        break;
    }
    if (tensor->role == TensorRole::output) {
      const Tolerance& tolerance = task.tolerances.at(tensor->name);
      entry["tolerance"] = {{"rtol", tolerance.rtol},
                            {"atol", tolerance.atol},
                            {"atol_rms", tolerance.atol_rms},
                            {"normwise", tolerance.normwise}};
    }
    tensors.push_back(entry);
  }
  plan["tensors"] = tensors;
  nlohmann::json workloads = nlohmann::json::array();
  for (std::size_t w = 0; w < battery.workloads.size(); ++w) {
    const BatteryWorkload& workload = battery.workloads[w];
    std::vector<std::int64_t> axes;
    for (const Axis& axis : task.axes) axes.push_back(workload.axes.at(axis.name));
    workloads.push_back({{"id", w},
                         {"name", workload.name},
                         {"hidden", workload.hidden},
                         {"axes", axes},
                         {"elements", workload.elements},
                         {"int_low", workload.int_low},
                         {"int_high", workload.int_high}});
  }
  plan["workloads"] = workloads;
  plan["guard_bytes"] = correctness.guard_bytes;
  plan["trials"] = nlohmann::json::array();
  return plan;
}

void add_trials(nlohmann::json& plan, const Battery& battery, const std::vector<int>& trial_ids,
                const std::filesystem::path& reference_dir, const std::vector<double>& deadlines_s) {
  for (int id : trial_ids) {
    const Trial& trial = battery.trial(id);
    plan["trials"].push_back({{"id", trial.id},
                              {"workload", trial.workload},
                              {"seed", trial.seed},
                              {"distribution", trial.distribution},
                              {"poison", trial.poison},
                              {"reference", (reference_dir / trial.reference_key).string()},
                              {"deadline_s", deadlines_s.at(static_cast<std::size_t>(id))}});
  }
}

std::vector<nlohmann::json> parse_records(const std::string& text, bool* truncated) {
  std::vector<nlohmann::json> records;
  *truncated = false;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      *truncated = true;  // no newline: the writer was cut off
      break;
    }
    nlohmann::json record = nlohmann::json::parse(text.substr(start, end - start), nullptr, false);
    if (!record.is_discarded() && record.is_object()) records.push_back(std::move(record));
    start = end + 1;
  }
  return records;
}

std::vector<const nlohmann::json*> HarnessRun::all(const std::string& event) const {
  std::vector<const nlohmann::json*> matches;
  for (const nlohmann::json& record : records)
    if (record.value("ev", "") == event) matches.push_back(&record);
  return matches;
}

const nlohmann::json* HarnessRun::last(const std::string& event) const {
  for (auto it = records.rbegin(); it != records.rend(); ++it)
    if (it->value("ev", "") == event) return &*it;
  return nullptr;
}

HarnessRun run_harness(ProcessRunner& runner, const HarnessSpec& spec) {
  std::vector<std::string> argv = spec.wrapper;
  argv.insert(argv.end(), {spec.harness.string(), "--plan", spec.plan.string(), "--result-fd", "3"});
  SandboxSpec sandbox;
  sandbox.writable.push_back(spec.scratch);
  sandbox.readable.push_back(spec.harness.parent_path());
  auto add_library = [&](const char* flag, const std::optional<std::filesystem::path>& library) {
    if (!library) return;
    argv.insert(argv.end(), {flag, library->string()});
    sandbox.readable.push_back(library->parent_path());
  };
  add_library("--candidate", spec.candidate);
  add_library("--baseline", spec.baseline);
  add_library("--reference", spec.reference);
  if (spec.candidate_plan_hook) argv.push_back("--candidate-plan-hook");
  for (const auto& path : spec.readable) sandbox.readable.push_back(path);
  for (const auto& path : spec.writable) sandbox.writable.push_back(path);
  sandbox.devices = spec.devices;
  sandbox.rank_group = spec.rank_group;
  sandbox.shared_memory = spec.shared_memory;
  Command command;
  command.argv = sandbox_argv(spec.sandbox, argv, sandbox);
  command.cwd = spec.scratch;
  command.timeout = std::chrono::milliseconds(static_cast<long>(spec.timeout_s * 1000));
  command.result_fd = 3;
  command.max_address_space = spec.max_address_space;
  if (!spec.env.empty()) command.env = scrubbed_env(spec.env);
  if (spec.past_deadline) {
    command.watch = [&spec](std::string_view) { return !spec.past_deadline(); };
    command.watch_period = std::chrono::milliseconds(200);
  }
  HarnessRun run;
  run.process = runner.run(command);
  // Stopped at the late deadline is a deadline like the fixed one: the stage timed out.
  if (run.process.stopped && spec.past_deadline) {
    run.process.stopped = false;
    run.process.timed_out = true;
  }
  run.records = parse_records(run.process.result.text, &run.records_truncated);
  // Kept beside the plan for anyone debugging with eval.keep_scratch.
  std::ofstream(spec.plan.parent_path() / (spec.plan.stem().string() + ".records.jsonl")) << run.process.result.text;
  if (run.process.result.elided_bytes > 0) run.records_truncated = true;
  return run;
}

}  // namespace evoteam::eval
