// The CUDA profile stage: Nsight Compute over the harness's profile mode (which makes the candidate's launches a
// few times on one correctness trial's inputs; ncu replays each with caches flushed and clocks untouched), parsed
// into profile.json beside the plan and the compact summary agents read. Without ncu, the static profile the build
// already computed stands in and says so.
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

#include <evoteam/eval/sandbox.hpp>
#include "eval/cuda/cuda_ncu.hpp"
#include "eval/cuda/cuda_tools.hpp"
#include "eval/eval_phases.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;

// Launches profiled per evaluation: enough for a multi-kernel candidate's three calls, bounded so a candidate
// that launches thousands of tiny kernels cannot make the profile stage take forever.
constexpr int k_profiled_launches = 24;

}  // namespace

nlohmann::json static_cuda_profile(const nlohmann::json& build_report, const std::string& why) {
  return {
      {"source", "static"}, {"why", why}, {"archs", build_report.value("static_profile", nlohmann::json::object())}};
}

std::optional<Judgement> run_cuda_profile(EvaluationRun& run, const fs::path& candidate, nlohmann::json* profile) {
  const std::optional<fs::path> ncu = cuda::find_cuda_tool("ncu");
  if (!ncu) {
    *profile = static_cuda_profile(run.build_report, "ncu (Nsight Compute) is not installed");
    return std::nullopt;
  }
  if (!run.task.ranks_axis.empty()) {
    *profile =
        static_cuda_profile(run.build_report, "a group of ranks (one process per GPU) is not profiled under ncu yet");
    return std::nullopt;
  }
  std::optional<HarnessSpec> profiled = profile_harness_spec(run, candidate);
  if (!profiled) return Judgement{Verdict::infra_error, "no workload to profile", nlohmann::json::object()};
  HarnessSpec& spec = *profiled;
  cuda::NcuInvocation invocation;
  invocation.ncu = ncu->string();
  invocation.launch_count = k_profiled_launches;
  // ncu prints the raw page on stdout; the harness's records stay on their own descriptor.
  invocation.program = {};
  spec.wrapper = cuda::ncu_command(invocation);
  const HarnessRun harness_run = run_harness(run.shared.runner, spec);
  if (std::optional<Judgement> failure = judge_process(harness_run, run.battery, false)) return failure;
  std::vector<cuda::NcuLaunch> launches;
  try {
    launches = cuda::parse_ncu_csv(harness_run.process.out.text, "ncu output");
  } catch (const InvalidInput& error) {
    // Counters may be refused (ERR_NVGPUCTRPERM without profiling rights): the static profile still helps.
    *profile = static_cuda_profile(run.build_report, std::string("ncu gave no metrics: ") + error.what() + " " +
                                                         harness_run.process.err.text.substr(0, 300));
    return std::nullopt;
  }
  write_json_atomic(run.scratch / "profile.json", cuda::profile_json(launches));
  *profile = cuda::profile_summary(launches);
  (*profile)["launches"] = launches.size();
  (*profile)["sandbox"] = to_string(run.sandbox);
  return std::nullopt;
}

}  // namespace evoteam::eval
