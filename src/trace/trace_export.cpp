// `evoteam export`: the run's best candidate as a FlashInfer-Trace Solution and its final evaluation as one
// Trace per workload. Field lists follow flashinfer-bench's Solution, BuildSpec, SourceFile, Trace, Workload,
// Evaluation, Correctness, Performance and Environment; where an evoteam figure means something else than the
// field's name says, the trace's log and correctness.extra say so.
#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <map>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/eval/verdict.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/task/task.hpp>
#include <evoteam/trace/trace_export.hpp>

namespace evoteam {
namespace {

using ojson = nlohmann::ordered_json;

// The FlashInfer-Trace hardware names of the archs evoteam builds for.
std::string hardware_of_arch(const std::string& arch) {
  static const std::map<std::string, std::string> names = {{"sm_80", "NVIDIA_A100"},  {"sm_89", "NVIDIA_L40S"},
                                                           {"sm_90", "NVIDIA_H100"},  {"sm_90a", "NVIDIA_H100"},
                                                           {"sm_100", "NVIDIA_B200"}, {"sm_100a", "NVIDIA_B200"}};
  const auto found = names.find(arch);
  return found == names.end() ? arch : found->second;
}

std::string text_field(const nlohmann::json& object, const std::string& key) {
  return object.contains(key) && object[key].is_string() ? object[key].get<std::string>() : "";
}

// "g++ (Debian 12.2.0) 12.2.0; x86_64-linux-gnu; Intel(R) Xeon(R) Processor" -> its parts.
std::vector<std::string> compiler_parts(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find("; ", start);
    if (end == std::string::npos) end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 2;
  }
  return parts;
}

std::string modified_iso(const std::filesystem::path& file) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0) return "unknown";
  std::tm parts{};
  ::gmtime_r(&info.st_mtime, &parts);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

// The median of one side's timed calls: the statistic evoteam's speedup is a ratio of (eval's `speedup` is the
// baseline's median over the candidate's), so the exported latencies and speedup_factor agree with `eval`.
double median_seconds(const nlohmann::json& workload, const std::string& side, const std::filesystem::path& file) {
  if (!workload.contains(side) || !workload[side].is_object() || !workload[side].contains("median_s") ||
      !workload[side]["median_s"].is_number())
    throw InvalidInput(file.string() + ": workloads." + text_field(workload, "name") + "." + side +
                       ".median_s: missing (an evaluation without timing)");
  return workload[side]["median_s"].get<double>();
}

ojson source_files(const std::filesystem::path& src_dir, const nlohmann::json& params) {
  // A candidate's params are -D flags of its build; a Solution has no build flags, so they travel as defines
  // at the top of every file (guarded, so a build that passes them still compiles).
  std::string defines;
  for (const auto& [name, value] : params.items())
    defines += "#ifndef " + name + "\n#define " + name + " " +
               (value.is_string() ? value.get<std::string>() : value.dump()) + "\n#endif\n";
  if (!defines.empty()) defines = "// evoteam params of this candidate\n" + defines + "\n";
  ojson sources = ojson::array();
  for (const std::filesystem::path& file : files_under(src_dir)) {
    ojson source = ojson::object();
    source["path"] = std::filesystem::relative(file, src_dir).generic_string();
    source["content"] = defines + read_file(file);
    sources.push_back(source);
  }
  return sources;
}

// What export reads of a run: its best candidate's evaluation, meta and params, and the frozen task.
struct BestOfRun {
  nlohmann::json run;
  std::filesystem::path dir;  // best/
  nlohmann::json eval;
  nlohmann::json meta;
  nlohmann::json params;
  Task task;
};

BestOfRun read_best(const std::filesystem::path& run_dir) {
  BestOfRun best;
  best.run = read_run_json(run_dir);
  best.dir = run_dir / "best";
  if (!std::filesystem::is_regular_file(best.dir / "eval.json"))
    throw InvalidInput((best.dir / "eval.json").string() + ": no such file (the run has no best candidate to export)");
  best.eval = read_json_file(best.dir / "eval.json");
  const auto optional_file = [&best](const char* name) {
    return std::filesystem::is_regular_file(best.dir / name) ? read_json_file(best.dir / name)
                                                             : nlohmann::json::object();
  };
  best.meta = optional_file("meta.json");
  best.params = optional_file("params.json");
  if (parse_verdict(text_field(best.eval, "verdict")) != Verdict::pass)
    throw InvalidInput((best.dir / "eval.json").string() + ": verdict: " + text_field(best.eval, "verdict") +
                       ", not PASS; only a passing candidate makes a Solution");
  best.task = load_task(run_dir / "task");
  return best;
}

