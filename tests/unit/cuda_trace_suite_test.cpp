// One imported FlashInfer-Trace task per op family with a generator (kernels/flashinfer_trace), built with the real
// nvcc for sm_90a and sm_100a as the evaluator builds them, no GPU needed: the naive starting kernel (which also
// passes the static stage) at its default params and the double reference; the generated hooks and CPU references
// compile with the host compiler. One definition per family keeps the cost small: the others differ only in their
// constants. FlashInfer's headers take minutes per build, so the vendor baselines are left to bench/suite_build.sh
// (all of them) and to TraceExportE2E.EachPublishedDefinitionImportsToATaskThatBuildsForBothArchs, whose imported
// GQA decode builds its generated FlashInfer baseline. Builds are cached in the build tree. Skips without nvcc.
#include <gtest/gtest.h>

#include <evoteam/core/fs.hpp>
#include <evoteam/core/inventory.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/eval/evaluator.hpp>
#include <evoteam/eval/sandbox.hpp>

#include "eval/cuda/cuda_backend.hpp"
#include "eval/cuda/cuda_tools.hpp"
#include "eval_test_support.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;

// One per generated family: the smallest gemm, both RMSNorms, the GQA decode with a last-page-length input and
// page size 64 (the page-size-1 path is the hand-written task's), the paged prefill with page size 64 and the
// ragged prefill.
const std::vector<std::string> k_suite_representatives = {"gemm_n128_k2048",
                                                          "rmsnorm_h128",
                                                          "fused_add_rmsnorm_h2048",
                                                          "gqa_paged_decode_h32_kv8_d128_ps64",
                                                          "gqa_paged_prefill_causal_h32_kv8_d128_ps64",
                                                          "gqa_ragged_prefill_causal_h32_kv8_d128"};

fs::path suite_task_dir(const std::string& name) { return install_root() / "kernels" / "flashinfer_trace" / name; }

BuildOutcome build_suite_files(CudaBuilder& builder, const Task& task, std::map<std::string, std::string> files,
                               bool untrusted, const ParamAssignment& params) {
  BuildRequest request;
  request.task = &task;
  request.files = std::move(files);
  request.params = params;
  request.untrusted = untrusted;
  return builder.build(request, SandboxMode::none);
}

std::string suite_build_log(const BuildOutcome& outcome) {
  return to_string(outcome.status) + ": " + outcome.reason + "\n" + outcome.log.substr(0, 3000);
}

TEST(CudaTraceSuite, OneImportedTaskPerFamilyBuildsForBothArchs) {
  if (!cuda::find_cuda_tool("nvcc")) GTEST_SKIP() << "nvcc is not installed (set EVOTEAM_NVCC)";
  CompileSlots slots{2};
  CudaBuilder builder{testing::eval_test_settings(), system_runner(), testing::eval_test_cache() / "cuda", slots};
  for (const std::string& name : k_suite_representatives) {
    SCOPED_TRACE(name);
    const Task task = load_task(suite_task_dir(name));
    ASSERT_EQ(task.archs, (std::vector<std::string>{"sm_90a", "sm_100a"}));
    std::map<std::string, std::string> starting;
    for (const std::string& file : task.kernel_files) starting[file] = read_file(task.dir / file);
    const BuildOutcome built = build_suite_files(builder, task, starting, true, default_params(task));
    ASSERT_EQ(built.status, BuildStatus::ok) << suite_build_log(built);
    for (const std::string& arch : task.archs) EXPECT_TRUE(built.report["archs"].contains(arch)) << arch;
    const BuildOutcome reference =
        build_suite_files(builder, task, {{task.reference_file, read_file(task.dir / task.reference_file)}}, false, {});
    EXPECT_EQ(reference.status, BuildStatus::ok) << suite_build_log(reference);
  }
}

// What the harness compiles beside the kernels (hooks) and the CPU references, with the host compiler and the
// warnings the project builds with.
TEST(CudaTraceSuite, GeneratedHooksAndCpuReferencesCompile) {
  for (const std::string& name : k_suite_representatives) {
    SCOPED_TRACE(name);
    const fs::path dir = suite_task_dir(name);
    for (const char* file : {"cpu_reference.cpp", "hooks.cpp"}) {
      if (!fs::is_regular_file(dir / file)) continue;
      Command compile;
      compile.argv = {"c++",
                      "-std=c++20",
                      "-fsyntax-only",
                      "-Wall",
                      "-Wextra",
                      "-Werror",
                      "-I",
                      (install_root() / "kernels" / "common").string(),
                      (dir / file).string()};
      const ProcessResult result = system_runner().run(compile);
      EXPECT_TRUE(result.ok()) << file << ": " << result.describe() << result.err.text;
    }
  }
}

}  // namespace
}  // namespace evoteam::eval
