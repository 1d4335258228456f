// `evoteam eval` as users and scripts run it: exit codes and the --json object.
#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>

#include <gtest/gtest.h>

#include <evoteam/eval/sandbox.hpp>
#include "eval/cuda/cuda_tools.hpp"
#include "support/temp_dir.hpp"
#include "unit/eval_test_support.hpp"

namespace {

using namespace evoteam;

ProcessResult run_eval(const std::vector<std::string>& arguments) {
  Command command;
  command.argv = {EVOTEAM_BINARY,
                  "--set",
                  "eval.timing.min_time_s=0.02",
                  "--set",
                  "eval.timing.warmup_s=0.005",
                  "--set",
                  "eval.profile.time_s=0.02",
                  "--set",
                  "eval.correctness.edge_values=[1,3,17]",
                  "--set",
                  "eval.machine.peak_gflops=5000",
                  "--set",
                  "eval.machine.peak_gbytes_per_s=5000",
                  "eval"};
  command.argv.insert(command.argv.end(), arguments.begin(), arguments.end());
  command.argv.insert(command.argv.end(), {"--cache-dir", evoteam::testing::eval_test_cache().string(), "--no-cache"});
  command.timeout = std::chrono::milliseconds(300'000);
  command.output_cap = 0;
  return system_runner().run(command);
}

TEST(EvalCli, PrintsOneJsonObjectAndExitsZeroOnPass) {
  evoteam::testing::TempDir dir;
  evoteam::testing::small_matmul_task(dir / "task");
  ProcessResult result = run_eval({(dir / "task").string(), "--json", "--param", "TILE_N=64"});
  ASSERT_EQ(result.exit_code, 0) << result.err.text << result.out.text;
  nlohmann::json json = nlohmann::json::parse(result.out.text);
  EXPECT_EQ(json["verdict"], "PASS");
  EXPECT_TRUE(json["speedup"].is_number());
  EXPECT_EQ(json["workloads"].size(), 2u);
  EXPECT_TRUE(json["evidence"].is_object());
  EXPECT_EQ(json["candidate"]["params"]["TILE_N"], "64");
}

TEST(EvalCli, ExitsOneOnAFailedVerdictAndThreeOnAnInvalidTask) {
  evoteam::testing::TempDir dir;
  evoteam::testing::small_matmul_task(dir / "task");
  const std::string hostile = (install_root() / "tests" / "data" / "hostile" / "host" / "unwritten_output").string();
  ProcessResult failed =
      run_eval({(dir / "task").string(), "--candidate", hostile, "--stages", "static,build,correctness"});
  EXPECT_EQ(failed.exit_code, 1) << failed.err.text;
  EXPECT_NE(failed.out.text.find("UNWRITTEN_OUTPUT"), std::string::npos) << failed.out.text;
  EXPECT_NE(failed.out.text.find("evidence"), std::string::npos);
  ProcessResult invalid = run_eval({(dir / "nowhere").string()});
  EXPECT_EQ(invalid.exit_code, 3) << invalid.err.text;
  ProcessResult bad_stage = run_eval({(dir / "task").string(), "--stages", "static,bench"});
  EXPECT_EQ(bad_stage.exit_code, 3) << bad_stage.err.text;
}

// A candidate directory without any of the task's editable files would be the starting kernel judged under the
// candidate's name: refused with exit 3, naming the files, before anything is built.
TEST(EvalCli, ACandidateWithoutAnyKernelFileIsRefusedNamingTheFiles) {
  evoteam::testing::TempDir dir;
  evoteam::testing::small_matmul_task(dir / "task");
  std::filesystem::create_directories(dir / "empty");
  evoteam::write_file_atomic(dir / "empty" / "notes.txt", "nothing to judge\n");
  ProcessResult refused = run_eval({(dir / "task").string(), "--candidate", (dir / "empty").string()});
  EXPECT_EQ(refused.exit_code, 3) << refused.err.text << refused.out.text;
  EXPECT_NE(refused.err.text.find("holds none of the task's editable files (kernel.cpp)"), std::string::npos)
      << refused.err.text;
  EXPECT_EQ(refused.out.text.find("PASS"), std::string::npos) << refused.out.text;
}

TEST(EvalCli, HumanOutputShowsTheFigures) {
  evoteam::testing::TempDir dir;
  evoteam::testing::small_matmul_task(dir / "task");
  ProcessResult result = run_eval({(dir / "task").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err.text << result.out.text;
  for (const char* text : {"verdict PASS", "median", "p10", "p90", "relstd", "speedup", "roofline", "small", "tall"})
    EXPECT_NE(result.out.text.find(text), std::string::npos) << text << "\n" << result.out.text;
}

// `--workloads published|ours|all` keeps the task's workloads of that origin; a bad choice is a usage error.
TEST(EvalCli, WorkloadsChoosesThePublishedOrOurWorkloads) {
  evoteam::testing::TempDir dir;
  evoteam::testing::small_matmul_task(dir / "task");
  nlohmann::json task = read_json_file(dir / "task" / "task.json");
  task["workloads"][0]["origin"] = "published";
  task["workloads"][0]["source"] = "a-trace-uuid";
  write_json_atomic(dir / "task" / "task.json", task);
  const std::vector<std::pair<std::string, std::vector<std::string>>> expected = {
      {"published", {"small"}}, {"ours", {"tall"}}, {"all", {"small", "tall"}}};
  for (const auto& [choice, names] : expected) {
    ProcessResult result = run_eval({(dir / "task").string(), "--json", "--workloads", choice});
    ASSERT_EQ(result.exit_code, 0) << choice << "\n" << result.err.text << result.out.text;
    const nlohmann::json json = nlohmann::json::parse(result.out.text);
    std::vector<std::string> got;
    for (const nlohmann::json& workload : json["workloads"]) got.push_back(workload["name"].get<std::string>());
    EXPECT_EQ(got, names) << choice;
  }
  ProcessResult bad = run_eval({(dir / "task").string(), "--workloads", "theirs"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err.text;
}

// A task that follows no published workloads has none to choose: exit 3, naming the task, before any build.
TEST(EvalCli, PublishedWorkloadsOfATaskWithoutAnyExitThreeNamingTheTask) {
  ProcessResult result =
      run_eval({(install_root() / "kernels" / "gdn_prefill_qk4_v8_d128_k_last").string(), "--workloads", "published"});
  EXPECT_EQ(result.exit_code, 3) << result.err.text << result.out.text;
  EXPECT_NE(result.err.text.find("gdn_prefill_qk4_v8_d128_k_last"), std::string::npos) << result.err.text;
  EXPECT_NE(result.err.text.find("--workloads published"), std::string::npos) << result.err.text;
}

// On a machine without a GPU, the published workloads of a CUDA task build and the evaluation says that running
// them needs a device (exit 1, INFRA_ERROR), rather than failing on the choice.
TEST(EvalCli, PublishedWorkloadsOfACudaTaskBuildAndSayTheyNeedAGpu) {
  if (!eval::cuda::find_cuda_tool("nvcc")) GTEST_SKIP() << "nvcc is not installed (set EVOTEAM_NVCC)";
  if (!eval::gpu_device_nodes().empty()) GTEST_SKIP() << "this machine has a GPU: tests/gpu run the CUDA tasks";
  ProcessResult result =
      run_eval({(install_root() / "kernels" / "gemm_bf16").string(), "--workloads", "published", "--json"});
  EXPECT_EQ(result.exit_code, 1) << result.err.text << result.out.text;
  const nlohmann::json json = nlohmann::json::parse(result.out.text, nullptr, false);
  ASSERT_TRUE(json.is_object()) << result.out.text << result.err.text;
  EXPECT_EQ(json.value("verdict", ""), "INFRA_ERROR") << result.out.text;
  EXPECT_NE(json.value("reason", "").find("no CUDA device"), std::string::npos) << json.value("reason", "");
}

}  // namespace
