// run_oracle: the task's python_reference against the C++/CUDA reference on the correctness trials' inputs.
// Three processes, each trusted: the harness in reference mode (reference outputs and, for this run, the
// inputs), the Python runner (the oracle's outputs), the harness in compare mode (the task's tolerances).
#include <evoteam/core/clock.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/eval/oracle.hpp>

#include <chrono>
#include <cmath>
#include <sstream>

#include <evoteam/eval/sandbox.hpp>
#include "eval/eval_phases.hpp"
#include "eval/group/rank_group.hpp"
#include "eval/host/host_build.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;

// The oracle's files: inputs, both sides' outputs, plans and the manifest. Removed at the end unless
// eval.keep_scratch asks to keep them.
class OracleScratch {
 public:
  OracleScratch(fs::path path, bool keep) : m_path(std::move(path)), m_keep(keep) {
    evoteam::create_directories(m_path);
  }
  ~OracleScratch() {
    std::error_code ignored;
    if (!m_keep) fs::remove_all(m_path, ignored);
  }
  OracleScratch(const OracleScratch&) = delete;
  OracleScratch& operator=(const OracleScratch&) = delete;
  const fs::path& path() const { return m_path; }

 private:
  fs::path m_path;
  bool m_keep;
};

std::vector<int> correctness_trials(const Battery& battery) {
  std::vector<int> ids;
  for (const Trial& trial : battery.trials)
    if (trial.correctness) ids.push_back(trial.id);
  return ids;
}

// A plan over the correctness trials whose trials also carry `extra_key`: <dir>/<reference key>.
nlohmann::json oracle_plan(const EvaluationRun& run, const std::string& mode, const std::string& extra_key,
                           const fs::path& dir) {
  nlohmann::json plan = base_plan(run.task, run.battery, run.shared.settings.correctness, mode);
  const double timeout_s = run.shared.settings.stages.reference.timeout_s;
  add_trials(plan, run.battery, correctness_trials(run.battery), run.reference_dir,
             std::vector<double>(run.battery.trials.size(), timeout_s));
  for (nlohmann::json& trial : plan["trials"])
    trial[extra_key] = (dir / run.battery.trial(trial["id"].get<int>()).reference_key).string();
  return plan;
}

// Runs one harness plan; a failure says what the harness reported.
std::optional<std::string> run_plan(EvaluationRun& run, const nlohmann::json& plan, const std::string& name,
                                    const std::optional<fs::path>& reference, HarnessRun* harness_run) {
  const fs::path plan_file = run.scratch / ("plan-" + name + ".json");
  write_json_atomic(plan_file, plan);
  HarnessSpec spec = harness_spec(run, plan_file, run.shared.settings.stages.reference.timeout_s);
  spec.reference = reference;
  *harness_run = run_harness(run.shared.runner, spec);
  if (harness_run->finished()) return std::nullopt;
  std::string why = harness_run->process.describe();
  for (const char* event : {"error", "load_error", "no_device"})
    if (const nlohmann::json* record = harness_run->last(event))
      why += ": " + record->value("message", record->value("error", std::string()));
  return why;
}

std::vector<std::int64_t> shape_of(const TensorSpec& tensor, const std::map<std::string, std::int64_t>& axes) {
  std::map<std::string, double> values;
  for (const auto& [name, value] : axes) values[name] = static_cast<double>(value);
  std::vector<std::int64_t> shape;
  for (const std::string& dimension : tensor.shape)
    shape.push_back(static_cast<std::int64_t>(std::llround(evaluate_expression(dimension, values, tensor.name))));
  return shape;
}

nlohmann::json tensor_entry(const TensorSpec& tensor, const std::map<std::string, std::int64_t>& axes,
                            const fs::path& file) {
  return {{"name", tensor.name},
          {"dtype", to_string(tensor.dtype)},
          {"shape", shape_of(tensor, axes)},
          {"file", file.string()}};
}

