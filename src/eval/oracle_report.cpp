// The oracle's reports: what the configured Python can import (the runner's --probe), and an oracle run's
// result as JSON and as text.
#include <evoteam/core/config.hpp>  // install_root() only: eval.oracle is read by eval_settings.cpp
#include <evoteam/core/text.hpp>
#include <evoteam/eval/oracle.hpp>

#include <chrono>
#include <cstdio>

namespace evoteam {

std::string to_string(OracleStatus status) {
  switch (status) {
    case OracleStatus::agreed: return "agreed";
    case OracleStatus::disagreed: return "disagreed";
    case OracleStatus::skipped: return "skipped";
    case OracleStatus::failed: return "failed";
  }
  return "failed";
}

std::filesystem::path oracle_runner_script() {
  return install_root() / "kernels" / "common" / "python" / "oracle_runner.py";
}

const std::optional<std::string>& PythonProbe::version_of(PythonFramework framework) const {
  return framework == PythonFramework::torch ? torch : numpy;
}

nlohmann::json PythonProbe::to_json() const {
  nlohmann::json out = {{"python", python}, {"runs", runs}};
  if (!runs) {
    out["problem"] = problem;
    return out;
  }
  out["executable"] = executable;
  out["version"] = version;
  out["numpy"] = numpy ? nlohmann::json(*numpy) : nlohmann::json(nullptr);
  out["torch"] = torch ? nlohmann::json(*torch) : nlohmann::json(nullptr);
  out["torch_cuda"] = torch_cuda;
  return out;
}

PythonProbe probe_python(ProcessRunner& runner, const OracleSettings& settings) {
  PythonProbe probe;
  probe.python = settings.python;
  Command command;
  command.argv = {settings.python, oracle_runner_script().string(), "--probe"};
  command.env = scrubbed_env({{"PYTHONDONTWRITEBYTECODE", "1"}});
  // Importing torch the first time can take a while (it loads CUDA libraries).
  command.timeout = std::chrono::milliseconds(120'000);
  const ProcessResult result = runner.run(command);
  if (!result.ok()) {
    probe.problem = settings.python + " does not run the oracle's probe (" + result.describe() + ")";
    if (!trim(result.err.text).empty()) probe.problem += ": " + trim(result.err.text).substr(0, 400);
    return probe;
  }
  try {
    const nlohmann::json report = nlohmann::json::parse(result.out.text);
    probe.executable = report.value("python", std::string());
    probe.version = report.value("version", std::string());
    if (report.contains("numpy") && report["numpy"].is_string()) probe.numpy = report["numpy"].get<std::string>();
    if (report.contains("torch") && report["torch"].is_string()) probe.torch = report["torch"].get<std::string>();
    probe.torch_cuda = report.value("torch_cuda", false);
    probe.runs = true;
  } catch (const nlohmann::json::exception& error) {
    probe.problem = settings.python + "'s probe printed no report: " + error.what();
  }
  return probe;
}

nlohmann::json OracleReport::to_json() const {
  nlohmann::json out = {{"status", to_string(status)}, {"task", task},     {"python", python},
                        {"framework", framework},      {"trials", trials}, {"wall_s", wall_s}};
  if (!reason.empty()) out["reason"] = reason;
  if (!framework_version.empty()) out["framework_version"] = framework_version;
  if (!device.empty()) out["device"] = device;
  nlohmann::json items = nlohmann::json::array();
  for (const OracleOutput& output : outputs) {
    nlohmann::json item = {{"tensor", output.tensor},    {"passed", output.passed()},
                           {"trials", output.trials},    {"failed_trials", output.failed_trials},
                           {"max_abs", output.max_abs},  {"max_rel", output.max_rel},
                           {"normwise", output.normwise}};
    if (!output.first_failure.empty()) item["first_failure"] = output.first_failure;
    items.push_back(item);
  }
  out["outputs"] = items;
  return out;
}

namespace {

// Errors span many decades (0 for an exact match, 1e-7 for rounding, 1e2 for a wrong kernel): three digits each.
std::string error_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

}  // namespace

std::string OracleReport::summary() const {
  std::string text = "oracle: " + to_string(status) + " (" + framework +
                     (framework_version.empty() ? "" : " " + framework_version) + " reference of " + task +
                     (device.empty() ? "" : " on " + device) + " vs the C++ reference";
  if (trials > 0) text += ", " + std::to_string(trials) + " correctness trials";
  text += ")";
  if (!reason.empty()) text += "\n  " + reason;
  for (const OracleOutput& output : outputs) {
    text += "\n  " + output.tensor + ": " + (output.passed() ? "pass" : "FAIL") + "  max_abs " +
            error_text(output.max_abs) + "  max_rel " + error_text(output.max_rel) + "  normwise " +
            error_text(output.normwise);
    if (!output.passed())
      text += "\n    " + std::to_string(output.failed_trials) + " of " + std::to_string(output.trials) +
              " trials; first: " + output.first_failure;
  }
  return text;
}

}  // namespace evoteam
