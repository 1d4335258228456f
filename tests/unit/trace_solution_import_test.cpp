// `evoteam import-solution` on the published Solutions kept in tests/data/flashinfer_trace/solutions/: one
// imported into the task that follows its definition keeps every source line verbatim, calls the task's entry
// point through the glue and records its provenance, which read_published_results gives back with the eval.json
// beside it; each Solution the task cannot take is refused naming the field that stopped it.
#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/eval/evaluator.hpp>
#include <evoteam/task/task.hpp>
#include <evoteam/trace/solution_import.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::TempDir;

const fs::path k_root = EVOTEAM_SOURCE_DIR;
const fs::path k_solutions = k_root / "tests" / "data" / "flashinfer_trace" / "solutions";
const fs::path k_definitions = k_root / "tests" / "data" / "flashinfer_trace" / "definitions";
const std::string k_gqa = "gqa_paged_decode_h32_kv8_d128_ps1";
const fs::path k_gqa_solution = k_solutions / k_gqa / ("gpt-5.2_" + k_gqa + "_cuda_optimized_r10_c0_high.json");

// The field a refusal names, or "" when the import went through.
std::string refused_field(const fs::path& solution, const std::string& task_name, const fs::path& out,
                          const ImportSolutionOptions& options = {}) {
  const Task task = load_task(k_root / "kernels" / task_name);
  try {
    import_solution(solution, task, out, options);
  } catch (const SolutionRefused& refused) {
    EXPECT_NE(std::string(refused.what()).find(refused.field()), std::string::npos) << refused.what();
    return refused.field();
  }
  return "";
}

// The gqa Solution with one change, written to `dir`.
fs::path edited_solution(const fs::path& dir, const std::function<void(json&)>& edit) {
  json solution = json::parse(read_file(k_gqa_solution));
  edit(solution);
  evoteam::create_directories(dir);
  const fs::path file = dir / "edited.json";
  write_file_atomic(file, solution.dump(2));
  return file;
}

TEST(SolutionImport, APublishedSolutionBecomesACandidateWithItsSourcesVerbatimAndItsProvenance) {
  TempDir dir;
  const Task task = load_task(k_root / "kernels" / k_gqa);
  ImportSolutionOptions options;
  options.definition = k_definitions / (k_gqa + ".json");
  const ImportedSolution imported = import_solution(k_gqa_solution, task, dir / "candidate", options);
  EXPECT_EQ(imported.author, "gpt-5.2");
  EXPECT_EQ(imported.definition, k_gqa);
  EXPECT_EQ(imported.entry_point, "main.cpp::run");

  const std::string kernel = read_file(dir / "candidate" / task.kernel_files.front());
  const json solution = json::parse(read_file(k_gqa_solution));
  for (const json& source : solution["sources"]) {
    std::istringstream lines(source["content"].get<std::string>());
    for (std::string line; std::getline(lines, line);) {
      if (line.find("#include") != std::string::npos) continue;  // the local and torch ones are commented out
      EXPECT_NE(kernel.find(line), std::string::npos) << source["path"] << ": " << line;
    }
  }
  EXPECT_NE(kernel.find("extern \"C\" cudaError_t " + task.entry.name + "("), std::string::npos);
  EXPECT_NE(kernel.find("// (import-solution) #include \"kernel.h\""), std::string::npos);

  const json record = json::parse(read_file(dir / "candidate" / "published.json"));
  EXPECT_EQ(record["task"], task.name);
  EXPECT_EQ(record["solution_sha256"], sha256_hex(read_file(k_gqa_solution)));
  const json provenance = json::parse(read_file(k_gqa_solution.parent_path() / "provenance.json"));
  const json& published = provenance[k_gqa_solution.filename().string()];
  EXPECT_EQ(record["source"]["repository"], published["repository"]);
  EXPECT_EQ(record["source"]["commit"], published["commit"]);
  EXPECT_EQ(record["source"]["path"], published["path"]);

  // Read back: once before it is evaluated, once with the eval.json `evoteam eval --json` writes.
  std::vector<PublishedResult> results = read_published_results(dir.path());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].author, "gpt-5.2");
  EXPECT_EQ(results[0].solution, imported.name);
  EXPECT_EQ(results[0].source.commit, published["commit"]);
  EXPECT_FALSE(results[0].eval.has_value());
  EvalResult evaluated;
  evaluated.task = task.name;
  evaluated.verdict = Verdict::static_reject;
  evaluated.reason = "forbidden host symbol cudaStreamSynchronize (synchronisation) (sm_90a)";
  write_json_atomic(dir / "candidate" / "eval.json", evaluated.to_json());
  results = read_published_results(dir / "candidate");
  ASSERT_EQ(results.size(), 1u);
  ASSERT_TRUE(results[0].eval.has_value());
  EXPECT_EQ(results[0].eval->verdict, Verdict::static_reject);
  EXPECT_EQ(results[0].eval->reason, evaluated.reason);
}