// What the runner reads: the module, and per trial its keyword arguments, input files and output files.
nlohmann::json oracle_manifest(const EvaluationRun& run, const fs::path& inputs, const fs::path& outputs) {
  const Task& task = run.task;
  nlohmann::json trials = nlohmann::json::array();
  for (int id : correctness_trials(run.battery)) {
    const Trial& trial = run.battery.trial(id);
    const std::map<std::string, std::int64_t>& axes =
        run.battery.workloads[static_cast<std::size_t>(trial.workload)].axes;
    nlohmann::json kwargs = nlohmann::json::object();
    for (const auto& [name, value] : axes) kwargs[name] = value;
    for (const ScalarSpec& scalar : task.scalars)
      kwargs[scalar.name] =
          is_floating(scalar.dtype) ? nlohmann::json(scalar.value) : nlohmann::json(std::llround(scalar.value));
    nlohmann::json entry = {
        {"id", id}, {"kwargs", kwargs}, {"inputs", nlohmann::json::array()}, {"outputs", nlohmann::json::array()}};
    for (const TensorSpec& input : task.inputs)
      entry["inputs"].push_back(tensor_entry(input, axes, inputs / (trial.reference_key + "." + input.name + ".bin")));
    for (const TensorSpec& output : task.outputs)
      if (!output.scratch)
        entry["outputs"].push_back(
            tensor_entry(output, axes, outputs / (trial.reference_key + "." + output.name + ".bin")));
    trials.push_back(entry);
  }
  const PythonReference& reference = *task.python_reference;
  return {{"module", (task.dir / reference.file).string()},
          {"function", reference.function},
          {"framework", to_string(reference.framework)},
          {"device", task.target == Target::cuda ? "cuda" : "cpu"},
          {"trials", trials}};
}

std::string last_lines(const std::string& text, std::size_t count) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);)
    if (!trim(line).empty()) lines.push_back(trim(line));
  if (lines.size() > count) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(count));
  return join(lines, "; ");
}

// Runs the Python reference; nullopt when it wrote every output (`device` gets where it ran), else the report's
// status and reason.
std::optional<std::pair<OracleStatus, std::string>> run_python(EvaluationRun& run, const fs::path& manifest,
                                                               std::string* device) {
  const OracleSettings& settings = run.shared.settings.oracle;
  Command command;
  command.argv = {settings.python, oracle_runner_script().string(), manifest.string()};
  command.cwd = run.scratch;
  // The scrubbed environment: no provider keys reach the reference; no .pyc files land in the task directory.
  command.env = scrubbed_env({{"PYTHONDONTWRITEBYTECODE", "1"}});
  command.timeout = std::chrono::milliseconds(static_cast<long>(settings.timeout_s * 1000));
  const ProcessResult result = run.shared.runner.run(command);
  if (result.ok()) {
    const nlohmann::json said = nlohmann::json::parse(last_lines(result.out.text, 1), nullptr, false);
    *device = said.is_object() ? said.value("device", std::string()) : std::string();
    return std::nullopt;
  }
  if (!result.spawned)
    return std::pair{OracleStatus::skipped,
                     settings.python + " does not run (" + result.spawn_error + "); the oracle was skipped"};
  if (result.timed_out)
    return std::pair{OracleStatus::failed, "the Python reference did not finish within " +
                                               fixed(settings.timeout_s, 0) + " s (eval.oracle.timeout_s)"};
  if (result.signal == 0 && result.exit_code == 3)
    return std::pair{OracleStatus::skipped, last_lines(result.err.text, 1) + "; the oracle was skipped"};
  const std::string why = last_lines(result.err.text, 3);
  return std::pair{OracleStatus::failed,
                   "the Python reference failed (" + result.describe() + ")" + (why.empty() ? "" : ": " + why)};
}

std::string describe_trial(const Battery& battery, int id) {
  const Trial& trial = battery.trial(id);
  return "trial " + std::to_string(id) + " (" + battery.workloads[static_cast<std::size_t>(trial.workload)].name +
         ", " + trial.distribution + ")";
}

