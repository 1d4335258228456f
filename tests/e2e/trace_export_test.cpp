// `evoteam export` end to end: a short host_matmul run, then its best candidate as a FlashInfer-Trace Solution and
// one Trace per workload, checked against the field lists of flashinfer-bench's schema (Solution, BuildSpec,
// SourceFile, Trace, Workload, input specs, Evaluation, Correctness, Performance, Environment): every required field
// present with its type, no field the schema does not name. Also `evoteam import`'s exit codes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/core/fs.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

using namespace evoteam::testing;
using json = nlohmann::json;

// A field's JSON type; `number_or_nan`: a float the schema serialises NaN of as the string "NaN".
enum class Kind { string, number, number_or_nan, boolean, object, array, string_or_null };

struct Field {
  const char* name;
  bool required;
  Kind kind;
};
using Fields = std::vector<Field>;

// The published field lists (flashinfer_bench/data/solution.py, trace.py, workload.py).
const Fields k_solution = {{"name", true, Kind::string},   {"definition", true, Kind::string},
                           {"author", true, Kind::string}, {"spec", true, Kind::object},
                           {"sources", true, Kind::array}, {"description", false, Kind::string_or_null}};
const Fields k_build_spec = {{"language", true, Kind::string},
                             {"target_hardware", true, Kind::array},
                             {"entry_point", true, Kind::string},
                             {"dependencies", false, Kind::array},
                             {"destination_passing_style", false, Kind::boolean},
                             {"binding", false, Kind::string_or_null}};
const Fields k_source_file = {{"path", true, Kind::string}, {"content", true, Kind::string}};
const Fields k_trace = {{"definition", true, Kind::string},
                        {"workload", true, Kind::object},
                        {"solution", false, Kind::string_or_null},
                        {"evaluation", false, Kind::object}};
const Fields k_workload = {{"axes", true, Kind::object}, {"inputs", true, Kind::object}, {"uuid", true, Kind::string}};
const Fields k_evaluation = {{"status", true, Kind::string},       {"environment", true, Kind::object},
                             {"timestamp", true, Kind::string},    {"log", false, Kind::string},
                             {"correctness", false, Kind::object}, {"performance", false, Kind::object}};
const Fields k_correctness = {{"max_relative_error", false, Kind::number_or_nan},
                              {"max_absolute_error", false, Kind::number_or_nan},
                              {"extra", false, Kind::object}};
const Fields k_performance = {{"latency_ms", false, Kind::number},
                              {"reference_latency_ms", false, Kind::number},
                              {"speedup_factor", false, Kind::number}};
const Fields k_environment = {{"hardware", true, Kind::string}, {"libs", false, Kind::object}};

bool has_kind(const json& value, Kind kind) {
  switch (kind) {
    case Kind::string: return value.is_string() && !value.get<std::string>().empty();
    case Kind::number: return value.is_number() && value.get<double>() >= 0;
    case Kind::number_or_nan: return (value.is_number() && value.get<double>() >= 0) || value == "NaN";
    case Kind::boolean: return value.is_boolean();
    case Kind::object: return value.is_object();
    case Kind::array: return value.is_array();
    case Kind::string_or_null: return value.is_null() || value.is_string();
  }
  return false;
}

void check(const json& value, const Fields& fields, const std::string& where, std::vector<std::string>& errors) {
  if (!value.is_object()) {
    errors.push_back(where + ": not an object");
    return;
  }
  for (const Field& field : fields) {
    if (!value.contains(field.name)) {
      if (field.required) errors.push_back(where + "." + field.name + ": missing");
      continue;
    }
    if (!has_kind(value[field.name], field.kind))
      errors.push_back(where + "." + field.name + ": wrong type: " + value[field.name].dump());
  }
  for (const auto& [key, item] : value.items()) {
    bool known = false;
    for (const Field& field : fields) known |= key == field.name;
    if (!known) errors.push_back(where + "." + key + ": not a field of the schema");
  }
}

