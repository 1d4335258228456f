// The CUDA target backend with the real nvcc, no GPU needed: every shipped CUDA task's starting kernel passes the
// static stage and builds for each declared arch (sm_90a and sm_100a), its reference and library baseline build,
// the harness builds with the task's glue and hooks and passes its self-test, hostile candidates are rejected by
// the static stage, and an evaluation on a machine without a GPU says so after building. Builds are cached in the
// build tree, so reruns are fast. Skips with a reason when nvcc is not installed.
#include <gtest/gtest.h>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/inventory.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/eval/evaluator.hpp>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

#include <evoteam/eval/sandbox.hpp>
#include "eval/cuda/cuda_backend.hpp"
#include "eval/cuda/cuda_tools.hpp"
#include "eval_test_support.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;

#define REQUIRE_NVCC()                                                                             \
  do {                                                                                             \
    if (!cuda::find_cuda_tool("nvcc")) GTEST_SKIP() << "nvcc is not installed (set EVOTEAM_NVCC)"; \
  } while (0)

std::vector<Task> shipped_cuda_tasks() {
  std::vector<Task> tasks;
  for (const auto& entry : fs::directory_iterator(install_root() / "kernels"))
    if (fs::is_regular_file(entry.path() / "task.json")) {
      Task task = load_task(entry.path());
      if (task.target == Target::cuda) tasks.push_back(task);
    }
  std::sort(tasks.begin(), tasks.end(), [](const Task& a, const Task& b) { return a.name < b.name; });
  return tasks;
}

struct Builder {
  CompileSlots slots{2};
  CudaBuilder cuda{testing::eval_test_settings(), system_runner(), testing::eval_test_cache() / "cuda", slots};
};

BuildOutcome build_files(Builder& builder, const Task& task, std::map<std::string, std::string> files, bool untrusted,
                         const std::optional<ParamAssignment>& params = std::nullopt) {
  BuildRequest request;
  request.task = &task;
  request.files = std::move(files);
  request.params = params ? *params : untrusted ? default_params(task) : ParamAssignment{};
  request.untrusted = untrusted;
  return builder.cuda.build(request, SandboxMode::none);
}

std::map<std::string, std::string> starting_files(const Task& task) {
  std::map<std::string, std::string> files;
  for (const std::string& name : task.kernel_files) files[name] = read_file(task.dir / name);
  return files;
}

std::string describe(const BuildOutcome& outcome) {
  return to_string(outcome.status) + ": " + outcome.reason + "\n" + outcome.log.substr(0, 3000);
}

TEST(CudaTasks, TheLibraryHasTheCudaTasksItPromises) {
  std::set<std::string> names;
  for (const Task& task : shipped_cuda_tasks()) {
    names.insert(task.name);
    EXPECT_EQ(task.archs, (std::vector<std::string>{"sm_90a", "sm_100a"})) << task.name;
    EXPECT_FALSE(task.flops.empty()) << task.name << " has no FLOP formula";
    EXPECT_FALSE(task.bytes.empty()) << task.name << " has no byte formula";
    EXPECT_TRUE(fs::is_regular_file(task.dir / "README.md")) << task.name;
    EXPECT_TRUE(fs::is_regular_file(task.dir / "cpu_reference.cpp")) << task.name << " has no CPU reference";
  }
  for (const char* wanted :
       {"mla_paged_decode_h16_ckv512_kpe64_ps1", "gdn_prefill_qk4_v8_d128_k_last", "gqa_paged_decode_h32_kv8_d128_ps1",
        "gemm_bf16", "rmsnorm_h4096", "kmeans_assign", "gemm_allreduce"})
    EXPECT_TRUE(names.count(wanted)) << "missing task " << wanted;
}

// gemm_bf16_wgmma is gemm_bf16 with its rules: the same files and the same task, apart from its name, its extra
// (once-adopted, per-arch) constraints and its expectation of tensor cores. Its CPU reference is gemm_bf16's.
TEST(CudaTasks, TheWgmmaVariantIsGemmBf16WithItsRules) {
  const fs::path base_dir = install_root() / "kernels" / "gemm_bf16";
  const fs::path variant_dir = install_root() / "kernels" / "gemm_bf16_wgmma";
  for (const char* file : {"reference.cu", "kernel.cu", "baseline_cublas.cu"})
    EXPECT_EQ(read_file(variant_dir / file), read_file(base_dir / file)) << file << " drifted from gemm_bf16's";
  const auto read_task = [](const fs::path& dir) {
    return nlohmann::json::parse(read_file(dir / "task.json"), nullptr, true, true);
  };
  nlohmann::json base = read_task(base_dir), variant = read_task(variant_dir);
  const nlohmann::json base_constraints = base["static_constraints"],
                       variant_constraints = variant["static_constraints"];
  for (const char* own : {"name", "description", "static_constraints", "expects_tensor_cores"})
    base.erase(own), variant.erase(own);
  EXPECT_EQ(variant, base);
  ASSERT_GT(variant_constraints.size(), base_constraints.size());
  for (std::size_t i = 0; i < base_constraints.size(); ++i) EXPECT_EQ(variant_constraints[i], base_constraints[i]);

  const Task task = load_task(variant_dir);
  EXPECT_TRUE(task.expects_tensor_cores);
  const auto wgmma = std::find_if(task.static_constraints.begin(), task.static_constraints.end(),
                                  [](const StaticConstraint& c) { return c.name == "wgmma_sm90a"; });
  ASSERT_NE(wgmma, task.static_constraints.end());
  EXPECT_TRUE(wgmma->once_adopted && wgmma->required);
  EXPECT_EQ(wgmma->scope, "ptx");
  EXPECT_EQ(wgmma->archs, std::vector<std::string>{"sm_90a"});
}

