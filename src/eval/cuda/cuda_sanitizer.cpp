// compute-sanitizer on a CUDA candidate that passed correctness: memcheck, racecheck, synccheck and initcheck (as
// configured), each in a fresh harness process running the smallest correctness trial, so the cost stays seconds.
// Errors the tools report are the candidate's (RUNTIME_FAULT with the tool's first finding); a missing tool is
// recorded, never a failure.
#include <evoteam/core/fs.hpp>

#include <sstream>

#include "eval/cuda/cuda_tools.hpp"
#include "eval/eval_phases.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;

// The exit code the tools are told to use when they found something, distinct from the harness's own codes.
constexpr int k_sanitizer_error_exit = 86;

// The first line that reports an error ("========= Invalid __global__ write of size 4 bytes", ...).
std::string first_finding(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind("=========", 0) == 0 && line.find("ERROR SUMMARY") == std::string::npos && line.size() > 10 &&
        line.find("COMPUTE-SANITIZER") == std::string::npos)
      return line.substr(10, 300);
  return "see the report";
}

}  // namespace

std::optional<Judgement> run_cuda_sanitizer(EvaluationRun& run, const fs::path& candidate, nlohmann::json* report) {
  const EvalSettings& settings = run.shared.settings;
  *report = nlohmann::json::object();
  const std::vector<std::string>& tools = settings.cuda.sanitizer_tools;
  if (run.task.target != Target::cuda || tools.empty()) return std::nullopt;
  if (!run.task.ranks_axis.empty()) {
    (*report)["skipped"] = "a group of ranks (one process per GPU) does not run under compute-sanitizer yet";
    return std::nullopt;
  }
  const std::optional<fs::path> sanitizer = cuda::find_cuda_tool("compute-sanitizer");
  if (!sanitizer) {
    (*report)["skipped"] = "compute-sanitizer is not installed";
    return std::nullopt;
  }
  // The smallest correctness trial: the tools slow kernels down by one or two orders of magnitude.
  int smallest = -1;
  std::uint64_t smallest_bytes = 0;
  for (const Trial& trial : run.battery.trials) {
    if (!trial.correctness) continue;
    const std::uint64_t bytes = run.battery.workloads[static_cast<std::size_t>(trial.workload)].set_bytes;
    if (smallest < 0 || bytes < smallest_bytes) {
      smallest = trial.id;
      smallest_bytes = bytes;
    }
  }
  if (smallest < 0) return std::nullopt;
  nlohmann::json plan = base_plan(run.task, run.battery, settings.correctness, "correctness");
  add_trials(plan, run.battery, {smallest}, run.reference_dir, run.deadlines_s);
  plan["determinism_trial"] = -1;
  const fs::path plan_file = run.scratch / "plan-sanitizer.json";
  write_json_atomic(plan_file, plan);
  for (const std::string& tool : tools) {
    HarnessSpec spec = harness_spec(run, plan_file, settings.stages.correctness.timeout_s * 4);
    spec.candidate = candidate;
    spec.wrapper = {sanitizer->string(), "--tool", tool, "--error-exitcode", std::to_string(k_sanitizer_error_exit),
                    "--print-limit",     "20"};
    const HarnessRun harness_run = run_harness(run.shared.runner, spec);
    const ProcessResult& process = harness_run.process;
    if (process.exit_code == k_sanitizer_error_exit && process.signal == 0) {
      const std::string text = process.out.text + process.err.text;
      (*report)[tool] = "errors";
      return Judgement{Verdict::runtime_fault,
                       "compute-sanitizer " + tool + ": " + first_finding(text),
                       {{"tool", tool}, {"trial", smallest}, {"report", text.substr(0, 4000)}}};
    }
    if (std::optional<Judgement> failure = judge_process(harness_run, run.battery, false)) return failure;
    (*report)[tool] = "clean";
  }
  return std::nullopt;
}

}  // namespace evoteam::eval