// The Solution's spec: language, hardware, the entry point in its first compiled file, dependencies.
ojson solution_spec(const Task& task) {
  std::string source_file = task.kernel_files.empty() ? "" : task.kernel_files.front();
  for (const std::string& file : task.kernel_files) {
    const std::string extension = std::filesystem::path(file).extension().string();
    if (extension == ".cu" || extension == ".cpp" || extension == ".cc" || extension == ".cxx") {
      source_file = file;
      break;
    }
  }
  ojson spec = ojson::object();
  spec["language"] = task.target == Target::cuda ? "cuda" : "cpp";
  ojson hardware = ojson::array();
  if (task.target == Target::cuda) {
    for (const std::string& arch : task.archs)
      if (std::find(hardware.begin(), hardware.end(), hardware_of_arch(arch)) == hardware.end())
        hardware.push_back(hardware_of_arch(arch));
  } else {
    hardware.push_back("host");
  }
  spec["target_hardware"] = hardware;
  spec["entry_point"] = source_file + "::" + task.entry.name;
  spec["dependencies"] = task.libraries;
  spec["destination_passing_style"] = true;
  return spec;
}

ojson make_solution(const BestOfRun& best, const std::string& name, const std::string& definition) {
  const Task& task = best.task;
  ojson solution = ojson::object();
  solution["name"] = name;
  solution["definition"] = definition;
  solution["author"] =
      "evoteam" +
      (text_field(best.meta, "author_role").empty() ? "" : " (" + text_field(best.meta, "author_role") + ")");
  solution["spec"] = solution_spec(task);
  solution["sources"] = source_files(best.dir / "src", best.params);
  solution["description"] =
      "The best candidate of evoteam run " + text_field(best.run, "id") + " on task " + task.name +
      ". Its entry point is " +
      "an extern \"C\" function taking raw pointers (inputs, outputs), scalars by value and the var axes as int64_t" +
      (task.target == Target::cuda ? ", with a trailing cudaStream_t" : "") +
      " in the task's order, not a torch or tvm-ffi binding; its params are defines at the top of each file.";
  if (solution["sources"].empty()) throw InvalidInput((best.dir / "src").string() + ": no source files");
  return solution;
}

// Where the best was measured: the device (or the CPU the compiler names), compiler, harness and sandbox.
ojson environment_of(const nlohmann::json& eval) {
  const std::vector<std::string> compiler = compiler_parts(text_field(eval, "compiler"));
  std::string device = text_field(eval, "device");
  if (device.empty() || device == "host") device = compiler.size() >= 3 && !compiler[2].empty() ? compiler[2] : "host";
  ojson environment = ojson::object();
  environment["hardware"] = device;
  ojson libs = ojson::object();
  if (!compiler.empty() && !compiler[0].empty()) libs["compiler"] = compiler[0];
  if (!text_field(eval, "harness_version").empty()) libs["evoteam_harness"] = text_field(eval, "harness_version");
  if (!text_field(eval, "sandbox").empty()) libs["sandbox"] = text_field(eval, "sandbox");
  environment["libs"] = libs;
  return environment;
}

