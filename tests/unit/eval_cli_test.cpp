// `evoteam eval` as users and scripts run it: exit codes and the --json object.
#include <evoteam/core/process.hpp>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"
#include "unit/eval_test_support.hpp"

namespace {

using namespace evoteam;

ProcessResult run_eval(const std::vector<std::string>& arguments) {
  Command command;
  command.argv = {EVOTEAM_BINARY, "--set", "eval.timing.min_time_s=0.02", "--set", "eval.timing.warmup_s=0.005",
                  "--set", "eval.profile.time_s=0.02", "--set", "eval.correctness.edge_values=[1,3,17]",
                  "--set", "eval.machine.peak_gflops=5000", "--set", "eval.machine.peak_gbytes_per_s=5000", "eval"};
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
  ProcessResult failed = run_eval({(dir / "task").string(), "--candidate", hostile, "--stages", "static,build,correctness"});
  EXPECT_EQ(failed.exit_code, 1) << failed.err.text;
  EXPECT_NE(failed.out.text.find("UNWRITTEN_OUTPUT"), std::string::npos) << failed.out.text;
  EXPECT_NE(failed.out.text.find("evidence"), std::string::npos);
  ProcessResult invalid = run_eval({(dir / "nowhere").string()});
  EXPECT_EQ(invalid.exit_code, 3) << invalid.err.text;
  ProcessResult bad_stage = run_eval({(dir / "task").string(), "--stages", "static,bench"});
  EXPECT_EQ(bad_stage.exit_code, 3) << bad_stage.err.text;
}

TEST(EvalCli, HumanOutputShowsTheFigures) {
  evoteam::testing::TempDir dir;
  evoteam::testing::small_matmul_task(dir / "task");
  ProcessResult result = run_eval({(dir / "task").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err.text << result.out.text;
  for (const char* text : {"verdict PASS", "median", "p10", "p90", "relstd", "speedup", "roofline", "small", "tall"})
    EXPECT_NE(result.out.text.find(text), std::string::npos) << text << "\n" << result.out.text;
}

}  // namespace