// A Solution file that is not there is bad input (exit 3) naming it, not an I/O failure (exit 74, kept for refused
// writes); so is a --definition that is not there.
TEST(SolutionImport, AMissingSolutionOrDefinitionFileIsInvalidInputNamingIt) {
  TempDir dir;
  const Task task = load_task(k_root / "kernels" / k_gqa);
  try {
    import_solution(dir / "missing.json", task, dir / "out", {});
    ADD_FAILURE() << "imported";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::invalid_input) << error.what();
    EXPECT_NE(std::string(error.what()).find("missing.json: no such file"), std::string::npos) << error.what();
  }
  ImportSolutionOptions options;
  options.definition = dir / "no_definition.json";
  try {
    import_solution(k_gqa_solution, task, dir / "out2", options);
    ADD_FAILURE() << "imported";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::invalid_input) << error.what();
  }
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(SolutionImport, RefusesAPythonLanguageNamingSpecLanguage) {
  TempDir dir;
  const fs::path file = edited_solution(dir.path(), [](json& s) { s["spec"]["language"] = "triton"; });
  EXPECT_EQ(refused_field(file, k_gqa, dir / "out"), "spec.language");
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(SolutionImport, RefusesACudaSolutionForAHostTaskNamingSpecLanguage) {
  TempDir dir;
  EXPECT_EQ(refused_field(k_gqa_solution, "host_matmul", dir / "out"), "spec.language");
}

TEST(SolutionImport, RefusesAnotherDefinitionsSolutionNamingDefinition) {
  TempDir dir;
  const fs::path mla = k_solutions / "mla_paged_decode_h16_ckv512_kpe64_ps1" /
                       "gpt-5.2_mla_paged_decode_h16_ckv512_kpe64_ps1_cuda_optimized_r10_c0_high.json";
  EXPECT_EQ(refused_field(mla, k_gqa, dir / "out"), "definition");
}

TEST(SolutionImport, RefusesTheDefaultTvmFfiBindingNamingSpecBinding) {
  TempDir dir;
  // Published without a binding field: the schema's default, tvm-ffi.
  EXPECT_EQ(refused_field(k_solutions / "gemm_n4096_k4096" / "example_agent_solution.json", "gemm_bf16", dir / "out"),
            "spec.binding");
}

TEST(SolutionImport, RefusesASolutionWrittenForTheDefinitionsDtypeNamingTheTensor) {
  TempDir dir;
  ImportSolutionOptions options;
  options.definition = k_definitions / "gemm_n4096_k4096.json";
  // The definition is float16; gemm_bf16 follows it in bfloat16.
  EXPECT_EQ(refused_field(k_solutions / "gemm_n4096_k4096" / "gpt-5.2_gemm_n4096_k4096_cuda_optimized_r10_c0_high.json",
                          "gemm_bf16", dir / "out", options),
            "definition.inputs.A.dtype");
}

TEST(SolutionImport, RefusesAnEntryPointOutsideItsSourcesNamingSpecEntryPoint) {
  TempDir dir;
  const fs::path file = edited_solution(dir.path(), [](json& s) { s["spec"]["entry_point"] = "binding.cpp::run"; });
  EXPECT_EQ(refused_field(file, k_gqa, dir / "out"), "spec.entry_point");
}

TEST(SolutionImport, RefusesDependenciesNamingSpecDependencies) {
  TempDir dir;
  const fs::path file = edited_solution(dir.path(), [](json& s) { s["spec"]["dependencies"] = {"CUTLASS_3_7"}; });
  EXPECT_EQ(refused_field(file, k_gqa, dir / "out"), "spec.dependencies");
}

TEST(SolutionImport, RefusesPythonSourcesNamingTheSource) {
  TempDir dir;
  const fs::path file = edited_solution(dir.path(), [](json& s) { s["sources"][0]["path"] = "kernel.py"; });
  EXPECT_EQ(refused_field(file, k_gqa, dir / "out"), "sources[0].path");
}

TEST(SolutionImport, RefusesAMissingEntryPointNamingIt) {
  TempDir dir;
  const fs::path file = edited_solution(dir.path(), [](json& s) { s["spec"].erase("entry_point"); });
  EXPECT_EQ(refused_field(file, k_gqa, dir / "out"), "spec.entry_point");
}

}  // namespace
}  // namespace evoteam