TEST(CudaTasks, EveryStartingKernelReferenceAndBaselineBuildsForEveryArchAndPassesTheStaticStage) {
  REQUIRE_NVCC();
  Builder builder;
  for (const Task& task : shipped_cuda_tasks()) {
    SCOPED_TRACE(task.name);
    const BuildOutcome starting = build_files(builder, task, starting_files(task), true);
    EXPECT_EQ(starting.status, BuildStatus::ok) << describe(starting);
    if (starting.status == BuildStatus::ok) {
      for (const std::string& arch : task.archs) EXPECT_TRUE(starting.report["archs"].contains(arch)) << arch;
      EXPECT_TRUE(fs::is_regular_file(starting.library));
    }
    const BuildOutcome reference =
        build_files(builder, task, {{task.reference_file, read_file(task.dir / task.reference_file)}}, false);
    EXPECT_EQ(reference.status, BuildStatus::ok) << describe(reference);
    if (task.baseline.kind == BaselineKind::library) {
      const BuildOutcome baseline =
          build_files(builder, task, {{task.baseline.file, read_file(task.dir / task.baseline.file)}}, false);
      EXPECT_EQ(baseline.status, BuildStatus::ok) << describe(baseline);
    }
  }
}

// The builtin team searches a task's declared params like an autotuner, so every point of the space must
// build. The first and the last valid assignments take the smallest and the largest values the constraints allow.
TEST(CudaTasks, EveryStartingKernelBuildsAtTheCornersOfItsParamSpace) {
  REQUIRE_NVCC();
  Builder builder;
  for (const Task& task : shipped_cuda_tasks()) {
    const std::vector<ParamAssignment> space = param_space(task);
    if (space.size() <= 1) continue;
    for (const ParamAssignment& corner : {space.front(), space.back()}) {
      SCOPED_TRACE(task.name + " at " + describe_params(corner));
      const BuildOutcome outcome = build_files(builder, task, starting_files(task), true, corner);
      EXPECT_EQ(outcome.status, BuildStatus::ok) << describe(outcome);
    }
  }
}