// One workload's Trace: its axes and input kinds, the correctness the evaluation vouches for, the latencies.
ojson trace_of(const BestOfRun& best, const nlohmann::json& measured, const std::string& definition,
               const std::string& solution_name) {
  const Task& task = best.task;
  const std::filesystem::path eval_file = best.dir / "eval.json";
  ojson workload = ojson::object();
  workload["uuid"] = text_field(measured, "name");
  ojson axes = ojson::object();
  for (const Axis& axis : task.axes)
    if (!axis.is_const && measured.contains("axes") && measured["axes"].contains(axis.name))
      axes[axis.name] = measured["axes"][axis.name];
  workload["axes"] = axes;
  ojson inputs = ojson::object();
  for (const TensorSpec& input : task.inputs) inputs[input.name] = {{"type", "random"}};
  for (const ScalarSpec& scalar : task.scalars) inputs[scalar.name] = {{"type", "scalar"}, {"value", scalar.value}};
  workload["inputs"] = inputs;

  ojson tolerances = ojson::object();
  for (const auto& [output, tolerance] : task.tolerances)
    tolerances[output] = {{"rtol", tolerance.rtol},
                          {"atol", tolerance.atol},
                          {"atol_rms", tolerance.atol_rms},
                          {"normwise", tolerance.normwise}};
  ojson correctness = ojson::object();
  // evoteam records the errors of failing outputs only: the maxima of a passing one were not kept. NaN is
  // the schema's value for "not a number", written as a string as flashinfer-bench itself writes it.
  correctness["max_relative_error"] = "NaN";
  correctness["max_absolute_error"] = "NaN";
  const nlohmann::json& eval = best.eval;
  correctness["extra"] = {
      {"evoteam_verdict", "PASS"},
      {"within_tolerances", tolerances},
      {"correctness_trials",
       eval.contains("protocol") && eval["protocol"].is_object() ? eval["protocol"].value("correctness_trials", 0) : 0},
      {"note", "every output within the task's tolerances on every trial; the maximum errors were not recorded"}};
  const double latency_ms = median_seconds(measured, "candidate", eval_file) * 1e3;
  const double reference_ms = median_seconds(measured, "baseline", eval_file) * 1e3;
  ojson performance = ojson::object();
  performance["latency_ms"] = latency_ms;
  performance["reference_latency_ms"] = reference_ms;
  // The evaluator's own figure where it recorded one, so `export` and `eval` never disagree.
  performance["speedup_factor"] = measured.contains("speedup") && measured["speedup"].is_number()
                                      ? measured["speedup"].get<double>()
                                      : (latency_ms > 0 ? reference_ms / latency_ms : 0.0);

  ojson evaluation = ojson::object();
  evaluation["status"] = "PASSED";
  evaluation["environment"] = environment_of(eval);
  evaluation["timestamp"] = modified_iso(eval_file);
  evaluation["log"] =
      "evoteam evaluation (verdict PASS). reference_latency_ms is the latency of the run's baseline (" +
      text_field(eval, "baseline") +
      "), not of the definition's reference, and speedup_factor is against it. Both latencies are medians of the "
      "timed calls and speedup_factor is evoteam's per-workload speedup (the baseline's median over the "
      "candidate's), the figure `evoteam eval` reports. Inputs came from evoteam's "
      "generators (the correctness battery and the task's hooks), not from the workload's input specs.";
  evaluation["correctness"] = correctness;
  evaluation["performance"] = performance;
  ojson trace = ojson::object();
  trace["definition"] = definition;
  trace["workload"] = workload;
  trace["solution"] = solution_name;
  trace["evaluation"] = evaluation;
  return trace;
}

}  // namespace

ExportedRun export_run(const std::filesystem::path& run_dir, const std::filesystem::path& out_dir,
                       const ExportOptions& options) {
  const BestOfRun best = read_best(run_dir);
  const Task& task = best.task;
  ExportedRun exported;
  const bool named = !options.definition.empty();
  exported.definition = named ? options.definition : task.name;
  if (!named)
    exported.notes.push_back(
        task.target == Target::host
            ? "definition \"" + task.name +
                  "\" is the task's name: a host task follows no published FlashInfer-Trace definition"
            : "definition \"" + task.name +
                  "\" is the task's name; pass --definition when the task follows a definition of another name");
  const std::string hash = text_field(best.eval.value("candidate", nlohmann::json::object()), "hash");
  const std::string solution_name =
      "evoteam_" + task.name + "_" +
      (hash.empty() ? text_field(best.run.value("summary", nlohmann::json::object()), "best_candidate")
                    : hash.substr(0, 8));
  exported.solution = make_solution(best, solution_name, exported.definition);

  if (!best.eval.contains("workloads") || !best.eval["workloads"].is_array() || best.eval["workloads"].empty())
    throw InvalidInput((best.dir / "eval.json").string() + ": workloads: none measured");
  for (const nlohmann::json& measured : best.eval["workloads"])
    exported.traces.push_back(trace_of(best, measured, exported.definition, solution_name));
  exported.notes.push_back("reference_latency_ms and speedup_factor are against the baseline (" +
                           text_field(best.eval, "baseline") +
                           "); latencies are medians, and speedup_factor is eval's speedup (median over median)");
  exported.notes.push_back(
      "max_relative_error and max_absolute_error are NaN: evoteam keeps the errors of failing outputs only");

  exported.solution_file = out_dir / "solutions" / exported.definition / (solution_name + ".json");
  exported.traces_file = out_dir / "traces" / (exported.definition + ".jsonl");
  evoteam::create_directories(exported.solution_file.parent_path());
  evoteam::create_directories(exported.traces_file.parent_path());
  write_file_atomic(exported.solution_file, exported.solution.dump(2) + "\n");
  std::string lines;
  for (const ojson& trace : exported.traces) lines += trace.dump() + "\n";
  write_file_atomic(exported.traces_file, lines);
  return exported;
}

}  // namespace evoteam
