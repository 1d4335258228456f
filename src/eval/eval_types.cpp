// Names, options and the JSON form of evaluation results (candidates/<cid>/eval.json).
#include <evoteam/core/error.hpp>
#include <evoteam/eval/evaluator.hpp>

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace evoteam {
namespace {

const std::pair<Stage, const char*> k_stage_names[] = {
    {Stage::static_checks, "static"}, {Stage::build, "build"},     {Stage::correctness, "correctness"},
    {Stage::timing, "timing"},        {Stage::profile, "profile"},
};

const std::pair<StageStatus, const char*> k_stage_status_names[] = {
    {StageStatus::passed, "passed"}, {StageStatus::failed, "failed"},         {StageStatus::skipped, "skipped"},
    {StageStatus::cached, "cached"}, {StageStatus::static_profile, "static"},
};

StageRecord stage_record_from_json(const nlohmann::json& value) {
  const std::string status = value.value("status", "");
  std::optional<StageStatus> parsed = parse_stage_status(status);
  if (!parsed) throw InvalidInput("eval result: unknown stage status \"" + status + "\"");
  return {value.value("name", ""), *parsed, value.value("wall_s", 0.0), value.value("detail", ""),
          value.value("lock_wait_s", 0.0)};
}

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::optional<double> read_optional(const nlohmann::json& object, const char* key) {
  if (!object.contains(key) || object[key].is_null()) return std::nullopt;
  return object[key].get<double>();
}

SampleStats stats_from_json(const nlohmann::json& value) {
  SampleStats stats;
  stats.samples = value.value("samples", 0);
  stats.median_s = value.value("median_s", 0.0);
  stats.mean_s = value.value("mean_s", 0.0);
  stats.min_s = value.value("min_s", 0.0);
  stats.p10_s = value.value("p10_s", 0.0);
  stats.p90_s = value.value("p90_s", 0.0);
  stats.relstdev = value.value("relstdev", 0.0);
  stats.sem_s = value.value("sem_s", 0.0);
  return stats;
}

}  // namespace

std::string to_string(Stage stage) {
  for (const auto& [value, name] : k_stage_names)
    if (value == stage) return name;
  return "static";
}

std::optional<Stage> parse_stage(const std::string& text) {
  for (const auto& [value, name] : k_stage_names)
    if (text == name) return value;
  return std::nullopt;
}

std::string to_string(StageStatus status) {
  for (const auto& [value, name] : k_stage_status_names)
    if (value == status) return name;
  return "failed";
}

std::optional<StageStatus> parse_stage_status(const std::string& text) {
  for (const auto& [value, name] : k_stage_status_names)
    if (text == name) return value;
  return std::nullopt;
}

std::vector<Stage> parse_stage_list(const std::string& list, const std::string& where) {
  std::vector<bool> wanted(std::size(k_stage_names), false);
  std::stringstream stream(list);
  std::string item;
  while (std::getline(stream, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) continue;
    std::optional<Stage> stage = parse_stage(item);
    if (!stage)
      throw InvalidInput(where + ": unknown stage \"" + item + "\" (static, build, correctness, timing, profile)");
    wanted[static_cast<std::size_t>(*stage)] = true;
  }
  std::vector<Stage> stages;
  for (const auto& [value, name] : k_stage_names)
    if (wanted[static_cast<std::size_t>(value)]) stages.push_back(value);
  if (stages.empty()) throw InvalidInput(where + ": no stage named");
  return stages;
}

std::string to_string(SandboxMode mode) {
  switch (mode) {
    case SandboxMode::automatic: return "auto";
    case SandboxMode::bwrap: return "bwrap";
    case SandboxMode::none: return "none";
  }
  return "auto";
}

std::optional<SandboxMode> parse_sandbox_mode(const std::string& text) {
  if (text == "auto") return SandboxMode::automatic;
  if (text == "bwrap") return SandboxMode::bwrap;
  if (text == "none") return SandboxMode::none;
  return std::nullopt;
}

EvalOptions EvalOptions::through(Stage last) {
  EvalOptions options;
  for (const auto& [value, name] : k_stage_names) {
    options.stages.push_back(value);
    if (value == last) break;
  }
  return options;
}

Candidate Candidate::starting(const Task& task) { return Candidate{task.dir, default_params(task)}; }

nlohmann::json SampleStats::to_json() const {
  return {{"samples", samples}, {"median_s", median_s}, {"mean_s", mean_s},     {"min_s", min_s},
          {"p10_s", p10_s},     {"p90_s", p90_s},       {"relstdev", relstdev}, {"sem_s", sem_s}};
}

nlohmann::json VendorComparison::to_json() const {
  return {{"name", name},
          {"version", version},
          {"status", status},
          {"detail", detail},
          {"archs", archs},
          {"missing_archs", missing_archs},
          {"fraction", optional_number(fraction)}};
}

VendorComparison VendorComparison::from_json(const nlohmann::json& value) {
  VendorComparison vendor;
  vendor.name = value.value("name", "");
  vendor.version = value.value("version", "");
  vendor.status = value.value("status", "");
  vendor.detail = value.value("detail", "");
  vendor.archs = value.value("archs", std::vector<std::string>{});
  vendor.missing_archs = value.value("missing_archs", std::map<std::string, std::string>{});
  vendor.fraction = read_optional(value, "fraction");
  return vendor;
}

nlohmann::json WorkloadResult::to_json() const {
  nlohmann::json axes_json = nlohmann::json::object();
  for (const auto& [axis, value] : axes) axes_json[axis] = value;
  nlohmann::json vendor_json = nullptr;
  if (vendor)
    vendor_json = {{"median_s", vendor->median_s}, {"speedup", vendor->speedup}, {"fraction", vendor->fraction}};
  return {{"name", name},
          {"axes", axes_json},
          {"candidate", candidate.to_json()},
          {"baseline", baseline.to_json()},
          {"speedup", speedup},
          {"speedup_interval", {speedup_low, speedup_high}},
          {"roofline_fraction", optional_number(roofline_fraction)},
          {"gflops", gflops},
          {"gbytes_per_s", gbytes_per_s},
          {"stop", stop},
          {"batch", batch},
          {"rotation_sets", rotation_sets},
          {"rotation_bytes", rotation_bytes},
          {"time_s",
           {{"setup", setup_s},
            {"setup_ahead", setup_ahead_s},
            {"warmup", warmup_s},
            {"measured", measured_s},
            {"elapsed", elapsed_s},
            {"timed", timed_s}}},
          {"vendor", vendor_json}};
}

nlohmann::json EvalResult::to_json() const {
  nlohmann::json value;
  value["schema"] = 1;
  value["verdict"] = evoteam::to_string(verdict);
  value["reason"] = reason;
  value["passed"] = passed();
  value["infra"] = is_infra(verdict);
  value["evidence"] = evidence;
  value["task"] = task;
  value["target"] = target;
  value["device"] = device;
  value["candidate"] = {{"hash", candidate_hash}, {"params", evoteam::to_json(params)}};
  value["baseline"] = baseline;
  nlohmann::json requested = nlohmann::json::array();
  for (Stage stage : stages_requested) requested.push_back(evoteam::to_string(stage));
  value["stages_requested"] = requested;
  nlohmann::json stage_list = nlohmann::json::array();
  for (const StageRecord& stage : stages) {
    stage_list.push_back({{"name", stage.name},
                          {"status", evoteam::to_string(stage.status)},
                          {"wall_s", stage.wall_s},
                          {"detail", stage.detail}});
    if (stage.lock_wait_s > 0) stage_list.back()["lock_wait_s"] = stage.lock_wait_s;
  }
  value["stages"] = stage_list;
  value["speedup"] = optional_number(speedup);
  value["speedup_interval"] =
      speedup ? nlohmann::json{optional_number(speedup_low), optional_number(speedup_high)} : nlohmann::json(nullptr);
  value["roofline_fraction"] = optional_number(roofline_fraction);
  value["vendor"] = vendor ? vendor->to_json() : nlohmann::json(nullptr);
  nlohmann::json workload_list = nlohmann::json::array();
  for (const WorkloadResult& workload : workloads) workload_list.push_back(workload.to_json());
  value["workloads"] = workload_list;
  value["static_warnings"] = static_warnings;
  value["adopted_constraints"] = adopted_constraints ? nlohmann::json(*adopted_constraints) : nlohmann::json(nullptr);
  value["build"] = {{"log", build_log}, {"report", build_report}, {"cache_hit", build_cache_hit}, {"wall_s", build_s}};
  value["profile"] = profile;
  value["protocol"] = protocol;
  value["sandbox"] = sandbox;
  value["cache"] = {{"result_hit", result_cache_hit}, {"build_hit", build_cache_hit}};
  value["wall_s"] = wall_s;
  value["timed_s"] = timed_s;
  value["harness_version"] = harness_version;
  value["compiler"] = compiler;
  return value;
}

EvalResult EvalResult::from_json(const nlohmann::json& value) {
  EvalResult result;
  std::optional<Verdict> verdict = parse_verdict(value.value("verdict", ""));
  if (!verdict) throw InvalidInput("eval result: unknown verdict \"" + value.value("verdict", "") + "\"");
  result.verdict = *verdict;
  result.reason = value.value("reason", "");
  result.evidence = value.value("evidence", nlohmann::json::object());
  result.task = value.value("task", "");
  result.target = value.value("target", "");
  result.device = value.value("device", "");
  if (value.contains("candidate")) {
    result.candidate_hash = value["candidate"].value("hash", "");
    const nlohmann::json params = value["candidate"].value("params", nlohmann::json::object());
    for (const auto& [name, param] : params.items()) result.params[name] = param.get<std::string>();
  }
  result.baseline = value.value("baseline", "");
  for (const auto& name : value.value("stages_requested", nlohmann::json::array()))
    if (std::optional<Stage> stage = parse_stage(name.get<std::string>())) result.stages_requested.push_back(*stage);
  for (const auto& stage : value.value("stages", nlohmann::json::array()))
    result.stages.push_back(stage_record_from_json(stage));
  result.speedup = read_optional(value, "speedup");
  if (value.contains("speedup_interval") && value["speedup_interval"].is_array()) {
    const auto& interval = value["speedup_interval"];
    if (!interval[0].is_null()) result.speedup_low = interval[0].get<double>();
    if (!interval[1].is_null()) result.speedup_high = interval[1].get<double>();
  }
  result.roofline_fraction = read_optional(value, "roofline_fraction");
  if (value.contains("vendor") && value["vendor"].is_object())
    result.vendor = VendorComparison::from_json(value["vendor"]);
  for (const auto& item : value.value("workloads", nlohmann::json::array())) {
    WorkloadResult workload;
    workload.name = item.value("name", "");
    const nlohmann::json axes = item.value("axes", nlohmann::json::object());
    for (const auto& [axis, extent] : axes.items()) workload.axes[axis] = extent.get<std::int64_t>();
    workload.candidate = stats_from_json(item.value("candidate", nlohmann::json::object()));
    workload.baseline = stats_from_json(item.value("baseline", nlohmann::json::object()));
    workload.speedup = item.value("speedup", 0.0);
    if (item.contains("speedup_interval")) {
      workload.speedup_low = item["speedup_interval"][0].get<double>();
      workload.speedup_high = item["speedup_interval"][1].get<double>();
    }
    workload.roofline_fraction = read_optional(item, "roofline_fraction");
    workload.gflops = item.value("gflops", 0.0);
    workload.gbytes_per_s = item.value("gbytes_per_s", 0.0);
    workload.stop = item.value("stop", "");
    workload.batch = item.value("batch", 1);
    workload.rotation_sets = item.value("rotation_sets", 0);
    workload.rotation_bytes = item.value("rotation_bytes", std::uint64_t{0});
    const nlohmann::json time = item.value("time_s", nlohmann::json::object());
    workload.setup_s = time.value("setup", 0.0);
    workload.setup_ahead_s = time.value("setup_ahead", 0.0);
    workload.warmup_s = time.value("warmup", 0.0);
    workload.measured_s = time.value("measured", 0.0);
    workload.elapsed_s = time.value("elapsed", 0.0);
    workload.timed_s = time.value("timed", 0.0);
    if (item.contains("vendor") && item["vendor"].is_object()) {
      const nlohmann::json& vendor = item["vendor"];
      workload.vendor =
          VendorWorkload{vendor.value("median_s", 0.0), vendor.value("speedup", 0.0), vendor.value("fraction", 0.0)};
    }
    result.workloads.push_back(workload);
  }
  result.static_warnings = value.value("static_warnings", std::vector<std::string>{});
  if (value.contains("adopted_constraints") && value["adopted_constraints"].is_array())
    result.adopted_constraints = value["adopted_constraints"].get<std::vector<std::string>>();
  if (value.contains("build")) {
    result.build_log = value["build"].value("log", "");
    result.build_report = value["build"].value("report", nlohmann::json::object());
    result.build_cache_hit = value["build"].value("cache_hit", false);
    result.build_s = value["build"].value("wall_s", 0.0);
  }
  result.profile = value.value("profile", nlohmann::json());
  result.protocol = value.value("protocol", nlohmann::json::object());
  result.sandbox = value.value("sandbox", "");
  result.wall_s = value.value("wall_s", 0.0);
  result.timed_s = value.value("timed_s", 0.0);
  result.harness_version = value.value("harness_version", "");
  result.compiler = value.value("compiler", "");
  return result;
}

std::filesystem::path default_cache_dir(const EvalSettings& settings) {
  if (!settings.cache_dir.empty()) return settings.cache_dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    return std::filesystem::path(xdg) / "evoteam";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return std::filesystem::path(home) / ".cache" / "evoteam";
  return "/tmp/evoteam-cache";
}

Measurement measurement_of(const EvalResult& result) {
  Measurement measured;
  measured.verdict = result.verdict;
  measured.speedup = result.speedup;
  measured.roofline = result.roofline_fraction;
  measured.failure_signature = result.passed() ? "" : to_string(result.verdict) + ": " + result.reason.substr(0, 160);
  measured.adopted_constraints = result.adopted_constraints;
  if (!result.result_cache_hit)
    for (const StageRecord& stage : result.stages) {
      const bool ran = stage.status == StageStatus::passed || stage.status == StageStatus::failed;
      const std::optional<Stage> pipeline_stage = stage.stage();
      // The device's busy time only: a wait for its timing lock was another evaluation's time on it.
      if (ran && pipeline_stage != Stage::static_checks && pipeline_stage != Stage::build)
        measured.device_s += std::max(0.0, stage.wall_s - stage.lock_wait_s);
    }
  return measured;
}

}  // namespace evoteam
