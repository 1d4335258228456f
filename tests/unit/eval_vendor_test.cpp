// The vendor baseline (FlashInfer) of the CUDA tasks that follow FlashInfer-Trace definitions: what the task
// files declare, what the loader refuses, the candidate's fraction of the vendor's speed, where FlashInfer's
// sources are found, and, with the real nvcc and FlashInfer's headers and no GPU, the vendor's build for both
// archs with its plan hook exported, in the evaluator and end to end through `evoteam eval`. The figures on a GPU
// come from the GPU suite (tests/gpu/run.sh).
#include <gtest/gtest.h>

#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/inventory.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/eval/evaluator.hpp>

#include <cstdlib>
#include <functional>

#include <evoteam/eval/sandbox.hpp>
#include "eval/cuda/cuda_backend.hpp"
#include "eval/cuda/cuda_tools.hpp"
#include "eval/vendor_baseline.hpp"
#include "eval_test_support.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;

const fs::path k_gqa = install_root() / "kernels" / "gqa_paged_decode_h32_kv8_d128_ps1";
const fs::path k_mla = install_root() / "kernels" / "mla_paged_decode_h16_ckv512_kpe64_ps1";
const fs::path k_gdn = install_root() / "kernels" / "gdn_prefill_qk4_v8_d128_k_last";

// Skips without nvcc or FlashInfer's headers, unless the test command fetched them (then their absence fails).
#define REQUIRE_NVCC_AND_FLASHINFER()                                                              \
  do {                                                                                             \
    if (!cuda::find_cuda_tool("nvcc")) GTEST_SKIP() << "nvcc is not installed (set EVOTEAM_NVCC)"; \
    std::string why;                                                                               \
    if (!find_flashinfer("", &why)) {                                                              \
      if (std::getenv("EVOTEAM_REQUIRE_FLASHINFER") != nullptr) FAIL() << why;                     \
      GTEST_SKIP() << why;                                                                         \
    }                                                                                              \
  } while (0)

