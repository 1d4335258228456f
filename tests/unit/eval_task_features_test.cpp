// Task features beyond host_matmul: input hooks, integer generators, the glue for both targets, and the
// evaluator-wide secret that lets reference outputs be reused.
#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/eval/evaluator.hpp>

#include <gtest/gtest.h>

#include "eval/glue.hpp"
#include "support/temp_dir.hpp"
#include "unit/eval_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace evoteam;
using evoteam::testing::TempDir;

// y[i] = x[idx[i]] * scale[i % 4]: an index array from a hook, a small integer input from uniform_int.
Task gather_task(const fs::path& dir) {
  fs::create_directories(dir);
  write_json_atomic(dir / "task.json", nlohmann::json::parse(R"json({
    "name": "host_gather", "target": "host",
    "axes": {"N": {"type": "var"}, "M": {"type": "var"}},
    "inputs": {
      "x": {"dtype": "float32", "shape": ["N"]},
      "idx": {"dtype": "int32", "shape": ["M"], "generate": "hook:indices"},
      "scale": {"dtype": "int64", "shape": [4], "generate": {"kind": "uniform_int", "low": 1, "high": "4"}}
    },
    "outputs": {"y": {"dtype": "float32", "shape": ["M"]}},
    "entry": {"name": "gather", "args": ["x", "idx", "scale", "y", "N", "M"]},
    "reference": "reference.cpp", "kernel": {"files": ["kernel.cpp"]}, "hooks": "hooks.cpp",
    "workloads": [{"axes": {"N": 1000, "M": 300}}, {"axes": {"N": 50, "M": 2000}}],
    "flops": "M", "bytes": "4 * M * 3"
  })json"));
  const std::string body =
      "#include <cstdint>\n"
      "extern \"C\" void gather(const float* x, const std::int32_t* idx, const std::int64_t* scale, float* y,\n"
      "                       std::int64_t N, std::int64_t M) {\n"
      "  for (std::int64_t i = 0; i < M; ++i) y[i] = idx[i] >= 0 && idx[i] < N ? x[idx[i]] * float(scale[i % 4]) : "
      "-1.0f;\n"
      "}\n";
  write_file_atomic(dir / "reference.cpp", body);
  write_file_atomic(dir / "kernel.cpp", body);
  write_file_atomic(
      dir / "hooks.cpp",
      "#include <cstdint>\n#include \"harness_abi.h\"\n"
      "extern \"C\" void evoteam_hook_indices(void* data, int64_t count, const char* const* names,\n"
      "    const int64_t* values, int axes, uint64_t seed) {\n"
      "  const int64_t n = evoteam_axis_value(names, values, axes, \"N\");\n"
      "  auto* out = static_cast<std::int32_t*>(data);\n"
      "  for (int64_t i = 0; i < count; ++i) { seed = seed * 6364136223846793005ull + 1442695040888963407ull;\n"
      "    out[i] = static_cast<std::int32_t>((seed >> 33) % static_cast<uint64_t>(n)); }\n"
      "}\n");
  return load_task(dir);
}

TEST(EvalTaskFeatures, HookAndIntegerInputsReachTheKernel) {
  TempDir dir;
  Task task = gather_task(dir / "gather");
  Evaluator evaluator(evoteam::testing::eval_test_settings(), system_runner(), evoteam::testing::eval_test_cache());
  EvalOptions options = EvalOptions::through(Stage::timing);
  options.result_cache = CachePolicy::bypass;
  EvalResult result = evaluator.evaluate(task, Candidate::starting(task), options);
  EXPECT_EQ(result.verdict, Verdict::pass) << result.reason << " " << result.evidence.dump();
  // A kernel that ignores the scale fails on the integer inputs.
  fs::create_directories(dir / "wrong");
  write_file_atomic(
      dir / "wrong" / "kernel.cpp",
      "#include <cstdint>\nextern \"C\" void gather(const float* x, const std::int32_t* idx, const std::int64_t*,"
      " float* y, std::int64_t, std::int64_t M) { for (std::int64_t i = 0; i < M; ++i) y[i] = x[idx[i]]; }\n");
  EvalResult wrong = evaluator.evaluate(task, Candidate{dir / "wrong", {}}, EvalOptions::through(Stage::correctness));
  EXPECT_EQ(wrong.verdict, Verdict::numeric_mismatch) << wrong.reason;
}

TEST(EvalTaskFeatures, GlueCallsTheExactSignatureForEachTarget) {
  TempDir dir;
  Task task = gather_task(dir / "gather");
  const std::string host = eval::glue_source(task);
  EXPECT_NE(
      host.find("typedef void (*evoteam_entry_fn)(const float*, const std::int32_t*, const std::int64_t*, float*, "
                "std::int64_t, std::int64_t);"),
      std::string::npos)
      << host;
  EXPECT_NE(host.find("evoteam_hook_indices(data, count, k_axis_names, axes, 2, seed)"), std::string::npos);
  EXPECT_EQ(eval::entry_declaration(task),
            "extern \"C\" void gather(const float* x, const std::int32_t* idx, const std::int64_t* scale, float* y, "
            "std::int64_t N, std::int64_t M)");
  task.target = Target::cuda;
  const std::string cuda = eval::glue_source(task);
  EXPECT_NE(cuda.find("#include <cuda_runtime.h>"), std::string::npos);
  EXPECT_NE(cuda.find("std::int64_t, std::int64_t, cudaStream_t);"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("static_cast<cudaStream_t>(stream))"), std::string::npos);
  EXPECT_NE(eval::entry_declaration(task).find("cudaError_t gather("), std::string::npos);
}

TEST(EvalTaskFeatures, AnEvaluatorWideSecretReusesReferenceOutputs) {
  TempDir dir;
  Task task = evoteam::testing::small_matmul_task(dir / "task");
  EvalSettings settings = evoteam::testing::eval_test_settings();
  settings.correctness.secret_scope = SecretScope::evaluator;
  TempDir cache;  // references live in the cache; keep them out of the shared one
  fs::copy(evoteam::testing::eval_test_cache() / "harness", cache / "harness", fs::copy_options::recursive);
  Evaluator evaluator(settings, system_runner(), cache.path());
  EvalOptions options = EvalOptions::through(Stage::correctness);
  options.result_cache = CachePolicy::bypass;
  EvalResult first = evaluator.evaluate(task, Candidate::starting(task), options);
  EvalResult second = evaluator.evaluate(task, Candidate{task.dir, {{"TILE_N", "64"}}}, options);
  ASSERT_EQ(first.verdict, Verdict::pass) << first.reason;
  ASSERT_EQ(second.verdict, Verdict::pass) << second.reason;
  auto stage = [](const EvalResult& result, const std::string& name) {
    for (const StageRecord& record : result.stages)
      if (record.name == name) return to_string(record.status);
    return std::string("missing");
  };
  EXPECT_EQ(stage(first, "reference"), "passed");
  EXPECT_EQ(stage(second, "reference"), "cached");
  EXPECT_EQ(second.protocol["secret_scope"], "evaluator");
}

}  // namespace