TEST(CudaTasks, TheHarnessBuildsWithEachTasksGlueAndPassesItsSelfTest) {
  REQUIRE_NVCC();
  Builder builder;
  for (const Task& task : shipped_cuda_tasks()) {
    SCOPED_TRACE(task.name);
    fs::path harness;
    try {
      harness = builder.cuda.harness(task);
    } catch (const Error& error) {
      ADD_FAILURE() << error.what();
      continue;
    }
    Command self_test;
    self_test.argv = {harness.string(), "--result-fd", "3", "--self-test"};
    self_test.result_fd = 3;
    self_test.timeout = std::chrono::milliseconds(60'000);
    const ProcessResult result = system_runner().run(self_test);
    EXPECT_TRUE(result.ok()) << result.describe() << result.err.text;
    const nlohmann::json record = nlohmann::json::parse(result.result.text, nullptr, false);
    ASSERT_FALSE(record.is_discarded()) << result.result.text;
    EXPECT_EQ(record.value("ev", ""), "self_test");
    EXPECT_EQ(record.value("failed", -1), 0);
  }
}

// A copy of rmsnorm_h4096 whose kernel is `source`, evaluated as a candidate.
BuildOutcome build_candidate(Builder& builder, const std::string& task_name, const std::string& file,
                             const std::string& source) {
  const Task task = load_task(install_root() / "kernels" / task_name);
  std::map<std::string, std::string> files = starting_files(task);
  files[file] = source;
  return build_files(builder, task, files, true);
}

TEST(CudaStaticStage, RejectsASideStreamAnAllocationAHarnessKernelNameAndBrokenCode) {
  REQUIRE_NVCC();
  Builder builder;
  const std::string prefix = R"(#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cstdint>
extern "C" cudaError_t rmsnorm(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, std::int64_t batch_size,
                               std::int64_t hidden_size, float eps, cudaStream_t stream) {
)";
  const BuildOutcome side_stream =
      build_candidate(builder, "rmsnorm_h4096", "kernel.cu",
                      prefix +
                          "  cudaStream_t other; cudaStreamCreate(&other); (void)x; (void)w; (void)y; "
                          "(void)batch_size; (void)hidden_size; (void)eps; (void)stream;\n  return cudaSuccess;\n}\n");
  EXPECT_EQ(side_stream.status, BuildStatus::static_reject) << describe(side_stream);
  EXPECT_NE(side_stream.reason.find("cudaStreamCreate"), std::string::npos) << side_stream.reason;

  const BuildOutcome allocation =
      build_candidate(builder, "rmsnorm_h4096", "kernel.cu",
                      prefix +
                          "  void* p; cudaMalloc(&p, 64); (void)x; (void)w; (void)y; (void)batch_size; "
                          "(void)hidden_size; (void)eps; (void)stream;\n  return cudaSuccess;\n}\n");
  EXPECT_EQ(allocation.status, BuildStatus::static_reject) << describe(allocation);

  const BuildOutcome reserved =
      build_candidate(builder, "rmsnorm_h4096", "kernel.cu",
                      "extern \"C\" __global__ void evoteam_harness_read_all(float* p) { p[0] = 1; }\n" + prefix +
                          "  (void)x; (void)w; (void)y; (void)batch_size; (void)hidden_size; (void)eps; "
                          "(void)stream;\n  return cudaSuccess;\n}\n");
  EXPECT_EQ(reserved.status, BuildStatus::static_reject) << describe(reserved);
  EXPECT_NE(reserved.reason.find("reserved"), std::string::npos) << reserved.reason;

  const BuildOutcome broken =
      build_candidate(builder, "rmsnorm_h4096", "kernel.cu", prefix + "  return this_does_not_compile;\n}\n");
  EXPECT_EQ(broken.status, BuildStatus::compile_error) << describe(broken);
  EXPECT_NE(broken.log.find("this_does_not_compile"), std::string::npos);
}

TEST(CudaStaticStage, TaskConstraintsApplyToCandidates) {
  REQUIRE_NVCC();
  Builder builder;
  const Task task = load_task(install_root() / "kernels" / "gemm_bf16");
  ASSERT_FALSE(task.static_constraints.empty()) << "gemm_bf16 forbids calling cuBLAS from a candidate";
  std::map<std::string, std::string> files = starting_files(task);
  files[task.kernel_files.front()] = "#include <cublas_v2.h>\n" + files[task.kernel_files.front()];
  const BuildOutcome outcome = build_files(builder, task, files, true);
  EXPECT_EQ(outcome.status, BuildStatus::static_reject) << describe(outcome);
  EXPECT_NE(outcome.reason.find("constraint"), std::string::npos) << outcome.reason;
}

bool has_warning(const BuildOutcome& outcome, const std::string& part) {
  return std::any_of(outcome.warnings.begin(), outcome.warnings.end(),
                     [&](const std::string& warning) { return warning.find(part) != std::string::npos; });
}

// gemm_bf16_wgmma's starting kernel (CUDA cores) builds: its once-adopted constraints do not reject, it meets none,
// and "expects_tensor_cores" warns it. The same kernel plus a wgmma path on sm_90a meets the sm_90a constraints and
// is not warned for sm_90a. gemm_bf16, which does not expect tensor cores, is not warned at all.
TEST(CudaStaticStage, TheWgmmaTaskReportsAdoptedConstraintsAndWarnsWithoutTensorCores) {
  REQUIRE_NVCC();
  Builder builder;
  const Task task = load_task(install_root() / "kernels" / "gemm_bf16_wgmma");
  ASSERT_TRUE(task.expects_tensor_cores);
  const BuildOutcome starting = build_files(builder, task, starting_files(task), true);
  ASSERT_EQ(starting.status, BuildStatus::ok) << describe(starting);
  EXPECT_TRUE(starting.adopted_constraints.empty());
  EXPECT_TRUE(has_warning(starting, "sm_90a: no wgmma (HGMMA) tensor-core instruction"));
  EXPECT_TRUE(has_warning(starting, "sm_100a: no tcgen05"));

  std::map<std::string, std::string> files = starting_files(task);
  std::string& kernel = files.at("kernel.cu");
  const std::string entry = "extern \"C\" cudaError_t gemm_bf16(";
  const std::size_t at = kernel.find(entry);
  ASSERT_NE(at, std::string::npos);
  // The wgmma fixture (fence, one wgmma.mma_async, commit, wait on sm_90a), private to the file and launched where
  // it can never run.
  std::string probe, line;
  std::istringstream fixture(read_file(fs::path(EVOTEAM_SOURCE_DIR) / "tests/data/cuda/wgmma_kernel.cu"));
  while (std::getline(fixture, line))
    if (line.rfind("#include", 0) != 0) probe += line + "\n";
  kernel.insert(at, "namespace {\n" + probe + "}  // namespace\n\n");
  const std::string first_line = "  if (M <= 0 || N <= 0) return cudaSuccess;";
  const std::size_t guard = kernel.find(first_line);
  ASSERT_NE(guard, std::string::npos);
  kernel.insert(guard, "  if (M < 0) wgmma_kernel<<<1, 4 * 32, 0, stream>>>(nullptr, 0, 0);\n");
  const BuildOutcome wgmma = build_files(builder, task, files, true);
  ASSERT_EQ(wgmma.status, BuildStatus::ok) << describe(wgmma);
  const bool sass = cuda::find_cuda_tool("cuobjdump").has_value();
  const std::vector<std::string> adopted =
      sass ? std::vector<std::string>{"wgmma_sm90a", "hgmma_sass_sm90a"} : std::vector<std::string>{"wgmma_sm90a"};
  EXPECT_EQ(wgmma.adopted_constraints, adopted);
  EXPECT_FALSE(has_warning(wgmma, "sm_90a: no wgmma"));
  EXPECT_TRUE(has_warning(wgmma, "sm_100a: no tcgen05"));

  const Task plain = load_task(install_root() / "kernels" / "gemm_bf16");
  const BuildOutcome untold = build_files(builder, plain, starting_files(plain), true);
  ASSERT_EQ(untold.status, BuildStatus::ok) << describe(untold);
  EXPECT_FALSE(has_warning(untold, "tensor-core instruction"));
}

TEST(CudaEval, WithoutADeviceTheEvaluationBuildsAndThenSaysATimingDeviceIsNeeded) {
  REQUIRE_NVCC();
  if (!gpu_device_nodes().empty()) GTEST_SKIP() << "this machine has a GPU: the GPU suite covers the run stages";
  Evaluator evaluator(testing::eval_test_settings(), system_runner(), testing::eval_test_cache());
  const Task task = load_task(install_root() / "kernels" / "rmsnorm_h4096");
  EvalOptions options;
  options.result_cache = CachePolicy::bypass;
  const EvalResult result = evaluator.evaluate(task, Candidate::starting(task), options);
  EXPECT_EQ(result.verdict, Verdict::infra_error);
  EXPECT_NE(result.reason.find("no CUDA device"), std::string::npos) << result.reason;
  EXPECT_NE(result.reason.find("need a GPU"), std::string::npos) << result.reason;
  ASSERT_GE(result.stages.size(), 3u);
  EXPECT_NE(result.stages[0].status, StageStatus::failed);  // passed, or cached from an earlier run of the suite
  EXPECT_EQ(result.stages[1].name, "build");
  EXPECT_NE(result.stages[1].status, StageStatus::failed);
  EXPECT_EQ(result.stages[2].status, StageStatus::skipped);
  EXPECT_FALSE(result.speedup.has_value());
  // The profile stage falls back to what the build learned, marked as static.
  ASSERT_TRUE(result.profile.is_object());
  EXPECT_EQ(result.profile.value("source", ""), "static");
  for (const std::string arch : {"sm_90a", "sm_100a"}) {
    ASSERT_TRUE(result.profile["archs"].contains(arch)) << result.profile.dump();
    EXPECT_FALSE(result.profile["archs"][arch]["kernels"].empty()) << arch;
    EXPECT_GT(result.profile["archs"][arch]["kernels"][0].value("registers", 0), 0) << arch;
  }
}

TEST(CudaEval, OptimizeRefusesACudaTaskWithoutADeviceAndCreatesNoRun) {
  if (!gpu_device_nodes().empty()) GTEST_SKIP() << "this machine has a GPU";
  evoteam::testing::TempDir runs;
  const ProcessResult result =
      evoteam::testing::run_evoteam({"optimize", (install_root() / "kernels" / "rmsnorm_h4096").string(),
                                     "--max-cycles", "2", "--runs-dir", runs.path().string()},
                                    std::chrono::seconds(120));
  EXPECT_EQ(result.exit_code, 1) << evoteam::testing::describe(result);
  EXPECT_NE(result.err.text.find("no CUDA device"), std::string::npos) << result.err.text;
  EXPECT_NE(result.err.text.find("--stages static,build"), std::string::npos) << result.err.text;
  EXPECT_FALSE(evoteam::testing::only_run(runs.path()).has_value()) << "a refused run must leave no run directory";
}

}  // namespace
}  // namespace evoteam::eval