// A copy of the GQA task whose task.json `edit` changes, loaded; throws what the loader throws.
Task load_edited_gqa(const fs::path& dir, const std::function<void(nlohmann::json&)>& edit) {
  fs::copy(k_gqa, dir, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  nlohmann::json task = nlohmann::json::parse(read_file(dir / "task.json"), nullptr, true, true);
  edit(task);
  write_file_atomic(dir / "task.json", task.dump(2));
  return load_task(dir);
}

std::string load_error(const fs::path& dir, const std::function<void(nlohmann::json&)>& edit) {
  try {
    load_edited_gqa(dir, edit);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(VendorBaseline, TheFlashInferTasksDeclareItAndTheOthersDoNot) {
  for (const fs::path& dir : {k_gqa, k_mla}) {
    const Task task = load_task(dir);
    EXPECT_EQ(task.vendor.kind, "flashinfer") << task.name;
    EXPECT_EQ(task.vendor.file, "baseline_flashinfer.cu") << task.name;
    EXPECT_TRUE(task.vendor.unavailable.empty()) << task.name;
    EXPECT_EQ(task.baseline.kind, BaselineKind::starting) << "speedups stay relative to the starting kernel";
  }
  const Task gdn = load_task(k_gdn);
  EXPECT_EQ(gdn.vendor.kind, "flashinfer");
  EXPECT_TRUE(gdn.vendor.file.empty());
  EXPECT_NE(gdn.vendor.unavailable.find("Python"), std::string::npos) << gdn.vendor.unavailable;
  for (const char* other : {"gemm_bf16", "rmsnorm_h4096", "kmeans_assign", "host_matmul"})
    EXPECT_TRUE(load_task(install_root() / "kernels" / other).vendor.kind.empty()) << other;
}

TEST(VendorBaseline, TheLoaderWantsAKernelOrAReasonAndKnownArchsAndKinds) {
  evoteam::testing::TempDir temp;
  const std::string both = load_error(
      temp.path() / "both", [](nlohmann::json& task) { task["vendor_baseline"]["unavailable"] = "no kernel"; });
  EXPECT_NE(both.find("exactly one of \"file\""), std::string::npos) << both;
  const std::string neither = load_error(temp.path() / "neither", [](nlohmann::json& task) {
    task["vendor_baseline"] = {{"kind", "flashinfer"}};
  });
  EXPECT_NE(neither.find("exactly one of \"file\""), std::string::npos) << neither;
  const std::string kind =
      load_error(temp.path() / "kind", [](nlohmann::json& task) { task["vendor_baseline"]["kind"] = "cudnn"; });
  EXPECT_NE(kind.find("vendor_baseline.kind"), std::string::npos) << kind;
  const std::string arch = load_error(temp.path() / "arch", [](nlohmann::json& task) {
    task["vendor_baseline"]["missing_archs"] = {{"sm_80", "not a task arch"}};
  });
  EXPECT_NE(arch.find("vendor_baseline.missing_archs.sm_80"), std::string::npos) << arch;
  const std::string file =
      load_error(temp.path() / "file", [](nlohmann::json& task) { task["vendor_baseline"]["file"] = "missing.cu"; });
  EXPECT_NE(file.find("missing.cu"), std::string::npos) << file;

  const Task task = load_edited_gqa(temp.path() / "ok", [](nlohmann::json& edited) {
    edited["vendor_baseline"]["missing_archs"] = {{"sm_100a", "no kernel there yet"}};
  });
  EXPECT_EQ(task.vendor.missing_archs, (std::map<std::string, std::string>{{"sm_100a", "no kernel there yet"}}));
  // The vendor's source is the task's own: it counts in the task's content hash.
  const std::string before = task.content_hash;
  write_file_atomic(temp.path() / "ok" / "baseline_flashinfer.cu",
                    read_file(k_gqa / "baseline_flashinfer.cu") + "\n// edited\n");
  EXPECT_NE(load_task(temp.path() / "ok").content_hash, before);
}

TEST(VendorBaseline, TheFractionIsTheRatioOfTheSpeedupsOverTheSameBaseline) {
  EvalResult result;
  result.vendor = VendorComparison{};
  for (const auto& [name, speedup] : {std::pair{"a", 2.0}, {"b", 1.0}, {"c", 0.5}, {"d", 3.0}}) {
    WorkloadResult workload;
    workload.name = name;
    workload.speedup = speedup;
    result.workloads.push_back(workload);
  }
  // The vendor ran 4x and 2x faster than the baseline on a and b, has no figure for c, and a broken one for d.
  apply_vendor_figures({{"a", {1e-3, 4.0, 0}}, {"b", {2e-3, 2.0, 0}}, {"d", {1e-3, 0.0, 0}}}, result);
  ASSERT_TRUE(result.workloads[0].vendor.has_value());
  EXPECT_DOUBLE_EQ(result.workloads[0].vendor->fraction, 0.5);
  EXPECT_DOUBLE_EQ(result.workloads[0].vendor->median_s, 1e-3);
  EXPECT_DOUBLE_EQ(result.workloads[1].vendor->fraction, 0.5);
  EXPECT_FALSE(result.workloads[2].vendor.has_value());
  EXPECT_FALSE(result.workloads[3].vendor.has_value());
  ASSERT_TRUE(result.vendor->fraction.has_value());
  EXPECT_DOUBLE_EQ(*result.vendor->fraction, 0.5);

  // The figures survive eval.json.
  const EvalResult read = EvalResult::from_json(result.to_json());
  ASSERT_TRUE(read.workloads[1].vendor.has_value());
  EXPECT_DOUBLE_EQ(read.workloads[1].vendor->speedup, 2.0);
  EXPECT_DOUBLE_EQ(read.vendor->fraction.value_or(0), 0.5);
}

TEST(VendorBaseline, TheSourcesAreFoundWhereConfiguredAndAMissingPlaceIsExplained) {
  evoteam::testing::TempDir temp;
  const fs::path data = temp.path() / "flashinfer" / "data";
  fs::create_directories(data / "include" / "flashinfer" / "attention");
  fs::create_directories(data / "cccl" / "libcudacxx" / "include");
  write_file_atomic(data / "include" / "flashinfer" / "attention" / "decode.cuh", "// decode\n");
  write_file_atomic(data / "VERSION", "9.9.9\n");
  const std::optional<VendorSources> unpacked = find_flashinfer(data.string(), nullptr);
  ASSERT_TRUE(unpacked.has_value());
  EXPECT_EQ(unpacked->version, "9.9.9");
  // An installed package directory holds data/.
  const std::optional<VendorSources> package = find_flashinfer((temp.path() / "flashinfer").string(), nullptr);
  ASSERT_TRUE(package.has_value());
  EXPECT_EQ(package->root, fs::absolute(data));
  const std::vector<std::string> flags = flashinfer_flags(*package);
  EXPECT_NE(std::find(flags.begin(), flags.end(), (data / "cccl" / "libcudacxx" / "include").string()), flags.end());

  std::string why;
  EXPECT_FALSE(find_flashinfer((temp.path() / "nowhere").string(), &why).has_value());
  EXPECT_NE(why.find("nowhere"), std::string::npos) << why;
  EXPECT_NE(why.find("pip"), std::string::npos) << why;
}

// Builds the vendor as the evaluator does and checks that the plan hook is exported beside the entry point.
TEST(VendorBaseline, FlashInferBuildsForBothArchsWithItsPlanHookWithoutAGpu) {
  REQUIRE_NVCC_AND_FLASHINFER();
  const std::optional<VendorSources> sources = find_flashinfer("", nullptr);
  CompileSlots slots{2};
  // The evaluator's build cache: FlashInfer is compiled once for the tests below too.
  CudaBuilder builder{testing::eval_test_settings(), system_runner(), testing::eval_test_cache(), slots};
  for (const fs::path& dir : {k_gqa, k_mla}) {
    const Task task = load_task(dir);
    SCOPED_TRACE(task.name);
    BuildRequest request;
    request.task = &task;
    request.files = {{task.vendor.file, read_file(task.dir / task.vendor.file)}};
    request.untrusted = false;
    request.extra_flags = flashinfer_flags(*sources);
    request.extra_exports = {task.entry.name + "_plan"};
    const BuildOutcome build = builder.build(request, SandboxMode::none);
    ASSERT_EQ(build.status, BuildStatus::ok) << build.reason << "\n" << build.log.substr(0, 3000);
    for (const std::string arch : {"sm_90a", "sm_100a"}) EXPECT_TRUE(build.report["archs"].contains(arch)) << arch;
    Command nm;
    nm.argv = {"nm", "-D", "--defined-only", build.library.string()};
    const ProcessResult symbols = system_runner().run(nm);
    ASSERT_TRUE(symbols.ok()) << symbols.describe();
    EXPECT_NE(symbols.out.text.find(" " + task.entry.name + "\n"), std::string::npos) << symbols.out.text;
    EXPECT_NE(symbols.out.text.find(" " + task.entry.name + "_plan\n"), std::string::npos) << symbols.out.text;
  }
}

TEST(VendorBaseline, TheEvaluationRecordsTheVendorBuildOrWhyThereIsNone) {
  REQUIRE_NVCC_AND_FLASHINFER();
  if (!gpu_device_nodes().empty()) GTEST_SKIP() << "this machine has a GPU: the GPU suite covers the run stages";
  Evaluator evaluator(testing::eval_test_settings(), system_runner(), testing::eval_test_cache());
  EvalOptions options;
  options.result_cache = CachePolicy::bypass;
  options.stages = {Stage::static_checks, Stage::build};
  const auto vendor_stage = [](const EvalResult& result) {
    return std::find_if(result.stages.begin(), result.stages.end(),
                        [](const StageRecord& stage) { return stage.name == "vendor"; });
  };
  const Task gqa = load_task(k_gqa);
  const EvalResult built = evaluator.evaluate(gqa, Candidate::starting(gqa), options);
  EXPECT_EQ(built.verdict, Verdict::pass) << built.reason;
  ASSERT_TRUE(built.vendor.has_value());
  EXPECT_EQ(built.vendor->status, "built") << built.vendor->detail;
  EXPECT_EQ(built.vendor->archs, (std::vector<std::string>{"sm_90a", "sm_100a"}));
  ASSERT_NE(vendor_stage(built), built.stages.end());
  EXPECT_NE(vendor_stage(built)->status, StageStatus::failed);

  const Task gdn = load_task(k_gdn);
  const EvalResult none = evaluator.evaluate(gdn, Candidate::starting(gdn), options);
  EXPECT_EQ(none.verdict, Verdict::pass) << "the vendor never decides the candidate's verdict: " << none.reason;
  ASSERT_TRUE(none.vendor.has_value());
  EXPECT_EQ(none.vendor->status, "unavailable");
  EXPECT_NE(none.vendor->detail.find("Python"), std::string::npos) << none.vendor->detail;
  ASSERT_NE(vendor_stage(none), none.stages.end());
  EXPECT_EQ(vendor_stage(none)->status, StageStatus::skipped);
}

// The promise, end to end: on a machine with nvcc and no GPU, `evoteam eval` of the MLA task builds the
// candidate and FlashInfer for both archs and says clearly that timing needs a GPU.
TEST(VendorBaseline, EvalWithoutAGpuBuildsTheCandidateAndFlashInferAndSaysTimingNeedsOne) {
  REQUIRE_NVCC_AND_FLASHINFER();
  if (!gpu_device_nodes().empty()) GTEST_SKIP() << "this machine has a GPU: the GPU suite covers the run stages";
  // Children get a scrubbed environment, so the sources found here are named explicitly.
  const std::string flashinfer = find_flashinfer("", nullptr)->root.string();
  const ProcessResult result =
      evoteam::testing::run_evoteam({"--set", "eval.cuda.flashinfer=" + flashinfer, "eval", k_mla.string(),
                                     "--no-cache", "--cache-dir", (testing::eval_test_cache() / "cli").string()},
                                    std::chrono::seconds(600));
  const std::string& out = result.out.text;
  EXPECT_NE(out.find(" build "), std::string::npos) << evoteam::testing::describe(result);
  EXPECT_EQ(out.find("build failed"), std::string::npos) << out;
  EXPECT_NE(out.find("(vendor baseline): built - flashinfer"), std::string::npos) << out;
  EXPECT_NE(out.find("built for sm_90a, sm_100a"), std::string::npos) << out;
  EXPECT_NE(out.find("correctness and timing need a GPU"), std::string::npos) << out;
}

}  // namespace
}  // namespace evoteam::eval
