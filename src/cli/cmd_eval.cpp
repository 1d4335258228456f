// `evoteam eval TASK_DIR [--candidate PATH] [--param K=V]... [--stages LIST] [--workloads W] [--oracle] [--json]`:
// one evaluation, its verdict and figures; with --oracle also the task's Python reference against its C++/CUDA
// reference (eval/oracle.hpp). Exit 0 only on PASS, and with --oracle only when the oracle agreed or was skipped.
#include <iostream>
#include <memory>
#include <sstream>

#include <evoteam/core/error.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/eval/evaluator.hpp>
#include <evoteam/task/task.hpp>

#include "cli/command.hpp"

namespace evoteam::cli {
namespace {

struct EvalArgs {
  std::string task_dir;
  std::string candidate;
  std::vector<std::string> params;
  std::string stages;
  std::string sandbox;
  std::string cache_dir;
  std::string workloads = "all";
  bool no_cache = false;
  bool refresh = false;
  bool json = false;
  bool oracle = false;
};

std::string pad(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

// "flashinfer 0.7.4: built for sm_90a, sm_100a" or its measured fraction, or why there is none.
std::string vendor_line(const VendorComparison& vendor) {
  std::string line = vendor.name + (vendor.version.empty() ? "" : " " + vendor.version) + " (vendor baseline): ";
  if (vendor.status == "measured" && vendor.fraction)
    return line + "candidate at " + fixed(*vendor.fraction, 3) + "x of its speed (geometric mean; >1 is faster)";
  return line + vendor.status + (vendor.detail.empty() ? "" : " - " + vendor.detail);
}

void print_human(const EvalResult& result, const std::string& candidate_label) {
  std::ostringstream out;
  out << "task " << result.task << " (" << result.target << "), candidate " << candidate_label;
  if (!result.params.empty()) out << ", params " << describe_params(result.params);
  out << "\nsandbox " << result.sandbox << "; speedup is relative to " << result.baseline << "\n";
  out << "verdict " << to_string(result.verdict) << (result.reason.empty() ? "" : ": " + result.reason) << "\n";
  out << "stages:";
  for (const StageRecord& stage : result.stages)
    out << " " << stage.name << " " << to_string(stage.status) << " (" << fixed(stage.wall_s, 2) << " s)";
  out << (result.result_cache_hit ? " [cached result]" : "") << "\n";
  if (!result.workloads.empty()) {
    out << "\n"
        << pad("workload", 18) << pad("median", 12) << pad("p10", 12) << pad("p90", 12) << pad("relstd", 8)
        << pad("n", 6) << pad("baseline", 12) << pad("speedup [95% interval]", 26) << pad("roofline", 10)
        << (result.vendor && result.vendor->status == "measured" ? "vs " + result.vendor->name : "") << "\n";
    for (const WorkloadResult& workload : result.workloads) {
      out << pad(workload.name, 18) << pad(human_duration(workload.candidate.median_s), 12)
          << pad(human_duration(workload.candidate.p10_s), 12) << pad(human_duration(workload.candidate.p90_s), 12)
          << pad(fixed(workload.candidate.relstdev * 100, 1) + "%", 8)
          << pad(std::to_string(workload.candidate.samples), 6) << pad(human_duration(workload.baseline.median_s), 12)
          << pad(fixed(workload.speedup, 2) + "x [" + fixed(workload.speedup_low, 2) + ", " +
                     fixed(workload.speedup_high, 2) + "]",
                 26)
          << pad(workload.roofline_fraction ? fixed(*workload.roofline_fraction, 3) : std::string("-"), 10)
          << (workload.vendor
                  ? fixed(workload.vendor->fraction, 3) + "x (" + human_duration(workload.vendor->median_s) + ")"
                  : "")
          << (workload.stop == "cap" ? "  (did not converge)" : "") << "\n";
    }
  }
  if (result.speedup) {
    out << "\nspeedup (geometric mean) " << fixed(*result.speedup, 3) << "x ["
        << fixed(result.speedup_low.value_or(0), 3) << ", " << fixed(result.speedup_high.value_or(0), 3) << "]";
    if (result.roofline_fraction) out << ", roofline fraction " << fixed(*result.roofline_fraction, 3);
    out << "\n";
  }
  if (result.vendor) out << vendor_line(*result.vendor) << "\n";
  if (result.profile.is_object()) {
    out << "profile (" << result.profile.value("tool", "timing") << "): ";
    if (result.profile.contains("gflops")) out << fixed(result.profile["gflops"].get<double>(), 2) << " GFLOP/s, ";
    if (result.profile.contains("gbytes_per_s"))
      out << fixed(result.profile["gbytes_per_s"].get<double>(), 2) << " GB/s, ";
    if (result.profile.contains("bound")) out << "bound: " << result.profile["bound"].get<std::string>();
    out << "\n";
  }
  for (const std::string& warning : result.static_warnings) out << "warning: " << warning << "\n";
  if (!result.passed() && !result.evidence.empty()) out << "evidence: " << result.evidence.dump() << "\n";
  if (result.verdict == Verdict::compile_error && !result.build_log.empty())
    out << "build log:\n" << result.build_log << "\n";
  out << "wall " << fixed(result.wall_s, 2) << " s (build " << fixed(result.build_s, 2) << " s, timed work "
      << fixed(result.timed_s, 2) << " s)\n";
  std::cout << out.str();
}

// A candidate directory takes the task's starting version of each editable file it lacks; one that holds none of
// them would judge the starting kernel under the candidate's name, so it is refused naming the files.
void require_a_kernel_file(const Task& task, const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) throw InvalidInput("--candidate " + dir.string() + ": no such directory");
  for (const std::string& name : task.kernel_files)
    if (std::filesystem::is_regular_file(dir / name)) return;
  throw InvalidInput("--candidate " + dir.string() + " holds none of the task's editable files (" +
                     join(task.kernel_files, ", ") +
                     "): it would be the starting kernel; leave --candidate out to "
                     "evaluate that");
}

}  // namespace

void add_eval(CLI::App& sub, CommandContext& context) {
  auto args = std::make_shared<EvalArgs>();
  sub.add_option("TASK_DIR", args->task_dir, "Task directory (holds task.json)")->required();
  sub.add_option("--candidate", args->candidate,
                 "Directory with the candidate's kernel files (default: the starting kernel)");
  sub.add_option("--param", args->params, "Set a tunable param: --param TILE_N=256 (repeatable)")->type_name("K=V");
  sub.add_option("--stages", args->stages,
                 "Stages to run: static,build,correctness,timing,profile (default: eval.pipeline)");
  sub.add_option("--sandbox", args->sandbox, "auto, bwrap or none (default: eval.sandbox)");
  sub.add_option("--cache-dir", args->cache_dir,
                 "Build and result cache (default: eval.cache_dir or ~/.cache/evoteam)");
  sub.add_option("--workloads", args->workloads,
                 "The task's workloads to evaluate: published (those published with the definition the task follows), "
                 "ours, or all (default)")
      ->check(CLI::IsMember({"published", "ours", "all"}));
  sub.add_flag("--no-cache", args->no_cache, "Neither read nor write cached results (builds stay cached)");
  sub.add_flag("--refresh", args->refresh, "Evaluate again even when a cached result exists, then store it");
  sub.add_flag("--json", args->json, "Print one JSON object (the eval.json content)");
  sub.add_flag("--oracle", args->oracle,
               "Also run the task's python_reference on the correctness inputs and compare it with the C++/CUDA "
               "reference (skipped, exit unaffected, when its framework is not importable by eval.oracle.python)");
  sub.callback([&context, args] {
    context.action = [&context, args] {
      const EvalSettings settings = eval_settings(context.config);
      Task task = load_task(args->task_dir);
      select_workloads(task, parse_workload_selection(args->workloads).value_or(WorkloadSelection::all));
      Candidate candidate = Candidate::starting(task);
      if (!args->candidate.empty()) {
        candidate.source_dir = args->candidate;
        require_a_kernel_file(task, candidate.source_dir);
      }
      for (const std::string& assignment : args->params) {
        const std::size_t eq = assignment.find('=');
        if (eq == std::string::npos || eq == 0)
          throw Error("--param " + assignment + ": expected NAME=VALUE", ExitCode::usage);
        candidate.params[assignment.substr(0, eq)] = assignment.substr(eq + 1);
      }
      EvalOptions options;
      if (!args->stages.empty()) options.stages = parse_stage_list(args->stages, "--stages");
      if (!args->sandbox.empty()) {
        options.sandbox = parse_sandbox_mode(args->sandbox);
        if (!options.sandbox)
          throw Error("--sandbox " + args->sandbox + ": expected auto, bwrap or none", ExitCode::usage);
      }
      if (args->no_cache)
        options.result_cache = CachePolicy::bypass;
      else if (args->refresh)
        options.result_cache = CachePolicy::refresh;
      const std::filesystem::path cache_dir =
          args->cache_dir.empty() ? default_cache_dir(settings) : std::filesystem::path(args->cache_dir);
      Evaluator evaluator(settings, system_runner(), cache_dir);
      // Refused before anything runs: --oracle on a task without a Python reference is a usage mistake.
      if (args->oracle && !task.python_reference)
        throw Error("--oracle: task " + task.name + " has no python_reference in task.json (see kernels/README.md)",
                    ExitCode::usage);
      EvalResult result = evaluator.evaluate(task, candidate, options);
      std::optional<OracleReport> oracle;
      if (args->oracle) oracle = evaluator.check_oracle(task);
      if (args->json) {
        nlohmann::json out = result.to_json();
        if (oracle) out["oracle"] = oracle->to_json();
        print_json(out);
      } else {
        print_human(result, args->candidate.empty() ? "(starting kernel)" : args->candidate);
        if (oracle) std::cout << oracle->summary() << "\n";
      }
      const bool oracle_ok =
          !oracle || oracle->status == OracleStatus::agreed || oracle->status == OracleStatus::skipped;
      return result.passed() && oracle_ok ? static_cast<int>(ExitCode::success) : static_cast<int>(ExitCode::failure);
    };
  });
}

}  // namespace evoteam::cli
