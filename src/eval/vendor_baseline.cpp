#include "eval/vendor_baseline.hpp"

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>

#include <fstream>

#include "eval/statistics.hpp"
#include "eval/timing_run.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;

// The GPU model from the driver, without running anything: vendor figures are kept per model, never mixed.
std::string gpu_model() {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc/driver/nvidia/gpus", error)) {
    std::ifstream information(entry.path() / "information");
    std::string line;
    while (std::getline(information, line))
      if (line.rfind("Model:", 0) == 0) return trim(line.substr(6));
  }
  return "unknown GPU";
}

fs::path figures_file(const EvaluationRun& run, const VendorBuild& vendor) {
  std::string material = "vendor-timing-v1\n" + run.task.content_hash + "\n" + vendor.comparison.name + " " +
                         vendor.comparison.version + "\n" + vendor.build.library.string() + "\n" + gpu_model() + "\n" +
                         nlohmann::json(run.shared.settings.timing).dump();
  for (const auto& [workload, sets] : run.battery.rotation) material += "\nworkload " + std::to_string(workload);
  return run.shared.cache_dir / "vendor" / (sha256_hex(material).substr(0, 32) + ".json");
}

std::optional<std::map<std::string, VendorWorkload>> cached_figures(const fs::path& file) {
  std::error_code ignored;
  if (!fs::is_regular_file(file, ignored)) return std::nullopt;
  try {
    std::map<std::string, VendorWorkload> figures;
    const nlohmann::json cached = read_json_file(file);  // items() points into it: it must outlive the loop
    for (const auto& [name, value] : cached.items())
      figures[name] = VendorWorkload{value.at("median_s").get<double>(), value.at("speedup").get<double>(), 0};
    return figures;
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged entry is measured again
  }
}

void store_figures(const fs::path& file, const std::map<std::string, VendorWorkload>& figures) {
  nlohmann::json value = nlohmann::json::object();
  for (const auto& [name, figure] : figures) value[name] = {{"median_s", figure.median_s}, {"speedup", figure.speedup}};
  evoteam::create_directories(file.parent_path());
  write_json_atomic(file, value);
}

}  // namespace

std::vector<std::string> flashinfer_flags(const VendorSources& sources) {
  const fs::path& root = sources.root;
  return {"--expt-relaxed-constexpr",
          "-use_fast_math",
          "-DFLASHINFER_ENABLE_BF16",
          "-DFLASHINFER_ENABLE_F16",
          "-I",
          (root / "cccl" / "cub").string(),
          "-I",
          (root / "cccl" / "libcudacxx" / "include").string(),
          "-I",
          (root / "cccl" / "thrust").string(),
          "-isystem",
          (root / "include").string()};
}

VendorBuild build_vendor(EvaluationRun& run) {
  const Task& task = run.task;
  VendorBuild vendor;
  VendorComparison& comparison = vendor.comparison;
  comparison.name = task.vendor.kind;
  comparison.missing_archs = task.vendor.missing_archs;
  comparison.status = "unavailable";
  if (!task.vendor.unavailable.empty()) {
    comparison.detail = task.vendor.unavailable;
    return vendor;
  }
  std::string why;
  const std::optional<VendorSources> sources = find_flashinfer(run.shared.settings.cuda.flashinfer, &why);
  if (!sources) {
    comparison.detail = why;
    return vendor;
  }
  comparison.version = sources->version;
  BuildRequest request;
  request.task = &task;
  request.files = {{task.vendor.file, read_file(task.dir / task.vendor.file)}};
  request.untrusted = false;
  request.role = "vendor";
  request.extra_flags = flashinfer_flags(*sources);
  request.extra_exports = {task.entry.name + "_plan"};
  for (const std::string& arch : task.archs)
    if (task.vendor.missing_archs.count(arch) == 0) request.archs.push_back(arch);
  if (request.archs.empty()) {
    comparison.detail = "no kernel for any of the task's archs";
    return vendor;
  }
  // Trusted sources, built as the harness is: outside the sandbox, which shows only the evaluation's own paths
  // and would not see FlashInfer's headers wherever they were unpacked (a /tmp checkout, say).
  vendor.build = run.backend.build(request, SandboxMode::none);
  if (vendor.build.status != BuildStatus::ok) {
    comparison.detail = comparison.name + " " + comparison.version + " does not build: " + vendor.build.reason;
    return vendor;
  }
  comparison.status = "built";
  comparison.archs = request.archs;
  comparison.detail = comparison.name + " " + comparison.version + " built for " + join(request.archs, ", ");
  for (const auto& [arch, reason] : task.vendor.missing_archs)
    comparison.detail += "; no kernel for " + arch + ": " + reason;
  return vendor;
}

void apply_vendor_figures(const std::map<std::string, VendorWorkload>& vendor, EvalResult& result) {
  std::vector<double> fractions;
  for (WorkloadResult& workload : result.workloads) {
    const auto found = vendor.find(workload.name);
    if (found == vendor.end() || found->second.speedup <= 0 || workload.speedup <= 0) continue;
    VendorWorkload figures = found->second;
    figures.fraction = workload.speedup / figures.speedup;
    workload.vendor = figures;
    fractions.push_back(figures.fraction);
  }
  if (result.vendor && !fractions.empty()) result.vendor->fraction = geometric_mean(fractions);
}

void measure_vendor(EvaluationRun& run, const VendorBuild& vendor, EvalResult& result) {
  result.vendor = vendor.comparison;
  if (vendor.comparison.status != "built") return;
  const fs::path file = figures_file(run, vendor);
  std::optional<std::map<std::string, VendorWorkload>> figures = cached_figures(file);
  if (!figures) {
    const TimingResult timing = time_vendor(run, vendor.build.library);
    if (timing.failure) {
      result.vendor->status = "unavailable";
      result.vendor->detail = vendor.comparison.name + " failed its timing run (" + to_string(timing.failure->verdict) +
                              "): " + timing.failure->reason;
      return;
    }
    figures.emplace();
    for (const WorkloadResult& workload : timing.outcome.workloads)
      (*figures)[workload.name] = VendorWorkload{workload.candidate.median_s, workload.speedup, 0};
    store_figures(file, *figures);
  }
  apply_vendor_figures(*figures, result);
  result.vendor->status = "measured";
  if (result.vendor->fraction)
    result.vendor->detail = "candidate at " + fixed(*result.vendor->fraction, 3) + "x of " + vendor.comparison.name +
                            "'s speed (geometric mean over " + std::to_string(figures->size()) + " workloads)";
}

}  // namespace evoteam::eval