std::vector<std::string> check_solution(const json& solution) {
  std::vector<std::string> errors;
  check(solution, k_solution, "solution", errors);
  if (!errors.empty()) return errors;
  const json& spec = solution["spec"];
  check(spec, k_build_spec, "solution.spec", errors);
  for (const char* language : {"python", "triton", "cpp", "cuda", "tilelang"})
    if (spec["language"] == language) goto language_ok;
  errors.push_back("solution.spec.language: not a supported language: " + spec["language"].dump());
language_ok:
  if (spec["target_hardware"].empty()) errors.push_back("solution.spec.target_hardware: empty");
  const std::string entry = spec["entry_point"].get<std::string>();
  const std::size_t separator = entry.find("::");
  if (separator == std::string::npos || entry.find("::", separator + 2) != std::string::npos)
    errors.push_back("solution.spec.entry_point: not FILE::FUNCTION: " + entry);
  bool entry_file_found = false;
  for (const json& source : solution["sources"]) {
    check(source, k_source_file, "solution.sources[]", errors);
    if (source.contains("path") && source["path"] == entry.substr(0, separator)) entry_file_found = true;
  }
  if (solution["sources"].empty()) errors.push_back("solution.sources: empty");
  if (!entry_file_found) errors.push_back("solution.spec.entry_point: its file is not among the sources");
  return errors;
}

std::vector<std::string> check_trace(const json& trace) {
  std::vector<std::string> errors;
  check(trace, k_trace, "trace", errors);
  if (!errors.empty()) return errors;
  check(trace["workload"], k_workload, "trace.workload", errors);
  for (const auto& [name, value] : trace["workload"]["axes"].items())
    if (!value.is_number_integer() || value.get<long long>() < 0)
      errors.push_back("trace.workload.axes." + name + ": not a non-negative integer");
  for (const auto& [name, spec] : trace["workload"]["inputs"].items()) {
    const std::string type = spec.value("type", "");
    if (type == "random")
      check(spec, {{"type", true, Kind::string}}, "trace.workload.inputs." + name, errors);
    else if (type == "scalar") {
      // value: int, float or bool, which no single Kind names.
      if (spec.size() != 2 || !spec.contains("value") || !(spec["value"].is_number() || spec["value"].is_boolean()))
        errors.push_back("trace.workload.inputs." + name + ": not {type, value} with a number: " + spec.dump());
    } else if (type == "safetensors") {
      check(spec, {{"type", true, Kind::string}, {"path", true, Kind::string}, {"tensor_key", true, Kind::string}},
            "trace.workload.inputs." + name, errors);
    } else {
      errors.push_back("trace.workload.inputs." + name + ".type: " + type);
    }
  }
  const json& evaluation = trace["evaluation"];
  check(evaluation, k_evaluation, "trace.evaluation", errors);
  if (!errors.empty()) return errors;
  check(evaluation["environment"], k_environment, "trace.evaluation.environment", errors);
  // PASSED needs both correctness and performance (the schema's status validator).
  if (evaluation["status"] != "PASSED") errors.push_back("trace.evaluation.status: " + evaluation["status"].dump());
  if (!evaluation.contains("correctness") || !evaluation.contains("performance"))
    errors.push_back("trace.evaluation: PASSED without correctness and performance");
  else {
    check(evaluation["correctness"], k_correctness, "trace.evaluation.correctness", errors);
    check(evaluation["performance"], k_performance, "trace.evaluation.performance", errors);
  }
  return errors;
}

TEST(TraceExportE2E, BestOfAHostMatmulRunIsASolutionWithATracePerWorkload) {
  TempDir dir;
  ProcessResult run =
      run_evoteam({"optimize", k_task.string(), "--runs-dir", (dir / "runs").string(), "--max-cycles", "2", "--json"},
                  std::chrono::seconds(300));
  ASSERT_TRUE(run.ok()) << describe(run);
  const std::filesystem::path run_dir = parse_stdout(run)["run_dir"].get<std::string>();

  ProcessResult exported =
      run_evoteam({"export", run_dir.string(), "--out", (dir / "trace").string(), "--json"}, std::chrono::seconds(60));
  ASSERT_TRUE(exported.ok()) << describe(exported);
  const json answer = parse_stdout(exported);
  EXPECT_EQ(answer["definition"], "host_matmul");
  ASSERT_TRUE(answer["notes"].is_array() && !answer["notes"].empty());
  EXPECT_NE(answer["notes"][0].get<std::string>().find("no published FlashInfer-Trace definition"), std::string::npos)
      << answer.dump(2);

  const json solution = read_json_file(answer["solution"].get<std::string>());
  for (const std::string& error : check_solution(solution))
    ADD_FAILURE() << error << "\n" << solution.dump(2).substr(0, 2000);
  EXPECT_EQ(solution["definition"], "host_matmul");
  EXPECT_EQ(solution["spec"]["language"], "cpp");
  EXPECT_EQ(solution["spec"]["entry_point"], "kernel.cpp::matmul");
  EXPECT_EQ(solution["spec"]["target_hardware"], json::array({"host"}));

  std::ifstream lines(answer["traces"].get<std::string>());
  const json task = read_json_file(run_dir / "task" / "task.json");
  const json best_eval = read_json_file(run_dir / "best" / "eval.json");
  std::size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    const json trace = json::parse(line);
    for (const std::string& error : check_trace(trace)) ADD_FAILURE() << error << "\n" << trace.dump(2);
    EXPECT_EQ(trace["solution"], solution["name"]);
    EXPECT_GT(trace["evaluation"]["performance"]["latency_ms"].get<double>(), 0.0);
    // One definition of speedup: the exported factor and latencies are the evaluator's (medians), not a ratio of
    // means that disagrees with `eval`.
    const json& performance = trace["evaluation"]["performance"];
    for (const json& measured : best_eval["workloads"]) {
      if (measured["name"] != trace["workload"]["uuid"]) continue;
      EXPECT_DOUBLE_EQ(performance["speedup_factor"].get<double>(), measured["speedup"].get<double>());
      EXPECT_DOUBLE_EQ(performance["latency_ms"].get<double>(), measured["candidate"]["median_s"].get<double>() * 1e3);
      EXPECT_DOUBLE_EQ(performance["reference_latency_ms"].get<double>(),
                       measured["baseline"]["median_s"].get<double>() * 1e3);
    }
  }
  EXPECT_EQ(count, task["workloads"].size());

  // A directory that is not a run is invalid input.
  ProcessResult refused = run_evoteam({"export", (dir / "trace").string()}, std::chrono::seconds(60));
  EXPECT_EQ(refused.exit_code, 3) << describe(refused);
}