// The compare records folded into one OracleOutput per compared output, in task order.
std::vector<OracleOutput> fold_comparisons(const Task& task, const Battery& battery, const HarnessRun& compared) {
  std::vector<OracleOutput> outputs;
  for (const TensorSpec& tensor : task.outputs)
    if (!tensor.scratch) outputs.push_back(OracleOutput{tensor.name, 0, 0, 0, 0, 0, ""});
  for (const nlohmann::json* record : compared.all("compare")) {
    const std::string name = record->value("tensor", std::string());
    for (OracleOutput& output : outputs) {
      if (output.tensor != name) continue;
      ++output.trials;
      auto worst = [&](const char* key, double& into) {
        if (record->contains(key) && (*record)[key].is_number()) into = std::max(into, (*record)[key].get<double>());
      };
      worst("max_abs", output.max_abs);
      worst("max_rel", output.max_rel);
      worst("normwise", output.normwise);
      const std::string status = record->value("status", std::string());
      if (status == "ok") continue;
      if (++output.failed_trials > 1) continue;
      auto number = [&](const char* key) {
        return record->contains(key) && (*record)[key].is_number() ? (*record)[key].get<double>() : NAN;
      };
      output.first_failure = describe_trial(battery, record->value("trial", 0)) + ": " + status + " at " +
                             std::to_string(record->value("first_bad", -1)) + ": oracle " +
                             fixed(number("oracle_value"), 6) + " vs reference " + fixed(number("reference_value"), 6);
    }
  }
  return outputs;
}

}  // namespace

OracleReport run_oracle(EvaluatorShared& shared, const Task& task) {
  if (!task.python_reference)
    throw InvalidInput("task " + task.name + " has no python_reference in task.json (see kernels/README.md)");
  const auto start = std::chrono::steady_clock::now();
  OracleReport report;
  report.task = task.name;
  report.python = shared.settings.oracle.python;
  report.framework = to_string(task.python_reference->framework);
  auto finish = [&](OracleStatus status, std::string reason) {
    report.status = status;
    report.reason = std::move(reason);
    report.wall_s = seconds_since(start);
    return report;
  };
  if (is_ranked(task)) return finish(OracleStatus::skipped, "tasks with a ranks axis are not supported by the oracle");
  const PythonProbe probe = probe_python(shared.runner, shared.settings.oracle);
  if (!probe.runs) return finish(OracleStatus::skipped, probe.problem + "; the oracle was skipped");
  const std::optional<std::string>& version = probe.version_of(task.python_reference->framework);
  if (!version)
    return finish(OracleStatus::skipped,
                  report.framework + " is not importable by " + report.python + "; the oracle was skipped");
  report.framework_version = *version;

  OracleScratch scratch(unique_sibling(shared.cache_dir / "scratch" / "oracle"), shared.settings.keep_scratch);
  TargetBackend& backend = task.target == Target::cuda ? static_cast<TargetBackend&>(shared.cuda) : shared.host;
  EvaluationRun run{shared, backend, task, SandboxMode::none, scratch.path(), {}, {}, {}, {}, 0, true};
  run.reference_dir = scratch.path() / "references";
  for (const char* dir : {"references", "inputs", "oracle"}) evoteam::create_directories(scratch.path() / dir);
  if (std::optional<Judgement> unavailable = device_unavailable(run))
    return finish(OracleStatus::skipped, unavailable->reason);
  run.battery = design_battery(task, shared.settings.correctness, shared.settings.timing, fresh_secret(), 0);
  report.trials = static_cast<int>(correctness_trials(run.battery).size());
  BuildOutcome reference;
  if (std::optional<Judgement> failure = build_harness_and_reference(run, &reference))
    return finish(OracleStatus::failed, failure->reason);

  HarnessRun referenced;
  if (std::optional<std::string> why = run_plan(run, oracle_plan(run, "reference", "inputs", scratch.path() / "inputs"),
                                                "reference", reference.library, &referenced))
    return finish(OracleStatus::failed, "the C++ reference run failed: " + *why);
  const fs::path manifest = scratch.path() / "manifest.json";
  write_json_atomic(manifest, oracle_manifest(run, scratch.path() / "inputs", scratch.path() / "oracle"));
  if (auto failure = run_python(run, manifest, &report.device)) return finish(failure->first, failure->second);
  HarnessRun compared;
  if (std::optional<std::string> why = run_plan(run, oracle_plan(run, "compare", "oracle", scratch.path() / "oracle"),
                                                "compare", std::nullopt, &compared))
    return finish(OracleStatus::failed, "comparing the outputs failed: " + *why);
  report.outputs = fold_comparisons(task, run.battery, compared);
  bool agreed = true;
  for (const OracleOutput& output : report.outputs)
    agreed = agreed && output.passed() && output.trials == report.trials;
  return finish(agreed ? OracleStatus::agreed : OracleStatus::disagreed, "");
}

}  // namespace evoteam::eval