TEST(TraceExportE2E, ImportExitsZeroWithFindingsAndThreeWhenStrict) {
  TempDir dir;
  const std::string data = std::string(EVOTEAM_SOURCE_DIR) + "/tests/data/flashinfer_trace/";
  ProcessResult imported =
      run_evoteam({"import", data + "definitions/gqa_paged_decode_h32_kv8_d128_ps1.json", "--workloads",
                   data + "workloads/gqa_paged_decode_h32_kv8_d128_ps1.jsonl", "--out", (dir / "gqa").string()},
                  std::chrono::seconds(60));
  EXPECT_EQ(imported.exit_code, 0) << describe(imported);
  EXPECT_NE(imported.out.text.find("workload.inputs.kv_indptr"), std::string::npos) << imported.out.text;
  EXPECT_NE(imported.out.text.find("still to write"), std::string::npos) << imported.out.text;
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "gqa" / "task.json"));

  ProcessResult strict = run_evoteam({"import", data + "definitions/gqa_paged_decode_h32_kv8_d128_ps1.json", "--out",
                                      (dir / "strict").string(), "--strict"},
                                     std::chrono::seconds(60));
  EXPECT_EQ(strict.exit_code, 3) << describe(strict);
  EXPECT_FALSE(std::filesystem::exists(dir / "strict"));
}

// Import, then the stages a machine without a GPU can run: each published definition our CUDA tasks follow becomes
// a task whose stubs pass the static stage and build for both archs with the real nvcc, the entry point's
// signature as the definition gives it. (Running and exporting a CUDA run needs a GPU; export is checked on the
// host run above.)
TEST(TraceExportE2E, EachPublishedDefinitionImportsToATaskThatBuildsForBothArchs) {
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc") && std::system("command -v nvcc >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "nvcc is not installed";
  TempDir dir;
  const std::string data = std::string(EVOTEAM_SOURCE_DIR) + "/tests/data/flashinfer_trace/";
  for (const char* name : {"gqa_paged_decode_h32_kv8_d128_ps1", "mla_paged_decode_h16_ckv512_kpe64_ps1",
                           "gdn_prefill_qk4_v8_d128_k_last", "gemm_n4096_k4096"}) {
    SCOPED_TRACE(name);
    const std::string out = (dir / name).string();
    ProcessResult imported =
        run_evoteam({"import", data + "definitions/" + name + ".json", "--out", out}, std::chrono::seconds(60));
    ASSERT_EQ(imported.exit_code, 0) << describe(imported);
    ProcessResult built =
        run_evoteam({"eval", out, "--stages", "static,build", "--json", "--cache-dir", (dir / "cache").string()},
                    std::chrono::seconds(300));
    EXPECT_EQ(built.exit_code, 0) << describe(built);
    const json result = parse_stdout(built);
    EXPECT_EQ(result.value("verdict", ""), "PASS") << built.out.text.substr(0, 2000);
    for (const char* arch : {"sm_90a", "sm_100a"})
      EXPECT_TRUE(result["build"]["report"]["archs"].contains(arch))
          << arch << ": " << result["build"]["report"].dump();
  }
}

}  // namespace
}  // namespace evoteam
